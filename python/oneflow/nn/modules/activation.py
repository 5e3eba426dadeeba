"""Activation modules, each a one-line forward over nn.functional / the table's activation ops
(src/ops/table/activation.yaml, softmax.yaml). Reprs follow PyTorch's."""
from ... import _oneflow_internal as _C
from ..parameter import Parameter
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


class GELU(Module):
    """x * Phi(x) (approximate='none', the erf form) or its tanh approximation ('tanh')."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return _C.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x); `inplace=True` overwrites the input (silu_)."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return _C.silu_(input) if self.inplace else _C.silu(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


def _F():
    from .. import functional
    return functional


def _inplace_str(inplace, lead=", "):
    return f"{lead}inplace=True" if inplace else ""


class Threshold(Module):
    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return _F().threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class RReLU(Module):
    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return _F().rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


class Hardtanh(Module):
    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise ValueError("max_val must be greater than min_val")  # torch's assert, as ValueError

    def forward(self, input):
        return _F().hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class _InplaceOnly(Module):
    """An activation whose only option is `inplace` (F.<_fn>(input, inplace))."""

    __constants__ = ["inplace"]
    _fn = ""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(_F(), self._fn)(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class Hardsigmoid(_InplaceOnly):
    _fn = "hardsigmoid"


class Hardswish(_InplaceOnly):
    _fn = "hardswish"


class SELU(_InplaceOnly):
    _fn = "selu"


class Mish(_InplaceOnly):
    _fn = "mish"


class _Alpha(Module):
    __constants__ = ["alpha", "inplace"]
    _fn = ""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return getattr(_F(), self._fn)(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class ELU(_Alpha):
    _fn = "elu"


class CELU(_Alpha):
    _fn = "celu"


class LeakyReLU(Module):
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return _F().leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class GLU(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return _C.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Hardshrink(Module):
    __constants__ = ["lambd"]

    # inplace=: OneFlow's (PyTorch's modules have none); the in-place op checks as hardshrink_.
    def __init__(self, lambd=0.5, inplace=False):
        super().__init__()
        self.lambd, self.inplace = lambd, inplace

    def forward(self, input):
        return (_C.hardshrink_ if self.inplace else _C.hardshrink)(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}" + (", inplace=True" if self.inplace else "")


class Softshrink(Hardshrink):
    def forward(self, input):
        return (_C.softshrink_ if self.inplace else _C.softshrink)(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd) + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return _C.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class _Plain(Module):
    _fn = ""

    def forward(self, input):
        return getattr(_C, self._fn)(input)


class Tanhshrink(_Plain):
    _fn = "tanhshrink"


class Softsign(_Plain):
    _fn = "softsign"


class LogSigmoid(_Plain):
    _fn = "logsigmoid"


class PReLU(Module):
    """max(0, x) + weight * min(0, x); one learnable slope, or one per channel (dim 1)."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        from ... import empty
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        from .. import init
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return _C.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _SoftmaxBase(Module):
    __constants__ = ["dim"]
    _fn = ""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return getattr(_C, self._fn)(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    _fn = "softmax"


class LogSoftmax(_SoftmaxBase):
    _fn = "log_softmax"


class Softmin(_SoftmaxBase):
    _fn = "softmin"


class Softmax2d(Module):
    """softmax over the channels of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return _C.softmax(input, -3)


__all__ = [
    "ReLU", "Sigmoid", "Tanh", "GELU", "SiLU", "Threshold", "RReLU", "Hardtanh", "ReLU6",
    "Hardsigmoid", "Hardswish", "SELU", "Mish", "ELU", "CELU", "LeakyReLU", "GLU", "Hardshrink",
    "Softshrink", "Softplus", "Tanhshrink", "Softsign", "LogSigmoid", "PReLU", "Softmax",
    "LogSoftmax", "Softmin", "Softmax2d",
]
