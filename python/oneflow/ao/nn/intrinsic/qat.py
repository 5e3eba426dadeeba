"""QAT versions of the fused modules (PyTorch's torch.ao.nn.intrinsic.qat).

ConvBn*d / ConvBnReLU*d train the convolution with batch norm folded in, PyTorch's approximate
method: the weight is scaled by gamma / sqrt(running_var + eps) before fake quantization, the
convolution output is divided back by that factor (the conv bias added after), and the batch norm
then runs as usual (batch statistics and running-stat updates in training unless frozen with
freeze_bn_stats). convert folds the batch norm into the weight and bias (running statistics).
ConvReLU*d / LinearReLU are the QAT conv / linear followed by relu."""
from ....nn import functional as F
from ....nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from ....nn.modules.conv import Conv1d, Conv2d, Conv3d
from ....nn.parameter import Parameter
from ..qat.modules import Conv2d as _QatConv2d, Conv3d as _QatConv3d, Linear as _QatLinear, _check_qconfig
from . import modules as nni


class _ConvBnMixin:
    def _init_conv_bn(self, bn_cls, out_channels, bias, eps, momentum, freeze_bn, qconfig):
        _check_qconfig(type(self), qconfig)
        import oneflow as flow
        self.qconfig = qconfig
        self.freeze_bn = freeze_bn if self.training else True
        self.bn = bn_cls(out_channels, eps, momentum, True, True)
        self.weight_fake_quant = qconfig.weight()
        self.bias = Parameter(flow.zeros(out_channels)) if bias else None
        if self.freeze_bn:
            self.freeze_bn_stats()
        else:
            self.update_bn_stats()

    def update_bn_stats(self):
        self.freeze_bn = False
        self.bn.training = True
        return self

    def freeze_bn_stats(self):
        self.freeze_bn = True
        self.bn.training = False
        return self

    def train(self, mode=True):
        # a frozen batch norm stays in eval mode whatever the model's mode (as PyTorch)
        self.training = mode
        if not self.freeze_bn:
            for module in self.children():
                module.train(mode)
        return self

    def _forward_bn(self, x):
        import oneflow as flow
        running_std = flow.sqrt(self.bn.running_var + self.bn.eps)
        scale_factor = self.bn.weight / running_std
        wshape = [-1] + [1] * (self.weight.ndim - 1)
        bshape = [1, -1] + [1] * (self.weight.ndim - 2)
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(wshape))
        zero_bias = flow.zeros(self.out_channels, dtype=x.dtype, device=x.device)
        conv = self._conv_forward(x, scaled_weight, zero_bias)
        conv_orig = conv / scale_factor.reshape(bshape)
        if self.bias is not None:
            conv_orig = conv_orig + self.bias.reshape(bshape)
        return self.bn(conv_orig)

    def forward(self, x):
        out = self._forward_bn(x)
        return F.relu(out) if self._with_relu else out

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        qconfig = getattr(mod, "qconfig", None)
        _check_qconfig(cls, qconfig)
        conv, bn = mod[0], mod[1]
        qat = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                  conv.groups, conv.bias is not None, conv.padding_mode, bn.eps, bn.momentum, False, qconfig)
        qat.weight, qat.bias = conv.weight, conv.bias
        qat.bn.weight, qat.bn.bias = bn.weight, bn.bias
        qat.bn.running_mean, qat.bn.running_var = bn.running_mean, bn.running_var
        qat.bn.num_batches_tracked = bn.num_batches_tracked
        return qat


def _conv_bn(base, bn_cls, k, relu):
    name = f"ConvBn{'ReLU' if relu else ''}{k}d"

    class ConvBn(_ConvBnMixin, base):
        _with_relu = relu
        _FLOAT_MODULE = getattr(nni, name)

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=None, padding_mode="zeros", eps=1e-05, momentum=0.1, freeze_bn=False, qconfig=None):
            base.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, False,
                          padding_mode)
            self._init_conv_bn(bn_cls, out_channels, bool(bias), eps, momentum, freeze_bn, qconfig)

    ConvBn.__name__ = ConvBn.__qualname__ = name
    ConvBn.__module__ = __name__
    ConvBn.__doc__ = f"QAT {name}: batch norm folded into the fake-quantized weight (module docstring)."
    return ConvBn


ConvBn1d, ConvBnReLU1d = _conv_bn(Conv1d, BatchNorm1d, 1, False), _conv_bn(Conv1d, BatchNorm1d, 1, True)
ConvBn2d, ConvBnReLU2d = _conv_bn(Conv2d, BatchNorm2d, 2, False), _conv_bn(Conv2d, BatchNorm2d, 2, True)
ConvBn3d, ConvBnReLU3d = _conv_bn(Conv3d, BatchNorm3d, 3, False), _conv_bn(Conv3d, BatchNorm3d, 3, True)


class ConvReLU2d(_QatConv2d):
    _FLOAT_MODULE = nni.ConvReLU2d

    def forward(self, input):  # noqa: A002
        return F.relu(super().forward(input))


class ConvReLU3d(_QatConv3d):
    _FLOAT_MODULE = nni.ConvReLU3d

    def forward(self, input):  # noqa: A002
        return F.relu(super().forward(input))


class LinearReLU(_QatLinear):
    _FLOAT_MODULE = nni.LinearReLU

    def forward(self, input):  # noqa: A002
        return F.relu(super().forward(input))


def freeze_bn_stats(mod):
    """model.apply(freeze_bn_stats): batch norms of QAT ConvBn modules stop updating (eval mode)."""
    if isinstance(mod, _ConvBnMixin):
        mod.freeze_bn_stats()


def update_bn_stats(mod):
    if isinstance(mod, _ConvBnMixin):
        mod.update_bn_stats()


__all__ = ["ConvBn1d", "ConvBn2d", "ConvBn3d", "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d", "ConvReLU2d",
           "ConvReLU3d", "LinearReLU", "freeze_bn_stats", "update_bn_stats"]
