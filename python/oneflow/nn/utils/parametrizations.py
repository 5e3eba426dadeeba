"""Parametrizations for nn.utils.parametrize (as torch.nn.utils.parametrizations):
weight_norm (w = g v / ||v||, originals original0 = g and original1 = v) and spectral_norm
(w / sigma(w) with sigma from power iteration on the buffers _u / _v, refreshed in training
mode)."""
from ... import _oneflow_internal as _C
from ..._grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm"]


def _norm_except_dim(v, dim):
    """||v|| over every dim but `dim`, kept as size-1 dims (broadcasts against v)."""
    d = dim % v.dim()
    others = [k for k in range(v.dim()) if k != d]
    return _C.linalg_vector_norm(v, 2, others, True) if others else v.abs()


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        if self.dim == -1:
            return weight_v * (weight_g / weight_v.norm())
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        g = weight.norm().reshape(()) if self.dim == -1 else _norm_except_dim(weight, self.dim)
        return g, weight


def weight_norm(module, name="weight", dim=0):
    """Registers w = g * v / ||v|| (norm over every dim but `dim`; None: the whole tensor)."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations="
                             f"{n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            u = F.normalize(_C.randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=self.eps)
            v = F.normalize(_C.randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=self.eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(_C.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(_C.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = _C.dot(u, _C.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Registers w / sigma(w), sigma the largest singular value of w seen as a matrix with dim
    `dim` first (default 1 for transposed convolutions, else 0)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


from ._orthogonal import orthogonal  # noqa: E402  (re-exported as torch's parametrizations.orthogonal)

__all__.append("orthogonal")
