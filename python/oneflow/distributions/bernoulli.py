"""Bernoulli(probs=None, logits=None): 0/1 outcomes."""

import math
import numbers

from .. import _oneflow_internal as _C
from .._grad_mode import no_grad
from .._size import Size
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import (
    BinaryProbsLogits, broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits, softplus)


class Bernoulli(BinaryProbsLogits, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(*batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(*batch_shape)
            new._param = new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return _C.where(self.probs == 0.5, _C.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _C.bernoulli(self.probs.expand(*shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # -binary_cross_entropy_with_logits(logits, value)
        return logits * value - softplus(logits)

    def entropy(self):
        logits, probs = self.logits, self.probs
        return softplus(logits) - logits * probs

    def enumerate_support(self, expand=True):
        values = _C.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli on [0, 1], density C(lambda) lambda^x (1 - lambda)^(1 - x); near
    lambda = 1/2 (inside lims) the normaliser and moments use their Taylor expansions."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            self._param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        self._lims = lims
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        batch_shape = Size(batch_shape)
        new._lims = self._lims
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(*batch_shape))
                new._param = getattr(new, name)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def _stable(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut(self):
        return _C.where(self._stable(), self.probs, _C.full_like(self.probs, self._lims[0]))

    def _log_norm(self):
        # log C(p) = log|log(1 - p) - log p| - log|1 - 2p|
        c = self._cut()
        exact = (c.log() - (-c).log1p()).abs().log() - (1 - 2 * c).abs().log()
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _C.where(self._stable(), exact, taylor)

    @property
    def mean(self):
        c = self._cut()
        exact = c / (2 * c - 1) + 1 / ((-c).log1p() - c.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _C.where(self._stable(), exact, taylor)

    @property
    def variance(self):
        c = self._cut()
        exact = c * (c - 1) / (1 - 2 * c).pow(2) + 1 / ((-c).log1p() - c.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _C.where(self._stable(), exact, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        u = _C.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return value * logits - softplus(logits) + self._log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self._cut()
        exact = (c.pow(value) * (1 - c).pow(1 - value) + c - 1) / (2 * c - 1)
        out = _C.where(self._stable(), exact, value * _C.ones_like(exact))
        out = _C.where(value <= 0, _C.zeros_like(out), out)
        return _C.where(value >= 1, _C.ones_like(out), out)

    def icdf(self, value):
        c = self._cut()
        exact = ((-c + value * (2 * c - 1)).log1p() - (-c).log1p()) / (c.log() - (-c).log1p())
        return _C.where(self._stable(), exact, value * _C.ones_like(exact))

    def entropy(self):
        log0, log1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log0 - log1) - self._log_norm() - log0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """F(theta) = log((e^theta - 1) / theta), by its Taylor series near 0."""
        stable = (x <= -1e-2) | (x >= 1e-2)
        cut = _C.where(stable, x, _C.ones_like(x))
        exact = (cut.exp() - 1).abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return _C.where(stable, exact, taylor)
