"""KL divergences of kl.py beyond the within-family pairs (the cross pairs, ExponentialFamily, ...) against torch.distributions."""

import numpy as np
import pytest
import torch
import torch.distributions as TD

import oneflow as flow
import oneflow.distributions as FD
from oneflow.distributions.kl import _kl_expfamily_expfamily

# two parameter sets per family (role "p" and role "q"), 4 batch elements each
A = lambda *v: np.array(v, dtype=np.float64)  # noqa: E731
PARAMS = {
    "Normal": ({"loc": A(0.3, -1.2, 2.0, 0.5), "scale": A(0.7, 1.3, 0.4, 2.0)},
               {"loc": A(-0.4, 0.8, 1.5, -2.0), "scale": A(1.1, 0.6, 2.2, 0.9)}),
    "Laplace": ({"loc": A(0.2, -0.7, 1.0, 0.0), "scale": A(0.5, 1.5, 0.8, 2.5)},
                {"loc": A(-0.3, 0.4, 2.0, 1.0), "scale": A(1.0, 0.7, 1.9, 0.6)}),
    "Gumbel": ({"loc": A(0.1, -0.5, 1.5, 0.7), "scale": A(0.6, 1.2, 0.9, 2.0)},
               {"loc": A(-0.2, 0.3, 1.0, 1.5), "scale": A(1.3, 0.8, 1.5, 1.1)}),
    "Cauchy": ({"loc": A(0.1, -0.5, 1.5, 0.7), "scale": A(0.6, 1.2, 0.9, 2.0)},
               {"loc": A(-0.2, 0.3, 1.0, 1.5), "scale": A(1.3, 0.8, 1.5, 1.1)}),
    "HalfNormal": ({"scale": A(0.7, 1.3, 0.4, 2.0)}, {"scale": A(1.1, 0.6, 2.2, 0.9)}),
    "Exponential": ({"rate": A(0.5, 1.5, 2.0, 3.0)}, {"rate": A(1.2, 0.4, 2.5, 0.9)}),
    "Gamma": ({"concentration": A(0.8, 2.5, 3.0, 1.2), "rate": A(1.1, 0.6, 2.0, 3.0)},
              {"concentration": A(1.5, 0.9, 2.2, 4.0), "rate": A(0.7, 1.6, 1.0, 2.5)}),
    "Beta": ({"concentration1": A(0.7, 2.0, 3.5, 1.2), "concentration0": A(1.4, 0.9, 2.0, 4.0)},
             {"concentration1": A(1.5, 0.8, 2.5, 3.0), "concentration0": A(2.0, 1.7, 0.6, 1.1)}),
    "ContinuousBernoulli": ({"probs": A(0.2, 0.45, 0.7, 0.9)}, {"probs": A(0.6, 0.1, 0.35, 0.8)}),
    "Uniform": ({"low": A(0.1, 0.2, 0.05, 0.3), "high": A(0.6, 0.9, 0.5, 0.95)},
                {"low": A(-0.5, -1.0, -0.2, -2.0), "high": A(1.5, 2.0, 1.2, 3.0)}),
    "Pareto": ({"scale": A(0.05, 0.1, 0.02, 0.4), "alpha": A(2.5, 3.0, 1.5, 0.8)},
               {"scale": A(0.03, 0.2, 0.01, 0.1), "alpha": A(1.7, 2.2, 4.0, 1.1)}),
    "Bernoulli": ({"probs": A(0.2, 0.45, 0.7, 0.9)}, {"probs": A(0.6, 0.1, 0.35, 0.8)}),
    "Poisson": ({"rate": A(0.5, 1.5, 2.0, 3.0)}, {"rate": A(1.2, 0.4, 2.5, 0.9)}),
    "Geometric": ({"probs": A(0.2, 0.45, 0.7, 0.9)}, {"probs": A(0.6, 0.1, 0.35, 0.8)}),
    "Binomial": ({"total_count": A(5, 5, 7, 7), "probs": A(0.2, 0.45, 0.7, 0.9)},
                 {"total_count": A(5, 5, 7, 7), "probs": A(0.6, 0.1, 0.35, 0.8)}),
}


def make(name, role, grad=False):
    params = PARAMS[name][0 if role == "p" else 1]
    f = {k: flow.tensor(v, dtype=flow.float64, requires_grad=grad and k != "total_count") for k, v in params.items()}
    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=grad and k != "total_count")
         for k, v in params.items()}
    return getattr(FD, name)(**f), getattr(TD, name)(**t), f, t


FINITE_PAIRS = [
    ("Binomial", "Binomial"), ("Geometric", "Geometric"), ("Cauchy", "Cauchy"), ("HalfNormal", "HalfNormal"),
    ("Pareto", "Pareto"), ("ContinuousBernoulli", "ContinuousBernoulli"), ("Bernoulli", "Poisson"),
    ("Beta", "ContinuousBernoulli"), ("Beta", "Exponential"), ("Beta", "Gamma"), ("Beta", "Normal"),
    ("Beta", "Uniform"), ("ContinuousBernoulli", "Exponential"), ("ContinuousBernoulli", "Normal"),
    ("ContinuousBernoulli", "Uniform"), ("Exponential", "Gamma"), ("Exponential", "Gumbel"),
    ("Exponential", "Normal"), ("Gamma", "Exponential"), ("Gamma", "Gumbel"), ("Gamma", "Normal"),
    ("Gumbel", "Gumbel"), ("Gumbel", "Normal"), ("Laplace", "Normal"), ("Normal", "Gumbel"), ("Normal", "Laplace"),
    ("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal"), ("Uniform", "Beta"),
    ("Uniform", "ContinuousBernoulli"), ("Uniform", "Exponential"), ("Uniform", "Gamma"), ("Uniform", "Gumbel"),
    ("Uniform", "Normal"), ("Uniform", "Pareto"),
]

INFINITE_PAIRS = [("Poisson", "Bernoulli"), ("Poisson", "Binomial"), ("Beta", "Pareto"),
                  ("ContinuousBernoulli", "Pareto")]
INFINITE_PAIRS += [(p, q) for p in ("Exponential", "Gamma") for q in ("Beta", "ContinuousBernoulli", "Pareto",
                                                                      "Uniform")]
INFINITE_PAIRS += [(p, q) for p in ("Gumbel", "Laplace", "Normal")
                   for q in ("Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto", "Uniform")]
INFINITE_PAIRS += [("Pareto", q) for q in ("Beta", "ContinuousBernoulli", "Uniform")]


def _compare(fv, tv, rtol=1e-6):
    got = fv.numpy()
    want = tv.detach().numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("pair", FINITE_PAIRS, ids=lambda pq: f"{pq[0]}-{pq[1]}")
def test_kl_matches_torch(pair):
    fp, tp, _, _ = make(pair[0], "p")
    fq, tq, _, _ = make(pair[1], "q")
    want = TD.kl_divergence(tp, tq)
    _compare(FD.kl_divergence(fp, fq), want)
    assert np.isfinite(want.numpy()).any()


@pytest.mark.parametrize("pair", INFINITE_PAIRS, ids=lambda pq: f"{pq[0]}-{pq[1]}")
def test_kl_infinite(pair):
    fp, tp, _, _ = make(pair[0], "p")
    fq, tq, _, _ = make(pair[1], "q")
    got = FD.kl_divergence(fp, fq).numpy()
    assert got.shape == (4,) and np.isposinf(got).all()
    np.testing.assert_array_equal(got, TD.kl_divergence(tp, tq).numpy())


def test_partly_infinite_batches():
    # Pareto alpha <= 1 (Exponential, Gamma), <= 2 (Normal); Uniform below the Pareto scale; Pareto scale order
    for p, q, q_role, expect_inf in [("Pareto", "Exponential", "q", [3]), ("Pareto", "Normal", "q", [2, 3]),
                                     ("Uniform", "Pareto", "p", [3]), ("Pareto", "Pareto", "q", [1])]:
        fp, tp, _, _ = make(p, "p")
        fq, tq, _, _ = make(q, q_role)
        got = FD.kl_divergence(fp, fq).numpy()
        assert list(np.flatnonzero(np.isinf(got))) == expect_inf, (p, q)
        _compare(FD.kl_divergence(fp, fq), TD.kl_divergence(tp, tq))


def test_uniform_support_checks():
    fp, tp, _, _ = make("Uniform", "q")  # Uniform over [-0.5, 1.5], ...: outside [0, inf) and [0, 1]
    for q in ("Beta", "ContinuousBernoulli", "Exponential", "Gamma"):
        fq, tq, _, _ = make(q, "q")
        got = FD.kl_divergence(fp, fq).numpy()
        assert np.isposinf(got).all(), q
        np.testing.assert_array_equal(got, TD.kl_divergence(tp, tq).numpy())
    # Beta against a Uniform not covering [0, 1]
    fb, tb, _, _ = make("Beta", "p")
    fu = FD.Uniform(flow.tensor(A(0.0, 0.1, -1.0, 0.0)), flow.tensor(A(1.0, 2.0, 0.9, 2.0)))
    tu = TD.Uniform(torch.tensor(A(0.0, 0.1, -1.0, 0.0)), torch.tensor(A(1.0, 2.0, 0.9, 2.0)))
    got = FD.kl_divergence(fb, fu).numpy()
    assert list(np.isinf(got)) == [False, True, True, False]
    _compare(FD.kl_divergence(fb, fu), TD.kl_divergence(tb, tu))


def test_uniform_starting_at_zero_is_finite():
    fu = FD.Uniform(flow.tensor(A(0.0, 0.0)), flow.tensor(A(0.5, 1.0)))
    tu = TD.Uniform(torch.tensor(A(0.0, 0.0)), torch.tensor(A(0.5, 1.0)))
    for q in ("Gamma", "Exponential"):
        fq = getattr(FD, q)(**{k: flow.tensor(v[:2]) for k, v in PARAMS[q][1].items()})
        tq = getattr(TD, q)(**{k: torch.tensor(v[:2]) for k, v in PARAMS[q][1].items()})
        got = FD.kl_divergence(fu, fq).numpy()
        assert np.isfinite(got).all()
        want = TD.kl_divergence(tu, tq).numpy()
        if np.isfinite(want).all():
            np.testing.assert_allclose(got, want, rtol=1e-6)
        else:  # torch evaluates 0 log 0 as nan; the limit is 0, checked by a tiny positive low
            fe = FD.Uniform(flow.tensor(A(1e-300, 1e-300)), flow.tensor(A(0.5, 1.0)))
            np.testing.assert_allclose(got, FD.kl_divergence(fe, fq).numpy(), rtol=1e-9)


def test_binomial_total_counts():
    fp = FD.Binomial(flow.tensor(A(6, 5)), probs=flow.tensor(A(0.3, 0.4)))
    fq = FD.Binomial(flow.tensor(A(5, 5)), probs=flow.tensor(A(0.5, 0.2)))
    tp = TD.Binomial(torch.tensor(A(6, 5)), probs=torch.tensor(A(0.3, 0.4)))
    tq = TD.Binomial(torch.tensor(A(5, 5)), probs=torch.tensor(A(0.5, 0.2)))
    got = FD.kl_divergence(fp, fq).numpy()
    assert np.isposinf(got[0]) and np.isfinite(got[1])
    _compare(FD.kl_divergence(fp, fq), TD.kl_divergence(tp, tq))
    with pytest.raises(NotImplementedError):
        FD.kl_divergence(fq, fp)
    with pytest.raises(NotImplementedError):
        TD.kl_divergence(tq, tp)


def _lowrank(lib, seed, batch=(2,)):
    rng = np.random.RandomState(seed)
    loc, w, d = rng.randn(*batch, 3), rng.randn(*batch, 3, 2), rng.rand(*batch, 3) + 0.5
    tensor = (lambda v: flow.tensor(v, dtype=flow.float64)) if lib is FD else \
        (lambda v: torch.tensor(v, dtype=torch.float64))
    return lib.LowRankMultivariateNormal(tensor(loc), tensor(w), tensor(d))


def _mvn(lib, seed):
    rng = np.random.RandomState(seed)
    m = rng.randn(2, 3, 3)
    cov = m @ np.swapaxes(m, -1, -2) + 0.5 * np.eye(3)
    loc = rng.randn(2, 3)
    tensor = (lambda v: flow.tensor(v, dtype=flow.float64)) if lib is FD else \
        (lambda v: torch.tensor(v, dtype=torch.float64))
    return lib.MultivariateNormal(tensor(loc), covariance_matrix=tensor(cov))


def test_lowrank_and_mvn():
    for make_p, make_q in [(_lowrank, _lowrank), (_lowrank, _mvn), (_mvn, _lowrank)]:
        got = FD.kl_divergence(make_p(FD, 0), make_q(FD, 1))
        want = TD.kl_divergence(make_p(TD, 0), make_q(TD, 1))
        assert tuple(got.shape) == (2,)
        _compare(got, want)
    # broadcast: an unbatched LowRank against a batched MVN
    _compare(FD.kl_divergence(_lowrank(FD, 3, ()), _mvn(FD, 4)), TD.kl_divergence(_lowrank(TD, 3, ()), _mvn(TD, 4)))
    bad = FD.LowRankMultivariateNormal(flow.zeros(2, dtype=flow.float64), flow.ones(2, 1, dtype=flow.float64),
                                       flow.ones(2, dtype=flow.float64))
    with pytest.raises(ValueError):
        FD.kl_divergence(bad, _mvn(FD, 1))


def test_transformed_same_transforms():
    def dists(lib, loc, scale):
        T = flow if lib is FD else torch
        base = lib.Normal(T.tensor(loc, dtype=T.float64), T.tensor(scale, dtype=T.float64))
        return lib.TransformedDistribution(base, [lib.transforms.AffineTransform(1.5, 2.0),
                                                  lib.transforms.ExpTransform()])
    fp, fq = dists(FD, A(0.1, 0.5), A(1.0, 0.3)), dists(FD, A(-0.4, 0.2), A(0.7, 1.1))
    tp, tq = dists(TD, A(0.1, 0.5), A(1.0, 0.3)), dists(TD, A(-0.4, 0.2), A(0.7, 1.1))
    _compare(FD.kl_divergence(fp, fq), TD.kl_divergence(tp, tq))
    other = FD.TransformedDistribution(FD.Normal(flow.tensor(A(0.0, 0.0)), flow.tensor(A(1.0, 1.0))),
                                       [FD.transforms.ExpTransform()])
    with pytest.raises(NotImplementedError):
        FD.kl_divergence(fp, other)
    # Weibulls: equal parameters share transforms, so KL = KL of the Exponential(1) bases = 0
    w = FD.Weibull(flow.tensor(A(1.0, 2.0)), flow.tensor(A(0.5, 3.0)))
    w2 = FD.Weibull(flow.tensor(A(1.0, 2.0)), flow.tensor(A(0.5, 3.0)))
    np.testing.assert_allclose(FD.kl_divergence(w, w2).numpy(), [0.0, 0.0], atol=1e-12)
    with pytest.raises(NotImplementedError):
        FD.kl_divergence(w, FD.Weibull(flow.tensor(A(1.5, 2.0)), flow.tensor(A(0.5, 3.0))))


def test_expfamily_bregman():
    fp, tp, _, _ = make("ContinuousBernoulli", "p")
    fq, tq, _, _ = make("ContinuousBernoulli", "q")
    want = TD.kl.kl_divergence(tp, tq)
    _compare(_kl_expfamily_expfamily(fp, fq), want, rtol=1e-5)

    class Other(FD.ContinuousBernoulli):
        pass
    with pytest.raises(NotImplementedError):
        _kl_expfamily_expfamily(fp, Other(probs=flow.tensor(A(0.3, 0.3, 0.3, 0.3))))


@pytest.mark.parametrize("pair", [("Normal", "Gumbel"), ("Beta", "Gamma"), ("Gumbel", "Gumbel"),
                                  ("Normal", "Laplace"), ("Uniform", "Beta"), ("Gamma", "Normal"),
                                  ("ContinuousBernoulli", "ContinuousBernoulli"), ("Cauchy", "Cauchy")],
                         ids=lambda pq: f"{pq[0]}-{pq[1]}")
def test_kl_gradients(pair):
    fp, tp, fpp, tpp = make(pair[0], "p", grad=True)
    fq, tq, fqp, tqp = make(pair[1], "q", grad=True)
    FD.kl_divergence(fp, fq).sum().backward()
    TD.kl_divergence(tp, tq).sum().backward()
    checked = 0
    for fparams, tparams in ((fpp, tpp), (fqp, tqp)):
        for k in fparams:
            np.testing.assert_allclose(fparams[k].grad.numpy(), tparams[k].grad.numpy(), rtol=1e-6, atol=1e-10)
            checked += 1
    assert checked >= 2


def test_lowrank_gradients():
    rng = np.random.RandomState(5)
    vals = [rng.randn(3), rng.randn(3, 2), rng.rand(3) + 0.5]
    m = rng.randn(3, 3)
    cov = m @ m.T + np.eye(3)
    fv = [flow.tensor(v, dtype=flow.float64, requires_grad=True) for v in vals]
    tv = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in vals]
    FD.kl_divergence(FD.LowRankMultivariateNormal(*fv), FD.MultivariateNormal(flow.zeros(3, dtype=flow.float64),
                                                                              flow.tensor(cov))).backward()
    TD.kl_divergence(TD.LowRankMultivariateNormal(*tv), TD.MultivariateNormal(torch.zeros(3, dtype=torch.float64),
                                                                              torch.tensor(cov))).backward()
    for a, b in zip(fv, tv):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-10)


def test_unregistered_pair_raises():
    for fp, fq in [(FD.Cauchy(flow.tensor(0.0), flow.tensor(1.0)), FD.Normal(flow.tensor(0.0), flow.tensor(1.0))),
                   (FD.Weibull(flow.tensor(1.0), flow.tensor(2.0)), FD.Exponential(flow.tensor(1.0)))]:
        with pytest.raises(NotImplementedError):
            FD.kl_divergence(fp, fq)
    with pytest.raises(NotImplementedError):
        TD.kl_divergence(TD.Cauchy(torch.tensor(0.0), torch.tensor(1.0)), TD.Normal(torch.tensor(0.0),
                                                                                     torch.tensor(1.0)))


def test_registry_covers_torch_pairs():
    ours = {(p.__name__, q.__name__) for p, q in FD.kl._KL}
    theirs = {(p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY}
    assert theirs - ours == set()
