"""Low-rank approximations: svd_lowrank and pca_lowrank (top level, as torch), over
linalg.svd of the full matrix. Tested against PyTorch in tests/test_compat_native.py.
"""
import oneflow as flow  # the assembled namespace, looked up at call time

from .._export import export
from .._argcheck import check_tensor


@export("flow.svd_lowrank")
def svd_lowrank(A, q=6, niter=2, M=None):
    """The q leading singular triplets (U, S, V) of A - M, A = U diag(S) V^T (batched). PyTorch
    approximates them by randomized subspace iteration; here they come from the exact SVD, which
    that iteration converges to."""
    check_tensor(A, "svd_lowrank", "A", 1)
    q = 6 if q is None else q
    # an int (a bool is one to PyTorch), not negative: PyTorch sizes a random (n, q) matrix with it
    if not isinstance(q, int):
        raise TypeError(f"svd_lowrank(): argument 'q' must be int, not {type(q).__name__}")
    if q < 0:
        raise RuntimeError(f"svd_lowrank(): Trying to create tensor with negative dimension {q}")
    X = A if M is None else A - M
    # PyTorch draws a random (min(m, n), q) matrix first: a q whose storage overflows is its error
    # (ours reads only q's min with the rank, so it returned)
    k = min(X.shape[-2], X.shape[-1]) if X.dim() >= 2 else 0
    if k * q * X.element_size() > 2**63 - 1:
        raise RuntimeError(f"svd_lowrank(): Storage size calculation overflowed with sizes=[{k}, {q}]")
    U, S, Vh = flow.linalg.svd(X, full_matrices=False)
    q = min(q, S.shape[-1])
    return U[..., :q], S[..., :q], Vh[..., :q, :].transpose(-2, -1)


@export("flow.pca_lowrank")
def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the centred A's q leading principal directions (q = min(6, m, n) by
    default), as torch.pca_lowrank."""
    check_tensor(A, "pca_lowrank", "A", 1)
    m, n = A.shape[-2], A.shape[-1]
    q = min(6, m, n) if q is None else q
    if not isinstance(q, int):  # (a float or a 0-d tensor passed the range check below)
        raise TypeError(f"pca_lowrank(): argument 'q' must be int, not {type(q).__name__}")
    if not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if center:
        A = A - A.mean(dim=-2, keepdim=True)
    return svd_lowrank(A, q, niter)
