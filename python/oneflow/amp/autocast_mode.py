"""flow.autocast / flow.amp.autocast: a context manager (and decorator) enabling autocast for
one device type, nestable, restoring the previous state on exit."""

import functools
import warnings

from .. import _oneflow_internal as _C
from .._argcheck import check_bool
from .._export import export as _export

_LOW_DTYPES = ("float16", "bfloat16")


@_export("flow.is_autocast_available")
def is_autocast_available(device_type):
    """Whether autocast can be used for `device_type` ('cpu' here; 'cuda' once a CUDA backend
    exists)."""
    if device_type == "cpu":
        return True
    return device_type in ("cuda", "gpu") and _C._cuda_available()


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in ("cpu", "cuda", "gpu"):
        raise RuntimeError(
            f"User specified an unsupported autocast device_type '{device_type}' "
            "(oneflow supports 'cpu' and 'cuda')"
        )
    return "cuda" if device_type == "gpu" else device_type


@_export("flow.is_autocast_enabled")
def is_autocast_enabled(device_type="cuda"):
    """Autocast state of `device_type`; without an argument, of 'cuda' (as torch)."""
    if not isinstance(device_type, str):  # None, 0 or [] read as 'cuda' before (PyTorch's TypeError)
        raise TypeError(f"is_autocast_enabled(): argument 'device_type' (position 1) must be str, "
                        f"not {type(device_type).__name__}")
    return _C._autocast_is_enabled(_check_device_type(device_type))


@_export("flow.set_autocast_enabled")
def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # torch's old form set_autocast_enabled(bool) is CUDA's switch
        device_type, enabled = "cuda", device_type
    _C._autocast_set_enabled(_check_device_type(device_type), check_bool(enabled, "set_autocast_enabled", "enabled", 2))


@_export("flow.get_autocast_dtype")
def get_autocast_dtype(device_type):
    """The low-precision dtype of `device_type`'s autocast (bfloat16 on CPU, float16 on CUDA by
    default)."""
    return _C._autocast_get_dtype(_check_device_type(device_type))


@_export("flow.set_autocast_dtype")
def set_autocast_dtype(device_type, dtype):
    _C._autocast_set_dtype(_check_device_type(device_type), dtype)


@_export("flow.autocast")
class autocast:  # noqa: N801 - torch's name
    """Runs the ops of its region in mixed precision: ops marked `lower` (matmul, conv, linear)
    in `dtype`, ops marked `fp32` (reductions, softmax, norms, losses) in float32, ops marked
    `promote` in the widest input dtype (see src/ops/table/README.md)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device = _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else dtype
        self._cache_enabled = (
            _C._autocast_is_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        )
        enabled = bool(enabled)
        if enabled and self.device == "cuda" and not is_autocast_available("cuda"):
            warnings.warn(
                "User provided device_type of 'cuda', but CUDA is not available. Disabling",
                stacklevel=2,
            )
            enabled = False
        if enabled and getattr(self.fast_dtype, "name", None) not in _LOW_DTYPES:
            where = "CPU" if self.device == "cpu" else "CUDA"
            warnings.warn(
                f"In {where} autocast, but the target dtype {self.fast_dtype} is not "
                "supported (float16 or bfloat16). Disabling autocast.",
                stacklevel=2,
            )
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev = _C._autocast_is_enabled(self.device)
        self.prev_dtype = _C._autocast_get_dtype(self.device)
        self.prev_cache_enabled = _C._autocast_is_cache_enabled()
        _C._autocast_set_enabled(self.device, self._enabled)
        if self._enabled:
            _C._autocast_set_dtype(self.device, self.fast_dtype)
        _C._autocast_set_cache_enabled(self._cache_enabled)
        _C._autocast_increment_nesting()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _C._autocast_decrement_nesting()  # clears the weight-cast cache at the outermost exit
        _C._autocast_set_enabled(self.device, self.prev)
        _C._autocast_set_dtype(self.device, self.prev_dtype)
        _C._autocast_set_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self.__class__(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return decorated


# torch's per-device shorthands
@_export("flow.is_autocast_cpu_enabled")
def is_autocast_cpu_enabled():
    return is_autocast_enabled("cpu")


@_export("flow.set_autocast_cpu_enabled")
def set_autocast_cpu_enabled(enabled):
    set_autocast_enabled("cpu", check_bool(enabled, "set_autocast_cpu_enabled", "enabled"))


@_export("flow.get_autocast_cpu_dtype")
def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")


@_export("flow.set_autocast_cpu_dtype")
def set_autocast_cpu_dtype(dtype):
    set_autocast_dtype("cpu", dtype)


@_export("flow.get_autocast_gpu_dtype")
def get_autocast_gpu_dtype():
    return get_autocast_dtype("cuda")


@_export("flow.set_autocast_gpu_dtype")
def set_autocast_gpu_dtype(dtype):
    set_autocast_dtype("cuda", dtype)


@_export("flow.is_autocast_cache_enabled")
def is_autocast_cache_enabled():
    return _C._autocast_is_cache_enabled()


@_export("flow.set_autocast_cache_enabled")
def set_autocast_cache_enabled(enabled):
    _C._autocast_set_cache_enabled(check_bool(enabled, "set_autocast_cache_enabled", "enabled"))


@_export("flow.clear_autocast_cache")
def clear_autocast_cache():
    _C._autocast_clear_cache()


def _cast_floats(value, device_type, dtype):
    """value with its floating tensors on device_type cast to dtype (through lists, tuples, dicts)."""
    if isinstance(value, _C.Tensor):
        if value.dtype.is_floating_point and value.device.type == device_type and value.dtype != dtype:
            return value.to(dtype)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_floats(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_floats(v, device_type, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates an autograd.Function's forward for autocast regions (as torch.amp.custom_fwd):
    records whether autocast was on (custom_bwd restores it); with cast_inputs, runs the forward
    with autocast off on inputs cast to that dtype."""
    import functools
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    device_type = _check_device_type(device_type)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if is_autocast_enabled(device_type):
            with autocast(device_type, enabled=False):
                return fwd(*_cast_floats(args, device_type, cast_inputs),
                           **_cast_floats(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates an autograd.Function's backward: it runs under the autocast state its forward
    saw (as torch.amp.custom_bwd)."""
    import functools
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    device_type = _check_device_type(device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
