"""PyTorch linear-algebra functions outside OneFlow's spec, composed of table ops in Python:
linalg.multi_dot (optimal order), vecdot, diagonal, cond, matrix_exp (scaling and squaring with
the [13/13] Pade approximant, in double), tensorinv, tensorsolve, solve_triangular (linalg.solve
on the triangle), vander, matmul, eig / eigvals (over the table op linalg_eig); chain_matmul,
cholesky_solve, cholesky_inverse, matrix_rank / nuclear_norm / frobenius_norm. The LU family is
python/oneflow/_linalg_lu.py. Tested against PyTorch in tests/test_torch_linalg_names.py.
"""
import oneflow as flow
import builtins
import math

from . import _C
from ._oneflow_internal import Tensor
from ._export import export, export_value, ref
from ._argcheck import check_tensor, check_tensors


@export("flow.linalg.multi_dot", out=True)
def multi_dot(tensors):
    """The product of the chain of matrices (first / last may be 1-D), multiplied in the order
    of fewest scalar multiplications (the classic dynamic programme)."""
    check_tensors(tensors, "linalg_multi_dot", "tensors", 1)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_1d, last_1d = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_1d:
        mats[0] = mats[0].unsqueeze(0)
    if last_1d:
        mats[-1] = mats[-1].unsqueeze(1)
    for k, m in enumerate(mats):
        if m.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {k} must be 2D but got {tensors[k].dim()}D")
    for k in builtins.range(n - 1):
        if mats[k].shape[1] != mats[k + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {k} and {k + 1} with shapes {list(tensors[k].shape)} and "
                               f"{list(tensors[k + 1].shape)} cannot be multiplied")
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    cost = [[0] * n for _ in builtins.range(n)]
    split = [[0] * n for _ in builtins.range(n)]
    for length in builtins.range(1, n):
        for i in builtins.range(n - length):
            j = i + length
            cost[i][j] = None
            for k in builtins.range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return flow.mm(product(i, k), product(k + 1, j))

    out = product(0, n - 1)
    if first_1d:
        out = out.squeeze(0)
    if last_1d:
        out = out.squeeze(-1)
    return out


@export("flow.chain_matmul")
def chain_matmul(*matrices):
    """Deprecated PyTorch name of linalg.multi_dot (2-D matrices)."""
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"chain_matmul(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(m).__name__}")
    if len(matrices) == 1:
        return matrices[0]
    return multi_dot(matrices)


@export("flow.linalg.vecdot", out=True)
def vecdot(x, y, *, dim=-1):
    """sum(conj(x) * y) along dim (broadcast)."""
    return (x.conj() * y).sum(dim) if x.dtype.is_complex else (x * y).sum(dim)


@export("flow.linalg.diagonal")
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the (batched) matrices, dims -2 / -1 by default."""
    check_tensor(A, "linalg_diagonal", "A", 1)
    return A.diagonal(offset, dim1, dim2)


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
        return flow.full(A.shape[:-2], float("inf"), dtype=A.dtype, device=A.device)
    return flow.linalg.matrix_norm(A, p) * flow.linalg.matrix_norm(inv, p)


_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0,
           1.0)
_THETA13 = 5.371920351148152  # Higham (2005): the 1-norm up to which Pade [13/13] is exact in float64


@export("flow.linalg.matrix_exp", "flow.matrix_exp", "Tensor.matrix_exp")
def matrix_exp(A):
    """exp of (batched) square matrices: scaling and squaring with the [13/13] Pade approximant
    (Higham 2005), computed in double (complex128 for complex input) and cast back; every
    matrix of a batch scaled by the largest norm's power of two."""
    check_tensor(A, "linalg_matrix_exp", "A", 1)
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() >= 2 else 1} by {A.shape[-1] if A.dim() else 1} matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got {A.dtype}")
    if A.numel() == 0:
        return A.clone()
    wide = flow.complex128 if A.dtype.is_complex else flow.float64
    X = A.to(wide)
    norm = float(X.detach().abs().sum(-2).amax())  # the largest 1-norm of the batch
    s = max(0, math.ceil(math.log2(norm / _THETA13))) if norm > 0 and math.isfinite(norm) else 0
    X = X / (2.0 ** s) if s else X
    b = _PADE13
    eye = flow.eye(A.shape[-1], dtype=wide, device=A.device)
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    R = flow.linalg.solve(V - U, V + U)
    for _ in builtins.range(s):
        R = R @ R
    return R.to(A.dtype)


@export("flow.linalg.eig")
def eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of square matrices (complex results, LAPACK's geev order and
    normalisation: unit columns with the largest component real)."""
    import collections
    w, V = _C.linalg_eig(A, True)
    Result = collections.namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
    return Result(w, V)


@export("flow.linalg.eigvals")
def eigvals(A, *, out=None):
    """The (complex) eigenvalues of square matrices; the eigenvectors are computed only when a
    gradient will need them."""
    check_tensor(A, "linalg_eigvals", "A", 1)
    return _C.linalg_eig(A, bool(A.requires_grad and flow.is_grad_enabled()))[0]


@export("flow.linalg.tensorinv", out=True)
def tensorinv(A, ind=2):
    """The inverse of A read as a matrix of (prod of its first ind dims) rows: shape
    A.shape[ind:] + A.shape[:ind]."""
    check_tensor(A, "linalg_tensorinv", "A", 1)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return flow.linalg.inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


@export("flow.linalg.tensorsolve", out=True)
def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) = B: A's dims `dims` moved last, A read as a
    (B.numel(), rest) matrix."""
    check_tensor(A, "linalg_tensorsolve", "A", 1)
    check_tensor(B, "linalg_tensorsolve", "B", 2)
    if dims is not None:
        nd = A.dim()
        moved = [d % nd for d in dims]
        A = A.permute(*[d for d in builtins.range(nd) if d not in moved], *moved)
    rest = tuple(A.shape[B.dim():])
    n = B.numel()
    if math.prod(rest) != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {math.prod(rest)} != {n}")
    return flow.linalg.solve(A.reshape(n, n), B.reshape(n)).reshape(rest)


@export("flow.linalg.solve_triangular", out=True)
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (left) or X A = B, A triangular: only its upper (or lower) triangle is
    read, its diagonal taken as ones when unitriangular; solved by linalg.solve on that matrix."""
    if A.dim() < 2 or B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor A and B must have at least 2 dimensions.")
    T = A.triu() if upper else A.tril()
    if unitriangular:
        eye = flow.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        T = T * (1 - eye) + eye
    return flow.linalg.solve(T, B, left=left)


@export("flow.cholesky_solve", "Tensor.cholesky_solve", out=True)
def cholesky_solve(B, L, upper=False):
    """X with (L L^H) X = B for the Cholesky factor L (upper: A = U^H U)."""
    check_tensor(B, "cholesky_solve", "input", 1)
    check_tensor(L, "cholesky_solve", "input2", 2)
    if upper:
        y = flow.linalg.solve_triangular(L.transpose(-2, -1).conj(), B, upper=False)
        return flow.linalg.solve_triangular(L, y, upper=True)
    y = flow.linalg.solve_triangular(L, B, upper=False)
    return flow.linalg.solve_triangular(L.transpose(-2, -1).conj(), y, upper=True)


@export("flow.cholesky_inverse", "Tensor.cholesky_inverse", out=True)
def cholesky_inverse(L, upper=False):
    """The inverse of L L^H (upper: U^H U) from its Cholesky factor."""
    check_tensor(L, "cholesky_inverse", "input", 1)
    eye = flow.eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(tuple(L.shape))
    return cholesky_solve(eye, L, upper)


@export("flow.frobenius_norm")
def frobenius_norm(input, dim, keepdim=False):
    """The 2-norm of the entries over `dim` (one dim or several, PyTorch's frobenius_norm; a
    real result for complex input)."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    return flow.linalg.vector_norm(input, 2, dims, keepdim)


export_value(lambda x, *, N=None: flow.vander(check_tensor(x, "linalg_vander", "x"), N, increasing=True),
             "flow.linalg.vander")
export_value(ref("flow.matmul"), "flow.linalg.matmul")
export_value(lambda A, tol=None, symmetric=False: flow.linalg.matrix_rank(A, tol=tol, hermitian=symmetric), "flow.matrix_rank")
export_value(lambda A, dim=(-2, -1), keepdim=False: flow.linalg.matrix_norm(
    check_tensor(A, "nuclear_norm", "input"), "nuc", dim, keepdim), "flow.nuclear_norm")


