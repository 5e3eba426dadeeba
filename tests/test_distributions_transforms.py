"""oneflow.distributions' transforms, TransformedDistribution, the families built on it and
biject_to / transform_to, against torch.distributions: forward / inverse values, log |det J|,
caching, composition, shapes, log_prob / cdf / icdf / moments / entropy on fixed values,
gradients through rsample-style transforms, and validation errors."""

import numpy as np
import pytest
import torch

from dist_util import close as _close, f64 as _t
from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow.distributions")
RNG = np.random.default_rng(1)
FD, TD = flow.distributions, torch.distributions
FT, TT = flow.distributions.transforms, torch.distributions.transforms


REAL = RNG.standard_normal((3, 4))
POS = RNG.uniform(0.2, 3.0, (3, 4))
EXPO = RNG.uniform(0.5, 2.0, (4,))
LOC, SCALE = RNG.standard_normal((4,)), RNG.uniform(0.5, 2.0, (4,))

# name -> (transform factory given the library, input)
TRANSFORMS = {
    "Exp": (lambda L: L.distributions.transforms.ExpTransform(), REAL),
    "Power": (lambda L: L.distributions.transforms.PowerTransform(_t(L, EXPO)), POS),
    "Sigmoid": (lambda L: L.distributions.transforms.SigmoidTransform(), REAL),
    "Tanh": (lambda L: L.distributions.transforms.TanhTransform(), REAL),
    "Softplus": (lambda L: L.distributions.transforms.SoftplusTransform(), REAL),
    "Affine": (lambda L: L.distributions.transforms.AffineTransform(_t(L, LOC), _t(L, SCALE)), REAL),
    "AffineScalar": (lambda L: L.distributions.transforms.AffineTransform(1.5, -2.0), REAL),
    "AffineEvent": (lambda L: L.distributions.transforms.AffineTransform(_t(L, LOC), _t(L, SCALE), event_dim=1), REAL),
    "StickBreaking": (lambda L: L.distributions.transforms.StickBreakingTransform(), REAL),
    "Independent": (lambda L: L.distributions.transforms.IndependentTransform(
        L.distributions.transforms.SigmoidTransform(), 1), REAL),
    "Reshape": (lambda L: L.distributions.transforms.ReshapeTransform((4,), (2, 2)), REAL),
    "Compose": (lambda L: L.distributions.transforms.ComposeTransform([
        L.distributions.transforms.AffineTransform(0.5, 2.0), L.distributions.transforms.ExpTransform(),
        L.distributions.transforms.PowerTransform(_t(L, EXPO))]), REAL),
    "ComposeEvent": (lambda L: L.distributions.transforms.ComposeTransform([
        L.distributions.transforms.ExpTransform(), L.distributions.transforms.StickBreakingTransform(),
        L.distributions.transforms.AffineTransform(0.0, 3.0)]), REAL),
    "Cat": (lambda L: L.distributions.transforms.CatTransform([
        L.distributions.transforms.ExpTransform(), L.distributions.transforms.SigmoidTransform(),
        L.distributions.transforms.AffineTransform(1.0, 3.0)], dim=1, lengths=[1, 2, 1]), REAL),
    "Stack": (lambda L: L.distributions.transforms.StackTransform([
        L.distributions.transforms.ExpTransform(), L.distributions.transforms.TanhTransform(),
        L.distributions.transforms.SoftplusTransform()], dim=0), REAL),
    "CDF": (lambda L: L.distributions.transforms.CumulativeDistributionTransform(
        L.distributions.Normal(_t(L, LOC), _t(L, SCALE))), REAL),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_bijective_transforms_against_torch(name):
    make, x = TRANSFORMS[name]
    f, t = make(flow), make(torch)
    fx, tx = _t(flow, x), _t(torch, x)
    fy, ty = f(fx), t(tx)
    _close(fy, ty)
    _close(f.inv(_t(flow, ty.numpy())), t.inv(ty), rtol=1e-6, atol=1e-8)
    _close(f.log_abs_det_jacobian(fx, fy), t.log_abs_det_jacobian(tx, ty))
    assert f.bijective == t.bijective is True
    assert f.domain.event_dim == t.domain.event_dim and f.codomain.event_dim == t.codomain.event_dim
    assert tuple(f.forward_shape(x.shape)) == tuple(t.forward_shape(x.shape))
    assert tuple(f.inverse_shape(tuple(ty.shape))) == tuple(t.inverse_shape(tuple(ty.shape)))
    assert tuple(f.inv.forward_shape(tuple(ty.shape))) == tuple(x.shape)
    # the inverse's log-det is minus the forward one
    _close(f.inv.log_abs_det_jacobian(fy, fx), -t.log_abs_det_jacobian(tx, ty))


@pytest.mark.parametrize("name", ["Abs", "Softmax", "LowerCholesky"])
def test_non_bijective_transforms(name):
    x = RNG.standard_normal((2, 3, 3))
    f, t = getattr(FT, name + "Transform")(), getattr(TT, name + "Transform")()
    fy, ty = f(_t(flow, x)), t(_t(torch, x))
    _close(fy, ty)
    _close(f.inv(fy), t.inv(ty))
    assert f.bijective is False and t.bijective is False
    assert f.codomain.check(fy).all().item() and f.domain.event_dim == t.domain.event_dim


def test_tanh_log_det_is_stable():
    x = np.array([-40.0, -5.0, 0.0, 3.0, 40.0])
    f = FT.TanhTransform().log_abs_det_jacobian(_t(flow, x), None)
    assert bool(f.isfinite().all())
    _close(f, TT.TanhTransform().log_abs_det_jacobian(_t(torch, x), None))


def test_sign_and_event_dim():
    assert FT.ExpTransform().sign == 1 and FT.AffineTransform(0.0, -2.0).sign == -1
    assert FT.AffineTransform(0.0, 0.0).sign == 0
    _close(FT.AffineTransform(0.0, _t(flow, [-1.0, 2.0])).sign, torch.tensor([-1.0, 2.0]).sign().double())
    c = FT.ComposeTransform([FT.AffineTransform(0.0, -1.0), FT.ExpTransform(), FT.AffineTransform(1.0, -3.0)])
    assert c.sign == 1 and c.inv.sign == 1
    assert FT.AffineTransform(0.0, 1.0, event_dim=2).event_dim == 2
    with pytest.raises(ValueError):
        FT.ReshapeTransform((4,), (2, 2)).event_dim  # noqa: B018 - domain 1, codomain 2
    assert FT.StickBreakingTransform().event_dim == 1
    assert FT.SigmoidTransform().event_dim == 0


def test_inverse_object_and_caching():
    e = FT.ExpTransform()
    assert e.inv is e.inv and e.inv.inv is e and e.inv == FT.ExpTransform().inv
    assert e == FT.ExpTransform() and e != FT.SigmoidTransform()
    with pytest.raises(ValueError):
        FT.ExpTransform(cache_size=2)
    with pytest.raises(ValueError):
        TT.ExpTransform(cache_size=2)
    x = flow.tensor([0.5, 1.0])
    plain = FT.ExpTransform()
    assert plain(x) is not plain(x)  # cache_size 0: recomputed
    cached = FT.ExpTransform(cache_size=1)
    y = cached(x)
    assert cached(x) is y and cached.inv(y) is x  # same objects back
    y2 = flow.tensor([1.0, 2.0])
    assert cached.inv(y2) is not None and cached(cached.inv(y2)) is y2
    assert plain.with_cache(1)._cache_size == 1 and plain.with_cache(0) is plain
    p = FT.PowerTransform(2.0).with_cache(1)
    assert isinstance(p, FT.PowerTransform) and p._cache_size == 1
    comp = FT.ComposeTransform([FT.ExpTransform(), FT.AffineTransform(1.0, 2.0)], cache_size=1)
    assert all(q._cache_size == 1 for q in comp.parts)
    assert comp.inv.inv is comp


def test_compose_domains_and_identity():
    c = FT.ComposeTransform([FT.ExpTransform(), FT.StickBreakingTransform()])
    tc = TT.ComposeTransform([TT.ExpTransform(), TT.StickBreakingTransform()])
    assert c.domain.event_dim == tc.domain.event_dim == 1 and c.codomain.event_dim == tc.codomain.event_dim
    x = flow.tensor([1.0, -2.0])
    assert FD.transforms.identity_transform(x) is x
    _close(FD.transforms.identity_transform.log_abs_det_jacobian(x, x), np.zeros(2, dtype=np.float32))
    r = FT.ComposeTransform([FT.ReshapeTransform((4,), (2, 2)), FT.LowerCholeskyTransform()])
    assert r.domain.event_dim == 1 and r.codomain.event_dim == 2
    with pytest.raises(ValueError):
        FT.ReshapeTransform((3,), (2, 2))
    with pytest.raises(ValueError):
        FT.ReshapeTransform((4,), (2, 2)).forward_shape((3, 5))


def test_transformed_distribution_log_prob_and_shapes():
    loc, scale = RNG.standard_normal((2, 3)), RNG.uniform(0.5, 2.0, (2, 3))

    def make(L):
        base = L.distributions.Normal(_t(L, loc), _t(L, scale))
        tr = L.distributions.transforms
        return L.distributions.TransformedDistribution(base, [tr.StickBreakingTransform(), tr.AffineTransform(0.0, 2.0)])

    f, t = make(flow), make(torch)
    assert tuple(f.batch_shape) == tuple(t.batch_shape) == (2,)
    assert tuple(f.event_shape) == tuple(t.event_shape) == (4,)
    y = t.sample((5,))
    _close(f.log_prob(_t(flow, y.numpy())), t.log_prob(y))
    assert tuple(f.sample((5,)).shape) == (5, 2, 4) and tuple(f.rsample().shape) == (2, 4)
    assert f.has_rsample and f.support.event_dim == t.support.event_dim == 1
    e = f.expand((7, 2))
    assert tuple(e.batch_shape) == (7, 2) and tuple(e.sample().shape) == (7, 2, 4)
    _close(e.log_prob(_t(flow, y.numpy()[:1])), t.expand((7, 2)).log_prob(y[:1]))
    # a broadcasting transform expands the base's batch shape
    g = FD.TransformedDistribution(FD.Normal(0.0, 1.0), FT.AffineTransform(flow.zeros(3), flow.ones(3)))
    assert tuple(g.batch_shape) == (3,) and tuple(g.base_dist.batch_shape) == (3,)


def test_transformed_distribution_cdf_icdf_monotone():
    def make(L):
        base = L.distributions.Normal(_t(L, LOC), _t(L, SCALE))
        tr = L.distributions.transforms
        return L.distributions.TransformedDistribution(base, [tr.AffineTransform(1.0, -2.0), tr.ExpTransform()])

    f, t = make(flow), make(torch)
    v = RNG.uniform(0.1, 5.0, (3, 4))
    _close(f.cdf(_t(flow, v)), t.cdf(_t(torch, v)))
    q = RNG.uniform(0.05, 0.95, (3, 4))
    _close(f.icdf(_t(flow, q)), t.icdf(_t(torch, q)))
    _close(f.log_prob(_t(flow, v)), t.log_prob(_t(torch, v)))


def test_rsample_gradient_matches_torch():
    eps = RNG.standard_normal((5, 4))
    grads = []
    for L in (flow, torch):
        loc, scale = _t(L, LOC).requires_grad_(), _t(L, SCALE).requires_grad_()
        tr = L.distributions.transforms
        chain = tr.ComposeTransform([tr.AffineTransform(loc, scale), tr.TanhTransform(),
                                     tr.AffineTransform(0.0, 3.0)])
        d = L.distributions.TransformedDistribution(L.distributions.Normal(loc, scale), chain.parts)
        y = chain(_t(L, eps))  # the same base noise through the same reparameterisation
        (y.sum() + d.log_prob(y.detach()).sum()).backward()
        grads.append((loc.grad.numpy(), scale.grad.numpy()))
    _close(grads[0][0], grads[1][0])
    _close(grads[0][1], grads[1][1])


P = RNG.uniform(0.5, 3.0, (2, 3))
Q = RNG.uniform(0.5, 3.0, (2, 3))
FAMILIES = {
    # name -> (args given the library, support sample, cdf/icdf?, entropy?)
    "HalfCauchy": (lambda L: (_t(L, P),), RNG.uniform(0.0, 4.0, (4, 2, 3)), True, True),
    "Pareto": (lambda L: (_t(L, P), _t(L, Q + 1.5)), P + RNG.uniform(0.0, 3.0, (4, 2, 3)), True, True),
    "Weibull": (lambda L: (_t(L, P), _t(L, Q)), RNG.uniform(0.05, 4.0, (4, 2, 3)), True, True),
    "Kumaraswamy": (lambda L: (_t(L, P), _t(L, Q)), RNG.uniform(0.05, 0.95, (4, 2, 3)), True, True),
    "InverseGamma": (lambda L: (_t(L, P + 2.0), _t(L, Q)), RNG.uniform(0.05, 4.0, (4, 2, 3)), False, True),
    "RelaxedBernoulli": (lambda L: (_t(L, 0.7), _t(L, P / 4)), RNG.uniform(0.05, 0.95, (4, 2, 3)), False, False),
    "LogitRelaxedBernoulli": (lambda L: (_t(L, 0.7), None, _t(L, Q - 1)), RNG.standard_normal((4, 2, 3)), False, False),
    "LogisticNormal": (lambda L: (_t(L, P - 1), _t(L, Q)), None, False, False),
    "RelaxedOneHotCategorical": (lambda L: (_t(L, 0.5), _t(L, P / P.sum(-1, keepdims=True))), None, False, False),
    "ExpRelaxedCategorical": (lambda L: (_t(L, 0.5), None, _t(L, Q)), None, False, False),
}


@pytest.mark.parametrize("name", list(FAMILIES))
def test_families_against_torch(name):
    args, values, has_cdf, has_entropy = FAMILIES[name]
    tcls = getattr(TD, name, None) or getattr(TD.relaxed_bernoulli, name, None) or TD.relaxed_categorical.__dict__[name]
    f, t = getattr(FD, name)(*args(flow)), tcls(*args(torch))
    assert tuple(f.batch_shape) == tuple(t.batch_shape) and tuple(f.event_shape) == tuple(t.event_shape)
    tv = _t(torch, values) if values is not None else t.sample((4,))
    fv = _t(flow, tv.numpy())
    _close(f.log_prob(fv), t.log_prob(tv), rtol=1e-6, atol=1e-8)
    if has_cdf:
        _close(f.cdf(fv), t.cdf(tv))
        q = RNG.uniform(0.05, 0.95, (2, 3))
        _close(f.icdf(_t(flow, q)), t.icdf(_t(torch, q)), rtol=1e-6, atol=1e-8)
    if has_entropy:
        _close(f.entropy(), t.entropy())
        for attr in ("mean", "variance"):
            _close(getattr(f, attr), getattr(t, attr))
        if name != "Kumaraswamy":
            _close(f.mode, t.mode)
    assert f.has_rsample == t.has_rsample
    assert repr(f.support).split("(")[0] == repr(t.support).split("(")[0] and f.support.event_dim == t.support.event_dim
    assert set(f.arg_constraints) == set(t.arg_constraints)
    flow.manual_seed(0)
    s = f.sample((3,))
    assert tuple(s.shape) == (3,) + tuple(t.batch_shape) + tuple(t.event_shape)
    assert bool(f.support.check(s).all())
    e = f.expand((5,) + tuple(t.batch_shape))
    assert tuple(e.sample().shape) == (5,) + tuple(t.batch_shape) + tuple(t.event_shape)


def test_kumaraswamy_mode_closed_form():
    a, b = np.array([2.0, 3.0, 0.5]), np.array([3.0, 1.5, 3.0])
    m = FD.Kumaraswamy(_t(flow, a), _t(flow, b)).mode.numpy()
    want = ((a - 1) / (a * b - 1)) ** (1 / a)
    np.testing.assert_allclose(m[:2], want[:2], rtol=1e-12)
    assert np.isnan(m[2])


def test_family_moments_sample_means():
    flow.manual_seed(1)
    w = FD.Weibull(_t(flow, [1.0, 2.0]), _t(flow, [1.5, 3.0]))
    np.testing.assert_allclose(w.sample((20000,)).mean(0).numpy(), w.mean.numpy(), rtol=0.05)
    k = FD.Kumaraswamy(_t(flow, [2.0, 0.7]), _t(flow, [3.0, 1.2]))
    np.testing.assert_allclose(k.sample((20000,)).mean(0).numpy(), k.mean.numpy(), rtol=0.05)


def test_rsample_gradients_flow_through_families():
    scale = flow.tensor([1.0, 2.0], dtype=flow.float64, requires_grad=True)
    conc = flow.tensor([1.5, 0.8], dtype=flow.float64, requires_grad=True)
    FD.Weibull(scale, conc).rsample((4,)).sum().backward()
    assert scale.grad is not None and conc.grad is not None and bool(conc.grad.isfinite().all())
    logits = flow.tensor([[0.1, 0.5, -0.3]], dtype=flow.float64, requires_grad=True)
    FD.RelaxedOneHotCategorical(flow.tensor(0.5, dtype=flow.float64), logits=logits).rsample((2,))[..., 0].sum().backward()
    assert logits.grad is not None and bool(logits.grad.isfinite().all())


@pytest.mark.parametrize("name,args,value", [
    ("HalfCauchy", (-1.0,), None),
    ("Pareto", (1.0, -2.0), None),
    ("Weibull", (1.0, -0.5), None),
    ("Kumaraswamy", (0.0, 1.0), None),
    ("InverseGamma", (-1.0, 1.0), None),
    ("HalfCauchy", (1.0,), -0.5),
    ("Weibull", (1.0, 2.0), -1.0),
    ("Kumaraswamy", (2.0, 2.0), 1.5),
])
def test_validation_errors_match_torch(name, args, value):
    for L in (flow, torch):
        targs = tuple(_t(L, [a]) for a in args)
        if value is None:
            with pytest.raises(ValueError):
                getattr(L.distributions, name)(*targs, validate_args=True)
        else:
            d = getattr(L.distributions, name)(*targs, validate_args=True)
            with pytest.raises(ValueError):
                d.log_prob(_t(L, [value]))
    with pytest.raises(ValueError):
        FD.TransformedDistribution(FD.Normal(0.0, 1.0), "exp")
    with pytest.raises(ValueError):
        FD.RelaxedBernoulli(_t(flow, 0.5))


@pytest.mark.parametrize("cname,make", [
    ("real", lambda C: C.real), ("positive", lambda C: C.positive), ("greater_than", lambda C: C.greater_than(1.5)),
    ("less_than", lambda C: C.less_than(-1.0)), ("unit_interval", lambda C: C.unit_interval),
    ("interval", lambda C: C.interval(-2.0, 3.0)), ("simplex", lambda C: C.simplex),
    ("real_vector", lambda C: C.real_vector), ("independent", lambda C: C.independent(C.positive, 1)),
])
def test_biject_to_and_transform_to(cname, make):
    x = RNG.standard_normal((3, 4))
    for reg in ("biject_to", "transform_to"):
        f = getattr(FD, reg)(make(FD.constraints))
        t = getattr(TD, reg)(make(TD.constraints))
        fy, ty = f(_t(flow, x)), t(_t(torch, x))
        _close(fy, ty)
        assert bool(make(FD.constraints).check(fy).all())
        if reg == "biject_to":
            _close(f.inv(fy), x, rtol=1e-6, atol=1e-8)
            _close(f.log_abs_det_jacobian(_t(flow, x), fy), t.log_abs_det_jacobian(_t(torch, x), ty))


def test_registry_register_and_cat_stack():
    C = FD.constraints
    cat = C.cat([C.positive, C.unit_interval], dim=1, lengths=[2, 2])
    t = FD.biject_to(cat)
    y = t(flow.randn(3, 4))
    assert bool(cat.check(y).all()) and isinstance(t, FT.CatTransform)
    st = C.stack([C.positive, C.real], dim=0)
    assert bool(st.check(FD.transform_to(st)(flow.randn(2, 5))).all())
    assert isinstance(FD.transform_to(C.lower_cholesky), FT.LowerCholeskyTransform)
    with pytest.raises(NotImplementedError):
        FD.biject_to(C.lower_cholesky)
    reg = FD.constraint_registry.ConstraintRegistry()
    reg.register(C.positive, lambda c: FT.SoftplusTransform())
    assert isinstance(reg(C.greater_than(0.0)), FT.SoftplusTransform)


def test_module_imports():
    from oneflow.distributions.transforms import TanhTransform
    from oneflow.distributions.transformed_distribution import TransformedDistribution
    assert TanhTransform is FD.TanhTransform and TransformedDistribution is FD.TransformedDistribution
