"""Engine robustness: graphs far deeper than the C++ stack could recurse through."""
import numpy as np

from harness import flow


def test_deep_chain_backward_and_free():
    # 100k recorded ops: backward runs iteratively and freeing the graph must not recurse
    # (Note [Iterative teardown] in src/autograd/meta.cpp).
    x = flow.ones(1, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y.sin() * 1.0 + 0.0
    del y  # frees the whole chain, nodes and saved tensors
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])
    del y


def test_backward_order_diamond():
    # x feeds two paths of different depth; the shared node must run once, after both.
    x = flow.tensor([2.0], requires_grad=True)
    a = x * 3
    b = a.exp()
    c = a * a
    (b + c).sum().backward()
    expected = 3 * np.exp(6.0) + 2 * 6.0 * 3
    np.testing.assert_allclose(x.grad.numpy(), [expected], rtol=1e-6)


def test_backward_inputs_accumulates_only_there():
    import torch

    for lib in (flow, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        y = (x * w).sum()
        y.backward(inputs=[x], retain_graph=True)
        y.backward(inputs=[x])
        np.testing.assert_allclose(x.grad.numpy(), [6.0, 8.0])
        assert w.grad is None


def test_backward_grad_tensors_length_mismatch():
    x = flow.ones(2, requires_grad=True)
    try:
        flow.autograd.backward([x * 2, x * 3], [flow.ones(2)])
    except RuntimeError as e:
        assert "got 2 tensors and 1 gradients" in str(e)
    else:
        raise AssertionError("expected RuntimeError")
