"""oneflow.nn.qat.QatConv1d/2d/3d: forward and backward against a reference composition in torch
(OneFlow's observer formulas written out with torch ops, conv of the fake-quantized input and
weight, straight-through gradient), over steps so the input's moving average is exercised."""
import numpy as np
import pytest
import torch

import oneflow as flow


def _scale_zp(mx, mn, formula, bit, scheme):
    if formula == "cambricon":
        return torch.floor(torch.log2(torch.maximum(mx.abs(), mn.abs()))) - (bit - 2), torch.zeros_like(mx)
    if scheme == "symmetric":
        return torch.maximum(mx.abs(), mn.abs()) / (2 ** (bit - 1) - 1), torch.zeros_like(mx)
    scale = (mx - mn) / (2 ** bit - 1)
    return scale, -torch.round(mn / scale)


def _fake_quant(x, scale, zp, formula, bit, scheme):
    shape = [-1] + [1] * (x.ndim - 1) if scale.numel() > 1 else []
    scale, zp = scale.reshape(shape), zp.reshape(shape)
    if formula == "cambricon":
        s = torch.pow(2.0, scale)
        v = torch.clamp(torch.round(x / s), -(2 ** (bit - 1)), 2 ** (bit - 1) - 1) * s
    elif scheme == "symmetric":
        v = torch.clamp(torch.round(x / scale), -(2 ** (bit - 1)), 2 ** (bit - 1) - 1) * scale
    else:
        v = (torch.clamp(torch.round(x / scale + zp), 0, 2 ** bit - 1) - zp) * scale
    return x + (v - x).detach()  # straight-through: the identity's gradient


class _Reference:
    """QatConv written out: moving min / max of the input (first batch initialises), min / max of
    the weight per layer or per output channel, fake quantization of both, conv."""

    def __init__(self, k, formula, bit, scheme, per_layer, momentum, conv_kwargs):
        self.k, self.formula, self.bit, self.scheme = k, formula, bit, scheme
        self.per_layer, self.momentum, self.kw = per_layer, momentum, conv_kwargs
        self.moving = None

    def __call__(self, x, w, b, training):
        with torch.no_grad():
            if training:
                mx, mn = x.max().reshape(1), x.min().reshape(1)
                if self.scheme == "symmetric":
                    mx = torch.maximum(mx.abs(), mn.abs())
                    mn = -mx
                if self.moving is None:
                    self.moving = (mx, mn)
                else:
                    m = self.momentum
                    self.moving = (self.moving[0] * m + mx * (1 - m), self.moving[1] * m + mn * (1 - m))
            in_scale, in_zp = _scale_zp(*self.moving, self.formula, self.bit, self.scheme)
            if self.per_layer:
                wmx, wmn = w.max().reshape(1), w.min().reshape(1)
            else:
                flat = w.reshape(w.shape[0], -1)
                wmx, wmn = flat.amax(1), flat.amin(1)
            w_scale, w_zp = _scale_zp(wmx, wmn, self.formula, self.bit, self.scheme)
        conv = getattr(torch.nn.functional, f"conv{self.k}d")
        return conv(_fake_quant(x, in_scale, in_zp, self.formula, self.bit, self.scheme),
                    _fake_quant(w, w_scale, w_zp, self.formula, self.bit, self.scheme), b, **self.kw)


CASES = [
    # k, formula, bit, scheme, per_layer
    (1, "google", 8, "symmetric", True),
    (2, "google", 8, "symmetric", True),
    (2, "google", 4, "affine", False),
    (2, "google", 8, "affine", True),
    (2, "cambricon", 8, "symmetric", True),
    (3, "google", 4, "symmetric", False),
    (3, "google", 8, "affine", True),
]


@pytest.mark.parametrize("k,formula,bit,scheme,per_layer", CASES)
def test_qat_conv_matches_reference(k, formula, bit, scheme, per_layer):
    rng = np.random.default_rng(k * 100 + bit)
    cls = getattr(flow.nn.qat, f"QatConv{k}d")
    kw = dict(stride=2 if k == 2 else 1, padding=1, dilation=1, groups=1)
    m = cls(4, 6, 3, stride=kw["stride"], padding=1, quantization_formula=formula, quantization_bit=bit,
            quantization_scheme=scheme, weight_quant_per_layer=per_layer, input_quant_momentum=0.9)
    ref = _Reference(k, formula, bit, scheme, per_layer, 0.9, kw)
    w = torch.tensor(m.weight.numpy(), requires_grad=True)
    b = torch.tensor(m.bias.numpy(), requires_grad=True)
    spatial = [7] * k
    # three training steps (moving average of the input range), then eval (statistics frozen)
    for step, training in enumerate([True, True, True, False]):
        m.train(training)
        x_np = (rng.standard_normal([2, 4] + spatial) * (1 + step)).astype(np.float32)
        x = flow.tensor(x_np, requires_grad=True)
        tx = torch.tensor(x_np, requires_grad=True)
        out, tout = m(x), ref(tx, w, b, training)
        np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-5)
        g = rng.standard_normal(tout.shape).astype(np.float32)
        m.weight.grad, m.bias.grad, w.grad, b.grad = None, None, None, None
        out.backward(flow.tensor(g))
        tout.backward(torch.tensor(g))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(m.weight.grad.numpy(), w.grad.numpy(), rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(m.bias.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-4)
    mm = m.input_min_max_observer
    np.testing.assert_allclose(mm.moving_max.numpy(), ref.moving[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(mm.moving_min.numpy(), ref.moving[1].numpy(), rtol=1e-6)


def test_qat_conv_is_a_conv_with_upstream_arguments():
    # upstream's documented example: QatConv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
    m = flow.nn.QatConv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1),
                          quantization_formula="google", quantization_bit=8, quantization_scheme="symmetric")
    assert isinstance(m, flow.nn.Conv2d) and flow.nn.QatConv2d is flow.nn.qat.QatConv2d
    assert m(flow.randn(2, 16, 10, 20)).shape == (2, 33, 6, 20)  # floor((10 + 8 - 6 - 1) / 2) + 1 = 6
    assert tuple(m.current_train_step.shape) == (1,) and m.current_train_step.dtype == flow.int64
    assert set(dict(m.named_parameters())) == {"weight", "bias"}
    # the input's moving min / max are buffers: they are saved and restored with the model
    sd = m.state_dict()
    assert {"input_min_max_observer.moving_max", "input_min_max_observer.moving_min", "current_train_step"} <= set(sd)
    m2 = flow.nn.QatConv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
    m2.load_state_dict(sd)
    m.eval(), m2.eval()
    x = flow.randn(1, 16, 10, 20)
    np.testing.assert_array_equal(m(x).numpy(), m2(x).numpy())
    # defaults as upstream: google, 8 bits, symmetric, per-layer weights, momentum 0.95
    d = flow.nn.qat.QatConv1d(2, 2, 3)
    assert d.weight_min_max_observer.per_layer_quantization is True
    assert d.input_min_max_observer.momentum == 0.95 and d.fake_quantizer.quantization_bit == 8


def test_qat_conv_quantizes_weight_onto_grid():
    # 4-bit symmetric per channel: the weight the convolution sees has at most 16 values per channel
    m = flow.nn.qat.QatConv2d(3, 5, 3, bias=False, quantization_bit=4, weight_quant_per_layer=False)
    x = flow.tensor(np.random.default_rng(3).standard_normal((1, 3, 3, 3)).astype(np.float32))
    m(x)  # one training step records the input's range
    m.eval()  # frozen from here: the two calls below see the same qparams
    out = m(x)
    qin, qw = m._fake_quantized(x)
    for c in range(5):
        assert len(np.unique(qw.numpy()[c])) <= 16
    np.testing.assert_allclose(out.numpy(), flow.nn.functional.conv2d(qin, qw, None).numpy(), rtol=1e-6)


def test_qat_conv_errors():
    with pytest.raises(ValueError, match="quantization_formula"):
        flow.nn.qat.QatConv2d(1, 1, 1, quantization_formula="bad")
    with pytest.raises(ValueError, match="quantization_bit"):
        flow.nn.qat.QatConv2d(1, 1, 1, quantization_bit=33)  # [2, 32], as nn.Quantization
    with pytest.raises(ValueError, match="quantization_scheme"):
        flow.nn.qat.QatConv3d(1, 1, 1, quantization_scheme="asym")
    with pytest.raises(ValueError, match="momentum"):
        flow.nn.qat.QatConv1d(1, 1, 1, input_quant_momentum=2.0)
    # eval before any training step: no input statistics to quantize with
    m = flow.nn.qat.QatConv2d(1, 1, 1).eval()
    with pytest.raises(RuntimeError, match="no statistics"):
        m(flow.randn(1, 1, 2, 2))


@pytest.mark.parametrize("scheme", ["symmetric", "affine"])
def test_qat_conv_in_nn_graph_matches_eager(scheme):
    # OneFlow runs QAT models under nn.Graph: the observer's update is traced without reading values
    rng = np.random.default_rng(7)
    eager = flow.nn.QatConv2d(3, 4, 3, quantization_scheme=scheme, weight_quant_per_layer=False)
    traced = flow.nn.QatConv2d(3, 4, 3, quantization_scheme=scheme, weight_quant_per_layer=False)
    traced.load_state_dict(eager.state_dict())

    class G(flow.nn.Graph):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def build(self, x):
            return self.m(x)

    g = G(traced)
    xs = [flow.tensor((rng.standard_normal((2, 3, 8, 8)) * (i + 1)).astype(np.float32)) for i in range(4)]
    for x in xs[:3]:  # training: the moving range is updated by every call
        np.testing.assert_allclose(g(x).numpy(), eager(x).numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(traced.input_min_max_observer.moving_max.numpy(),
                                  eager.input_min_max_observer.moving_max.numpy())
    eager.eval(), traced.eval()
    frozen = traced.input_min_max_observer.moving_max.numpy().copy()
    np.testing.assert_allclose(G(traced)(xs[3]).numpy(), eager(xs[3]).numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(traced.input_min_max_observer.moving_max.numpy(), frozen)
