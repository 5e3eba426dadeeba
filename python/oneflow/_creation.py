"""Tensor creation that PyTorch has beyond the op table's factories, composed of table ops:
index grids (tril_indices / triu_indices), logspace, vander, range, cartesian_prod / block_diag /
combinations (tensors built from other tensors), construction from buffers and files
(frombuffer, from_file, asarray), empty_strided, scalar_tensor and the legacy Tensor.new /
new_empty_strided. Tested against PyTorch in tests/test_torch_names.py and
tests/test_compat_native.py.
"""
import builtins
import math
import numbers
import os
import warnings

import numpy as np

import oneflow as flow  # the assembled namespace, looked up at call time

from . import _global_hooks
from . import _oneflow_internal as _C
from ._oneflow_internal import Tensor
from ._export import export, export_value
from ._argcheck import check_int_list, check_tensor, check_tensors


def _triangle_indices(fn, row, col, offset, dtype, device):
    name = fn.__name__
    for pos, (arg, v) in enumerate((("row", row), ("col", col), ("offset", offset)), 1):
        # PyTorch's int parameters: an int or a 0-d integer tensor; not a bool, float or other tensor
        if isinstance(v, flow.Tensor) and v.dim() == 0 and not v.dtype.is_floating_point and \
                not v.is_complex() and v.dtype != flow.bool:
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be int, not {type(v).__name__}")
    row, col, offset = int(row), int(col), int(offset)
    if row < 0 or col < 0:
        raise RuntimeError(f"{fn.__name__}(): row and col must be non-negative, got row={row}, col={col}")
    r, c = fn(row, offset, col)
    return flow.tensor(np.stack([r, c]).astype(np.int64).reshape(2, -1), dtype=dtype, device=device)


@export("flow.tril_indices")
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """The (2, N) row / column indices of the lower triangle of a row x col matrix, row-major."""
    return _triangle_indices(np.tril_indices, row, col, offset, dtype or flow.int64, device)


@export("flow.triu_indices")
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """The (2, N) row / column indices of the upper triangle of a row x col matrix, row-major."""
    return _triangle_indices(np.triu_indices, row, col, offset, dtype or flow.int64, device)


@export("flow.logspace")
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, placement=None, sbp=None):
    """base ** linspace(start, end, steps), computed in float64 and cast to dtype (a global tensor
    with placement= and sbp=)."""
    complex_ends = isinstance(start, complex) or isinstance(end, complex)
    if dtype is None:  # complex end points: the default complex dtype (torch's rule)
        dtype = {flow.float64: flow.complex128}.get(flow.get_default_dtype(), flow.complex64) if complex_ends \
            else flow.get_default_dtype()
    if placement is not None or sbp is not None:
        from_logical = _global_hooks.use("from_logical")  # Note [Global hooks]
        if device is not None:
            raise TypeError("logspace(): give either device (a local tensor) or placement (a global one), not both")
        r = from_logical(logspace(start, end, steps, base, dtype=dtype, device=getattr(placement, "type", None)),
                         placement, sbp, "logspace")
        return r.requires_grad_(requires_grad)
    if complex_ends:
        if not dtype.is_complex:
            raise RuntimeError(f"logspace(): inferred dtype complex can't be safely cast to passed dtype {dtype}")
        exps = flow.linspace(complex(start), complex(end), steps, dtype=flow.complex128, device=device)
    else:
        exps = flow.linspace(float(start), float(end), steps, dtype=flow.float64, device=device)
    r = flow.pow(float(base), exps).to(dtype)
    r.requires_grad_(requires_grad)
    return r


@export("flow.cartesian_prod")
def cartesian_prod(*tensors):
    """Rows of every combination of the 1-D inputs' elements (itertools.product order)."""
    check_tensors(tensors, "cartesian_prod", "tensors", 1)
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"cartesian_prod(): expect a 1D vector, but got shape {tuple(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = flow.meshgrid(*tensors, indexing="ij")
    return flow.stack([g.reshape(-1) for g in grids], 1)


@export("flow.block_diag")
def block_diag(*tensors):
    """A block-diagonal matrix of the inputs (0-d: 1x1, 1-d: one row), in the promoted dtype."""
    check_tensors(tensors, "block_diag", "tensors", 1)
    mats = []
    for k, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {k} has {t.dim()} dimensions")
        mats.append(t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t)
    if not mats:
        return flow.empty(1, 0)
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = flow.promote_types(dt, m.dtype)
    total = builtins.sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        w = m.shape[1]
        rows.append(flow.nn.functional.pad(m.to(dt), (left, total - left - w)) if total else m.to(dt))
        left += w
    return flow.cat(rows, 0)


@export("flow.vander")
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D x: columns x^0 .. x^(N-1) (decreasing unless asked)."""
    check_tensor(x, "vander", "x", 1)
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = x.dtype if (x.dtype.is_floating_point or x.dtype.is_complex) else flow.int64
    xs = x.to(dt)
    if n == 0:
        return flow.empty(x.shape[0], 0, dtype=dt, device=x.device)
    cols = [flow.ones_like(xs)]
    for _ in range(1, n):
        cols.append(cols[-1] * xs)
    m = flow.stack(cols, 1)
    return m if increasing else m.flip(1)


@export("flow.combinations")
def combinations(input, r=2, with_replacement=False):
    """The r-length combinations of the 1-D input's elements, as rows (itertools' order)."""
    check_tensor(input, "combinations", "input", 1)
    import itertools
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return flow.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if not rows:
        return flow.empty(0, r, dtype=input.dtype, device=input.device)
    return input[flow.tensor(rows, dtype=flow.int64, device=input.device)]


@export("flow.range")
def range_(start, end, step=1, *, dtype=None, device=None, requires_grad=False, **kwargs):
    """Deprecated in PyTorch: the values start, start + step, ... up to end inclusive (in the
    default float dtype unless told)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("range: upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dtype = dtype or flow.get_default_dtype()
    t = flow.arange(n, dtype=flow.float64, device=device) * step + start
    return t.to(dtype).requires_grad_(requires_grad)


@export("flow.frombuffer")
def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the bytes of an object with the buffer protocol (sharing them)."""
    import numpy as np
    np_dtype = flow.empty(0, dtype=dtype).numpy().dtype
    arr = np.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset)
    t = flow.from_numpy(arr)
    return t.requires_grad_(requires_grad) if requires_grad else t


@export("flow.from_file")
def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """The first size elements of a binary file; with shared=True the tensor maps the file
    (writes reach it)."""
    if not isinstance(filename, (str, bytes, os.PathLike)):
        raise TypeError(f"from_file(): argument 'filename' (position 1) must be str, not {type(filename).__name__}")
    import numpy as np
    dtype = dtype or flow.get_default_dtype()
    np_dtype = flow.empty(0, dtype=dtype).numpy().dtype
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise TypeError(f"from_file(): argument 'size' (position 3) must be int, not {type(size).__name__}")
    if size < 0:
        raise RuntimeError(f"from_file: size must be non-negative, but got size={size}")
    # Note [from_file checks the file's size first]: a mapping longer than its file raises SIGBUS
    # on the first touch of a page past the end (np.memmap "r+" grows the file sparsely to fit:
    # a page the disk then has no room for raises it too), and np.fromfile allocates `size`
    # elements before it reads. The file's length bounds the read; a shared mapping grows the
    # file first, as PyTorch's does, with the new blocks reserved (posix_fallocate, after a
    # free-space check), so that a size no disk holds is a RuntimeError here, never a signal.
    name, need = os.fsdecode(filename), size * np_dtype.itemsize
    try:
        have = os.stat(filename).st_size
    except OSError as e:
        raise RuntimeError(f"from_file: unable to open file <{name}>: {e.strerror}") from None
    if shared and need > have:
        try:
            st = os.statvfs(filename)  # posix_fallocate may emulate by writing: bound it first
            if need - have > st.f_bavail * st.f_frsize:
                raise OSError(28, f"{need - have} more bytes than the disk's {st.f_bavail * st.f_frsize} free")
            fd = os.open(filename, os.O_RDWR)
            try:
                os.posix_fallocate(fd, 0, need)
            finally:
                os.close(fd)
        except (OSError, OverflowError) as e:
            why = e.strerror if isinstance(e, OSError) else str(e)
            raise RuntimeError(f"from_file: unable to map {need} bytes of file <{name}>: {why}") from None
    if not shared and have < need:
        raise RuntimeError(f"from_file: file <{name}> size <{have}> is smaller than the required size <{need}> "
                           f"({size} elements of {dtype})")
    if shared:
        arr = np.memmap(filename, dtype=np_dtype, mode="r+", shape=(size,)) if size else np.empty(0, np_dtype)
    else:
        arr = np.fromfile(filename, dtype=np_dtype, count=size)
    t = flow.from_numpy(arr)
    if device is not None:
        t = t.to(device)
    return t.requires_grad_(requires_grad) if requires_grad else t


@export("Tensor.new")
def _legacy_new(self, *args, device=None):
    """Tensor.new (PyTorch's legacy constructor): same dtype and device; sizes give an
    uninitialised tensor, a sequence or array its data, a tensor shares it."""
    dev = device or self.device
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].to(dtype=self.dtype, device=dev) if args[0].dtype != self.dtype else args[0]
    if len(args) == 1 and not isinstance(args[0], (int, numbers.Integral)) and not isinstance(args[0], flow.Size):
        from ._tensor import check_legacy_data
        return flow.tensor(check_legacy_data("new", args[0]), dtype=self.dtype, device=dev)
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], flow.Size) else args
    return flow.empty(*sizes, dtype=self.dtype, device=dev) if sizes else flow.empty(0, dtype=self.dtype, device=dev)


export_value(lambda self, size, stride, *, dtype=None, device=None, requires_grad=False: \
    flow.empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad), "Tensor.new_empty_strided")


@export("flow.asarray")
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """A tensor of obj: shares the memory of a tensor or array when dtype and device allow and
    copy is not True (as torch.asarray)."""
    if isinstance(obj, Tensor):
        t = obj
        if dtype is not None or device is not None:
            t = t.to(dtype=dtype or t.dtype, device=device or t.device)
        if copy:
            t = t.clone()
    else:
        t = flow.tensor(obj, dtype=dtype, device=device) if copy or copy is None and not hasattr(obj, "__array__") \
            else flow.as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t = t.detach().requires_grad_(True) if t is obj else t.requires_grad_(True)
    return t


@export("flow.empty_strided")
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given strides (a view of a buffer just large enough)."""
    size = check_int_list(size, "empty_strided", "size", 1)
    stride = check_int_list(stride, "empty_strided", "stride", 2)
    extent = 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if all(s > 0 for s in size) else 0
    base = flow.empty(extent, dtype=dtype, device=device)
    t = base.as_strided(tuple(size), tuple(stride))
    return t.requires_grad_(requires_grad) if requires_grad else t


def _scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, **kw):
    """A 0-d tensor of the number s (a tensor or a list was copied whole, as flow.tensor)."""
    if isinstance(s, Tensor) and s.dim() == 0:  # a 0-d tensor is a number to PyTorch's parser
        s = s.item()
    if not isinstance(s, numbers.Number):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not {type(s).__name__}")
    return flow.tensor(s, dtype=dtype or flow.get_default_dtype(), device=device, requires_grad=requires_grad)


export_value(_scalar_tensor, "flow.scalar_tensor")


# OneFlow's module-level flow.new_ones / new_zeros / new_empty / new_full(x, size, ...): x's dtype,
# device -- or, for a global x (or given placement / sbp), x's placement and layout -- as
# Tensor.new_* has them; size defaults to x's shape where OneFlow's does (new_ones / new_zeros).
def _new_like(what, factory, x, size, fill, dtype, device, placement, sbp, requires_grad):
    check_tensor(x, what, "input")
    if size is None:
        size = tuple(x.shape)
    elif isinstance(size, numbers.Integral):
        size = (int(size),)
    elif isinstance(size, (tuple, list, flow.Size)):
        size = tuple(size)
    else:
        raise TypeError(f"{what}(): size must be an int or a sequence of ints, got {type(size).__name__}")
    dtype = x.dtype if dtype is None else dtype
    args = (size,) if fill is None else (size, fill)
    if device is not None and (placement is not None or sbp is not None):
        raise ValueError(f"{what}(): give device (a local result) or placement / sbp (a global one), not both")
    if placement is None and sbp is None and device is None and not x.is_global:
        return factory(*args, dtype=dtype, device=x.device, requires_grad=requires_grad)
    if device is not None:
        return factory(*args, dtype=dtype, device=device, requires_grad=requires_grad)
    if not x.is_global and (placement is None or sbp is None):
        raise ValueError(f"{what}(): a local input needs both placement and sbp for a global result")
    placement = x.placement if placement is None else placement
    sbp = x.sbp if sbp is None else sbp
    return factory(*args, dtype=dtype, placement=placement, sbp=sbp, requires_grad=requires_grad)


@export("flow.new_ones")
def new_ones(x, size=None, dtype=None, device=None, placement=None, sbp=None, requires_grad=False):
    return _new_like("new_ones", flow.ones, x, size, None, dtype, device, placement, sbp, requires_grad)


@export("flow.new_zeros")
def new_zeros(x, size=None, dtype=None, device=None, placement=None, sbp=None, requires_grad=False):
    return _new_like("new_zeros", flow.zeros, x, size, None, dtype, device, placement, sbp, requires_grad)


# flow.new_empty and flow.empty_like carry upstream OneFlow's function names (`new_empty_op`,
# `empty_like_op`): its tests, and code written against it, tell these factories by `__name__`.
@export("flow.new_empty")
def new_empty_op(x, size, dtype=None, device=None, placement=None, sbp=None, requires_grad=False):
    return _new_like("new_empty", flow.empty, x, size, None, dtype, device, placement, sbp, requires_grad)


@export("flow.empty_like")
def empty_like_op(input, *args, **kwargs):
    """empty_like(input, *, dtype=None, device=None, placement=None, sbp=None, requires_grad=False)
    -> Tensor: the op table's empty_like (a global input: its placement and SBP)."""
    return _C.empty_like(input, *args, **kwargs)


@export("flow.new_full")
def new_full(x, size, fill_value, dtype=None, device=None, placement=None, sbp=None, requires_grad=False):
    return _new_like("new_full", flow.full, x, size, fill_value, dtype, device, placement, sbp, requires_grad)
