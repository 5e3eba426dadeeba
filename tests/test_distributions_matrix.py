"""CorrCholeskyTransform, PositiveDefiniteTransform (oneflow.distributions.transforms) and the
GeneralizedPareto, LKJCholesky, Wishart families (oneflow.distributions.continuous, matrix_families) against
torch.distributions: forward / inverse / log|det J| and log_prob on fixed values, moments,
sample shapes and support membership, seeded sample means, expand, and validation errors."""

import math

import numpy as np
import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow.distributions")

if not SHIM:
    import oneflow.distributions as D
    from oneflow.distributions import constraints as C
TD = torch.distributions
RNG = np.random.default_rng(0)
X6 = RNG.normal(size=(3, 6))
M3 = RNG.normal(size=(2, 3, 3))
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])


def _f(a):
    return flow.tensor(np.asarray(a, dtype=np.float64))


def _t(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def _f32(a):  # torch's GeneralizedPareto compares with a float32 zero, so it needs float32 inputs
    return flow.tensor(np.asarray(a, dtype=np.float32))


def _t32(a):
    return torch.tensor(np.asarray(a, dtype=np.float32))


def _close(a, b, tol=1e-6):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ----------------------------------------------------------------------------- transforms
def test_corr_cholesky_transform_matches_torch():
    from oneflow.distributions.transforms import CorrCholeskyTransform
    f, t = CorrCholeskyTransform(), TD.transforms.CorrCholeskyTransform()
    yf, yt = f(_f(X6)), t(_t(X6))
    _close(yf, yt)
    _close(f.inv(yf), X6)
    _close(f.inv(yf), t.inv(yt))
    _close(f.log_abs_det_jacobian(_f(X6), yf), t.log_abs_det_jacobian(_t(X6), yt))
    assert bool(C.corr_cholesky.check(yf).all())
    assert f.bijective and f.domain.event_dim == 1 and f.codomain.event_dim == 2
    assert tuple(f.forward_shape((5, 6))) == (5, 4, 4) and tuple(f.inverse_shape((5, 4, 4))) == (5, 6)
    with pytest.raises(ValueError):
        f.forward_shape((5,))
    assert f == CorrCholeskyTransform() and "CorrCholeskyTransform" in D.transforms.__all__


def test_corr_cholesky_jacobian_by_autograd():
    from oneflow.distributions.transforms import CorrCholeskyTransform
    f = CorrCholeskyTransform()
    x = torch.tensor(X6[0])
    rows, cols = torch.tril_indices(4, 4, -1)
    # the map onto the free (strictly lower) entries of L, a square 6 x 6 Jacobian
    jac = torch.autograd.functional.jacobian(lambda v: TD.transforms.CorrCholeskyTransform()(v)[rows, cols], x)
    expected = torch.linalg.slogdet(jac).logabsdet
    _close(f.log_abs_det_jacobian(_f(X6[0]), f(_f(X6[0]))), expected)


def test_positive_definite_transform_matches_torch():
    from oneflow.distributions.transforms import PositiveDefiniteTransform
    f, t = PositiveDefiniteTransform(), TD.transforms.PositiveDefiniteTransform()
    yf, yt = f(_f(M3)), t(_t(M3))
    _close(yf, yt)
    assert bool(C.positive_definite.check(yf).all())
    _close(f.inv(yf), t.inv(yt))
    _close(f(f.inv(yf)), yf)
    assert not f.bijective and f.codomain is C.positive_definite


def test_registry_and_corr_cholesky_constraint():
    from oneflow.distributions.transforms import CorrCholeskyTransform, PositiveDefiniteTransform
    assert isinstance(D.biject_to(C.corr_cholesky), CorrCholeskyTransform)
    assert isinstance(D.transform_to(C.corr_cholesky), CorrCholeskyTransform)
    assert isinstance(D.biject_to(C.positive_definite), PositiveDefiniteTransform)
    assert isinstance(D.transform_to(C.positive_definite), PositiveDefiniteTransform)
    bad = np.array([[1.0, 0.0], [0.6, 0.6]])  # second row norm != 1
    good = np.array([[1.0, 0.0], [0.6, 0.8]])
    upper = np.array([[1.0, 0.1], [0.0, 1.0]])
    for m in (bad, good, upper):
        assert bool(C.corr_cholesky.check(_f(m))) == bool(TD.constraints.corr_cholesky.check(_t(m)))
    assert C.corr_cholesky.event_dim == 2


# ----------------------------------------------------------------------------- GeneralizedPareto
GP_ARGS = ([0.1, -1.0, 0.0, 2.0], [2.0, 0.5, 1.0, 3.0], [0.4, -0.3, 0.0, -1.0])


def test_generalized_pareto_matches_torch():
    f, t = D.GeneralizedPareto(*map(_f32, GP_ARGS)), TD.GeneralizedPareto(*map(_t32, GP_ARGS))
    v = [1.5, -0.5, 0.7, 3.5]
    _close(f.log_prob(_f32(v)), t.log_prob(_t32(v)), tol=2e-5)
    _close(f.cdf(_f32(v)), t.cdf(_t32(v)))
    _close(f.log_survival_function(_f32(v)), t.log_survival_function(_t32(v)))
    u = [0.1, 0.5, 0.9, 0.3]
    _close(f.icdf(_f32(u)), t.icdf(_t32(u)))
    _close(f.mean, t.mean)
    _close(f.variance, t.variance)
    _close(f.entropy(), t.entropy())
    _close(f.mode, t.mode)
    assert f.has_rsample and t.has_rsample


def test_generalized_pareto_nan_moments_and_support():
    f = D.GeneralizedPareto(_f32([0.0, 0.0]), _f32([1.0, 1.0]), _f32([1.5, 0.7]))
    t = TD.GeneralizedPareto(_t32([0.0, 0.0]), _t32([1.0, 1.0]), _t32([1.5, 0.7]))
    _close(f.mean, t.mean)
    _close(f.variance, t.variance)
    assert np.isnan(f.mean.numpy()[0]) and np.isnan(f.variance.numpy()).all()
    g = D.GeneralizedPareto(_f32(1.0), _f32(2.0), _f32(-0.5))
    assert bool(g.support.check(_f32(4.9))) and not bool(g.support.check(_f32(5.1)))
    assert not bool(g.support.check(_f32(0.9)))


def test_generalized_pareto_samples():
    flow.manual_seed(0)
    f = D.GeneralizedPareto(_f32([0.5, 1.0]), _f32([1.0, 2.0]), _f32([0.2, -0.5]))
    s = f.sample((20000,))
    assert tuple(s.shape) == (20000, 2)
    assert bool(f.support.check(s).all())
    np.testing.assert_allclose(s.mean(0).numpy(), f.mean.numpy(), rtol=0.03)
    loc = _f32(0.0).requires_grad_()
    D.GeneralizedPareto(loc, _f32(1.0), _f32(0.1)).rsample((5,)).sum().backward()
    _close(loc.grad, 5.0)
    e = f.expand((3, 2))
    assert tuple(e.batch_shape) == (3, 2) and tuple(e.sample((4,)).shape) == (4, 3, 2)


def test_generalized_pareto_validation():
    for cls in (D.GeneralizedPareto, TD.GeneralizedPareto):
        with pytest.raises(ValueError):
            cls(0.0, -1.0, 0.1, validate_args=True)
    f = D.GeneralizedPareto(_f32(0.0), _f32(1.0), _f32(-0.5), validate_args=True)
    t = TD.GeneralizedPareto(_t32(0.0), _t32(1.0), _t32(-0.5), validate_args=True)
    for d, T in ((f, _f32), (t, _t32)):
        with pytest.raises(ValueError):
            d.log_prob(T(3.0))  # beyond loc - scale / c = 2
    assert f.batch_shape == () and tuple(D.GeneralizedPareto(0.0, 1.0, 0.1).batch_shape) == ()


# ----------------------------------------------------------------------------- LKJCholesky
def test_lkj_cholesky_log_prob_matches_torch():
    L = TD.transforms.CorrCholeskyTransform()(_t(X6))  # three 4 x 4 factors
    for conc in (0.5, 1.0, 3.0):
        f, t = D.LKJCholesky(4, _f(conc)), TD.LKJCholesky(4, _t(conc))
        _close(f.log_prob(_f(L.numpy())), t.log_prob(L))
    conc = [0.7, 2.0, 5.0]
    _close(D.LKJCholesky(4, _f(conc)).log_prob(_f(L.numpy())), TD.LKJCholesky(4, _t(conc)).log_prob(L))
    L2 = TD.transforms.CorrCholeskyTransform()(_t([[0.3], [-1.2]]))
    _close(D.LKJCholesky(2, 1.5).log_prob(_f(L2.numpy())), TD.LKJCholesky(2, 1.5).log_prob(L2))


def test_lkj_cholesky_samples():
    flow.manual_seed(1)
    f = D.LKJCholesky(3, _f([0.5, 4.0]))
    s = f.sample((4000,))
    assert tuple(s.shape) == (4000, 2, 3, 3)
    assert bool(C.corr_cholesky.check(s).all())
    corr = (s @ s.transpose(-2, -1)).numpy()
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, atol=1e-9)
    # off-diagonal correlations of LKJ(eta) in dim d: mean 0, variance 1 / (2 eta + d - 1)
    off = corr[..., 1, 0]
    np.testing.assert_allclose(off.mean(0), [0.0, 0.0], atol=0.04)
    np.testing.assert_allclose(off.var(0), [1 / 3.0, 1 / 10.0], rtol=0.08)
    e = f.expand((5, 2))
    assert tuple(e.batch_shape) == (5, 2) and tuple(e.sample().shape) == (5, 2, 3, 3)
    assert not f.has_rsample and f.support is C.corr_cholesky


def test_lkj_cholesky_validation():
    for cls in (D.LKJCholesky, TD.LKJCholesky):
        with pytest.raises(ValueError):
            cls(1, 1.0)
    with pytest.raises(ValueError):
        D.LKJCholesky(3, -1.0, validate_args=True)
    with pytest.raises(ValueError):
        TD.LKJCholesky(3, -1.0, validate_args=True)
    d = D.LKJCholesky(2, 1.0, validate_args=True)
    with pytest.raises(ValueError):
        d.log_prob(_f([[1.0, 0.0], [0.6, 0.6]]))


# ----------------------------------------------------------------------------- Wishart
def _wisharts(df, **kw):
    return D.Wishart(_f(df), **{k: _f(v) for k, v in kw.items()}), \
        TD.Wishart(_t(df), **{k: _t(v) for k, v in kw.items()})


def test_wishart_log_prob_and_moments_match_torch():
    A = RNG.normal(size=(4, 3, 6))
    X = _t(A @ A.transpose(0, 2, 1))  # four fixed SPD matrices
    prec = np.linalg.inv(COV)
    for kw in ({"covariance_matrix": COV}, {"precision_matrix": prec},
               {"scale_tril": np.linalg.cholesky(COV)}):
        f, t = _wisharts(5.5, **kw)
        _close(f.log_prob(_f(X.numpy())), t.log_prob(X))
        _close(f.mean, t.mean)
        _close(f.variance, t.variance)
        _close(f.mode, t.mode)
        _close(f.entropy(), t.entropy())
        _close(f.covariance_matrix, t.covariance_matrix)
        _close(f.precision_matrix, t.precision_matrix)
    with pytest.warns(UserWarning, match="Low df"):  # df = 2.5 lies in (p - 1, p): warned
        f = D.Wishart(_f([2.5, 8.0]), covariance_matrix=_f(COV))
    with pytest.warns(UserWarning, match="Low df"):
        t = TD.Wishart(_t([2.5, 8.0]), covariance_matrix=_t(COV))
    _close(f.log_prob(_f(X[:2].numpy())), t.log_prob(X[:2]))
    _close(f.mean, t.mean)
    _close(f.entropy(), t.entropy())
    assert tuple(f.batch_shape) == (2,) and tuple(f.event_shape) == (3, 3)


def test_wishart_mode_nan_and_exp_family_entropy():
    f, t = _wisharts(3.5, covariance_matrix=COV)
    _close(f.mode, t.mode)
    assert np.isnan(f.mode.numpy()).all()
    from oneflow.distributions.exp_family import ExponentialFamily
    _close(ExponentialFamily.entropy(f), t.entropy(), tol=1e-5)


def test_wishart_samples():
    flow.manual_seed(2)
    f = D.Wishart(_f([4.0, 7.0]), covariance_matrix=_f(COV))
    s = f.sample((6000,))
    assert tuple(s.shape) == (6000, 2, 3, 3)
    _close(s, s.transpose(-2, -1), tol=1e-12)
    assert bool(C.positive_definite.check(s).all())
    np.testing.assert_allclose(s.mean(0).numpy(), f.mean.numpy(), atol=0.12 * 7)
    rel = np.abs(s.mean(0).numpy() - f.mean.numpy()) / np.sqrt(f.variance.numpy() / 6000)
    assert rel.max() < 5.0  # within 5 standard errors everywhere
    e = f.expand((3, 2))
    assert tuple(e.batch_shape) == (3, 2) and tuple(e.sample((2,)).shape) == (2, 3, 2, 3, 3)
    L = _f(np.linalg.cholesky(COV)).requires_grad_()
    D.Wishart(_f(5.0), scale_tril=L).rsample((3,)).sum().backward()
    assert L.grad is not None and np.isfinite(L.grad.numpy()).all()
    # the chi-square draws are reparameterised: df gets the gradient of E[X] = df Sigma in mean
    assert f.has_rsample
    flow.manual_seed(3)
    df = _f(6.0).requires_grad_()
    D.Wishart(df, covariance_matrix=_f(COV)).rsample((4000,)).diagonal(dim1=-2, dim2=-1).sum(-1).mean().backward()
    np.testing.assert_allclose(df.grad.item(), np.trace(COV), rtol=0.05)


def test_wishart_validation():
    for W, T in ((D.Wishart, _f), (TD.Wishart, _t)):
        with pytest.raises(AssertionError):
            W(T(4.0))
        with pytest.raises(AssertionError):
            W(T(4.0), covariance_matrix=T(COV), scale_tril=T(np.linalg.cholesky(COV)))
        with pytest.raises(ValueError):
            W(T(1.5), covariance_matrix=T(COV))  # df <= p - 1
        with pytest.raises(ValueError):
            W(T(4.0), covariance_matrix=T([1.0, 2.0]))
        with pytest.raises(ValueError):
            W(T(4.0), covariance_matrix=T([[1.0, 2.0], [2.0, 1.0]]), validate_args=True)
        with pytest.warns(UserWarning, match="Low df"):
            W(T(2.5), covariance_matrix=T(COV))
    d = D.Wishart(_f(4.0), covariance_matrix=_f(COV), validate_args=True)
    with pytest.raises(ValueError):
        d.log_prob(_f(-np.eye(3)))


def test_torch_module_paths():
    from oneflow.distributions.generalized_pareto import GeneralizedPareto
    from oneflow.distributions.lkj_cholesky import LKJCholesky
    from oneflow.distributions.wishart import Wishart
    assert (GeneralizedPareto, LKJCholesky, Wishart) == (D.GeneralizedPareto, D.LKJCholesky, D.Wishart)
    assert {"GeneralizedPareto", "LKJCholesky", "Wishart", "CorrCholeskyTransform",
            "PositiveDefiniteTransform"} <= set(D.__all__)
