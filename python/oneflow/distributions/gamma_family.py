"""The gamma family (as torch.distributions'): Gamma, Chi2, Beta, Dirichlet, StudentT, with
closed-form log_prob / entropy / moments. Samples come from the C++ sampler `_standard_gamma`
(Marsaglia and Tsang's squeeze method) and are reparameterised: its gradient is the implicit
derivative of a draw at its fixed CDF value (`_standard_gamma_grad`), so rsample() exists for
every member. Dirichlet (and Beta) draws are normalised gamma draws, differentiated through the
normalisation (PyTorch differentiates the Dirichlet marginal directly: the same gradients in
expectation, not draw for draw)."""

import math

from .. import _oneflow_internal as _C
from .._grad_mode import no_grad
from .._size import Size
from .._types import finfo as _finfo
from . import constraints
from .continuous import _Scalar
from .distribution import Distribution
from .utils import broadcast_all


def _standard_gamma(alpha):
    """Gamma(alpha, 1) draws of alpha's shape (alpha > 0), differentiable in alpha."""
    return _C.standard_gamma(alpha)


class Gamma(_Scalar):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _params = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        self._init_params((concentration, rate), validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        return _standard_gamma(self.concentration.expand(*shape)) / self.rate.expand(*shape)

    def log_prob(self, value):
        self._check(value)
        value = value.to(self.rate.dtype) if value.dtype != self.rate.dtype else value
        return (_C.xlogy(self.concentration, self.rate) + _C.xlogy(self.concentration - 1, value)
                - self.rate * value - self.concentration.lgamma())

    def cdf(self, value):
        self._check(value)
        return _C.igamma(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + a.lgamma() + (1.0 - a) * a.digamma()


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        self.df = df
        super().__init__(0.5 * df, _C.full_like(df, 0.5), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        new.df = self.df.expand(*Size(batch_shape))
        return super().expand(batch_shape, new)


class StudentT(_Scalar):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("df", "loc", "scale")

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self._init_params((df, loc, scale), validate_args)

    @property
    def mean(self):
        m = self.loc.clone()
        return _C.where(self.df <= 1, _C.full_like(m, math.nan), m)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.df.clone()
        var = self.scale.pow(2) * m / (m - 2)
        var = _C.where(m <= 2, _C.full_like(var, math.inf), var)
        return _C.where(m <= 1, _C.full_like(var, math.nan), var)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        x = _C.randn(shape, dtype=self.df.dtype, device=self.df.device)
        df = self.df.expand(*shape)
        z = _standard_gamma(0.5 * df) * 2  # chi2(df)
        return self.loc + self.scale * x * (df / z).sqrt()

    def log_prob(self, value):
        self._check(value)
        y = (value - self.loc) / self.scale
        z = self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + (0.5 * self.df).lgamma() \
            - (0.5 * (self.df + 1.0)).lgamma()
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self):
        lbeta = (0.5 * self.df).lgamma() + math.lgamma(0.5) - (0.5 * (self.df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (self.df + 1) * ((0.5 * (self.df + 1)).digamma()
                                                           - (0.5 * self.df).digamma())
                + 0.5 * self.df.log() + lbeta)


class Dirichlet(Distribution):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(*(tuple(batch_shape) + tuple(self.event_shape)))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(-1, keepdim=True)
        one_hot = _C.one_hot(self.concentration.argmax(-1), self.concentration.shape[-1]).to(mode.dtype)
        return _C.where(mask, one_hot, mode)

    @property
    def variance(self):
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        g = _standard_gamma(self.concentration.expand(*shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return _C.xlogy(c - 1.0, value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    def entropy(self):
        k = self.concentration.shape[-1]
        a0 = self.concentration.sum(-1)
        return (self.concentration.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1))


class Beta(Distribution):
    """Beta(a, b): the first coordinate of Dirichlet([a, b])."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(_C.stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=Size()):
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(_C.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()


class FisherSnedecor(_Scalar):
    """F(df1, df2): (chi2(df1) / df1) / (chi2(df2) / df2)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _params = ("df1", "df2")

    def __init__(self, df1, df2, validate_args=None):
        self._init_params((df1, df2), validate_args)

    @property
    def mean(self):
        df2 = self.df2.clone()
        return _C.where(df2 > 2, df2 / (df2 - 2), _C.full_like(df2, math.nan))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _C.where(self.df1 > 2, mode, _C.full_like(mode, math.nan))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        var = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return _C.where(df2 > 4, var, _C.full_like(var, math.nan))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = _finfo(self.df1.dtype).tiny
        x1 = _standard_gamma(0.5 * self.df1.expand(*shape)) / self.df1
        x2 = _standard_gamma(0.5 * self.df2.expand(*shape)) / self.df2
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        self._check(value)
        a, b = 0.5 * self.df1, 0.5 * self.df2
        ratio = self.df1 / self.df2
        t1 = (a + b).lgamma() - a.lgamma() - b.lgamma()
        t2 = a * ratio.log() + (a - 1) * value.log()
        t3 = (a + b) * (ratio * value).log1p()
        return t1 + t2 - t3
