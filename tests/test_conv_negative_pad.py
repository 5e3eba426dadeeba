"""Convolutions whose last windows end before the input does (a negative right padding: 1x1
stride 2 over an even size, ResNet's downsample layers) on oneDNN over the cropped input (Note
[Negative right padding] in src/kernels/dnnl/dnnl_conv.cpp), against PyTorch: forward, the data
gradient (zero in the columns no window reads), the weight and bias gradients, in 1-3 spatial
dims, with padding, dilation and groups."""
import numpy as np
import pytest
import torch

from harness import flow

CASES = [  # (spatial input size, kernel, stride, padding, dilation, groups)
    ((56, 56), 1, 2, 0, 1, 1),
    ((9, 10), 2, 3, 0, 1, 1),
    ((11, 8), 3, 2, 1, 2, 2),
    ((15,), 2, 4, 1, 1, 1),
    ((6, 7, 8), 1, 2, 0, 1, 1),
]


@pytest.mark.parametrize("size,k,stride,pad,dil,groups", CASES)
def test_conv_with_negative_right_padding_matches_torch(size, k, stride, pad, dil, groups):
    rng = np.random.default_rng(0)
    nd = len(size)
    x = rng.standard_normal((2, 4) + size).astype("float32")
    w = rng.standard_normal((6, 4 // groups) + (k,) * nd).astype("float32")
    b = rng.standard_normal(6).astype("float32")
    conv_f = getattr(flow.nn.functional, f"conv{nd}d")
    conv_t = getattr(torch.nn.functional, f"conv{nd}d")
    fx, fw, fb = (flow.tensor(a, requires_grad=True) for a in (x, w, b))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    fo = conv_f(fx, fw, fb, stride=stride, padding=pad, dilation=dil, groups=groups)
    to = conv_t(tx, tw, tb, stride=stride, padding=pad, dilation=dil, groups=groups)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-4)
    g = rng.standard_normal(tuple(to.shape)).astype("float32")
    fo.backward(flow.tensor(g))
    to.backward(torch.tensor(g))
    for f, t in ((fx, tx), (fw, tw), (fb, tb)):
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_data_gradient_of_the_unread_columns_is_zero():
    x = flow.randn(1, 2, 8, 8, requires_grad=True)
    w = flow.randn(3, 2, 1, 1)
    flow.nn.functional.conv2d(x, w, stride=2).sum().backward()
    grad = x.grad.numpy()
    assert np.all(grad[..., 1::2, :] == 0) and np.all(grad[..., :, 1::2] == 0)
    assert np.all(grad[..., ::2, ::2] != 0)
