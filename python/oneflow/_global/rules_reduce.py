"""Max / min reductions over a split dim (amax, amin, any, all; max / min / argmax / argmin with
indices: Note [Partial max with indices] below; kthvalue / median / mode: `resplit`). For the
first: each rank reduces its slice -- a partial max (or min) of the result, OneFlow's
partial_max / partial_min layout, which upstream keeps internal (its public flow.sbp has split, broadcast and partial_sum only, and so does ours)
-- and one all-reduce (MAX / MIN) makes it broadcast. Only the result moves (one element per
output element), where the broadcast signature gathered the whole input on every rank.

The gradient of amax / amin goes to the elements equal to the result, shared evenly among the
ties of every rank (as PyTorch's): the tie counts are summed over the ranks.

The rule returns (targets, output sbp, length, pre, post, own local function) -- rules_nn's form
-- or None: the split is off the reduced dims (signatures' reduce_dims keeps it then), the input
is not split, or the op is traced by nn.Graph or read per mesh axis (the broadcast signature)."""
import numpy as np

from .. import _lazy_state, autograd, distributed as dist
from .._oneflow_internal import bool as _bool, full, int64
from ..sbp import broadcast as B
from .runtime import arg, group


def _dims(g, args, kwargs):
    dims = arg(args, kwargs, 1, ("dim", "axis"))
    nd = max(g.dim(), 1)
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(g.dim()))
    return sorted({d % nd for d in ([dims] if isinstance(dims, int) else dims)})


def _all_reduce(t, kind, ranks):
    op = dist.ReduceOp.MAX if kind == "max" else dist.ReduceOp.MIN
    if t.dtype.is_floating_point or t.dtype.is_complex:
        dist.all_reduce(t, op=op, group=group(ranks))
        return t
    wide = t.to(int64)  # (bool and narrow ints reduced as int64: every backend has it)
    dist.all_reduce(wide, op=op, group=group(ranks))
    return wide.to(t.dtype)


def _identity(like, shape, kind):
    """The result of reducing nothing: the identity of max (the lowest value) or min."""
    dt = like.dtype
    if dt == _bool:
        value = kind != "max"  # (any of nothing: False; all of nothing: True)
    elif dt.is_floating_point:
        value = float("-inf") if kind == "max" else float("inf")
    else:
        info = np.iinfo(str(dt).rsplit(".", 1)[-1])  # (an integer dtype's name is numpy's)
        value = int(info.min if kind == "max" else info.max)
    return full(shape, value, dtype=dt, device=like.device)


class _PartialExtreme(autograd.Function):
    """The local reduction made whole: forward all-reduces each rank's partial max / min; backward
    sends the gradient to this rank's elements equal to the result, over the global tie count."""

    @staticmethod
    def forward(ctx, x, local, dims, keep, kind, ranks, nan_ties):
        whole = _all_reduce(local.detach().contiguous().clone(), kind, ranks)
        ctx.dims, ctx.keep, ctx.ranks, ctx.nan_ties = dims, keep, ranks, nan_ties
        ctx.save_for_backward(x, whole)
        return whole

    @staticmethod
    def backward(ctx, grad):
        x, whole = ctx.saved_tensors
        expanded, g = whole, grad
        if not ctx.keep:
            for d in ctx.dims:
                expanded, g = expanded.unsqueeze(d), g.unsqueeze(d)
        mask = x == expanded
        if ctx.nan_ties:  # (max(x) / min(x): a NaN result's gradient shared by the NaNs, as PyTorch's)
            mask = mask.logical_or(x.isnan().logical_and(expanded.isnan()))
        mask = mask.to(x.dtype)
        count = mask.sum(ctx.dims, keepdim=True) if ctx.dims else mask
        count = count.contiguous().clone()
        dist.all_reduce(count, group=group(ctx.ranks))
        return g * mask / count, None, None, None, None, None, None


def extreme(kind):
    """The rule of a max (kind "max": amax, any) or min ("min": amin, all) reduction."""
    def rule(name, gs, args, kwargs):
        g = gs[0]
        s = g._sbp[0]
        if len(gs) != 1 or s._kind != "S" or not hasattr(g, "_local") or _lazy_state.recording() is not None:
            return None
        dims = _dims(g, args, kwargs)
        keep = bool(arg(args, kwargs, 2, "keepdim", False))
        if s._dim not in dims:
            return None
        ranks = g._placement._ranks

        def impl(*a, **k):
            from .. import _oneflow_internal as _C
            x = a[0] if a else k.get("input", k.get("x"))
            try:
                local = getattr(_C, name)(x, dims, keep)
            except RuntimeError:
                if x.shape[s._dim] != 0:
                    raise
                # an uneven split: this rank holds none of that dim, and the max / min of nothing
                # is an error: the identity instead (any / all of nothing are False / True already)
                shape = [1 if d in dims else n for d, n in enumerate(x.shape)] if keep else \
                    [n for d, n in enumerate(x.shape) if d not in dims]
                local = _identity(x, shape, kind)
            if x.requires_grad and x.is_floating_point():
                return _PartialExtreme.apply(x, local, dims, keep, kind, ranks, False)
            return _all_reduce(local.detach().contiguous().clone(), kind, ranks)
        return {}, B, None, None, None, impl
    return rule


# Note [Partial max with indices]: max / min along a dim with their indices, and argmax / argmin,
# over the split dim. Each rank reduces its slice (values, and indices made global by adding its
# slice's start) -- OneFlow's partial results -- and one all-gather of those (n times the output,
# never the input) lets every rank pick, per output element, the rank whose value wins: the local
# argmax / argmin over the gathered values, so NaN propagates; a tie goes to the lowest index among
# the ranks holding the winning value (the local op's first-occurrence rule, kept across ranks). The values keep
# their autograd link to this rank's slice: the (broadcast) gradient reaches the element of the rank
# that won and no other. Traced by nn.Graph, or on one mesh axis, the rule is `resplit`'s instead.

def _gathered(t, pl):
    """Every rank's t in placement order (the group's all-gather lists them in sorted-rank order)."""
    from .boxing import _members
    got = [t.new_empty(tuple(t.shape)) for _ in pl._ranks]
    dist.all_gather(got, t.detach().contiguous(), group=group(pl._ranks))
    out = [None] * len(got)
    for q, p in enumerate(_members(pl)):
        out[p] = got[q]
    return out


def _pick(values, indices, d, kind, pl):
    """(values, indices) along d of every rank's partial (values, global indices), kept dim d of
    size 1 each: the winning rank's (Note [Partial max with indices])."""
    from .._oneflow_internal import cat
    from .runtime import position
    vs, ixs = _gathered(values, pl), _gathered(indices, pl)
    me = position(pl)
    if me >= 0:
        vs[me] = values  # (this rank's own: its gradient reaches its slice)
    v, ix = cat(vs, d), cat(ixs, d)
    best = v.gather(d, v.argmax(d, keepdim=True) if kind == "max" else v.argmin(d, keepdim=True))
    # the lowest index among the ranks that hold the winning value (NaN: any NaN): the first
    # occurrence, also where a split off dim 0 interleaves the ranks in a flattened order
    tie = (v == best).logical_or((v != v).logical_and(best != best))
    return best, ix.masked_fill(tie.logical_not(), np.iinfo(np.int64).max).amin(d, keepdim=True)


def _partial(x, d, lo, kind):
    """This rank's (values, global indices) along d, kept dim (an empty slice: the identity, which
    never wins over a rank that holds elements, put before it so the result stays x's function)."""
    from .._oneflow_internal import cat
    if x.shape[d] == 0:
        x = cat([_identity(x, [1 if k == d else n for k, n in enumerate(x.shape)], kind), x], d)
    r = x.max(d, True) if kind == "max" else x.min(d, True)
    return r[0], r[1] + lo


def _named(kind, values, indices):
    """(values, indices) as the local op's namedtuple (oneflow.return_types.max / .min)."""
    from .._oneflow_internal import return_types, zeros
    cls = getattr(return_types, kind, None)
    if cls is None:  # (made at the op's first local call)
        cls = type(getattr(zeros((1,)), kind)(0))
    return cls(values, indices)


def indexed(kind):
    """The rule of max / min (kind "max" / "min") and argmax / argmin over the split dim (Note
    [Partial max with indices]); max(x) / min(x) of every element as amax's partial max. A split
    off the reduced dim is signatures' reduce_dims (tried first)."""
    def rule(name, gs, args, kwargs):
        g = gs[0]
        s = g._sbp[0]
        if len(gs) != 1 or s._kind != "S" or not hasattr(g, "_local") or _lazy_state.recording() is not None:
            return None
        dim = arg(args, kwargs, 1, "dim")
        if dim is not None and not isinstance(dim, int):
            return None  # (max(x, other): a pointwise maximum)
        keep = bool(arg(args, kwargs, 2, "keepdim", False))
        nd = max(g.dim(), 1)
        d = s._dim
        if dim is not None and dim % nd != d:
            return None
        pl, length, whole = g._placement, g._shape[d], list(g._shape)
        arg_only = name.startswith("arg")

        def impl(*a, **k):
            from .runtime import shape_index, split_range
            x = a[0] if a else k.get("input")
            lo = split_range(length, len(pl._ranks), shape_index(pl))[0]
            if dim is None and not arg_only:  # max(x): every element, a partial max all-reduced
                dims = list(range(x.dim()))
                local = (x.amax() if kind == "max" else x.amin()) if x.numel() else _identity(x, [], kind)
                if x.requires_grad and x.is_floating_point():
                    return _PartialExtreme.apply(x, local, dims, False, kind, pl._ranks, True)
                return _all_reduce(local.detach().contiguous().clone(), kind, pl._ranks)
            if dim is None:  # argmax(x): over the flattened tensor, indices of the whole's order
                inner = 1
                for n in x.shape[d + 1:]:
                    inner *= n
                flat = x.reshape(-1)
                v, i = _partial(flat, 0, 0, kind)
                block = x.shape[d] * inner  # (a local index -> the whole's: rows of the split dim shift by lo)
                if block:
                    i = (i // block) * (length * inner) + i % block + lo * inner
                v, i = _pick(v, i, 0, kind, pl)
                return i.reshape([1] * len(whole)) if keep else i.reshape([])
            v, i = _pick(*_partial(x, d, lo, kind), d, kind, pl)
            if not keep:
                v, i = v.squeeze(d), i.squeeze(d)
            if arg_only:
                return i
            return _named(kind, v, i)
        return {}, B, None, None, None, impl
    return rule


def resplit(gs, dims, keep):
    """kthvalue / median / nanmedian / mode over the split dim: no partial results combine, so the
    input goes split along the largest dim the op keeps (one all-to-all: each rank receives
    (n - 1) / n of its new slice, where the broadcast signature gathered the whole input on every
    rank) and each rank reduces its slice. None: not split along a reduced dim, or no dim is kept."""
    g = gs[0]
    s = g._sbp[0]
    if len(gs) != 1 or s._kind != "S" or dims is None or s._dim not in dims:
        return None
    kept = [d for d in range(g.dim()) if d not in dims and g._shape[d] > 0]
    if not kept:
        return None
    j = max(kept, key=lambda d: g._shape[d])
    out = j if keep else j - sum(1 for d in dims if d < j)
    from ..sbp import split
    return {id(g): split(j)}, split(out), g._shape[j], None, None
