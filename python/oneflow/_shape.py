"""Python glue of the shape ops: the argument juggling PyTorch and OneFlow do in Python
(varargs tensor lists, sections-or-indices, OneFlow's slice tuples, dtype strings) over the
table ops in src/ops/table/shape*.yaml, plus the tensor properties T/mT/H/mH, the memory formats
(clone / contiguous with memory_format=), the in-place layout methods (squeeze_, t_,
transpose_, as_strided_, resize_, resize_as_, set_), sum_to_size, adjoint, is_same_size,
split_with_sizes / unsafe_split / unsafe_chunk and the copying forms of the view ops
(permute_copy, narrow_copy, ...).
"""
import builtins
import math
import numbers
import operator

import oneflow as flow  # the assembled namespace, looked up at call time

from . import _lazy_state
from . import _oneflow_internal as _C
from ._export import export, export_value, ref
from ._argcheck import LEFT_OUT, check_int_list, check_tensor

Tensor = _C.Tensor


# ---- memory formats: the objects, clone(memory_format=), contiguous(memory_format=)


@export("flow.memory_format")
class memory_format:  # noqa: N801 - torch's name
    """The four formats below are its only instances: calling the class is a TypeError, as in
    PyTorch (it returned its argument's wrapper, `memory_format(x)` of a tensor was a format)."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'oneflow.memory_format' instances")

    @classmethod
    def _make(cls, name):
        self = object.__new__(cls)
        self._name = name
        return self

    def __repr__(self):
        return f"oneflow.{self._name}"

    def __reduce__(self):  # pickled / deep-copied as the module attribute of its name
        return self._name


_MemoryFormat = memory_format  # the class, under a name that the memory_format= arguments do not hide
contiguous_format = export_value(memory_format._make("contiguous_format"), "flow.contiguous_format")
preserve_format = export_value(memory_format._make("preserve_format"), "flow.preserve_format")
channels_last = export_value(memory_format._make("channels_last"), "flow.channels_last")
channels_last_3d = export_value(memory_format._make("channels_last_3d"), "flow.channels_last_3d")


@export("flow.clone", "Tensor.clone")
def clone(input, *, memory_format=preserve_format):
    """A copy of `input` (differentiable). contiguous_format gives C order; channels_last(_3d)
    gives the NHWC (NDHWC) strides of a 4-d (5-d) tensor."""
    if memory_format is preserve_format:
        return _C.clone(input)
    if memory_format is contiguous_format:
        t = _C.clone(input)
        return t if t.is_contiguous() else t.contiguous()
    if memory_format in (channels_last, channels_last_3d):
        nd = 4 if memory_format is channels_last else 5
        if input.ndim != nd:
            raise RuntimeError(f"required rank {nd} tensor to use {memory_format} format")
        perm = (0,) + tuple(range(2, nd)) + (1,)
        inv = (0, nd - 1) + tuple(range(1, nd - 1))
        return input.permute(*perm).contiguous().permute(*inv)
    raise TypeError(
        f"clone(): argument 'memory_format' must be oneflow.memory_format, not "
        f"{type(memory_format).__name__}"
    )


_table_contiguous = _C.contiguous


@export("Tensor.contiguous")
def contiguous(self, *, memory_format=None):
    """x.contiguous(memory_format=flow.contiguous_format | flow.channels_last | ...): x itself
    when its memory already has that layout, else a copy laid out so (channels_last: NHWC).
    memory_format is keyword-only, as PyTorch's (`x.contiguous(None)` was taken)."""
    fmt = contiguous_format if memory_format is None else memory_format
    if not isinstance(fmt, _MemoryFormat):
        raise TypeError(f"contiguous(): argument 'memory_format' must be oneflow.memory_format, not "
                        f"{builtins.type(fmt).__name__}")
    if fmt in (channels_last, channels_last_3d):
        nd = 4 if fmt is channels_last else 5
        if self.ndim != nd:
            raise RuntimeError(f"contiguous(): required rank {nd} tensor to use {fmt} format")
        perm = (0,) + tuple(range(2, nd)) + (1,)
        return self if _C.permute(self, perm).is_contiguous() else clone(self, memory_format=fmt)
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return _table_contiguous(self)


# ---- conversions


@export("flow.to")
def to(input, *args, **kwargs):
    """flow.to(x, dtype / device / other tensor, copy=False): Tensor.to as a function."""
    check_tensor(input, "to", "input", 1)
    return input.to(*args, **kwargs)


@export("flow.type_as", "Tensor.type_as")
def type_as(input, other):
    check_tensor(input, "type_as", "input", 1)
    check_tensor(other, "type_as", "other", 2)
    if other.is_global:
        # OneFlow's across kinds (docs/global_tensors.md): a global target lays the result out as
        # it (a local input is this process's component), a local one gives the component
        x = input if input.dtype == other.dtype else input.to(other.dtype)
        return x.to_global(other.placement, other.sbp)
    if input.is_global:
        return input.to_local().to(device=other.device, dtype=other.dtype)
    return input if input.dtype == other.dtype else _C.cast(input, other.dtype)


# ---- varargs tensor lists


def _tensors(args, op):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    for a in args:
        if not isinstance(a, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {args.index(a)} in argument 0, but got "
                            f"{builtins.type(a).__name__}")
    return list(args)


@export("flow.meshgrid")
def meshgrid(*tensors, indexing=None):
    return tuple(_C.meshgrid(_tensors(tensors, "meshgrid"), indexing="ij" if indexing is None else indexing))


@export("flow.broadcast_tensors")
def broadcast_tensors(*tensors):
    return tuple(_C.broadcast_tensors(_tensors(tensors, "broadcast_tensors")))


@export("flow.broadcast_shapes")
def broadcast_shapes(*shapes):
    """The broadcast of several shapes (ints or sequences), without making tensors."""
    out = []
    for s in shapes:
        if isinstance(s, Tensor) or not isinstance(s, (builtins.int, tuple, list)):  # a tensor was read as its values
            raise RuntimeError(f"broadcast_shapes(): Input shapes should be of type ints, a tuple of ints, "
                               f"or a list of ints, got {type(s).__name__}")
        s = (s,) if isinstance(s, builtins.int) else tuple(s)
        for d in s:
            if not isinstance(d, builtins.int) or d < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {list(s)}")
        n = builtins.max(len(out), len(s))
        a, b = [1] * (n - len(out)) + out, [1] * (n - len(s)) + list(s)
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch "
                                   f"is between arg 0 and arg {shapes.index(s) if s in shapes else i}.")
        out = [y if x == 1 else x for x, y in zip(a, b)]
    from ._size import Size
    return Size(out)


def _atleast(fn, name):
    def f(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return fn(tensors[0])
        return tuple(fn(t) for t in _tensors(tensors, name))
    f.__name__ = name
    return f


atleast_1d = export_value(_atleast(_C.atleast_1d, "atleast_1d"), "flow.atleast_1d")
atleast_2d = export_value(_atleast(_C.atleast_2d, "atleast_2d"), "flow.atleast_2d")
atleast_3d = export_value(_atleast(_C.atleast_3d, "atleast_3d"), "flow.atleast_3d")


# ---- splitting into sections or at indices

# Longest int list the table ops take (a DimVector: kMaxDims in src/core/shape.h).
_MAX_OP_LIST = 16
_MAX_EMPTY_SECTIONS = 1 << 16


def _split_indices(n, indices_or_sections, op):
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dtype.is_floating_point or indices_or_sections.ndim > 1:
            raise RuntimeError(f"{op} expected tensor_indices_or_sections to be a zero-dimensional or "
                               "one-dimensional tensor of dtype long")
        indices_or_sections = (indices_or_sections.item() if indices_or_sections.ndim == 0
                               else indices_or_sections.tolist())
    if isinstance(indices_or_sections, builtins.int) and not isinstance(indices_or_sections, builtins.bool):
        sections = indices_or_sections
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        if sections > builtins.max(n, _MAX_EMPTY_SECTIONS):
            # Past the dimension's size the pieces are empty tensors, one per section: 2**62 of
            # them is a hang (PyTorch fails to allocate the list).
            raise RuntimeError(f"{op}(): {sections} sections of a dimension of size {n} would make "
                               f"{sections} tensors (at most max(size, {_MAX_EMPTY_SECTIONS}))")
        # The first n % sections pieces get one element more (PyTorch's tensor_split).
        size, extra = divmod(n, sections)
        idx, pos = [], 0
        for i in range(sections - 1):
            pos += size + (1 if i < extra else 0)
            idx.append(pos)
        return idx
    return [operator.index(i) for i in indices_or_sections]


def _split_at_traced(input, indices, d, n):
    """tensor_split at a traced tensor of indices (nn.Graph's build()): their values are not known
    while tracing, so each piece gathers the positions between two of them, Python slicing's
    bounds (masked_select is a dynamic-shape node: Note [Dynamic shapes], src/graph/dynamic_shapes.h).
    Eager's pieces are views of the same elements."""
    pos = flow.arange(n, device=input.device)
    bound = flow.where(indices < 0, indices + n, indices).clamp(0, n)
    cuts = [bound[j] for j in range(indices.shape[0])]
    pieces = []
    for lo, hi in zip([None] + cuts, cuts + [None]):
        keep = flow.ones_like(pos, dtype=flow.bool)
        if lo is not None:
            keep = keep & (pos >= lo)
        if hi is not None:
            keep = keep & (pos < hi)
        pieces.append(flow.index_select(input, d, flow.masked_select(pos, keep)))
    return tuple(pieces)


@export("flow.tensor_split", "Tensor.tensor_split")
def tensor_split(input, indices_or_sections, dim=0):
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = dim + input.ndim if -input.ndim <= dim < 0 else dim
    n = input.shape[d] if 0 <= d < input.ndim else 0
    if isinstance(indices_or_sections, Tensor) and indices_or_sections.ndim == 1 and 0 <= d < input.ndim and \
            indices_or_sections.dtype in (flow.int64, flow.int32, flow.int16, flow.int8, flow.uint8) and \
            indices_or_sections.is_meta and \
            _lazy_state.recording() is not None:
        return _split_at_traced(input, indices_or_sections, d, n)
    idx = _split_indices(n, indices_or_sections, "tensor_split")
    if len(idx) >= _MAX_OP_LIST:
        # The op's index list is a dims-sized list; longer ones are cut here, piece by piece, with
        # the op's (Python slicing) semantics: x[:i0], x[i0:i1], ..., x[ik:].
        bounds = [None] + idx + [None]
        pieces = []
        for s, e in zip(bounds[:-1], bounds[1:]):
            start, stop, _ = builtins.slice(s, e).indices(n)
            pieces.append(input.narrow(d, start, builtins.max(0, stop - start)))
        return tuple(pieces)
    return tuple(_C.tensor_split(input, idx, dim))


def _directional_split(name, dim, min_ndim):
    def f(input, indices_or_sections):
        if input.ndim < min_ndim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a "
                               f"tensor with {input.ndim} dimensions!")
        d = 0 if (name == "hsplit" and input.ndim == 1) else dim
        if isinstance(indices_or_sections, builtins.int) and not isinstance(indices_or_sections, builtins.bool):
            if indices_or_sections == 0 or input.shape[d] % indices_or_sections != 0:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {input.shape[d]} is not divisible by the split_size "
                                   f"{indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    f.__name__ = name
    return f


hsplit = export_value(_directional_split("hsplit", 1, 1), "flow.hsplit", "Tensor.hsplit")
vsplit = export_value(_directional_split("vsplit", 0, 2), "flow.vsplit", "Tensor.vsplit")
dsplit = export_value(_directional_split("dsplit", 2, 3), "flow.dsplit", "Tensor.dsplit")


@export("flow.repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """repeat_interleave(input, repeats, dim) and the one-argument form repeat_interleave(repeats),
    which repeats each index i repeats[i] times."""
    check_tensor(input, "repeat_interleave", "input", 1)
    if repeats is None:
        counts = input
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return _C.repeat_interleave(_C.arange(counts.shape[0], dtype=counts.dtype, device=counts.device), counts, 0,
                                    output_size=output_size)
    return _C.repeat_interleave(input, repeats, dim, output_size=output_size)


# ---- OneFlow's slice ops


def _slice_args(x, slice_tup_list, op):
    """(start, stop, step) lists for every dim from OneFlow's slice_tup_list (None = default,
    missing trailing dims = whole dim), normalised as upstream's `parse_slice_tuple_list` to what
    _C.slice takes (Note [Raw slice lists], src/ops/shape_compose_ops.cpp): 0 <= start <= stop,
    step > 0. A negative step selects the same elements as its positive form read backwards: the
    dims to flip afterwards are the fourth list."""
    if not isinstance(slice_tup_list, (list, tuple)) or len(slice_tup_list) > x.ndim:
        raise ValueError("slice_tup_list must be a list or tuple with length less than or equal to number of "
                         "dimensions of input tensor")
    start, stop, step, flip = [], [], [], []
    for k in range(x.ndim):
        tup = slice_tup_list[k] if k < len(slice_tup_list) else (None, None, None)
        if not isinstance(tup, (list, tuple)) or len(tup) != 3:
            raise ValueError("element of slice_tup_list must be a list or tuple with form (start, stop, step)")
        if not all(isinstance(v, builtins.int) or v is None for v in tup):
            raise ValueError("element of slice tuple must int or None")
        if tup[2] == 0:
            raise ValueError("slice step can't be 0")
        a, b, c = builtins.slice(*tup).indices(x.shape[k])  # Python's slice semantics
        n = len(builtins.range(a, b, c))
        if c < 0:  # the same elements with a positive step, flipped afterwards
            a, c = (a + (n - 1) * c, -c) if n else (0, 1)
            flip.append(k)
        start.append(a)
        stop.append(a + (n - 1) * c + 1 if n else a)
        step.append(c)
    return start, stop, step, flip


@export("flow.slice")
def slice(input, slice_tup_list):  # noqa: A001
    """flow.slice(x, [[start, stop, step], ...]): x[start:stop:step] per dim (a view for positive
    steps)."""
    start, stop, step, flip = _slice_args(input, slice_tup_list, "slice")
    out = _C.slice(input, start, stop, step)
    return _C.flip(out, flip) if flip else out


@export("flow.slice_update")
def slice_update(input, update, slice_tup_list):
    """flow.slice_update(x, update, [[start, stop, step], ...]): x[start:stop:step] = update, in
    place; returns x (OneFlow's semantics)."""
    if isinstance(update, Tensor) and update.dtype != input.dtype:
        update = _C.cast(update, input.dtype)
    start, stop, step, flip = _slice_args(input, slice_tup_list, "slice_update")
    if flip:
        raise ValueError("slice_update: step must be greater than 0")
    return _C.slice_update(input, update, start, stop, step)


# ---- properties


def _mT(self, name="mT"):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {self.ndim}-D "
                           "tensor.")
    return _C.transpose(self, -2, -1)


def _mH(self):
    # conj of a real tensor is the tensor itself (a view), so this is mT there.
    return _C.conj(_mT(self, "mH"))


def _H(self):
    if self.ndim not in (0, 2):  # (a 0-d tensor's H is its conjugate, as PyTorch's)
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
    return _C.conj(_C.transpose(self, 0, 1) if self.ndim == 2 else self)


export_value(property(_mT), "Tensor.mT")
export_value(property(_mH), "Tensor.mH")
export_value(property(_H), "Tensor.H")
export_value(property(lambda self: _C.permute(self, tuple(range(self.ndim - 1, -1, -1)))), "Tensor.T")
export_value(lambda self, dim, start, length: self.narrow(dim, start, length).clone(), "Tensor.narrow_copy")


@export("Tensor.sum_to_size")
def _sum_to_size(self, *size):
    """Sums the broadcast dims away so that the result has `size` (expandable to self's shape)."""
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = size[0]  # one sequence: a list, tuple or Size (a tensor was read as its values)
    size = tuple(check_int_list(list(size) if isinstance(size, tuple) else size, "sum_to_size", "size"))
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s == 1 or s == t for s, t in zip(size, shape[lead:]))
    if not ok:
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    out = self.sum(tuple(range(lead))) if lead else self
    dims = [k for k, (s, t) in enumerate(zip(size, shape[lead:])) if s == 1 and t != 1]
    return out.sum(dims, keepdim=True) if dims else out


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
        size = size[0]  # one sequence (a tensor was read as its values)
    size = tuple(check_int_list(list(size) if isinstance(size, tuple) else size, "resize_", "size"))
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
def _set_(self, source=LEFT_OUT, storage_offset=LEFT_OUT, size=None, stride=None):
    """The tensor shares source's storage and layout (or, with size / stride, that view of it);
    with no source it becomes an empty tensor."""
    _check_layout_change(self, "set_")
    # set_() and set_(source) are forms, set_(None) / set_(source, None) are not (PyTorch)
    for pos, (arg, v) in enumerate((("source", source), ("storage_offset", storage_offset)), 1):
        if v is None:
            raise TypeError(f"set_(): argument '{arg}' (position {pos}) must be {'Tensor' if pos == 1 else 'int'}, "
                            f"not NoneType")
    source = None if source is LEFT_OUT else source
    storage_offset = None if storage_offset is LEFT_OUT else storage_offset
    # PyTorch's forms: (), (source), (source, storage_offset, size[, stride]); a tensor source
    # keeps its dtype (an offset alone was ignored, another dtype adopted).
    if size is None and (storage_offset is not None or stride is not None):
        raise TypeError("set_(): storage_offset and stride need a size: set_(source, storage_offset, size[, stride])")
    if storage_offset is not None and (isinstance(storage_offset, bool) or not isinstance(storage_offset, int)):
        raise TypeError(f"set_(): argument 'storage_offset' must be int, not {type(storage_offset).__name__}")
    if isinstance(source, Tensor) and source.dtype != self.dtype:
        raise RuntimeError(f"set_(): Could not set tensor of type {source.dtype} to a tensor of type {self.dtype}")
    if source is None:
        self.data = flow.empty(0, dtype=self.dtype, device=self.device)
    elif size is None:
        self.data = source
    else:
        self.data = source.as_strided(size, stride if stride is not None else
                                      _contiguous_strides(size), storage_offset or 0)
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
def _resize_as_(self, other, *, memory_format=None):  # (keyword-only, as PyTorch: a third positional was dropped)
    check_tensor(self, "resize_as_", "input", 1)
    check_tensor(other, "resize_as_", "the_template", 2)
    return _resize_(self, tuple(other.shape))


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
export_value(lambda self, split_sizes, dim=0: self.split(
    check_int_list(split_sizes, "split_with_sizes", "split_sizes", 2), dim), "Tensor.split_with_sizes")


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


# The size the copying form of a view op may not leave out: OneFlow's Tensor methods take none
# (`x.expand()` is the 0-d shape, docs/oneflow_differences.md), PyTorch's `*_copy` functions
# have no such form (`flow.expand_copy(x)` returned x).
_COPY_REQUIRED = {"permute": "dims", "expand": "size", "view": "size"}


def _check_copy_args(name, args, kwargs):
    """PyTorch's schemas of the copying forms, stricter than the Tensor methods they call (upstream
    OneFlow has no `*_copy` functions): the size is one list (`permute_copy(x, 1, 0)`,
    `view_copy(x, -1)` are TypeErrors), squeeze's dim is an int or ints."""
    if required_list := _COPY_REQUIRED.get(name):
        if len(args) > 2:
            raise TypeError(f"{name}_copy() takes 2 positional arguments but {len(args)} were given")
        size = args[1] if len(args) == 2 else kwargs.get(required_list)
        if isinstance(size, numbers.Integral):
            raise TypeError(f"{name}_copy(): argument '{required_list}' (position 2) must be tuple of ints, "
                            f"not {type(size).__name__}")
    if name == "squeeze" and (args[1] if len(args) >= 2 else kwargs.get("dim", 0)) is None:
        raise TypeError("squeeze_copy(): argument 'dim' (position 2) must be int or tuple of ints, not NoneType")


def _copy_form(name):
    required = _COPY_REQUIRED.get(name)

    def copy_op(*args, **kwargs):
        has_input = len(args) >= 1 or "input" in kwargs  # no input at all: the method's own TypeError
        if required and has_input and len(args) < 2 and required not in kwargs and not (
                name == "view" and "dtype" in kwargs):
            raise TypeError(f"{name}_copy(): missing 1 required positional argument: '{required}'")
        _check_copy_args(name, args, kwargs)
        r = (getattr(Tensor, name, None) or getattr(flow, name))(*args, **kwargs)
        return type(r)(x.clone() for x in r) if isinstance(r, (tuple, list)) else r.clone()
    return copy_op


# view ops' copying forms (torch.permute_copy ...)
for _name in ("permute", "transpose", "t", "squeeze", "unsqueeze", "expand", "diagonal", "select", "unfold",
             "view", "narrow", "split", "unbind", "split_with_sizes", "as_strided", "view_as_real",
             "view_as_complex"):
    export_value(_copy_form(_name), "flow." + _name + "_copy", out=_name == "narrow")


@export("flow.slice_copy")
def slice_copy(input, dim=0, start=None, end=None, step=1):
    """PyTorch's slice_copy: input[..., start:end:step] along dim, copied (upstream OneFlow has
    none; its flow.slice takes a list of [start, stop, step] per dim instead)."""
    check_tensor(input, "slice_copy", "input", 1)
    for pos, (name, v, optional) in enumerate((("dim", dim, False), ("start", start, True), ("end", end, True),
                                               ("step", step, False)), 2):
        if not (v is None and optional) and (isinstance(v, bool) or not isinstance(v, numbers.Integral)):
            raise TypeError(f"slice_copy(): argument '{name}' (position {pos}) must be int, not {type(v).__name__}")
    nd = input.dim()
    if nd == 0:
        raise IndexError("slice_copy: slice() cannot be applied to a 0-dim tensor.")
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    if step <= 0:
        raise RuntimeError("slice_copy: slice step must be positive")
    return input[(builtins.slice(None),) * (dim % nd) + (builtins.slice(start, end, step),)].clone()
