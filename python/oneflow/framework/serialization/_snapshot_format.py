"""OneFlow's variable snapshots (the job-function API's checkpoints): a directory holding, for each
variable, a directory named after it with ``out`` (the values' raw little-endian bytes, C order)
and ``meta`` (its shape and data type in protobuf text format:
``shape { dim: 2 dim: 3 } data_type: kFloat``), and a ``snapshot_done`` file once complete.
``flow.train.CheckPoint().save / load``, the session's ``snapshot_mgr`` and ``flow.load`` of such a
directory read and write it, so checkpoints move between OneFlow and this implementation."""
import os
import re
import shutil

import numpy as np

META, DATA, DONE = "meta", "out", "snapshot_done"
# OneFlow's DataType enum (names as text format writes them; numbers as its .proto has them)
_DTYPES = {"kChar": (1, "int8"), "kFloat": (2, "float32"), "kDouble": (3, "float64"), "kInt8": (4, "int8"),
           "kInt32": (5, "int32"), "kInt64": (6, "int64"), "kUInt8": (7, "uint8"), "kFloat16": (9, "float16"),
           "kBFloat16": (11, "bfloat16"), "kBool": (12, "bool"), "kInt16": (17, "int16")}
_BY_NUMBER = {num: name for name, (num, _) in _DTYPES.items()}
_NAME_OF = {"float32": "kFloat", "float64": "kDouble", "int8": "kInt8", "int32": "kInt32", "int64": "kInt64",
            "uint8": "kUInt8", "float16": "kFloat16", "bfloat16": "kBFloat16", "bool": "kBool",
            "int16": "kInt16"}


def _dtype_name(dtype):
    return str(dtype).split(".")[-1]


def meta_text(shape, dtype):
    dims = "".join(f"  dim: {int(d)}\n" for d in shape)
    return f"shape {{\n{dims}}}\ndata_type: {_NAME_OF[_dtype_name(dtype)]}\n"


def parse_meta(text, where):
    """(shape, oneflow dtype) from a meta file's text."""
    import oneflow as flow
    m = re.search(r"shape\s*\{([^}]*)\}", text)
    t = re.search(r"data_type\s*:\s*(\w+)", text)
    if m is None or t is None:
        raise RuntimeError(f"{where}: not a OneFlow variable meta file (no shape / data_type)")
    shape = tuple(int(d) for d in re.findall(r"dim\s*:\s*(-?\d+)", m.group(1)))
    name = t.group(1)
    if name.isdigit():
        name = _BY_NUMBER.get(int(name), name)
    if name not in _DTYPES:
        raise RuntimeError(f"{where}: data_type {t.group(1)} is not supported")
    return shape, getattr(flow, _DTYPES[name][1])


def variable_dirs(path):
    """{variable name: its directory} under a snapshot directory (names may hold '/')."""
    out = {}
    for root, _, files in os.walk(path):
        if DATA in files and root != path:
            out[os.path.relpath(root, path).replace(os.sep, "/")] = root
    return out


def is_snapshot(path):
    return os.path.isdir(path) and not os.path.exists(os.path.join(path, "index.json")) and bool(
        os.path.exists(os.path.join(path, DONE)) or variable_dirs(path))


def read_variable(var_dir, shape=None, dtype=None, where=None):
    """A variable's values: its meta file decides shape and dtype, else the given ones."""
    import oneflow as flow
    where = where or var_dir
    meta = os.path.join(var_dir, META)
    if os.path.exists(meta):
        with open(meta) as f:
            shape, dtype = parse_meta(f.read(), meta)
    elif shape is None:
        raise RuntimeError(f"{where}: no meta file, and the variable's shape is not known")
    raw = np.fromfile(os.path.join(var_dir, DATA), dtype=np.uint8)
    n = int(np.prod(shape, dtype=np.int64))
    if raw.size != n * dtype.itemsize:
        raise RuntimeError(f"{where}: {raw.size} bytes of data for a {list(shape)} {dtype} variable "
                           f"({n * dtype.itemsize} expected)")
    if dtype == flow.bfloat16:  # (numpy has no bfloat16: the high halves of float32s)
        bits = raw.view("<u2").astype(np.uint32) << 16
        return flow.tensor(bits.view(np.float32).reshape(shape)).to(flow.bfloat16)
    return flow.tensor(raw.view(np.dtype(_dtype_name(dtype)).newbyteorder("<")).reshape(shape).copy())


def read(path):
    """{name: tensor} of every variable of the snapshot at `path` (or the one variable whose
    directory `path` is)."""
    if os.path.exists(os.path.join(path, DATA)):
        return read_variable(path)
    return {name: read_variable(d, where=f"{path}: variable {name}") for name, d in sorted(variable_dirs(path).items())}


def _bytes(t):
    import oneflow as flow
    t = t.detach().cpu().contiguous()
    if t.dtype == flow.bfloat16:
        return (t.float().numpy().view(np.uint32) >> 16).astype("<u2").tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def write(path, variables):
    """Writes {name: tensor} as a snapshot at `path` (replacing one there): built beside it and
    moved in place complete, so `path` never holds half a snapshot."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise FileExistsError(f"snapshot: {path} exists and is not a directory")
    tmp = path.rstrip("/\\") + ".saving"
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    for name, t in variables.items():
        d = os.path.join(tmp, *name.split("/"))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, DATA), "wb") as f:
            f.write(_bytes(t))
        with open(os.path.join(d, META), "w") as f:
            f.write(meta_text(t.shape, t.dtype))
    os.makedirs(tmp, exist_ok=True)
    open(os.path.join(tmp, DONE), "w").close()
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.replace(tmp, path)
