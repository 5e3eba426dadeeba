"""Invertible (and a few non-invertible) maps between constrained spaces, as
torch.distributions.transforms: each Transform carries its domain / codomain constraints, its
event_dim, whether it is bijective and its sign, an inverse (``.inv``, cached weakly), the log of
the absolute Jacobian determinant, the shape maps, and an optional one-entry cache (cache_size 1)
that returns the stored input / output when called again on the very same tensor object."""

import oneflow as flow
import math
import numbers

from .. import _oneflow_internal as _C
from . import constraints
from .utils import broadcast_all, softplus
from ._transform_base import (  # noqa: F401  (public here, as torch.distributions.transforms)
    ComposeTransform, Transform, _clipped_sigmoid, _finfo, _InverseTransform, _ParameterFree, _sum_rightmost,
    identity_transform)

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftplusTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
    "TanhTransform", "Transform", "identity_transform",
]


class ExpTransform(_ParameterFree):
    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, +1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    domain, codomain, bijective = constraints.positive, constraints.positive, True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return flow.broadcast_shapes(tuple(shape), tuple(self.exponent.shape))

    inverse_shape = forward_shape


class SigmoidTransform(_ParameterFree):
    domain, codomain, bijective, sign = constraints.real, constraints.unit_interval, True, +1

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        fi = _finfo(y.dtype)
        y = y.clamp(min=fi.tiny, max=1.0 - fi.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class TanhTransform(_ParameterFree):
    domain, codomain, bijective, sign = constraints.real, constraints.interval(-1.0, 1.0), True, +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = log(4 e^{-2x} / (1 + e^{-2x})^2), stable for large |x|
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(_ParameterFree):
    domain, codomain = constraints.real, constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, over event_dim rightmost dims."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif not bool((a == b).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            s = float(self.scale)
            return 1 if s > 0 else -1 if s < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Number):
            result = _C.full(shape, math.log(abs(self.scale)), dtype=x.dtype, device=x.device)
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = _sum_rightmost(result, self._event_dim)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(*shape) if tuple(result.shape) != shape else result

    def forward_shape(self, shape):
        return flow.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                        tuple(getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape


class SoftplusTransform(_ParameterFree):
    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, +1

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return y + (-(-y).expm1()).log()  # log(e^y - 1)

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class SoftmaxTransform(_ParameterFree):
    domain, codomain = constraints.real_vector, constraints.simplex

    def _call(self, x):
        e = (x - x.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


from ._structural_transforms import (  # noqa: E402,F401
    CatTransform, CorrCholeskyTransform, CumulativeDistributionTransform, IndependentTransform,
    LowerCholeskyTransform, PositiveDefiniteTransform, ReshapeTransform, StackTransform, StickBreakingTransform)
