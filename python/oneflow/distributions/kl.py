"""kl_divergence(p, q) and register_kl (as torch.distributions.kl): closed forms looked up by
the pair of distribution types (the most specific registered pair of base classes).

The pairs are those torch.distributions.kl registers: within-family pairs, cross-family pairs
among the scalar families (each written as -H(p) - E_p[log q(x)] with the moments of p that
log q needs), the pairs whose support of p is not inside that of q (infinite), the Gaussian pairs
with LowRankMultivariateNormal, ExponentialFamily (Bregman divergence of the log-normaliser) and
TransformedDistribution with equal transforms."""

import math

from .. import _oneflow_internal as _C
from .._grad_mode import enable_grad
from .bernoulli import Bernoulli, ContinuousBernoulli
from .binomial_family import Binomial
from .categorical import Categorical
from .continuous import Cauchy, Exponential, Gumbel, HalfNormal, Laplace, LogNormal
from .discrete import Geometric, OneHotCategorical, Poisson
from .exp_family import ExponentialFamily
from .gamma_family import Beta, Dirichlet, Gamma
from .independent import Independent, _sum_rightmost
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal, _batch_mahalanobis, _solve_lower
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transformed_families import Pareto
from .uniform import Uniform
from .utils import softplus

_KL = {}


def register_kl(type_p, type_q):
    """Decorator registering fn(p, q) as the KL divergence of a (type_p, type_q) pair."""
    def decorator(fn):
        _KL[type_p, type_q] = fn
        return fn
    return decorator


def _lookup(tp, tq):
    matches = [(p, q) for (p, q) in _KL if issubclass(tp, p) and issubclass(tq, q)]
    if not matches:
        return None
    best = min(matches, key=lambda pq: (tp.__mro__.index(pq[0]), tq.__mro__.index(pq[1])))
    return _KL[best]


def kl_divergence(p, q):
    """KL(p || q) batched over the distributions' batch shape."""
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}")
    return fn(p, q)


def _inf_where(value, mask):
    return _C.where(mask, _C.full_like(value, math.inf), value)


def _zero_where(value, mask):
    return _C.where(mask, _C.zeros_like(value), value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _zero_where(_inf_where(t1, q.probs == 0), p.probs == 0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _zero_where(_inf_where(t2, q.probs == 1), p.probs == 1)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _inf_where(t, (q.probs == 0).expand(tuple(t.shape)))
    t = _zero_where(t, (p.probs == 0).expand(tuple(t.shape)))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where(result, (q.low > p.low) | (q.high < p.high))


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different reinterpreted_batch_ndims")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = Lq.diagonal(0, -2, -1).log().sum(-1) - Lp.diagonal(0, -2, -1).log().sum(-1)
    import oneflow
    shape = oneflow.broadcast_shapes(tuple(Lq.shape[:-2]), tuple(Lp.shape[:-2]))
    n = p.event_shape[0]
    term2 = _solve_lower(Lq.expand(tuple(shape) + (n, n)), Lp.expand(tuple(shape) + (n, n))).pow(2) \
        .reshape(tuple(shape) + (-1,)).sum(-1)
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


_EULER = 0.57721566490153286061


_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _erf(x):
    import oneflow
    return oneflow.erf(x)


def _inf_like(value):
    return _C.full_like(value, math.inf)


def _xlogx(x):
    """x log x with 0 log 0 = 0."""
    zero = x == 0
    safe = _C.where(zero, _C.ones_like(x), x)
    return _C.where(zero, _C.zeros_like(x), safe * safe.log())


# ---------------------------------------------------------------- E_p[log q(x)] of the targets
def _ce_normal(mean, var, q):
    """-E[log N(x; q)] from the mean and variance of p."""
    return q.scale.log() + _HALF_LOG_2PI + (var + (mean - q.loc).pow(2)) / (2 * q.scale.pow(2))


def _ce_exponential(mean, q):
    return -q.rate.log() + q.rate * mean


def _ce_gamma(mean, mean_log, q):
    a, b = q.concentration, q.rate
    return -(a * b.log() - a.lgamma() + (a - 1) * mean_log - b * mean)


def _ce_gumbel(mean, mean_exp_neg, q):
    """-E[log Gumbel(x; q)] from E[x] and E[exp(-(x - loc) / scale)]."""
    return q.scale.log() + (mean - q.loc) / q.scale + mean_exp_neg


def _ce_continuous_bernoulli(mean, q):
    return -(mean * q.logits + (-q.probs).log1p() + q._log_norm())


def _beta_mean_log(p):
    a, b = p.concentration1, p.concentration0
    total = (a + b).digamma()
    return a.digamma() - total, b.digamma() - total


def _gamma_exp_neg(p, t):
    """E[exp(-t x)] for x ~ Gamma(concentration, rate)."""
    return (p.rate / (p.rate + t)).pow(p.concentration)


def _infinity(p, q):
    return _inf_like(p.mean)


# ---------------------------------------------------------------- within-family pairs
@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    kl = p.total_count * (t1 + t2)
    return _inf_where(kl, (p.total_count > q.total_count).expand(tuple(kl.shape)))


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    # E_p[k] = (1 - p) / p failures before the first success
    return -p.entropy() - (-q.probs).log1p() * (1 / p.probs - 1) - q.probs.log()


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log() - (4 * p.scale * q.scale).log()


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    ratio = q.alpha / p.alpha
    result = -ratio.log() + q.alpha * (p.scale / q.scale).log() + ratio - 1
    return _inf_where(result, p.scale < q.scale)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._log_norm() + (-p.probs).log1p()
    t3 = q._log_norm() + (-q.probs).log1p()
    return t1 + t2 - t3


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """Bregman divergence of the log-normaliser F: F(eta_q) - F(eta_p) - <eta_q - eta_p, grad F(eta_p)>."""
    import oneflow
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    p_params = [t.detach().requires_grad_() for t in p._natural_params]
    q_params = q._natural_params
    with enable_grad():
        log_norm_p = p._log_normalizer(*p_params)
        grads = oneflow.autograd.grad(log_norm_p.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - log_norm_p
    for pp, qp, g in zip(p_params, q_params, grads):
        term = (qp - pp) * g
        n = len(q.event_shape)
        if n:
            term = term.reshape(tuple(term.shape[:term.dim() - n]) + (-1,)).sum(-1)
        result = result - term
    return result


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different transforms")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions with different event shapes")
    return kl_divergence(p.base_dist, q.base_dist)


# ---------------------------------------------------------------- Gaussian vectors
def _as_mvn(d):
    if isinstance(d, MultivariateNormal):
        return d
    return MultivariateNormal(d.loc, scale_tril=d.scale_tril, validate_args=False)


def _kl_gaussian_vectors(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with different event shapes "
                         "cannot be computed")
    return _kl_mvn_mvn(_as_mvn(p), _as_mvn(q))


register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)(_kl_gaussian_vectors)


register_kl(LowRankMultivariateNormal, MultivariateNormal)(_kl_gaussian_vectors)


register_kl(MultivariateNormal, LowRankMultivariateNormal)(_kl_gaussian_vectors)


# ---------------------------------------------------------------- discrete cross pairs
@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


register_kl(Poisson, Bernoulli)(_infinity)


register_kl(Poisson, Binomial)(_infinity)


# ---------------------------------------------------------------- continuous cross pairs
# p's support is not inside q's: KL = inf
for _p, _qs in ((Beta, (Pareto,)), (ContinuousBernoulli, (Pareto,)),
                (Exponential, (Beta, ContinuousBernoulli, Pareto, Uniform)),
                (Gamma, (Beta, ContinuousBernoulli, Pareto, Uniform)),
                (Gumbel, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Laplace, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Normal, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Pareto, (Beta, ContinuousBernoulli, Uniform))):
    for _q in _qs:
        register_kl(_p, _q)(_infinity)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _ce_continuous_bernoulli(p.mean, q)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() + _ce_exponential(p.mean, q)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    return -p.entropy() + _ce_gamma(p.mean, _beta_mean_log(p)[0], q)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return -p.entropy() + _ce_normal(p.mean, p.variance, q)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where(result, (q.low > 0) | (q.high < 1))


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() + _ce_exponential(p.mean, q)


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    return -p.entropy() + _ce_normal(p.mean, p.variance, q)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where(result, (q.low > 0) | (q.high < 1))


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    # E[log x] = -gamma_E - log(rate)
    return -p.entropy() + _ce_gamma(1 / p.rate, -_EULER - p.rate.log(), q)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    # E[exp(-(x - loc) / scale)] = exp(loc / scale) rate / (rate + 1 / scale)
    t = 1 / q.scale
    return -p.entropy() + _ce_gumbel(1 / p.rate, (q.loc * t).exp() * p.rate / (p.rate + t), q)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return -p.entropy() + _ce_normal(1 / p.rate, p.rate.pow(-2), q)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() + _ce_exponential(p.concentration / p.rate, q)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    t = 1 / q.scale
    return -p.entropy() + _ce_gumbel(p.concentration / p.rate, (q.loc * t).exp() * _gamma_exp_neg(p, t), q)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    return -p.entropy() + _ce_normal(p.concentration / p.rate, p.concentration / p.rate.pow(2), q)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    # x = loc_p + scale_p g with g standard Gumbel: E[exp(-t g)] = Gamma(1 + t)
    ratio = p.scale / q.scale
    mean_exp = ((q.loc - p.loc) / q.scale + (1 + ratio).lgamma()).exp()
    return -p.entropy() + _ce_gumbel(p.loc + p.scale * _EULER, mean_exp, q)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    return -p.entropy() + _ce_normal(p.loc + p.scale * _EULER, (math.pi * p.scale).pow(2) / 6, q)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return -p.entropy() + _ce_normal(p.loc, 2 * p.scale.pow(2), q)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_exp = ((q.loc - p.loc) / q.scale + (p.scale / q.scale).pow(2) / 2).exp()
    return -p.entropy() + _ce_gumbel(p.loc, mean_exp, q)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|x - loc_q| for x ~ N(loc_p, scale_p): the folded normal's mean
    d = p.loc - q.loc
    mean_abs = p.scale * math.sqrt(2 / math.pi) * (-(d / p.scale).pow(2) / 2).exp() + \
        d * _erf(d / (p.scale * math.sqrt(2)))
    return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    result = -p.entropy() + _ce_exponential(p.mean, q)
    return _inf_where(result, p.alpha <= 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    # E[log x] = log(scale) + 1 / alpha
    result = -p.entropy() + _ce_gamma(p.mean, p.scale.log() + 1 / p.alpha, q)
    return _inf_where(result, p.alpha <= 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    result = -p.entropy() + _ce_normal(p.mean, p.variance, q)
    return _inf_where(result, p.alpha <= 2)


# Uniform(a, b) as p: E[log x] = (b log b - a log a) / (b - a) - 1 on x >= 0
def _uniform_mean_log(a, b):
    return (_xlogx(b) - _xlogx(a)) / (b - a) - 1


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    mean_log = _uniform_mean_log(p.low, p.high)
    mean_log1m = _uniform_mean_log(1 - p.high, 1 - p.low)
    a, b = q.concentration1, q.concentration0
    log_beta = a.lgamma() + b.lgamma() - (a + b).lgamma()
    result = -p.entropy() - ((a - 1) * mean_log + (b - 1) * mean_log1m - log_beta)
    return _inf_where(result, (p.high > 1) | (p.low < 0))


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() + _ce_continuous_bernoulli(p.mean, q)
    return _inf_where(result, (p.high > 1) | (p.low < 0))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() + _ce_exponential(p.mean, q)
    return _inf_where(result, p.low < 0)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    result = -p.entropy() + _ce_gamma(p.mean, _uniform_mean_log(p.low, p.high), q)
    return _inf_where(result, p.low < 0)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    width = p.high - p.low
    mean_exp = q.scale / width * (((q.loc - p.low) / q.scale).exp() - ((q.loc - p.high) / q.scale).exp())
    return -p.entropy() + _ce_gumbel(p.mean, mean_exp, q)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    return -p.entropy() + _ce_normal(p.mean, p.variance, q)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    # log q(x) = log alpha + alpha log scale - (alpha + 1) log x
    mean_log = _uniform_mean_log(p.low, p.high)
    result = -p.entropy() - (q.alpha.log() + q.alpha * q.scale.log() - (q.alpha + 1) * mean_log)
    return _inf_where(result, p.low < q.scale)
