"""oneflow.utils.global_view.to_local: a global tensor, or every tensor of a nest, made local."""
import warnings

from ...framework.args_tree import ArgsTree
from ...framework.tensor import Tensor
from .global_utils import to_local_tensor


def to_local(input, *, copy=False):
    """Each tensor leaf of `input` as its local part (a local leaf stays, with a warning)."""
    def convert(node):
        if isinstance(node, Tensor):
            return to_local_tensor(node, copy)
        warnings.warn(f"Non-Tensor type: {type(node)} encountered, it will remain the same.")
        return node

    if isinstance(input, (Tensor, dict, tuple, list)):
        return ArgsTree(input).map_leaf(convert)
    warnings.warn(f"Non-Tensor type: {type(input)} encountered, it will remain the same.")
    return input
