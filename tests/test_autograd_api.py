"""Acceptance tests for the autograd Python API.

``Tensor.backward``, ``flow.autograd.backward`` / ``grad``, ``.grad`` /
``grad_fn`` / ``is_leaf`` / ``requires_grad``, ``retain_grad``, hooks,
``detach``, the grad-mode context managers, in-place rules, and custom
``flow.autograd.Function``.  Behaviour follows PyTorch: gradient values are
compared with numpy or with torch run in the test itself, and error messages
are checked by substrings that PyTorch's messages contain too.
"""

import warnings

import numpy as np
import pytest
import torch

from harness import flow, oneflow_only

RNG = np.random.RandomState(0)


def _arr(*shape):
    return RNG.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def _leaf(lib, arr):
    """A leaf of ``lib`` (flow or torch) that requires grad, holding ``arr``."""
    return lib.tensor(np.array(arr), requires_grad=True)


def _x(*values):
    return flow.tensor(list(values) or [1.0, 2.0], requires_grad=True)


def _np(t):
    return t.detach().numpy()


def _close(actual, expected, rtol=1e-5, atol=1e-6):
    assert actual is not None, "gradient is None"
    if isinstance(expected, torch.Tensor):
        expected = _np(expected)
    expected = np.asarray(expected, dtype=np.float64)
    assert tuple(actual.shape) == expected.shape, f"{tuple(actual.shape)} != {expected.shape}"
    np.testing.assert_allclose(_np(actual).astype(np.float64), expected, rtol=rtol, atol=atol)


def _compare_grads(fn, *arrays):
    """Run ``fn(lib, *leaves).sum().backward()`` with flow and with torch;
    compare the outputs and every leaf's gradient."""
    fl = [_leaf(flow, a) for a in arrays]
    th = [_leaf(torch, a) for a in arrays]
    out_f, out_t = fn(flow, *fl), fn(torch, *th)
    _close(out_f, out_t)
    out_f.sum().backward()
    out_t.sum().backward()
    for i, (f, t) in enumerate(zip(fl, th)):
        assert f.grad is not None, f"input {i} got no grad"
        _close(f.grad, t.grad)


# ---------------------------------------------------------------------------
# Errors: (id, action, substring of the message).  All are RuntimeError.


def _backward_twice(make):
    z = make(_x()).sum()
    z.backward()
    z.backward()


def _grad_twice():
    x = _x()
    z = (x * x).sum()
    flow.autograd.grad(z, x)
    flow.autograd.grad(z, x)


def _set_requires_grad_on_non_leaf():
    y = _x() * 2
    y.requires_grad = False


def _assign_grad_of_wrong_shape():
    x = _x(1.0, 2.0, 3.0)
    x.grad = flow.ones(4)


def _modify_saved_input():
    a = _x() * 1
    b = a.sin()  # sin saves its input
    a.mul_(2)
    b.sum().backward()


def _modify_saved_output():
    y = _x().exp()  # exp saves its output
    y.add_(1)
    y.sum().backward()


def _mul_by_own_detach():
    # detach() shares the version counter, so the saved ``other`` is stale.
    y = _x() * 2
    y.mul_(y.detach())
    y.sum().backward()


def _function_returning_too_many_grads():
    class Bad(flow.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, g, g

    Bad.apply(_x(), _x()).sum().backward()


def _unused_input():
    x, u = _x(), _x()
    flow.autograd.grad((x * 2).sum(), [x, u])


def _grad_of_non_scalar():
    x = _x()
    flow.autograd.grad(x * 2, x)


LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation"
SECOND_TIME = "Trying to backward through the graph a second time"
ERROR_CASES = [
    ("backward-non-scalar", lambda: (_x() * 2).backward(),
     "grad can be implicitly created only for scalar outputs"),
    ("grad-non-scalar", _grad_of_non_scalar, "grad can be implicitly created only for scalar outputs"),
    ("backward-twice-mul", lambda: _backward_twice(lambda x: x * x), SECOND_TIME),
    ("backward-twice-exp", lambda: _backward_twice(lambda x: x.exp()), SECOND_TIME),
    ("grad-twice", _grad_twice, SECOND_TIME),
    ("backward-no-grad-fn", lambda: flow.ones(3).sum().backward(),
     "does not require grad and does not have a grad_fn"),
    ("grad-unused-input", _unused_input, "appears to not have been used in the graph"),
    ("requires-grad-non-leaf", _set_requires_grad_on_non_leaf,
     "you can only change requires_grad flags of leaf variables"),
    ("int-requires-grad-method", lambda: flow.tensor([1, 2]).requires_grad_(),
     "only Tensors of floating point"),
    ("int-requires-grad-factory", lambda: flow.ones(2, dtype=flow.int64, requires_grad=True),
     "only Tensors of floating point"),
    ("grad-assign-wrong-shape", _assign_grad_of_wrong_shape, "size"),
    ("hook-on-no-grad-tensor", lambda: flow.ones(2).register_hook(lambda g: g),
     "cannot register a hook on a tensor that doesn't require gradient"),
    ("inplace-leaf-add", lambda: _x().add_(1), LEAF_INPLACE),
    ("inplace-leaf-mul", lambda: _x().mul_(2), LEAF_INPLACE),
    ("inplace-leaf-setitem", lambda: _x().__setitem__(0, 5.0), LEAF_INPLACE),
    ("inplace-view-of-leaf-index", lambda: flow.ones(3, 2, requires_grad=True)[0].mul_(2),
     VIEW_INPLACE),
    ("inplace-view-of-leaf-view", lambda: flow.ones(3, 2, requires_grad=True).view(6).add_(1),
     VIEW_INPLACE),
    ("modified-saved-input", _modify_saved_input, "modified by an inplace operation"),
    ("modified-saved-output", _modify_saved_output, "modified by an inplace operation"),
    ("mul-by-own-detach", _mul_by_own_detach, "modified by an inplace operation"),
    ("function-wrong-grad-count", _function_returning_too_many_grads,
     "incorrect number of gradients"),
]


@pytest.mark.parametrize("action,words", [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_error(action, words):
    with pytest.raises(RuntimeError) as info:
        action()
    assert words.lower() in str(info.value).lower(), str(info.value)
    assert flow.is_grad_enabled()


# ---------------------------------------------------------------------------
# Tensor.backward


def test_backward_scalar_loss():
    x = _x(1.0, 2.0, 3.0)
    (x * x).sum().backward()
    _close(x.grad, [2.0, 4.0, 6.0])


def test_backward_non_scalar_with_gradient():
    x = _x(1.0, 2.0, 3.0)
    (x * 3).backward(flow.tensor([1.0, 0.5, -1.0]))
    _close(x.grad, [3.0, 1.5, -3.0])
    w = flow.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (w * w).backward(gradient=flow.ones(2, 2))
    _close(w.grad, [[2.0, 4.0], [6.0, 8.0]])


def test_backward_accumulates_with_retain_graph():
    x, y = _x(1.0, 2.0), _x(3.0, 4.0)
    z = (x * y).sum()
    z.backward(retain_graph=True)
    _close(x.grad, [3.0, 4.0])
    z.backward()
    _close(x.grad, [6.0, 8.0])
    _close(y.grad, [2.0, 4.0])


def test_backward_accumulates_over_separate_graphs():
    x = _x(1.0, 2.0)
    (x * 2).sum().backward()
    (x * x).sum().backward()
    _close(x.grad, [4.0, 6.0])


def test_backward_create_graph_gives_differentiable_grad():
    x = _x(1.0, 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about a reference cycle
        (x ** 3).sum().backward(create_graph=True)
    _close(x.grad, [3.0, 12.0])
    assert x.grad.requires_grad
    (g2,) = flow.autograd.grad(x.grad.sum(), x)
    _close(g2, [6.0, 12.0])


def test_backward_create_graph_retains_graph_by_default():
    x = _x(1.0, 2.0)
    z = (x * x.exp()).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z.backward(create_graph=True)
        z.backward()  # retain_graph=None follows create_graph=True
    xn = np.array([1.0, 2.0])
    _close(x.grad, 2 * (np.exp(xn) + xn * np.exp(xn)))


# ---------------------------------------------------------------------------
# flow.autograd.backward / flow.autograd.grad


def test_autograd_backward_list_of_scalars():
    x = _x(1.0, 2.0)
    flow.autograd.backward([(x * 2).sum(), (x * x).sum()])
    _close(x.grad, [4.0, 6.0])


def test_autograd_backward_list_with_grad_tensors():
    x = _x(1.0, 2.0)
    flow.autograd.backward([x * 2, x * x], [flow.tensor([1.0, 10.0]), flow.tensor([1.0, -1.0])])
    _close(x.grad, [2.0 + 2.0, 20.0 - 4.0])


def test_autograd_backward_keywords():
    x = _x(1.0, 2.0)
    y = x.exp()
    flow.autograd.backward(y, grad_tensors=flow.ones(2), retain_graph=True, create_graph=False)
    flow.autograd.backward(tensors=[y], grad_tensors=[flow.ones(2)])
    _close(x.grad, 2 * np.exp([1.0, 2.0]))


def test_grad_returns_tuple_and_leaves_dot_grad_alone():
    x = _x(1.0, 2.0, 3.0)
    res = flow.autograd.grad((x * x).sum(), x)
    assert isinstance(res, tuple) and len(res) == 1
    _close(res[0], [2.0, 4.0, 6.0])
    assert x.grad is None


def test_grad_multiple_inputs():
    x, y = _x(1.0, 2.0), _x(3.0, 5.0)
    gx, gy = flow.autograd.grad((x * y).sum(), [x, y])
    _close(gx, [3.0, 5.0])
    _close(gy, [1.0, 2.0])


def test_grad_with_grad_outputs():
    x = _x(1.0, 2.0)
    (g,) = flow.autograd.grad(x * x, x, grad_outputs=flow.tensor([1.0, 3.0]))
    _close(g, [2.0, 12.0])


def test_grad_unused_input_allow_unused_gives_none():
    x, u = _x(), _x()
    gx, gu = flow.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    _close(gx, [2.0, 2.0])
    assert gu is None


def test_grad_wrt_non_leaf_intermediate():
    x = _x(1.0, 2.0)
    h = x * 2
    (gh,) = flow.autograd.grad((h * h).sum(), h)
    _close(gh, [4.0, 8.0])
    assert x.grad is None


def test_grad_retain_graph():
    x = _x(1.0, 2.0)
    z = (x * x).sum()
    _close(flow.autograd.grad(z, x, retain_graph=True)[0], [2.0, 4.0])
    _close(flow.autograd.grad(z, x)[0], [2.0, 4.0])


def test_grad_without_create_graph_is_not_differentiable():
    x = _x(1.0, 2.0)
    (g,) = flow.autograd.grad((x ** 3).sum(), x)
    assert not g.requires_grad and g.grad_fn is None


def test_grad_second_order():
    x = _x(1.0, -2.0, 3.0)
    (g,) = flow.autograd.grad((x ** 3).sum(), x, create_graph=True)
    _close(g, [3.0, 12.0, 27.0])
    assert g.requires_grad and g.grad_fn is not None
    (g2,) = flow.autograd.grad(g.sum(), x)
    _close(g2, [6.0, -12.0, 18.0])


def test_grad_third_order():
    x = _x(1.0, -2.0, 3.0)
    (g1,) = flow.autograd.grad((x ** 4).sum(), x, create_graph=True)
    (g2,) = flow.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = flow.autograd.grad(g2.sum(), x)
    _close(g1, [4.0, -32.0, 108.0])
    _close(g2, [12.0, 48.0, 108.0])
    _close(g3, [24.0, -48.0, 72.0])


def test_gradient_penalty():
    xa, wa = _arr(4, 3), _arr(3, 2)

    def run(lib):
        x, w = _leaf(lib, xa), _leaf(lib, wa)
        (g,) = lib.autograd.grad(x.matmul(w).tanh().sum(), x, create_graph=True)
        penalty = (((g * g).sum(dim=1).sqrt() - 1) ** 2).mean()
        penalty.backward()
        return x, w, penalty

    (xf, wf, pf), (xt, wt, pt) = run(flow), run(torch)
    _close(pf, pt)
    _close(wf.grad, wt.grad)
    _close(xf.grad, xt.grad)


@oneflow_only
def test_grad_out_grads_keyword_alias():
    x = _x(1.0, 2.0)
    (g,) = flow.autograd.grad(x * x, x, out_grads=flow.tensor([1.0, 3.0]))
    _close(g, [2.0, 12.0])


# ---------------------------------------------------------------------------
# .grad, grad_fn, is_leaf, requires_grad


def test_grad_is_none_before_backward():
    x = _x()
    assert x.grad is None
    (x * 2).sum().backward()
    assert isinstance(x.grad, flow.Tensor)
    assert not x.grad.requires_grad


def test_grad_assign_then_accumulate():
    x = _x(1.0, 2.0)
    x.grad = flow.tensor([10.0, 20.0])
    _close(x.grad, [10.0, 20.0])
    (x * 3).sum().backward()
    _close(x.grad, [13.0, 23.0])


def test_grad_set_none_resets():
    x = _x(1.0, 2.0)
    (x * 3).sum().backward()
    x.grad = None
    assert x.grad is None
    (x * 2).sum().backward()
    _close(x.grad, [2.0, 2.0])


def test_grad_fn_none_for_leaves_and_no_grad_results():
    assert flow.ones(2).grad_fn is None
    assert flow.ones(2, requires_grad=True).grad_fn is None
    y = flow.ones(2) * 3
    assert y.grad_fn is None and not y.requires_grad


def test_grad_fn_of_product():
    z = _x(1.0, 2.0) * _x(3.0, 4.0)
    assert z.grad_fn is not None
    name = z.grad_fn.name()
    assert isinstance(name, str)
    assert "Mul" in name and "Backward" in name, name
    nf = z.grad_fn.next_functions
    assert isinstance(nf, tuple) and len(nf) == 2
    assert all(isinstance(e, tuple) for e in nf)


def test_is_leaf():
    a = flow.ones(3)
    x = flow.ones(3, requires_grad=True)
    assert a.is_leaf and x.is_leaf
    assert (a * 2).is_leaf
    assert not (x * 2).is_leaf
    assert not (a + x).is_leaf
    assert (x * 2).detach().is_leaf
    assert x.detach().is_leaf


def test_requires_grad_property_and_setter():
    x = flow.ones(3)
    assert x.requires_grad is False
    x.requires_grad = True
    assert x.requires_grad is True and x.is_leaf
    y = x * 2
    assert y.requires_grad and y.grad_fn is not None
    x.requires_grad = False
    assert not (x * 2).requires_grad


def test_requires_grad_underscore_returns_self():
    x = flow.ones(3)
    assert x.requires_grad_() is x
    assert x.requires_grad
    assert x.requires_grad_(False) is x
    assert not x.requires_grad


# ---------------------------------------------------------------------------
# retain_grad


def test_retain_grad_on_non_leaf():
    x = _x(1.0, 2.0)
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward()
    _close(h.grad, [4.0, 8.0])
    _close(x.grad, [8.0, 16.0])


def test_non_leaf_grad_without_retain_grad_is_none():
    x = _x(1.0, 2.0)
    h = x * 2
    (h * h).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns on reading a non-leaf's .grad
        assert h.grad is None
    assert x.grad is not None


# ---------------------------------------------------------------------------
# register_hook


def _hook_target(kind):
    """(leaf x, tensor to hook, loss): d loss/d target is 2 * target * (2 if non-leaf)."""
    x = _x(1.0, 2.0)
    t = x if kind == "leaf" else x * 2
    return x, t, lambda: (t * t).sum().backward()


@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_hook_sees_gradient(kind):
    x, t, run = _hook_target(kind)
    seen = []
    t.register_hook(lambda g: seen.append(_np(g).copy()))
    run()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], 2 * _np(t))
    _close(x.grad, 2 * _np(t) * (1 if kind == "leaf" else 2))


@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_hook_returning_tensor_replaces_gradient(kind):
    x, t, run = _hook_target(kind)
    t.register_hook(lambda g: g * 10)
    run()
    _close(x.grad, 20 * _np(t) * (1 if kind == "leaf" else 2))


def test_hook_returning_none_keeps_grad():
    x = _x(1.0, 2.0)
    h = x * 2
    h.register_hook(lambda g: None)
    (h * h).sum().backward()
    _close(x.grad, [8.0, 16.0])


def test_hook_handle_remove():
    x = _x(1.0, 2.0)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1) or g * 100)
    handle.remove()
    (x * 3).sum().backward()
    assert calls == []
    _close(x.grad, [3.0, 3.0])


def test_multiple_hooks_run_in_order_and_chain():
    x = _x(1.0, 2.0)
    h = x * 1
    order = []
    h.register_hook(lambda g: order.append(("first", _np(g).tolist())) or g + 1)
    h.register_hook(lambda g: order.append(("second", _np(g).tolist())) or g * 2)
    (h * 3).sum().backward()
    assert order == [("first", [3.0, 3.0]), ("second", [4.0, 4.0])]
    _close(x.grad, [8.0, 8.0])


# ---------------------------------------------------------------------------
# detach


def test_detach_shares_memory():
    x = _x(1.0, 2.0, 3.0)
    d = x.detach()
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    d[0] = 10.0
    d.mul_(2)
    np.testing.assert_allclose(_np(x), [20.0, 4.0, 6.0])


def test_detach_stops_gradient():
    x = _x(1.0, 2.0)
    (x * x.detach()).sum().backward()
    _close(x.grad, [1.0, 2.0])


def test_detach_underscore():
    y = _x(1.0, 2.0) * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(_np(y), [2.0, 4.0])


# ---------------------------------------------------------------------------
# Grad modes


DISABLING_MODES = {
    "no_grad": lambda: flow.no_grad(),
    "set_grad_enabled": lambda: flow.set_grad_enabled(False),
    "inference_mode": lambda: flow.inference_mode(),
}


@pytest.mark.parametrize("mode", list(DISABLING_MODES))
def test_disabling_mode_as_context(mode):
    x = _x()
    assert flow.is_grad_enabled()
    with DISABLING_MODES[mode]():
        assert not flow.is_grad_enabled()
        y = x * 2
    assert flow.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(_np(y), [2.0, 4.0])
    assert (x * 2).requires_grad


@pytest.mark.parametrize("mode", list(DISABLING_MODES))
def test_disabling_mode_as_decorator(mode):
    @DISABLING_MODES[mode]()
    def f(t):
        assert not flow.is_grad_enabled()
        return t * 2

    y = f(_x())
    assert not y.requires_grad and y.grad_fn is None
    assert flow.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = _x()
    with flow.no_grad():
        with flow.enable_grad():
            assert flow.is_grad_enabled()
            y = x * 2
        assert not flow.is_grad_enabled()
        z = x * 2
    assert y.requires_grad and y.grad_fn is not None
    assert not z.requires_grad


def test_enable_grad_decorator():
    x = _x()

    @flow.enable_grad()
    def f(t):
        return t * 2

    with flow.no_grad():
        y = f(x)
        assert not flow.is_grad_enabled()
    y.sum().backward()
    _close(x.grad, [2.0, 2.0])


def test_set_grad_enabled_context():
    x = _x()
    with flow.set_grad_enabled(False):
        assert not flow.is_grad_enabled()
        y = x * 2
        with flow.set_grad_enabled(True):
            assert flow.is_grad_enabled()
            z = x * 2
        assert not flow.is_grad_enabled()
    assert flow.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None


def test_set_grad_enabled_plain_call():
    try:
        flow.set_grad_enabled(False)
        assert not flow.is_grad_enabled()
        assert not (_x() * 2).requires_grad
        flow.set_grad_enabled(True)
        assert flow.is_grad_enabled()
    finally:
        flow.set_grad_enabled(True)


@pytest.mark.parametrize("mode", list(DISABLING_MODES) + ["enable_grad"])
def test_grad_mode_restored_after_exception(mode):
    make = DISABLING_MODES.get(mode, flow.enable_grad)
    outer = flow.no_grad() if mode == "enable_grad" else flow.enable_grad()
    with outer:
        before = flow.is_grad_enabled()
        with pytest.raises(ValueError):
            with make():
                raise ValueError("boom")
        assert flow.is_grad_enabled() == before
    assert flow.is_grad_enabled()


def test_grad_mode_restored_after_exception_in_decorated_function():
    @flow.no_grad()
    def f():
        raise KeyError("boom")

    with pytest.raises(KeyError):
        f()
    assert flow.is_grad_enabled()


# ---------------------------------------------------------------------------
# In-place operations (their errors are in ERROR_CASES)


def test_inplace_on_leaf_allowed_under_no_grad_sgd_step():
    w = _x(1.0, 2.0, 3.0)
    w_id = id(w)
    (w * w).sum().backward()
    with flow.no_grad():
        w -= 0.1 * w.grad
    assert id(w) == w_id
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    np.testing.assert_allclose(_np(w), [0.8, 1.6, 2.4], rtol=1e-6)
    w.grad.zero_()
    np.testing.assert_allclose(_np(w.grad), [0.0, 0.0, 0.0])
    (w * w).sum().backward()
    _close(w.grad, [1.6, 3.2, 4.8])


def test_inplace_on_non_leaf_returns_self_with_grad_fn():
    y = _x() * 2
    assert y.add_(1) is y
    assert y.grad_fn is not None and not y.is_leaf


def test_setitem_with_value_requiring_grad():
    w = flow.tensor(1.5, requires_grad=True)
    y = flow.zeros(3)
    y[1] = w * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    (y * flow.tensor([1.0, 5.0, 7.0])).sum().backward()
    _close(w.grad, 10.0)


# ---------------------------------------------------------------------------
# Shapes and dtypes


def test_broadcast_gradients_reduce_to_input_shapes():
    xa, ya = _arr(3, 1), _arr(4)
    x, y = _leaf(flow, xa), _leaf(flow, ya)
    (x * y).sum().backward()
    _close(x.grad, np.full((3, 1), ya.sum()))
    _close(y.grad, np.full((4,), xa.sum()))


def test_mixed_dtype_gradients_keep_input_dtypes():
    x = flow.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    y = flow.tensor(np.array([3.0, 4.0], dtype=np.float64), requires_grad=True)
    z = x * y
    assert z.dtype == flow.float64
    z.sum().backward()
    assert x.grad.dtype == flow.float32
    assert y.grad.dtype == flow.float64
    _close(x.grad, [3.0, 4.0])
    _close(y.grad, [1.0, 2.0])


# ---------------------------------------------------------------------------
# Graphs whose gradients are compared with torch: (fn(lib, *leaves), input shapes)


def _inplace_chain(lib, x):
    y = x * 2
    y.add_(1)
    y.mul_(x)
    y.mul_(y.detach().clone())
    return y.exp()


def _setitem_scalar(lib, x):
    y = x * 1
    y[0] = 5.0
    return y * y


def _inplace_column_view(lib, x):
    y = x * 1
    y[:, 1].mul_(3)
    return y * y


def _inplace_transposed_view(lib, x):
    y = x * 2
    y.t()[0].mul_(3)
    return y.sin()


def _setitem_slice_requiring_grad(lib, x, v):
    y = x * 1
    y[1:3, 0] = v.tanh()
    return y * y


def _mlp(act):
    def fn(lib, x, w1, b1, w2, b2):
        h = getattr(x.matmul(w1) + b1, act)()
        return (h.matmul(w2) + b2).tanh()

    return fn


GRAPH_CASES = {
    "broadcast": (lambda lib, a, b, c: (a + b) * c - b, [(2, 1, 3), (4, 1), (3,)]),
    "python-scalars": (lambda lib, x: 2.5 * x - x / 4 + 1, [(3,)]),
    "same-tensor-twice": (lambda lib, x: x * x + x, [(4,)]),
    "transpose": (lambda lib, x: x.transpose(0, 1) * lib.tensor([1.0, 2.0]), [(2, 3)]),
    "reshape": (lambda lib, x: x.reshape(3, 2).exp(), [(2, 3)]),
    "slices": (lambda lib, x: x[:, 1:] * x[:, :2], [(2, 3)]),
    "expand": (lambda lib, x: x[:1].expand(4, 3) * x.sum(), [(2, 3)]),
    "view-unsqueeze": (lambda lib, x: x.view(6).unsqueeze(0).sin(), [(2, 3)]),
    "inplace-non-leaf": (_inplace_chain, [(5,)]),
    "setitem-scalar-non-leaf": (_setitem_scalar, [(3, 4)]),
    "inplace-view-of-non-leaf": (_inplace_column_view, [(3, 4)]),
    "inplace-transposed-view": (_inplace_transposed_view, [(3, 3)]),
    "setitem-value-requiring-grad": (_setitem_slice_requiring_grad, [(4, 2), (2,)]),
    "mlp-relu": (_mlp("relu"), [(4, 3), (3, 5), (5,), (5, 2), (2,)]),
    "mlp-tanh": (_mlp("tanh"), [(4, 3), (3, 5), (5,), (5, 2), (2,)]),
}


@pytest.mark.parametrize("name", list(GRAPH_CASES))
def test_graph_gradients_match_torch(name):
    fn, shapes = GRAPH_CASES[name]
    _compare_grads(fn, *[_arr(*shape) for shape in shapes])


# ---------------------------------------------------------------------------
# flow.autograd.Function


class Exp(flow.autograd.Function):
    saved_type = None

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensors
        Exp.saved_type = type(saved)
        (y,) = saved
        return grad * y


def test_function_exp_example():
    Exp.saved_type = None
    xa = _arr(2, 3)
    x = _leaf(flow, xa)
    y = Exp.apply(x)
    assert y.grad_fn is not None and y.requires_grad
    np.testing.assert_allclose(_np(y), np.exp(xa), rtol=1e-6)
    y.sum().backward()
    _close(x.grad, np.exp(xa))
    assert Exp.saved_type is tuple


def test_function_in_larger_graph():
    xa = _arr(4)
    xf, xt = _leaf(flow, xa), _leaf(torch, xa)
    (Exp.apply(xf * 2).sin() * Exp.apply(xf)).sum().backward()
    ((xt * 2).exp().sin() * xt.exp()).sum().backward()
    _close(xf.grad, xt.grad)


def test_function_without_grad_input_gives_no_grad_fn():
    y = Exp.apply(flow.tensor([0.0, 1.0]))
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(_np(y), np.exp([0.0, 1.0]), rtol=1e-6)


def test_function_non_tensor_arg():
    class Scale(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x, alpha):
            ctx.alpha = alpha
            return x * alpha

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.alpha, None

    x = _x(1.0, 2.0)
    y = Scale.apply(x, 4.0)
    np.testing.assert_allclose(_np(y), [4.0, 8.0])
    y.sum().backward()
    _close(x.grad, [4.0, 4.0])


def test_function_multiple_inputs_and_needs_input_grad():
    seen = {}

    class MulAdd(flow.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, c):
            seen["needs"] = tuple(ctx.needs_input_grad)
            ctx.save_for_backward(a, b)
            return a * b + c

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            ga = grad * b if ctx.needs_input_grad[0] else None
            gb = grad * a if ctx.needs_input_grad[1] else None
            return ga, gb, None

    a, b = _x(1.0, 2.0), flow.tensor([3.0, 4.0])
    out = MulAdd.apply(a, b, 1.5)
    assert seen["needs"] == (True, False, False)
    np.testing.assert_allclose(_np(out), [4.5, 9.5])
    out.sum().backward()
    _close(a.grad, [3.0, 4.0])
    assert b.grad is None


def test_function_multiple_outputs():
    class TwoWays(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x * x

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return 2 * g1 + 2 * x * g2

    x = _x(1.0, 2.0)
    p, q = TwoWays.apply(x)
    assert p.grad_fn is not None and q.grad_fn is not None
    (p * 3 + q).sum().backward()
    _close(x.grad, [6.0 + 2.0, 6.0 + 4.0])


def test_function_mark_non_differentiable():
    class WithMask(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            mask = (x > 0).to(x.dtype)
            ctx.mark_non_differentiable(mask)
            return x * 1, mask

        @staticmethod
        def backward(ctx, g_vals, g_mask):
            return g_vals

    x = _x(-1.0, 2.0)
    vals, mask = WithMask.apply(x)
    assert vals.requires_grad and not mask.requires_grad
    np.testing.assert_allclose(_np(mask), [0.0, 1.0])
    (vals * 5).sum().backward()
    _close(x.grad, [5.0, 5.0])


# ---------------------------------------------------------------------------
# Training steps


def test_mlp_sgd_steps_match_torch():
    arrays = [_arr(3, 5), _arr(5), _arr(5, 1), _arr(1)]
    xa, target = _arr(4, 3), _arr(4, 1)

    def train(lib):
        x, tgt = lib.tensor(xa), lib.tensor(target)
        params = [_leaf(lib, a) for a in arrays]
        w1, b1, w2, b2 = params
        losses = []
        for _ in range(3):
            loss = (((x.matmul(w1) + b1).relu().matmul(w2) + b2 - tgt) ** 2).mean()
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p -= 0.1 * p.grad
                    p.grad = None
            losses.append(float(loss.item()))
        return losses, params

    (lf, pf), (lt, pt) = train(flow), train(torch)
    np.testing.assert_allclose(lf, lt, rtol=1e-5)
    for a, b in zip(pf, pt):
        _close(a, b)
