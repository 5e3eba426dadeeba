"""flow.save (loading is _load.py): checkpoints of tensors and nested Python containers.

The format is documented in docs/checkpoint_format.md. In short: the structure of the saved
object is JSON (never pickle, so loading runs no code from the file); tensor data is raw bytes,
one blob per storage region (views of one storage are saved once and share memory again when
loaded). A path without an extension (or an existing directory) is a directory holding
`index.json` and one `<k>.bin` file per blob, as OneFlow saves a directory; a path with an
extension (or an existing file, or a binary stream) is one file: magic, header, blobs.
Saving writes to a temporary sibling, fsyncs, and renames into place, so a crash never leaves a
half-written checkpoint where a good one was.
"""
import ctypes
import json
import math
import os
import shutil
import struct
import tempfile
import zlib
from collections import Counter, OrderedDict

import numpy as np

from ... import _global_hooks
from ... import _oneflow_internal as _C
from ._blobs import _parameter_class

FILE_MAGIC = b"OFCKPT\x00\x01"
INDEX_MAGIC = "oneflow-checkpoint"
VERSION = 1
INDEX_NAME = "index.json"
_ALIGN = 64
_DTYPES = {d.name: d for d in (_C.bool, _C.int8, _C.uint8, _C.int16, _C.int32, _C.int64, _C.float16,
                                _C.bfloat16, _C.float32, _C.float64)}


# ---------------------------------------------------------------------------------------------
# Encoding: object -> (JSON tree, tensor records, storage regions)


class _Encoder:
    def __init__(self):
        self.tensors = []      # records
        self.tensor_ids = {}   # id(tensor) -> index (the same object is saved once)
        self.storages = []     # {"lo": address, "hi": address, "keep": [tensors]}
        self.storage_of = {}   # base address -> storage index
        self._alive = []       # CPU copies of non-CPU tensors, kept until written

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"__float__": repr(obj)}
        if isinstance(obj, _C.Tensor):
            return {"__tensor__": self._tensor(obj)}
        if isinstance(obj, np.ndarray):
            if obj.dtype == np.object_:
                raise TypeError("flow.save: numpy arrays of Python objects can't be saved")
            return {"__ndarray__": self._tensor(_C.from_numpy(np.ascontiguousarray(obj))),
                    "dtype": obj.dtype.str}
        if isinstance(obj, np.generic):
            return self.encode(obj.item())
        if isinstance(obj, _C.dtype):
            return {"__dtype__": obj.name}
        if isinstance(obj, _C.device):
            return {"__device__": str(obj)}
        if isinstance(obj, (bytes, bytearray)):
            return {"__bytes__": obj.hex()}
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            # A namedtuple is saved as a tuple: restoring its class would mean importing code.
            return {"__tuple__": [self.encode(v) for v in obj]}
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v) for v in obj]}
        if isinstance(obj, list):
            return [self.encode(v) for v in obj]
        if isinstance(obj, (set, frozenset)):
            return {"__set__": [self.encode(v) for v in obj], "frozen": isinstance(obj, frozenset)}
        if isinstance(obj, dict):
            tag = ("__counter__" if isinstance(obj, Counter) else
                   "__odict__" if isinstance(obj, OrderedDict) else "__dict__")
            out = {tag: [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
            meta = getattr(obj, "_metadata", None)  # nn.Module.state_dict() version info
            if isinstance(meta, dict):
                out["metadata"] = self.encode(meta)
            return out
        raise TypeError(f"flow.save: objects of type {type(obj).__module__}.{type(obj).__name__}"
                        " can't be saved (supported: tensors, numpy arrays, numbers, strings, "
                        "bytes, None, dtypes, devices and lists/tuples/dicts/sets of them)")

    def _tensor(self, t):
        key = id(t)
        if key in self.tensor_ids:
            return self.tensor_ids[key]
        if t.is_meta:
            raise RuntimeError("flow.save: a tensor on the meta device has no data to save")
        device = str(t.device)
        data = t
        if t.device.type != "cpu":
            data = t.detach().to("cpu")
            self._alive.append(data)
        item = data.element_size()
        base = data.data_ptr() - data.storage_offset() * item
        # The bytes this view spans (strides are never negative here).
        span = sum((s - 1) * st for s, st in zip(data.shape, data.stride())) + 1 \
            if data.numel() else 0
        lo, hi = data.data_ptr(), data.data_ptr() + span * item
        sid = self.storage_of.get((base, device))
        if sid is None:
            sid = len(self.storages)
            self.storage_of[(base, device)] = sid
            self.storages.append({"lo": lo, "hi": hi, "keep": [data], "item": item})
        else:
            st = self.storages[sid]
            if span:
                st["lo"], st["hi"] = (min(st["lo"], lo), max(st["hi"], hi)) \
                    if st["hi"] > st["lo"] else (lo, hi)
            st["keep"].append(data)
        param_cls = _parameter_class()
        rec = {"storage": sid, "addr": lo, "shape": list(data.shape),
               "stride": list(data.stride()), "dtype": t.dtype.name, "device": device,
               "requires_grad": bool(t.requires_grad),
               "parameter": param_cls is not None and isinstance(t, param_cls)}
        self.tensors.append(rec)
        self.tensor_ids[key] = len(self.tensors) - 1
        return len(self.tensors) - 1

    def finish(self):
        """Tensor offsets relative to their storage region (in elements)."""
        for rec in self.tensors:
            st = self.storages[rec["storage"]]
            addr = rec.pop("addr")
            empty = st["hi"] == st["lo"] or 0 in rec["shape"]
            rec["offset"] = 0 if empty else (addr - st["lo"]) // st["item"]
        out = [{"nbytes": st["hi"] - st["lo"]} for st in self.storages]
        for rec in self.tensors:
            out[rec["storage"]].setdefault("dtype", rec["dtype"])
            out[rec["storage"]].setdefault("device", rec["device"])
        return out

    def region(self, sid):
        st = self.storages[sid]
        n = st["hi"] - st["lo"]
        if n == 0:
            return memoryview(b"")
        return memoryview((ctypes.c_char * n).from_address(st["lo"])).cast("B")


# ---------------------------------------------------------------------------------------------
# Writing


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _exchange(a, b):
    """Atomically swaps two paths (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def _header(enc, tree, storages):
    return {"magic": INDEX_MAGIC, "version": VERSION, "object": tree, "tensors": enc.tensors,
            "storages": storages}


def _dumps(body):
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _write_file(f, enc, tree, storages):
    offset = 0
    for sid, st in enumerate(storages):
        st["offset"] = offset
        st["crc32"] = zlib.crc32(enc.region(sid))
        offset += -(-st["nbytes"] // _ALIGN) * _ALIGN
    header = _dumps(_header(enc, tree, storages)).encode()
    f.write(FILE_MAGIC + struct.pack("<QI", len(header), zlib.crc32(header)) + header)
    pos = 0
    for sid, st in enumerate(storages):
        f.write(b"\0" * (st["offset"] - pos))
        f.write(enc.region(sid))
        pos = st["offset"] + st["nbytes"]


def _write_dir(tmp, enc, tree, storages):
    for sid, st in enumerate(storages):
        st["file"] = f"{sid}.bin"
        region = enc.region(sid)
        st["crc32"] = zlib.crc32(region)
        with open(os.path.join(tmp, st["file"]), "wb") as f:
            f.write(region)
            f.flush()
            os.fsync(f.fileno())
    body = _header(enc, tree, storages)
    index = {"magic": INDEX_MAGIC, "version": VERSION, "body_crc32": zlib.crc32(_dumps(body).encode()),
             "body": body}
    with open(os.path.join(tmp, INDEX_NAME), "w") as f:
        f.write(json.dumps(index, sort_keys=True, allow_nan=False))
        f.flush()
        os.fsync(f.fileno())
    _fsync_dir(tmp)


def _use_dir_form(path):
    if os.path.isdir(path):
        return True
    if os.path.exists(path):
        return False
    return os.path.splitext(os.path.basename(os.path.normpath(path)))[1] == ""


def _stale(parent, name):
    """Temporaries of earlier saves to `name` whose process is gone (killed mid-save)."""
    out = []
    for entry in os.listdir(parent):
        for kind in (".tmp-", ".old-"):
            prefix = f".{name}{kind}"
            if not entry.startswith(prefix):
                continue
            pid = entry[len(prefix):].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                out.append(os.path.join(parent, entry))
    return out


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass


def _commit(path, as_dir, write):
    """Runs write(tmp) on a temporary sibling of `path` (a directory if as_dir, else a binary
    file object) and renames it into place atomically. The temporary's name carries our pid, so
    that the next save to the same path removes what a killed save left behind."""
    path = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"flow.save: parent directory '{parent}' does not exist")
    name = os.path.basename(os.path.normpath(path))
    for leftover in _stale(parent, name):
        _remove(leftover)
    prefix = f".{name}.tmp-{os.getpid()}-"
    if as_dir:
        tmp = tempfile.mkdtemp(prefix=prefix, dir=parent)
        try:
            write(tmp)
            _fsync_dir(tmp)
            target = os.path.abspath(path)
            if not os.path.exists(target):
                os.rename(tmp, target)
            elif _exchange(tmp, target):
                shutil.rmtree(tmp)  # tmp now holds the old checkpoint
            else:
                old = tempfile.mkdtemp(prefix=f".{name}.old-{os.getpid()}-", dir=parent)
                os.rmdir(old)
                os.rename(target, old)
                os.rename(tmp, target)
                shutil.rmtree(old)
            _fsync_dir(parent)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(parent)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save(obj, path, global_dst_rank=None, save_as_external_data=False, *, format=None,
         **kwargs):
    """Saves `obj` (tensors, Parameters, numpy arrays, numbers, strings, None, and nested
    lists/tuples/dicts/OrderedDicts of them: a module's or optimizer's state_dict) to `path`.

    `path` without an extension (or an existing directory) is written as a directory
    checkpoint, a path with an extension (or an existing file) as a single file, a writable
    binary stream as a single file. See docs/checkpoint_format.md.

    format="oneflow" writes upstream OneFlow's pickle instead, which upstream's flow.load reads:
    one file, or with save_as_external_data=True a directory (`pickled_data` plus one
    `meta`/`out` directory per tensor).
    """
    if format not in (None, "oneflow"):
        raise ValueError(f"flow.save: unknown format {format!r} (expected None or 'oneflow')")
    if not hasattr(path, "write") and not isinstance(path, (str, bytes, os.PathLike)):
        # before any encoding; PyTorch's is an AttributeError, a TypeError naming the op here
        raise TypeError(f"save(): argument 'path' must be a path (str, bytes, os.PathLike) or a writable "
                        f"binary stream, not {type(path).__name__}")
    if _global_hooks.use("contains_global")(obj):  # gathered to one rank, which writes it (docs/global_tensors.md)
        return _global_hooks.use("save")(obj, path, global_dst_rank, save, save_as_external_data=save_as_external_data,
                                  format=format, **kwargs)
    if format == "oneflow":
        from . import _oneflow_format as upstream
        if hasattr(path, "write"):
            return upstream.write(obj, path)
        if save_as_external_data:
            def write_dir(tmp):
                with open(os.path.join(tmp, upstream.PICKLE_NAME), "wb") as f:
                    upstream.write(obj, f, external_dir=tmp)
            return _commit(path, True, write_dir)
        return _commit(path, False, lambda f: upstream.write(obj, f))
    enc = _Encoder()
    tree = enc.encode(obj)
    storages = enc.finish()
    if hasattr(path, "write"):
        _write_file(path, enc, tree, storages)
        return
    if _use_dir_form(os.fspath(path)):
        _commit(path, True, lambda tmp: _write_dir(tmp, enc, tree, storages))
    else:
        _commit(path, False, lambda f: _write_file(f, enc, tree, storages))
