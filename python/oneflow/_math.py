"""Python glue of the math family: the argument juggling PyTorch also does in Python.

* norm / Tensor.norm / linalg.norm / linalg.matrix_norm dispatch to the table ops
  linalg_vector_norm and linalg_matrix_norm (string orders 'fro' and 'nuc' included);
* var / std / var_mean / std_mean accept a bool as second positional argument (`unbiased`);
* Tensor.polygamma(n) and polygamma_(n) take self as the input of polygamma(n, input);
* allclose and equal return Python bools.
"""
import builtins
import math

from . import _C, linalg
from ._argcheck import check_tensor
from ._export import export, export_value
from ._oneflow_internal import Tensor

_INF = math.inf


# ---------------------------------------------------------------------------
# var / std: var(x, True) means unbiased=True, as in PyTorch's overload.


def _with_bool_unbiased(fn):
    def wrapper(input, *args, **kwargs):
        if args and isinstance(args[0], builtins.bool):
            if "unbiased" in kwargs:
                raise TypeError(f"{fn.__name__}() got multiple values for argument 'unbiased'")
            kwargs["unbiased"] = args[0]
            args = args[1:]
        return fn(input, *args, **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


export_value(_with_bool_unbiased(_C.var), "flow.var", "Tensor.var", out=True)
export_value(_with_bool_unbiased(_C.std), "flow.std", "Tensor.std", out=True)
export_value(_with_bool_unbiased(_C.var_mean), "flow.var_mean")
export_value(_with_bool_unbiased(_C.std_mean), "flow.std_mean")


# ---------------------------------------------------------------------------
# norms


def _dims(dim):
    if dim is None:
        return None
    if isinstance(dim, builtins.int):
        return (dim,)
    return tuple(dim)


def _wrap_matrix_dim(d, nd):
    """d in [-nd, nd): PyTorch's IndexError otherwise (a modulo would take any int, 2**62 too)."""
    if not -nd <= d < nd:
        raise IndexError(f"linalg.matrix_norm: Dimension out of range (expected to be in range of "
                         f"[{-nd}, {nd - 1}], but got {d})")
    return d % nd


def _svd_norm(A, ord, dim, keepdim, dtype):
    """Orders 2, -2 and 'nuc' need the singular values."""
    svdvals = getattr(linalg, "svdvals", None)
    if svdvals is None:
        raise NotImplementedError(
            f"linalg.matrix_norm: ord={ord!r} needs the singular values (linalg.svdvals), "
            "which this build does not provide yet")
    if dtype is not None:
        A = A.to(dtype)
    nd = A.dim()
    d0, d1 = (_wrap_matrix_dim(d, nd) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    rest = [d for d in range(nd) if d not in (d0, d1)]
    sv = svdvals(A.permute(*rest, d0, d1))
    r = sv.sum(-1) if ord == "nuc" else (sv.amax(-1) if ord == 2 else sv.amin(-1))
    if keepdim:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return r


def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The table's linalg_vector_norm (a complex input's norm is that of its moduli, with a
    complex dtype=)."""
    return _C.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype)


@export("flow.linalg.vector_norm", out=True)
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """linalg.vector_norm."""
    return _vector_norm(x, ord, _dims(dim), keepdim, dtype=dtype)


@export("flow.linalg.matrix_norm", out=True)
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm over the two dims `dim`: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2."""
    check_tensor(A, "linalg_matrix_norm", "A", 1)
    dim = _dims(dim)
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        if A.dim() < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
        if len(dim) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {list(dim)}")
        if ord == "fro":
            if _wrap_matrix_dim(dim[0], A.dim()) == _wrap_matrix_dim(dim[1], A.dim()):
                raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
            return _vector_norm(A, 2, dim, keepdim, dtype=dtype)
        return _svd_norm(A, ord, dim, keepdim, dtype)
    if ord in (2, -2) and A.dim() >= 2 and len(dim) == 2:
        return _svd_norm(A, ord, dim, keepdim, dtype)
    return _C.linalg_matrix_norm(A, ord, dim, keepdim, dtype=dtype)


@export("flow.linalg.norm", out=True)
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """linalg.norm: a vector norm, or a matrix norm for 2-D inputs / two dims (PyTorch's rules)."""
    dim = _dims(dim)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if isinstance(ord, str):
        if dim is None and A.dim() != 2:
            raise RuntimeError(
                f"linalg.norm: If dim is not specified but ord is, the input must be 2D. Got {A.dim()}D.")
        return matrix_norm(A, ord, dim if dim is not None else (0, 1), keepdim, dtype=dtype)
    if ord is not None and dim is None and A.dim() not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D.")
    if ord is not None and ((dim is not None and len(dim) == 2) or (dim is None and A.dim() == 2)):
        return matrix_norm(A, ord, dim if dim is not None else (0, 1), keepdim, dtype=dtype)
    return _vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@export("flow.norm", "Tensor.norm", out=True)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, ord=None):
    """oneflow.norm / Tensor.norm as PyTorch's torch.norm: p='fro' (or None, or 2) is the 2-norm
    of all the elements (or over `dim`), a number is that vector norm, 'nuc' the nuclear norm.
    The spec's `ord=` keyword selects linalg.norm's rules instead."""
    if ord is not None:
        return linalg_norm(input, ord, dim, keepdim, dtype=dtype)
    dim = _dims(dim)
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return _vector_norm(input, 2, dim, keepdim, dtype=dtype)
        return matrix_norm(input, p, dim if dim is not None else tuple(range(input.dim())), keepdim, dtype=dtype)
    return _vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype)


# ---------------------------------------------------------------------------
# polygamma as a method: self is the input, the order comes first in the function.


@export("Tensor.polygamma")
def _polygamma_method(self, n):
    return _C.polygamma(n, self)


@export("Tensor.polygamma_")
def _polygamma_inplace(self, n):
    if not self.is_floating_point():
        raise RuntimeError(
            f"polygamma_: result type Float can't be cast to the desired output type {self.dtype}")
    return self.copy_(_C.polygamma(n, self))


# ---------------------------------------------------------------------------
# closeness as Python bools


@export("flow.allclose", "Tensor.allclose")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of input is close to other (isclose, broadcast)."""
    return builtins.bool(_C.isclose(input, other, rtol, atol, equal_nan).all())


@export("flow.equal", "Tensor.equal")
def equal(input, other):
    """True when both tensors have the same shape and the same values."""
    check_tensor(input, "equal", "input", 1)
    check_tensor(other, "equal", "other", 2)
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(_C.eq(input, other).all())
