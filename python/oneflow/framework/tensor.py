"""oneflow.framework.tensor: where upstream OneFlow defines its Tensor class's Python side;
libraries import `Tensor` from here. It is the same class as `oneflow.Tensor`."""
from .._tensor import Tensor  # noqa: F401
