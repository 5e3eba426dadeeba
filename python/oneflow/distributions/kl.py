"""kl_divergence(p, q) and register_kl (as torch.distributions.kl): closed forms looked up by
the pair of distribution types (the most specific registered pair of base classes)."""

import math

from .. import _oneflow_internal as _C
from .bernoulli import Bernoulli
from .categorical import Categorical
from .continuous import Exponential, Laplace, LogNormal
from .discrete import OneHotCategorical, Poisson
from .gamma_family import Beta, Dirichlet, Gamma
from .independent import Independent, _sum_rightmost
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _solve_lower
from .normal import Normal
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


from . import kl_more  # noqa: E402,F401  (registers the further pairs)
