"""Conv1d / Conv2d / Conv3d / Linear of PyTorch's eager QAT: the float module plus
`weight_fake_quant = qconfig.weight()`, applied to the weight in every forward (the bias stays
float). prepare_qat swaps float modules for these with from_float, sharing their parameters."""
from ....nn import functional as F
from ....nn.modules.conv import Conv1d as _Conv1d, Conv2d as _Conv2d, Conv3d as _Conv3d
from ....nn.modules.linear import Linear as _Linear
from ..intrinsic.modules import _FusedModule


def _check_qconfig(cls, qconfig):
    if qconfig is None:
        raise ValueError(f"{cls.__module__}.{cls.__name__}: a qconfig is required (QAT modules fake-quantize "
                         f"their weight with qconfig.weight)")


class _QatConvMixin:
    def forward(self, input):  # noqa: A002
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        qconfig = getattr(mod, "qconfig", None)
        _check_qconfig(cls, qconfig)
        if isinstance(mod, _FusedModule):  # ConvReLU / LinearReLU: the first part's parameters
            mod = mod[0]
        qat = cls(mod.in_channels, mod.out_channels, mod.kernel_size, stride=mod.stride, padding=mod.padding,
                  dilation=mod.dilation, groups=mod.groups, bias=mod.bias is not None,
                  padding_mode=mod.padding_mode, qconfig=qconfig)
        qat.weight, qat.bias = mod.weight, mod.bias  # shared: training the QAT model trains these
        qat.train(mod.training)
        return qat

    def to_float(self):
        base = self._FLOAT_MODULE
        conv = base(self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding, self.dilation,
                    self.groups, self.bias is not None, self.padding_mode)
        conv.weight, conv.bias = self.weight, self.bias
        return conv


def _qat_conv(base, k):
    class Conv(_QatConvMixin, base):
        _FLOAT_MODULE = base

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", qconfig=None, device=None, dtype=None):
            base.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                          padding_mode, device, dtype)
            _check_qconfig(type(self), qconfig)
            self.qconfig = qconfig
            self.weight_fake_quant = qconfig.weight()

    Conv.__name__ = Conv.__qualname__ = f"Conv{k}d"
    Conv.__module__ = __name__
    Conv.__doc__ = f"Conv{k}d with its weight fake-quantized by qconfig.weight (PyTorch's torch.ao.nn.qat.Conv{k}d)."
    return Conv


Conv1d, Conv2d, Conv3d = _qat_conv(_Conv1d, 1), _qat_conv(_Conv2d, 2), _qat_conv(_Conv3d, 3)


class Linear(_Linear):
    """Linear with its weight fake-quantized by qconfig.weight (PyTorch's torch.ao.nn.qat.Linear)."""
    _FLOAT_MODULE = _Linear

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        _check_qconfig(type(self), qconfig)
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):  # noqa: A002
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        qconfig = getattr(mod, "qconfig", None)
        _check_qconfig(cls, qconfig)
        if isinstance(mod, _FusedModule):  # ConvReLU / LinearReLU: the first part's parameters
            mod = mod[0]
        qat = cls(mod.in_features, mod.out_features, mod.bias is not None, qconfig=qconfig)
        qat.weight, qat.bias = mod.weight, mod.bias
        qat.train(mod.training)
        return qat

    def to_float(self):
        lin = _Linear(self.in_features, self.out_features, self.bias is not None)
        lin.weight, lin.bias = self.weight, self.bias
        return lin
