"""Linear solves of oneflow.linalg outside OneFlow's spec, composed of the table's linalg.solve /
inv: solve_triangular (linalg.solve on the triangle), tensorinv, tensorsolve, and PyTorch's
cholesky_solve / cholesky_inverse over solve_triangular. Tested against PyTorch in
tests/test_torch_linalg_names.py."""
import builtins
import math

import oneflow as flow

from .._export import export, export_value
from .._argcheck import check_tensor
from .._global_hooks import placed_like


@export("flow.linalg.solve_triangular", out=True)
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (left) or X A = B, A triangular: only its upper (or lower) triangle is
    read, its diagonal taken as ones when unitriangular; solved by linalg.solve on that matrix."""
    if A.dim() < 2 or B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor A and B must have at least 2 dimensions.")
    T = A.triu() if upper else A.tril()
    if unitriangular:
        eye = flow.eye(A.shape[-1], dtype=A.dtype, **placed_like(A))
        T = T * (1 - eye) + eye
    return flow.linalg.solve(T, B, left=left)


@export("flow.linalg.tensorinv", out=True)
def tensorinv(A, ind=2):
    """The inverse of A read as a matrix of (prod of its first ind dims) rows: shape
    A.shape[ind:] + A.shape[:ind]."""
    check_tensor(A, "linalg_tensorinv", "A", 1)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    if ind > A.dim():  # PyTorch: its slice of the shape fails ("ArrayRef: invalid slice")
        raise RuntimeError(f"linalg.tensorinv: expected 'ind' to be at most A's number of dimensions ({A.dim()}), "
                           f"but got {ind}")
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
    eye = flow.eye(L.shape[-1], dtype=L.dtype, **placed_like(L)).expand(tuple(L.shape))
    return cholesky_solve(eye, L, upper)


@export("flow.triangular_solve", out=True)
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """Deprecated torch.triangular_solve: (X, A's copy) with op(A) X = b, op(A) = A or A^T."""
    check_tensor(b, "triangular_solve", "input", 1)
    check_tensor(A, "triangular_solve", "A", 2)
    import collections
    M = A.transpose(-2, -1) if transpose else A
    x = flow.linalg.solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])(x, A.clone())


export_value(lambda self, A, upper=True, transpose=False, unitriangular=False: triangular_solve(
    self, A, upper, transpose, unitriangular), "Tensor.triangular_solve")
