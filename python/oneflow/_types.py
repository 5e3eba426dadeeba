"""The type objects of tensors: dtype information (finfo / iinfo, dtype.bytes) and rules
(result_type, can_cast, is_signed), the legacy tensor types (flow.FloatTensor ..., Tensor.type,
set_default_tensor_type, typename), the layout object (flow.strided, Tensor.layout) and the
tensor-kind flags PyTorch code checks (is_sparse, is_quantized, ...: every oneflow tensor is
dense, unquantized and strided). The memory formats are in _shape.py."""
import operator

import oneflow as flow  # the assembled namespace, looked up at call time

from . import _oneflow_internal as _C
from . import _tensor
from ._oneflow_internal import Tensor
from ._export import export, export_value
from ._argcheck import check_tensor

# ---- dtype information


# bytes: OneFlow's name for itemsize (dtype.is_complex is the extension's own). The getter is an
# attrgetter, not a function of this module: the dtype objects are C++ singletons that outlive the
# interpreter's teardown, and a function would keep this module's globals (and through them the
# extension) alive past it, which nanobind reports as leaks at exit (tests/test_hook_cycles.py).
export_value(property(operator.attrgetter("itemsize")), "flow.dtype.bytes")

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
    "int16": (16, -(2**15), 2**15 - 1),
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

    def __init__(self, *args, **kwargs):
        # finfo() is the default dtype's; an explicit None is no dtype (PyTorch's and upstream's
        # TypeError), so the argument is told apart from its absence.
        if len(args) + len(kwargs) > 1 or set(kwargs) - {"type"}:
            raise TypeError("finfo() takes at most one argument, 'type'")
        dtype = args[0] if args else kwargs.get("type", _C.get_default_dtype())
        name = _dtype_arg("finfo", dtype)
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

    # `_cuda`: the flow.cuda.<X>Tensor types (tensors on the current CUDA device), as torch.cuda's.
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype and obj.is_cuda == cls._cuda

    def __call__(cls, *args, **kwargs):
        if "dtype" in kwargs:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument 'dtype'")
        from ._tensor import _tensor_init

        if cls._cuda:
            if kwargs.get("device") is not None and _C.device(kwargs["device"]).type != "cuda":
                raise RuntimeError(f"legacy constructor expects device type: cuda but device type: "
                                   f"{_C.device(kwargs['device']).type} was passed")
            kwargs.setdefault("device", "cuda")
        return _tensor_init(*args, dtype=cls.dtype, **kwargs)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


_TENSOR_TYPES = [
    ("HalfTensor", "float16"),
    ("BFloat16Tensor", "bfloat16"),
    ("FloatTensor", "float32"),
    ("DoubleTensor", "float64"),
    ("ByteTensor", "uint8"),
    ("CharTensor", "int8"),
    ("ShortTensor", "int16"),
    ("IntTensor", "int32"),
    ("LongTensor", "int64"),
    ("BoolTensor", "bool"),
]
TENSOR_TYPES = {}
CUDA_TENSOR_TYPES = {}
for _name, _dt in _TENSOR_TYPES:
    TENSOR_TYPES[_name] = export_value(tensortype(_name, (), {"_dtype_name": _dt, "_cuda": False,
                                                              "__module__": "oneflow"}),
                                       "flow." + _name)  # flow.FloatTensor, flow.LongTensor, ...
    CUDA_TENSOR_TYPES[_name] = export_value(tensortype(_name, (), {"_dtype_name": _dt, "_cuda": True,
                                                                   "__module__": "oneflow.cuda"}),
                                            "flow.cuda." + _name)  # flow.cuda.FloatTensor, ...


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


# ---- tensors


# ---- memory formats (clone(memory_format=...), as torch)


class layout:  # noqa: N801 - torch's name
    """A tensor memory layout; oneflow's tensors are all strided (dense). `strided` is its only
    instance: calling the class is a TypeError, as in PyTorch (`layout(1)` was `oneflow.1`)."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'oneflow.layout' instances")

    @classmethod
    def _make(cls, name):
        self = object.__new__(cls)
        self.name = name
        return self

    def __repr__(self):
        return f"oneflow.{self.name}"

    def __reduce__(self):  # pickled / deep-copied as the module attribute of its name
        return self.name


strided = layout._make("strided")


# ---- Tensor methods


@export("Tensor.type")
def _type(self, dtype=None, non_blocking=False, **kwargs):
    if isinstance(dtype, tensortype):
        return self.to(device="cuda", dtype=dtype.dtype) if dtype._cuda else self.to(device="cpu", dtype=dtype.dtype)
    return _tensor._type(self, dtype, non_blocking)


_type.__doc__ = _tensor._type.__doc__


@export("flow.typename")
def typename(obj):
    """A tensor's type string ('oneflow.FloatTensor'), else the dotted name of a class or function
    (or of an object's class), builtins unqualified: torch.typename."""
    if isinstance(obj, Tensor):
        return obj.type()
    named = hasattr(obj, "__qualname__") or hasattr(obj, "__name__")
    where = (getattr(obj, "__module__", "") if named else type(obj).__module__) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) if named else type(obj).__qualname__
    return name if where in ("", "builtins") else f"{where}.{name}"


for _name in ("is_sparse", "is_sparse_csr", "is_quantized", "is_mkldnn", "is_nested", "is_xpu",
              "is_mps", "is_ipu", "is_vulkan", "is_mtia", "is_xla", "is_maia"):
    export_value(property(lambda self: False), "Tensor." + _name)
export_value(property(lambda self: strided), "Tensor.layout")


@export("flow.result_type")
def result_type(tensor1, tensor2):
    """The dtype PyTorch's type promotion gives an op on the two (tensors or numbers): that of
    an addition of zero-element stand-ins of the same categories (0-d tensors stay 0-d)."""

    def stand_in(v):
        if isinstance(v, Tensor):
            return v if v.dim() == 0 else v.reshape(-1)[:0]
        return v

    a, b = stand_in(tensor1), stand_in(tensor2)
    if not isinstance(a, Tensor):
        a, b = (b, a) if isinstance(b, Tensor) else (flow.tensor(a), b)
    b_bool = isinstance(b, bool) or (isinstance(b, Tensor) and b.dtype == flow.bool)
    if a.dtype == flow.bool and b_bool:
        return flow.bool
    with flow.no_grad():
        return flow.add(a, b).dtype


@export("flow.can_cast")
def can_cast(from_, to):
    """Whether PyTorch's casting rules allow from_ -> to in in-place ops: no float to integral,
    no complex to non-complex, no non-bool to bool."""
    for arg, v in (("from_", from_), ("to", to)):
        if not isinstance(v, flow.dtype):
            raise TypeError(f"can_cast(): argument '{arg}' must be oneflow.dtype, not {type(v).__name__}")
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    if from_ != flow.bool and to == flow.bool:
        return False
    return True


export_value(layout, "flow.layout")
export_value(strided, "flow.strided")
export_value(lambda input: check_tensor(input, "is_signed", "input").is_signed(), "flow.is_signed")
