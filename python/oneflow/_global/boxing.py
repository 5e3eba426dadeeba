"""Boxing: a global tensor's local components re-laid out from one SBP to another, or moved to
another placement, as autograd Functions on the local tensors, so the backward pass boxes the
gradients back (docs/global_tensors.md, Note [Gradients of global tensors]).

Note [Gradients of global tensors]: autograd runs on the local components. The invariant is that
the gradient of a broadcast tensor is itself broadcast (complete and the same on every rank), of a
split tensor split the same way, of a partial-sum tensor broadcast. Each boxing function's backward
keeps it; where an op uses a broadcast input to make a split or partial output (a broadcast weight
times a split batch), each rank's local gradient of that input is only its own part, so the input
first passes `BroadcastUse`, whose backward sums the parts over the ranks.

Collectives run on the placement's group (runtime.group); on processes outside it the components
are meta tensors and the collectives move nothing (Note [Ranks outside a placement])."""
from .. import autograd, distributed as dist
from .runtime import axes, group, position, shape_index, split_range, split_sizes


def _gather(local, dim, length, pl):
    """The whole tensor from each rank's slice along dim (balanced sizes: padded to the largest,
    all-gathered in the group's order -- ranks sorted -- and put in the placement's order)."""
    from .. import cat
    parts = len(pl._ranks)
    sizes = split_sizes(length, parts)
    top = max(sizes)
    x = local.contiguous()
    if x.shape[dim] < top:
        pad_shape = list(x.shape)
        pad_shape[dim] = top - x.shape[dim]
        x = cat([x, x.new_zeros(pad_shape)], dim)
    pieces = [x.new_empty(tuple(x.shape)) for _ in range(parts)]
    dist.all_gather(pieces, x, group=group(pl._ranks))
    by_rank = dict(zip(sorted(pl._ranks), pieces))
    return cat([by_rank[r].narrow(dim, 0, n) for r, n in zip(pl._ranks, sizes)], dim)


def _slice(full, dim, pl):
    lo, hi = split_range(full.shape[dim], len(pl._ranks), shape_index(pl))
    return full.narrow(dim, lo, hi - lo).contiguous()


def _all_reduce(t, pl):
    dist.all_reduce(t, group=group(pl._ranks))
    return t


class _AllGather(autograd.Function):  # S(dim) -> B
    @staticmethod
    def forward(ctx, local, dim, length, pl):
        ctx.args = (dim, pl)
        return _gather(local.detach(), dim, length, pl)

    @staticmethod
    def backward(ctx, grad):  # B gradient -> this rank's slice
        dim, pl = ctx.args
        return _slice(grad, dim, pl), None, None, None


class _Slice(autograd.Function):  # B -> S(dim)
    @staticmethod
    def forward(ctx, full, dim, pl):
        ctx.args = (dim, full.shape[dim], pl)
        return _slice(full.detach(), dim, pl)

    @staticmethod
    def backward(ctx, grad):  # slices of the gradient -> the whole (B)
        dim, length, pl = ctx.args
        return _gather(grad, dim, length, pl), None, None


class _AllReduce(autograd.Function):  # P -> B
    @staticmethod
    def forward(ctx, local, pl):
        return _all_reduce(local.detach().clone(), pl)

    @staticmethod
    def backward(ctx, grad):  # the gradient of a partial-sum tensor is broadcast
        return grad, None


class _KeepOnFirst(autograd.Function):  # B -> P
    @staticmethod
    def forward(ctx, full, pl):
        return full.detach().clone() if position(pl) <= 0 else full.detach().new_zeros(tuple(full.shape))

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _transfer(t, shape, dtype, src, dst, device):
    """`src`'s value of t (a broadcast tensor on both placements) on `dst`'s ranks: real there,
    meta elsewhere. One broadcast from src's first rank over the ranks of both."""
    from .. import _lazy_state, empty
    if _lazy_state.current() is not None:  # nn.Graph learning the step's output: nothing moves
        return empty(shape, dtype=dtype, device="meta")
    rank = dist.get_rank()
    members = set(src._ranks) | set(dst._ranks)
    if rank in members:
        buf = t.detach().contiguous() if rank in src._ranks else empty(shape, dtype=dtype, device=src.type)
        dist.broadcast(buf, src=src._ranks[0], group=group(members))
        if rank in dst._ranks:
            return buf.to(device)
    return empty(shape, dtype=dtype, device="meta")


class Move(autograd.Function):
    """A broadcast tensor on one placement -> the same on another (`to_global(placement=...)`); the
    gradient travels back the same way."""

    @staticmethod
    def forward(ctx, full, src, dst, shape):
        ctx.args = (src, dst, shape, full.dtype)
        return _transfer(full, shape, full.dtype, src, dst, dst.type)

    @staticmethod
    def backward(ctx, grad):
        src, dst, shape, dtype = ctx.args
        return _transfer(grad, shape, dtype, dst, src, src.type), None, None, None


class BroadcastUse(autograd.Function):
    """A broadcast input of an op whose output is split or partial (Note [Gradients of global
    tensors]): the identity forward, the sum over ranks backward. For a leaf (a parameter) in a
    backward() into .grad the sum waits for the end of the pass, where every such leaf's parts go
    in one all-reduce per placement and dtype (`_finish_leaves`), as DDP's buckets: the engine
    accumulates this rank's part into .grad meanwhile, and the end adds the other ranks'."""

    @staticmethod
    def forward(ctx, x, pl):
        ctx.leaf = x if x.is_leaf and x.requires_grad else None
        ctx.pl = pl
        return x.detach()

    @staticmethod
    def backward(ctx, grad):
        from ..autograd import _engine_state, _ExecutionEngine
        if ctx.leaf is not None and getattr(_engine_state, "into_grad", False) and \
                not getattr(ctx.leaf, "_global_hooked", False):  # (GlobalTensor.register_hook: complete)
            pending = _engine_state.__dict__.setdefault("global_leaves", {})
            if not pending:
                _ExecutionEngine.queue_callback(_finish_leaves)
            leaf, part, pl = pending.get(id(ctx.leaf), (ctx.leaf, None, ctx.pl))
            pending[id(ctx.leaf)] = (leaf, grad.detach() if part is None else part + grad.detach(), pl)
            return grad, None
        return _all_reduce(grad.contiguous().clone(), ctx.pl), None


def _finish_leaves():
    """The end of a backward pass: each deferred leaf's gradient gets the other ranks' parts (one
    all-reduce per placement and dtype over all of them, in the order the pass met them: the same
    on every rank)."""
    from .. import cat, no_grad
    from ..autograd import _engine_state
    pending = _engine_state.__dict__.pop("global_leaves", {})
    buckets = {}
    for leaf, part, pl in pending.values():
        buckets.setdefault((repr(pl), str(part.dtype)), (pl, []))[1].append((leaf, part))
    with no_grad():
        for key in sorted(buckets):
            pl, items = buckets[key]
            flat = cat([p.reshape(-1) for _, p in items])
            others = _all_reduce(flat.clone(), pl) - flat
            start = 0
            for leaf, part in items:
                n = part.numel()
                rest = others[start:start + n].reshape(tuple(part.shape))
                start += n
                if leaf.grad is None:
                    leaf.grad = rest + part
                else:
                    leaf.grad.add_(rest)


def box(local, src, dst, shape, pl):
    """The local component of a tensor of logical `shape` laid out as `src` on `pl`, re-laid out
    as `dst`."""
    if src == dst:
        return local
    k_src, k_dst = src._kind, dst._kind
    if k_src == "S":
        full = _AllGather.apply(local, src._dim, shape[src._dim], pl)
        return box(full, _B, dst, shape, pl)
    if k_src == "P":
        full = _AllReduce.apply(local, pl)
        return box(full, _B, dst, shape, pl)
    # from broadcast
    if k_dst == "S":
        return _Slice.apply(local, dst._dim, pl)
    return _KeepOnFirst.apply(local, pl)


def levels(shape, sbp, pl):
    """The shapes a tensor of logical `shape` laid out as n-d `sbp` on `pl` has at each mesh level
    on this process: [logical, after axis 0's split, ..., the component] (nested balanced splits,
    as OneFlow's)."""
    out, cur = [tuple(shape)], list(shape)
    for s, apl in zip(sbp, axes(pl)):
        if s._kind == "S":
            lo, hi = split_range(cur[s._dim], len(apl._ranks), shape_index(apl))
            cur[s._dim] = hi - lo
        out.append(tuple(cur))
    return out


def box_nd(local, src, dst, shape, pl):
    """box over a placement's mesh: the axes from the first one that differs to the last are made
    broadcast (last axis first, each within its axis group), then laid out as `dst` (first axis
    first). A 1-d placement is box()."""
    if src == dst:
        return local
    if len(src) == 1:
        return box(local, src[0], dst[0], shape, pl)
    apls = axes(pl)
    first = next(k for k in range(len(src)) if src[k] != dst[k])
    up = levels(shape, src, pl)
    for k in range(len(src) - 1, first - 1, -1):
        local = box(local, src[k], _B, up[k], apls[k])
    down = levels(shape, dst, pl)
    for k in range(first, len(dst)):
        local = box(local, _B, dst[k], down[k], apls[k])
    return local


from ..sbp import broadcast as _B  # noqa: E402
