"""oneflow.framework.tensor: where upstream OneFlow defines its Tensor class's Python side;
libraries import `Tensor` (the same class as `oneflow.Tensor`) and `TensorTuple` from here."""
from .._tensor import Tensor  # noqa: F401
from .tensor_tuple_util import TensorTuple  # noqa: F401
