"""Activation modules over the table's pointwise ops: ReLU, Sigmoid, Tanh, GELU, SiLU.
(Other activations arrive as table ops with their own issue.)"""
import math

from ... import _oneflow_internal as _C
from .module import Module


class ReLU(Module):
    """max(0, x); `inplace=True` overwrites the input (relu_)."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return input.relu_() if self.inplace else _C.relu(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input):
        return _C.sigmoid(input)


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input):
        return _C.tanh(input)


def _gelu_tanh(x):
    # The tanh approximation composed from table ops (no fused kernel yet):
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * 0.5 * (_C.tanh(inner) + 1.0)


class GELU(Module):
    """x * Phi(x) (approximate='none', the erf form) or its tanh approximation ('tanh')."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        if self.approximate == "none":
            return _C.gelu(input)
        if self.approximate == "tanh":
            return _gelu_tanh(input)
        raise RuntimeError("approximate argument must be either none or tanh.")

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x); `inplace=True` overwrites the input (x.mul_(sigmoid(x)): there is no silu_
    kernel yet)."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return input.mul_(_C.sigmoid(input)) if self.inplace else _C.silu(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""
