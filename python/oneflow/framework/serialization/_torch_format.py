"""flow.load of files written by PyTorch's torch.save, without importing torch.

Two layouts (torch/serialization.py):
- zip (the default since 1.6): `<prefix>/data.pkl` is the pickled object, whose storages are
  persistent ids ('storage', <storage type>, key, location, numel) with their raw little-endian
  bytes in `<prefix>/data/<key>`; `<prefix>/byteorder` says 'little' or 'big'.
- legacy (`_use_new_zipfile_serialization=False`): five consecutive pickles — the magic number,
  the protocol version, a sys_info dict, the object (persistent ids as above plus a view
  descriptor), the sorted list of storage keys — then each storage as an int64 element count
  followed by its bytes, in that key order.
Tensors are `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
hooks, ...)`, parameters `_rebuild_parameter(tensor, requires_grad, hooks)`. Everything goes
through the restricted unpickler (_restricted_pickle): only those rebuild functions, the
storage types, torch's dtype / device / Size names and plain containers are accepted. Every size
the file declares is checked against the bytes actually present before memory is allocated.
"""
import io
import os
import pickle
import zipfile

from ... import _oneflow_internal as _C
from ._blobs import _move, _parameter_class, _read_into, _view
from ._restricted_pickle import COMMON, LoadError, Stub, _Call, refuse, resolve, unpickle

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001

# torch.<Name>Storage -> our dtype name (UntypedStorage: raw bytes)
_STORAGES = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
             "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
             "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
             "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
             "ComplexDoubleStorage": "complex128", "UntypedStorage": "uint8"}
# torch.<dtype name> as a pickled global -> our dtype name
_TORCH_DTYPES = {"float32": "float32", "float": "float32", "float64": "float64",
                 "double": "float64", "float16": "float16", "half": "float16",
                 "bfloat16": "bfloat16", "int64": "int64", "long": "int64", "int32": "int32",
                 "int": "int32", "int16": "int16", "short": "int16", "int8": "int8",
                 "uint8": "uint8", "bool": "bool", "complex64": "complex64",
                 "cfloat": "complex64", "complex128": "complex128", "cdouble": "complex128"}


def _dtype(name, where):
    d = getattr(_C, name, None)
    if not isinstance(d, _C.dtype):
        raise LoadError(f"flow.load: {where}: tensors of dtype {name} are not supported")
    return d


class _StorageType(_Call):
    __slots__ = ("dtype_name",)

    def __init__(self, name):
        super().__init__(f"torch.{name}", None)
        self.dtype_name = _STORAGES[name]


class _Storage:
    """One saved storage: its raw bytes end up in `data` (a flat CPU tensor of its dtype)."""
    __slots__ = ("key", "dtype", "numel", "location", "data", "moved", "where")

    def __init__(self, key, dtype, numel, location, where):
        self.key, self.dtype, self.numel, self.location = key, dtype, numel, location
        self.where = where  # the file, for error messages
        self.data = None
        self.moved = {}  # dtype -> the storage viewed as that dtype, after map_location

    def __setstate__(self, state):
        raise pickle.UnpicklingError("flow.load: the pickle sets the state of a storage")


class _Tensor(Stub):
    __slots__ = ("storage", "offset", "shape", "stride", "requires_grad", "dtype", "param",
                 "param_grad")

    def __init__(self, storage, offset, shape, stride, requires_grad, dtype=None):
        self.storage, self.offset, self.shape, self.stride = storage, offset, shape, stride
        self.requires_grad, self.dtype = requires_grad, dtype or storage.dtype
        self.param, self.param_grad = False, True

    def resolve(self, ctx):
        st = self.storage
        if st.data is None:
            raise LoadError(f"flow.load: {ctx['where']}: storage '{st.key}' has no data")
        base = st.moved.get(self.dtype)
        if base is None:
            base = st.moved.get(st.dtype)
            if base is None:
                base = st.moved[st.dtype] = _move(st.data, st.location, ctx["map_location"])
            if self.dtype != st.dtype:
                base = st.moved[self.dtype] = base.view(self.dtype)
        t = _view(base, {"shape": self.shape, "stride": self.stride, "offset": self.offset})
        if self.param:
            return _parameter_class()(t, self.param_grad)
        if self.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex):
            t.requires_grad_(True)
        return t


def _ints(v, n=None):
    return isinstance(v, (tuple, list)) and (n is None or len(v) == n) \
        and all(type(x) is int and x >= 0 for x in v)


def _rebuild(storage, offset, size, stride, requires_grad, hooks=None, *rest, dtype=None):
    if not isinstance(storage, _Storage):
        raise refuse("torch checkpoint", "_rebuild_tensor's storage is not a saved storage")
    where = storage.where
    if type(offset) is not int or offset < 0 or not _ints(size) or not _ints(stride, len(size)) \
            or len(size) > 64 or not isinstance(requires_grad, bool):
        raise refuse(where, "malformed tensor in the pickle (offset / size / stride)")
    dtype = dtype or storage.dtype
    numel = storage.numel * storage.dtype.itemsize // dtype.itemsize
    if 0 not in size:
        span = sum((s - 1) * d for s, d in zip(size, stride)) + 1
        if offset + span > numel:
            raise refuse(where, f"a tensor of size {tuple(size)} reaches past the end of "
                         f"its storage ({numel} elements)")
    return _Tensor(storage, offset, tuple(size), tuple(stride), requires_grad, dtype)


def _rebuild_v3(storage, offset, size, stride, requires_grad, hooks, dtype, *metadata):
    if not isinstance(dtype, _C.dtype):
        raise refuse("torch checkpoint", "_rebuild_tensor_v3 without a dtype")
    if isinstance(storage, _Storage) and (storage.numel * storage.dtype.itemsize) % dtype.itemsize:
        raise refuse("torch checkpoint", "a storage's size is not a whole number of elements")
    return _rebuild(storage, offset, size, stride, requires_grad, hooks, dtype=dtype)


def _rebuild_parameter(data, requires_grad, hooks=None, *state):
    if not isinstance(data, _Tensor) or not isinstance(requires_grad, bool):
        raise refuse("torch checkpoint", "malformed parameter in the pickle")
    data.param, data.param_grad = True, requires_grad
    return data


def _rebuild_from_type(func, new_type, args, state):
    # Tensor.__reduce_ex__ for a tensor with Python attributes or of a subclass.
    if func not in (_REBUILD_V2, _REBUILD_V3, _REBUILD_PARAM) or new_type not in _TENSOR_TYPES \
            or not isinstance(args, tuple):
        raise refuse("torch checkpoint", "_rebuild_from_type_v2 of something else than a tensor")
    t = func(*args)
    if new_type is _TENSOR_TYPES[1]:
        t.param = True
    return t


def _device(kind, index=None):
    if not isinstance(kind, str) or (index is not None and type(index) is not int):
        raise refuse("torch checkpoint", "malformed torch.device")
    return _C.device(kind if index is None else f"{kind}:{index}")


_REBUILD_V2 = _Call("torch._utils._rebuild_tensor_v2", _rebuild)
_REBUILD_V3 = _Call("torch._utils._rebuild_tensor_v3", _rebuild_v3)
_REBUILD_PARAM = _Call("torch._utils._rebuild_parameter", _rebuild_parameter)
_TENSOR_TYPES = (_Call("torch.Tensor", None), _Call("torch.nn.Parameter", None))

ALLOWED = dict(COMMON)
ALLOWED.update({("torch._utils", "_rebuild_tensor_v2"): _REBUILD_V2,
                ("torch._utils", "_rebuild_tensor_v3"): _REBUILD_V3,
                ("torch._utils", "_rebuild_parameter"): _REBUILD_PARAM,
                ("torch._utils", "_rebuild_parameter_with_state"): _REBUILD_PARAM,
                ("torch._tensor", "_rebuild_from_type_v2"):
                    _Call("torch._tensor._rebuild_from_type_v2", _rebuild_from_type),
                ("torch", "Tensor"): _TENSOR_TYPES[0],
                ("torch.nn.parameter", "Parameter"): _TENSOR_TYPES[1],
                ("torch", "device"): _Call("torch.device", _device),
                ("torch", "Size"): _Call("torch.Size", lambda v=(): tuple(v))})
for _n in _STORAGES:
    ALLOWED[("torch", _n)] = _StorageType(_n)
for _n, _d in _TORCH_DTYPES.items():
    if isinstance(getattr(_C, _d, None), _C.dtype):
        ALLOWED[("torch", _n)] = getattr(_C, _d)


class _Storages:
    """persistent_load: one _Storage per key, its declared size checked by `check`."""

    def __init__(self, where, check):
        self.where, self.check, self.by_key = where, check, {}

    def __call__(self, pid):
        if not isinstance(pid, tuple) or len(pid) not in (5, 6) or pid[0] != "storage" \
                or not isinstance(pid[1], _StorageType) or not isinstance(pid[2], str) \
                or not isinstance(pid[3], str) or type(pid[4]) is not int or pid[4] < 0:
            raise refuse(self.where, f"malformed storage reference {str(pid)[:80]}")
        if len(pid) == 6 and pid[5] is not None:
            raise refuse(self.where, "storage views of the pre-1.0 format are not supported")
        _, stype, key, location, numel = pid[:5]
        st = self.by_key.get(key)
        if st is None:
            dtype = _dtype(stype.dtype_name, self.where)
            self.check(key, numel * dtype.itemsize)
            st = self.by_key[key] = _Storage(key, dtype, numel, location, self.where)
        elif st.numel * st.dtype.itemsize < numel * _dtype(stype.dtype_name, self.where).itemsize:
            raise refuse(self.where, f"storage '{key}' is declared with two sizes")
        return st


def _read_exact(f, tensor, nbytes, where, what):
    try:
        _read_into(f, tensor, nbytes, where, what)
    except RuntimeError as e:
        raise LoadError(str(e)) from None


def is_zip(head):
    return head[:4] == b"PK\x03\x04"


def starts_legacy(f):
    """Whether f (at a pickle) begins with the legacy format's magic number (f is rewound)."""
    start = f.tell()
    try:
        return unpickle(f, {}, None, "<probe>") == LEGACY_MAGIC
    except (pickle.UnpicklingError, LoadError):
        return False
    finally:
        f.seek(start)


def load_zip(f, where, map_location):
    try:
        z = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise LoadError(f"flow.load: {where}: a damaged zip file ({e})") from None
    with z:
        names = [n for n in z.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if len(names) != 1:
            raise LoadError(f"flow.load: {where}: a zip file that is not a torch.save "
                            "checkpoint (no <name>/data.pkl)")
        prefix = names[0][:-len("data.pkl")]
        infos = {i.filename: i for i in z.infolist()}
        order = infos.get(prefix + "byteorder")
        if order is not None and z.read(order).strip() not in (b"little", b""):
            raise LoadError(f"flow.load: {where}: big-endian torch checkpoints are not supported")

        def check(key, nbytes):
            info = infos.get(f"{prefix}data/{key}")
            if info is None:
                raise LoadError(f"flow.load: {where}: storage '{key}' has no data in the file")
            if info.file_size != nbytes:
                raise LoadError(f"flow.load: {where}: storage '{key}' has {info.file_size} "
                                f"bytes, its header declares {nbytes}")

        storages = _Storages(where, check)
        with z.open(names[0]) as pf:
            obj = unpickle(io.BufferedReader(pf), ALLOWED, storages, where)
        for key, st in storages.by_key.items():
            st.data = _C.empty(st.numel, dtype=st.dtype)
            with z.open(f"{prefix}data/{key}") as df:
                _read_exact(df, st.data, st.numel * st.dtype.itemsize, where, f"storage '{key}'")
    return resolve(obj, {"where": where, "map_location": map_location})


def _file_size(f):
    pos = f.tell()
    end = f.seek(0, os.SEEK_END)
    f.seek(pos)
    return end


def load_legacy(f, where, map_location, magic):
    """The legacy format, `f` positioned after the first pickle (`magic`)."""
    if magic != LEGACY_MAGIC:
        raise LoadError(f"flow.load: {where}: a pickle file that is neither a torch.save nor a "
                        "OneFlow checkpoint")
    version = unpickle(f, {}, None, where)
    if version != LEGACY_PROTOCOL:
        raise LoadError(f"flow.load: {where}: unsupported torch legacy protocol {version!r}")
    info = unpickle(f, {}, None, where)
    if not isinstance(info, dict) or info.get("little_endian") is not True:
        raise LoadError(f"flow.load: {where}: big-endian torch checkpoints are not supported")
    size = _file_size(f)
    budget = [0]

    def check(key, nbytes):  # all storages together must fit in what is left of the file
        budget[0] += nbytes + 8
        if budget[0] > size - f.tell():
            raise LoadError(f"flow.load: {where}: storages declared larger than the file "
                            f"({size} bytes)")

    storages = _Storages(where, check)
    obj = unpickle(f, ALLOWED, storages, where)
    keys = unpickle(f, {}, None, where)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise LoadError(f"flow.load: {where}: malformed storage key list")
    for key in keys:
        st = storages.by_key.get(key)
        if st is None:
            raise LoadError(f"flow.load: {where}: storage '{key}' is listed but never used")
        head = f.read(8)
        count = int.from_bytes(head, "little", signed=True) if len(head) == 8 else -1
        if count != st.numel:
            raise LoadError(f"flow.load: {where}: storage '{key}' holds {count} elements, the "
                            f"pickle declares {st.numel}")
        st.data = _C.empty(st.numel, dtype=st.dtype)
        _read_exact(f, st.data, st.numel * st.dtype.itemsize, where, f"storage '{key}'")
    return resolve(obj, {"where": where, "map_location": map_location})
