"""nn.functional activations with PyTorch's Python-level arguments (``inplace=``, F.rrelu's
``training=``) over the op table's entries ``flow._C.X`` / ``flow._C.X_``, and the in-place
top-level names PyTorch has (``flow.selu_``...)."""
import oneflow as _flow

from . import _oneflow_internal as _C
from .nn import functional as _F


def relu(input, inplace=False):
    return _C.relu_(input) if inplace else _C.relu(input)


def relu6(input, inplace=False):
    return _C.relu6_(input) if inplace else _C.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    return _C.elu_(input, alpha) if inplace else _C.elu(input, alpha)


def selu(input, inplace=False):
    return _C.selu_(input) if inplace else _C.selu(input)


def celu(input, alpha=1.0, inplace=False):
    return _C.celu_(input, alpha) if inplace else _C.celu(input, alpha)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _C.hardtanh_(input, min_val, max_val) if inplace else _C.hardtanh(input, min_val, max_val)


def hardsigmoid(input, inplace=False):
    return _C.hardsigmoid_(input) if inplace else _C.hardsigmoid(input)


def hardswish(input, inplace=False):
    return _C.hardswish_(input) if inplace else _C.hardswish(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _C.leaky_relu_(input, negative_slope) if inplace else _C.leaky_relu(input, negative_slope)


def threshold(input, threshold, value, inplace=False):
    return _C.threshold_(input, threshold, value) if inplace else _C.threshold(input, threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    f = _C.rrelu_ if inplace else _C.rrelu
    return f(input, lower, upper, training)


def silu(input, inplace=False):
    return _C.silu_(input) if inplace else _C.silu(input)


def mish(input, inplace=False):
    return _C.mish_(input) if inplace else _C.mish(input)


for _f in (relu, relu6, elu, selu, celu, hardtanh, hardsigmoid, hardswish, leaky_relu, threshold,
           rrelu, silu, mish):
    setattr(_F, _f.__name__, _f)

# torch.relu_, torch.selu_, ... (the table exposes in-place forms as Tensor methods and
# nn.functional.X_ only).
for _name in ("relu_", "selu_", "celu_", "rrelu_", "threshold_"):
    setattr(_flow, _name, getattr(_C, _name))
del _f, _name
