"""flow.load: reads a checkpoint written by flow.save (docs/checkpoint_format.md), and hands
torch.save's and upstream OneFlow's files to _torch_format / _oneflow_format.

Everything read from the file is checked before it is used: the magic, the header's checksum,
the header's schema (types, known dtypes, tensor views inside their blob), each blob's size and
checksum. A problem is a RuntimeError naming the path and what is wrong (FileNotFoundError for a
missing path); nothing from the file is ever executed (the structure is JSON).
"""
import io
import json
import math
import os
import struct
import zlib
from collections import Counter, OrderedDict

import numpy as np

from ... import _global_hooks
from ... import _oneflow_internal as _C
from ._blobs import _bad, _move, _parameter_class, _read_into, _view
from ._save import _DTYPES, FILE_MAGIC, INDEX_MAGIC, INDEX_NAME, VERSION, _dumps

_TAGS = ("__float__", "__tensor__", "__ndarray__", "__dtype__", "__device__", "__bytes__",
         "__tuple__", "__set__", "__dict__", "__odict__", "__counter__")


def _check_header(path, h):
    """Schema check of a decoded header: anything malformed is a clear error here, not a crash
    or a wrong tensor later."""
    def need(cond, what):
        if not cond:
            raise _bad(path, what)

    need(isinstance(h, dict), "the header is not a JSON object")
    need(h.get("magic") == INDEX_MAGIC, "wrong magic in the header")
    need(h.get("version") == VERSION, f"unsupported format version {h.get('version')!r}")
    storages, tensors = h.get("storages"), h.get("tensors")
    need(isinstance(storages, list) and isinstance(tensors, list), "missing tensor tables")
    need("object" in h, "missing the saved object")
    for k, st in enumerate(storages):
        need(isinstance(st, dict) and isinstance(st.get("nbytes"), int) and st["nbytes"] >= 0
             and st.get("dtype") in _DTYPES and isinstance(st.get("crc32"), int)
             and isinstance(st.get("device"), str), f"blob {k} has a malformed description")
        need(st["nbytes"] % _DTYPES[st["dtype"]].itemsize == 0, f"blob {k} has a partial element")
    viewed = [0] * len(storages)
    for k, t in enumerate(tensors):
        need(isinstance(t, dict) and isinstance(t.get("storage"), int)
             and 0 <= t["storage"] < len(storages), f"tensor {k} refers to a missing blob")
        shape, stride, off = t.get("shape"), t.get("stride"), t.get("offset")
        ok = (isinstance(shape, list) and isinstance(stride, list) and len(shape) == len(stride)
              and all(isinstance(v, int) and v >= 0 for v in shape + stride)
              and isinstance(off, int) and off >= 0 and len(shape) <= 16)
        need(ok, f"tensor {k} has a malformed shape/stride/offset")
        st = storages[t["storage"]]
        need(t.get("dtype") == st["dtype"], f"tensor {k}'s dtype differs from its blob's")
        need(isinstance(t.get("device"), str), f"tensor {k} has no device")
        count = st["nbytes"] // _DTYPES[st["dtype"]].itemsize
        if 0 not in shape:
            span = sum((s - 1) * d for s, d in zip(shape, stride)) + 1
            need(off + span <= count, f"tensor {k} reaches past the end of its blob")
        # Bound the work the records ask for by the data the file holds: views of one blob may
        # overlap (a tensor and its transpose, slices), but not without limit.
        viewed[t["storage"]] += max(math.prod(shape), 1)
        need(viewed[t["storage"]] <= _VIEW_FACTOR * (count + 1),
             f"the tensor records view blob {t['storage']} ({count} elements) more than "
             f"{_VIEW_FACTOR} times over: more data than the file holds")
    refs = _references(path, h["object"])
    need(len(refs) == len(tensors), f"{len(tensors) - len(refs)} tensor records are not used by "
         "the saved object")


_VIEW_FACTOR = 64


def _references(path, obj):
    """The tensor indices the saved structure refers to (an iterative walk: no recursion limit)."""
    refs, stack = set(), [obj]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(n)
        elif isinstance(n, dict):
            if not any(t in n for t in _TAGS):
                raise _bad(path, f"unknown entry {sorted(n)[:3]} in the saved structure")
            for tag in ("__tensor__", "__ndarray__"):
                if isinstance(n.get(tag), int):
                    refs.add(n[tag])
            stack.extend(n.values())
    return refs


def _load_blob(src, path, k, st, offset_base):
    dtype = _DTYPES[st["dtype"]]
    if src is None:  # directory form: one file per blob
        fn = st.get("file")
        if not isinstance(fn, str) or os.path.basename(fn) != fn or not fn:
            raise _bad(path, f"blob {k} has no valid file name")
        full = os.path.join(path, fn)
        if not os.path.isfile(full):
            raise _bad(path, f"tensor data file '{fn}' is missing")
        size = os.path.getsize(full)
        if size != st["nbytes"]:
            raise _bad(path, f"tensor data file '{fn}' has {size} bytes, expected {st['nbytes']}"
                       + (" (truncated)" if size < st["nbytes"] else ""))
        base = _C.empty(st["nbytes"] // dtype.itemsize, dtype=dtype)
        with open(full, "rb") as f:
            buf = _read_into(f, base, st["nbytes"], path, f"tensor data file '{fn}'")
        what = f"tensor data file '{fn}'"
    else:
        off = st.get("offset")
        if not isinstance(off, int) or off < 0:
            raise _bad(path, f"blob {k} has no valid offset")
        base = _C.empty(st["nbytes"] // dtype.itemsize, dtype=dtype)
        src.seek(offset_base + off)
        buf = _read_into(src, base, st["nbytes"], path, f"tensor data blob {k}")
        what = f"tensor data blob {k}"
    if zlib.crc32(buf) != st["crc32"]:
        raise _bad(path, f"{what} is corrupted (checksum mismatch)")
    return base


def _build_tensors(path, header, src, offset_base, map_location):
    bases = {}
    out = []
    param_cls = None
    for k, rec in enumerate(header["tensors"]):
        sid = rec["storage"]
        if sid not in bases:
            st = header["storages"][sid]
            bases[sid] = _move(_load_blob(src, path, sid, st, offset_base), st["device"],
                               map_location)
        t = _view(bases[sid], rec)
        if rec.get("parameter"):
            param_cls = param_cls or _parameter_class()
        if rec.get("parameter") and param_cls is not None:
            t = param_cls(t, bool(rec.get("requires_grad", True)))
        elif rec.get("requires_grad") and t.dtype.is_floating_point:
            t.requires_grad_(True)
        out.append(t)
    return out


def _decode(path, node, tensors):
    def dec(n):
        if n is None or isinstance(n, (bool, int, float, str)):
            return n
        if isinstance(n, list):
            return [dec(v) for v in n]
        if not isinstance(n, dict) or not n:
            raise _bad(path, "unexpected value in the saved structure")
        tag = next((t for t in _TAGS if t in n), None)
        if tag is None:
            raise _bad(path, f"unknown entry {sorted(n)[:3]} in the saved structure")
        v = n[tag]
        try:
            if tag == "__float__":
                if v not in ("nan", "inf", "-inf"):
                    raise ValueError(v)
                return float(v)
            if tag in ("__tensor__", "__ndarray__"):
                if not isinstance(v, int) or not 0 <= v < len(tensors):
                    raise ValueError(v)
                if tag == "__tensor__":
                    return tensors[v]
                t = tensors[v]
                return (t if t.dtype != _C.bfloat16 else t.cast(_C.float32)).cpu().numpy() \
                    .astype(np.dtype(n["dtype"]), copy=False).copy()
            if tag == "__dtype__":
                return _DTYPES[v]
            if tag == "__device__":
                return _C.device(v)
            if tag == "__bytes__":
                return bytes.fromhex(v)
            if tag == "__tuple__":
                return tuple(dec(x) for x in v)
            if tag == "__set__":
                items = [dec(x) for x in v]
                return frozenset(items) if n.get("frozen") else set(items)
            pairs = [(_key(dec(k)), dec(x)) for k, x in v]
            d = Counter(dict(pairs)) if tag == "__counter__" else \
                OrderedDict(pairs) if tag == "__odict__" else dict(pairs)
            if "metadata" in n and isinstance(d, OrderedDict):
                d._metadata = dec(n["metadata"])
            return d
        except (ValueError, TypeError, KeyError) as e:
            raise _bad(path, f"malformed {tag} entry in the saved structure ({e!r:.80})") from None

    return dec(node)


def _key(k):
    return tuple(_key(x) for x in k) if isinstance(k, list) else k


def _read_file_header(f, path):
    head = f.read(len(FILE_MAGIC) + 12)
    if len(head) < len(FILE_MAGIC) or head[:len(FILE_MAGIC)] != FILE_MAGIC:
        raise _bad(path, "bad magic (Cannot load file: not written by flow.save, torch.save "
                         "or OneFlow)")
    if len(head) < len(FILE_MAGIC) + 12:
        raise _bad(path, "the file is truncated inside its header")
    size, crc = struct.unpack("<QI", head[len(FILE_MAGIC):])
    here = f.tell()
    left = f.seek(0, os.SEEK_END) - here
    f.seek(here)
    if size > left:  # refused before reading (or allocating) anything the header asks for
        raise _bad(path, f"the header is truncated (it declares {size} bytes, the file has "
                   f"{left} left)")
    raw = f.read(size)
    if zlib.crc32(raw) != crc:
        raise _bad(path, "the header is corrupted (checksum mismatch)")
    try:
        header = json.loads(raw.decode())
    except (UnicodeDecodeError, ValueError) as e:
        raise _bad(path, f"the header is not valid JSON ({e})") from None
    _check_header(path, header)
    left -= size
    for k, st in enumerate(header["storages"]):
        off = st.get("offset")
        if isinstance(off, int) and off + st["nbytes"] > left:
            raise _bad(path, f"tensor data blob {k} is truncated (it ends at byte {off + st['nbytes']}"
                       f" of the data, the file holds {left})")
    return header, here + size


def _read_index(path):
    fn = os.path.join(path, INDEX_NAME)
    if not os.path.isfile(fn):
        raise _bad(path, f"the directory has no {INDEX_NAME}")
    try:
        with open(fn, "rb") as f:
            index = json.loads(f.read().decode())
    except (UnicodeDecodeError, ValueError) as e:
        raise _bad(path, f"{INDEX_NAME} is not valid JSON ({e})") from None
    if not isinstance(index, dict) or index.get("magic") != INDEX_MAGIC:
        raise _bad(path, f"bad magic in {INDEX_NAME}")
    body = index.get("body")
    try:
        crc = zlib.crc32(_dumps(body).encode())
    except (TypeError, ValueError):
        crc = None
    if crc is None or crc != index.get("body_crc32"):
        raise _bad(path, f"{INDEX_NAME} is corrupted (checksum mismatch)")
    _check_header(path, body)
    return body


def load(path, map_location=None, global_src_rank=None, *, weights_only=None, mmap=None,
         support_pytorch_format=True, **kwargs):
    """Loads an object saved by flow.save from a directory, a file or a binary stream; also
    files written by torch.save (zip and legacy) and by upstream OneFlow (pickle file,
    `pickled_data` directory, variable snapshot), their pickles read by a restricted unpickler
    that only rebuilds tensors, storages, dtypes and plain containers (docs/checkpoint_format.md).

    map_location: None (each tensor back to the device it was saved from), a device or device
    string (all tensors there), a dict {saved device: device}, or a callable (tensor, saved
    device) -> tensor (None: the default). `global_src_rank` (OneFlow's; also an int in second
    place): in a job (its process group initialised) the file is read on that rank and every tensor
    comes back as a broadcast global tensor over the job's ranks (docs/global_tensors.md); a
    process on its own loads it plainly.
    """
    if isinstance(map_location, int) and not isinstance(map_location, bool):
        map_location, global_src_rank = None, map_location  # OneFlow's load(path, global_src_rank)
    if global_src_rank is not None and _global_hooks.use("job_initialized")():  # read on one rank, global tensors on all
        return _global_hooks.use("load")(path, global_src_rank, load, map_location=map_location, weights_only=weights_only,
                                  mmap=mmap, support_pytorch_format=support_pytorch_format, **kwargs)
    if hasattr(path, "read"):
        f = path
        if not (hasattr(f, "seekable") and f.seekable()):
            f = io.BytesIO(f.read())  # zip files and size checks need to seek
        return _load_file(f, "<stream>", map_location, support_pytorch_format)
    if not isinstance(path, (str, bytes, os.PathLike)):
        # PyTorch's is an AttributeError (it calls .seek() on it); a TypeError naming the op here
        raise TypeError(f"load(): argument 'path' must be a path (str, bytes, os.PathLike) or a file-like object, "
                        f"not {type(path).__name__}")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"flow.load: no such file or directory: '{path}'")
    if os.path.isdir(path):
        from . import _oneflow_format as upstream
        if os.path.isfile(os.path.join(path, upstream.PICKLE_NAME)):  # OneFlow's external-data form
            return upstream.load_dir(path, map_location)
        from . import _snapshot_format as snapshot
        if snapshot.is_snapshot(path):  # OneFlow's variable snapshot: {name: tensor}
            return snapshot.read(path)
        header = _read_index(path)
        tensors = _build_tensors(path, header, None, 0, map_location)
        return _decode(path, header["object"], tensors)
    with open(path, "rb") as f:
        return _load_file(f, path, map_location, support_pytorch_format)


def _load_file(f, where, map_location, support_pytorch_format=True):
    """A single file or stream: ours (by its magic), torch.save's zip, or a pickle (torch.save's
    legacy format or upstream OneFlow's), the last two through the restricted unpickler."""
    start = f.tell()
    head = f.read(len(FILE_MAGIC))
    f.seek(start)
    from . import _torch_format as torch_format
    if not support_pytorch_format:  # upstream's flag: a torch.save file is then refused
        from ._restricted_pickle import LoadError
        refused = torch_format.is_zip(head)
        if not refused and head[:1] == b"\x80":
            refused = torch_format.starts_legacy(f)
        if refused:
            raise LoadError(f"flow.load: Cannot load file '{where}': a torch.save file, and "
                            "support_pytorch_format=False")
    if torch_format.is_zip(head):
        return torch_format.load_zip(f, where, map_location)
    if head[:1] == b"\x80":
        from . import _oneflow_format as upstream
        from ._restricted_pickle import unpickle
        first = unpickle(f, upstream.ALLOWED, None, where)
        if type(first) is int:  # torch's legacy format starts with its magic number
            return torch_format.load_legacy(f, where, map_location, first)
        return upstream.finish(first, where, map_location)
    header, base = _read_file_header(f, where)
    tensors = _build_tensors(where, header, f, base, map_location)
    return _decode(where, header["object"], tensors)
