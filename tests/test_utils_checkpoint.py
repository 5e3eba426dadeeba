"""oneflow.utils.checkpoint: the checkpointed run gives the plain run's outputs and gradients
(dropout replayed under the saved random state), in both use_reentrant modes, with keyword
arguments, tuple outputs, retain_graph, checkpoint_sequential, and no recording under no_grad."""

import subprocess
import sys

import numpy as np
import pytest

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow.utils.checkpoint")
X = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)


def _pair():
    flow.manual_seed(0)
    m = flow.nn.Sequential(flow.nn.Linear(8, 16), flow.nn.ReLU(), flow.nn.Dropout(0.3), flow.nn.Linear(16, 16),
                           flow.nn.Tanh(), flow.nn.Linear(16, 4))
    plain = __import__("copy").deepcopy(m)
    return m, plain


def _two_outputs(a, b, scale=1.0):
    return a * scale + b, (a * b).sin()


def _grads(m):
    return [p.grad.numpy() for p in m.parameters()]


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_matches_plain_run(reentrant):
    from oneflow.utils.checkpoint import checkpoint
    m, plain = _pair()
    x1, x2 = flow.tensor(X, requires_grad=True), flow.tensor(X, requires_grad=True)
    flow.manual_seed(1)
    y1 = checkpoint(m, x1, use_reentrant=reentrant)
    flow.manual_seed(1)
    y2 = plain(x2)
    np.testing.assert_array_equal(y1.detach().numpy(), y2.detach().numpy())
    y1.pow(2).sum().backward(), y2.pow(2).sum().backward()
    for g1, g2 in zip(_grads(m), _grads(plain)):
        np.testing.assert_allclose(g1, g2, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_non_reentrant_gives_parameter_grads_without_input_grad():
    from oneflow.utils.checkpoint import checkpoint
    m, plain = _pair()
    flow.manual_seed(3)
    checkpoint(m, flow.tensor(X), use_reentrant=False).sum().backward()
    flow.manual_seed(3)
    plain(flow.tensor(X)).sum().backward()
    for g1, g2 in zip(_grads(m), _grads(plain)):
        np.testing.assert_allclose(g1, g2, rtol=1e-6, atol=1e-7)
    with pytest.warns(UserWarning, match="requires_grad"):
        out = checkpoint(m, flow.tensor(X), use_reentrant=True)
    assert not out.requires_grad  # PyTorch's reentrant contract: nothing recorded


def test_kwargs_tuple_outputs_retain_graph_and_no_grad():
    from oneflow.utils.checkpoint import checkpoint
    import torch

    def f(L):
        return _two_outputs

    a, b = flow.tensor(X, requires_grad=True), flow.tensor(2 * X, requires_grad=True)
    o1, o2 = checkpoint(f(flow), a, b, scale=3.0, use_reentrant=False)
    loss = o1.sum() + o2.pow(2).sum()
    loss.backward(retain_graph=True)
    loss.backward()  # the recomputation runs again (the function is alive: a module-level one)
    ta, tb = torch.tensor(X, requires_grad=True), torch.tensor(2 * X, requires_grad=True)
    t1, t2 = f(torch)(ta, tb, 3.0)
    (2 * (t1.sum() + t2.pow(2).sum())).backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError):
        checkpoint(f(flow), a, b, scale=3.0, use_reentrant=True)
    with flow.no_grad():
        out = checkpoint(f(flow), a, b, use_reentrant=False)[0]
    assert out.grad_fn is None


@pytest.mark.parametrize("segments", [1, 2, 3, 10])
def test_checkpoint_sequential(segments):
    from oneflow.utils.checkpoint import checkpoint_sequential
    m, plain = _pair()
    flow.manual_seed(2)
    y1 = checkpoint_sequential(m, segments, flow.tensor(X), use_reentrant=False)
    flow.manual_seed(2)
    y2 = plain(flow.tensor(X))
    np.testing.assert_array_equal(y1.detach().numpy(), y2.detach().numpy())
    y1.sum().backward(), y2.sum().backward()
    for g1, g2 in zip(_grads(m), _grads(plain)):
        np.testing.assert_allclose(g1, g2, rtol=1e-6, atol=1e-7)


def test_no_leak_report_at_exit():
    # The graph node keeps the user's function only weakly after backward: a script whose last
    # loss stays global exits without nanobind's leak report.
    code = ("import oneflow as flow\nfrom oneflow.utils.checkpoint import checkpoint\n"
            "m = flow.nn.Linear(4, 4)\nloss = checkpoint(m, flow.ones(2, 4), use_reentrant=False).sum()\n"
            "loss.backward()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "leaked" not in r.stderr, r.stderr


def test_context_fn_wraps_the_first_run_and_each_recomputation():
    import contextlib

    from oneflow.utils import checkpoint as cp

    log = []

    @contextlib.contextmanager
    def tag(name):
        log.append(f"enter {name}")
        yield
        log.append(f"exit {name}")

    lin = flow.nn.Linear(3, 3)
    x = flow.randn(2, 3, requires_grad=True)
    def f(t):  # (alive for the second backward: the node holds it weakly after the first)
        return lin(t).relu()

    out = cp.checkpoint(f, x, use_reentrant=False, context_fn=lambda: (tag("forward"), tag("recompute")))
    assert log == ["enter forward", "exit forward"]
    out.sum().backward(retain_graph=True)
    assert log[2:] == ["enter recompute", "exit recompute"]
    out.sum().backward()  # a second recomputation asks context_fn again
    assert log[4:] == ["enter recompute", "exit recompute"]
    ref = flow.randn(2, 3)
    ref.copy_(x.grad / 2)
    x.grad = None
    lin(x).relu().sum().backward()
    assert flow.allclose(ref, x.grad)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        cp.checkpoint(lin, x, use_reentrant=True, context_fn=cp.noop_context_fn)


def test_checkpoint_helpers():
    from oneflow.utils import checkpoint as cp

    a, b = flow.ones(2, requires_grad=True), flow.zeros(2)
    da, db, n = cp.detach_variable((a, b, 3))
    assert da.requires_grad and da.grad_fn is None and not db.requires_grad and n == 3
    with pytest.raises(RuntimeError, match="Only tuple"):
        cp.detach_variable([a])
    with pytest.warns(UserWarning, match="None of the inputs"):
        cp.check_backward_validity((b,))
    assert cp.get_device_states(a, b) == ([], [])
    assert issubclass(cp.CheckpointError, RuntimeError)
    with cp.set_checkpoint_early_stop(False), cp.set_checkpoint_debug_enabled(True):
        y = cp.checkpoint(lambda t: t * 2, a, use_reentrant=False)
    y.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]
