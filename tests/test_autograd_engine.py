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
