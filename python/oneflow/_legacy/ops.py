"""The Blob ops of the job-function API (spec 000, INVENTORY C.3) and ``flow.math``.

Where the two generations of OneFlow give one name two signatures (``flow.gather(params, indices,
axis=)`` against ``flow.gather(input, dim, index)``), the legacy one is in place while a job
function runs (``legacy_names()``, decision 2 of shared/spec/README.md); the eager names come back
after. Names that exist only in the legacy API (``flow.constant``, ``flow.identity``,
``flow.reverse``...) are always there.
"""
import oneflow as flow
import builtins
import contextlib

import math

import numpy as np

from .. import _oneflow_internal as _C
from .._argcheck import check_tensor, check_tensors


def _axes(axis, ndim):
    if axis is None:
        return list(range(ndim))
    return [axis] if isinstance(axis, int) else list(axis)


# ---- ops whose legacy signature differs (swapped in by legacy_names) ----

def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """TF's gather: the slices of `params` along `axis` picked by `indices` (any shape); with
    `batch_dims` k, the first k dims of both are batch dims, each batch picking in its own slice."""
    axis = batch_dims if axis is None and batch_dims else (0 if axis is None else axis)
    if batch_dims:
        return _batch_gather(params, indices, axis, batch_dims)
    axis = axis % params.ndim
    idx = indices.long()
    picked = flow.index_select(params, axis, idx.reshape(-1))
    shape = tuple(params.shape[:axis]) + tuple(indices.shape) + tuple(params.shape[axis + 1:])
    return picked.reshape(shape)


def _batch_gather(params, indices, axis, k):
    """gather with k batch dims: out[b..., pre..., i..., post...] = params[b..., pre..., indices[b..., i...],
    post...] (TF's batch_dims, 0.x's gather / batch_gather), as one torch-style gather over the
    batches flattened."""
    k = k + indices.ndim if k < 0 else k
    axis = axis % params.ndim
    if not 0 <= k <= indices.ndim or axis < k:
        raise ValueError(f"gather: batch_dims {k} must be in [0, {indices.ndim}] and at most axis {axis}")
    if tuple(params.shape[:k]) != tuple(indices.shape[:k]):
        raise ValueError(f"gather: the batch dims of params {tuple(params.shape[:k])} and indices "
                         f"{tuple(indices.shape[:k])} differ")
    batch, pre, post = tuple(params.shape[:k]), tuple(params.shape[k:axis]), tuple(params.shape[axis + 1:])
    picks = tuple(indices.shape[k:])
    b, m, n = math.prod(batch), math.prod(picks), params.shape[axis]
    r = math.prod(pre) * math.prod(post)
    p = params.reshape((b,) + pre + (n,) + post).movedim(1 + len(pre), 1).reshape(b, n, r)
    idx = indices.long().reshape(b, m, 1).expand(b, m, r)
    out = _C.gather(p, 1, idx).reshape((b, m) + pre + post).movedim(1, 1 + len(pre))
    return out.reshape(batch + pre + picks + post)


def sort(input, axis=-1, direction="ASCENDING", name=None):  # noqa: A002
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"sort: direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    return _C.sort(input, axis, direction == "DESCENDING")[0]


def argsort(input, axis=-1, direction="ASCENDING", name=None):  # noqa: A002
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"argsort: direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    return _C.argsort(input, axis, direction == "DESCENDING")


def transpose(a, perm=None, conjugate=False, batch_axis_non_change=False, name=None):
    if conjugate:
        raise NotImplementedError("transpose: conjugate is not supported")
    perm = list(range(a.ndim))[::-1] if perm is None else list(perm)
    return a.permute(*perm)


def matmul(a, b, transpose_a=False, transpose_b=False, alpha=1.0, name=None):
    """(In a job with quantization-aware training: its inputs and output fake-quantized, qat.py.)"""
    from . import qat
    kind = "batch_matmul" if max(a.ndim, b.ndim) > 2 else "matmul"
    quantized = qat.active(kind)
    if quantized:
        name = qat.op_name(kind, name)
        (a, b), _ = qat.inputs(name, a, b)
    x = a.transpose(-1, -2) if transpose_a else a
    y = b.transpose(-1, -2) if transpose_b else b
    out = _C.matmul(x, y)
    out = out if alpha == 1.0 else out * alpha
    return qat.output(name, out) if quantized else out


def reshape(*args, name=None, **kwargs):
    """flow.reshape(x, shape, name=None) (x= / input= as keyword too). In a job with
    quantization-aware training the reshape of a fake-quantized blob counts as quantized (0.x's
    "transparent" op: the int8 op after it does not quantize it again, qat.py)."""
    from . import qat
    if "x" in kwargs:
        kwargs["input"] = kwargs.pop("x")
    out = _C.reshape(*args, **kwargs)
    qat.reshaped(args[0] if args else kwargs.get("input"), out)
    return out


def squeeze(input, axis=None, name=None):  # noqa: A002
    if axis is None:
        return _C.squeeze(input)
    for d in sorted((a % input.ndim for a in _axes(axis, input.ndim)), reverse=True):
        if input.shape[d] != 1:
            raise RuntimeError(f"squeeze: dimension {d} has size {input.shape[d]}, not 1")
        input = _C.squeeze(input, d)
    return input


def stack(inputs, axis=0, name=None):
    return _C.stack(list(inputs), axis)


def clamp(values, min_value=None, max_value=None, name=None):
    if min_value is None and max_value is None:
        raise ValueError("clip: min_value and max_value cannot both be None")
    return _C.clamp(values, min_value, max_value)


def expand(x=None, expand_size=None, name=None, input=None):  # noqa: A002 - the spec's example passes input=
    """Broadcasts x to expand_size; -1 keeps a dimension."""
    x = input if x is None else x
    if x is None or expand_size is None:
        raise TypeError("expand() needs x (or input) and expand_size")
    size = [x.shape[i - (len(expand_size) - x.ndim)] if s == -1 else s for i, s in enumerate(expand_size)]
    return x.expand(*size)


def where(condition, x=None, y=None, name=None):
    if x is None and y is None:  # the indices of the non-zero elements, int32 as 0.x's
        return _C.argwhere(condition).to(_C.int32)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    return _C.where(condition.bool(), x, y)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    if limit is None:
        start, limit = 0, start
    return flow.arange(start, limit, delta, dtype=dtype or flow.int64)


def concat(inputs=None, axis=0, max_dim_size=None, values=None, name=None):
    if values is not None:
        inputs = values
    return _C.cat(list(inputs), axis)


def one_hot(indices, depth, on_value=1, off_value=0, axis=-1, dtype=None, name=None):
    out = flow.nn.functional.one_hot(indices.long(), depth)
    if axis != -1 and axis != indices.ndim:
        out = out.movedim(-1, axis)
    dtype = dtype or indices.dtype  # the spec's examples print the int32 indices' type
    return out.to(dtype) * (on_value - off_value) + off_value if (on_value, off_value) != (1, 0) else out.to(dtype)


def pad(x, paddings, constant_value=0, name=None):
    """paddings: (before, after) per dimension."""
    if len(paddings) != x.ndim:
        raise ValueError(f"pad: {len(paddings)} paddings for {x.ndim} dimensions")
    flat = []
    for a, b in reversed([tuple(p) for p in paddings]):
        flat += [a, b]
    return flow.nn.functional.pad(x, flat, value=constant_value)


def slice(x, begin, size, name=None):  # noqa: A001
    """x[begin[i] : begin[i] + size[i]] per dimension; None / -1 sizes take the rest."""
    out = x
    for d, (b, n) in enumerate(zip(begin, size)):
        b = 0 if b is None else b
        stop = x.shape[d] if n is None or n == -1 else b + n
        out = out.narrow(d, b, stop - b)
    return out


def slice_v2(x, slice_tup_list, name=None):
    """(start, stop, step) per dimension (None for all of it)."""
    idx = tuple(builtins.slice(*t) if t is not None else builtins.slice(None) for t in slice_tup_list)
    return x[idx]


LEGACY = {"gather": gather, "sort": sort, "argsort": argsort, "transpose": transpose, "matmul": matmul, "reshape": reshape,
          "squeeze": squeeze, "stack": stack, "clamp": clamp, "clip": clamp, "expand": expand, "where": where,
          "range": range, "concat": concat, "one_hot": one_hot, "pad": pad, "slice": slice}


@contextlib.contextmanager
def legacy_names():
    """The legacy signatures in place on the oneflow module while a job function runs."""
    saved = {k: getattr(flow, k, None) for k in LEGACY}
    for k, v in LEGACY.items():
        setattr(flow, k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                delattr(flow, k)
            else:
                setattr(flow, k, v)


# ---- names only the legacy API has ----

def constant(value, dtype=None, shape=None, name=None):
    return flow.full(tuple(shape) if shape is not None else (1,), value, dtype=dtype or flow.float32)


def constant_like(like, value, dtype=None, name=None):
    return flow.full(tuple(like.shape), value, dtype=dtype or like.dtype)


def constant_scalar(value, dtype=None, name=None):
    return constant(value, dtype, (1,))


def identity(x, name=None):
    return check_tensor(x, "identity", "x").clone()


def identity_n(inputs, name=None):
    return [t.clone() for t in check_tensors(inputs, "identity_n", "inputs")]


def reverse(input, axis, name=None):  # noqa: A002
    return _C.flip(input, _axes(axis, input.ndim))


def reshape_like(x, like, name=None):
    check_tensor(x, "reshape_like", "x", 1)
    check_tensor(like, "reshape_like", "like", 2)
    return x.reshape(tuple(like.shape))


def broadcast_like(x, like, broadcast_axes=None, name=None):
    check_tensor(x, "broadcast_like", "x", 1)
    check_tensor(like, "broadcast_like", "like", 2)
    if broadcast_axes is not None:
        for a in sorted(a % like.ndim for a in broadcast_axes):
            if x.ndim < like.ndim:
                x = x.unsqueeze(a)
    return x.expand(*like.shape)


def clip_by_value(values, min_value=None, max_value=None, name=None):
    return clamp(values, min_value, max_value)


def dim_gather(input, dim, index, name=None):  # noqa: A002
    check_tensor(input, "dim_gather", "input", 1)
    check_tensor(index, "dim_gather", "index", 3)
    return _C.gather(input, dim, index.long())


def elem_cnt(inputs, dtype=None, name=None):
    check_tensor(inputs, "elem_cnt", "inputs", 1)
    return flow.tensor([inputs.numel()], dtype=dtype or flow.int32)


def smooth_l1_loss(prediction, label, beta=1.0, name=None):
    return flow.nn.functional.smooth_l1_loss(prediction, label, reduction="none", beta=beta)


def zero_pad2d(x, padding, name=None):
    return constant_pad2d(x, padding, 0)


def constant_pad2d(x, padding, constant_value=0, name=None):
    p = [padding] * 4 if isinstance(padding, int) else list(padding)
    return flow.nn.functional.pad(x, p, value=constant_value)


def reflection_pad2d(x, padding, name=None):
    p = [padding] * 4 if isinstance(padding, int) else list(padding)
    return flow.nn.functional.pad(x, p, mode="reflect")


def replication_pad2d(x, padding, name=None):
    p = [padding] * 4 if isinstance(padding, int) else list(padding)
    return flow.nn.functional.pad(x, p, mode="replicate")


def assign(ref, value, dtype=None, name=None):
    """ref[...] = value (a variable's new value; in a job, on every call)."""
    ref.copy_(value)
    return ref


def count_not_finite(x, name=None):
    """The number of NaN / inf elements (int64)."""
    return (~_C.isfinite(x)).sum()


def multi_count_not_finite(x=None, name=None):
    if not isinstance(x, (list, tuple)) or not x:
        raise TypeError(f"multi_count_not_finite(): expected a non-empty list or tuple of Tensors, got "
                        f"{type(x).__name__}")
    out = count_not_finite(x[0])
    for t in x[1:]:
        out = out + count_not_finite(t)
    return out


def amp_white_identity(x, name=None):
    """The identity (a marker of OneFlow's mixed-precision pass)."""
    return x


def dynamic_reshape(x, shape, name=None):
    return x.reshape(list(shape))


def cast_to_static_shape(x, name=None):
    """The identity: shapes are always static here."""
    return x


def sync_dynamic_resize(inputs, size, name=None):
    """The first `size` rows of inputs (size: a one-element integer blob)."""
    check_tensor(inputs, "sync_dynamic_resize", "inputs", 1)
    check_tensor(size, "sync_dynamic_resize", "size", 2)
    return inputs[: int(size.reshape(-1)[0].item())]


def pad_grad(x, paddings, constant_value=0, name=None):
    """The gradient of pad: the interior of x without the paddings."""
    out = x
    for d, (a, b) in enumerate(tuple(p) for p in paddings):
        out = out.narrow(d, a, x.shape[d] - a - b)
    return out


def same_padding(x, padding="SAME_UPPER", data_format="NCHW", kernel_size=None, strides=None, dilation_rate=None,
                 name=None):
    """Pads x ("NCHW" / "NHWC") so that a convolution with these sizes keeps ceil(in / stride):
    padding "SAME_UPPER" puts an odd pixel after, "SAME_LOWER" before."""
    check_tensor(x, "same_padding", "x", 1)
    from .layers import _pads
    last = data_format in ("NHWC", "channels_last")
    n = x.ndim - 2
    if kernel_size is None:
        raise TypeError("same_padding() needs kernel_size")
    strides = strides or [1] * n
    dilation_rate = dilation_rate or [1] * n
    if last:
        x = x.movedim(-1, 1)
    pads = _pads(padding, tuple(x.shape[2:]), tuple(kernel_size), tuple(strides), tuple(dilation_rate), last,
                 "same_padding")
    flat = []
    for a, b in reversed(pads):
        flat += [a, b]
    out = flow.nn.functional.pad(x, flat) if n else x
    return out.movedim(1, -1) if last else out


def combined_margin_loss(x, label, m1=1, m2=0, m3=0, name=None):
    """InsightFace's combined margin (the table op, with its gradient): at each row's label,
    cos(theta) becomes cos(m1 * theta + m2) - m3 (x holds cosines)."""
    return _C.combined_margin_loss(x, label, float(m1), float(m2), float(m3))


def _ordinal_encode_function():
    from ..autograd import Function

    class OrdinalEncode(Function):
        """The hash table's work on the values (a Python step of a traced job: it reads them)."""

        @staticmethod
        def forward(ctx, table, size, x):
            if x.is_meta:  # tracing: only the output's shape and dtype
                return flow.empty_like(x)
            pairs = table.cpu().numpy().reshape(-1, 2)  # (a job placed on a GPU: device tensors)
            count = int(size.cpu().numpy().reshape(-1)[0])
            ids = {int(k): int(v) for k, v in pairs[:count]}
            vals = x.cpu().numpy()
            out = np.zeros_like(vals)
            for i, v in enumerate(vals.reshape(-1).tolist()):
                if v == 0:
                    continue
                if v not in ids:
                    if count >= len(pairs):
                        raise RuntimeError(f"categorical_ordinal_encode: the table holds {len(pairs)} values, "
                                           "more distinct values arrived")
                    ids[v] = count + 1
                    pairs[count] = (v, count + 1)
                    count += 1
                out.reshape(-1)[i] = ids[v]
            table.copy_(flow.tensor(pairs.reshape(-1), dtype=table.dtype, device=table.device))
            size.fill_(count)
            return flow.tensor(out, dtype=x.dtype, device=x.device)
    return OrdinalEncode


def categorical_ordinal_encode(table, size, input_tensor, hash_precomputed=True, name=None):
    """Each distinct non-zero value gets the next integer id (1, 2, ...) in order of appearance,
    kept in `table` (variable of 2 * capacity entries: value / id pairs) and `size` (the count)
    across calls; 0 encodes to 0."""
    if not hash_precomputed:
        raise NotImplementedError("categorical_ordinal_encode: only hash_precomputed=True (as OneFlow)")
    if table.numel() % 2 or size.numel() != 1:
        raise ValueError("categorical_ordinal_encode: table needs 2 * capacity entries and size one")
    return _ordinal_encode_function().apply(table, size, input_tensor)


ALWAYS = {n: globals()[n] for n in (
    "constant", "constant_like", "constant_scalar", "identity", "identity_n", "reverse", "reshape_like",
    "broadcast_like", "clip_by_value", "dim_gather", "elem_cnt", "slice_v2", "zero_pad2d",
    "constant_pad2d", "reflection_pad2d", "replication_pad2d", "assign", "count_not_finite",
    "multi_count_not_finite", "amp_white_identity", "dynamic_reshape", "cast_to_static_shape",
    "sync_dynamic_resize", "pad_grad", "same_padding", "combined_margin_loss", "categorical_ordinal_encode")}
ALWAYS["clip_by_scalar"] = clip_by_value
# the micro-batch ops (Note [Micro-batches]); repeat(input, repeat_num) is Tensor.repeat(sizes) outside jobs
from . import micro as _micro  # noqa: E402
ALWAYS.update(acc=_micro.acc, pack=_micro.pack, unpack=_micro.unpack)
LEGACY["repeat"] = _micro.repeat
LEGACY["smooth_l1_loss"] = smooth_l1_loss  # elementwise (current OneFlow's reduces)
# keyword forms of ones / zeros / ones_like / zeros_like / expand_dims / slice_update, int32 argwhere
from . import creation as _creation  # noqa: E402
LEGACY.update(_creation.LEGACY)
