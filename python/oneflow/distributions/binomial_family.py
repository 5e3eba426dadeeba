"""The binomial family (as torch.distributions'): Binomial, NegativeBinomial and Multinomial.
Binomial samples are sums of Bernoulli draws (exact in distribution, chunked over the trials);
Multinomial samples count Categorical draws; NegativeBinomial samples are Poisson(Gamma)
mixtures."""

import numbers

from .. import _oneflow_internal as _C
from .._grad_mode import no_grad
from .._size import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .gamma_family import _standard_gamma
from .utils import BinaryProbsLogits, broadcast_all, softplus


class _Multinomial(constraints.Constraint):
    """Non-negative integer count vectors summing to at most upper_bound (torch's multinomial)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)

    def __repr__(self):
        return f"Multinomial(upper_bound={self.upper_bound})"


def _init_probs_or_logits(self, probs, logits, extra=()):
    """Sets self.probs or self.logits (broadcast with the extra parameters); returns the
    broadcast extras and the parameter given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    out = broadcast_all(*extra, value)
    setattr(self, name, out[-1])
    return out[:-1], out[-1]


class _BinaryParam(BinaryProbsLogits, Distribution):
    """probs <-> logits (binary) as lazy properties, expand over both and the named extras."""

    _extra = ()

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        batch_shape = Size(batch_shape)
        for name in self._extra + ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(*batch_shape))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new


class Binomial(_BinaryParam):
    """The number of successes in total_count independent Bernoulli(probs) trials."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True
    _extra = ("total_count",)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (self.total_count,), self._param = _init_probs_or_logits(self, probs, logits, (total_count,))
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():  # (flow.binomial: O(1) draws per element, whatever the count)
            p = self.probs.expand(*shape)
            return _C.binomial(self.total_count.to(p.dtype).expand(*shape), p)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_binom = (n + 1).lgamma() - (value + 1).lgamma() - (n - value + 1).lgamma()
        # k log p + (n - k) log(1 - p) = k * logits - n * log(1 + exp(logits))
        return log_binom + value * self.logits - n * softplus(self.logits)

    def entropy(self):
        n = self.total_count
        if n.numel() and bool((n != n.reshape(-1)[0]).any()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        support = self.enumerate_support(False)
        lp = self.log_prob(support)
        return -(lp.exp() * lp).sum(0)

    def enumerate_support(self, expand=True):
        n = self.total_count
        n0 = int(n.reshape(-1)[0].item()) if n.numel() else 0
        if n.numel() and bool((n != n0).any()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = _C.arange(1 + n0, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class NegativeBinomial(_BinaryParam):
    """The number of successes (each of probability probs) before total_count failures."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer
    _extra = ("total_count",)

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (self.total_count,), self._param = _init_probs_or_logits(self, probs, logits, (total_count,))
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            # Gamma(total_count, rate = exp(-logits)) -> Poisson
            lam = _standard_gamma(self.total_count.expand(*shape)) * self.logits.exp().expand(*shape)
            return _C.poisson(lam)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        # n log(1 - p) + k log p = -n softplus(logits) + k (logits - softplus(logits))
        unnorm = -n * softplus(logits) + value * (logits - softplus(logits))
        log_norm = -(n + value).lgamma() + (value + 1).lgamma() + n.lgamma()
        log_norm = _C.where(n + value == 0, _C.zeros_like(log_norm), log_norm)
        return unnorm - log_norm


class Multinomial(Distribution):
    """Counts of total_count Categorical(probs / logits) draws, event shape (K,)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, numbers.Integral):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return _Multinomial(self.total_count)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        k = self._categorical._num_events
        with no_grad():
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)  # (n,) + S + B
            if self.total_count == 0:
                return _C.zeros(tuple(self._extended_shape(sample_shape)), dtype=self.probs.dtype,
                                device=self.probs.device)
            return _C.one_hot(draws, k).to(self.probs.dtype).sum(0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        logits, value = logits.expand(*_bshape(logits, value)), value.expand(*_bshape(logits, value))
        logits = _C.where((value == 0) & (logits == float("-inf")), _C.zeros_like(logits), logits)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        n = _C.full((), float(self.total_count), dtype=self.probs.dtype, device=self.probs.device)
        support = self._binomial.enumerate_support()  # (n + 1,) + B + (K,)
        binom_probs = self._binomial.log_prob(support).exp()
        # H = -log n! + n H(Categorical) + sum_i E[log X_i!], X_i ~ Binomial(n, p_i)
        return (-(n + 1).lgamma() + n * self._categorical.entropy()
                + (binom_probs * (support + 1).lgamma()).sum([0, -1]))


def _bshape(a, b):
    from .utils import broadcast_shape
    return tuple(broadcast_shape(a.shape, b.shape))
