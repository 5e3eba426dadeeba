"""Errors of ops PyTorch also has, in PyTorch's words and exception type with upstream OneFlow's
text after them in brackets (Note [Upstream's words], src/autograd/meta.cpp): upstream's own tests
(python/oneflow/test/exceptions) match on its text. raises_like_torch checks the PyTorch part
exactly; each case here names the upstream text the message must also carry."""
import numpy as np
import pytest

from error_cases import raises_like_torch
from harness import flow


def _leaf_inplace(lib):
    lib.ones(4, 4, requires_grad=True).add_(lib.ones(4, 4))


def _celu_module_inplace(lib):
    lib.nn.CELU(alpha=1.0, inplace=True)(lib.ones(4, 4, requires_grad=True))


def _backward_no_grad(lib):
    lib.ones(4, 4).sum().backward()


def _reshape_negative(lib):
    lib.tensor((2, 2)).reshape((-2, 4))


def _median_empty_dim(lib):
    lib.median(lib.ones(2, 0), dim=1)


def _inv_1d(lib):
    lib.linalg.inv(lib.tensor((2.0, 2.0)))


def _inv_not_square(lib):
    lib.linalg.inv(lib.ones(2, 3, 2))


def _layer_norm_shape(lib):
    lib.nn.functional.layer_norm(lib.ones(2, 3), (2,))


def _softshrink_negative(lib):
    lib.nn.Softshrink(-0.1)(lib.ones(2))


def _prelu_parameters(lib):
    lib.nn.PReLU(5)(lib.ones(4, 4))


def _inplace_not_broadcastable(lib):
    lib.ones(2, 3).mul_(lib.ones(2, 4))


def _inplace_broadcast_grows(lib):
    lib.ones(3, 3).div_(lib.ones(2, 3, 3))


def _select_out_of_range(lib):
    lib.ones(2, 3)[3]


def _too_many_indices(lib):
    lib.arange(16).reshape(4, 4)[0, 0, 0]


CASES = [  # (call, upstream OneFlow's text the message carries too)
    (_leaf_inplace, "a leaf Tensor that requires grad is being used in an in-place operation"),
    (_celu_module_inplace, "a leaf Tensor that requires grad is being used in an in-place operation"),
    (_backward_no_grad, "\nRuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"),
    (_reshape_negative, "Invalid shape dimension -2"),
    (_median_empty_dim, "IndexError: Expected reduction dim 1 to have non-zero size."),
    (_inv_1d, "linalg.inv: The input tensor must be at least 2 dimensions."),
    (_inv_not_square, "RuntimeError: linalg.inv: A must be batches of square matrices, but they are 3 by 2 matrices"),
    (_layer_norm_shape, "Given normalized_shape=(2,), expected input with shape [*, 2,], but got input of size "
                        "oneflow.Size([2, 3])"),
    (_softshrink_negative, "alpha must be greater or equal to 0, but found to be -0.1."),
    (_prelu_parameters, "num_parameters in prelu must be 1 or 4"),
    (_inplace_not_broadcastable, "Tensor with shape (2,3) doesn't match the broadcast shape in an inplace operation"),
    (_inplace_broadcast_grows, "Can not expand origin shape (2,3,3) to (3,3)"),
    (_select_out_of_range, "Index out of range (expected to be in range of [-2, 1], but got 3)"),
    (_too_many_indices, "Too many indices for tensor of dimension 2"),
]


@pytest.mark.parametrize("fn,words", CASES, ids=[c[0].__name__.strip("_") for c in CASES])
def test_pytorch_words_then_upstreams(fn, words):
    err, _ = raises_like_torch(fn, message=False)
    assert words in str(err), str(err)
    assert str(err).endswith("]"), "upstream's text comes last, in brackets"


def test_index_of_zero_dim_and_negative_step_are_both_frameworks_types():
    # PyTorch's IndexError / ValueError, upstream's RuntimeError: one class that is both.
    for call, torch_type, words in ((lambda: flow.tensor(5)[0], IndexError, "select() cannot be applied to a 0-dim"),
                                    (lambda: flow.tensor([0, 1, 2])[0:2:-1], ValueError, "Step must be greater")):
        with pytest.raises(torch_type) as info:
            call()
        assert isinstance(info.value, RuntimeError) and words in str(info.value)


def test_stft_and_grid_sample_carry_upstreams_words():
    x = flow.tensor(np.arange(1, 13, dtype=float).reshape(4, 3))
    for kwargs, words in (({"n_fft": -1}, "Expected 0 < n_fft , but got -1"),
                          ({"n_fft": 4, "hop_length": -1}, "Expected hop_length > 0, but got -1"),
                          ({"n_fft": 4, "win_length": -1}, "Expected 0 < win_length <=n_fft ,but got -1"),
                          ({"n_fft": 4, "window": flow.ones(9, dtype=flow.float64)},
                           "Expected a 1D window tensor of size equal to win_length=4")):
        with pytest.raises(RuntimeError, match="stft") as info:
            flow.stft(x, return_complex=False, **kwargs)
        assert words in str(info.value)
    with pytest.raises(RuntimeError, match=r"Expected a 1D or 2D tensor,but got 3D"):
        flow.stft(flow.ones(2, 2, 3, dtype=flow.float64), 4, return_complex=False)
    F = flow.nn.functional
    for inp, grid, words in ((flow.ones(3, 4, 5), flow.ones(3, 9, 1), "MUST be 4D or 5D input"),
                             (flow.ones(3, 4, 5, 7), flow.ones(3, 9, 11), "Grid and input MUST have same dimention"),
                             (flow.ones(3, 4, 5, 7), flow.ones(3, 9, 11, 1), "Grid shape MUST (N, H_out, W_out, 2)")):
        with pytest.raises(RuntimeError, match="grid_sampler") as info:
            F.grid_sample(inp, grid, align_corners=False)
        assert words in str(info.value)


def test_deform_conv2d_checks_in_upstreams_order():
    F = flow.nn.functional
    x, w, off = flow.randn(4, 3, 10, 10), flow.randn(5, 3, 3, 3), flow.randn(4, 18, 8, 8)
    cases = [
        (dict(input=flow.randn(2, 5, 1, 1), offset=flow.randn(2, 3, 1, 1), weight=flow.randn(2, 4, 1, 1),
              mask=flow.randn(2, 3, 1)), "The dimension of mask tensor weight must be 4"),
        (dict(input=x, offset=off, weight=w, stride=(-1, 0)), "The stride must be greater than 0,but got 0 and -1"),
        (dict(input=x, offset=off, weight=w, padding=(-1, 0)), "The pad must be greater than or equal to 0"),
        (dict(input=x, offset=off, weight=w, dilation=(-1, 0)), "The dilation must be greater than 0"),
        (dict(input=x, offset=flow.randn(4, 9, 8, 8), weight=w), "The shape of the offset tensor at dimension 1"),
        (dict(input=x, offset=flow.randn(3, 18, 8, 8), weight=w), "invalid batch size of offset:got: 3 ,expected: 4"),
        (dict(input=x, offset=off, weight=w, mask=flow.randn(4, 1, 8, 8)), "mask.shape[1] is not valid: got: 1"),
        (dict(input=x, offset=off, weight=w, dilation=(10, 10)), "Calculated output size too small"),
        (dict(input=x, offset=off, weight=w, padding=(1, 1)), "invalid offset output dims: got ( 8, 8),expected: (10, 10)"),
    ]
    for kwargs, words in cases:
        with pytest.raises(RuntimeError, match="deform_conv2d") as info:
            F.deform_conv2d(**kwargs)
        assert words in str(info.value), str(info.value)


@pytest.mark.parametrize("name", ["Hardshrink", "Softshrink"])
def test_shrink_modules_take_upstreams_inplace(name):
    x = flow.tensor([-1.0, 0.2, 2.0])
    want = getattr(flow.nn, name)(0.5)(x)
    m = getattr(flow.nn, name)(0.5, inplace=True)
    assert m(x) is x and x.tolist() == want.tolist() and "inplace=True" in repr(m)
    leaf = flow.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Tensor that requires grad"):
        m(leaf)


def test_uint8_index_is_a_mask_and_setitem_drops_leading_ones_as_torch():
    import torch

    for lib in (torch, flow):
        v = lib.tensor([True, False, True])
        with pytest.warns(UserWarning, match="uint8 is now deprecated"):
            got = v[lib.tensor([1, 0, 1], dtype=lib.uint8)]
        assert got.tolist() == [True, True]
        x = lib.zeros(3, 3)
        x[0, 0] = lib.ones(1)
        x[1] = lib.ones(1, 1, 3) * 2
        x[[2], [1]] = lib.ones(1, 1) * 3
        assert x.tolist() == [[1, 0, 0], [2, 2, 2], [0, 3, 0]], lib.__name__
    err, torch_err = raises_like_torch(lambda lib: lib.randn(0, 3)[[0]], IndexError, message=False)
    assert str(err) == "getitem(): " + str(torch_err)  # PyTorch's words after the op's name
