"""oneflow.autograd.functional against torch.autograd.functional: vjp, jvp, jacobian, hessian,
vhp, hvp over one and several inputs / outputs, create_graph, strict mode and argument errors."""

import numpy as np
import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow.autograd.functional")
RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4,))
V3 = RNG.standard_normal((3,))


def f_one(L):
    return lambda x: (x * x).sum(1).sin() if x.dim() == 2 else x.exp() * 2


def f_two(L):
    return lambda x, y: ((x @ y).tanh(), (x.sum(0) * y).cos())


def scalar(L):
    return lambda x, y: ((x @ y).pow(3).sum() + (x.sin() * y).sum())


def _np(t):
    return tuple(_np(x) for x in t) if isinstance(t, tuple) else t.detach().numpy()


def _close(a, b):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
        return
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-8)


def both(name, fn, inputs, *args, **kw):
    F, T = flow.autograd.functional, torch.autograd.functional
    conv = lambda L, x: tuple(L.tensor(i) for i in x) if isinstance(x, tuple) else L.tensor(x)  # noqa: E731
    fa = [conv(flow, a) if isinstance(a, (np.ndarray, tuple)) else a for a in args]
    ta = [conv(torch, a) if isinstance(a, (np.ndarray, tuple)) else a for a in args]
    got = getattr(F, name)(fn(flow), conv(flow, inputs), *fa, **kw)
    want = getattr(T, name)(fn(torch), conv(torch, inputs), *ta, **kw)
    _close(got, want)
    return got


def test_vjp_and_jvp():
    both("vjp", f_one, A, V3)
    both("vjp", f_two, (A, B), (V3, B.copy()))
    both("jvp", f_one, A, A.copy())
    both("jvp", f_two, (A, B), (A.copy(), B.copy()))
    both("vjp", lambda L: lambda x: x.sum(), A)  # v None for a scalar output


@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_and_hessian(create_graph):
    both("jacobian", f_one, A, create_graph=create_graph)
    both("jacobian", f_one, B, create_graph=create_graph)
    both("jacobian", f_two, (A, B), create_graph=create_graph)
    both("hessian", scalar, (A, B), create_graph=create_graph)
    both("hessian", lambda L: lambda x: (x.pow(3) * 2).sum(), B, create_graph=create_graph)
    both("vhp", scalar, (A, B), (A.copy(), B.copy()), create_graph=create_graph)
    both("hvp", scalar, (A, B), (A.copy(), B.copy()), create_graph=create_graph)


def test_create_graph_keeps_the_graph():
    x = flow.tensor(B, requires_grad=True)
    j = flow.autograd.functional.jacobian(lambda t: t.pow(3), x, create_graph=True)
    j.sum().backward()  # d/dx of sum(diag(3 x^2)) = 6 x
    np.testing.assert_allclose(x.grad.numpy(), 6 * B, rtol=1e-6)
    h = flow.autograd.functional.jacobian(lambda t: t.pow(3), x)
    assert not h.requires_grad


def test_strict_and_errors():
    F = flow.autograd.functional
    x, y = flow.tensor(A), flow.tensor(B)
    j = F.jacobian(lambda a, b: a.sum() * 2, (x, y))
    assert float(j[1].abs().sum()) == 0.0  # independent input: zeros
    with pytest.raises(RuntimeError, match="independent"):
        F.jacobian(lambda a, b: a.sum() * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="independent"):
        F.vjp(lambda a, b: a.sum() * 2, (x, y), strict=True)
    with pytest.raises(TypeError):
        F.jacobian(lambda a: a, [x, 3])
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.vjp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="shape"):
        F.jvp(lambda a: a * 2, x, flow.ones(2))
    with pytest.raises(RuntimeError, match="single element"):
        F.hessian(lambda a: a * 2, y)


def test_gradcheck_and_gradgradcheck():
    A64 = flow.tensor(A, requires_grad=True)
    B64 = flow.tensor(B, requires_grad=True)
    assert flow.autograd.gradcheck(lambda x, y: ((x @ y).tanh(), x.sin().sum(0) * y), (A64, B64))
    assert flow.autograd.gradgradcheck(lambda x, y: (x @ y).pow(3), (A64, B64))

    class WrongGrad(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3  # wrong on purpose

    with pytest.raises(flow.autograd.GradcheckError, match="Jacobian mismatch"):
        flow.autograd.gradcheck(WrongGrad.apply, (B64,))
    assert flow.autograd.gradcheck(WrongGrad.apply, (B64,), raise_exception=False) is False
    with pytest.warns(UserWarning, match="double precision"):
        flow.autograd.gradcheck(lambda x: x * 2, (flow.tensor(B.astype(np.float32), requires_grad=True),),
                                eps=1e-3, atol=1e-2)
    with pytest.raises(ValueError):
        flow.autograd.gradcheck(lambda x: x * 2, (flow.tensor(B),))


def test_detect_anomaly():
    import warnings

    def run(L):
        x = L.tensor([0.0, 1.0], requires_grad=True)
        y = (x.sqrt() * 0).sum()  # sqrt's gradient at 0 is inf; times 0: NaN
        y.backward()

    for L in (flow, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with L.autograd.detect_anomaly():
                with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output"):
                    run(L)
        run(L)  # off again: no error
    assert not flow.is_anomaly_enabled()
    with flow.autograd.set_detect_anomaly(True):
        assert flow.is_anomaly_enabled()
        with flow.autograd.set_detect_anomaly(False):
            run(flow)
    assert not flow.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with flow.autograd.detect_anomaly(check_nan=False):
            run(flow)  # checks off


# ---------------------------------------------------------------------------------------------
# Tensor.register_post_accumulate_grad_hook


def _post_hook_run(lib):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []

    def hook(t):
        seen.append(t.grad.clone())  # the accumulated gradient is there already
        with lib.no_grad():
            t.sub_(0.1 * t.grad)  # an optimizer step in backward
            t.grad = None

    h = w.register_post_accumulate_grad_hook(hook)
    (w * w).sum().backward()
    (w * 3).sum().backward()
    h.remove()
    (w * 5).sum().backward()  # removed: .grad accumulates, no step
    return [s.numpy() for s in seen], w.detach().numpy(), w.grad.numpy()


def test_post_accumulate_grad_hook_matches_torch():
    got, want = _post_hook_run(flow), _post_hook_run(torch)
    assert len(got[0]) == len(want[0]) == 2
    for g, w in zip(got[0], want[0]):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def test_post_accumulate_grad_hook_order_and_errors():
    w = flow.ones(2, requires_grad=True)
    calls = []
    w.register_hook(lambda g: calls.append("pre") or g * 2)
    w.register_post_accumulate_grad_hook(lambda t: calls.append(("post", t.grad.numpy().tolist())))
    w.sum().backward()
    assert calls == ["pre", ("post", [2.0, 2.0])]
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        flow.ones(2).register_post_accumulate_grad_hook(lambda t: None)
    v = flow.ones(2, requires_grad=True)
    v.register_post_accumulate_grad_hook(lambda t: t)
    with pytest.raises(RuntimeError, match="should return None"):
        v.sum().backward()
