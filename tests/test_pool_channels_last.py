"""2-D pools over (N, H, W, C) input: F.max_pool2d / avg_pool2d(data_format="channels_last") and
nn.MaxPool2d / AvgPool2d built under ONEFLOW_ENABLE_NHWC=1 (upstream OneFlow's switch) or moved
with to_memory_format(flow.channels_last); PyTorch's NCHW pools permuted are the reference."""
import numpy as np
import pytest
import torch

import oneflow as flow


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil", [(3, 1, 0, 1, True), ((2, 3), (1, 2), (0, 1), 2, False)])
def test_max_and_avg_pool2d_channels_last(monkeypatch, kernel, stride, padding, dilation, ceil):
    arr = np.random.default_rng(0).normal(size=(3, 14, 27, 3))
    ref_in = torch.tensor(arr.transpose(0, 3, 1, 2), requires_grad=True)
    ref = torch.nn.functional.max_pool2d(ref_in, kernel, stride, padding, dilation, ceil_mode=ceil).permute(0, 2, 3, 1)
    monkeypatch.setenv("ONEFLOW_ENABLE_NHWC", "1")
    m = flow.nn.MaxPool2d(kernel, stride, padding, dilation, ceil_mode=ceil)
    monkeypatch.setenv("ONEFLOW_ENABLE_NHWC", "0")  # read at construction, as upstream's
    assert m.channel_pos == "channels_last"
    x = flow.tensor(arr, requires_grad=True)
    y = m(x)
    np.testing.assert_array_equal(y.detach().numpy(), ref.detach().numpy())
    y.sum().backward()
    ref.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), ref_in.grad.numpy().transpose(0, 2, 3, 1))
    out, idx = flow.nn.functional.max_pool2d(flow.tensor(arr), kernel, stride, padding, dilation, ceil_mode=ceil,
                                             return_indices=True, data_format="channels_last")
    _, ref_idx = torch.nn.functional.max_pool2d(torch.tensor(arr.transpose(0, 3, 1, 2)), kernel, stride, padding,
                                                dilation, ceil_mode=ceil, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), ref_idx.permute(0, 2, 3, 1).numpy())
    a = flow.nn.AvgPool2d(kernel, stride, padding)
    a.to_memory_format(flow.channels_last)
    ref_avg = torch.nn.functional.avg_pool2d(torch.tensor(arr.transpose(0, 3, 1, 2)), kernel, stride, padding)
    np.testing.assert_allclose(a(flow.tensor(arr)).numpy(), ref_avg.permute(0, 2, 3, 1).numpy(), rtol=1e-12)
    a.to_memory_format(flow.contiguous_format)
    assert a.channel_pos == "channels_first"


def test_pool_data_format_errors():
    with pytest.raises(ValueError, match="data_format must be 'channels_first' or 'channels_last'"):
        flow.nn.functional.max_pool2d(flow.randn(1, 1, 4, 4), 2, data_format="NDHWC")
    with pytest.raises(ValueError, match="only 'channels_first'"):
        flow.nn.functional.max_pool1d(flow.randn(1, 1, 4), 2, data_format="channels_last")
