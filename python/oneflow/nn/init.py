"""oneflow.nn.init: in-place parameter initialisation, as torch.nn.init.

Every function fills its tensor without recording autograd history and returns it. The random
draws go through `_init_impl` (the in-place random ops of the op table).
OneFlow's `data_format="NHWC"` keyword reads the input channels from the last dimension of
convolution weights when computing fans.
"""
import math
import warnings

import numpy as np

from .. import _oneflow_internal as _C
from .._grad_mode import no_grad
from .._export import export_value
from . import _init_impl

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
    "orthogonal_", "sparse_",
]

_LINEAR_FNS = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d"]


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table, incl. selu = 3/4)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            negative_slope = param  # bool is an int: excluded above
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills `tensor` with values drawn from U(a, b)."""
    return _init_impl.uniform_(tensor, a, b, generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills `tensor` with values drawn from N(mean, std^2)."""
    return _init_impl.normal_(tensor, mean, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills `tensor` from N(mean, std^2) truncated to [a, b], by rejection as PyTorch: redraw
    from the normal while out of bounds when [a, b] holds enough mass (> 0.3), otherwise propose
    uniformly on [a, b] and accept with probability pdf(x) / pdf(mode)."""
    if tensor.is_meta:
        return tensor
    if not tensor.dtype.is_floating_point:
        # PyTorch's normal_ kernel has no integral or bool form; the rejection loop would never
        # see a sample inside [a, b] rounded to a bool and spin forever.
        raise NotImplementedError(f"trunc_normal_(): not implemented for '{tensor.dtype}'")

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        # Bounds rounded to the tensor's dtype, so that the final copy stays inside them.
        lo = _C.cast(_C.full((), a, dtype=_C.float64), tensor.dtype).item()
        hi = _C.cast(_C.full((), b, dtype=_C.float64), tensor.dtype).item()
        work = _C.float64 if tensor.dtype == _C.float64 else _C.float32

        def draw(fill, *args):
            return fill(_C.empty(tuple(tensor.shape), dtype=work, device=tensor.device), *args,
                        generator)

        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            result = draw(_init_impl.normal_, mean, std)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                result = _C.where(mask, draw(_init_impl.normal_, mean, std), result)
        else:
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2

            def rejected(x):  # log U > log pdf(x) - log pdf(mode)
                log_ratio = ((x - mean) / std).square() * -0.5 - log_peak
                return draw(_init_impl.uniform_, 0.0, 1.0).log() > log_ratio

            result = draw(_init_impl.uniform_, a, b)
            pending = rejected(result)
            while pending.any():
                candidates = draw(_init_impl.uniform_, a, b)
                result = _C.where(pending, candidates, result)
                pending = pending & rejected(candidates)
        tensor.copy_(result)
    return tensor


def constant_(tensor, val):
    """Fills `tensor` with `val`."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fills `tensor` with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fills `tensor` with zeros."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fills the 2-D `tensor` with the identity matrix."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(_C.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
    return tensor


def dirac_(tensor, groups=1):
    """Fills a 3-, 4- or 5-D `tensor` with the Dirac delta (identity convolution), per group."""
    dimensions = tensor.ndim
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if tensor.is_meta:
        return tensor
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    centre = tuple(s // 2 for s in sizes[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_chans_per_grp + d, d) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor, data_format="NCHW"):
    """(fan_in, fan_out) of a weight: (out, in, *kernel) (or (out, *kernel, in) for NHWC)."""
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"data_format must be 'NCHW' or 'NHWC', got '{data_format}'")
    shape = tensor.shape
    channels_last = data_format == "NHWC" and dimensions > 2
    num_input_fmaps = shape[-1] if channels_last else shape[1]
    num_output_fmaps = shape[0]
    receptive_field_size = 1
    for s in (shape[1:-1] if channels_last else shape[2:]):
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def xavier_uniform_(tensor, gain=1.0, generator=None, *, data_format="NCHW"):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, data_format)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return _init_impl.uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None, *, data_format="NCHW"):
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, data_format)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _init_impl.normal_(tensor, 0.0, std, generator)


def _calculate_correct_fan(tensor, mode, data_format="NCHW"):
    if not isinstance(mode, str):  # PyTorch's AttributeError of mode.lower(), typed
        raise ValueError(f"Mode {mode!r} not supported, please use one of ['fan_in', 'fan_out']")
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, data_format)
    return fan_in if mode == "fan_in" else fan_out


def _kaiming_std(tensor, a, mode, nonlinearity, data_format):
    fan = _calculate_correct_fan(tensor, mode, data_format)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None, *,
                     data_format="NCHW"):
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity, data_format)
    return _init_impl.uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None, *,
                    data_format="NCHW"):
    """He normal: N(0, std^2) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = _kaiming_std(tensor, a, mode, nonlinearity, data_format)
    return _init_impl.normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fills `tensor` (viewed as rows x rest) with a (semi-)orthogonal matrix times `gain`: the Q
    of a Gaussian matrix's QR, signs fixed by diag(R) so that Q is Haar-distributed."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = _init_impl.normal_(_C.empty((rows, cols), dtype=_C.float64), 0.0, 1.0, generator)
    a = flattened.numpy()
    if rows < cols:
        a = a.T
    # No flow.linalg.qr yet: the factorisation runs in numpy (float64) on the drawn matrix.
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(_C.from_numpy(np.ascontiguousarray(q)).reshape(tuple(tensor.shape)))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fills the 2-D `tensor` from N(0, std^2) with a fraction `sparsity` of each column zeroed."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:
        return tensor
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        _init_impl.normal_(tensor, 0.0, std, generator)
        for col_idx in range(cols):
            zero_indices = _C.randperm(rows, generator=generator)[:num_zeros]
            tensor[zero_indices, col_idx] = 0
    return tensor


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)


# OneFlow's Tensor methods of the same names: x.kaiming_uniform_(...) is kaiming_uniform_(x, ...).
for _name in ("kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_", "trunc_normal_"):
    export_value(globals()[_name], "Tensor." + _name)
del _name
