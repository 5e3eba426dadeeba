"""Helpers shared by the distribution tests: float64 twins of an array and value comparison of
flow / torch tensors or arrays (shapes equal, NaNs in the same places)."""
import numpy as np


def f64(lib, a, grad=False):
    """lib.tensor of `a` in float64 (requiring grad when asked)."""
    x = lib.tensor(np.asarray(a, dtype=np.float64))
    return x.requires_grad_() if grad else x


def as_np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def close(got, want, rtol=1e-6, atol=1e-9):
    got, want = as_np(got), as_np(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
