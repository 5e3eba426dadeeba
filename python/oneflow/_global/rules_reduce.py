"""Max / min reductions over a split dim (amax, amin, any, all): each rank reduces its slice -- a
partial max (or min) of the result, OneFlow's partial_max / partial_min layout, which upstream
keeps internal (its public flow.sbp has split, broadcast and partial_sum only, and so does ours)
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
    def forward(ctx, x, local, dims, keep, kind, ranks):
        whole = _all_reduce(local.detach().contiguous().clone(), kind, ranks)
        ctx.dims, ctx.keep, ctx.ranks = dims, keep, ranks
        ctx.save_for_backward(x, whole)
        return whole

    @staticmethod
    def backward(ctx, grad):
        x, whole = ctx.saved_tensors
        expanded, g = whole, grad
        if not ctx.keep:
            for d in ctx.dims:
                expanded, g = expanded.unsqueeze(d), g.unsqueeze(d)
        mask = (x == expanded).to(x.dtype)
        count = mask.sum(ctx.dims, keepdim=True) if ctx.dims else mask
        count = count.contiguous().clone()
        dist.all_reduce(count, group=group(ctx.ranks))
        return g * mask / count, None, None, None, None, None


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
                return _PartialExtreme.apply(x, local, dims, keep, kind, ranks)
            return _all_reduce(local.detach().contiguous().clone(), kind, ranks)
        return {}, B, None, None, None, impl
    return rule
