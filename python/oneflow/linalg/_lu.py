"""The LU family (as torch.linalg's): lu_factor, lu_factor_ex, lu, lu_solve and lu_unpack, plus the
deprecated torch.lu / torch.lu_solve / Tensor.lu forms, over the table op linalg_lu_factor
(LAPACK's getrf). The factorization's gradient (square matrices) is PyTorch's formula,
gA = P L^-H (tril_-1(L^H gL) + triu(gU U^H)) U^-H, from triangular solves, so it is itself
differentiable; lu_unpack and lu_solve are compositions of differentiable ops.
"""
import oneflow as flow
from .. import _oneflow_internal as _C
from ..autograd import Function
from .._export import export, export_value
from .._argcheck import check_flag, check_tensor
from .._global_hooks import placed_like


def _permutation(pivots, m):
    """perm (..., m) with (P^T A)[i] = A[perm[i]]: LAPACK's 1-based row interchanges applied in
    order to 0 .. m-1."""
    batch = tuple(pivots.shape[:-1])
    perm = flow.arange(m, **placed_like(pivots)).expand(batch + (m,)).contiguous()
    piv = pivots.long() - 1
    for i in range(pivots.shape[-1]):
        j = piv[..., i:i + 1]
        a = perm[..., i:i + 1].clone()
        perm[..., i:i + 1] = perm.gather(-1, j)
        perm.scatter_(-1, j, a)
    return perm


@export("flow.lu_unpack", out=True)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) with A = P L U from lu_factor's output (empty tensors for what is not unpacked)."""
    check_tensor(LU_data, "lu_unpack", "LU_data", 1)
    check_tensor(LU_pivots, "lu_unpack", "LU_pivots", 2)
    if LU_pivots.dtype != flow.int32:  # lu_factor's pivots, as PyTorch (a float "pivot" was truncated)
        raise RuntimeError(f"lu_unpack(): LU_pivots is expected to be a tensor of oneflow.int32 dtype (lu_factor's "
                           f"pivots), got {LU_pivots.dtype}")
    import collections
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = flow.empty(0, dtype=LU_data.dtype, **placed_like(LU_data))
    L = U = P = empty
    if unpack_data:
        eye = flow.eye(m, k, dtype=LU_data.dtype, **placed_like(LU_data))
        L = LU_data[..., :, :k].tril(-1) + eye
        U = LU_data[..., :k, :].triu()
    if unpack_pivots:
        perm = _permutation(LU_pivots, m)
        P = _C.one_hot(perm, m).to(LU_data.dtype).transpose(-2, -1)
    Result = collections.namedtuple("lu_unpack", ["P", "L", "U"])
    return Result(P, L, U)


class _LuFactor(Function):
    @staticmethod
    def forward(ctx, A):
        LU, piv, info = _C.linalg_lu_factor(A)
        ctx.save_for_backward(LU, piv)
        ctx.mark_non_differentiable(piv, info)
        return LU, piv, info

    @staticmethod
    def backward(ctx, gLU, gpiv=None, ginfo=None):
        LU, piv = ctx.saved_tensors
        m, n = LU.shape[-2], LU.shape[-1]
        if m != n:
            raise NotImplementedError("linalg.lu_factor: the derivative of the LU factorization of a non-square "
                                      "matrix is not implemented")
        P, L, U = lu_unpack(LU, piv)
        phi = (L.transpose(-2, -1).conj() @ gLU.tril(-1)).tril(-1) + (gLU.triu() @ U.transpose(-2, -1).conj()).triu()
        X = flow.linalg.solve_triangular(L.transpose(-2, -1).conj(), phi, upper=True, unitriangular=True)
        gA = flow.linalg.solve_triangular(U.transpose(-2, -1).conj(), X, upper=False, left=False)
        return P @ gA


def _check_pivot(pivot, name):
    if not check_flag(pivot, name, "pivot", 2):
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


@export("flow.linalg.lu_factor_ex")
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): info[b] = i > 0 when U[i-1, i-1] is exactly zero (not an error)."""
    import collections
    _check_pivot(pivot, "linalg.lu_factor_ex")
    LU, piv, info = _LuFactor.apply(A)
    if check_errors:
        _raise_on_info(info, "torch.linalg.lu_factor_ex")
    Result = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
    return Result(LU, piv, info)


def _raise_on_info(info, name):
    flat = info.reshape(-1)
    bad = (flat != 0).nonzero().reshape(-1)
    if bad.numel():
        b = int(bad[0])
        i = int(flat[b])
        where = f"(Batch element {b}): " if info.dim() > 0 else ""
        raise RuntimeError(f"{name}: {where}U[{i},{i}] is zero and using it on lu_solve would result in a division "
                           "by zero. If you still want to perform the factorization, consider calling linalg.lu(A, "
                           "pivot) or linalg.lu_factor_ex(A, pivot)")


@export("flow.linalg.lu_factor")
def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of the (batched) A = P L U; raises when a U has an exact zero on its diagonal."""
    import collections
    _check_pivot(pivot, "linalg.lu_factor")
    LU, piv, info = _LuFactor.apply(A)
    _raise_on_info(info, "torch.linalg.lu_factor")
    Result = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"])
    return Result(LU, piv)


@export("flow.linalg.lu")
def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U."""
    import collections
    _check_pivot(pivot, "linalg.lu")
    LU, piv, _ = _LuFactor.apply(A)
    P, L, U = lu_unpack(LU, piv)
    Result = collections.namedtuple("linalg_lu", ["P", "L", "U"])
    return Result(P, L, U)


@export("flow.linalg.lu_solve")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (or X A = B; adjoint: A^H) from A's lu_factor output."""
    P, L, U = lu_unpack(LU, pivots)
    st = flow.linalg.solve_triangular
    if left and not adjoint:  # L U X = P^T B
        Y = st(L, P.transpose(-2, -1) @ B, upper=False, unitriangular=True)
        return st(U, Y, upper=True)
    if left:  # A^H X = B: U^H L^H P^T X = B
        Y = st(U.transpose(-2, -1).conj(), B, upper=False)
        Z = st(L.transpose(-2, -1).conj(), Y, upper=True, unitriangular=True)
        return P @ Z
    if not adjoint:  # X P L U = B
        Y = st(U, B, upper=True, left=False)
        Z = st(L, Y, upper=False, left=False, unitriangular=True)
        return Z @ P.transpose(-2, -1)
    # X A^H = B: X U^H L^H P^T = B
    Y = st(L.transpose(-2, -1).conj(), B @ P, upper=True, left=False, unitriangular=True)
    return st(U.transpose(-2, -1).conj(), Y, upper=False, left=False)


@export("flow.lu", "Tensor.lu")
def _legacy_lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu / Tensor.lu (deprecated): (LU, pivots) or (LU, pivots, infos)."""
    get_infos = check_flag(get_infos, "lu", "get_infos", 3)
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


@export("flow.lu_solve")
def _legacy_lu_solve(b, LU_data, LU_pivots, out=None):
    """torch.lu_solve (deprecated argument order)."""
    check_tensor(b, "lu_solve", "input", 1)
    check_tensor(LU_data, "lu_solve", "LU_data", 2)
    check_tensor(LU_pivots, "lu_solve", "LU_pivots", 3)
    return lu_solve(LU_data, LU_pivots, b)


export_value(lambda self, LU_data, LU_pivots: _legacy_lu_solve(self, LU_data, LU_pivots), "Tensor.lu_solve")


