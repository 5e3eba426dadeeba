"""autograd.graph.saved_tensors_hooks / save_on_cpu / disable_saved_tensors_hooks against PyTorch:
the hooks really carry the saved values (a pack that scales changes the gradient as in PyTorch),
every packed tensor is unpacked, save_on_cpu keeps gradients, nesting, autograd.Function's saved
tensors, retain_graph, and the errors."""
import numpy as np
import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow saved tensor hooks")


def _lib_graph(lib):
    return lib.autograd.graph


def _mlp_loss(lib, x, w1, w2):
    h = lib.tanh(x @ w1)
    return (lib.sigmoid(h @ w2) * h.sum(1, keepdim=True)).exp().sum()


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) * 0.5 for s in ((4, 5), (5, 6), (6, 3))]


def test_hooks_carry_the_saved_values_as_torch():
    # pack doubles what is saved: the gradients of t * c (c saved) and t.exp() (its result saved)
    # double, in PyTorch as here.
    x = np.linspace(-1, 1, 7).astype(np.float32)
    c = np.arange(7, dtype=np.float32)
    grads = []
    for lib in (flow, torch):
        t = lib.tensor(x, requires_grad=True)
        with _lib_graph(lib).saved_tensors_hooks(lambda s: s * 2, lambda s: s):
            y = (t * lib.tensor(c)).sum() + t.exp().sum()
        y.backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[0], 2 * c + 2 * np.exp(x), rtol=1e-5)


def test_every_packed_tensor_is_unpacked_once_and_gradients_kept():
    arrs = _arrays()
    plain = [flow.tensor(a, requires_grad=True) for a in arrs]
    _mlp_loss(flow, *plain).backward()
    log = {"pack": 0, "unpack": 0}

    def pack(t):
        log["pack"] += 1
        assert not flow.is_grad_enabled()  # hooks run with grad mode off
        return ("boxed", t)

    def unpack(box):
        log["unpack"] += 1
        return box[1]

    hooked = [flow.tensor(a, requires_grad=True) for a in arrs]
    with flow.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = _mlp_loss(flow, *hooked)
    assert log["pack"] > 0 and log["unpack"] == 0
    loss.backward()
    assert log["unpack"] == log["pack"]
    for a, b in zip(hooked, plain):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    tref = [torch.tensor(a, requires_grad=True) for a in arrs]
    _mlp_loss(torch, *tref).backward()
    for a, b in zip(hooked, tref):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_save_on_cpu_keeps_gradients_and_copies():
    arrs = _arrays(1)
    ref = [flow.tensor(a, requires_grad=True) for a in arrs]
    _mlp_loss(flow, *ref).backward()
    got = [flow.tensor(a, requires_grad=True) for a in arrs]
    with flow.autograd.graph.save_on_cpu(pin_memory=False):
        loss = _mlp_loss(flow, *got)
    with flow.no_grad():
        got[0].mul_(0)  # a copy was saved: the in-place change neither raises nor leaks in
    loss.backward()
    for a, b in zip(got[1:], ref[1:]):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_nesting_retain_graph_and_function_ctx():
    calls = []
    x = flow.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with flow.autograd.graph.saved_tensors_hooks(lambda t: calls.append("outer") or t, lambda t: t):
        with flow.autograd.graph.saved_tensors_hooks(lambda t: calls.append("inner") or t, lambda t: t):
            y = (x * x).sum()
        z = x.exp().sum()
    assert set(calls) == {"outer", "inner"} and calls.index("inner") < calls.index("outer")
    y.backward(retain_graph=True)
    y.backward()  # unpacked twice under retain_graph
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.array([1, 2, 3]), rtol=1e-6)
    z.backward()

    class Cube(flow.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t ** 3

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 3 * t * t * g

    seen = []
    w = flow.tensor([2.0], requires_grad=True)
    with flow.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t.shape) or t * 0 + 1, lambda t: t):
        Cube.apply(w).sum().backward()
    assert seen and w.grad.item() == 3.0  # the Function's saved tensor came through the hooks


def test_errors():
    x = flow.ones(2, requires_grad=True)
    with flow.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 5):
        y = (x * x).sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        y.backward()
    with flow.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with flow.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with flow.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again
        pass

    def bad_pack(t):
        raise ValueError("pack failed")

    with flow.autograd.graph.saved_tensors_hooks(bad_pack, lambda t: t):
        with pytest.raises(ValueError, match="pack failed"):
            x * x
    w = flow.tensor([1.5], requires_grad=True)
    with flow.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        g = (w * w * w).sum()
    (dw,) = flow.autograd.grad(g, w, create_graph=False)
    np.testing.assert_allclose(dw.numpy(), [3 * 1.5 ** 2])
    with flow.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        g = (w * w * w).sum()
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        flow.autograd.grad(g, w, create_graph=True)
