"""nn.functional activations with PyTorch's Python-level arguments (``inplace=``, F.rrelu's
``training=``) over the op table's entries ``flow._C.X`` / ``flow._C.X_``, and the in-place
top-level names PyTorch has (``flow.selu_``...)."""
from . import _oneflow_internal as _C
from ._export import export, export_value


@export("flow.nn.functional.relu")
def relu(input, inplace=False):
    return _C.relu_(input) if inplace else _C.relu(input)


@export("flow.nn.functional.relu6")
def relu6(input, inplace=False):
    return _C.relu6_(input) if inplace else _C.relu6(input)


@export("flow.nn.functional.elu")
def elu(input, alpha=1.0, inplace=False):
    return _C.elu_(input, alpha) if inplace else _C.elu(input, alpha)


@export("flow.nn.functional.selu")
def selu(input, inplace=False):
    return _C.selu_(input) if inplace else _C.selu(input)


@export("flow.nn.functional.celu")
def celu(input, alpha=1.0, inplace=False):
    return _C.celu_(input, alpha) if inplace else _C.celu(input, alpha)


@export("flow.nn.functional.hardtanh")
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _C.hardtanh_(input, min_val, max_val) if inplace else _C.hardtanh(input, min_val, max_val)


@export("flow.nn.functional.hardsigmoid")
def hardsigmoid(input, inplace=False):
    return _C.hardsigmoid_(input) if inplace else _C.hardsigmoid(input)


@export("flow.nn.functional.hardswish")
def hardswish(input, inplace=False):
    return _C.hardswish_(input) if inplace else _C.hardswish(input)


@export("flow.nn.functional.leaky_relu")
def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _C.leaky_relu_(input, negative_slope) if inplace else _C.leaky_relu(input, negative_slope)


@export("flow.nn.functional.threshold")
def threshold(input, threshold, value, inplace=False):
    return _C.threshold_(input, threshold, value) if inplace else _C.threshold(input, threshold, value)


@export("flow.nn.functional.rrelu")
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    f = _C.rrelu_ if inplace else _C.rrelu
    return f(input, lower, upper, training)


@export("flow.nn.functional.silu")
def silu(input, inplace=False):
    return _C.silu_(input) if inplace else _C.silu(input)


@export("flow.nn.functional.mish")
def mish(input, inplace=False):
    return _C.mish_(input) if inplace else _C.mish(input)


# The in-place forms are the table's entries themselves: nn.functional.X_ of every activation above
# and the top-level in-place names PyTorch has (torch.relu_, torch.selu_, ...).
for _name in ("relu", "relu6", "elu", "selu", "celu", "hardtanh", "hardsigmoid", "hardswish", "leaky_relu",
              "threshold", "rrelu", "silu", "mish"):
    export_value(getattr(_C, _name + "_"), "flow.nn.functional." + _name + "_",
                 *(["flow." + _name + "_"] if _name in ("relu", "selu", "celu", "rrelu", "threshold") else []))
del _name
