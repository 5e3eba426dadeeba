"""The restricted unpickler behind flow.load of PyTorch's and upstream OneFlow's pickle-based files.

Unpickling a file normally imports and calls whatever globals the file names, so a checkpoint
could run any code. `RestrictedUnpickler.find_class` answers only from an explicit table (each
reader passes its own: the rebuild functions, storage types and dtypes of its format, plus the
plain containers below); every other global is refused with a `pickle.UnpicklingError` naming
it. What the table hands back is never a real library function: callables are `_Call` objects
that check their arguments and build our objects, and the numpy / tensor values are stand-ins
(`Stub`s) turned into real arrays and tensors by `resolve` once the pickle is read (so that the
data is only touched after every header-like number of the file has been checked).
"""
import math
import pickle
import re
import struct
from collections import Counter, OrderedDict

import numpy as np


class LoadError(RuntimeError, ValueError):
    """A file flow.load cannot read (malformed, or of no format it knows). A RuntimeError as our
    errors are, and a ValueError as upstream OneFlow's load raises ("Cannot load file")."""


def refuse(where, what):
    return pickle.UnpicklingError(f"flow.load: {where}: {what}")


class _Call:
    """An allowed global that may be called by the pickle (REDUCE). It refuses BUILD (which
    would otherwise set attributes on it) and cannot itself be pickled."""
    __slots__ = ("name", "fn")

    def __init__(self, name, fn):
        self.name, self.fn = name, fn

    def __call__(self, *args):
        if self.fn is None:
            raise pickle.UnpicklingError(f"flow.load: the pickle calls '{self.name}', which may "
                                         "only appear as an argument")
        return self.fn(*args)

    def __setstate__(self, state):
        raise pickle.UnpicklingError(f"flow.load: the pickle sets the state of '{self.name}'")

    def __reduce__(self):
        raise TypeError(f"{self.name}: a loader stand-in can't be pickled")

    def __repr__(self):
        return f"<allowed global {self.name}>"


class Stub:
    """A value the pickle builds, turned into the real object by `resolve`. BUILD is refused
    unless a subclass defines what its state is (and checks it): otherwise a pickle could
    set the fields of a stand-in after they were checked (a tensor's offset, say)."""
    __slots__ = ()

    def __setstate__(self, state):
        raise pickle.UnpicklingError(f"flow.load: the pickle sets the state of a "
                                     f"{type(self).__name__.lstrip('_')}")

    def resolve(self, ctx):
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# numpy arrays, dtypes and scalars (they appear in both formats), rebuilt from their bytes only

_NP_NAME = re.compile(r"^[<>|=]?(b1|i1|i2|i4|i8|u1|u2|u4|u8|f2|f4|f8|c8|c16|\?)$")


class _Dtype(Stub):
    """numpy.dtype('f4', False, True) followed by BUILD (3, byteorder, None, None, None, ...)."""
    __slots__ = ("value",)

    def __init__(self, name, align=False, copy=True):
        if not isinstance(name, str) or not _NP_NAME.match(name):
            raise pickle.UnpicklingError(f"flow.load: numpy dtype {name!r} is not allowed "
                                         "(only numeric dtypes are)")
        self.value = np.dtype(name)

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) < 2 or state[1] not in "<>|=" \
                or any(s is not None for s in state[2:5]):
            raise pickle.UnpicklingError("flow.load: a numpy dtype with fields or sub-arrays "
                                         "is not allowed")
        if state[1] in "<>":
            self.value = self.value.newbyteorder(state[1])

    def resolve(self, ctx):
        return self.value


def _np_dtype(d):
    if isinstance(d, _Dtype):
        return d.value
    raise pickle.UnpicklingError(f"flow.load: expected a numpy dtype, got {type(d).__name__}")


class _Array(Stub):
    """numpy's _reconstruct(ndarray, (0,), b'b') followed by BUILD (1, shape, dtype, fortran,
    raw bytes): the array is made from the bytes, never by numpy's own unpickling."""
    __slots__ = ("value",)

    def __init__(self):
        self.value = None

    def __setstate__(self, state):
        ok = isinstance(state, tuple) and len(state) == 5 and state[0] == 1
        if ok:
            _, shape, dtype, fortran, raw = state
            ok = isinstance(shape, tuple) and all(type(s) is int and s >= 0 for s in shape) \
                and isinstance(raw, (bytes, bytearray)) and isinstance(fortran, bool)
        if not ok:
            raise pickle.UnpicklingError("flow.load: malformed numpy array state")
        self.value = array_from_bytes(raw, _np_dtype(dtype), shape, "F" if fortran else "C")

    def resolve(self, ctx):
        if self.value is None:
            raise LoadError("flow.load: a numpy array was never given its data")
        return self.value


def array_from_bytes(raw, dtype, shape, order="C"):
    n = math.prod(shape)
    if len(raw) != n * dtype.itemsize:
        raise pickle.UnpicklingError(f"flow.load: numpy array data has {len(raw)} bytes, its "
                                     f"shape {shape} and dtype {dtype} need {n * dtype.itemsize}")
    return np.frombuffer(bytes(raw), dtype=dtype).reshape(shape, order=order).copy()


def _reconstruct(cls, shape, typecode):
    if cls is not NDARRAY:
        raise pickle.UnpicklingError("flow.load: numpy _reconstruct of a class other than ndarray")
    return _Array()


def _frombuffer(buf, dtype, shape, order):
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else None
    if shape is None or not all(type(s) is int and s >= 0 for s in shape) or order not in "CF":
        raise pickle.UnpicklingError("flow.load: malformed numpy buffer")
    a = _Array()
    a.value = array_from_bytes(memoryview(buf).tobytes(), _np_dtype(dtype), shape, order)
    return a


def _scalar(dtype, raw):
    if not isinstance(raw, (bytes, bytearray)):
        raise pickle.UnpicklingError("flow.load: malformed numpy scalar")
    return array_from_bytes(raw, _np_dtype(dtype), ())[()]


def _encode(text, encoding="latin1"):
    # Protocol-2 pickles written by Python 3 spell bytes as _codecs.encode(str, 'latin1').
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("flow.load: _codecs.encode is only allowed for latin1 bytes")
    return text.encode("latin1")


def _ordered_dict(*args):
    if args and not isinstance(args[0], (list, tuple)):
        raise pickle.UnpicklingError("flow.load: malformed OrderedDict")
    return OrderedDict(*args)


def _counter(*args):
    if args and not isinstance(args[0], dict):
        raise pickle.UnpicklingError("flow.load: malformed Counter")
    return Counter(*args)


NDARRAY = _Call("numpy.ndarray", None)

# Globals every reader accepts: plain containers, numpy's array/dtype/scalar rebuilders (under the
# module names of numpy 1 and 2), and bytes as protocol 2 writes them.
COMMON = {("collections", "OrderedDict"): _Call("collections.OrderedDict", _ordered_dict),
          ("collections", "Counter"): _Call("collections.Counter", _counter),
          ("_codecs", "encode"): _Call("_codecs.encode", _encode),
          ("numpy", "ndarray"): NDARRAY,
          ("numpy", "dtype"): _Dtype}
for _b in ("builtins", "__builtin__"):
    for _n, _f in (("set", set), ("frozenset", frozenset), ("complex", complex),
                   ("bytearray", bytearray)):
        COMMON[(_b, _n)] = _Call(f"builtins.{_n}", _f)
for _m in ("numpy.core", "numpy._core"):
    COMMON[(f"{_m}.multiarray", "_reconstruct")] = _Call("numpy _reconstruct", _reconstruct)
    COMMON[(f"{_m}.multiarray", "scalar")] = _Call("numpy scalar", _scalar)
    COMMON[(f"{_m}.numeric", "_frombuffer")] = _Call("numpy _frombuffer", _frombuffer)


class RestrictedUnpickler(pickle.Unpickler):
    """Unpickles from `f`, resolving globals only through `allowed` ((module, name) -> object)
    and persistent ids only through `persistent` (None: a persistent id is refused)."""

    def __init__(self, f, allowed, persistent=None, where="<file>"):
        super().__init__(f)
        self._allowed, self._persistent, self._where = allowed, persistent, where

    def find_class(self, module, name):
        obj = self._allowed.get((module, name))
        if obj is None:
            hint = ""
            if module.startswith(("torch.nn", "torchvision", "oneflow.nn", "flowvision", "__main__")):
                hint = " (a whole model or a custom class was pickled; save its state_dict())"
            raise refuse(self._where, f"the pickle refers to the global '{module}.{name}', which "
                         "is not allowed: flow.load only rebuilds tensors, storages, dtypes and "
                         f"plain containers, and never runs code from a file{hint}")
        return obj

    def persistent_load(self, pid):
        if self._persistent is None:
            raise refuse(self._where, "unexpected persistent id in the pickle")
        return self._persistent(pid)


def unpickle(f, allowed, persistent=None, where="<file>"):
    """One pickle from f through the restricted unpickler; pickle's own errors on damaged data
    become UnpicklingError naming the file."""
    try:
        return RestrictedUnpickler(f, allowed, persistent, where).load()
    except pickle.UnpicklingError:
        raise
    except (LoadError, FileNotFoundError, NotImplementedError):
        raise
    except (EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            OverflowError, MemoryError, RecursionError, struct.error) as e:
        raise refuse(where, f"damaged pickle data ({type(e).__name__}: {e})") from None


def resolve(obj, ctx):
    """The loaded structure with every Stub replaced by its value; shared objects stay shared."""
    memo = {}

    def walk(o):
        key = id(o)
        if key in memo:
            return memo[key]
        if isinstance(o, Stub):
            out = o.resolve(ctx)
        elif isinstance(o, list):
            out = memo[key] = []
            out.extend(walk(v) for v in o)
        elif isinstance(o, tuple):
            out = tuple(walk(v) for v in o)
        elif isinstance(o, OrderedDict):
            out = memo[key] = OrderedDict()
            for k, v in o.items():
                out[walk(k)] = walk(v)
            meta = o.__dict__.get("_metadata")
            if meta is not None:
                out._metadata = walk(meta)
        elif type(o) in (dict, Counter):
            out = memo[key] = type(o)()
            for k, v in o.items():
                out[walk(k)] = walk(v)
        elif isinstance(o, (set, frozenset)):
            out = type(o)(walk(v) for v in o)
        else:
            return o
        memo[key] = out
        return out

    try:
        return walk(obj)
    except RecursionError:
        raise LoadError("flow.load: the saved structure is nested too deeply") from None
