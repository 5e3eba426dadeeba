"""TensorTuple: upstream OneFlow's type for a sequence of tensors crossing its C++ API
(`oneflow._oneflow_internal.TensorTuple`, also `oneflow.framework.tensor.TensorTuple`), and
`convert_to_tensor_tuple`, in the module where upstream keeps that helper; module
backward hooks receive their gradients as one (upstream's tests check `isinstance(grad_input,
TensorTuple)`).

Here it is a tuple subclass, so that PyTorch-style code that checks `isinstance(grad_input,
tuple)` keeps working too; upstream's in-place `append` / `merge_from` / item assignment are left
out (a tuple does not change; build a new TensorTuple instead)."""
from collections.abc import Sequence

from .._export import export_value


class TensorTuple(tuple):
    """A tuple of tensors (None where a gradient is undefined), as upstream's TensorTuple."""

    __slots__ = ()

    def __repr__(self):
        return "TensorTuple(" + ", ".join(repr(t) for t in self) + ")"


export_value(TensorTuple, "flow._oneflow_internal.TensorTuple")


def convert_to_tensor_tuple(args):
    """None -> an empty TensorTuple, a sequence of tensors -> a TensorTuple of them, a tensor -> a
    TensorTuple of one (upstream's helper of the same name)."""
    if args is None:
        return TensorTuple()
    if isinstance(args, Sequence):
        return TensorTuple(args)
    return TensorTuple((args,))
