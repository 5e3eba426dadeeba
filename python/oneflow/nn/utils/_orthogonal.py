"""The orthogonal parametrization (as torch.nn.utils.parametrizations.orthogonal).

A weight of shape (..., n, k) is mapped onto the matrices with orthonormal columns (rows when
it is wide: the map works on the transposed, tall matrix). Maps, on the tall X (n >= k):

* "matrix_exp" / "cayley": the lower triangle of X (padded with zero columns to n x n) gives
  the skew-symmetric A = L - L^H; Q is exp(A) or the Cayley transform (I - A/2)^{-1}(I + A/2),
  keeping its first k columns.
* "householder": the strict lower triangle of X holds k Householder vectors (unit leading
  entry implied) with tau = 2 / ||v||^2; Q = H_1 ... H_k restricted to the first k columns,
  then each column j scaled by trunc(X[j, j]) (+1 / -1, not differentiated).

With use_trivialization=True the result is multiplied on the left by the buffer `base`, an
n x n orthogonal matrix set by right_inverse, which then returns the original that makes the
map the identity (-I: exp(0) = I, and the Householder map of zero vectors with diagonal -1 is
I). Without it, right_inverse only exists for "householder" (the Householder QR of the value).
"""
import oneflow as flow
from enum import Enum

import numpy as np

from ... import _oneflow_internal as _C
from ..._grad_mode import no_grad
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal"]


class _OrthMaps(Enum):
    matrix_exp = "matrix_exp"
    cayley = "cayley"
    householder = "householder"


def _mH(x):
    return x.transpose(-2, -1).conj() if x.is_complex() else x.transpose(-2, -1)


def _householder_product(A, tau):
    """Q = H_1 ... H_k (first k columns) with H_j = I - tau_j v_j v_j^H, v_j the j-th column of
    the strict lower triangle of A (n x k) with a 1 on the diagonal. Differentiable."""
    n, k = A.size(-2), A.size(-1)
    eye = flow.eye(n, k, dtype=A.dtype, device=A.device)
    V = A.tril(-1) + eye
    Q = eye.expand(*A.shape[:-2], n, k)
    for j in range(k - 1, -1, -1):
        v = V[..., :, j:j + 1]
        t = tau[..., j:j + 1].unsqueeze(-1)
        Q = Q - (t * v) @ (_mH(v) @ Q)
    return Q


def _geqrf(Q):
    """LAPACK-style Householder QR of the real tall (..., n, k) Q (no grad): returns R on and
    above the diagonal with the reflectors below it, and tau (...,  k)."""
    a = Q.detach().cpu().numpy().astype(np.float64 if Q.dtype == flow.float64 else np.float32, copy=True)
    batch, (n, k) = a.shape[:-2], a.shape[-2:]
    a = a.reshape((-1, n, k))
    tau = np.zeros((a.shape[0], k), dtype=a.dtype)
    for b in range(a.shape[0]):
        m = a[b]
        for j in range(min(n, k)):
            alpha = m[j, j]
            xnorm = np.linalg.norm(m[j + 1:, j])
            if xnorm == 0:
                continue  # tau = 0: H = I
            beta = -np.copysign(np.hypot(alpha, xnorm), alpha)
            tau[b, j] = (beta - alpha) / beta
            v = np.concatenate([[1.0], m[j + 1:, j] / (alpha - beta)]).astype(a.dtype)
            m[j:, j + 1:] -= tau[b, j] * np.outer(v, v @ m[j:, j + 1:])
            m[j, j] = beta
            m[j + 1:, j] = v[1:]
    out = flow.tensor(a.reshape(batch + (n, k)), dtype=Q.dtype, device=Q.device)
    return out, flow.tensor(tau.reshape(batch + (k,)), dtype=Q.dtype, device=Q.device)


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eye = flow.eye(k, dtype=Q.dtype, device=Q.device)
    return bool(flow.allclose(_mH(Q) @ Q, eye.expand_as(_mH(Q) @ Q), atol=10.0 * n * flow.finfo(Q.dtype).eps))


def _make_orthogonal(A):
    """The Q factor of A = QR (A square or tall) normalised so that diag(R) >= 0."""
    Q, R = flow.linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        self.use_trivialization = use_trivialization
        self._registering = False
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.transpose(-2, -1)
            n, k = k, n
        if self.orthogonal_map == _OrthMaps.householder:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).detach().trunc().unsqueeze(-2)
        else:
            L = X.tril()
            if n != k:
                L = flow.cat([L, L.new_zeros(*L.shape[:-2], n, n - k)], dim=-1)
            A = L - _mH(L)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = flow.linalg.matrix_exp(A)
            else:
                eye = flow.eye(n, dtype=A.dtype, device=A.device)
                Q = flow.linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if self.use_trivialization:
            Q = self.base @ Q
        if transposed:
            Q = Q.transpose(-2, -1)
        return Q

    def right_inverse(self, Q):
        with no_grad():
            if tuple(Q.shape) != tuple(self.shape):
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transposed = n < k
            if transposed:
                Q = Q.transpose(-2, -1)
                n, k = k, n
            if not self.use_trivialization:
                if self.orthogonal_map != _OrthMaps.householder:
                    if self._registering:  # registration keeps the value as the original
                        return Q_init
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the "
                                              "Cayley parametrizations when use_trivialization=False.")
                A, tau = _geqrf(Q)
                d = A.diagonal(dim1=-2, dim2=-1).sign()
                d = flow.where(tau == 0, -d, d)
                E = flow.eye(n, k, dtype=A.dtype, device=A.device)
                A = A * (1 - E) + E * d.unsqueeze(-2)  # R above, reflectors below, signs on the diagonal
                return A.transpose(-2, -1) if transposed else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:  # complete the k columns into an n x n orthogonal matrix
                N = flow.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(flow.cat([Q, N], dim=-1))
            self.base = Q
            # -I: the map of the original is then the identity (see the module docstring)
            return -flow.eye(Q_init.size(-2), Q_init.size(-1), dtype=Q_init.dtype,
                             device=Q_init.device).expand_as(Q_init).clone()


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Registers an orthogonal (unitary) parametrization of module.<name> (a matrix or a batch
    of matrices, acting on the last two dims); returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) else None
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    orth._registering = True
    try:
        parametrize.register_parametrization(module, name, orth, unsafe=True)
    finally:
        orth._registering = False
    return module
