"""The examples of the spec's nn chapter (002) for the convolution, pooling and normalisation
modules, run as written (`flow.Tensor(np.random.randn(...))`, `flow.randn`, the reprs of sizes)
and checked against their documented outputs. Two adaptations, each said where it is made:
the ConvTranspose2d example moves to "cuda" (the CPU without a device); examples whose
inputs are too large for a unit test on two cores (ConvTranspose3d: ~32 GFLOP) run on the meta
device, whose shape inference is the same code as the real run's."""

import numpy as np

from harness import flow

nn = flow.nn


def test_adaptive_avg_pool_examples():
    m = nn.AdaptiveAvgPool1d(5)
    assert str(m(flow.randn(1, 64, 8)).size()) == "oneflow.Size([1, 64, 5])"
    m = nn.AdaptiveAvgPool2d((5, 7))
    assert str(m(flow.randn(1, 64, 8, 9)).size()) == "oneflow.Size([1, 64, 5, 7])"
    m = nn.AdaptiveAvgPool2d(7)
    assert str(m(flow.randn(1, 64, 10, 9)).size()) == "oneflow.Size([1, 64, 7, 7])"
    m = nn.AdaptiveAvgPool2d((None, 7))
    assert str(m(flow.randn(1, 64, 10, 9)).size()) == "oneflow.Size([1, 64, 10, 7])"
    m = nn.AdaptiveAvgPool3d((5, 7, 9))
    assert str(m(flow.randn(1, 64, 8, 9, 10)).size()) == "oneflow.Size([1, 64, 5, 7, 9])"
    m = nn.AdaptiveAvgPool3d(7)
    assert str(m(flow.randn(1, 64, 10, 9, 8)).size()) == "oneflow.Size([1, 64, 7, 7, 7])"
    m = nn.AdaptiveAvgPool3d((7, None, None))
    assert str(m(flow.randn(1, 64, 10, 9, 8)).size()) == "oneflow.Size([1, 64, 7, 9, 8])"


def test_avg_pool_examples():
    m = flow.nn.AvgPool1d(kernel_size=3, padding=1, stride=1)
    assert m(flow.randn(1, 4, 4)).shape == flow.Size([1, 4, 4])
    m = flow.nn.AvgPool2d(kernel_size=3, padding=1, stride=1)
    assert m(flow.randn(1, 4, 4, 4)).shape == flow.Size([1, 4, 4, 4])
    m = flow.nn.AvgPool3d(kernel_size=(2, 2, 2), padding=(0, 0, 0), stride=(1, 1, 1))
    y = m(flow.randn(9, 7, 11, 32, 20))
    assert str(y.shape) == "oneflow.Size([9, 7, 10, 31, 19])"


def test_max_pool_examples():
    of_maxpool1d = flow.nn.MaxPool1d(kernel_size=3, padding=1, stride=1)
    x = flow.Tensor(np.random.randn(1, 4, 4))
    assert str(of_maxpool1d(x).shape) == "oneflow.Size([1, 4, 4])"
    m = flow.nn.MaxPool2d(kernel_size=3, padding=1, stride=1)
    x = flow.Tensor(np.random.randn(1, 4, 4, 4))
    assert str(m(x).shape) == "oneflow.Size([1, 4, 4, 4])"
    of_maxpool3d = flow.nn.MaxPool3d(kernel_size=3, padding=1, stride=1)
    x = flow.Tensor(np.random.randn(1, 4, 4, 4, 4))
    assert str(of_maxpool3d(x).shape) == "oneflow.Size([1, 4, 4, 4, 4])"


def test_batch_norm_examples():
    x = flow.randn(20, 100)
    m = flow.nn.BatchNorm1d(100)
    y = m(x)
    assert y.shape == x.shape
    x = flow.randn(4, 2, 8, 3)
    m = flow.nn.BatchNorm2d(num_features=2, eps=1e-5, momentum=0.1)
    y = m(x)
    assert y.shape == x.shape
    x = flow.randn(3, 2, 5, 8, 4)
    m = flow.nn.BatchNorm3d(num_features=2, eps=1e-5, momentum=0.1)
    y = m(x)
    assert str(y.size()) == "oneflow.Size([3, 2, 5, 8, 4])"
    # what the doc states: per-channel zero mean and unit (biased) variance in training
    v = y.detach().numpy().transpose(1, 0, 2, 3, 4).reshape(2, -1)
    np.testing.assert_allclose(v.mean(1), 0, atol=1e-5)
    np.testing.assert_allclose(v.var(1), 1, atol=1e-3)


def test_conv_examples():
    input = flow.randn(20, 16, 50)
    m = nn.Conv1d(16, 33, 3, stride=2)
    assert tuple(m(input).shape) == (20, 33, 24)
    input = flow.randn(20, 16, 50, 100)
    m = nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
    assert tuple(m(input).shape) == (20, 33, 26, 100)
    input = flow.randn(1, 2, 5, 5, 5)
    m = nn.Conv3d(2, 4, kernel_size=3, stride=1)
    assert tuple(m(input).shape) == (1, 4, 3, 3, 3)


def test_conv_transpose_examples():
    m = nn.ConvTranspose2d(16, 33, 3, stride=2)
    m = nn.ConvTranspose2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2))
    # the example moves module and input to "cuda"; without CUDA they run on the CPU
    dev = "cuda" if flow.cuda.is_available() else "cpu"
    m = m.to(dev)
    input = flow.randn(20, 16, 50, 100, device=flow.device(dev))
    output = m(input)
    assert str(output.size()) == "oneflow.Size([20, 33, 93, 100])" and output.device.type == dev
    m = nn.ConvTranspose3d(16, 33, 3, stride=2)
    m = nn.ConvTranspose3d(16, 33, (3, 5, 2), stride=(2, 1, 1), padding=(0, 4, 2))
    m = m.to("meta")  # ~32 GFLOP on the real input: shapes from meta inference
    input = flow.randn(20, 16, 10, 50, 100, device="meta")
    output = m(input)
    assert tuple(output.shape) == (20, 33, 21, 46, 97)


def test_group_norm_example():
    input = flow.randn(20, 6, 10, 10)
    m = flow.nn.GroupNorm(3, 6)
    m = flow.nn.GroupNorm(6, 6)  # separate 6 channels into 6 groups (InstanceNorm)
    m = flow.nn.GroupNorm(1, 6)  # all 6 channels in one group (LayerNorm)
    output = m(input)
    assert output.shape == input.shape
    v = output.detach().numpy().reshape(20, -1)
    np.testing.assert_allclose(v.mean(1), 0, atol=1e-5)


def test_instance_norm_examples():
    m = flow.nn.InstanceNorm1d(100)
    m = flow.nn.InstanceNorm1d(100, affine=True)
    x = flow.randn(20, 100, 40)
    output = m(x)
    assert output.shape == x.shape
    m = flow.nn.InstanceNorm3d(100)
    m = flow.nn.InstanceNorm3d(100, affine=True)
    x = flow.randn(20, 100, 35, 45, 10)
    output = m(x)
    assert output.shape == x.shape


def test_layer_norm_example():
    x = flow.tensor([[[[-0.16046895, -1.03667831], [-0.34974465, 0.26505867]],
                      [[-1.24111986, -0.53806001], [1.72426331, 0.43572459]]],
                     [[[-0.77390957, -0.42610624], [0.16398858, -1.35760343]],
                      [[1.07541728, 0.11008703], [0.26361224, -0.48663723]]]], dtype=flow.float32)
    m = flow.nn.LayerNorm(2)
    y = m(x)
    want = [[[[1.0000, -1.0000], [-0.9999, 0.9999]], [[-1.0000, 1.0000], [1.0000, -1.0000]]],
            [[[-0.9998, 0.9998], [1.0000, -1.0000]], [[1.0000, -1.0000], [1.0000, -1.0000]]]]
    np.testing.assert_allclose(np.round(y.detach().numpy(), 4), want, atol=1e-4)
    # the printed form: values as documented, float32, and a gradient function (affine parameters)
    text = repr(y)
    assert text.startswith("tensor([[[[ 1.0000, -1.0000],\n          [-0.9999,  0.9999]],")
    assert "dtype=oneflow.float32" in text and "grad_fn=<" in text
    assert m.elementwise_affine is True and m.eps == 1e-5 and m.normalized_shape == (2,)
