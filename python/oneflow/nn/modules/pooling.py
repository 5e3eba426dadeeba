"""Pooling modules: PyTorch's classes (arguments, repr) over nn.functional's pools."""
import os

from ... import _shape
from .. import functional as F
from .module import Module


class _ChannelPos:
    """OneFlow's channel position of the 2-D pools: channels_last when ONEFLOW_ENABLE_NHWC=1 at
    construction (upstream's switch), or after `to_memory_format(flow.channels_last)`."""

    def _init_channel_pos(self):
        self.channel_pos = "channels_last" if os.getenv("ONEFLOW_ENABLE_NHWC") == "1" else "channels_first"

    def to_memory_format(self, memory_format):
        if memory_format is _shape.channels_last:
            self.channel_pos = "channels_last"
        elif memory_format is _shape.contiguous_format:
            self.channel_pos = "channels_first"


def _ntuple(v, k):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * k


def _single(v):
    return _ntuple(v, 1)


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))


class MaxPool1d(_MaxPoolNd):
    """1D max pooling over (N, C, L) or (C, L); `return_indices` also returns the positions."""

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_ChannelPos, _MaxPoolNd):
    """2D max pooling over (N, C, H, W) or (C, H, W); `return_indices` also returns the positions.
    (N, H, W, C) input under ONEFLOW_ENABLE_NHWC=1, as OneFlow."""

    _fn = staticmethod(F.max_pool2d)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._init_channel_pos()

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices,
                            data_format=self.channel_pos)


class MaxPool3d(_MaxPoolNd):
    """3D max pooling over (N, C, D, H, W) or (C, D, H, W); `return_indices` also returns the positions."""

    _fn = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    """1D average pooling (PyTorch stores its arguments as 1-tuples)."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        # OneFlow's default spelling of "no override" is 0 (its signature's default).
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_ChannelPos, _AvgPoolNd):
    """2D average pooling; `divisor_override` (None or 0: the window size) replaces the divisor.
    (N, H, W, C) input under ONEFLOW_ENABLE_NHWC=1, as OneFlow."""

    _fn = staticmethod(F.avg_pool2d)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._init_channel_pos()

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override, data_format=self.channel_pos)


class AvgPool3d(_AvgPoolNd):
    """3D average pooling; `divisor_override` (None or 0: the window size) replaces the divisor."""

    _fn = staticmethod(F.avg_pool3d)


class _AdaptivePool(Module):
    __constants__ = ["output_size"]
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling to a given length, whatever the input's."""

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling to a given (H, W) (None keeps the input's size)."""

    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling to a given (D, H, W) (None keeps the input's size)."""

    _fn = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPool(_AdaptivePool):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling to a given length; `return_indices` also returns the positions."""

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max pooling to a given (H, W) (None keeps the input's size)."""

    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max pooling to a given (D, H, W) (None keeps the input's size)."""

    _fn = staticmethod(F.adaptive_max_pool3d)


class _MaxUnpoolNd(Module):
    _fn = None
    _k = 0

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._k)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._k)
        self.padding = _ntuple(padding, self._k)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: values back at their indices, zeros elsewhere."""

    _fn, _k = staticmethod(F.max_unpool1d), 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d: values back at their indices, zeros elsewhere."""

    _fn, _k = staticmethod(F.max_unpool2d), 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d: values back at their indices, zeros elsewhere."""

    _fn, _k = staticmethod(F.max_unpool3d), 3


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))


class LPPool1d(_LPPoolNd):
    """Power-average pooling: (sum over the window of x^p)^(1/p)."""

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling: (sum over the window of x^p)^(1/p)."""

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling: (sum over the window of x^p)^(1/p)."""

    _fn = staticmethod(F.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    _k = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = output_size
        self.output_ratio = output_ratio
        if output_size is None and output_ratio is None:
            raise ValueError("FractionalMaxPool{k}d requires specifying either an output size, or a pooling ratio"
                             .format(k=self._k))
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            ratios = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * self._k
            if not all(0 < r < 1 for r in ratios):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._k == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over 2-D planes (pseudo-random window starts per plane)."""

    _k = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over 3-D volumes (pseudo-random window starts per volume)."""

    _k = 3


__all__ = [
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d",
]
