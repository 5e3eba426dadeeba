"""The tensor-level conversions of oneflow.utils.global_view, also `flow.to_global` /
`flow.to_local` (upstream's functional forms of Tensor.to_global / Tensor.to_local)."""
import warnings

from ...framework.args_tree import ArgsTree
from ...framework.tensor import Tensor
from ..._export import export


@export("flow.to_global")
def to_global(input, placement=None, sbp=None, *, grad_sbp=None, check_meta=True, copy=False):
    """`input.to_global(...)`: a local tensor as this rank's part of a global one, or a global
    tensor moved to another placement / sbp."""
    if not isinstance(input, Tensor):
        raise TypeError(f"to_global: expected a Tensor, got {type(input).__name__}")
    kwargs = dict(check_meta=check_meta, copy=copy)
    if grad_sbp is not None:
        kwargs["grad_sbp"] = grad_sbp
    return input.to_global(placement, sbp, **kwargs)


@export("flow.to_local")
def to_local(input, *, copy=False):
    """`input.to_local()`: this rank's part of a global tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"to_local: expected a Tensor, got {type(input).__name__}")
    return input.to_local(copy=copy)


def to_global_tensor(input_tensor, placement=None, sbp=None, **kwargs):
    if input_tensor.is_global:
        return to_global(input_tensor, placement, sbp, **kwargs)
    kwargs.pop("grad_sbp", None)  # a local tensor has no gradient sbp to keep
    return to_global(input_tensor, placement, sbp, **kwargs)


def to_local_tensor(input_tensor, copy=False):
    if not input_tensor.is_global:
        warnings.warn("The tensor should be global, local tensor will remain the same.")
        return input_tensor
    return to_local(input_tensor, copy=copy)


def check_input_global(input):
    """Whether the tensors of `input` (a tensor or a nest of them) are global; they must agree."""
    found = None
    for node in ArgsTree(input).iter_nodes():
        if isinstance(node, Tensor):
            if found is None:
                found = node.is_global
            elif node.is_global != found:
                raise ValueError("Tensor(s) in the input must be all local or all global.")
    return bool(found)
