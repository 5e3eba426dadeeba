"""Tensor methods PyTorch has outside OneFlow's spec, in Python: fill_diagonal_, sum_to_size,
the in-place layout methods (squeeze_, unsqueeze_, t_, transpose_, swapaxes_ / swapdims_,
as_strided_, resize_, resize_as_, set_), put_ / put, index_reduce(_), apply_ / map_, fix,
adjoint, is_same_size, new (the legacy constructor), layout, split_with_sizes, unsafe_split /
unsafe_chunk, new_empty_strided. Tested against PyTorch in tests/test_torch_names.py.
"""
import oneflow as flow
import math
import numbers

from . import _C
from ._oneflow_internal import Tensor
from ._compat import strided
from ._export import export, export_value, ref
from ._argcheck import check_tensor


@export("Tensor.fill_diagonal_")
def _fill_diagonal_(self, fill_value, wrap=False):
    """Writes fill_value on the main diagonal in place (all sizes equal beyond 2-D; with wrap,
    a tall matrix's diagonal restarts every cols + 1 rows, as numpy's)."""
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


@export("Tensor.sum_to_size")
def _sum_to_size(self, *size):
    """Sums the broadcast dims away so that the result has `size` (expandable to self's shape)."""
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = tuple(size[0])
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s == 1 or s == t for s, t in zip(size, shape[lead:]))
    if not ok:
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    out = self.sum(tuple(range(lead))) if lead else self
    dims = [k for k, (s, t) in enumerate(zip(size, shape[lead:])) if s == 1 and t != 1]
    return out.sum(dims, keepdim=True) if dims else out


# ---------------------------------------------------------------------------
# In-place view and resize methods: the tensor takes the new layout (storage shared, autograd
# identity kept, through the .data setter). Refused while the tensor requires grad and grad mode
# is on: autograd records no in-place layout change (use the out-of-place op).


def _check_layout_change(self, name):
    if self.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(f"{name}(): an in-place layout change of a tensor that requires grad is not supported; "
                           f"use the out-of-place op (or run it under no_grad)")


def _inplace_view(name, view):
    def method(self, *args, **kwargs):
        _check_layout_change(self, name)
        self.data = view(self, *args, **kwargs)
        return self

    method.__name__ = name
    method.__doc__ = f"In-place form of {name[:-1]}: this tensor becomes that view of its storage."
    return method


@export("Tensor.resize_")
def _resize_(self, *size, memory_format=None):
    """Gives the tensor `size` (contiguous); its first elements keep their values when the storage
    grows (new ones are uninitialised, as PyTorch)."""
    _check_layout_change(self, "resize_")
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = tuple(size[0])
    if any(s < 0 for s in size):
        raise RuntimeError(f"resize_(): Trying to create tensor with negative dimension: {list(size)}")
    numel = math.prod(size)
    if self.is_contiguous() and self.numel() >= numel:
        self.data = self.reshape(-1)[:numel].view(*size) if size else self.reshape(-1)[:1].view(())
        return self
    fresh = flow.empty(numel, dtype=self.dtype, device=self.device)
    keep = min(numel, self.numel())
    if keep:
        fresh[:keep] = self.reshape(-1)[:keep]
    self.data = fresh.view(*size) if size else fresh.view(())
    return self


@export("Tensor.set_")
def _set_(self, source=None, storage_offset=0, size=None, stride=None):
    """The tensor shares source's storage and layout (or, with size / stride, that view of it);
    with no source it becomes an empty tensor."""
    _check_layout_change(self, "set_")
    if source is None:
        self.data = flow.empty(0, dtype=self.dtype, device=self.device)
    elif size is None:
        self.data = source
    else:
        self.data = source.as_strided(size, stride if stride is not None else
                                      _contiguous_strides(size), storage_offset)
    return self


def _contiguous_strides(size):
    strides, acc = [], 1
    for s in reversed(list(size)):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


export_value(_inplace_view("squeeze_", lambda x, *a, **k: x.squeeze(*a, **k)), "Tensor.squeeze_")
export_value(_inplace_view("unsqueeze_", lambda x, dim: x.unsqueeze(dim)), "Tensor.unsqueeze_")
export_value(_inplace_view("t_", lambda x: x.t()), "Tensor.t_")
export_value(_inplace_view("transpose_", lambda x, d0, d1: x.transpose(d0, d1)), "Tensor.transpose_")
export_value(_inplace_view("swapaxes_", lambda x, d0, d1: x.transpose(d0, d1)), "Tensor.swapaxes_")
export_value(_inplace_view("swapdims_", lambda x, d0, d1: x.transpose(d0, d1)), "Tensor.swapdims_")
export_value(_inplace_view("as_strided_", lambda x, size, stride, storage_offset=None:
                              x.as_strided(size, stride, storage_offset)), "Tensor.as_strided_")
@export("Tensor.resize_as_")
def _resize_as_(self, other, memory_format=None):
    check_tensor(self, "resize_as_", "input", 1)
    check_tensor(other, "resize_as_", "the_template", 2)
    return _resize_(self, tuple(other.shape))


@export("Tensor.put_")
def _put_(self, index, source, accumulate=False):
    """Writes source into self read as a flat (row-major) tensor at index (added with
    accumulate, so repeated indices sum)."""
    check_tensor(self, "put_", "input", 1)
    check_tensor(index, "put_", "index", 2)
    check_tensor(source, "put_", "source", 3)
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


@export("Tensor.new")
def _legacy_new(self, *args, device=None):
    """Tensor.new (PyTorch's legacy constructor): same dtype and device; sizes give an
    uninitialised tensor, a sequence or array its data, a tensor shares it."""
    dev = device or self.device
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].to(dtype=self.dtype, device=dev) if args[0].dtype != self.dtype else args[0]
    if len(args) == 1 and not isinstance(args[0], (int, numbers.Integral)) and not isinstance(args[0], flow.Size):
        return flow.tensor(args[0], dtype=self.dtype, device=dev)
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], flow.Size) else args
    return flow.empty(*sizes, dtype=self.dtype, device=dev) if sizes else flow.empty(0, dtype=self.dtype, device=dev)


@export("Tensor.put")
def _put(self, index, source, accumulate=False):
    check_tensor(self, "put", "input", 1)
    check_tensor(index, "put", "index", 2)
    check_tensor(source, "put", "source", 3)
    return _put_(self.clone(), index, source, accumulate)
export_value(lambda self, dim, index, source, reduce, *, include_self=True: _index_reduce_(
    self.clone(), dim, index, source, reduce, include_self=include_self), "Tensor.index_reduce")
export_value(ref("Tensor.index_reduce"), "flow.index_reduce")
export_value(ref("Tensor.trunc"), "Tensor.fix")
export_value(ref("Tensor.trunc_"), "Tensor.fix_")
export_value(ref("flow.trunc"), "flow.fix")
@export("Tensor.adjoint")
def _adjoint(self):
    check_tensor(self, "adjoint", "input", 1)
    return self.transpose(-2, -1).conj()
export_value(ref("Tensor.adjoint"), "flow.adjoint")
@export("Tensor.is_same_size")
def _is_same_size(self, other):
    check_tensor(self, "is_same_size", "input", 1)
    check_tensor(other, "is_same_size", "other", 2)
    return tuple(self.shape) == tuple(other.shape)
export_value(ref("Tensor.is_same_size"), "flow.is_same_size")
export_value(property(lambda self: strided), "Tensor.layout")
export_value(lambda self, split_sizes, dim=0: self.split(list(split_sizes), dim), "Tensor.split_with_sizes")
# unsafe_chunk has no OneFlow form: PyTorch's chunk sizes (ceil(n / chunks), maybe fewer pieces)
export_value(ref("Tensor.split"), "Tensor.unsafe_split")
@export("Tensor.unsafe_chunk")
def _unsafe_chunk(self, chunks, dim=0):
    check_tensor(self, "unsafe_chunk", "input", 1)
    # an int, or a one-element integer tensor (as PyTorch's int arguments); never a bool
    if isinstance(chunks, bool) or not isinstance(chunks, (numbers.Integral, Tensor)) or (
            isinstance(chunks, Tensor) and (chunks.numel() != 1 or chunks.dtype.is_floating_point
                                            or chunks.dtype.is_complex or chunks.dtype == flow.bool)):
        raise TypeError(f"unsafe_chunk(): argument 'chunks' (position 2) must be int, not {type(chunks).__name__}")
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"unsafe_chunk(): chunk expects `chunks` to be greater than 0, got: {chunks}")
    return self.split(max(1, -(-self.shape[dim] // chunks)), dim)
export_value(ref("Tensor.split_with_sizes"), "Tensor.unsafe_split_with_sizes")
export_value(ref("Tensor.split_with_sizes"), "flow.split_with_sizes")
export_value(ref("Tensor.unsafe_split"), "flow.unsafe_split")
export_value(ref("Tensor.unsafe_chunk"), "flow.unsafe_chunk")
export_value(ref("Tensor.unsafe_split_with_sizes"), "flow.unsafe_split_with_sizes")
export_value(lambda self, size, stride, *, dtype=None, device=None, requires_grad=False: \
    flow.empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad), "Tensor.new_empty_strided")


