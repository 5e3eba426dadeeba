"""Bilinear: y = x1^T A x2 + b over nn.functional.bilinear."""
import math

from ... import _oneflow_internal as _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class Bilinear(Module):
    """y[..., o] = x1 A[o] x2 + b[o] with A of shape (out_features, in1_features, in2_features);
    A and b are initialised as PyTorch's: U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_C.empty((out_features, in1_features, in2_features), dtype=dtype,
                                         device=device))
        if bias:
            self.bias = Parameter(_C.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


__all__ = ["Bilinear"]
