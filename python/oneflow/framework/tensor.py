"""oneflow.framework.tensor: where upstream OneFlow defines its Tensor class's Python side;
libraries import `Tensor` (the same class as `oneflow.Tensor`) and `TensorTuple` from here."""
from .._tensor import Tensor  # noqa: F401
from .._tensor_tuple import TensorTuple  # noqa: F401
