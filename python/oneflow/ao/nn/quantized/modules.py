"""Converted (quantized) modules, run in float.

There are no int8 tensors or int8 kernels here, so a converted model carries each quantized
tensor as float values that are exactly representable as (q - zero_point) * scale:
* Quantize (from QuantStub): rounds its input onto the grid of its frozen (scale, zero_point),
  clamped to the dtype's range (quint8 [0, 255], qint8 [-128, 127]), as torch.quantize_per_tensor;
* Conv*d / Linear: weight quantized then dequantized with the frozen weight qparams (per channel
  or per tensor), float convolution / matmul with the float bias, output rounded onto the grid of
  the frozen output (scale, zero_point), as PyTorch's quantized kernels requantize;
* DeQuantize: the identity (values are already floats).
Results therefore match PyTorch's converted int8 model up to the rounding of the int32
accumulation and of the requantization, i.e. within one output quantization step.
"""
from ....nn import functional as F
from ....nn.modules.container import Sequential
from ....nn.modules.module import Module
from ....nn.parameter import Parameter
from ...quantization.fake_quantize import fake_quantize
from ...quantization.observer import qint8, quint8

_DTYPE_RANGE = {quint8: (0, 255), qint8: (-128, 127)}


def _grid(x, scale, zero_point, dtype, ch_axis=None):
    import oneflow as flow
    lo, hi = _DTYPE_RANGE[dtype]
    with flow.no_grad():
        return fake_quantize(x.detach(), scale, zero_point, lo, hi, ch_axis)


class _OutputQuant(Module):
    def _init_output(self, scale, zero_point, dtype):
        import oneflow as flow
        self.register_buffer("scale", flow.tensor(scale, dtype=flow.float32).reshape(-1))
        self.register_buffer("zero_point", flow.tensor(zero_point, dtype=flow.int64).reshape(-1))
        self.dtype = dtype

    def _requantize(self, y):
        return _grid(y, self.scale, self.zero_point, self.dtype)


class Quantize(_OutputQuant):
    def __init__(self, scale, zero_point, dtype=quint8):
        super().__init__()
        self._init_output(scale, zero_point, dtype)

    def forward(self, x):
        return self._requantize(x)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return Quantize(*_output_qparams(mod))

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(Module):
    def forward(self, x):
        return x

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return DeQuantize()


def _float_weight_bias(mod):
    """The weight and bias to quantize: a fused float module's conv / linear, a QAT ConvBn's with
    the batch norm folded in (running statistics, as PyTorch's convert)."""
    from ..intrinsic.modules import _FusedModule
    from ..intrinsic.qat import _ConvBnMixin
    if isinstance(mod, _ConvBnMixin):
        from ....nn.utils.fusion import fuse_conv_bn_weights
        bn = mod.bn
        return fuse_conv_bn_weights(mod.weight, mod.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
                                    bn.bias)
    if isinstance(mod, _FusedModule):
        return mod[0].weight, mod[0].bias
    return mod.weight, mod.bias


def _frozen_weight(mod, weight):
    """The module's weight quantized then dequantized with its weight fake-quantizer's
    calculate_qparams (PyTorch's convert calls the fake-quantizer once more first, so its observer
    sees the final weight; a float module gets a fresh one from its qconfig)."""
    wfq = getattr(mod, "weight_fake_quant", None)
    if wfq is None:  # a float module observed in prepare (PyTorch's Conv1d): a fresh weight observer
        wfq = mod.qconfig.weight()
    wfq(weight)
    scale, zp = wfq.calculate_qparams()
    ch_axis = wfq.ch_axis if wfq.is_per_channel else None
    return _grid(weight, scale, zp, wfq.dtype, ch_axis)


def _output_qparams(mod):
    post = getattr(mod, "activation_post_process", None)
    if post is None:
        raise RuntimeError(f"convert: {type(mod).__name__} has no activation_post_process (run prepare_qat first)")
    scale, zp = post.calculate_qparams()
    return float(scale.reshape(-1)[0]), int(zp.reshape(-1)[0]), post.dtype


class _QuantizedConv(_OutputQuant):
    _k = 0

    def __init__(self, weight, bias, stride, padding, dilation, groups, scale, zero_point, dtype=quint8):
        super().__init__()
        self.weight = Parameter(weight.detach().clone(), requires_grad=False)
        self.bias = None if bias is None else Parameter(bias.detach().clone(), requires_grad=False)
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self._init_output(scale, zero_point, dtype)

    _relu = False

    def forward(self, x):
        conv = getattr(F, f"conv{self._k}d")
        y = conv(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        return self._requantize(F.relu(y) if self._relu else y)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp, dtype = _output_qparams(mod)
        weight, bias = _float_weight_bias(mod)
        conv = mod[0] if isinstance(mod, Sequential) else mod
        if conv.padding_mode != "zeros":
            raise NotImplementedError(f"convert: quantized Conv{cls._k}d supports padding_mode='zeros' only, got "
                                      f"{conv.padding_mode!r}")
        return cls(_frozen_weight(mod, weight), bias, conv.stride, conv.padding, conv.dilation, conv.groups, scale,
                   zp, dtype)

    def extra_repr(self):
        return (f"weight={tuple(self.weight.shape)}, stride={self.stride}, padding={self.padding}, "
                f"scale={self.scale}, zero_point={self.zero_point}")


def _conv(k, relu):
    name = f"Conv{'ReLU' if relu else ''}{k}d"
    return type(name, (_QuantizedConv,), {"_k": k, "_relu": relu, "__module__": __name__,
                                          "__doc__": f"Converted {name}, run in float (module docstring)."})


Conv1d, Conv2d, Conv3d = _conv(1, False), _conv(2, False), _conv(3, False)
ConvReLU1d, ConvReLU2d, ConvReLU3d = _conv(1, True), _conv(2, True), _conv(3, True)


class Linear(_OutputQuant):
    """Converted Linear, run in float (see the module docstring)."""

    def __init__(self, weight, bias, scale, zero_point, dtype=quint8):
        super().__init__()
        self.weight = Parameter(weight.detach().clone(), requires_grad=False)
        self.bias = None if bias is None else Parameter(bias.detach().clone(), requires_grad=False)
        self._init_output(scale, zero_point, dtype)

    _relu = False

    def forward(self, x):
        y = F.linear(x, self.weight, self.bias)
        return self._requantize(F.relu(y) if self._relu else y)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp, dtype = _output_qparams(mod)
        weight, bias = _float_weight_bias(mod)
        return cls(_frozen_weight(mod, weight), bias, scale, zp, dtype)

    def extra_repr(self):
        return f"weight={tuple(self.weight.shape)}, scale={self.scale}, zero_point={self.zero_point}"


class LinearReLU(Linear):
    """Converted LinearReLU: relu before the output is rounded onto its grid."""
    _relu = True


class FloatOp(_OutputQuant):
    """A converted leaf module without weights to quantize (BatchNorm2d/3d, ELU, Hardswish,
    LeakyReLU, ReLU6, LayerNorm, GroupNorm, InstanceNorm*d): the float module (eval mode, its
    parameters and statistics as trained) with its output rounded onto the frozen grid learned by
    its activation_post_process, as PyTorch's quantized versions requantize their outputs."""

    def __init__(self, op, scale, zero_point, dtype=quint8):
        super().__init__()
        self.op = op
        self._init_output(scale, zero_point, dtype)

    def forward(self, x):
        return self._requantize(self.op(x))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp, dtype = _output_qparams(mod)
        return cls(_bare_copy(mod), scale, zp, dtype)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}"


def _bare_copy(mod):
    """An eval-mode copy of a prepared leaf module without its observer, hook and qconfig."""
    import copy
    op = copy.deepcopy(mod)
    for key in ("activation_post_process", "qconfig"):
        op.__dict__.pop(key, None)
        op._modules.pop(key, None)
    op._forward_hooks.clear()
    return op.eval()


class ReLU6(Module):
    """Converted ReLU6: PyTorch's quantized relu6 keeps its input's (scale, zero_point) rather than
    requantizing with the observer's, so here the float relu6 of values already on the input's grid
    (the cap 6.0 itself is not rounded onto that grid: only inputs above 6 can differ by < 1 step)."""

    def __init__(self, op):
        super().__init__()
        self.op = op

    def forward(self, x):
        return self.op(x)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(_bare_copy(mod))
