"""Acceptance tests for the autograd Python API (part 1; in-place, graphs vs torch and
autograd.Function are in test_autograd_graphs.py).

``Tensor.backward``, ``flow.autograd.backward`` / ``grad``, ``.grad`` /
``grad_fn`` / ``is_leaf`` / ``requires_grad``, ``retain_grad``, hooks,
``detach`` and the grad-mode context managers.  Behaviour follows PyTorch:
gradient values are compared with numpy or with torch run in the test itself,
and error messages are checked by substrings that PyTorch's messages contain too.
"""

import warnings

import numpy as np
import pytest
import torch

from autograd_util import arr, close, leaf, np_of, xs
from harness import flow, oneflow_only


# ---------------------------------------------------------------------------
# Errors: (id, action, substring of the message).  All are RuntimeError.


def _backward_twice(make):
    z = make(xs()).sum()
    z.backward()
    z.backward()


def _grad_twice():
    x = xs()
    z = (x * x).sum()
    flow.autograd.grad(z, x)
    flow.autograd.grad(z, x)


def _set_requires_grad_on_non_leaf():
    y = xs() * 2
    y.requires_grad = False


def _assign_grad_of_wrong_shape():
    x = xs(1.0, 2.0, 3.0)
    x.grad = flow.ones(4)


def _modify_saved_input():
    a = xs() * 1
    b = a.sin()  # sin saves its input
    a.mul_(2)
    b.sum().backward()


def _modify_saved_output():
    y = xs().exp()  # exp saves its output
    y.add_(1)
    y.sum().backward()


def _mul_by_own_detach():
    # detach() shares the version counter, so the saved ``other`` is stale.
    y = xs() * 2
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

    Bad.apply(xs(), xs()).sum().backward()


def _unused_input():
    x, u = xs(), xs()
    flow.autograd.grad((x * 2).sum(), [x, u])


def _grad_of_non_scalar():
    x = xs()
    flow.autograd.grad(x * 2, x)


LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation"
SECOND_TIME = "Trying to backward through the graph a second time"
ERROR_CASES = [
    ("backward-non-scalar", lambda: (xs() * 2).backward(),
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
    ("inplace-leaf-add", lambda: xs().add_(1), LEAF_INPLACE),
    ("inplace-leaf-mul", lambda: xs().mul_(2), LEAF_INPLACE),
    ("inplace-leaf-setitem", lambda: xs().__setitem__(0, 5.0), LEAF_INPLACE),
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
    x = xs(1.0, 2.0, 3.0)
    (x * x).sum().backward()
    close(x.grad, [2.0, 4.0, 6.0])


def test_backward_non_scalar_with_gradient():
    x = xs(1.0, 2.0, 3.0)
    (x * 3).backward(flow.tensor([1.0, 0.5, -1.0]))
    close(x.grad, [3.0, 1.5, -3.0])
    w = flow.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (w * w).backward(gradient=flow.ones(2, 2))
    close(w.grad, [[2.0, 4.0], [6.0, 8.0]])


def test_backward_accumulates_with_retain_graph():
    x, y = xs(1.0, 2.0), xs(3.0, 4.0)
    z = (x * y).sum()
    z.backward(retain_graph=True)
    close(x.grad, [3.0, 4.0])
    z.backward()
    close(x.grad, [6.0, 8.0])
    close(y.grad, [2.0, 4.0])


def test_backward_accumulates_over_separate_graphs():
    x = xs(1.0, 2.0)
    (x * 2).sum().backward()
    (x * x).sum().backward()
    close(x.grad, [4.0, 6.0])


def test_backward_create_graph_gives_differentiable_grad():
    x = xs(1.0, 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about a reference cycle
        (x ** 3).sum().backward(create_graph=True)
    close(x.grad, [3.0, 12.0])
    assert x.grad.requires_grad
    (g2,) = flow.autograd.grad(x.grad.sum(), x)
    close(g2, [6.0, 12.0])


def test_backward_create_graph_retains_graph_by_default():
    x = xs(1.0, 2.0)
    z = (x * x.exp()).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z.backward(create_graph=True)
        z.backward()  # retain_graph=None follows create_graph=True
    xn = np.array([1.0, 2.0])
    close(x.grad, 2 * (np.exp(xn) + xn * np.exp(xn)))


# ---------------------------------------------------------------------------
# flow.autograd.backward / flow.autograd.grad


def test_autograd_backward_list_of_scalars():
    x = xs(1.0, 2.0)
    flow.autograd.backward([(x * 2).sum(), (x * x).sum()])
    close(x.grad, [4.0, 6.0])


def test_autograd_backward_list_with_grad_tensors():
    x = xs(1.0, 2.0)
    flow.autograd.backward([x * 2, x * x], [flow.tensor([1.0, 10.0]), flow.tensor([1.0, -1.0])])
    close(x.grad, [2.0 + 2.0, 20.0 - 4.0])


def test_autograd_backward_keywords():
    x = xs(1.0, 2.0)
    y = x.exp()
    flow.autograd.backward(y, grad_tensors=flow.ones(2), retain_graph=True, create_graph=False)
    flow.autograd.backward(tensors=[y], grad_tensors=[flow.ones(2)])
    close(x.grad, 2 * np.exp([1.0, 2.0]))


def test_grad_returns_tuple_and_leaves_dot_grad_alone():
    x = xs(1.0, 2.0, 3.0)
    res = flow.autograd.grad((x * x).sum(), x)
    assert isinstance(res, tuple) and len(res) == 1
    close(res[0], [2.0, 4.0, 6.0])
    assert x.grad is None


def test_grad_multiple_inputs():
    x, y = xs(1.0, 2.0), xs(3.0, 5.0)
    gx, gy = flow.autograd.grad((x * y).sum(), [x, y])
    close(gx, [3.0, 5.0])
    close(gy, [1.0, 2.0])


def test_grad_with_grad_outputs():
    x = xs(1.0, 2.0)
    (g,) = flow.autograd.grad(x * x, x, grad_outputs=flow.tensor([1.0, 3.0]))
    close(g, [2.0, 12.0])


def test_grad_unused_input_allow_unused_gives_none():
    x, u = xs(), xs()
    gx, gu = flow.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    close(gx, [2.0, 2.0])
    assert gu is None


def test_grad_wrt_non_leaf_intermediate():
    x = xs(1.0, 2.0)
    h = x * 2
    (gh,) = flow.autograd.grad((h * h).sum(), h)
    close(gh, [4.0, 8.0])
    assert x.grad is None


def test_grad_retain_graph():
    x = xs(1.0, 2.0)
    z = (x * x).sum()
    close(flow.autograd.grad(z, x, retain_graph=True)[0], [2.0, 4.0])
    close(flow.autograd.grad(z, x)[0], [2.0, 4.0])


def test_grad_without_create_graph_is_not_differentiable():
    x = xs(1.0, 2.0)
    (g,) = flow.autograd.grad((x ** 3).sum(), x)
    assert not g.requires_grad and g.grad_fn is None


def test_grad_second_order():
    x = xs(1.0, -2.0, 3.0)
    (g,) = flow.autograd.grad((x ** 3).sum(), x, create_graph=True)
    close(g, [3.0, 12.0, 27.0])
    assert g.requires_grad and g.grad_fn is not None
    (g2,) = flow.autograd.grad(g.sum(), x)
    close(g2, [6.0, -12.0, 18.0])


def test_grad_third_order():
    x = xs(1.0, -2.0, 3.0)
    (g1,) = flow.autograd.grad((x ** 4).sum(), x, create_graph=True)
    (g2,) = flow.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = flow.autograd.grad(g2.sum(), x)
    close(g1, [4.0, -32.0, 108.0])
    close(g2, [12.0, 48.0, 108.0])
    close(g3, [24.0, -48.0, 72.0])


def test_gradient_penalty():
    xa, wa = arr(4, 3), arr(3, 2)

    def run(lib):
        x, w = leaf(lib, xa), leaf(lib, wa)
        (g,) = lib.autograd.grad(x.matmul(w).tanh().sum(), x, create_graph=True)
        penalty = (((g * g).sum(dim=1).sqrt() - 1) ** 2).mean()
        penalty.backward()
        return x, w, penalty

    (xf, wf, pf), (xt, wt, pt) = run(flow), run(torch)
    close(pf, pt)
    close(wf.grad, wt.grad)
    close(xf.grad, xt.grad)


@oneflow_only
def test_grad_out_grads_keyword_alias():
    x = xs(1.0, 2.0)
    (g,) = flow.autograd.grad(x * x, x, out_grads=flow.tensor([1.0, 3.0]))
    close(g, [2.0, 12.0])


# ---------------------------------------------------------------------------
# .grad, grad_fn, is_leaf, requires_grad


def test_grad_is_none_before_backward():
    x = xs()
    assert x.grad is None
    (x * 2).sum().backward()
    assert isinstance(x.grad, flow.Tensor)
    assert not x.grad.requires_grad


def test_grad_assign_then_accumulate():
    x = xs(1.0, 2.0)
    x.grad = flow.tensor([10.0, 20.0])
    close(x.grad, [10.0, 20.0])
    (x * 3).sum().backward()
    close(x.grad, [13.0, 23.0])


def test_grad_set_none_resets():
    x = xs(1.0, 2.0)
    (x * 3).sum().backward()
    x.grad = None
    assert x.grad is None
    (x * 2).sum().backward()
    close(x.grad, [2.0, 2.0])


def test_grad_fn_none_for_leaves_and_no_grad_results():
    assert flow.ones(2).grad_fn is None
    assert flow.ones(2, requires_grad=True).grad_fn is None
    y = flow.ones(2) * 3
    assert y.grad_fn is None and not y.requires_grad


def test_grad_fn_of_product():
    z = xs(1.0, 2.0) * xs(3.0, 4.0)
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
    x = xs(1.0, 2.0)
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward()
    close(h.grad, [4.0, 8.0])
    close(x.grad, [8.0, 16.0])


def test_non_leaf_grad_without_retain_grad_is_none():
    x = xs(1.0, 2.0)
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
    x = xs(1.0, 2.0)
    t = x if kind == "leaf" else x * 2
    return x, t, lambda: (t * t).sum().backward()


@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_hook_sees_gradient(kind):
    x, t, run = _hook_target(kind)
    seen = []
    t.register_hook(lambda g: seen.append(np_of(g).copy()))
    run()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], 2 * np_of(t))
    close(x.grad, 2 * np_of(t) * (1 if kind == "leaf" else 2))


@pytest.mark.parametrize("kind", ["leaf", "non-leaf"])
def test_hook_returning_tensor_replaces_gradient(kind):
    x, t, run = _hook_target(kind)
    t.register_hook(lambda g: g * 10)
    run()
    close(x.grad, 20 * np_of(t) * (1 if kind == "leaf" else 2))


def test_hook_returning_none_keeps_grad():
    x = xs(1.0, 2.0)
    h = x * 2
    h.register_hook(lambda g: None)
    (h * h).sum().backward()
    close(x.grad, [8.0, 16.0])


def test_hook_handle_remove():
    x = xs(1.0, 2.0)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1) or g * 100)
    handle.remove()
    (x * 3).sum().backward()
    assert calls == []
    close(x.grad, [3.0, 3.0])


def test_multiple_hooks_run_in_order_and_chain():
    x = xs(1.0, 2.0)
    h = x * 1
    order = []
    h.register_hook(lambda g: order.append(("first", np_of(g).tolist())) or g + 1)
    h.register_hook(lambda g: order.append(("second", np_of(g).tolist())) or g * 2)
    (h * 3).sum().backward()
    assert order == [("first", [3.0, 3.0]), ("second", [4.0, 4.0])]
    close(x.grad, [8.0, 8.0])


# ---------------------------------------------------------------------------
# detach


def test_detach_shares_memory():
    x = xs(1.0, 2.0, 3.0)
    d = x.detach()
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    d[0] = 10.0
    d.mul_(2)
    np.testing.assert_allclose(np_of(x), [20.0, 4.0, 6.0])


def test_detach_stops_gradient():
    x = xs(1.0, 2.0)
    (x * x.detach()).sum().backward()
    close(x.grad, [1.0, 2.0])


def test_detach_underscore():
    y = xs(1.0, 2.0) * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(np_of(y), [2.0, 4.0])


# ---------------------------------------------------------------------------
# Grad modes


DISABLING_MODES = {
    "no_grad": lambda: flow.no_grad(),
    "set_grad_enabled": lambda: flow.set_grad_enabled(False),
    "inference_mode": lambda: flow.inference_mode(),
}


@pytest.mark.parametrize("mode", list(DISABLING_MODES))
def test_disabling_mode_as_context(mode):
    x = xs()
    assert flow.is_grad_enabled()
    with DISABLING_MODES[mode]():
        assert not flow.is_grad_enabled()
        y = x * 2
    assert flow.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(np_of(y), [2.0, 4.0])
    assert (x * 2).requires_grad


@pytest.mark.parametrize("mode", list(DISABLING_MODES))
def test_disabling_mode_as_decorator(mode):
    @DISABLING_MODES[mode]()
    def f(t):
        assert not flow.is_grad_enabled()
        return t * 2

    y = f(xs())
    assert not y.requires_grad and y.grad_fn is None
    assert flow.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = xs()
    with flow.no_grad():
        with flow.enable_grad():
            assert flow.is_grad_enabled()
            y = x * 2
        assert not flow.is_grad_enabled()
        z = x * 2
    assert y.requires_grad and y.grad_fn is not None
    assert not z.requires_grad


def test_enable_grad_decorator():
    x = xs()

    @flow.enable_grad()
    def f(t):
        return t * 2

    with flow.no_grad():
        y = f(x)
        assert not flow.is_grad_enabled()
    y.sum().backward()
    close(x.grad, [2.0, 2.0])


def test_set_grad_enabled_context():
    x = xs()
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
        assert not (xs() * 2).requires_grad
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


@pytest.mark.parametrize("allow_unused", [False, True])
def test_grad_is_grads_batched_as_torch(allow_unused):
    # One vector-Jacobian product per leading entry of the grad_outputs, stacked (it was ignored:
    # a [3, 2, 2] seed of a [2, 2] output raised a shape mismatch).
    a = np.random.default_rng(0).standard_normal((2, 2)).astype(np.float32)
    res = {}
    for m in (torch, flow):
        x = m.tensor(a, requires_grad=True)
        w = m.tensor(a, requires_grad=True)
        out1, out2 = (x * x).sum(1), x.exp() * 2
        seeds = (m.arange(6.0).reshape(3, 2), m.arange(12.0).reshape(3, 2, 2))
        inputs = (x, w) if allow_unused else (x,)
        g = m.autograd.grad((out1, out2), inputs, seeds, is_grads_batched=True, allow_unused=allow_unused)
        res[m] = g
    assert len(res[flow]) == len(res[torch])
    for f, t in zip(res[flow], res[torch]):
        if t is None:
            assert f is None
        else:
            assert tuple(f.shape) == tuple(t.shape) == (3, 2, 2)
            np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
