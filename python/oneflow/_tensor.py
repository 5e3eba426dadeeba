"""Python-level parts of oneflow.Tensor and the data-to-tensor factories.

The Tensor class itself is the C++ class from the extension (all ops are bound there, generated
from the op table); what lives here is argument juggling that is clearer in Python: construction
from nested lists / numpy, `.to(...)`, printing, indexing and small conveniences; conversions
(`__array__`, is_nonzero, get_device), the copying and detaching forms (alias_copy, detach_copy,
detach, fill, zero_), apply_ / map_ and the Python protocols `in` and `reversed()`.
"""
import builtins
import numbers

import numpy as np

import oneflow as flow  # the assembled namespace, looked up at call time

from . import _global_hooks
from . import _indexing
from . import _oneflow_internal as _C
from . import _tensor_str
from ._grad_mode import no_grad as _no_grad
from ._size import Size
from ._export import export, export_value, ref
from ._argcheck import check_tensor
from ._no_derivative import not_implemented_derivative

Tensor = _C.Tensor
_NP_TO_FLOW = {
    np.dtype(np.bool_): _C.bool, np.dtype(np.int8): _C.int8, np.dtype(np.uint8): _C.uint8,
    np.dtype(np.int32): _C.int32, np.dtype(np.int64): _C.int64, np.dtype(np.float16): _C.float16,
    np.dtype(np.float32): _C.float32, np.dtype(np.float64): _C.float64,
    np.dtype(np.complex64): _C.complex64, np.dtype(np.complex128): _C.complex128,
    np.dtype(np.int16): _C.int16,
    # No uint16/uint32 in this framework (as PyTorch before 2.3): widen to the next signed type.
    np.dtype(np.uint16): _C.int32, np.dtype(np.uint32): _C.int64,
}


def _numpy_to_tensor(arr, dtype):
    """A fresh tensor holding arr's values (one copy)."""
    target = _NP_TO_FLOW.get(arr.dtype)
    if target is None:
        raise TypeError(f"can't convert np.ndarray of type {arr.dtype}. The only supported types "
                        "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
                        "uint8, "
                        "and bool.")
    if arr.dtype not in (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.float16, np.float32,
                         np.float64, np.complex64, np.complex128):
        arr = arr.astype(np.int64 if target == _C.int64 else np.int32)
    # a writable C-ordered array (read-only ones, np.frombuffer's, are copied: the result is a copy anyway)
    src = _C.from_numpy(np.require(arr, requirements=["C", "W"]))
    want = dtype if dtype is not None else target
    return _C.cast(src, want) if want != src.dtype else src.clone()


def _data_to_numpy(data):
    """Python data (nested lists/tuples of numbers or tensors) as a numpy array."""
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [x.numpy() if isinstance(x, Tensor) else x for x in data]
    if isinstance(data, (list, tuple)) and data:
        seq = [isinstance(x, (list, tuple, np.ndarray)) for x in data]
        if any(seq) and not all(seq):
            raise TypeError("tensor(): expected a sequence at every position of a nested list")
    try:
        return np.array(data)
    except ValueError as e:
        raise ValueError(f"tensor(): could not build a tensor from ragged data: {e}") from None


def _infer_dtype(data):
    """PyTorch's dtype for Python data: each number's own (Python floats the default dtype, Python
    complex numbers its complex counterpart, ints int64), each numpy array's, scalar's or tensor's
    dtype, promoted together."""
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (np.ndarray, np.generic)):
        if data.dtype not in _NP_TO_FLOW:
            raise TypeError(f"tensor(): can't convert numpy data of type {data.dtype}")
        return _NP_TO_FLOW[data.dtype]
    if isinstance(data, builtins.bool):
        return _C.bool
    if isinstance(data, builtins.int):
        return _C.int64
    if isinstance(data, builtins.float):
        return _C.get_default_dtype()
    if isinstance(data, builtins.complex):
        return _C.complex128 if _C.get_default_dtype() == _C.float64 else _C.complex64
    result = None
    for x in data:
        d = _infer_dtype(x)
        result = d if result is None else _C.promote_types(result, d)
    return _C.get_default_dtype() if result is None else result


@export("flow.tensor")
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs):
    """flow.tensor: always copies `data`. Python floats become the default float dtype; numpy
    arrays keep their dtype."""
    if isinstance(data, Tensor):
        t = data.clone() if dtype is None else _C.cast(data, dtype)
    elif isinstance(data, (np.ndarray, np.generic)):
        t = _numpy_to_tensor(np.asarray(data), dtype)
    elif (t := _C._tensor_from_data(data, dtype)) is not None:
        pass  # nested lists of Python numbers, read directly (Note [Tensors from Python data])
    else:
        arr = _data_to_numpy(data)
        if arr.dtype.kind in "USV":
            raise ValueError(f"tensor(): invalid data type '{arr.dtype}' (strings are not numbers)")
        if arr.dtype == np.object_:
            raise RuntimeError(f"tensor(): could not infer dtype of {type(data).__name__}")
        t = _numpy_to_tensor(arr, dtype if dtype is not None else _infer_dtype(data))
    if device is None and not isinstance(data, Tensor):
        default = _C._get_default_device()  # flow.set_default_device / `with flow.device(...)`
        if default.type != "cpu":
            device = default
    if device is not None:
        t = t.to(device)
    if pin_memory:
        t = t.pin_memory()
    placement, sbp = kwargs.pop("placement", None), kwargs.pop("sbp", None)
    if placement is not None or sbp is not None:  # a global tensor: `data` is its logical value
        from_logical = _global_hooks.use("from_logical")  # Note [Global hooks]
        if device is not None:
            raise TypeError("tensor(): give either device (a local tensor) or placement (a global one), not both")
        g = from_logical(t, placement, sbp, "tensor")
        if requires_grad:
            g.requires_grad_(True)
        return g
    if requires_grad:
        t.requires_grad = True
    return t


@export("flow.as_tensor")
def as_tensor(data, *, dtype=None, device=None):
    if isinstance(data, Tensor) and (dtype is None or data.dtype == dtype):
        return data if device is None else data.to(device)
    if isinstance(data, np.ndarray) and dtype is None and arr_supported(data):
        return _C.from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def arr_supported(a):
    return a.dtype in _NP_TO_FLOW and _NP_TO_FLOW[a.dtype].itemsize == a.dtype.itemsize


@export("flow.is_tensor")
def is_tensor(obj):
    return isinstance(obj, Tensor)


@export("flow.is_floating_point")
def is_floating_point(t):
    check_tensor(t, "is_floating_point", "input")
    return t.dtype.is_floating_point


@export("flow.is_complex")
def is_complex(t):
    check_tensor(t, "is_complex", "input")
    return t.dtype.is_complex


@export("flow.numel")
def numel(t):
    check_tensor(t, "numel", "input")
    return t.numel()


set_printoptions = export_value(_tensor_str.set_printoptions, "flow.set_printoptions")


def _tensor_init(*args, dtype=None, device=None, requires_grad=False, **kwargs):
    """flow.Tensor(*args): ints are a shape (the default dtype, float32 unless set; zero-filled, or
    filled by OneFlow's `data_initializer`, e.g. flow.random_normal_initializer()); data is copied
    in the default dtype.
    `is_lazy` and `determining_initializer` (OneFlow's deferred creation) are accepted: tensors
    here are made at once (`is_determined` is True). A global tensor comes from flow.tensor or a
    factory with placement= and sbp=, not from this constructor (which makes a local tensor)."""
    data_init = kwargs.pop("data_initializer", None)
    placement, sbp = kwargs.pop("placement", None), kwargs.pop("sbp", None)
    consistent = kwargs.pop("is_consistent", False)
    for k in ("is_lazy", "determining_initializer"):
        kwargs.pop(k, None)
    if kwargs:
        raise TypeError(f"Tensor() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if placement is not None or sbp is not None or consistent:
        raise TypeError("Tensor(): placement / sbp / is_consistent make a global tensor: use "
                        "flow.tensor(data, placement=..., sbp=...) or a factory such as "
                        "flow.zeros(*shape, placement=..., sbp=...)")
    shape = None
    if len(args) == 1 and isinstance(args[0], Tensor):
        # A new tensor object aliasing the data (a fresh view, so it is a distinct tensor); a
        # float32 source stays float32 whatever the default dtype, as torch.Tensor(t).
        dtype = dtype if dtype is not None else _C.float32
        t = _C.reshape(args[0], args[0]._shape) if args[0].dtype == dtype else _C.cast(args[0], dtype)
    else:
        # Made from a shape or from data: the default dtype (flow.set_default_dtype), as PyTorch.
        dtype = dtype if dtype is not None else _C.get_default_dtype()
        if not args:
            t = _C.zeros(0, dtype=dtype)
        elif len(args) == 1 and isinstance(args[0], (Size, tuple)) and all(
                isinstance(s, builtins.int) for s in args[0]):
            shape = tuple(args[0])
        elif all(isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in args):
            shape = tuple(args)
        elif len(args) == 1:
            t = tensor(check_legacy_data("Tensor", args[0]), dtype=dtype)
        else:
            raise TypeError(f"Tensor(): invalid arguments {args!r}")
    if shape is not None:
        t = _C.zeros(shape, dtype=dtype) if data_init is None else _initialized(data_init, shape, dtype)
    elif data_init is not None:
        raise TypeError("Tensor(): data_initializer fills a tensor made from a shape, not from data")
    if device is not None:
        t = t.to(device)
    if requires_grad:
        t.requires_grad = True
    return t


def check_legacy_data(op, data):
    """The data a legacy constructor (`flow.Tensor(data)`, `flow.FloatTensor(data)`,
    `Tensor.new(data)`) takes: a sequence or an array, as PyTorch's `new()`; a lone number is
    refused (it is a size there only as an int: `flow.Tensor(1.5)` is no 0-d tensor)."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"{op}(): invalid data type '{type(data).__name__}'")
    if isinstance(data, np.ndarray) or hasattr(data, "__array_interface__") or (
            hasattr(data, "__len__") and hasattr(data, "__getitem__")) or isinstance(data, range):
        return data
    raise TypeError(f"{op}(): data must be a sequence (got {type(data).__name__})")


def _initialized(init, shape, dtype):
    """A new tensor of `shape` from a legacy initializer (``init(shape, dtype) -> Tensor``, as
    flow.constant_initializer(...) and the others return; _legacy/initializers.py)."""
    if not callable(init):
        raise TypeError(f"Tensor(): data_initializer must be an initializer such as "
                        f"flow.constant_initializer(1.0), got {type(init).__name__}")
    t = init(shape, dtype)
    if not isinstance(t, Tensor) or tuple(t.shape) != tuple(shape):
        raise TypeError(f"Tensor(): data_initializer must return a tensor of shape {tuple(shape)}")
    return t if t.dtype == dtype else _C.cast(t, dtype)


def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    non_blocking = bool(kwargs.pop("non_blocking", False))
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for i, a in enumerate(args):
        if isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, (str, _C.device)):
            device = a
        elif isinstance(a, Tensor):
            # to(other, ...): the tensor whose dtype and device are taken comes first and alone, as
            # in PyTorch's overload; a second one overrode the first
            if i != 0:
                raise TypeError(f"to() received an invalid combination of arguments: a Tensor at position {i + 1} "
                                f"(to(other) takes the tensor first)")
            dtype, device = a.dtype, a.device
        elif a in (builtins.float, builtins.int, builtins.bool):
            dtype = a
        else:
            raise TypeError(f"to() received an invalid argument: {a!r}")
    return dtype, device, copy, non_blocking


@export("Tensor.to")
def _to(self, *args, **kwargs):
    dtype, device, copy, non_blocking = _parse_to(args, kwargs)
    t = self
    if device is not None:
        dev = _C.device(device) if not isinstance(device, _C.device) else device
        if dev != t.device:
            out = _C.empty(t.shape, dtype=t.dtype if dtype is None else dtype, device=dev)
            # non_blocking from pinned memory: an asynchronous upload (the host does not wait; the
            # pinned block is not reused before the upload has run).
            if (non_blocking and dev.type == "cuda" and t.is_pinned() and out.dtype == t.dtype
                    and t.is_contiguous() and not t.requires_grad):
                _C._cuda_upload_async(out, t)
            else:
                out.copy_(t)
            return out
    if dtype is not None and dtype != t.dtype:
        return _C.cast(t, dtype)
    return t.clone() if copy else t


def _dim_of(op, dim, ndim):
    """size(dim) / stride(dim)'s dim: an int (a bool was dim 1, a float truncated: PyTorch's
    TypeError) in range; a 0-d tensor answers for dim 0 / -1 (its one implicit extent)."""
    if isinstance(dim, builtins.bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{op}(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
    m = max(ndim, 1)
    if not -m <= dim < m:
        raise IndexError(f"{op}(): Dimension out of range (expected to be in range of [{-m}, {m - 1}], but got {dim})")
    return dim


@export("Tensor.size")
def _size(self, dim=None):
    s = self._shape
    if dim is None:
        return Size(s)
    dim = _dim_of("size", dim, len(s))
    return s[dim] if s else 1


@export("Tensor.stride")
def _stride(self, dim=None):
    s = self._stride()
    if dim is None:
        return s
    dim = _dim_of("stride", dim, len(s))
    return s[dim] if s else 1


@export("Tensor.__repr__", "Tensor.__str__")
def _repr(self):
    extras = []
    fn = self.grad_fn
    if fn is not None:
        extras.append(f"grad_fn=<{fn.name()}>")
    elif self.requires_grad:
        extras.append("requires_grad=True")
    if self.is_meta:
        if _C._is_lazy(self):  # inside nn.Graph's build() / a traced job: no values yet
            return f"tensor(..., size={tuple(self.shape)}, dtype=oneflow.{self.dtype.name}, is_lazy=True)"
        return (f"tensor(..., device='meta', size={tuple(self.shape)}, "
                f"dtype=oneflow.{self.dtype.name})")
    host = self if self.device.type == "cpu" else self.detach().to("cpu")
    arr = (_C.cast(host, _C.float32) if self.dtype == _C.bfloat16 else host).numpy()
    dev = None if self.device.type == "cpu" else str(self.device)
    return _tensor_str.format_tensor(arr, self.dtype.name, dev, extras)


@export("Tensor.tolist")
def _tolist(self):
    host = self if self.device.type == "cpu" else self.detach().to("cpu")
    if self.dtype == _C.bfloat16:
        return _C.cast(host, _C.float32).numpy().tolist()
    return host.numpy().tolist()


@export("Tensor.__len__")
def _len(self):
    if self.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self._shape[0]


@export("Tensor.__iter__")
def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self._shape[0]))


@export("Tensor.__bool__")
def _bool(self):
    if self.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(self.item())


@export("Tensor.__index__")
def _index(self):
    if self.numel() != 1 or self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return builtins.int(self.item())


@export("Tensor.__invert__")
def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (bitwise_not) is only supported for integer and bool tensors, got "
                        f"oneflow.{self.dtype.name}")
    return self.bitwise_not()


def _new_like(factory):
    def new(self, *size, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
        if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
            size = tuple(size[0])
        if placement is not None or sbp is not None:  # OneFlow's: a global tensor of that layout
            return factory(size, dtype=dtype or self.dtype, device=device, placement=placement, sbp=sbp,
                           requires_grad=requires_grad)
        return factory(size, dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad)
    return new


def _new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
    if placement is not None or sbp is not None:  # OneFlow's: a global tensor of that layout
        return _C.full(size, fill_value, dtype=dtype or self.dtype, device=device, placement=placement, sbp=sbp,
                       requires_grad=requires_grad)
    return _C.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                   requires_grad=requires_grad)


_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "int8": "CharTensor", "uint8": "ByteTensor", "int16": "ShortTensor",
    "int32": "IntTensor", "int64": "LongTensor", "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor",
}


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """Without `dtype`, the type name ('oneflow.FloatTensor', 'oneflow.cuda.FloatTensor');
    with a dtype or such a name, the tensor cast to it (self when it already is)."""
    if dtype is None:
        dev = "cuda." if self.is_cuda else ""
        return f"oneflow.{dev}{_TYPE_NAMES[self.dtype.name]}"
    if isinstance(dtype, str):
        parts = dtype.split(".")
        by_name = {v: k for k, v in _TYPE_NAMES.items()}
        if parts[0] not in ("oneflow", "torch") or parts[-1] not in by_name or len(parts) > 3:
            raise ValueError(f"invalid type: '{dtype}'")
        target = getattr(_C, by_name[parts[-1]])
        device = "cuda" if len(parts) == 3 and parts[1] == "cuda" else "cpu"
        return self.to(device=device, dtype=target)
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"type(): argument 'dtype' must be oneflow.dtype or str, not {builtins.type(dtype).__name__}")
    return self.to(dtype=dtype)


@export("Tensor.is_view")
def _is_view_method(self):
    """Upstream OneFlow's: whether the tensor is a view of another tensor's memory (has a `_base`)."""
    return self._is_view()


@export("Tensor.__deepcopy__")
def _deepcopy(self, memo):
    """A copy with its own memory. A leaf keeps requires_grad, .grad and its Python attributes, as
    PyTorch's Tensor.__deepcopy__. A non-leaf copies as upstream OneFlow's does (PyTorch refuses
    it): its values, detached, requires_grad=False. docs/architecture.md §1 follows OneFlow where the two
    disagree; code that deep-copies intermediate results (upstream's autotest copies every
    argument of the op under test, EMA and checkpoint helpers copy whole objects) works, and no
    PyTorch program relies on the refusal."""
    if id(self) in memo:
        return memo[id(self)]
    import copy
    with _no_grad():
        new = self.clone()
    if self.is_leaf:
        new.requires_grad = self.requires_grad
    memo[id(self)] = new
    if self.is_leaf and self.grad is not None:
        new.grad = copy.deepcopy(self.grad, memo)
    if self.__dict__:
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
    return new


@export("Tensor.__reduce_ex__")
def _reduce_ex(self, proto):
    """Pickles the values as a numpy array plus the dtype name (numpy has no bfloat16: it travels
    as float32, exactly), the device, requires_grad and the Python attributes."""
    t = self.detach()
    if t.is_meta:
        payload = tuple(t.shape)
    else:
        if t.dtype == _C.bfloat16:
            t = _C.cast(t, _C.float32)
        payload = np.array(t.cpu().numpy())
    return (_rebuild_tensor, (payload, self.dtype.name, str(self.device), self.requires_grad,
                              dict(self.__dict__)))


def _rebuild_tensor(payload, dtype_name, device, requires_grad, state):
    dtype = getattr(_C, dtype_name)
    if device == "meta":
        t = _C.empty(payload, dtype=dtype, device="meta")
    else:
        t = _numpy_to_tensor(payload, dtype)
        if device != "cpu":
            t = t.to(device)
    if requires_grad:
        t.requires_grad = True
    t.__dict__.update(state)
    return t


T = Tensor
export_value(property(lambda self: Size(self._shape)), "Tensor.shape")
export_value(property(lambda self: _C._is_lazy(self), doc="True for the lazy tensors of a graph being traced"), "Tensor.is_lazy")
# OneFlow's deferred creation (flow.Tensor(..., determining_initializer=...)): every tensor
# here exists from its construction on, so it is always determined.
export_value(property(lambda self: True, doc="True: tensors are created at once (OneFlow's deferred "
                                                  "creation has nothing left to determine)"), "Tensor.is_determined")
export_value(lambda self, determining_initializer=None: self, "Tensor.determine")
export_value(lambda self: builtins.float(self.item()), "Tensor.__float__")
export_value(lambda self: builtins.int(self.item()), "Tensor.__int__")
export_value(lambda self: id(self), "Tensor.__hash__")
export_value(_indexing.getitem, "Tensor.__getitem__")
export_value(_indexing.setitem, "Tensor.__setitem__")
export_value(lambda self: self.neg(), "Tensor.__neg__")
export_value(lambda self: self, "Tensor.__pos__")
export_value(lambda self: self.abs(), "Tensor.__abs__")
export_value(lambda self, other: _C.matmul(other, self), "Tensor.__rmatmul__")
for _name, _dt in [("float", _C.float32), ("double", _C.float64), ("half", _C.float16),
                   ("bfloat16", _C.bfloat16), ("int", _C.int32), ("long", _C.int64),
                   ("bool", _C.bool), ("byte", _C.uint8), ("char", _C.int8),
                   ("short", _C.int16)]:
    export_value((lambda d: lambda self: _C.cast(self, d))(_dt), "Tensor." + _name)
export_value(lambda self: self.to("cpu"), "Tensor.cpu")
export_value(lambda self, device=None, non_blocking=False: self.to(
    "cuda" if device is None else _C.device("cuda", device), non_blocking=non_blocking), "Tensor.cuda")
export_value(lambda self: self.dtype.is_floating_point, "Tensor.is_floating_point")
export_value(_new_like(_C.ones), "Tensor.new_ones")
export_value(_new_like(_C.zeros), "Tensor.new_zeros")
export_value(_new_like(_C.empty), "Tensor.new_empty")
export_value(lambda self, data, *, dtype=None, device=None, requires_grad=False: tensor(
    data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad), "Tensor.new_tensor")
export_value(_new_full, "Tensor.new_full")
export_value(lambda self, cls: _C._as_subclass(self, cls), "Tensor.as_subclass")
export_value(lambda self: self.ndim, "Tensor.ndimension")
# Tensor.uniform_ / normal_ are table ops (src/ops/table/random.yaml).
export_value(ref("Tensor.zero_"), "Tensor.zeros_")
# PyTorch's small properties: device and storage facts.
export_value(property(lambda self: self.device.type == "cpu"), "Tensor.is_cpu")
export_value(property(lambda self: self.element_size()), "Tensor.itemsize")
export_value(property(lambda self: self.numel() * self.element_size()), "Tensor.nbytes")
export_value(lambda self: self.device.index if self.device.type == "cuda" else -1, "Tensor.get_device")
export_value(lambda self: self.dtype not in (_C.bool, _C.uint8), "Tensor.is_signed")
# In-place comparisons and logical ops: the result cast into self's dtype (PyTorch's rule),
# written through copy_ (version bump, the in-place checks of a leaf that requires grad).
def _inplace_compare(name):
    logical = name.startswith("logical_")

    def op_(self, other):
        # the logical ops' number operand is upstream's Scalar form (int, float, bool); a complex
        # number has none (PyTorch's in-place forms take a Tensor only)
        if logical and isinstance(other, complex):
            raise TypeError(f"{name}_(): argument 'other' (position 1) must be Tensor, not complex")
        return self.copy_(getattr(_C, name)(self, other))
    return op_


for _name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
    export_value(_inplace_compare(_name), "Tensor." + _name + "_")
export_value(lambda self: self.copy_(_C.logical_not(self)), "Tensor.logical_not_")
for _alias, _name in (("greater_", "gt_"), ("greater_equal_", "ge_"), ("less_", "lt_"),
                      ("less_equal_", "le_"), ("not_equal_", "ne_")):
    export_value(ref("Tensor." + _name), "Tensor." + _alias)
del _alias, _dt, _name


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


export_value(ref("Tensor.fill_"), "flow.fill_")
export_value(ref("Tensor.detach_"), "flow.detach_")


@export("flow.get_device")
def get_device(input):
    return check_tensor(input, "get_device", "input").get_device()


@export("flow.alias_copy")
def alias_copy(input):
    return check_tensor(input, "alias_copy", "input").clone()


@export("flow.detach_copy")
def detach_copy(input):
    # PyTorch's result requires grad and a backward through it raises (no derivative): the same
    return not_implemented_derivative("detach_copy", [input], [check_tensor(input, "detach_copy", "input").detach().clone()])[0]


export_value(lambda self: False, "Tensor.is_inference")


@export("flow.is_inference")
def is_inference(input):
    return check_tensor(input, "is_inference", "input").is_inference()


@export("Tensor.__contains__")
def _contains(self, element):
    if isinstance(element, (Tensor, numbers.Number)):
        return bool((self == element).any())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")


export_value(lambda self: self if self.dim() == 0 else self.flip(0), "Tensor.__reversed__")


@export("Tensor.apply_")
def _apply_(self, callable):
    """Replaces each element by callable(element) (a Python call per element; CPU tensors)."""
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    vals = [callable(v) for v in self.reshape(-1).tolist()]
    self.copy_(flow.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


@export("Tensor.map_")
def _map_(self, other, callable):
    """self[i] = callable(self[i], other[i]) with other broadcast to self (CPU tensors)."""
    if self.device.type != "cpu" or other.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    o = other.expand(tuple(self.shape)).reshape(-1).tolist()
    vals = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), o)]
    self.copy_(flow.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


export_value(lambda input: check_tensor(input, "detach", "input").detach(), "flow.detach")
export_value(lambda t, value: t.clone().fill_(value), "flow.fill")
export_value(lambda input: check_tensor(input, "zero_", "input").zero_(), "flow.zero_")
