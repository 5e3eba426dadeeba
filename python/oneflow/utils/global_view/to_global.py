"""oneflow.utils.global_view.to_global: a tensor, or every tensor of a list / tuple / dict nest
(a state dict), made global."""
import types
import warnings

from ...framework.args_tree import ArgsTree
from ...framework.tensor import Tensor
from .global_utils import to_global_tensor


def to_global(input, placement=None, sbp=None, warn_on_non_tensor_leaf=True, **kwargs):
    """Each tensor leaf of `input` as `leaf.to_global(placement, sbp)`. `sbp` may be a function
    `sbp(input, leaf)` choosing each leaf's sbp (a state dict's tensors that do not split alike).
    Other leaves stay as they are (with a warning unless warn_on_non_tensor_leaf=False).

    Difference from upstream: upstream first broadcasts a non-tensor input from the placement's
    first rank when the placement does not cover every rank; here every rank passes its own
    input (each process runs the same script)."""
    def convert(node):
        if isinstance(node, Tensor):
            leaf_sbp = sbp(input, node) if isinstance(sbp, types.FunctionType) else sbp
            return to_global_tensor(node, placement, leaf_sbp, **kwargs)
        if warn_on_non_tensor_leaf:
            warnings.warn(f"Non-Tensor type: {type(node)} encountered, it will remain the same.")
        return node

    if isinstance(input, (Tensor, dict, tuple, list)):
        return ArgsTree(input).map_leaf(convert)
    if warn_on_non_tensor_leaf:
        warnings.warn(f"Non-Tensor type: {type(input)} encountered, it will remain the same.")
    return input

