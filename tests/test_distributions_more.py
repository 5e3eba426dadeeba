"""The distributions added after Normal / Bernoulli / Uniform / Categorical, against
torch.distributions: log_prob, cdf / icdf, entropy and moments on the same parameters, sample
shapes and sample moments, reparameterised gradients, validation errors, and kl_divergence for
every registered pair."""


import numpy as np
import pytest
import torch

from dist_util import close as _close, f64 as _t
from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow.distributions")
RNG = np.random.default_rng(0)
FD, TD = flow.distributions, torch.distributions


LOC = RNG.standard_normal((2, 3))
SCALE = RNG.uniform(0.5, 2.0, (2, 3))
RATE = RNG.uniform(0.5, 3.0, (2, 3))
PROBS = RNG.uniform(0.1, 0.9, (2, 3))

CASES = {
    "Exponential": (lambda L: (_t(L, RATE),), RNG.uniform(0.01, 3, (4, 2, 3)), True),
    "Laplace": (lambda L: (_t(L, LOC), _t(L, SCALE)), RNG.standard_normal((4, 2, 3)), True),
    "LogNormal": (lambda L: (_t(L, LOC), _t(L, SCALE)), RNG.uniform(0.05, 4, (4, 2, 3)), False),
    "Gumbel": (lambda L: (_t(L, LOC), _t(L, SCALE)), RNG.standard_normal((4, 2, 3)), False),
    "Cauchy": (lambda L: (_t(L, LOC), _t(L, SCALE)), RNG.standard_normal((4, 2, 3)), True),
    "HalfNormal": (lambda L: (_t(L, SCALE),), RNG.uniform(0.0, 3, (4, 2, 3)), True),
    "Poisson": (lambda L: (_t(L, RATE),), RNG.integers(0, 6, (4, 2, 3)).astype(np.float64), False),
    "Geometric": (lambda L: (_t(L, PROBS),), RNG.integers(0, 6, (4, 2, 3)).astype(np.float64), False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_scalar_families_against_torch(name):
    params, values, has_icdf = CASES[name]
    f, t = getattr(FD, name)(*params(flow)), getattr(TD, name)(*params(torch))
    assert tuple(f.batch_shape) == tuple(t.batch_shape) and tuple(f.event_shape) == tuple(t.event_shape)
    fv, tv = _t(flow, values), _t(torch, values)
    _close(f.log_prob(fv), t.log_prob(tv))
    for attr in ("mean", "mode", "variance", "stddev"):
        _close(getattr(f, attr), getattr(t, attr))
    if name not in ("Poisson",):
        _close(f.entropy(), t.entropy())
    if name not in ("Poisson", "Geometric"):
        _close(f.cdf(fv), t.cdf(tv))
    if has_icdf:
        q = _t(flow, RNG.uniform(0.05, 0.95, (2, 3)))
        _close(f.icdf(q), t.icdf(_t(torch, q.numpy())))
    flow.manual_seed(0)
    s = f.sample((4000,))
    assert tuple(s.shape) == (4000, 2, 3)
    if name not in ("Cauchy",):  # heavy tails: no moments
        np.testing.assert_allclose(s.mean(0).numpy(), t.mean.numpy(), rtol=0.15, atol=0.15)
    e = f.expand((5, 2, 3))
    assert tuple(e.batch_shape) == (5, 2, 3) and tuple(e.sample().shape) == (5, 2, 3)


@pytest.mark.parametrize("name", ["Exponential", "Laplace", "LogNormal", "Gumbel", "HalfNormal", "Cauchy"])
def test_rsample_is_differentiable(name):
    params = [p.requires_grad_() for p in CASES[name][0](flow)]
    d = getattr(FD, name)(*params)
    d.rsample((3,)).sum().backward()
    assert all(p.grad is not None and bool(p.grad.isfinite().all()) for p in params)


def test_validation_errors():
    with pytest.raises(ValueError):
        FD.Exponential(flow.tensor([-1.0]))
    with pytest.raises(ValueError):
        FD.Laplace(flow.tensor([0.0]), flow.tensor([0.0]))
    with pytest.raises(ValueError):
        FD.Geometric()
    with pytest.raises(ValueError):
        FD.MultivariateNormal(flow.zeros(2), flow.tensor([[1.0, 2.0], [2.0, 1.0]]))  # not positive definite
    with pytest.raises(ValueError):
        FD.MultivariateNormal(flow.zeros(2))


def test_onehot_and_independent():
    probs = RNG.dirichlet(np.ones(4), size=3)
    f, t = FD.OneHotCategorical(_t(flow, probs)), TD.OneHotCategorical(_t(torch, probs))
    v = np.eye(4)[RNG.integers(0, 4, (5, 3))]
    _close(f.log_prob(_t(flow, v)), t.log_prob(_t(torch, v)))
    _close(f.entropy(), t.entropy())
    _close(f.mean, t.mean), _close(f.variance, t.variance), _close(f.mode, t.mode)
    s = f.sample((7,))
    assert tuple(s.shape) == (7, 3, 4) and bool((s.sum(-1) == 1).all())
    _close(f.enumerate_support(), t.enumerate_support())
    base_f = FD.Normal(_t(flow, LOC), _t(flow, SCALE))
    base_t = TD.Normal(_t(torch, LOC), _t(torch, SCALE))
    fi, ti = FD.Independent(base_f, 1), TD.Independent(base_t, 1)
    assert tuple(fi.batch_shape) == (2,) and tuple(fi.event_shape) == (3,)
    x = RNG.standard_normal((5, 2, 3))
    _close(fi.log_prob(_t(flow, x)), ti.log_prob(_t(torch, x)))
    _close(fi.entropy(), ti.entropy())


def _spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("form", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal(form):
    cov = _spd(3, (2,))
    arg = {"covariance_matrix": cov, "precision_matrix": np.linalg.inv(cov),
           "scale_tril": np.linalg.cholesky(cov)}[form]
    loc = RNG.standard_normal((2, 3))
    f = FD.MultivariateNormal(_t(flow, loc), **{form: _t(flow, arg)})
    t = TD.MultivariateNormal(_t(torch, loc), **{form: _t(torch, arg)})
    x = RNG.standard_normal((5, 2, 3))
    _close(f.log_prob(_t(flow, x)), t.log_prob(_t(torch, x)))
    _close(f.entropy(), t.entropy())
    _close(f.variance, t.variance)
    _close(f.covariance_matrix, t.covariance_matrix)
    _close(f.scale_tril, t.scale_tril)
    flow.manual_seed(0)
    s = f.rsample((20000,))
    np.testing.assert_allclose(np.cov(s.numpy()[:, 0].T), cov[0], rtol=0.1, atol=0.15)


C1, C2 = RNG.dirichlet(np.ones(4), 2), RNG.dirichlet(np.ones(4), 2)
COV1, COV2 = _spd(3, (2,)), _spd(3, (2,))


def _pairs(L):
    D = L.distributions
    p1, p2 = _t(L, PROBS), _t(L, PROBS[::-1].copy())
    c1, c2 = _t(L, C1), _t(L, C2)
    cov1, cov2 = COV1, COV2
    return [
        (D.Normal(_t(L, LOC), _t(L, SCALE)), D.Normal(_t(L, LOC[::-1].copy()), _t(L, RATE))),
        (D.Bernoulli(p1), D.Bernoulli(p2)),
        (D.Categorical(c1), D.Categorical(c2)),
        (D.OneHotCategorical(c1), D.OneHotCategorical(c2)),
        (D.Uniform(_t(L, -SCALE), _t(L, SCALE)), D.Uniform(_t(L, -RATE - 2), _t(L, RATE + 2))),
        (D.Uniform(_t(L, -SCALE), _t(L, SCALE)), D.Uniform(_t(L, -SCALE / 2), _t(L, SCALE))),  # inf
        (D.Exponential(_t(L, RATE)), D.Exponential(_t(L, SCALE))),
        (D.Laplace(_t(L, LOC), _t(L, SCALE)), D.Laplace(_t(L, -LOC), _t(L, RATE))),
        (D.LogNormal(_t(L, LOC), _t(L, SCALE)), D.LogNormal(_t(L, -LOC), _t(L, RATE))),
        (D.Poisson(_t(L, RATE)), D.Poisson(_t(L, SCALE))),
        (D.Independent(D.Normal(_t(L, LOC), _t(L, SCALE)), 1), D.Independent(D.Normal(_t(L, -LOC), _t(L, RATE)), 1)),
        (D.MultivariateNormal(_t(L, LOC), _t(L, cov1)), D.MultivariateNormal(_t(L, -LOC), scale_tril=_t(L, np.linalg.cholesky(cov2)))),
    ]


def test_kl_divergence_pairs():
    for (fp, fq), (tp, tq) in zip(_pairs(flow), _pairs(torch)):
        _close(FD.kl_divergence(fp, fq), TD.kl_divergence(tp, tq), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        FD.kl_divergence(FD.Normal(0.0, 1.0), FD.Cauchy(flow.tensor(0.0), flow.tensor(1.0)))
    # Normal || Exponential is registered (as in torch): p's support is not inside q's, so KL = inf
    assert float(FD.kl_divergence(FD.Normal(0.0, 1.0), FD.Exponential(flow.tensor(1.0)))) == float("inf")

    class MyNormal(FD.Normal):
        pass

    @FD.register_kl(MyNormal, MyNormal)
    def _kl(p, q):
        return flow.tensor(123.0)

    assert float(FD.kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 1.0))) == 123.0
    assert float(FD.kl_divergence(MyNormal(0.0, 1.0), FD.Normal(0.0, 1.0))) == 0.0  # the base pair


CONC = RNG.uniform(0.3, 4.0, (2, 3))


@pytest.mark.parametrize("name", ["Gamma", "Chi2", "StudentT", "Beta"])
def test_gamma_family_against_torch(name):
    params = {"Gamma": lambda L: (_t(L, CONC), _t(L, RATE)), "Chi2": lambda L: (_t(L, CONC * 2),),
              "StudentT": lambda L: (_t(L, CONC + 2.5), _t(L, LOC), _t(L, SCALE)),
              "Beta": lambda L: (_t(L, CONC), _t(L, RATE))}[name]
    values = {"Gamma": RNG.uniform(0.05, 4, (4, 2, 3)), "Chi2": RNG.uniform(0.05, 6, (4, 2, 3)),
              "StudentT": RNG.standard_normal((4, 2, 3)), "Beta": RNG.uniform(0.02, 0.98, (4, 2, 3))}[name]
    f, t = getattr(FD, name)(*params(flow)), getattr(TD, name)(*params(torch))
    _close(f.log_prob(_t(flow, values)), t.log_prob(_t(torch, values)), rtol=1e-9)
    _close(f.entropy(), t.entropy(), rtol=1e-9)
    for attr in ("mean", "variance") + (("mode",) if name != "Beta" else ()):
        _close(getattr(f, attr), getattr(t, attr), rtol=1e-9)
    if name in ("Gamma", "Chi2"):
        _close(f.cdf(_t(flow, values)), t.cdf(_t(torch, values)), rtol=1e-8)
    flow.manual_seed(0)
    s = f.sample((20000,))
    assert tuple(s.shape) == (20000, 2, 3) and f.has_rsample == t.has_rsample and not s.requires_grad
    np.testing.assert_allclose(s.mean(0).numpy(), t.mean.numpy(), rtol=0.06, atol=0.03)
    if name != "StudentT":  # its variance converges slowly (heavy tails)
        np.testing.assert_allclose(s.var(0).numpy(), t.variance.numpy(), rtol=0.15, atol=0.02)


def test_dirichlet_and_gamma_kl():
    c1, c2 = RNG.uniform(0.5, 3, (2, 4)), RNG.uniform(0.5, 3, (2, 4))
    f, t = FD.Dirichlet(_t(flow, c1)), TD.Dirichlet(_t(torch, c1))
    v = RNG.dirichlet(np.ones(4), (5, 2))
    _close(f.log_prob(_t(flow, v)), t.log_prob(_t(torch, v)), rtol=1e-9)
    _close(f.entropy(), t.entropy(), rtol=1e-9)
    _close(f.mean, t.mean), _close(f.variance, t.variance), _close(f.mode, t.mode)
    flow.manual_seed(1)
    s = f.sample((10000,))
    np.testing.assert_allclose(s.sum(-1).numpy(), 1.0, rtol=1e-6)
    np.testing.assert_allclose(s.mean(0).numpy(), t.mean.numpy(), rtol=0.05, atol=0.01)
    for (fp, fq, tp, tq) in (
            (FD.Dirichlet(_t(flow, c1)), FD.Dirichlet(_t(flow, c2)), TD.Dirichlet(_t(torch, c1)), TD.Dirichlet(_t(torch, c2))),
            (FD.Gamma(_t(flow, CONC), _t(flow, RATE)), FD.Gamma(_t(flow, RATE), _t(flow, CONC)),
             TD.Gamma(_t(torch, CONC), _t(torch, RATE)), TD.Gamma(_t(torch, RATE), _t(torch, CONC))),
            (FD.Beta(_t(flow, CONC), _t(flow, RATE)), FD.Beta(_t(flow, RATE), _t(flow, CONC)),
             TD.Beta(_t(torch, CONC), _t(torch, RATE)), TD.Beta(_t(torch, RATE), _t(torch, CONC)))):
        _close(FD.kl_divergence(fp, fq), TD.kl_divergence(tp, tq), rtol=1e-9)
    with pytest.raises(ValueError):
        FD.Gamma(flow.tensor([-1.0]), flow.tensor([1.0]))
