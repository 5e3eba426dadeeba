"""Boxing: a global tensor's local components re-laid out from one SBP to another, as autograd
Functions on the local tensors, so the backward pass boxes the gradients back (docs/global_tensors.md,
Note [Gradients of global tensors]).

Note [Gradients of global tensors]: autograd runs on the local components. The invariant is that
the gradient of a broadcast tensor is itself broadcast (complete and the same on every rank), of a
split tensor split the same way, of a partial-sum tensor broadcast. Each boxing function's backward
keeps it; where an op uses a broadcast input to make a split or partial output (a broadcast weight
times a split batch), each rank's local gradient of that input is only its own part, so the input
first passes `BroadcastUse`, whose backward sums the parts over the ranks."""
from .. import autograd, distributed as dist
from .runtime import split_range, split_sizes


def _gather(local, dim, length, parts):
    """The whole tensor from each rank's slice along dim (balanced sizes: padded to the largest,
    all-gathered, trimmed)."""
    from .. import cat
    sizes = split_sizes(length, parts)
    top = max(sizes)
    x = local.contiguous()
    if x.shape[dim] < top:
        pad_shape = list(x.shape)
        pad_shape[dim] = top - x.shape[dim]
        x = cat([x, x.new_zeros(pad_shape)], dim)
    pieces = [x.new_empty(tuple(x.shape)) for _ in range(parts)]
    dist.all_gather(pieces, x)
    return cat([p.narrow(dim, 0, n) for p, n in zip(pieces, sizes)], dim)


def _slice(full, dim, parts, index):
    lo, hi = split_range(full.shape[dim], parts, index)
    return full.narrow(dim, lo, hi - lo).contiguous()


class _AllGather(autograd.Function):  # S(dim) -> B
    @staticmethod
    def forward(ctx, local, dim, length, parts, index):
        ctx.args = (dim, parts, index)
        return _gather(local.detach(), dim, length, parts)

    @staticmethod
    def backward(ctx, grad):  # B gradient -> this rank's slice
        dim, parts, index = ctx.args
        return _slice(grad, dim, parts, index), None, None, None, None


class _Slice(autograd.Function):  # B -> S(dim)
    @staticmethod
    def forward(ctx, full, dim, parts, index):
        ctx.args = (dim, full.shape[dim], parts)
        return _slice(full.detach(), dim, parts, index)

    @staticmethod
    def backward(ctx, grad):  # slices of the gradient -> the whole (B)
        dim, length, parts = ctx.args
        return _gather(grad, dim, length, parts), None, None, None


class _AllReduce(autograd.Function):  # P -> B
    @staticmethod
    def forward(ctx, local):
        out = local.detach().clone()
        dist.all_reduce(out)
        return out

    @staticmethod
    def backward(ctx, grad):  # the gradient of a partial-sum tensor is broadcast
        return grad


class _KeepOnFirst(autograd.Function):  # B -> P
    @staticmethod
    def forward(ctx, full, index):
        return full.detach().clone() if index == 0 else full.detach().new_zeros(tuple(full.shape))

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class BroadcastUse(autograd.Function):
    """A broadcast input of an op whose output is split or partial (Note [Gradients of global
    tensors]): the identity forward, the sum over ranks backward. For a leaf (a parameter) in a
    backward() into .grad the sum waits for the end of the pass, where every such leaf's parts go
    in one all-reduce (`_finish_leaves`), as DDP's buckets: the engine accumulates this rank's part
    into .grad meanwhile, and the end adds the other ranks'."""

    @staticmethod
    def forward(ctx, x):
        ctx.leaf = x if x.is_leaf and x.requires_grad else None
        return x.detach()

    @staticmethod
    def backward(ctx, grad):
        from ..autograd import _engine_state, _ExecutionEngine
        if ctx.leaf is not None and getattr(_engine_state, "into_grad", False):
            pending = _engine_state.__dict__.setdefault("global_leaves", {})
            if not pending:
                _ExecutionEngine.queue_callback(_finish_leaves)
            leaf, part = pending.get(id(ctx.leaf), (ctx.leaf, None))
            pending[id(ctx.leaf)] = (leaf, grad.detach() if part is None else part + grad.detach())
            return grad
        out = grad.contiguous().clone()
        dist.all_reduce(out)
        return out


def _finish_leaves():
    """The end of a backward pass: each deferred leaf's gradient gets the other ranks' parts (one
    all-reduce per dtype over all of them, in the order the pass met them: the same on every rank)."""
    from .. import cat, no_grad
    from ..autograd import _engine_state
    pending = _engine_state.__dict__.pop("global_leaves", {})
    by_dtype = {}
    for leaf, part in pending.values():
        by_dtype.setdefault(str(part.dtype), []).append((leaf, part))
    with no_grad():
        for key in sorted(by_dtype):
            items = by_dtype[key]
            flat = cat([p.reshape(-1) for _, p in items])
            total = flat.clone()
            dist.all_reduce(total)
            others = total - flat
            start = 0
            for leaf, part in items:
                n = part.numel()
                rest = others[start:start + n].reshape(tuple(part.shape))
                start += n
                if leaf.grad is None:
                    leaf.grad = rest + part
                else:
                    leaf.grad.add_(rest)


def box(local, src, dst, shape, parts, index):
    """The local component of a tensor of logical `shape` laid out as `src`, re-laid out as `dst`."""
    if src == dst:
        return local
    k_src, k_dst = src._kind, dst._kind
    if k_src == "S":
        full = _AllGather.apply(local, src._dim, shape[src._dim], parts, index)
        return box(full, _B, dst, shape, parts, index)
    if k_src == "P":
        full = _AllReduce.apply(local)
        return box(full, _B, dst, shape, parts, index)
    # from broadcast
    if k_dst == "S":
        return _Slice.apply(local, dst._dim, parts, index)
    return _KeepOnFirst.apply(local, index)


from ..sbp import broadcast as _B  # noqa: E402
