"""What the checkpoint readers and writers share (flow.load's _load, flow.save's _save, and the
torch / upstream OneFlow formats): the error for a bad file, reading a blob into a tensor, the
map_location move, a saved view over its blob, nn.Parameter's class. Below all four, so that the
formats need neither the reader nor the writer (no import circle between them)."""
import ctypes

import numpy as np

from ... import _oneflow_internal as _C


def _bad(path, what):
    from ._restricted_pickle import LoadError
    return LoadError(f"flow.load: '{path}' is not a valid oneflow checkpoint: {what}")


def _read_into(f, t, nbytes, path, what):
    """Reads nbytes from f straight into tensor t's memory (a fresh contiguous tensor)."""
    if nbytes == 0:
        return memoryview(b"")
    buf = memoryview((ctypes.c_char * nbytes).from_address(t.data_ptr())).cast("B")
    got = f.readinto(buf)
    if got != nbytes:
        raise _bad(path, f"{what} is truncated (expected {nbytes} bytes, found {got or 0})")
    return buf


def _move(base, location, map_location):
    """Applies map_location to a loaded (CPU) blob saved from `location`."""
    if map_location is None:
        target = location
    elif callable(map_location) and not isinstance(map_location, (str, _C.device)):
        res = map_location(base, location)
        if res is not None:
            return res
        target = location
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    else:
        target = map_location
    target = str(target)
    return base if target == "cpu" else base.to(target)


def _view(base, rec):
    shape, stride, off = rec["shape"], rec["stride"], rec["offset"]
    if 0 in shape:
        return _C.empty(tuple(shape), dtype=base.dtype, device=base.device)
    numel = int(np.prod(shape)) if shape else 1
    contiguous = all(stride[i] == int(np.prod(shape[i + 1:])) for i in range(len(shape))
                     if shape[i] != 1)
    if contiguous:
        return base[off:off + numel].view(tuple(shape))
    as_strided = getattr(_C, "as_strided", None)
    if as_strided is not None:
        return as_strided(base, tuple(shape), tuple(stride), off)
    if base.device.type == "cpu" and base.dtype != _C.bfloat16:
        # Without a strided-view op: a numpy view with these strides over the blob's memory,
        # wrapped back without a copy (it shares the memory; the array keeps the blob alive).
        arr = base.numpy()
        item = arr.itemsize
        view = np.lib.stride_tricks.as_strided(arr[off:], shape, [s * item for s in stride])
        return _C.from_numpy(view)
    # bfloat16 has no numpy type (and other devices no numpy view): the same values, a copy.
    arr = base.cast(_C.float32).cpu().numpy()
    view = np.lib.stride_tricks.as_strided(arr[off:], shape, [s * 4 for s in stride])
    out = _C.from_numpy(np.ascontiguousarray(view)).cast(base.dtype)
    return out if base.device.type == "cpu" else out.to(base.device)


def _parameter_class():
    from ... import nn

    return getattr(nn, "Parameter", None)
