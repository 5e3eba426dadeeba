"""InstanceNorm1d/2d/3d, GroupNorm, LayerNorm and LocalResponseNorm: PyTorch's modules over
nn.functional's normalisations."""
import numbers
import warnings

from ... import _oneflow_internal as _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .batchnorm import _NormBase
from .module import Module


class _InstanceNorm(_NormBase):
    _no_batch_dim = 0  # the rank of an unbatched input

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        d = self._no_batch_dim
        if input.dim() not in (d, d + 1):
            raise ValueError(f"expected {d}D or {d + 1}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          f"warning by not passing in num_features, which is not used because affine=False")
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation over (N, C, L) or (C, L): statistics per sample and channel."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over (N, C, H, W) or (C, H, W): statistics per sample and channel."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation over (N, C, D, H, W) or (C, D, H, W)."""

    _no_batch_dim = 4


class GroupNorm(Module):
    """Group normalisation: statistics per sample over groups of num_channels // num_groups channels."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(_C.empty(num_channels, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(_C.empty(num_channels, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


class LayerNorm(Module):
    """Layer normalisation over the trailing dims `normalized_shape` (one fused kernel)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C.empty(self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(_C.empty(self.normalized_shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing dims `normalized_shape`, with an
    elementwise weight (ones at first); eps None = the input dtype's machine epsilon."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C.empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class RMSLayerNorm(Module):
    """Upstream OneFlow's T5-style layer norm (deprecated there in favour of nn.RMSNorm):
    x / sqrt(mean(x^2 over the last dim) + eps) * weight, no bias, no mean subtracted, the
    statistics in float32 for half inputs. `variance_epsilon` is upstream's attribute name."""

    def __init__(self, hidden_size, eps=1e-6):
        warnings.warn("nn.RMSLayerNorm has been deprecated. Please use nn.RMSNorm instead.", stacklevel=2)
        super().__init__()
        self.weight = Parameter(_C.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        return _C.rms_layer_norm(hidden_states, self.weight, self.variance_epsilon)

    def extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.variance_epsilon}"


class LocalResponseNorm(Module):
    """Normalisation over `size` neighbouring channels: x / (k + alpha * mean(x^2))^beta."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "GroupNorm", "LayerNorm", "LocalResponseNorm",
           "RMSNorm", "RMSLayerNorm"]
