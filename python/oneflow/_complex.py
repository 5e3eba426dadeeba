"""Python glue of the complex family (src/ops/table/complex.yaml).

conj is materialised eagerly (Note [Eager conj] in src/ops/complex_ops.cpp), so no tensor ever
carries PyTorch's lazy conjugate bit: is_conj() is False and resolve_conj() is the identity.
Tensor.real / Tensor.imag are properties (views), assignable as in PyTorch.
"""
import builtins

from . import _oneflow_internal as _C
from ._argcheck import check_tensor
from ._export import export, export_value


Tensor = _C.Tensor


@export("flow.is_conj", "Tensor.is_conj")
def is_conj(input):
    check_tensor(input, "is_conj", "input")  # PyTorch's TypeError, not False for a non-tensor
    return False


@export("flow.resolve_conj", "Tensor.resolve_conj")
def resolve_conj(input):
    check_tensor(input, "resolve_conj", "input")
    return input


@export("flow.is_neg", "Tensor.is_neg")
def is_neg(input):
    check_tensor(input, "is_neg", "input")
    return False


@export("flow.resolve_neg", "Tensor.resolve_neg")
def resolve_neg(input):
    check_tensor(input, "resolve_neg", "input")
    return input


@export("Tensor.__complex__")
def _complex_of(self):
    if self.numel() != 1:
        raise RuntimeError("only one element tensors can be converted to Python scalars")
    return builtins.complex(self.item())


export_value(property(_C.real, lambda self, v: _C.real(self).copy_(v)), "Tensor.real")
export_value(property(_C.imag, lambda self, v: _C.imag(self).copy_(v)), "Tensor.imag")
export_value(lambda self: self.dtype.is_complex, "Tensor.is_complex")
export_value(lambda self: _C.cast(self, _C.complex64), "Tensor.cfloat")
export_value(lambda self: _C.cast(self, _C.complex128), "Tensor.cdouble")
