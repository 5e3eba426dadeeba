"""The module classes of oneflow.nn (also importable from oneflow.nn directly)."""
from .activation import GELU, ReLU, SiLU, Sigmoid, Tanh  # noqa: F401
from .container import (  # noqa: F401
    ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential,
)
from .flatten import Flatten, Unflatten  # noqa: F401
from .linear import Identity, Linear  # noqa: F401
from .module import Module  # noqa: F401
