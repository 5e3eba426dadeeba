"""Invertible (and a few non-invertible) maps between constrained spaces, as
torch.distributions.transforms: each Transform carries its domain / codomain constraints, its
event_dim, whether it is bijective and its sign, an inverse (``.inv``, cached weakly), the log of
the absolute Jacobian determinant, the shape maps, and an optional one-entry cache (cache_size 1)
that returns the stored input / output when called again on the very same tensor object."""

import oneflow as flow
import math
import numbers
import operator
import weakref
from functools import reduce

from .. import _oneflow_internal as _C
from . import constraints
from .utils import broadcast_all, softplus

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftplusTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
    "TanhTransform", "Transform", "identity_transform",
]


def _finfo(dtype):
    from .._types import finfo
    return finfo(dtype)


def _sum_rightmost(value, dim):
    if dim <= 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def _clipped_sigmoid(x):
    fi = _finfo(x.dtype)
    return x.sigmoid().clamp(min=fi.tiny, max=1.0 - fi.eps)


class Transform:
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform  # a strong reference: the forward map must outlive its inverse

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """parts applied left to right; the log-det terms summed over the event dims each part adds."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for p in reversed(self.parts):
            event_dim = max(event_dim + p.domain.event_dim - p.codomain.event_dim, p.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for p in self.parts:
            event_dim = max(event_dim + p.codomain.event_dim - p.domain.event_dim, p.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        return reduce(operator.mul, (p.sign for p in self.parts), 1)

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _C.zeros_like(x)
        xs = [x]
        for p in self.parts[:-1]:
            xs.append(p(xs[-1]))
        xs.append(y)
        total, event_dim = None, self.domain.event_dim
        for p, a, b in zip(self.parts, xs[:-1], xs[1:]):
            term = _sum_rightmost(p.log_abs_det_jacobian(a, b), event_dim - p.domain.event_dim)
            total = term if total is None else total + term
            event_dim += p.codomain.event_dim - p.domain.event_dim
        return total

    def forward_shape(self, shape):
        for p in self.parts:
            shape = p.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for p in reversed(self.parts):
            shape = p.inverse_shape(shape)
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class _ParameterFree(Transform):
    """A transform without parameters: all its instances are equal."""

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = object.__hash__


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


# defined in _transforms_more (which imports the base classes above)
from ._transforms_more import (  # noqa: E402,F401
    CatTransform, CorrCholeskyTransform, CumulativeDistributionTransform, IndependentTransform,
    LowerCholeskyTransform, PositiveDefiniteTransform, ReshapeTransform, StackTransform, StickBreakingTransform)
