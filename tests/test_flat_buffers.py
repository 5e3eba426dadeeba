"""oneflow._utils' flat-buffer helpers against torch._utils', and Tensor.is_view (upstream
OneFlow's modules/test_utils.py and tensor/test_tensor_is_view.py)."""
import numpy as np
import torch
from torch._utils import _flatten_dense_tensors as t_flatten, _unflatten_dense_tensors as t_unflatten

import oneflow as flow
from oneflow._utils import _flatten_dense_tensors, _unflatten_dense_tensors


def _arrays():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in ((2, 3), (4,), (1, 2, 2))]


def test_flatten_dense_tensors_as_torch():
    arrs = _arrays()
    got = _flatten_dense_tensors([flow.tensor(a) for a in arrs])
    want = t_flatten([torch.tensor(a) for a in arrs])
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    one = _flatten_dense_tensors([flow.tensor(arrs[0]).t()])  # non-contiguous: its values in order
    np.testing.assert_array_equal(one.numpy(), t_flatten([torch.tensor(arrs[0]).t()]).numpy())


def test_unflatten_dense_tensors_as_torch():
    arrs = _arrays()
    flat = np.arange(6 + 4 + 4, dtype=np.float32)
    got = _unflatten_dense_tensors(flow.tensor(flat), [flow.tensor(a) for a in arrs])
    want = t_unflatten(torch.tensor(flat), [torch.tensor(a) for a in arrs])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_is_view():
    x = flow.randn(2, 3, 4)
    assert not x.is_view()
    assert x.reshape(4, 6).is_view() and x.permute(2, 0, 1).is_view() and x[0].is_view()
    # a reshape that has to copy is no view (PyTorch's _is_view agrees)
    assert not flow.randn(3, 4).t().reshape(12).is_view()
    assert not torch.randn(3, 4).t().reshape(12)._is_view()
    assert x.permute(2, 0, 1).reshape(4, 6).is_view() and torch.randn(2, 3, 4).permute(2, 0, 1).reshape(4, 6)._is_view()
    assert not (x + 1).is_view()
