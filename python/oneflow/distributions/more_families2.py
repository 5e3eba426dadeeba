"""Continuous families (as torch.distributions'): ExponentialFamily (entropy through the
Bregman divergence of the log-normaliser), ContinuousBernoulli, FisherSnedecor, VonMises
(Best and Fisher's rejection sampler) and LowRankMultivariateNormal (covariance W W^T + D,
log_prob and log-determinant through the capacitance matrix I + W^T D^-1 W)."""

import math

from .. import _oneflow_internal as _C
from .._grad_mode import enable_grad, no_grad
from .._size import Size
from . import constraints
from .continuous import _Scalar, _finfo
from .distribution import Distribution
from .gamma_family import _standard_gamma
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits


def softplus(x):
    """log(1 + exp(x)) with the gradient sigmoid(x) everywhere (also at 0)."""
    return _C.softplus(x)


class ExponentialFamily(Distribution):
    """p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)). Subclasses give _natural_params,
    _log_normalizer(*natural_params) and _mean_carrier_measure (E[k(x)])."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        import oneflow
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with enable_grad():
            log_norm = self._log_normalizer(*params)
            grads = oneflow.autograd.grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for p, g in zip(params, grads):
            prod = p * g
            if len(self.event_shape):
                prod = prod.reshape(tuple(self.batch_shape) + (-1,)).sum(-1)
            result = result - prod
        return result


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


class LowRankMultivariateNormal(Distribution):
    """A Gaussian vector with covariance cov_factor @ cov_factor^T + diag(cov_diag)."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        import oneflow
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            batch_shape = tuple(oneflow.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                                         tuple(cov_diag.shape[:-1])))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}") from e
        self.loc = loc.expand(batch_shape + event_shape)
        self.cov_factor = cov_factor.expand(batch_shape + tuple(cov_factor.shape[-2:]))
        self.cov_diag = cov_diag.expand(batch_shape + event_shape)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = self._capacitance(cov_factor, cov_diag)
        super().__init__(Size(batch_shape), Size(event_shape), validate_args=validate_args)

    @staticmethod
    def _capacitance(W, D):
        import oneflow
        Wt_Dinv = W.transpose(-1, -2) / D.unsqueeze(-2)
        K = Wt_Dinv @ W
        m = W.shape[-1]
        K = K + oneflow.eye(m, dtype=W.dtype, device=W.device)
        return oneflow.linalg.cholesky(K)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = tuple(Size(batch_shape))
        loc_shape = batch_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(*loc_shape)
        new.cov_diag = self.cov_diag.expand(*loc_shape)
        new.cov_factor = self.cov_factor.expand(*(loc_shape + tuple(self.cov_factor.shape[-1:])))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, Size(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, x):
        return x.expand(tuple(self._batch_shape) + tuple(x.shape[-2:]))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return self._full(W @ W.transpose(-1, -2) + _C.diag_embed(D))

    @lazy_property
    def scale_tril(self):
        import oneflow
        return oneflow.linalg.cholesky(self.covariance_matrix)

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W C^-1 W^T D^-1, C = L L^T the capacitance
        import oneflow
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.transpose(-1, -2) / D.unsqueeze(-2)
        A = oneflow.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return self._full(_C.diag_embed(1 / D) - A.transpose(-1, -2) @ A)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eps_w = _C.randn(shape[:-1] + tuple(W.shape[-1:]), dtype=self.loc.dtype, device=self.loc.device)
        eps_d = _C.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (W @ eps_w.unsqueeze(-1)).squeeze(-1) + D.sqrt() * eps_d

    def _log_det(self):
        logdet_c = 2 * self._capacitance_tril.diagonal(0, -2, -1).log().sum(-1)
        return logdet_c + self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value):
        import oneflow
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        W, D, L = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        # x^T S^-1 x = x^T D^-1 x - |L^-1 W^T D^-1 x|^2
        shape = tuple(diff.shape[:-1])
        wtdx = (W.transpose(-1, -2) @ (diff / D).unsqueeze(-1))
        Lb = L.expand(shape + tuple(L.shape[-2:]))
        y = oneflow.linalg.solve_triangular(Lb, wtdx.expand(shape + tuple(wtdx.shape[-2:])), upper=False)
        m = (diff.pow(2) / D).sum(-1) - y.squeeze(-1).pow(2).sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m + self._log_det())

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h if len(self._batch_shape) == 0 else h.expand(*self._batch_shape)
