"""Errors of the convolution, pooling and normalisation ops and modules: the exception type
PyTorch raises, a message that names the op and says what was wrong (PyTorch's wording where it
has one: exact texts are pinned for the messages users see most), raised before any kernel runs
(meta tensors give the same errors), and the framework usable afterwards."""

import re

import pytest
import torch

from harness import SHIM, builtin_exc_type, flow


def _ok():
    assert float((flow.ones(2, 3) + 1).sum().item()) == 12.0


class Case:
    def __init__(self, id, fn, text=None, words=()):
        self.id, self.fn, self.text, self.words = id, fn, text, words


def F(lib):
    return lib.nn.functional


def z(lib, *shape):
    return lib.zeros(*shape)


CASES = [
    # convolutions
    Case("conv2d-channels", lambda L: F(L).conv2d(z(L, 1, 4, 28, 28), z(L, 20, 3, 5, 5)),
         "Given groups=1, weight of size [20, 3, 5, 5], expected input[1, 4, 28, 28] to have 3 channels, "
         "but got 4 channels instead"),
    Case("conv2d-channels-unbatched", lambda L: F(L).conv2d(z(L, 4, 28, 28), z(L, 20, 3, 5, 5)),
         "expected input[1, 4, 28, 28] to have 3 channels, but got 4 channels instead"),
    Case("conv2d-module-channels", lambda L: L.nn.Conv2d(3, 20, 5)(z(L, 1, 4, 28, 28)),
         "expected input[1, 4, 28, 28] to have 3 channels, but got 4 channels instead"),
    Case("conv2d-kernel-too-large", lambda L: F(L).conv2d(z(L, 1, 3, 2, 2), z(L, 20, 3, 5, 5)),
         "Calculated padded input size per channel: (2 x 2). Kernel size: (5 x 5). Kernel size can't be greater "
         "than actual input size"),
    Case("conv1d-kernel-too-large", lambda L: F(L).conv1d(z(L, 1, 3, 2), z(L, 4, 3, 5)),
         "Calculated padded input size per channel: (2). Kernel size: (5)."),
    Case("conv2d-rank", lambda L: F(L).conv2d(z(L, 2, 3), z(L, 20, 3, 5, 5)),
         "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]"),
    Case("conv3d-rank", lambda L: F(L).conv3d(z(L, 1, 2, 3, 4, 5, 6), z(L, 2, 2, 1, 1, 1)),
         "Expected 4D (unbatched) or 5D (batched) input to conv3d"),
    Case("conv2d-weight-rank", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8), z(L, 3)),
         "weight should have at least three dimensions"),
    Case("conv2d-bias-size", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8), z(L, 20, 3, 5, 5), z(L, 21)),
         "Given weight of size [20, 3, 5, 5], expected bias to be 1-dimensional with 20 elements, but got bias "
         "of size [21] instead"),
    Case("conv2d-stride-length", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8), z(L, 4, 3, 3, 3), stride=(1, 1, 1)),
         "expected stride to be a single integer value or a list of 2 values to match the convolution "
         "dimensions, but got stride=[1, 1, 1]"),
    Case("conv2d-zero-stride", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8), z(L, 4, 3, 3, 3), stride=0),
         "non-positive stride is not supported"),
    Case("conv2d-negative-padding", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8), z(L, 4, 3, 3, 3), padding=-1),
         "negative padding is not supported"),
    Case("conv2d-zero-dilation", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8), z(L, 4, 3, 3, 3), dilation=0),
         "non-positive dilation is not supported"),
    Case("conv2d-zero-groups", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8), z(L, 4, 3, 3, 3), groups=0),
         "non-positive groups is not supported"),
    Case("conv2d-groups-divide", lambda L: F(L).conv2d(z(L, 1, 6, 8, 8), z(L, 21, 3, 3, 3), groups=2),
         words=("conv2d", "groups=2", "divisible by 2")),
    Case("conv2d-dtype", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8).double(), z(L, 4, 3, 3, 3)),
         words=("conv2d", "input type (float64) and weight type (float32) should be the same")),
    Case("conv2d-bias-dtype", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8), z(L, 4, 3, 3, 3), z(L, 4).double()),
         # PyTorch's sentence, with the dtypes spelled as oneflow names them
         "Input type (float32) and bias type (float64) should be the same"),
    Case("conv2d-same-strided", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8), z(L, 4, 3, 3, 3), padding="same", stride=2),
         "padding='same' is not supported for strided convolutions"),
    Case("conv2d-bad-padding-string", lambda L: F(L).conv2d(z(L, 1, 3, 8, 8), z(L, 4, 3, 3, 3), padding="foo"),
         words=("conv2d", "padding", "foo")),
    Case("conv_transpose2d-channels", lambda L: F(L).conv_transpose2d(z(L, 1, 3, 8, 8), z(L, 4, 4, 3, 3)),
         "Given transposed=1, weight of size [4, 4, 3, 3], expected input[1, 3, 8, 8] to have 4 channels, but "
         "got 3 channels instead"),
    Case("conv_transpose2d-output-padding",
         lambda L: F(L).conv_transpose2d(z(L, 1, 3, 8, 8), z(L, 3, 4, 3, 3), output_padding=1),
         "output padding must be smaller than either stride or dilation"),
    Case("conv_transpose2d-output-too-small", lambda L: F(L).conv_transpose2d(z(L, 1, 3, 1, 1), z(L, 3, 4, 3, 3),
                                                                              padding=3),
         "Given input size per channel: (1 x 1). Calculated output size per channel: (-3 x -3). Output size is "
         "too small"),
    # pooling
    Case("max_pool2d-output-size", lambda L: F(L).max_pool2d(z(L, 1, 3, 2, 2), 3),
         "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small"),
    Case("avg_pool2d-output-size", lambda L: F(L).avg_pool2d(z(L, 1, 3, 2, 2), 3),
         "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small"),
    Case("max_pool2d-padding", lambda L: F(L).max_pool2d(z(L, 1, 3, 4, 4), 3, padding=2),
         "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1"),
    Case("max_pool2d-rank", lambda L: F(L).max_pool2d(z(L, 3, 4), 2), words=("max_pool2d", "3d or 4d")),
    Case("max_pool2d-kernel-length", lambda L: F(L).max_pool2d(z(L, 1, 3, 4, 4), (2, 2, 2)),
         words=("max_pool2d", "kernel_size", "two ints")),
    Case("max_pool2d-zero-stride", lambda L: F(L).max_pool2d(z(L, 1, 3, 4, 4), 2, stride=0),
         words=("max_pool2d", "stride")),
    Case("max_pool3d-output-size", lambda L: F(L).max_pool3d(z(L, 1, 2, 1, 4, 4), 2),
         "Output size is too small"),
    Case("adaptive_avg_pool2d-rank", lambda L: F(L).adaptive_avg_pool2d(z(L, 3, 4), 2),
         words=("adaptive_avg_pool2d", "3d or 4d", "[3, 4]")),
    Case("adaptive_max_pool2d-empty", lambda L: F(L).adaptive_max_pool2d(z(L, 1, 3, 0, 4), 2),
         words=("adaptive_max_pool2d", "non-zero size", "dimension 2")),
    Case("max_unpool2d-index", lambda L: F(L).max_unpool2d(
        z(L, 1, 1, 2, 2), L.tensor([[[[0, 1], [2, 100]]]], dtype=L.int64), 2),
        "Found an invalid max index: 100 (output volumes are of size 4x4)"),
    # normalisation
    Case("batch_norm-module-rank", lambda L: L.nn.BatchNorm2d(3)(z(L, 2, 3, 4)), "expected 4D input (got 3D input)"),
    Case("batch_norm1d-module-rank", lambda L: L.nn.BatchNorm1d(3)(z(L, 2, 3, 4, 5)),
         "expected 2D or 3D input (got 4D input)"),
    Case("batch_norm-running-size", lambda L: F(L).batch_norm(z(L, 2, 3, 4), z(L, 4), L.ones(4)),
         "running_mean should contain 3 elements not 4"),
    Case("batch_norm-weight-size", lambda L: F(L).batch_norm(z(L, 2, 3), z(L, 3), L.ones(3), L.ones(4)),
         "weight should contain 3 elements not 4"),
    Case("batch_norm-one-value", lambda L: F(L).batch_norm(z(L, 1, 3), None, None, training=True),
         "Expected more than 1 value per channel when training"),
    Case("batch_norm-eval-no-stats", lambda L: F(L).batch_norm(z(L, 2, 3), None, None, training=False),
         "running_mean must be defined in evaluation mode"),
    Case("layer_norm-shape", lambda L: F(L).layer_norm(z(L, 2, 3, 4), (3,)),
         "Given normalized_shape=[3], expected input with shape [*, 3], but got input of size[2, 3, 4]"),
    Case("layer_norm-module-shape", lambda L: L.nn.LayerNorm(5)(z(L, 2, 4)),
         "Given normalized_shape=[5], expected input with shape [*, 5], but got input of size[2, 4]"),
    Case("layer_norm-weight", lambda L: F(L).layer_norm(z(L, 2, 3, 4), (4,), L.ones(3)),
         "Expected weight to be of same shape as normalized_shape, but got weight of shape [3] and "
         "normalized_shape = [4]"),
    Case("group_norm-groups", lambda L: F(L).group_norm(z(L, 2, 6, 4), 4),
         "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 6, 4] "
         "and num_groups=4"),
    Case("group_norm-weight", lambda L: F(L).group_norm(z(L, 2, 6, 4), 3, L.ones(4)),
         words=("group_norm", "weight", "[4]", "[2, 6, 4]")),
    Case("instance_norm-one-element", lambda L: F(L).instance_norm(z(L, 1, 3, 1)),
         "Expected more than 1 spatial element when training"),
    Case("local_response_norm-rank", lambda L: F(L).local_response_norm(z(L, 4, 3), 2),
         "Expected 3D or higher dimensionality input (got 2 dimensions)"),
]


def _torch_error(case):
    try:
        case.fn(torch)
    except Exception as e:  # noqa: BLE001
        return e
    return None


def _op_named(msg, case):
    """The message names the op: the functional's name or the module's class."""
    name = case.id.split("-")[0]
    return name in msg or name.replace("_", "") in msg.lower()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_error(case):
    t_err = _torch_error(case)
    assert t_err is not None, f"harness: torch does not raise for {case.id}"
    with pytest.raises(builtin_exc_type(t_err)) as info:
        case.fn(flow)
    msg = str(info.value)
    if not SHIM:
        if case.text is not None:
            assert case.text in msg, f"{msg!r} does not contain PyTorch's {case.text!r}"
        for w in case.words:
            assert w.lower() in msg.lower(), f"message does not say {w!r}: {msg!r}"
        if "module" not in case.id and not isinstance(info.value, ValueError):
            assert _op_named(msg, case), f"message does not name the op: {msg!r}"
    _ok()


@pytest.mark.skipif(bool(SHIM), reason="oneflow's meta device")
@pytest.mark.parametrize("case", [c for c in CASES if "module" not in c.id and "index" not in c.id],
                         ids=lambda c: c.id)
def test_meta_inference_raises_the_same(case):
    """Checks run in meta inference: meta tensors (no data, no kernel) raise the same error."""
    orig = flow.zeros

    def meta_zeros(*shape, **kw):
        return orig(*shape, device="meta", **kw)

    class MetaLib:
        def __getattr__(self, name):
            if name == "zeros":
                return meta_zeros
            if name == "ones":
                return lambda *s, **kw: flow.ones(*s, device="meta", **kw)
            return getattr(flow, name)

    with pytest.raises(Exception) as real:
        case.fn(flow)
    with pytest.raises(type(real.value)) as meta:
        case.fn(MetaLib())
    assert re.sub(r"\s+", " ", str(meta.value)) == re.sub(r"\s+", " ", str(real.value))


@pytest.mark.skipif(bool(SHIM), reason="oneflow only")
def test_failed_batch_norm_leaves_running_stats_alone():
    rm, rv = flow.zeros(3), flow.ones(3)
    with pytest.raises(RuntimeError):
        flow.nn.functional.batch_norm(flow.randn(4, 3), rm, rv, flow.ones(4), training=True)
    assert rm.tolist() == [0.0, 0.0, 0.0] and rv.tolist() == [1.0, 1.0, 1.0]


def test_complex_pooling_is_refused_cleanly():
    """Complex pooling is refused, as by PyTorch (max pooling has no order to use): a
    RuntimeError naming the op and the dtype, not an internal error. (Complex convolutions are
    computed: tests/opinfo/conv.py.)"""
    if SHIM:
        pytest.skip("flow is torch under the shim")
    x = flow.randn(1, 2, 5, 5, dtype=flow.complex64)
    for name, call in [("max_pool2d", lambda: F(flow).max_pool2d(x, 2)),
                       ("avg_pool2d", lambda: F(flow).avg_pool2d(x, 2))]:
        with pytest.raises(RuntimeError, match=re.escape(name) + r"\(\): not implemented for 'ComplexFloat'"):
            call()
    _ok()


def test_conv_transpose_empty_batch_may_give_empty_sizes():
    # PyTorch checks no output size of an empty batch but that it is not negative (upstream's
    # test_deconv2d_0size draws such cases).
    w = torch.randn(2, 3, 1, 1, dtype=torch.float64)
    ref = torch.nn.functional.conv_transpose2d(torch.zeros(0, 2, 2, 4, dtype=torch.float64), w, padding=1)
    x = flow.zeros(0, 2, 2, 4, dtype=flow.float64, requires_grad=True)
    fw = flow.tensor(w.numpy(), requires_grad=True)
    out = flow.nn.functional.conv_transpose2d(x, fw, padding=1)
    assert tuple(out.shape) == tuple(ref.shape) == (0, 3, 0, 2)
    out.sum().backward()
    assert tuple(x.grad.shape) == (0, 2, 2, 4) and float(fw.grad.abs().sum()) == 0.0
    with pytest.raises(RuntimeError, match="Output size is too small"):
        flow.nn.functional.conv_transpose2d(flow.zeros(1, 2, 2, 4, dtype=flow.float64), fw, padding=1)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        flow.nn.functional.conv_transpose2d(flow.zeros(0, 2, 2, 4, dtype=flow.float64), fw, padding=2)
