"""Helpers of the tests of the PyTorch names outside OneFlow's spec (test_torch_names.py,
test_torch_linalg_names.py, test_torch_nn_names.py): one call on flow and torch, and a
comparison of shapes, dtypes and values."""
import numpy as np
import torch

from harness import flow


def both(fn_name_or_callable, *arrays, **kwargs):
    """(flow result, torch result) of the same call on tensors made from numpy arrays."""
    f_args = [flow.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
    t_args = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
    if isinstance(fn_name_or_callable, str):
        return getattr(flow, fn_name_or_callable)(*f_args, **kwargs), getattr(torch, fn_name_or_callable)(*t_args, **kwargs)
    return fn_name_or_callable(flow, *f_args, **kwargs), fn_name_or_callable(torch, *t_args, **kwargs)


def close(got, want, rtol=1e-5, atol=1e-6):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w, rtol, atol)
        return
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True)
