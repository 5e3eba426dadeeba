"""QatConv1d / QatConv2d / QatConv3d: OneFlow's quantization-aware convolutions.

Each is the plain Conv{1,2,3}d (same constructor arguments, same parameters) plus three extra
submodules that make the convolution see the quantization error while training:
* input_min_max_observer: a MovingAverageMinMaxObserver over the input (per tensor), updated in
  training mode with `input_quant_momentum` (the first batch initialises the moving min / max);
  it stops updating in eval mode and then keeps using the statistics learned so far;
* weight_min_max_observer: a MinMaxObserver over the weight, per layer or per output channel
  (`weight_quant_per_layer=False`);
* fake_quantizer: FakeQuantization applied to both, so the gradient passes straight through.
The formulas (google / cambricon, symmetric / affine, 2..8 bits) are those of
oneflow.nn.modules.quantization. The `current_train_step` buffer is kept at 0, as in OneFlow, so
the input statistics are updated on every training step (the observer's stop_update_after_iters
is 1).
"""
from ... import _oneflow_internal as _C
from ..modules.conv import Conv1d, Conv2d, Conv3d
from ..modules.quantization import FakeQuantization, MinMaxObserver, MovingAverageMinMaxObserver


class _QatConvMixin:
    """Builds the observers and the fake quantizer; the forward of every QatConv*d."""

    def _init_fake_quant(self, quantization_formula, quantization_bit, quantization_scheme, weight_quant_per_layer,
                         input_quant_momentum):
        # the observers validate formula / bit / scheme and raise ValueError naming what is wrong
        self.input_min_max_observer = MovingAverageMinMaxObserver(
            training=self.training, quantization_formula=quantization_formula, stop_update_after_iters=1,
            quantization_bit=quantization_bit, quantization_scheme=quantization_scheme,
            momentum=input_quant_momentum)
        self.register_buffer("current_train_step", _C.zeros(1, dtype=_C.int64))
        self.weight_min_max_observer = MinMaxObserver(
            quantization_formula=quantization_formula, quantization_bit=quantization_bit,
            quantization_scheme=quantization_scheme, per_layer_quantization=weight_quant_per_layer)
        self.fake_quantizer = FakeQuantization(quantization_formula=quantization_formula,
                                               quantization_bit=quantization_bit,
                                               quantization_scheme=quantization_scheme)
        self.channel_pos = "channels_first"

    def _fake_quantized(self, x):
        in_scale, in_zero_point = self.input_min_max_observer(x, self.current_train_step)
        w_scale, w_zero_point = self.weight_min_max_observer(self.weight)
        return self.fake_quantizer(x, in_scale, in_zero_point), self.fake_quantizer(self.weight, w_scale, w_zero_point)

    def forward(self, x):
        fq_input, fq_weight = self._fake_quantized(x)
        return self._conv_forward(fq_input, fq_weight, self.bias)

    def extra_repr(self):
        obs = self.weight_min_max_observer
        return (super().extra_repr() + f", quantization_formula={obs.quantization_formula}, "
                f"quantization_bit={obs.quantization_bit}, quantization_scheme={obs.quantization_scheme}, "
                f"weight_quant_per_layer={obs.per_layer_quantization}, "
                f"input_quant_momentum={self.input_min_max_observer.momentum}")


def _qat_class(base, k):
    class QatConv(_QatConvMixin, base):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", quantization_formula="google", quantization_bit=8,
                     quantization_scheme="symmetric", weight_quant_per_layer=True, input_quant_momentum=0.95):
            base.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                          padding_mode)
            self._init_fake_quant(quantization_formula, quantization_bit, quantization_scheme,
                                  weight_quant_per_layer, input_quant_momentum)

    QatConv.__name__ = QatConv.__qualname__ = f"QatConv{k}d"
    QatConv.__doc__ = (f"Conv{k}d whose input and weight are fake-quantized (OneFlow's formulas) for "
                       f"quantization-aware training; extra arguments: quantization_formula ('google' | "
                       f"'cambricon'), quantization_bit (2..8), quantization_scheme ('symmetric' | 'affine'), "
                       f"weight_quant_per_layer (False: per output channel), input_quant_momentum (moving "
                       f"average of the input's min / max).")
    QatConv.__module__ = __name__
    return QatConv


QatConv1d, QatConv2d, QatConv3d = _qat_class(Conv1d, 1), _qat_class(Conv2d, 2), _qat_class(Conv3d, 3)

__all__ = ["QatConv1d", "QatConv2d", "QatConv3d"]
