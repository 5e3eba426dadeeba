"""Small top-level APIs scripts expect next to the ops (as torch.*): dtype information
(finfo/iinfo, dtype.bytes/is_complex), the legacy tensor type objects (flow.FloatTensor ...),
default tensor type, determinism and thread switches, and the eager/lazy mode query."""

import builtins

from . import _oneflow_internal as _C
from . import _tensor
from ._export import export, export_value

# ---- dtype information


def _install_dtype_attrs():
    # bytes: OneFlow's name for itemsize (dtype.is_complex is the extension's own).
    _C.dtype.bytes = property(lambda self: self.itemsize)


_install_dtype_attrs()

# (bits, eps, max, tiny, resolution) of each floating dtype; min = -max, smallest_normal = tiny.
_FINFO = {
    "float16": (16, 2.0**-10, 65504.0, 2.0**-14, 0.001),
    "bfloat16": (16, 2.0**-7, 3.3895313892515355e38, 2.0**-126, 0.01),
    "float32": (32, 2.0**-23, 3.4028234663852886e38, 2.0**-126, 1e-06),
    "float64": (64, 2.0**-52, 1.7976931348623157e308, 2.0**-1022, 1e-15),
}
# A complex dtype's limits are those of its parts (as torch.finfo).
_FINFO["complex64"] = _FINFO["float32"]
_FINFO["complex128"] = _FINFO["float64"]
_IINFO = {
    "uint8": (8, 0, 255),
    "int8": (8, -128, 127),
    "int32": (32, -(2**31), 2**31 - 1),
    "int64": (64, -(2**63), 2**63 - 1),
}


def _dtype_arg(fn, dtype):
    if not isinstance(dtype, _C.dtype):
        raise TypeError(
            f"{fn}(): argument 'type' (position 1) must be oneflow.dtype, not "
            f"{type(dtype).__name__}"
        )
    return dtype.name


@export("flow.finfo")
class finfo:  # noqa: N801 - torch's name
    """Machine limits of a floating dtype (the default dtype when none is given)."""

    def __init__(self, dtype=None):
        name = _dtype_arg("finfo", _C.get_default_dtype() if dtype is None else dtype)
        if name not in _FINFO:
            raise TypeError(
                "oneflow.finfo() requires a floating point input type. Use "
                "oneflow.iinfo to handle 'oneflow.finfo'"
            )
        self.bits, self.eps, self.max, self.tiny, self.resolution = _FINFO[name]
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = name

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


@export("flow.iinfo")
class iinfo:  # noqa: N801 - torch's name
    """Limits of an integer dtype."""

    def __init__(self, dtype):
        name = _dtype_arg("iinfo", dtype)
        if name == "bool":
            raise TypeError("oneflow.bool is not supported by oneflow.iinfo")
        if name not in _IINFO:
            raise TypeError(
                "oneflow.iinfo() requires an integer input type. Use oneflow.finfo "
                "to handle 'oneflow.iinfo'"
            )
        self.bits, self.min, self.max = _IINFO[name]
        self.dtype = name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# ---- legacy tensor types: flow.FloatTensor(2, 3), isinstance(x, flow.FloatTensor)


class tensortype(type):  # noqa: N801 - torch's name for the metaclass
    # The dtype is looked up by name: a class (freed late, by the final garbage collection)
    # holding dtype objects would make nanobind report them as leaked at exit.
    @property
    def dtype(cls):
        return getattr(_C, cls._dtype_name)

    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype and not obj.is_cuda

    def __call__(cls, *args, **kwargs):
        if "dtype" in kwargs:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument 'dtype'")
        from ._tensor import _tensor_init

        return _tensor_init(*args, dtype=cls.dtype, **kwargs)

    def __repr__(cls):
        return f"<class 'oneflow.{cls.__name__}'>"


_TENSOR_TYPES = [
    ("HalfTensor", "float16"),
    ("BFloat16Tensor", "bfloat16"),
    ("FloatTensor", "float32"),
    ("DoubleTensor", "float64"),
    ("ByteTensor", "uint8"),
    ("CharTensor", "int8"),
    ("IntTensor", "int32"),
    ("LongTensor", "int64"),
    ("BoolTensor", "bool"),
]
TENSOR_TYPES = {}
for _name, _dt in _TENSOR_TYPES:
    TENSOR_TYPES[_name] = export_value(tensortype(_name, (), {"_dtype_name": _dt, "__module__": "oneflow"}),
                                       "flow." + _name)  # flow.FloatTensor, flow.LongTensor, ...


def tensor_type_from(t):
    """A tensor type object, its name ('oneflow.FloatTensor', 'torch.FloatTensor') or None."""
    if isinstance(t, str):
        name = t.rsplit(".", 1)[-1]
        if name not in TENSOR_TYPES or "." in t and t.split(".")[0] not in ("oneflow", "torch"):
            raise ValueError(f"invalid type: '{t}'")
        return TENSOR_TYPES[name]
    if isinstance(t, tensortype):
        return t
    raise TypeError(
        f"invalid type: {t!r} (expected a tensor type such as oneflow.FloatTensor or its name)"
    )


@export("flow.set_default_tensor_type")
def set_default_tensor_type(t):
    """The default floating dtype from a tensor type (or its name), as torch."""
    tt = tensor_type_from(t)
    if not tt.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _C.set_default_dtype(tt.dtype)


# ---- determinism and threads

_deterministic = {"mode": False, "warn_only": False}


@export("flow.use_deterministic_algorithms")
def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded for scripts that query it: every CPU kernel here is deterministic already (the
    random ops are counter-based, so they do not depend on the thread count either)."""
    if not isinstance(mode, builtins.bool):
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'mode' must be bool, not "
            f"{type(mode).__name__}"
        )
    _deterministic["mode"] = mode
    _deterministic["warn_only"] = builtins.bool(warn_only)


@export("flow.are_deterministic_algorithms_enabled")
def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


@export("flow.is_deterministic_algorithms_warn_only_enabled")
def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


@export("flow.set_deterministic_debug_mode")
def set_deterministic_debug_mode(debug_mode):
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, "
                f"`error`, but got {debug_mode}"
            )
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


@export("flow.get_deterministic_debug_mode")
def get_deterministic_debug_mode():
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


_interop_threads = {"n": None}


@export("flow.get_num_interop_threads")
def get_num_interop_threads():
    """Ops run on the calling thread (docs/architecture.md §3): there is no inter-op pool; this reports the
    value set (default: the intra-op thread count, as PyTorch's default)."""
    return _interop_threads["n"] or _C.get_num_threads()


@export("flow.set_num_interop_threads")
def set_num_interop_threads(n):
    if not isinstance(n, builtins.int) or n <= 0:
        raise RuntimeError("Expected positive number of threads")
    _interop_threads["n"] = n


# ---- tensors


@export("flow.is_nonzero", "Tensor.is_nonzero")
def is_nonzero(input):
    if not isinstance(input, _C.Tensor):
        raise TypeError(
            f"is_nonzero(): argument 'input' must be Tensor, not {type(input).__name__}"
        )
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item() != 0)


# ---- memory formats (clone(memory_format=...), as torch)


@export("flow.memory_format")
class memory_format:  # noqa: N801 - torch's name
    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"oneflow.{self._name}"


class layout:  # noqa: N801 - torch's name
    """A tensor memory layout; oneflow's tensors are all strided (dense)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"oneflow.{self.name}"


strided = layout("strided")
contiguous_format = export_value(memory_format("contiguous_format"), "flow.contiguous_format")
preserve_format = export_value(memory_format("preserve_format"), "flow.preserve_format")
channels_last = export_value(memory_format("channels_last"), "flow.channels_last")
channels_last_3d = export_value(memory_format("channels_last_3d"), "flow.channels_last_3d")


@export("flow.clone", "Tensor.clone")
def clone(input, *, memory_format=preserve_format):
    """A copy of `input` (differentiable). contiguous_format gives C order; channels_last(_3d)
    gives the NHWC (NDHWC) strides of a 4-d (5-d) tensor."""
    if memory_format is preserve_format:
        return _C.clone(input)
    if memory_format is contiguous_format:
        t = _C.clone(input)
        return t if t.is_contiguous() else t.contiguous()
    if memory_format in (channels_last, channels_last_3d):
        nd = 4 if memory_format is channels_last else 5
        if input.ndim != nd:
            raise RuntimeError(f"required rank {nd} tensor to use {memory_format} format")
        perm = (0,) + tuple(range(2, nd)) + (1,)
        inv = (0, nd - 1) + tuple(range(1, nd - 1))
        return input.permute(*perm).contiguous().permute(*inv)
    raise TypeError(
        f"clone(): argument 'memory_format' must be oneflow.memory_format, not "
        f"{type(memory_format).__name__}"
    )


# ---- Tensor methods


@export("Tensor.__array__")
def _array(self, dtype=None, copy=None):
    """numpy's __array__ protocol (numpy 2: copy=False must not copy, True always copies): a
    zero-copy view of CPU tensors whose dtype numpy has."""
    import numpy as np

    def no_copy(why):
        if copy is False:
            raise ValueError(f"Unable to avoid copy while creating an array as requested ({why}).")

    if self.dtype == _C.bfloat16:
        no_copy("numpy has no bfloat16: the values are converted to float32")
        a = _C.cast(self.detach(), _C.float32).numpy()
    else:
        a = self.detach().numpy()
    if dtype is not None and np.dtype(dtype) != a.dtype:
        no_copy(f"the dtype changes from {a.dtype} to {np.dtype(dtype)}")
        return a.astype(dtype)
    return a.copy() if copy else a


@export("Tensor.type")
def _type(self, dtype=None, non_blocking=False, **kwargs):
    if isinstance(dtype, tensortype):
        return self.to(dtype=dtype.dtype)
    return _tensor._type(self, dtype, non_blocking)


_type.__doc__ = _tensor._type.__doc__
