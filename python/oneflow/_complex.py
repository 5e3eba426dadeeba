"""Python glue of the complex family (src/ops/table/complex.yaml).

conj is materialised eagerly (Note [Eager conj] in src/ops/complex_ops.cpp), so no tensor ever
carries PyTorch's lazy conjugate bit: is_conj() is False and resolve_conj() is the identity.
Tensor.real / Tensor.imag are properties (views), assignable as in PyTorch.
"""
import builtins

from . import _oneflow_internal as _C

__all__ = ["is_conj", "resolve_conj", "is_neg", "resolve_neg"]

Tensor = _C.Tensor


def is_conj(input):
    return False


def resolve_conj(input):
    return input


def is_neg(input):
    return False


def resolve_neg(input):
    return input


def _complex_of(self):
    if self.numel() != 1:
        raise RuntimeError("only one element tensors can be converted to Python scalars")
    return builtins.complex(self.item())


Tensor.real = property(_C.real, lambda self, v: _C.real(self).copy_(v))
Tensor.imag = property(_C.imag, lambda self, v: _C.imag(self).copy_(v))
Tensor.is_complex = lambda self: self.dtype.is_complex
Tensor.is_conj = is_conj
Tensor.resolve_conj = resolve_conj
Tensor.is_neg = is_neg
Tensor.resolve_neg = resolve_neg
Tensor.__complex__ = _complex_of
Tensor.cfloat = lambda self: _C.cast(self, _C.complex64)
Tensor.cdouble = lambda self: _C.cast(self, _C.complex128)
