"""Eigen-decomposition and matrix functions of oneflow.linalg outside OneFlow's spec: eig / eigvals
over the table op linalg_eig (LAPACK geev), and matrix_exp (scaling and squaring with the [13/13]
Pade approximant, in double). Tested against PyTorch in tests/test_torch_linalg_names.py and
tests/test_linalg_complex.py."""
import builtins
import math

import oneflow as flow

from .. import _oneflow_internal as _C
from .._export import export
from .._argcheck import check_tensor
from .._global_hooks import placed_like


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
    eye = flow.eye(A.shape[-1], dtype=wide, **placed_like(A))
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    R = flow.linalg.solve(V - U, V + U)
    for _ in builtins.range(s):
        R = R @ R
    return R.to(A.dtype)
