"""Conv1d/2d/3d and ConvTranspose1d/2d/3d: PyTorch's modules (arguments, checks, default
initialisation, repr) over nn.functional.convNd / conv_transposeNd."""
import math

from ... import _oneflow_internal as _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..._padding import pad_nonzero
from .module import Module


def _ntuple(v, k):
    if isinstance(v, (list, tuple)):
        v = tuple(v)
        return v * k if len(v) == 1 else v
    return (v,) * k


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]
    _k = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_modes:
            raise ValueError(f"padding_mode must be one of {valid_modes}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # The (left, right) padding of each spatial dim, last dim first, for non-zero padding modes.
        if isinstance(padding, str):
            pads = []
            for d, k in zip(reversed(dilation), reversed(kernel_size)):
                total = d * (k - 1) if padding == "same" else 0
                pads += [total // 2, total - total // 2]
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(_C.empty(shape + tuple(kernel_size), dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_C.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's default: kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


def _conv_class(k):
    conv = getattr(F, f"conv{k}d")

    class Conv(_ConvNd):
        _k = k

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            super().__init__(in_channels, out_channels, _ntuple(kernel_size, k), _ntuple(stride, k),
                             padding if isinstance(padding, str) else _ntuple(padding, k), _ntuple(dilation, k),
                             False, _ntuple(0, k), groups, bias, padding_mode, device, dtype)

        def _conv_forward(self, input, weight, bias):
            if self.padding_mode != "zeros":
                padded = pad_nonzero(input, self._reversed_padding_repeated_twice, self.padding_mode)
                return conv(padded, weight, bias, self.stride, _ntuple(0, k), self.dilation, self.groups)
            return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

        def forward(self, input):
            return self._conv_forward(input, self.weight, self.bias)

    Conv.__name__ = Conv.__qualname__ = f"Conv{k}d"
    Conv.__doc__ = (f"Applies a {k}D convolution over an input of shape (N, C_in, *spatial) or (C_in, *spatial):\n"
                    f"weight (out_channels, in_channels // groups, *kernel_size), PyTorch's default initialisation.\n"
                    f"padding: int, tuple, 'valid' or 'same'; padding_mode: zeros, reflect, replicate, circular.")
    return Conv


Conv1d, Conv2d, Conv3d = _conv_class(1), _conv_class(2), _conv_class(3)


class _ConvTransposeNd(_ConvNd):
    def _output_padding(self, input, output_size, stride, padding, kernel_size, dilation):
        """PyTorch's: the output_padding that gives `output_size` (checked to be reachable)."""
        if output_size is None:
            return self.output_padding
        k = self._k
        size = list(output_size)
        if len(size) > k and len(size) in (k + 1, k + 2):
            size = size[len(size) - k:]  # leading (batch, channel) sizes are ignored
        if len(size) != k:
            raise ValueError(f"ConvTranspose{k}D: for {input.dim()}D input, output_size must have {k} or "
                             f"{k + 2} elements (got {len(output_size)})")
        spatial = list(input.shape)[input.dim() - k:]
        lo = [(spatial[d] - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel_size[d] - 1) + 1
              for d in range(k)]
        hi = [lo[d] + stride[d] - 1 for d in range(k)]
        for d in range(k):
            if not lo[d] <= size[d] <= hi[d]:
                raise ValueError(f"requested an output size of {size}, but valid sizes range from {lo} to {hi} "
                                 f"(for an input of {spatial})")
        return tuple(size[d] - lo[d] for d in range(k))


def _conv_transpose_class(k):
    conv_t = getattr(F, f"conv_transpose{k}d")

    class ConvTranspose(_ConvTransposeNd):
        _k = k

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                     bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
            if padding_mode != "zeros":
                raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
            super().__init__(in_channels, out_channels, _ntuple(kernel_size, k), _ntuple(stride, k),
                             _ntuple(padding, k), _ntuple(dilation, k), True, _ntuple(output_padding, k), groups,
                             bias, padding_mode, device, dtype)

        def forward(self, input, output_size=None):
            output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                                  self.dilation)
            return conv_t(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                          self.dilation)

    ConvTranspose.__name__ = ConvTranspose.__qualname__ = f"ConvTranspose{k}d"
    ConvTranspose.__doc__ = (f"Applies a {k}D transposed convolution (the gradient of Conv{k}d with respect to its "
                             f"input): weight (in_channels, out_channels // groups, *kernel_size).")
    return ConvTranspose


ConvTranspose1d, ConvTranspose2d, ConvTranspose3d = (_conv_transpose_class(1), _conv_transpose_class(2),
                                                     _conv_transpose_class(3))

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]
