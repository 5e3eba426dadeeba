"""Autograd acceptance tests (part 2): in-place rules, shapes/dtypes of gradients, whole
graphs compared with torch, and custom ``flow.autograd.Function``.  See test_autograd_api.py.
"""

import numpy as np
import pytest
import torch

from autograd_util import arr, close, compare_grads, leaf, np_of, xs
from harness import flow


# ---------------------------------------------------------------------------
# In-place operations (their errors are in ERROR_CASES)


def test_inplace_on_leaf_allowed_under_no_grad_sgd_step():
    w = xs(1.0, 2.0, 3.0)
    w_id = id(w)
    (w * w).sum().backward()
    with flow.no_grad():
        w -= 0.1 * w.grad
    assert id(w) == w_id
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    np.testing.assert_allclose(np_of(w), [0.8, 1.6, 2.4], rtol=1e-6)
    w.grad.zero_()
    np.testing.assert_allclose(np_of(w.grad), [0.0, 0.0, 0.0])
    (w * w).sum().backward()
    close(w.grad, [1.6, 3.2, 4.8])


def test_inplace_on_non_leaf_returns_self_with_grad_fn():
    y = xs() * 2
    assert y.add_(1) is y
    assert y.grad_fn is not None and not y.is_leaf


def test_setitem_with_value_requiring_grad():
    w = flow.tensor(1.5, requires_grad=True)
    y = flow.zeros(3)
    y[1] = w * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    (y * flow.tensor([1.0, 5.0, 7.0])).sum().backward()
    close(w.grad, 10.0)


# ---------------------------------------------------------------------------
# Shapes and dtypes


def test_broadcast_gradients_reduce_to_input_shapes():
    xa, ya = arr(3, 1), arr(4)
    x, y = leaf(flow, xa), leaf(flow, ya)
    (x * y).sum().backward()
    close(x.grad, np.full((3, 1), ya.sum()))
    close(y.grad, np.full((4,), xa.sum()))


def test_mixed_dtype_gradients_keep_input_dtypes():
    x = flow.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    y = flow.tensor(np.array([3.0, 4.0], dtype=np.float64), requires_grad=True)
    z = x * y
    assert z.dtype == flow.float64
    z.sum().backward()
    assert x.grad.dtype == flow.float32
    assert y.grad.dtype == flow.float64
    close(x.grad, [3.0, 4.0])
    close(y.grad, [1.0, 2.0])


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
    compare_grads(fn, *[arr(*shape) for shape in shapes])


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
    xa = arr(2, 3)
    x = leaf(flow, xa)
    y = Exp.apply(x)
    assert y.grad_fn is not None and y.requires_grad
    np.testing.assert_allclose(np_of(y), np.exp(xa), rtol=1e-6)
    y.sum().backward()
    close(x.grad, np.exp(xa))
    assert Exp.saved_type is tuple


def test_function_in_larger_graph():
    xa = arr(4)
    xf, xt = leaf(flow, xa), leaf(torch, xa)
    (Exp.apply(xf * 2).sin() * Exp.apply(xf)).sum().backward()
    ((xt * 2).exp().sin() * xt.exp()).sum().backward()
    close(xf.grad, xt.grad)


def test_function_without_grad_input_gives_no_grad_fn():
    y = Exp.apply(flow.tensor([0.0, 1.0]))
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(np_of(y), np.exp([0.0, 1.0]), rtol=1e-6)


def test_function_non_tensor_arg():
    class Scale(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x, alpha):
            ctx.alpha = alpha
            return x * alpha

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.alpha, None

    x = xs(1.0, 2.0)
    y = Scale.apply(x, 4.0)
    np.testing.assert_allclose(np_of(y), [4.0, 8.0])
    y.sum().backward()
    close(x.grad, [4.0, 4.0])


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

    a, b = xs(1.0, 2.0), flow.tensor([3.0, 4.0])
    out = MulAdd.apply(a, b, 1.5)
    assert seen["needs"] == (True, False, False)
    np.testing.assert_allclose(np_of(out), [4.5, 9.5])
    out.sum().backward()
    close(a.grad, [3.0, 4.0])
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

    x = xs(1.0, 2.0)
    p, q = TwoWays.apply(x)
    assert p.grad_fn is not None and q.grad_fn is not None
    (p * 3 + q).sum().backward()
    close(x.grad, [6.0 + 2.0, 6.0 + 4.0])


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

    x = xs(-1.0, 2.0)
    vals, mask = WithMask.apply(x)
    assert vals.requires_grad and not mask.requires_grad
    np.testing.assert_allclose(np_of(mask), [0.0, 1.0])
    (vals * 5).sum().backward()
    close(x.grad, [5.0, 5.0])


# ---------------------------------------------------------------------------
# Training steps


def test_mlp_sgd_steps_match_torch():
    arrays = [arr(3, 5), arr(5), arr(5, 1), arr(1)]
    xa, target = arr(4, 3), arr(4, 1)

    def train(lib):
        x, tgt = lib.tensor(xa), lib.tensor(target)
        params = [leaf(lib, a) for a in arrays]
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
        close(a, b)
