"""The reparameterised gamma sampler (`_standard_gamma`, `_standard_gamma_grad`) and the families
built on it (Gamma, Chi2, Beta, Dirichlet, StudentT, FisherSnedecor, InverseGamma, Wishart):
draws against the moments, the derivative against finite differences of the regularised
incomplete gamma function and against PyTorch's approximation, and pathwise gradients of
Monte-Carlo means against the analytic derivatives of the true means."""

import math

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.distributions as D

ALPHAS = np.array([0.01, 0.1, 0.5, 1.0, 2.5, 10.0, 100.0, 1000.0])


def _draws(per=40):
    torch.manual_seed(0)
    a = np.repeat(ALPHAS, per)
    return a, torch._standard_gamma(torch.tensor(a)).numpy()


def test_standard_gamma_grad_is_the_implicit_derivative():
    """P(a, x(a)) = u fixed: dx/da = -(dP/da) / p(x; a) = (dQ/da) / p. The derivative by central
    differences of the smaller tail (special.gammainc or gammaincc, float64) agrees to the
    differences' own error, also far in the upper tail where PyTorch's approximation is 0.3% off."""
    a, x = _draws()
    a = np.concatenate([a, [0.75595382, 0.75595382, 3.0]])
    x = np.concatenate([x, [25.54229739, 23.3198654, 1e-3]])
    got = flow._standard_gamma_grad(flow.tensor(a), flow.tensor(x)).numpy()
    h = 1e-5 * np.maximum(a, 1e-2)
    P = lambda al: flow.special.gammainc(flow.tensor(al), flow.tensor(x)).numpy()  # noqa: E731
    Q = lambda al: flow.special.gammaincc(flow.tensor(al), flow.tensor(x)).numpy()  # noqa: E731
    upper = P(a) > 0.5
    dQ = np.where(upper, Q(a + h) - Q(a - h), P(a - h) - P(a + h)) / (2 * h)
    log_p = (a - 1) * np.log(x) - x - np.array([math.lgamma(v) for v in a])
    np.testing.assert_allclose(got, dQ / np.exp(log_p), rtol=1e-6)


def test_standard_gamma_grad_against_torch():
    """PyTorch's derivative is an approximation (a series, an asymptotic form and a fitted
    rational function): within 1e-3 of ours at typical draws (ours is exact to float64 rounding)."""
    a, x = _draws()
    for dt in (np.float64, np.float32):
        got = flow._standard_gamma_grad(flow.tensor(a.astype(dt)), flow.tensor(x.astype(dt))).numpy()
        want = torch._standard_gamma_grad(torch.tensor(a.astype(dt)), torch.tensor(x.astype(dt))).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-3)
    edge = flow._standard_gamma_grad(flow.tensor([1.0, 2.0, -1.0, float("nan")]), flow.tensor([0.0, 1.0, 1.0, 1.0]))
    assert edge[0].item() == 0 and edge[1].item() > 0 and np.isnan(edge[2:].numpy()).all()


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64])
def test_standard_gamma_draws(dtype):
    alpha = flow.tensor([0.05, 0.7, 1.0, 3.0, 40.0], dtype=dtype)
    flow.manual_seed(1)
    x = flow._standard_gamma(alpha.expand(20000, 5).contiguous())
    assert x.dtype == dtype and bool((x > 0).all())
    a = alpha.double().numpy()
    se = np.sqrt(a / 20000)
    assert (np.abs(x.double().mean(0).numpy() - a) < 5 * se).all()  # mean alpha
    np.testing.assert_allclose(x.double().var(0).numpy(), a, rtol=0.1)  # variance alpha
    # one Philox stream per element: the same seed gives the same draws, a generator too
    flow.manual_seed(1)
    np.testing.assert_array_equal(flow._standard_gamma(alpha.expand(20000, 5).contiguous()).numpy(), x.numpy())
    g = flow.Generator()
    g.manual_seed(5)
    y = flow._standard_gamma(alpha, generator=g)
    g.manual_seed(5)
    np.testing.assert_array_equal(flow._standard_gamma(alpha, generator=g).numpy(), y.numpy())
    assert flow._standard_gamma(flow.tensor([0.0])).item() == 0.0
    assert np.isnan(flow._standard_gamma(flow.tensor([-1.0, float("nan")])).numpy()).all()
    with pytest.raises(RuntimeError, match="floating point"):
        flow._standard_gamma(flow.tensor([1, 2]))


def test_tiny_concentration_stays_positive():
    x = flow._standard_gamma(flow.full((1000,), 1e-3))
    assert bool((x > 0).all()) and x.min().item() >= np.finfo(np.float32).tiny


def _grad_of_mean(make, params, n=40000, seed=0):
    """d/dparams of the Monte-Carlo mean of the samples (summed over the batch)."""
    flow.manual_seed(seed)
    leaves = [flow.tensor(p, dtype=flow.float64, requires_grad=True) for p in params]
    make(*leaves).rsample((n,)).mean(0).sum().backward()
    return [t.grad.numpy() for t in leaves]


def test_pathwise_gradients_of_the_means():
    """E[x] of each family is known in closed form: the mean of reparameterised draws has the
    derivative of the true mean, up to Monte-Carlo error."""
    a, b = np.array([0.5, 2.0, 7.0]), np.array([1.5, 0.5, 3.0])
    ga, gb = _grad_of_mean(D.Gamma, [a, b])  # E = a / b
    np.testing.assert_allclose(ga, 1 / b, rtol=0.05)
    np.testing.assert_allclose(gb, -a / b ** 2, rtol=0.05)
    (gdf,) = _grad_of_mean(D.Chi2, [np.array([1.0, 4.0])])  # E = df
    np.testing.assert_allclose(gdf, 1.0, rtol=0.05)
    ga, gb = _grad_of_mean(D.Beta, [a, b])  # E = a / (a + b)
    np.testing.assert_allclose(ga, b / (a + b) ** 2, rtol=0.06)
    np.testing.assert_allclose(gb, -a / (a + b) ** 2, rtol=0.06)
    (gd2,) = _grad_of_mean(lambda d2: D.FisherSnedecor(flow.tensor([5.0], dtype=flow.float64), d2),
                           [np.array([9.0])])  # E = d2 / (d2 - 2)
    np.testing.assert_allclose(gd2, -2 / 7 ** 2, rtol=0.15)
    ga, gb = _grad_of_mean(D.InverseGamma, [np.array([4.0]), np.array([2.0])])  # E = b / (a - 1)
    np.testing.assert_allclose(ga, -2.0 / 9.0, rtol=0.08)
    np.testing.assert_allclose(gb, 1.0 / 3.0, rtol=0.05)


def test_dirichlet_and_student_t_gradients():
    c = np.array([0.7, 2.0, 4.0])
    flow.manual_seed(2)
    conc = flow.tensor(c, requires_grad=True)
    x = D.Dirichlet(conc).rsample((40000,))
    assert np.allclose(x.sum(-1).detach().numpy(), 1.0)
    x.mean(0)[0].backward()  # E[x_0] = c_0 / sum(c)
    s = c.sum()
    want = -c[0] / s ** 2 * np.ones(3)
    want[0] += 1 / s
    np.testing.assert_allclose(conc.grad.numpy(), want, rtol=0.1, atol=2e-3)
    # StudentT: E[x^2] = scale^2 df / (df - 2); d/d df = -2 scale^2 / (df - 2)^2
    flow.manual_seed(4)
    df = flow.tensor([8.0], dtype=flow.float64, requires_grad=True)
    (D.StudentT(df, 0.0, 1.5).rsample((200000,)) ** 2).mean().backward()
    np.testing.assert_allclose(df.grad.numpy(), -2 * 2.25 / 36, rtol=0.15)


def test_has_rsample_matches_torch():
    import torch.distributions as TD

    for name in ("Gamma", "Chi2", "Beta", "Dirichlet", "StudentT", "FisherSnedecor", "Wishart"):
        assert getattr(D, name).has_rsample is getattr(TD, name).has_rsample is True
    f = D.InverseGamma(flow.tensor(2.0), flow.tensor(1.0))
    assert f.has_rsample
    # sample() stays gradient-free
    assert not D.Gamma(flow.tensor(2.0, requires_grad=True), flow.tensor(1.0)).sample((3,)).requires_grad
