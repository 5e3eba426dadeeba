"""Helpers shared by the autograd API tests: leaves from numpy, value checks against torch."""
import numpy as np
import torch

from harness import flow

RNG = np.random.RandomState(0)


def arr(*shape):
    return RNG.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def leaf(lib, arr):
    """A leaf of ``lib`` (flow or torch) that requires grad, holding ``arr``."""
    return lib.tensor(np.array(arr), requires_grad=True)


def xs(*values):
    return flow.tensor(list(values) or [1.0, 2.0], requires_grad=True)


def np_of(t):
    return t.detach().numpy()


def close(actual, expected, rtol=1e-5, atol=1e-6):
    assert actual is not None, "gradient is None"
    if isinstance(expected, torch.Tensor):
        expected = np_of(expected)
    expected = np.asarray(expected, dtype=np.float64)
    assert tuple(actual.shape) == expected.shape, f"{tuple(actual.shape)} != {expected.shape}"
    np.testing.assert_allclose(np_of(actual).astype(np.float64), expected, rtol=rtol, atol=atol)


def compare_grads(fn, *arrays):
    """Run ``fn(lib, *leaves).sum().backward()`` with flow and with torch;
    compare the outputs and every leaf's gradient."""
    fl = [leaf(flow, a) for a in arrays]
    th = [leaf(torch, a) for a in arrays]
    out_f, out_t = fn(flow, *fl), fn(torch, *th)
    close(out_f, out_t)
    out_f.sum().backward()
    out_t.sum().backward()
    for i, (f, t) in enumerate(zip(fl, th)):
        assert f.grad is not None, f"input {i} got no grad"
        close(f.grad, t.grad)

