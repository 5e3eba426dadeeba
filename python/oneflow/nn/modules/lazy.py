"""Lazy modules (as torch.nn's): LazyLinear, LazyConv{1,2,3}d, LazyConvTranspose{1,2,3}d,
LazyBatchNorm{1,2,3}d and LazyInstanceNorm{1,2,3}d infer their input size (in_features /
in_channels / num_features) from the first input, materialise their parameters and buffers,
initialise them as the eager module would, and become that module class. Loading a state dict
before the first call materialises them from the checkpoint's shapes."""
from ... import _oneflow_internal as _C
from ..parameter import UninitializedBuffer, UninitializedParameter
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear


def _is_lazy(t):
    return isinstance(t, (UninitializedParameter, UninitializedBuffer))


class LazyModuleMixin:
    """Infers the parameters' shapes on the first call (a forward pre-hook), then turns the
    module into cls_to_become."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)

    def has_uninitialized_params(self):
        return any(_is_lazy(t) for t in list(self._parameters.values()) + list(self._buffers.values()))

    def _materialize_buffer(self, name, shape):
        old = self._buffers[name]
        self._buffers[name] = _C.empty(tuple(shape), dtype=old.dtype, device=old.device)

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        for name, param in self._parameters.items():
            key = prefix + name
            if isinstance(param, UninitializedParameter) and key in state_dict:
                param.materialize(state_dict[key].shape)
        for name, buf in list(self._buffers.items()):
            key = prefix + name
            if isinstance(buf, UninitializedBuffer) and key in state_dict:
                self._materialize_buffer(name, state_dict[key].shape)

    @staticmethod
    def _infer_parameters(module, args):
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def initialize_parameters(self, *args):
        raise NotImplementedError


class LazyLinear(LazyModuleMixin, Linear):
    """Linear with in_features inferred from the first input's last dim."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            with _C_no_grad():
                self.reset_parameters()


def _C_no_grad():
    from ..._grad_mode import no_grad
    return no_grad()


class _LazyConvMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _in_channels(self, input):
        batched = input.dim() == self._k + 2
        return input.shape[1] if batched else input.shape[0]

    def initialize_parameters(self, input, *args):
        if self.has_uninitialized_params():
            self.in_channels = self._in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            with _C_no_grad():
                self.reset_parameters()


def _lazy_conv(base, transposed):
    class LazyConv(_LazyConvMixin, base):
        cls_to_become = base

        if transposed:
            def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                         dilation=1, padding_mode="zeros", device=None, dtype=None):
                base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                              padding_mode, device=device, dtype=dtype)
                self._lazy_params(out_channels, bias, device, dtype)
        else:
            def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                         padding_mode="zeros", device=None, dtype=None):
                base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                              device=device, dtype=dtype)
                self._lazy_params(out_channels, bias, device, dtype)

        def _lazy_params(self, out_channels, bias, device, dtype):
            if out_channels % self.groups != 0:
                raise ValueError("out_channels must be divisible by groups")
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
            self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
            self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)

    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + base.__name__
    LazyConv.__doc__ = f"{base.__name__} with in_channels inferred from the first input."
    return LazyConv


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_conv(c, False) for c in (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv(c, True) for c in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.register_buffer("running_mean", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("running_var", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", _C.zeros((), dtype=_C.int64, device=device))

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = self._num_features(input)
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self._materialize_buffer("running_mean", (self.num_features,))
                self._materialize_buffer("running_var", (self.num_features,))
            with _C_no_grad():
                self.reset_parameters()

    def _num_features(self, input):
        name = self.cls_to_become.__name__
        k = int(name[-2])
        if name.startswith("Instance") and input.dim() == k + 1:  # an unbatched (C, *spatial) input
            return input.shape[0]
        return input.shape[1]


def _lazy_norm(base):
    # (the lazy instance norms default to affine / tracked statistics too, unlike InstanceNorm*d:
    # PyTorch's signatures)
    class LazyNorm(_LazyNormBase, base):
        cls_to_become = base

        def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                     dtype=None):
            super().__init__(eps, momentum, affine, track_running_stats, device, dtype)

    LazyNorm.__name__ = LazyNorm.__qualname__ = "Lazy" + base.__name__
    LazyNorm.__doc__ = f"{base.__name__} with num_features inferred from the first input."
    return LazyNorm


LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (_lazy_norm(c) for c in (BatchNorm1d, BatchNorm2d, BatchNorm3d))
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (_lazy_norm(c) for c in (
    InstanceNorm1d, InstanceNorm2d, InstanceNorm3d))

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
