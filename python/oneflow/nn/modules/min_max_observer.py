"""Upstream OneFlow's module path of MinMaxObserver (`from oneflow.nn.modules import
min_max_observer`); the class is defined with the other quantization modules."""
from .quantization import MinMaxObserver  # noqa: F401
