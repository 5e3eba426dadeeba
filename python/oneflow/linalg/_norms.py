"""Norms: flow.norm / Tensor.norm, linalg.norm, linalg.vector_norm and linalg.matrix_norm
dispatched to the table ops linalg_vector_norm and linalg_matrix_norm (string orders 'fro' and
'nuc' included, the singular values for 2, -2 and 'nuc'), and the norm-derived quantities outside
OneFlow's spec: linalg.cond, frobenius_norm, nuclear_norm (and PyTorch's removed flow.matrix_rank,
raising as there; linalg.matrix_rank is in _tolerance.py). Tested against PyTorch in
tests/test_torch_linalg_names.py."""
import builtins

import oneflow as flow  # the assembled namespace, looked up at call time

from .. import _oneflow_internal as _C
from .._export import export, export_value
from .._argcheck import check_int_list, check_tensor
from .._global_hooks import placed_like


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
    svdvals = getattr(flow.linalg, "svdvals", None)
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




@export("flow.linalg.cond", out=True)
def cond(A, p=None):
    """The condition number in the p-norm: the ratio of extreme singular values for p None / 2
    / -2, else norm(A, p) * norm(inv(A), p) (inf for a singular matrix, as PyTorch)."""
    check_tensor(A, "linalg_cond", "A", 1)
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        s = flow.linalg.svdvals(A)
        hi, lo = s[..., 0], s[..., -1]
        return hi / lo if p != -2 else lo / hi
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.cond(ord=" + str(p) + "): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    try:
        inv = flow.linalg.inv(A)
    except RuntimeError:
        return flow.full(A.shape[:-2], float("inf"), dtype=A.dtype, **placed_like(A))
    return flow.linalg.matrix_norm(A, p) * flow.linalg.matrix_norm(inv, p)


@export("flow.frobenius_norm")
def frobenius_norm(input, dim, keepdim=False):
    """The 2-norm of the entries over `dim` (one dim or several, PyTorch's frobenius_norm; a
    real result for complex input)."""
    dims = check_int_list(dim, "frobenius_norm", "dim", 2, one_int=True)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    return flow.linalg.vector_norm(input, 2, dims, keepdim)


@export("flow.matrix_rank")
def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed, as PyTorch's torch.matrix_rank (since 1.9): its RuntimeError names the
    replacement, linalg.matrix_rank (`tol` and `symmetric` are its `tol` / `hermitian`)."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed.\n"
        "Please use the `oneflow.linalg.matrix_rank` function instead. The parameter 'symmetric' "
        "was renamed in `oneflow.linalg.matrix_rank()` to 'hermitian'.")
export_value(lambda A, dim=(-2, -1), keepdim=False: flow.linalg.matrix_norm(
    check_tensor(A, "nuclear_norm", "input"), "nuc", dim, keepdim), "flow.nuclear_norm")
