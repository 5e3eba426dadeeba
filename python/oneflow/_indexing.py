"""Indexing: Tensor.__getitem__ / __setitem__ with PyTorch's semantics, and the functions that
read or write by index PyTorch has beyond OneFlow's spec.

Basic indices (ints, slices, None, Ellipsis) become views through flow._C._select/_slice; integer
tensors, lists and bool masks become advanced indices handled by flow._C._index/_index_put. As in
PyTorch (unlike NumPy), integers are applied as views first, so they don't count as advanced
indices when placing the result dims.

Composed of table ops: unravel_index, slice_scatter / select_scatter / diagonal_scatter /
as_strided_scatter, nonzero_static, put_ / put, index_reduce(_), fill_diagonal_ (tested against
PyTorch in tests/test_torch_names.py and tests/test_compat_native.py).
"""
import math
import numbers
import operator
import warnings

import numpy as np

import oneflow as flow  # the assembled namespace, looked up at call time

from . import _oneflow_internal as _C
from ._export import export, export_value, ref
from ._argcheck import check_tensor
from ._math import _as_tensor


class SliceStepError(ValueError, RuntimeError):
    """A slice step that is zero or negative. PyTorch raises ValueError, upstream OneFlow
    RuntimeError: one class that is both, so that code catching either works."""


class SliceBoundError(TypeError, RuntimeError):
    """A slice bound that is no integer (`t[0.0:2.0]`): PyTorch's TypeError, upstream OneFlow's
    RuntimeError (see SliceStepError)."""


class ZeroDimIndexError(IndexError, RuntimeError):
    """An index into a 0-dim tensor: PyTorch's IndexError, upstream OneFlow's RuntimeError (see
    SliceStepError)."""


def _slice_bound(v, default):
    if v is None:
        return default
    try:
        return operator.index(v)
    except TypeError:
        raise SliceBoundError("slice indices must be integers or None or have an __index__ method") from None


def _to_index_tensor(obj):
    if isinstance(obj, _C.Tensor):
        return obj
    arr = np.asarray(obj)
    if arr.dtype == np.bool_:
        return _C.from_numpy(np.require(arr, requirements="C")).clone()
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        raise IndexError(
            "tensors used as indices must be long, int, byte or bool tensors")
    return _C.from_numpy(np.require(arr.astype(np.int64), requirements="C"))


def _sequence_as_tuple(idx):
    """PyTorch's (and NumPy's former) rule: a list of fewer than 32 items that holds a slice,
    None, Ellipsis, a tensor or a sequence indexes as the tuple of its items: x[[rows, cols]] is
    x[rows, cols]; a list of plain integers stays one advanced index."""
    if not isinstance(idx, list) or len(idx) >= 32:
        return False
    return any(i is None or i is Ellipsis or isinstance(i, (slice, list, tuple, np.ndarray, _C.Tensor))
               for i in idx)


def _expand_index(self, idx):
    if _sequence_as_tuple(idx):
        idx = tuple(idx)
    elif not isinstance(idx, tuple):
        idx = (idx,)
    items = []
    for i in idx:
        if isinstance(i, _C.Tensor) and i.dtype == _C.uint8:
            # A uint8 index is a mask, as PyTorch (which warns the same) and upstream OneFlow.
            warnings.warn("indexing with dtype oneflow.uint8 is now deprecated, please use a dtype oneflow.bool "
                          "instead.", UserWarning, stacklevel=3)
            i = _C.ne(i, 0)
        # A tuple inside the index tuple is a sequence of indices, as a list (PyTorch, NumPy).
        if isinstance(i, (list, tuple, np.ndarray)) or (
                isinstance(i, _C.Tensor) and (i.ndim > 0 or i.dtype == _C.bool)):
            items.append(_to_index_tensor(i))
        elif isinstance(i, _C.Tensor):  # 0-d integer tensor: a plain int
            if i.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            items.append(int(i.item()))
        else:
            items.append(i)
    consumed = 0
    for i in items:
        if i is None or i is Ellipsis or isinstance(i, bool):
            continue
        consumed += i.ndim if isinstance(i, _C.Tensor) and i.dtype == _C.bool else 1
    # Note [Upstream's words] (src/autograd/meta.cpp): upstream's text in brackets.
    if consumed > self.ndim == 0:
        raise ZeroDimIndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                                "in C++ to convert a 0-dim tensor to a number [OneFlow: select() cannot be applied to "
                                "a 0-dim tensor.]")
    if consumed > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim} (got {consumed}) [OneFlow: Too many "
                         f"indices for tensor of dimension {self.ndim}]")
    out = []
    seen_ellipsis = False
    for i in items:
        if i is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            out.extend([slice(None)] * (self.ndim - consumed))
        else:
            out.append(i)
    return out


def _apply_basic(self, idx):
    """Returns (view, advanced) where advanced[d] is an index tensor or None for dim d of view."""
    view = self
    dim = 0
    adv = []
    has_adv = False
    items, bool_front = _merge_bools(_expand_index(self, idx))
    bool_dim = None
    for i in items:
        if isinstance(i, bool):
            bool_dim = dim
        if i is None:
            view = _C.unsqueeze(view, dim)
            adv.append(None)
            dim += 1
        elif isinstance(i, bool):
            view = _C.unsqueeze(view, dim)
            if not i:
                view = _C._slice(view, dim, 0, 0, 1)
            adv.append(None)
            dim += 1
        elif isinstance(i, int) or hasattr(i, "__index__") and not isinstance(i, (slice, _C.Tensor)):
            view = _C._select(view, dim, int(i))
        elif isinstance(i, slice):
            step = _slice_bound(i.step, 1)
            if step <= 0:
                raise SliceStepError("slice step cannot be zero" if step == 0 else
                                     "step must be greater than zero [OneFlow: Step must be greater than zero]")
            start = _slice_bound(i.start, 0)
            stop = _slice_bound(i.stop, 1 << 62)
            view = _C._slice(view, dim, start, stop, step)
            adv.append(None)
            dim += 1
        elif isinstance(i, _C.Tensor):
            if i.dtype == _C.bool:
                if i.ndim == 0:
                    # As PyTorch: a 0-d mask indexes a new dim of size 1 (kept when True,
                    # emptied when False), an advanced index like any other mask.
                    view = _C.unsqueeze(view, dim)
                    i = _C.reshape(i, [1])
                for d in range(i.ndim):
                    if i.shape[d] != view.shape[dim + d]:
                        raise IndexError(
                            f"The shape of the mask {list(i.shape)} at index {d} does not match "
                            f"the shape of the indexed tensor {list(view.shape)} at index {dim + d}")
                nz = _C.nonzero(i)
                for d in range(i.ndim):
                    adv.append(_C._select(nz, 1, d))
                dim += i.ndim
            else:
                adv.append(i)
                dim += 1
            has_adv = True
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(i).__name__})")
    if bool_front and bool_dim:
        view = _C.movedim(view, bool_dim, 0)
    return view, (adv if has_adv else None)


def _merge_bools(items):
    """Several Python bools in one index are advanced indices that combine (PyTorch's and NumPy's
    rule): one new dim, of size 1 when all are True and 0 otherwise, where the first one stands
    when they are adjacent and in front otherwise. Returns (items with the bools merged into the
    first one, whether the dim goes in front). With index tensors among them the bools stay as
    they are (each its own dim)."""
    at = [k for k, i in enumerate(items) if isinstance(i, bool)]
    if len(at) < 2 or any(isinstance(i, _C.Tensor) for i in items):
        return items, False
    merged = all(items[k] for k in at)
    drop = set(at[1:])
    out = [merged if k == at[0] else i for k, i in enumerate(items) if k not in drop]
    return out, at != list(range(at[0], at[-1] + 1))


def getitem(self, idx):
    view, adv = _apply_basic(self, idx)
    if adv is None:
        return view
    return _C._index(view, adv)


def setitem(self, idx, value):
    view, adv = _apply_basic(self, idx)
    if not isinstance(value, (_C.Tensor, int, float, bool)):
        value = _C.from_numpy(np.require(np.asarray(value), requirements="C"))
    if isinstance(value, _C.Tensor) and value.ndim and value.shape[0] == 1:
        # As PyTorch (and upstream): the value's leading size-1 dims are dropped before it
        # broadcasts, so that x[0, 0] = flow.ones(1) writes one element.
        lead = next((k for k, n in enumerate(value.shape) if n != 1), value.ndim)
        value = _C.reshape(value, list(value.shape[lead:]))
    if adv is None:
        view.copy_(value)
    else:
        _C._index_put(view, adv, value)


@export("flow.unravel_index")
def unravel_index(indices, shape):
    """The coordinates in `shape` of flat indices: a tuple of tensors shaped like `indices`."""
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    idx = _as_tensor(indices)
    if idx.dtype.is_floating_point or idx.dtype == flow.bool:
        raise TypeError(f"unravel_index(): expected 'indices' to be an integer tensor, but got {idx.dtype}")
    if any(s < 0 for s in shape):
        raise ValueError("unravel_index(): 'shape' cannot have negative values")
    numel = math.prod(shape)
    if idx.numel() and (int(idx.min()) < -numel or int(idx.max()) >= numel):
        raise ValueError(f"unravel_index(): 'indices' must be in the range [-{numel}, {numel - 1}] for shape {tuple(shape)}")
    idx = flow.where(idx < 0, idx + numel, idx).to(flow.int64)
    out = []
    for s in reversed(shape):
        out.append(idx % s)
        idx = flow.div(idx, s, rounding_mode="floor")
    return tuple(reversed(out))


@export("flow.slice_scatter", "Tensor.slice_scatter")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of input with src written into input[..., start:end:step, ...] along dim."""
    check_tensor(input, "slice_scatter", "input", 1)
    check_tensor(src, "slice_scatter", "src", 2)
    if input.dim() == 0:  # as PyTorch (dim % 0 was a ZeroDivisionError)
        raise IndexError("slice_scatter(): slice() cannot be applied to a 0-dim tensor.")
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"slice_scatter(): argument 'dim' (position 3) must be int, not {type(dim).__name__}")
    n = input.dim()
    if not -n <= dim < n:  # (dim % n took any dim: 2**62 was a valid one)
        raise IndexError(f"slice_scatter(): Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    out = input.clone()
    index = [slice(None)] * n
    index[dim % n] = slice(start, end, step)
    _check_scatter_src("slice_scatter", out[tuple(index)], src)
    out[tuple(index)] = src
    return out


def _check_scatter_src(fn, view, src):
    """The *_scatter functions write src into a view of their input: its shape exactly, as
    PyTorch requires (the assignment would broadcast a smaller src)."""
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"{fn}(): expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")


@export("flow.select_scatter", "Tensor.select_scatter")
def select_scatter(input, src, dim, index):
    """A copy of input with src written into input.select(dim, index)."""
    check_tensor(input, "select_scatter", "input", 1)
    check_tensor(src, "select_scatter", "src", 2)
    out = input.clone()
    view = out.select(dim, index)
    _check_scatter_src("select_scatter", view, src)
    view.copy_(src)
    return out


@export("flow.diagonal_scatter", "Tensor.diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input with src written into its diagonal(offset, dim1, dim2)."""
    check_tensor(input, "diagonal_scatter", "input", 1)
    check_tensor(src, "diagonal_scatter", "src", 2)
    out = input.clone()
    view = out.diagonal(offset, dim1, dim2)
    _check_scatter_src("diagonal_scatter", view, src)
    view.copy_(src)
    return out


@export("flow.nonzero_static")
def nonzero_static(input, *, size, fill_value=-1):
    """nonzero(input) as a (size, input.dim()) tensor: truncated, or padded with fill_value."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    nz = flow.nonzero(input)
    if nz.shape[0] >= size:
        return nz[:size]
    pad = flow.full((size - nz.shape[0], nz.shape[1]), fill_value, dtype=nz.dtype, device=nz.device)
    return flow.cat([nz, pad])


@export("flow.as_strided_scatter")
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input whose elements at the strided view (size, stride, storage_offset) are
    src's."""
    out = input.clone()
    view = out.as_strided(size, stride, storage_offset or 0)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"as_strided_scatter: expected src to have a size equal to the slice of self. src "
                           f"size = {list(src.shape)}, slice size = {list(view.shape)}")
    view.copy_(src)
    return out


export_value(ref("Tensor.put"), "flow.put")
export_value(lambda self, *, size, fill_value=-1: nonzero_static(self, size=size,
                                                                           fill_value=fill_value), "Tensor.nonzero_static")
export_value(lambda self, src, size, stride, storage_offset=None: as_strided_scatter(
    self, src, size, stride, storage_offset), "Tensor.as_strided_scatter")


@export("Tensor.fill_diagonal_")
def _fill_diagonal_(self, fill_value, wrap=False):
    """Writes fill_value on the main diagonal in place (all sizes equal beyond 2-D; with wrap,
    a tall matrix's diagonal restarts every cols + 1 rows, as numpy's)."""
    # A number (PyTorch's Scalar): a list was written element-wise by the indexing below, a
    # complex value into a real tensor lost its imaginary part.
    if isinstance(fill_value, flow.Tensor) and fill_value.dim() == 0:
        fill_value = fill_value.item()
    if not isinstance(fill_value, numbers.Number):
        raise TypeError(f"fill_diagonal_(): argument 'fill_value' (position 1) must be Number, "
                        f"not {type(fill_value).__name__}")
    if isinstance(fill_value, complex) and not self.dtype.is_complex:
        raise RuntimeError(f"fill_diagonal_(): value cannot be converted to type {self.dtype} without overflow")
    if self.dim() < 2:
        raise RuntimeError("fill_diagonal_(): dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("fill_diagonal_(): all dimensions of input must be of equal length")
    if self.dim() == 2:
        rows, cols = self.shape
        k = min(rows, cols)
        r = list(range(k))
        c = list(range(k))
        if wrap and rows > cols + 1:
            start = cols + 1
            while start < rows:
                extra = list(range(start, min(rows, start + cols)))
                r += extra
                c += list(range(len(extra)))
                start += cols + 1
        idx = (flow.tensor(r, dtype=flow.int64, device=self.device), flow.tensor(c, dtype=flow.int64, device=self.device))
    else:
        i = flow.arange(self.shape[0], device=self.device)
        idx = (i,) * self.dim()
    self[idx] = fill_value
    return self


@export("Tensor.put_")
def _put_(self, index, source, accumulate=False):
    """Writes source into self read as a flat (row-major) tensor at index (added with
    accumulate, so repeated indices sum)."""
    check_tensor(self, "put_", "input", 1)
    check_tensor(index, "put_", "index", 2)
    check_tensor(source, "put_", "source", 3)
    if index.dtype != flow.int64:  # a float or bool index was cast to long (PyTorch refuses it)
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype}")
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = self.numel()
    idx = index.reshape(-1).long()
    if idx.numel() and (int(idx.min()) < -n or int(idx.max()) >= n):
        raise IndexError(f"put_(): index out of range for a tensor of {n} elements")
    idx = flow.where(idx < 0, idx + n, idx)
    flat = self.reshape(-1) if self.is_contiguous() else self.contiguous().reshape(-1)
    flat.index_put_((idx,), source.reshape(-1).to(self.dtype), accumulate)
    if not self.is_contiguous():
        self.copy_(flat.reshape(self.shape))
    return self


@export("Tensor.index_reduce_")
def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """self's slices along dim at index combined with source's by reduce ('prod', 'mean',
    'amax', 'amin'), through scatter_reduce_ with the index broadcast over source."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    d = dim % max(self.dim(), 1)
    if source.dim() and source.shape[d] != index.numel():
        raise IndexError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")
    shape = [1] * source.dim()
    if shape:
        shape[d] = -1
    full = index.reshape(shape).expand(tuple(source.shape)) if shape else index.reshape(())
    return self.scatter_reduce_(d, full.long(), source, reduce, include_self=include_self)


@export("Tensor.put")
def _put(self, index, source, accumulate=False):
    check_tensor(self, "put", "input", 1)
    check_tensor(index, "put", "index", 2)
    check_tensor(source, "put", "source", 3)
    return _put_(self.clone(), index, source, accumulate)


export_value(lambda self, dim, index, source, reduce, *, include_self=True: _index_reduce_(
    self.clone(), dim, index, source, reduce, include_self=include_self), "Tensor.index_reduce")
export_value(ref("Tensor.index_reduce"), "flow.index_reduce")
