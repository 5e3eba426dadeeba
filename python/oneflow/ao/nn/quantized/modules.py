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


def _frozen_weight(mod):
    """The module's weight quantized then dequantized with its weight fake-quantizer's
    calculate_qparams (PyTorch's convert calls the fake-quantizer once more first, so its observer
    sees the final weight; a float module gets a fresh one from its qconfig)."""
    wfq = getattr(mod, "weight_fake_quant", None)
    if wfq is None:  # a float module observed in prepare (PyTorch's Conv1d): a fresh weight observer
        wfq = mod.qconfig.weight()
    wfq(mod.weight)
    scale, zp = wfq.calculate_qparams()
    ch_axis = wfq.ch_axis if wfq.is_per_channel else None
    return _grid(mod.weight, scale, zp, wfq.dtype, ch_axis)


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

    def forward(self, x):
        conv = getattr(F, f"conv{self._k}d")
        return self._requantize(conv(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                                     self.groups))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if mod.padding_mode != "zeros":
            raise NotImplementedError(f"convert: quantized Conv{cls._k}d supports padding_mode='zeros' only, got "
                                      f"{mod.padding_mode!r}")
        scale, zp, dtype = _output_qparams(mod)
        return cls(_frozen_weight(mod), mod.bias, mod.stride, mod.padding, mod.dilation, mod.groups, scale, zp,
                   dtype)

    def extra_repr(self):
        return (f"weight={tuple(self.weight.shape)}, stride={self.stride}, padding={self.padding}, "
                f"scale={self.scale}, zero_point={self.zero_point}")


def _conv(k):
    cls = type(f"Conv{k}d", (_QuantizedConv,), {"_k": k, "__module__": __name__,
                                                 "__doc__": f"Converted Conv{k}d, run in float (module docstring)."})
    return cls


Conv1d, Conv2d, Conv3d = _conv(1), _conv(2), _conv(3)


class Linear(_OutputQuant):
    """Converted Linear, run in float (see the module docstring)."""

    def __init__(self, weight, bias, scale, zero_point, dtype=quint8):
        super().__init__()
        self.weight = Parameter(weight.detach().clone(), requires_grad=False)
        self.bias = None if bias is None else Parameter(bias.detach().clone(), requires_grad=False)
        self._init_output(scale, zero_point, dtype)

    def forward(self, x):
        return self._requantize(F.linear(x, self.weight, self.bias))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp, dtype = _output_qparams(mod)
        return cls(_frozen_weight(mod), mod.bias, scale, zp, dtype)

    def extra_repr(self):
        return f"weight={tuple(self.weight.shape)}, scale={self.scale}, zero_point={self.zero_point}"
