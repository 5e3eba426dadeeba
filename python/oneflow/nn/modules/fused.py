"""Fused modules of spec 002 (INVENTORY D.7): FusedBatchNorm{1,2,3}d = ReLU(BatchNorm(x) + addend)
and FusedMLP = Linear (+ ReLU) layers stacked. OneFlow runs them as single CUDA kernels; here they
are the composition of the same ops on every device (the same values and gradients), so models
written with them run everywhere."""
import math

from ... import _oneflow_internal as _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .module import Module


class _FusedBatchNorm:
    def forward(self, x, addend=None):
        y = super().forward(x)
        if addend is not None:
            if tuple(addend.shape) != tuple(y.shape):
                raise RuntimeError(f"{type(self).__name__}: addend has shape {tuple(addend.shape)}, the input "
                                   f"{tuple(y.shape)}")
            y = y + addend
        return F.relu(y)


class FusedBatchNorm1d(_FusedBatchNorm, BatchNorm1d):
    """ReLU(BatchNorm1d(x) + addend); `m(x, addend=None)`."""


class FusedBatchNorm2d(_FusedBatchNorm, BatchNorm2d):
    """ReLU(BatchNorm2d(x) + addend); `m(x, addend=None)`."""


class FusedBatchNorm3d(_FusedBatchNorm, BatchNorm3d):
    """ReLU(BatchNorm3d(x) + addend); `m(x, addend=None)`."""


class FusedMLP(Module):
    """Linear layers in_features -> hidden_features[0] -> ... -> out_features with a ReLU after
    each (none after the last with skip_final_activation). Parameters weight_0, bias_0, ... are
    initialized as nn.Linear's."""

    def __init__(self, in_features, hidden_features, out_features, skip_final_activation=False,
                 device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.hidden_features = list(hidden_features)
        self.skip_final_activation = skip_final_activation
        self.hidden_layer_num = len(self.hidden_features)
        self._factory = {"device": device, "dtype": dtype}
        self.add_parameters()
        self.reset_parameters()

    def add_parameters(self):
        """Registers weight_i (out, in) and bias_i (out,) for every layer."""
        sizes = [self.in_features] + self.hidden_features + [self.out_features]
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            self.register_parameter(f"weight_{i}", Parameter(_C.empty((n_out, n_in), **self._factory)))
            self.register_parameter(f"bias_{i}", Parameter(_C.empty((n_out,), **self._factory)))

    def reset_parameters(self):
        for i in range(self.hidden_layer_num + 1):
            w, b = self.weight(i), self.bias(i)
            init.kaiming_uniform_(w, a=math.sqrt(5))
            bound = 1 / math.sqrt(w.shape[1]) if w.shape[1] else 0
            init.uniform_(b, -bound, bound)

    def weight(self, i):
        return getattr(self, f"weight_{i}")

    def weights(self):
        return [self.weight(i) for i in range(self.hidden_layer_num + 1)]

    def bias(self, i):
        return getattr(self, f"bias_{i}")

    def biases(self):
        return [self.bias(i) for i in range(self.hidden_layer_num + 1)]

    def forward(self, x):
        last = self.hidden_layer_num
        for i in range(last + 1):
            x = F.linear(x, self.weight(i), self.bias(i))
            if i < last or not self.skip_final_activation:
                x = F.relu(x)
        return x

    def extra_repr(self):
        return (f"in_features={self.in_features}, hidden_features={self.hidden_features}, "
                f"out_features={self.out_features}, skip_final_activation={self.skip_final_activation}")


__all__ = ["FusedBatchNorm1d", "FusedBatchNorm2d", "FusedBatchNorm3d", "FusedMLP"]
