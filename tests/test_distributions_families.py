"""Binomial, Multinomial, NegativeBinomial, MixtureSameFamily, OneHotCategoricalStraightThrough,
ContinuousBernoulli, FisherSnedecor, VonMises, LowRankMultivariateNormal and ExponentialFamily
(oneflow.distributions: binomial_family, mixture, discrete) against torch.distributions: log_prob / cdf / moments /
entropy on fixed parameters, sample shapes and sample statistics, gradients of log_prob,
expand, and validation errors."""

import math

import numpy as np
import pytest
import torch

from dist_util import as_np as _np, close as _close, f64 as _t
from error_cases import raises_like_torch
from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow.distributions")

if not SHIM:
    import oneflow.distributions as M
TD = torch.distributions
RNG = np.random.default_rng(0)


def _pair(name, *args, **kw):
    """The same distribution in oneflow and torch from numpy parameters (numbers pass through)."""
    conv = lambda L, a: a if isinstance(a, (int, float)) else _t(L, a)  # noqa: E731
    f = getattr(M, name)(*[conv(flow, a) for a in args], **{k: conv(flow, v) for k, v in kw.items()})
    t = getattr(TD, name)(*[conv(torch, a) for a in args], **{k: conv(torch, v) for k, v in kw.items()})
    return f, t


def _same_shapes_and_flags(f, t):
    assert tuple(f.batch_shape) == tuple(t.batch_shape)
    assert tuple(f.event_shape) == tuple(t.event_shape)
    assert f.has_rsample == t.has_rsample
    assert f.has_enumerate_support == t.has_enumerate_support
    assert set(f.arg_constraints) == set(t.arg_constraints)
    assert f.support.is_discrete == t.support.is_discrete
    assert f.support.event_dim == t.support.event_dim


def _check_mean(samples, mean, var, n, k=6.0):
    """Sample mean within k standard errors of the mean (plus a little slack)."""
    se = np.sqrt(np.asarray(var) / n)
    assert np.all(np.abs(_np(samples).mean(0) - mean) <= k * se + 1e-9), (_np(samples).mean(0), mean)


PROBS = np.array([[0.2, 0.7, 0.5], [0.9, 0.1, 0.4]])
COUNT = np.full((2, 3), 5.0)
KVALS = np.array([[0, 2, 5], [3, 1, 4], [5, 5, 0]], dtype=np.float64)[:, None, :].repeat(2, 1)


@pytest.mark.parametrize("form", ["probs", "logits"])
def test_binomial(form):
    param = PROBS if form == "probs" else np.log(PROBS / (1 - PROBS))
    f, t = _pair("Binomial", COUNT, **{form: param})
    _same_shapes_and_flags(f, t)
    _close(f.log_prob(_t(flow, KVALS)), t.log_prob(_t(torch, KVALS)))
    for attr in ("mean", "variance", "mode", "stddev", "probs", "logits"):
        _close(getattr(f, attr), getattr(t, attr))
    _close(f.entropy(), t.entropy())
    _close(f.enumerate_support(), t.enumerate_support())
    _close(f.enumerate_support(False), t.enumerate_support(False))
    flow.manual_seed(0)
    s = f.sample((4000,))
    assert tuple(s.shape) == (4000, 2, 3) and bool(((s >= 0) & (s <= 5) & (s % 1 == 0)).all())
    _check_mean(s, _np(t.mean), _np(t.variance), 4000)
    # the sample frequencies of every count against the pmf
    freq = np.stack([(_np(s)[:, 0, 0] == k).mean() for k in range(6)])
    pmf = np.exp(_np(t.log_prob(torch.arange(6.0, dtype=torch.float64).view(6, 1, 1))))[:, 0, 0]
    assert np.all(np.abs(freq - pmf) < 6 * np.sqrt(pmf * (1 - pmf) / 4000) + 1e-3)
    e = f.expand((4, 2, 3))
    assert tuple(e.batch_shape) == (4, 2, 3) and tuple(e.sample().shape) == (4, 2, 3)
    _close(e.mean, t.expand((4, 2, 3)).mean)


def test_binomial_scalar_and_inhomogeneous_counts():
    f, t = M.Binomial(10, flow.tensor(0.3, dtype=flow.float64)), TD.Binomial(10, torch.tensor(0.3, dtype=torch.float64))
    assert tuple(f.batch_shape) == () == tuple(t.batch_shape)
    _close(f.log_prob(_t(flow, [0, 3, 10])), t.log_prob(_t(torch, [0, 3, 10])))
    _close(f.entropy(), t.entropy())
    counts = np.array([0.0, 3.0, 40.0, 300.0])
    f, t = _pair("Binomial", counts, probs=np.array([0.5, 0.5, 0.25, 0.9]))
    flow.manual_seed(1)
    s = f.sample((3000,))
    assert bool((s[:, 0] == 0).all()) and bool((s <= _t(flow, counts)).all())
    _check_mean(s, _np(t.mean), np.maximum(_np(t.variance), 1e-12), 3000)
    with pytest.raises(NotImplementedError):
        f.enumerate_support()
    with pytest.raises(NotImplementedError):
        t.enumerate_support()


def test_binomial_gradients():
    k = _t(flow, KVALS)
    fp, tp = _t(flow, PROBS, True), _t(torch, PROBS, True)
    M.Binomial(_t(flow, COUNT), fp).log_prob(k).sum().backward()
    TD.Binomial(_t(torch, COUNT), tp).log_prob(_t(torch, KVALS)).sum().backward()
    _close(fp.grad, tp.grad)
    fl, tl = _t(flow, np.log(PROBS), True), _t(torch, np.log(PROBS), True)
    M.Binomial(_t(flow, COUNT), logits=fl).entropy().sum().backward()
    TD.Binomial(_t(torch, COUNT), logits=tl).entropy().sum().backward()
    _close(fl.grad, tl.grad)


def test_negative_binomial():
    counts = np.array([[5.0, 2.5, 1.0], [3.0, 0.5, 7.0]])
    f, t = _pair("NegativeBinomial", counts, PROBS)
    _same_shapes_and_flags(f, t)
    _close(f.log_prob(_t(flow, KVALS)), t.log_prob(_t(torch, KVALS)))
    for attr in ("mean", "variance", "mode", "logits"):
        _close(getattr(f, attr), getattr(t, attr))
    fl, tl = _pair("NegativeBinomial", counts, logits=np.array([[-1.0, 0.3, 2.0], [0.0, -3.0, 1.0]]))
    _close(fl.log_prob(_t(flow, KVALS)), tl.log_prob(_t(torch, KVALS)))
    _close(fl.mean, tl.mean), _close(fl.variance, tl.variance)
    # total_count + value == 0: probability one at zero when total_count is 0
    f0, t0 = _pair("NegativeBinomial", np.array([0.0, 2.0]), np.array([0.3, 0.3]))
    _close(f0.log_prob(_t(flow, [0.0, 0.0])), t0.log_prob(_t(torch, [0.0, 0.0])))
    flow.manual_seed(2)
    f, t = _pair("NegativeBinomial", counts, PROBS * 0.8)
    s = f.sample((6000,))
    assert tuple(s.shape) == (6000, 2, 3) and bool(((s >= 0) & (s % 1 == 0)).all())
    _check_mean(s, _np(t.mean), _np(t.variance), 6000)
    fp, tp = _t(flow, PROBS, True), _t(torch, PROBS, True)
    fc, tc = _t(flow, counts, True), _t(torch, counts, True)
    M.NegativeBinomial(fc, fp).log_prob(_t(flow, KVALS)).sum().backward()
    TD.NegativeBinomial(tc, tp).log_prob(_t(torch, KVALS)).sum().backward()
    _close(fp.grad, tp.grad), _close(fc.grad, tc.grad)
    assert tuple(f.expand((3, 2, 3)).sample((2,)).shape) == (2, 3, 2, 3)


PR = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
CNT = np.array([[[1, 2, 3], [4, 0, 2]], [[0, 0, 6], [2, 2, 2]]], dtype=np.float64)


@pytest.mark.parametrize("form", ["probs", "logits"])
def test_multinomial(form):
    param = PR if form == "probs" else np.log(PR) + 1.7
    f, t = _pair("Multinomial", 6, **{form: param})
    _same_shapes_and_flags(f, t)
    assert tuple(f.event_shape) == (3,)
    _close(f.log_prob(_t(flow, CNT)), t.log_prob(_t(torch, CNT)))
    _close(f.mean, t.mean), _close(f.variance, t.variance)
    _close(f.entropy(), t.entropy(), rtol=1e-5)
    flow.manual_seed(3)
    s = f.sample((3000,))
    assert tuple(s.shape) == (3000, 2, 3) and bool((s.sum(-1) == 6).all())
    _check_mean(s, _np(t.mean), _np(t.variance), 3000)
    assert tuple(f.sample().shape) == (2, 3)
    e = f.expand((4, 2))
    assert tuple(e.batch_shape) == (4, 2) and tuple(e.sample((5,)).shape) == (5, 4, 2, 3)
    fp, tp = _t(flow, param, True), _t(torch, param, True)
    M.Multinomial(6, **{form: fp}).log_prob(_t(flow, CNT)).sum().backward()
    TD.Multinomial(6, **{form: tp}).log_prob(_t(torch, CNT)).sum().backward()
    _close(fp.grad, tp.grad)


def _mixtures():
    logits = np.array([[0.1, -0.5, 1.0], [2.0, 0.0, -1.0]])
    loc, scale = RNG.standard_normal((2, 3)), RNG.uniform(0.3, 1.5, (2, 3))
    FD = flow.distributions
    f = M.MixtureSameFamily(FD.Categorical(logits=_t(flow, logits)), FD.Normal(_t(flow, loc), _t(flow, scale)))
    t = TD.MixtureSameFamily(TD.Categorical(logits=_t(torch, logits)), TD.Normal(_t(torch, loc), _t(torch, scale)))
    return f, t


def test_mixture_same_family_scalar_components():
    f, t = _mixtures()
    _same_shapes_and_flags(f, t)
    x = RNG.standard_normal((5, 2))
    _close(f.log_prob(_t(flow, x)), t.log_prob(_t(torch, x)))
    _close(f.cdf(_t(flow, x)), t.cdf(_t(torch, x)))
    _close(f.mean, t.mean), _close(f.variance, t.variance), _close(f.stddev, t.stddev)
    flow.manual_seed(4)
    s = f.sample((8000,))
    assert tuple(s.shape) == (8000, 2)
    _check_mean(s, _np(t.mean), _np(t.variance), 8000)
    np.testing.assert_allclose(_np(s).var(0), _np(t.variance), rtol=0.1)
    e, te = f.expand((4, 2)), t.expand((4, 2))
    assert tuple(e.batch_shape) == (4, 2) and tuple(e.sample((3,)).shape) == (3, 4, 2)
    _close(e.mean, te.mean)


def test_mixture_same_family_vector_components():
    from oneflow import distributions as FD
    w = np.array([0.3, 0.7])
    loc, scale = RNG.standard_normal((2, 3)), RNG.uniform(0.3, 1.5, (2, 3))
    f = M.MixtureSameFamily(FD.Categorical(_t(flow, w)), FD.Independent(FD.Normal(_t(flow, loc), _t(flow, scale)), 1))
    t = TD.MixtureSameFamily(TD.Categorical(_t(torch, w)), TD.Independent(TD.Normal(_t(torch, loc), _t(torch, scale)), 1))
    assert tuple(f.batch_shape) == () and tuple(f.event_shape) == (3,)
    x = RNG.standard_normal((4, 3))
    _close(f.log_prob(_t(flow, x)), t.log_prob(_t(torch, x)))
    _close(f.mean, t.mean), _close(f.variance, t.variance)
    flow.manual_seed(5)
    s = f.sample((6000,))
    assert tuple(s.shape) == (6000, 3)
    _check_mean(s, _np(t.mean), _np(t.variance), 6000)
    fl = _t(flow, loc, True)
    tl = _t(torch, loc, True)
    M.MixtureSameFamily(FD.Categorical(_t(flow, w)), FD.Independent(FD.Normal(fl, _t(flow, scale)), 1)) \
        .log_prob(_t(flow, x)).sum().backward()
    TD.MixtureSameFamily(TD.Categorical(_t(torch, w)), TD.Independent(TD.Normal(tl, _t(torch, scale)), 1)) \
        .log_prob(_t(torch, x)).sum().backward()
    _close(fl.grad, tl.grad)


def test_mixture_same_family_errors():
    from oneflow import distributions as FD
    with pytest.raises(ValueError):
        M.MixtureSameFamily(FD.Normal(flow.zeros(3), flow.ones(3)), FD.Normal(flow.zeros(3), flow.ones(3)))
    with pytest.raises(ValueError):
        TD.MixtureSameFamily(TD.Normal(torch.zeros(3), torch.ones(3)), TD.Normal(torch.zeros(3), torch.ones(3)))
    with pytest.raises(ValueError):
        M.MixtureSameFamily(FD.Categorical(flow.ones(2) / 2), FD.Normal(flow.zeros(3), flow.ones(3)))
    with pytest.raises(ValueError):
        TD.MixtureSameFamily(TD.Categorical(torch.ones(2) / 2), TD.Normal(torch.zeros(3), torch.ones(3)))
    with pytest.raises(ValueError):
        M.MixtureSameFamily(FD.Categorical(flow.ones(3) / 3), "not a distribution")


def test_onehot_straight_through():
    probs = RNG.dirichlet(np.ones(4), size=3)
    f, t = _pair("OneHotCategoricalStraightThrough", probs)
    _same_shapes_and_flags(f, t)
    assert f.has_rsample and isinstance(f, flow.distributions.OneHotCategorical)
    v = np.eye(4)[RNG.integers(0, 4, (5, 3))]
    _close(f.log_prob(_t(flow, v)), t.log_prob(_t(torch, v)))
    _close(f.entropy(), t.entropy()), _close(f.mean, t.mean)
    fp, tp = _t(flow, probs, True), _t(torch, probs, True)
    wts = RNG.standard_normal((6, 3, 4))
    fs = M.OneHotCategoricalStraightThrough(fp).rsample((6,))
    ts = TD.OneHotCategoricalStraightThrough(tp).rsample((6,))
    assert tuple(fs.shape) == (6, 3, 4) and bool((fs.sum(-1) == 1).all())
    np.testing.assert_allclose(_np(fs).sum(-1), 1.0)
    (fs * _t(flow, wts)).sum().backward()
    (ts * _t(torch, wts)).sum().backward()
    _close(fp.grad, tp.grad)


CB_PROBS = np.array([0.05, 0.2, 0.4995, 0.5, 0.5008, 0.8, 0.97])
XS = np.linspace(0.02, 0.98, 5)[:, None]


@pytest.mark.parametrize("form", ["probs", "logits"])
def test_continuous_bernoulli(form):
    param = CB_PROBS if form == "probs" else np.log(CB_PROBS / (1 - CB_PROBS))
    f, t = _pair("ContinuousBernoulli", **{form: param})
    _same_shapes_and_flags(f, t)
    _close(f.log_prob(_t(flow, XS)), t.log_prob(_t(torch, XS)))
    _close(f.cdf(_t(flow, XS)), t.cdf(_t(torch, XS)))
    _close(f.icdf(_t(flow, XS)), t.icdf(_t(torch, XS)))
    for attr in ("mean", "variance", "stddev", "probs", "logits"):
        _close(getattr(f, attr), getattr(t, attr))
    _close(f.entropy(), t.entropy())
    # the Bregman-divergence entropy of the exponential family gives the same values
    _close(M.ExponentialFamily.entropy(f), t.entropy(), rtol=1e-5, atol=1e-7)
    _close(M.ExponentialFamily.entropy(f), TD.ExponentialFamily.entropy(t), rtol=1e-6, atol=1e-8)
    flow.manual_seed(6)
    s = f.rsample((6000,))
    assert tuple(s.shape) == (6000, 7) and bool(((s >= 0) & (s <= 1)).all())
    _check_mean(s, _np(t.mean), _np(t.variance), 6000)
    fp, tp = _t(flow, param, True), _t(torch, param, True)
    getattr(M, "ContinuousBernoulli")(**{form: fp}).log_prob(_t(flow, XS)).sum().backward()
    TD.ContinuousBernoulli(**{form: tp}).log_prob(_t(torch, XS)).sum().backward()
    _close(fp.grad, tp.grad, rtol=1e-5, atol=1e-8)
    fp2 = _t(flow, param, True)
    M.ContinuousBernoulli(**{form: fp2}).rsample((10,)).sum().backward()
    assert fp2.grad is not None and bool(fp2.grad.isfinite().all())
    e = f.expand((3, 7))
    assert tuple(e.batch_shape) == (3, 7) and tuple(e.rsample().shape) == (3, 7)


def test_fisher_snedecor():
    df1, df2 = np.array([1.0, 3.0, 6.0, 12.0]), np.array([3.0, 5.0, 9.0, 30.0])
    f, t = _pair("FisherSnedecor", df1, df2)
    _same_shapes_and_flags(f, t)
    x = RNG.uniform(0.05, 4.0, (5, 4))
    _close(f.log_prob(_t(flow, x)), t.log_prob(_t(torch, x)))
    for attr in ("mean", "variance", "mode"):
        _close(getattr(f, attr), getattr(t, attr))
    flow.manual_seed(7)
    s = f.sample((20000,))
    assert tuple(s.shape) == (20000, 4) and bool((s > 0).all())
    # medians against torch's icdf-free reference: the empirical cdf at torch's samples' median
    ts = t.sample((200000,)).numpy()
    np.testing.assert_allclose(np.median(_np(s), 0), np.median(ts, 0), rtol=0.05)
    _check_mean(s[:, 3:], _np(t.mean)[3:], _np(t.variance)[3:], 20000)
    f1, t1 = _t(flow, df1, True), _t(torch, df1, True)
    f2, t2 = _t(flow, df2, True), _t(torch, df2, True)
    M.FisherSnedecor(f1, f2).log_prob(_t(flow, x)).sum().backward()
    TD.FisherSnedecor(t1, t2).log_prob(_t(torch, x)).sum().backward()
    _close(f1.grad, t1.grad), _close(f2.grad, t2.grad)


def test_von_mises():
    loc, kappa = np.array([0.0, 1.0, -2.0, 3.0]), np.array([0.5, 2.0, 10.0, 1e-3])
    f, t = _pair("VonMises", loc, kappa)
    _same_shapes_and_flags(f, t)
    x = RNG.uniform(-math.pi, math.pi, (5, 4))
    _close(f.log_prob(_t(flow, x)), t.log_prob(_t(torch, x)), rtol=1e-6, atol=1e-7)
    _close(f.mean, t.mean), _close(f.mode, t.mode)
    _close(f.variance, t.variance, rtol=1e-6, atol=1e-7)
    flow.manual_seed(8)
    n = 20000
    s = f.sample((n,))
    assert tuple(s.shape) == (n, 4) and bool(((s >= -math.pi) & (s < math.pi)).all())
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - variance, E[sin(x - loc)] = 0
    d = _np(s) - loc
    r = 1 - _np(t.variance)
    np.testing.assert_allclose(np.cos(d).mean(0), r, atol=6 / math.sqrt(n))
    np.testing.assert_allclose(np.sin(d).mean(0), 0.0, atol=6 / math.sqrt(n))
    fl, tl = _t(flow, loc, True), _t(torch, loc, True)
    fk, tk = _t(flow, kappa, True), _t(torch, kappa, True)
    M.VonMises(fl, fk).log_prob(_t(flow, x)).sum().backward()
    TD.VonMises(tl, tk).log_prob(_t(torch, x)).sum().backward()
    _close(fl.grad, tl.grad), _close(fk.grad, tk.grad, rtol=1e-5, atol=1e-7)
    assert tuple(f.expand((3, 4)).sample((2,)).shape) == (2, 3, 4)


def test_low_rank_multivariate_normal():
    loc = RNG.standard_normal((2, 3))
    W = RNG.standard_normal((2, 3, 2))
    D = np.array([0.5, 1.0, 2.0])
    f, t = _pair("LowRankMultivariateNormal", loc, W, D)
    _same_shapes_and_flags(f, t)
    x = RNG.standard_normal((4, 2, 3))
    _close(f.log_prob(_t(flow, x)), t.log_prob(_t(torch, x)))
    _close(f.entropy(), t.entropy())
    for attr in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        _close(getattr(f, attr), getattr(t, attr))
    flow.manual_seed(9)
    s = f.rsample((20000,))
    assert tuple(s.shape) == (20000, 2, 3)
    cov = _np(t.covariance_matrix)
    np.testing.assert_allclose(np.cov(_np(s)[:, 1].T), cov[1], rtol=0.1, atol=0.15)
    _check_mean(s, loc, _np(t.variance), 20000)
    e, te = f.expand((5, 2)), t.expand((5, 2))
    assert tuple(e.batch_shape) == (5, 2)
    _close(e.log_prob(_t(flow, x[:1])), te.log_prob(_t(torch, x[:1])))
    fw, tw = _t(flow, W, True), _t(torch, W, True)
    fd, td = _t(flow, D, True), _t(torch, D, True)
    M.LowRankMultivariateNormal(_t(flow, loc), fw, fd).log_prob(_t(flow, x)).sum().backward()
    TD.LowRankMultivariateNormal(_t(torch, loc), tw, td).log_prob(_t(torch, x)).sum().backward()
    _close(fw.grad, tw.grad, rtol=1e-5, atol=1e-8), _close(fd.grad, td.grad, rtol=1e-5, atol=1e-8)
    fl = _t(flow, loc, True)
    M.LowRankMultivariateNormal(fl, _t(flow, W), _t(flow, D)).rsample((3,)).sum().backward()
    _close(fl.grad, np.full((2, 3), 3.0))


BAD = {
    "binomial_probs": lambda L, D: D.Binomial(5, _t(L, [1.5]), validate_args=True),
    "binomial_count": lambda L, D: D.Binomial(_t(L, [2.5]), _t(L, [0.5]), validate_args=True),
    "binomial_neg_count": lambda L, D: D.Binomial(_t(L, [-1.0]), _t(L, [0.5]), validate_args=True),
    "binomial_both": lambda L, D: D.Binomial(5, _t(L, [0.5]), _t(L, [0.0])),
    "binomial_value": lambda L, D: D.Binomial(5, _t(L, [0.5]), validate_args=True).log_prob(_t(L, [6.0])),
    "binomial_frac_value": lambda L, D: D.Binomial(5, _t(L, [0.5]), validate_args=True).log_prob(_t(L, [1.5])),
    "negbin_probs": lambda L, D: D.NegativeBinomial(_t(L, [2.0]), _t(L, [1.0]), validate_args=True),
    "negbin_count": lambda L, D: D.NegativeBinomial(_t(L, [-2.0]), _t(L, [0.3]), validate_args=True),
    "negbin_value": lambda L, D: D.NegativeBinomial(_t(L, [2.0]), _t(L, [0.3]), validate_args=True)
    .log_prob(_t(L, [-1.0])),
    "multinomial_probs": lambda L, D: D.Multinomial(3, _t(L, [0.5, -0.5, 1.0]), validate_args=True),
    "multinomial_value": lambda L, D: D.Multinomial(3, _t(L, [0.5, 0.5]), validate_args=True)
    .log_prob(_t(L, [3.0, 2.0])),
    "multinomial_tensor_count": lambda L, D: D.Multinomial(_t(L, [3.0]), _t(L, [0.5, 0.5])),
    "cb_probs": lambda L, D: D.ContinuousBernoulli(_t(L, [1.2]), validate_args=True),
    "cb_value": lambda L, D: D.ContinuousBernoulli(_t(L, [0.3]), validate_args=True).log_prob(_t(L, [1.5])),
    "fisher_df": lambda L, D: D.FisherSnedecor(_t(L, [0.0]), _t(L, [1.0]), validate_args=True),
    "fisher_value": lambda L, D: D.FisherSnedecor(_t(L, [2.0]), _t(L, [3.0]), validate_args=True)
    .log_prob(_t(L, [-1.0])),
    "vonmises_kappa": lambda L, D: D.VonMises(_t(L, [0.0]), _t(L, [-1.0]), validate_args=True),
    "lowrank_diag": lambda L, D: D.LowRankMultivariateNormal(L.zeros(2, dtype=L.float64),
                                                             L.ones(2, 1, dtype=L.float64),
                                                             _t(L, [1.0, -1.0]), validate_args=True),
    "lowrank_shape": lambda L, D: D.LowRankMultivariateNormal(L.zeros(2), L.ones(3, 1), L.ones(2)),
    "lowrank_loc_dim": lambda L, D: D.LowRankMultivariateNormal(L.zeros(()), L.ones(1, 1), L.ones(1)),
    "lowrank_value": lambda L, D: D.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(2),
                                                              validate_args=True).log_prob(L.zeros(3)),
}


@pytest.mark.parametrize("case", list(BAD))
def test_validation_errors_match_torch(case):
    # BAD[case](L, D): the same exception type for oneflow and torch
    raises_like_torch(lambda lib: BAD[case](lib, TD if lib is torch else M), message=False)


def test_valid_arguments_pass_validation():
    assert M.Binomial(_t(flow, [0.0, 5.0]), _t(flow, [0.0, 1.0]), validate_args=True).log_prob(
        _t(flow, [0.0, 5.0])).shape == (2,)
    assert M.NegativeBinomial(_t(flow, [0.0]), _t(flow, [0.0]), validate_args=True).mean.shape == (1,)
    assert M.Multinomial(3, _t(flow, [0.2, 0.8]), validate_args=True).log_prob(_t(flow, [1.0, 2.0])).shape == ()
    assert M.ContinuousBernoulli(_t(flow, [0.0, 1.0]), validate_args=True).batch_shape == (2,)


def test_torch_module_paths_of_the_families():
    import importlib
    import torch.distributions as td
    for path in ("beta", "binomial", "von_mises", "relaxed_categorical", "one_hot_categorical", "studentT",
                 "lowrank_multivariate_normal", "transformed_distribution", "normal"):
        ours, theirs = importlib.import_module(f"oneflow.distributions.{path}"), getattr(td, path)
        public = [n for n in getattr(theirs, "__all__", []) if n[0].isupper()]
        assert public and all(hasattr(ours, n) for n in public), path
