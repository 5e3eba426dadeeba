"""oneflow.nn: the module system (Module, Parameter, containers, layers), nn.init, nn.utils and
nn.functional (filled from the op table by oneflow/__init__.py, plus Python functions)."""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import modules  # noqa: F401
from . import parameter  # noqa: F401
from . import utils  # noqa: F401
from .modules import (  # noqa: F401
    GELU, Flatten, Identity, Linear, Module, ModuleDict, ModuleList, ParameterDict, ParameterList,
    ReLU, Sequential, SiLU, Sigmoid, Tanh, Unflatten,
)
from .parameter import Parameter  # noqa: F401
