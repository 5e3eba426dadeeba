"""Upstream OneFlow's pickle-based checkpoints (its python/oneflow/framework/check_point_v2.py):
read by flow.load, written by flow.save(obj, path, format="oneflow").

- single file: `pickle.dumps({"protocol_version": 1, "__oneflow__": None, "data": obj})`,
  where a tensor pickles as `oneflow.Tensor` (or `oneflow.nn.Parameter`) created by NEWOBJ and
  given the state `{"data": <numpy array>, "dtype": <oneflow dtype>, "device": "cpu"|"cuda"}`, and
  a dtype as `oneflow._oneflow_internal.dtype` given its DataType number as state.
- directory (`save_as_external_data=True`): that pickle in `<dir>/pickled_data`, each tensor's
  state being `{"path": "<subdir>"}`, with `<dir>/<subdir>/out` (raw C-order bytes) and
  `<dir>/<subdir>/meta` (`shape { dim: 2 dim: 3 } data_type: kFloat`, protobuf text format).
The older variable-snapshot directories (per-variable `meta`/`out`, `snapshot_done`, no pickle)
are read by framework/serialization/_snapshot_format.py.
Reading goes through the restricted unpickler: only those classes, numpy's array rebuilders and
plain containers are accepted.
"""
import math
import os
import pickle

import numpy as np

from ... import _oneflow_internal as _C
from ._blobs import _move, _parameter_class
from ._restricted_pickle import COMMON, LoadError, Stub, _Array, array_from_bytes, resolve, unpickle

MAGIC_KEY = "__oneflow__"
PROTOCOL_VERSION = 1
PICKLE_NAME = "pickled_data"

# OneFlow's DataType enum (oneflow/core/common/data_type.proto) <-> our dtype names
_ENUM = {1: "int8", 2: "float32", 3: "float64", 4: "int8", 5: "int32", 6: "int64", 7: "uint8",
         9: "float16", 11: "bfloat16", 12: "bool", 13: "uint16", 14: "uint32", 15: "uint64",
         17: "int16", 20: "complex64", 21: "complex128"}
_NUMBER = {name: num for num, name in _ENUM.items() if num != 1}


class _OfDtype(Stub):
    """`oneflow._oneflow_internal.dtype` made by NEWOBJ, its DataType number set by BUILD."""
    __slots__ = ("value",)

    def __init__(self, *args):
        self.value = None

    def __setstate__(self, state):
        name = _ENUM.get(state) if type(state) is int else None
        d = getattr(_C, name, None) if name else None
        if not isinstance(d, _C.dtype):
            raise pickle.UnpicklingError(f"flow.load: OneFlow DataType {state!r} is not supported")
        self.value = d

    def resolve(self, ctx):
        if self.value is None:
            raise LoadError(f"flow.load: {ctx['where']}: a OneFlow dtype without its state")
        return self.value


class _OfTensor(Stub):
    """`oneflow.Tensor` made by NEWOBJ and given its state by BUILD (upstream tensor_setstate)."""
    __slots__ = ("state",)
    parameter = False

    def __init__(self, *args):
        self.state = None

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise pickle.UnpicklingError("flow.load: malformed OneFlow tensor state")
        self.state = state

    def resolve(self, ctx):
        s = self.state
        if s is None:
            raise LoadError(f"flow.load: {ctx['where']}: a OneFlow tensor without its state")
        if "path" in s:
            t = _external(ctx, s["path"])
            device = "cpu"
        else:
            data, dtype = s.get("data"), s.get("dtype")
            if isinstance(data, _Array):
                data = data.value
            if not isinstance(data, np.ndarray) or not isinstance(dtype, _OfDtype) \
                    or dtype.value is None:
                raise LoadError(f"flow.load: {ctx['where']}: malformed OneFlow tensor state")
            if "placement" in s:
                raise LoadError(f"flow.load: {ctx['where']}: global tensors pickled outside "
                                "flow.save are not supported; save them with global_dst_rank")
            t = _from_numpy(data, dtype.value)
            device = s.get("device", "cpu")
            if device not in ("cpu", "cuda"):
                raise LoadError(f"flow.load: {ctx['where']}: unknown device {device!r}")
        t = _move(t, device, ctx["map_location"])
        if self.parameter:
            return _parameter_class()(t)
        return t


class _OfParameter(_OfTensor):
    __slots__ = ()
    parameter = True


def _from_numpy(arr, dtype):
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    t = _C.from_numpy(arr if arr.flags.c_contiguous else arr.copy())  # (ascontiguousarray makes 0-d 1-d)
    return t if t.dtype == dtype else t.to(dtype)


def _external(ctx, rel):
    """A tensor saved as external data: <dir>/<rel>/{meta,out}."""
    from . import _snapshot_format as snapshot
    root = ctx.get("dir")
    if root is None or not isinstance(rel, str) or not rel or os.path.basename(rel) != rel \
            or rel in (".", ".."):
        raise LoadError(f"flow.load: {ctx['where']}: malformed external tensor path {rel!r}")
    vdir = os.path.join(root, rel)
    try:
        with open(os.path.join(vdir, snapshot.META)) as f:
            shape, dtype = snapshot.parse_meta(f.read(), vdir)
    except FileNotFoundError:
        raise LoadError(f"flow.load: {ctx['where']}: tensor directory '{rel}' has no meta file") \
            from None
    data = os.path.join(vdir, snapshot.DATA)
    npd = np.dtype(np.float32 if dtype == _C.bfloat16 else str(dtype).split(".")[-1])
    item = 2 if dtype == _C.bfloat16 else npd.itemsize
    need = math.prod(shape) * item  # (Python ints: a crafted meta cannot overflow it)
    size = os.path.getsize(data) if os.path.isfile(data) else -1
    if size != need:
        raise LoadError(f"flow.load: {ctx['where']}: tensor data '{rel}/out' has {size} bytes, "
                        f"its meta declares {need}")
    with open(data, "rb") as f:
        raw = f.read()
    if dtype == _C.bfloat16:  # 16-bit patterns: the high half of float32
        bits = np.frombuffer(raw, np.uint16).astype(np.uint32) << 16
        return _C.from_numpy(bits.view(np.float32).reshape(shape).copy()).to(dtype)
    return _from_numpy(array_from_bytes(raw, npd, tuple(shape)), dtype)


ALLOWED = dict(COMMON)
ALLOWED.update({("oneflow", "Tensor"): _OfTensor,
                ("oneflow._oneflow_internal", "Tensor"): _OfTensor,
                ("oneflow.framework.tensor", "Tensor"): _OfTensor,
                ("oneflow.nn", "Parameter"): _OfParameter,
                ("oneflow._oneflow_internal.nn", "Parameter"): _OfParameter,
                ("oneflow.nn.parameter", "Parameter"): _OfParameter,
                ("oneflow._oneflow_internal", "dtype"): _OfDtype})


def finish(content, where, map_location, dir=None):
    """The object of an unpickled upstream checkpoint `content` (already read)."""
    # Newer upstream versions mark the dict with "__oneflow__"; older ones (their
    # pickled_data directories) have only protocol_version and data.
    if not isinstance(content, dict) or "data" not in content \
            or not set(content) <= {"protocol_version", MAGIC_KEY, "data"}:
        raise LoadError(f"flow.load: {where}: a pickle file that is neither a torch.save nor a "
                        "OneFlow checkpoint")
    if content.get("protocol_version") != PROTOCOL_VERSION:
        raise LoadError(f"flow.load: {where}: unsupported OneFlow protocol version "
                        f"{content.get('protocol_version')!r}")
    return resolve(content.get("data"), {"where": where, "map_location": map_location,
                                         "dir": dir})


def load_dir(path, map_location):
    with open(os.path.join(path, PICKLE_NAME), "rb") as f:
        content = unpickle(f, ALLOWED, None, path)
    return finish(content, path, map_location, dir=path)


# ---------------------------------------------------------------------------------------------
# Writing: the pure-Python pickler, so that tensors and dtypes can be written as the exact
# opcodes upstream's own pickling produces (its classes do not exist here).


class _Writer(pickle._Pickler):
    def __init__(self, f, external_dir=None):
        super().__init__(f, protocol=4)
        self.external_dir, self.count = external_dir, 0

    def _global(self, module, name):
        self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())

    def save(self, obj, save_persistent_id=True):
        if not isinstance(obj, (_C.Tensor, _C.dtype, np.ndarray)):
            return super().save(obj, save_persistent_id)
        self.framer.commit_frame()
        x = self.memo.get(id(obj))
        if x is not None:
            self.write(self.get(x[0]))
            return
        if isinstance(obj, _C.dtype):
            if obj.name not in _NUMBER:
                raise TypeError(f"flow.save(format='oneflow'): dtype {obj.name} has no OneFlow "
                                "DataType")
            self._global("oneflow._oneflow_internal", "dtype")
            self.write(pickle.EMPTY_TUPLE + pickle.NEWOBJ)
            super().save(_NUMBER[obj.name])
            self.write(pickle.BUILD)
        elif isinstance(obj, np.ndarray):
            if obj.dtype.kind not in "biufc":
                raise TypeError("flow.save(format='oneflow'): only numeric numpy arrays")
            arr = obj if obj.flags.c_contiguous else obj.copy()
            if arr.dtype.byteorder == ">":
                arr = arr.astype(arr.dtype.newbyteorder("<"))
            self._global("numpy.core.multiarray", "_reconstruct")
            self._global("numpy", "ndarray")
            super().save((0,))
            super().save(b"b")
            self.write(pickle.TUPLE3 + pickle.REDUCE)
            super().save((1, tuple(arr.shape), arr.dtype, False, arr.tobytes()))
            self.write(pickle.BUILD)
        else:
            self._tensor(obj)
        self.memoize(obj)

    def _tensor(self, t):
        if t.is_meta:
            raise RuntimeError("flow.save: a tensor on the meta device has no data to save")
        if getattr(t, "is_global", False):
            raise RuntimeError("flow.save(format='oneflow'): global tensors are saved through "
                               "global_dst_rank")
        is_param = isinstance(t, _parameter_class())
        self._global(*(("oneflow.nn", "Parameter") if is_param else ("oneflow", "Tensor")))
        self.write(pickle.EMPTY_TUPLE + pickle.NEWOBJ)
        data = t.detach().cpu()
        if data.dtype == _C.bfloat16:  # numpy has no bfloat16: float32 values, bfloat16 dtype
            data = data.to(_C.float32)
        arr = data.numpy()
        if self.external_dir is None:
            state = {"data": arr, "dtype": t.dtype,
                     "device": "cuda" if t.device.type == "cuda" else "cpu"}
        else:
            from . import _snapshot_format as snapshot
            rel = f"tensor_{self.count}"
            self.count += 1
            vdir = os.path.join(self.external_dir, rel)
            os.makedirs(vdir)
            raw = arr.tobytes() if t.dtype != _C.bfloat16 else \
                (np.ascontiguousarray(arr).view(np.uint32) >> 16).astype(np.uint16).tobytes()
            with open(os.path.join(vdir, snapshot.DATA), "wb") as f:
                f.write(raw)
            with open(os.path.join(vdir, snapshot.META), "w") as f:
                f.write(snapshot.meta_text(tuple(t.shape), t.dtype))
            state = {"path": rel}
        super().save(state)
        self.write(pickle.BUILD)


def write(obj, f, external_dir=None):
    """Pickles `obj` as upstream OneFlow's flow.save does into the binary stream f."""
    _Writer(f, external_dir).dump({"protocol_version": PROTOCOL_VERSION, MAGIC_KEY: None,
                                   "data": obj})
