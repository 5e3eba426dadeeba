"""Scalar continuous distributions with closed forms (as torch.distributions'): Exponential,
Laplace, LogNormal, Gumbel, Cauchy and HalfNormal. Each reparameterises its samples through a
standard draw (rsample) and gives PyTorch's log_prob / cdf / icdf / entropy / moments."""

import math
import numbers

from .. import _oneflow_internal as _C
from .._grad_mode import no_grad
from .._types import finfo as _finfo
from .._size import Size
from . import constraints
from .distribution import Distribution
from .normal import Normal
from .utils import _eps, broadcast_all

_EULER = 0.57721566490153286060


class _Scalar(Distribution):
    """Parameters broadcast together (names in _params); batch shape their shape."""

    _params = ()

    def _init_params(self, values, validate_args):
        tensors = broadcast_all(*values)
        for name, t in zip(self._params, tensors):
            setattr(self, name, t)
        scalar = all(isinstance(v, numbers.Number) for v in values)
        super().__init__(Size() if scalar else tensors[0].size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        batch_shape = Size(batch_shape)
        for name in self._params:
            setattr(new, name, getattr(self, name).expand(*batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _first(self):
        return getattr(self, self._params[0])

    def _uniform(self, sample_shape, low=0.0, high=1.0):
        p = self._first()
        return _C.rand(tuple(self._extended_shape(sample_shape)), dtype=p.dtype, device=p.device) * (high - low) + low

    def _check(self, value):
        if self._validate_args:
            self._validate_sample(value)


class _LocScale(_Scalar):
    """A location-scale family: parameters loc (real) and scale (positive), mode loc."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._init_params((loc, scale), validate_args)

    @property
    def mode(self):
        return self.loc


class Exponential(_Scalar):
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _params = ("rate",)

    def __init__(self, rate, validate_args=None):
        self._init_params((rate,), validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return _C.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        return _C.empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_() / self.rate

    def log_prob(self, value):
        self._check(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        self._check(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()


class Laplace(_LocScale):

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=Size()):
        u = self._uniform(sample_shape, _eps(self.loc.dtype) - 1, 1.0)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        self._check(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        self._check(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()


class LogNormal(_Scalar):
    """exp of Normal(loc, scale)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._init_params((loc, scale), validate_args)
        self.base_dist = Normal(self.loc, self.scale, validate_args=False)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.base_dist = Normal(new.loc, new.scale, validate_args=False)
        return new

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value):
        self._check(value)
        y = value.log()
        return self.base_dist.log_prob(y) - y

    def cdf(self, value):
        return self.base_dist.cdf(value.log())

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class Gumbel(_LocScale):

    @property
    def mean(self):
        return self.loc + self.scale * _EULER

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()):
        fi = _finfo(self.loc.dtype)
        u = self._uniform(sample_shape).clamp(min=fi.tiny, max=1 - fi.eps)
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value):
        self._check(value)
        z = (value - self.loc) / self.scale
        return -(z + (-z).exp()) - self.scale.log()

    def cdf(self, value):
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def entropy(self):
        return self.scale.log() + (1 + _EULER)


class Cauchy(_LocScale):

    @property
    def mean(self):
        return _C.full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def variance(self):
        return _C.full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = _C.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        self._check(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class HalfNormal(_Scalar):
    """|Normal(0, scale)|."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _params = ("scale",)

    def __init__(self, scale, validate_args=None):
        self._init_params((scale,), validate_args)
        self.base_dist = Normal(_C.zeros_like(self.scale), self.scale, validate_args=False)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.base_dist = Normal(_C.zeros_like(new.scale), new.scale, validate_args=False)
        return new

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return _C.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape).abs()

    def log_prob(self, value):
        self._check(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return _C.where(value >= 0, lp, _C.full_like(lp, -math.inf))

    def cdf(self, value):
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


def _log_i0(k):
    return k + _C.i0e(k).log()


def _log_i1(k):
    return k + _C.i1e(k).log()


class VonMises(_Scalar):
    """The circular normal on [-pi, pi): density exp(kappa cos(x - loc)) / (2 pi I0(kappa))."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _params = ("loc", "concentration")

    def __init__(self, loc, concentration, validate_args=None):
        self._init_params((loc, concentration), validate_args)

    def log_prob(self, value):
        self._check(value)
        k = self.concentration
        return k * (value - self.loc).cos() - math.log(2 * math.pi) - _log_i0(k)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        k = self.concentration
        return 1 - (_log_i1(k) - _log_i0(k)).exp()

    def sample(self, sample_shape=Size()):
        """Best and Fisher (1979): a wrapped-Cauchy envelope, rejected positions redrawn."""
        shape = tuple(self._extended_shape(sample_shape))
        dt = self.loc.dtype
        with no_grad():
            k = self.concentration.expand(*shape).reshape(-1).double()
            tau = 1 + (1 + 4 * k * k).sqrt()
            rho = (tau - (2 * tau).sqrt()) / (2 * k)
            r_big = (1 + rho * rho) / (2 * rho)
            r_small = 1 / k + k  # the same limit without the cancellation at small kappa
            r = _C.where(k < 1e-5, r_small, r_big)
            f_out = _C.zeros_like(k)
            pending = _C.ones_like(k, dtype=_C.bool)
            for _ in range(1000):
                idx = pending.nonzero().reshape(-1)
                if idx.numel() == 0:
                    break
                n = idx.shape[0]
                ki, ri = k[idx], r[idx]
                u1 = _C.rand(n, dtype=k.dtype, device=k.device)
                u2 = _C.rand(n, dtype=k.dtype, device=k.device).clamp(min=1e-300)
                z = (math.pi * u1).cos()
                f = (1 + ri * z) / (ri + z)
                c = ki * (ri - f)
                ok = ((c * (2 - c) - u2) > 0) | (((c / u2).clamp(min=1e-300).log() + 1 - c) >= 0)
                acc = idx[ok]
                f_out[acc] = f[ok]
                pending[acc] = False
            u3 = _C.rand(k.shape[0], dtype=k.dtype, device=k.device)
            theta = (u3 - 0.5).sign() * f_out.clamp(-1, 1).acos()
            theta = theta.reshape(shape).to(dt)
            x = (theta + self.loc.expand(*shape) + math.pi).remainder(2 * math.pi) - math.pi
            return x


class GeneralizedPareto(_Scalar):
    """Density (1/scale) (1 + c z)^(-1/c - 1) with z = (x - loc) / scale and c = concentration
    (exp(-z) / scale at c = 0), on [loc, inf) for c >= 0 and [loc, loc - scale / c] for c < 0."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True
    _params = ("loc", "scale", "concentration")

    def __init__(self, loc, scale, concentration, validate_args=None):
        self._init_params((loc, scale, concentration), validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        inf = _C.full_like(self.loc, float("inf"))
        upper = _C.where(self.concentration < 0, self.loc - self.scale / self.concentration, inf)
        return constraints.interval(self.loc, upper)

    def _safe_concentration(self):
        """(c == 0 mask, c with the zeros replaced by ones)."""
        c = self.concentration
        zero = _C.isclose(c, _C.zeros_like(c))
        return zero, _C.where(zero, _C.ones_like(c), c)

    def rsample(self, sample_shape=Size()):
        return self.icdf(self._uniform(sample_shape))

    def log_prob(self, value):
        self._check(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_concentration()
        power = 1 / c + _C.ones_like(z)
        nonzero = _C.where(power == 0, power, power * (c * z).log1p())  # c = -1: a flat density
        return -self.scale.log() - _C.where(zero, z, nonzero)

    def log_survival_function(self, value):
        self._check(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_concentration()
        return _C.where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        zero, c = self._safe_concentration()
        log_survival = (-value).log1p()
        return _C.where(zero, self.loc - self.scale * log_survival,
                        self.loc + self.scale / c * (-c * log_survival).expm1())

    @property
    def mean(self):
        valid = self.concentration < 1
        c = _C.where(valid, self.concentration, _C.full_like(self.concentration, 0.5))
        return _C.where(valid, self.loc + self.scale / (1 - c), _C.full_like(c, float("nan")))

    @property
    def variance(self):
        valid = self.concentration < 0.5
        c = _C.where(valid, self.concentration, _C.full_like(self.concentration, 0.25))
        var = self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c))
        return _C.where(valid, var, _C.full_like(c, float("nan")))

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(*self.batch_shape)
