"""Boxing: a global tensor's local components re-laid out from one SBP to another, as autograd
Functions on the local tensors, so the backward pass boxes the gradients back
(docs/global_tensors.md, Note [Gradients of global tensors]). Placement changes are in
_global/transfer.py.

Note [Direct boxing]: each pair of 1-d SBPs is one call of the collective library on the
placement's group, moving only what a process lacks (Gloo's allgatherv / alltoallv, NCCL's
collectives on CUDA tensors):
    S(i) -> B     all-gather (uneven slices: allgatherv)
    S(i) -> S(j)  all-to-all (alltoallv): each process sends each other one the block of its slice
                  that the other's new slice needs
    P -> B        all-reduce
    P -> S(i)     reduce-scatter: an all-to-all of the blocks, then each process sums the addends
                  of its own block (libgloo's only reduce-scatter is a float-only algorithm class
                  outside the context's collective API; this composition moves the same bytes)
    B -> S(i)     a local slice;  B -> P  the first rank keeps the value, the others zeros;
    S(i) -> P     each process its slice in zeros: no communication.
On a mesh (n-d SBP) an axis is boxed alone, within its axis groups, when no inner axis splits a
dim that the move splits or gathers (then the inner slicing commutes with the collective). Other
partial-free changes go by point-to-point transfers of exactly the boxes each process lacks
(Note [Placement changes], transfer.py); with partial sums, or in nn.Graph's trace, by the cheapest
sequence of such one-axis boxings (`_plan`: a shortest path over the n-d SBPs, each step costing
the bytes every process of the mesh receives), through intermediate layouts where they save bytes.

Note [Bytes moved]: every boxing adds to a per-process debug counter the bytes this process
receives (`oneflow.boxing.bytes_moved()`): for the gathers and all-to-alls exactly the payload from
other processes, for an all-reduce of N bytes over n processes 2 (n - 1) N / n, the least any
all-reduce algorithm receives (a ring's). Tests check each pair against the minimum.

Note [Gradients of global tensors]: autograd runs on the local components. The invariant is that
the gradient of a broadcast tensor is itself broadcast (complete and the same on every rank), of a
split tensor split the same way, of a partial-sum tensor broadcast. Each boxing function's backward
keeps it; where an op uses a broadcast input to make a split or partial output (a broadcast weight
times a split batch), each rank's local gradient of that input is only its own part, so the input
first passes `BroadcastUse`, whose backward sums the parts over the ranks.

Collectives run on the placement's group (runtime.group); on processes outside it the components
are meta tensors and the collectives move nothing (Note [Ranks outside a placement])."""
import functools
import math

from .. import _lazy_state, autograd, distributed as dist
from .._grad_mode import no_grad
from .._oneflow_internal import cat
from .runtime import _grad_moved, _moved, _owned, _received, axes, group, levels, position, shape_index, split_range, split_sizes
from .transfer import Redistribute

@functools.lru_cache(maxsize=256)
def _members(pl):
    """The placement index of each member of the placement's group, in group rank order (the
    group's ranks are sorted; a placement may list them in another order)."""
    return tuple(pl._ranks.index(r) for r in sorted(pl._ranks))


def _group_index(pl, index):
    return sorted(pl._ranks).index(pl._ranks[index])


def _without(shape, dim):
    return math.prod(s for k, s in enumerate(shape) if k != dim)


def _flat_order(shape, dim, pl):
    """Whether blocks along dim, in group order, lie one after another in memory (no packing copy:
    the dims before dim are 1, the group's members in placement order)."""
    return math.prod(shape[:dim]) == 1 and _members(pl) == tuple(range(len(pl._ranks)))


def _unpack(flat, shapes, dim, pl, whole):
    """The blocks of `flat` (one per member, in group order, of the given shapes by placement
    index) put together along dim in placement order (shape `whole`)."""
    if _flat_order(whole, dim, pl):
        return flat.view(tuple(whole))
    pieces, off = [None] * len(shapes), 0
    for q in _members(pl):
        n = math.prod(shapes[q])
        pieces[q] = flat.narrow(0, off, n).view(tuple(shapes[q]))
        off += n
    return cat(pieces, dim)


def _pack(x, dim, sizes, pl):
    """x's blocks along dim (sizes by placement index), flattened in group order: (the buffer,
    the element count of each)."""
    offsets = [sum(sizes[:q]) for q in range(len(sizes))]
    blocks = [x.narrow(dim, offsets[q], sizes[q]) for q in _members(pl)]
    counts = [b.numel() for b in blocks]
    if _flat_order(x.shape, dim, pl):
        return x.reshape(-1), counts
    return cat([b.reshape(-1) for b in blocks]), counts


def _gather(local, dim, length, pl):
    """S(dim) -> B: the whole tensor from each rank's slice (one allgatherv)."""
    x = local.contiguous()
    n = len(pl._ranks)
    if n == 1:
        return x
    sizes = split_sizes(length, n)
    shapes = [list(x.shape[:dim]) + [s] + list(x.shape[dim + 1:]) for s in sizes]
    counts = [math.prod(shapes[q]) for q in _members(pl)]
    out = x.new_empty((sum(counts),))
    dist._all_gather_v(out, x.reshape(-1), counts, group=group(pl._ranks))
    _received(pl, (sum(counts) - x.numel()) * x.element_size())
    return _unpack(out, shapes, dim, pl, shapes[0][:dim] + [length] + shapes[0][dim + 1:])


def _slice(full, dim, pl):
    lo, hi = split_range(full.shape[dim], len(pl._ranks), shape_index(pl))
    return full.narrow(dim, lo, hi - lo).contiguous()


def _all_reduce(t, pl):
    n = len(pl._ranks)
    dist.all_reduce(t, group=group(pl._ranks))
    _received(pl, 2 * (n - 1) * t.numel() * t.element_size() // n)
    return t


def _reduce_scatter(local, dim, pl):
    """P -> S(dim): block q of every rank's addend to rank q (one alltoallv), summed there."""
    x = local.contiguous()
    n = len(pl._ranks)
    if n == 1:
        return x
    sizes = split_sizes(x.shape[dim], n)
    send, ins = _pack(x, dim, sizes, pl)
    mine = list(x.shape)
    mine[dim] = sizes[shape_index(pl)]
    m = math.prod(mine)
    recv = x.new_empty((n * m,))
    dist._all_to_all_v(recv, [m] * n, send, ins, group=group(pl._ranks))
    _received(pl, (n - 1) * m * x.element_size())
    out = recv.view(tuple([n] + mine)).sum(0)
    return out if out.dtype == x.dtype else out.to(x.dtype)


def _exchange(local, src_dim, dst_dim, length, pl):
    """S(src_dim) -> S(dst_dim), src_dim != dst_dim: each rank sends rank q the part of its slice
    that q's new slice holds (one alltoallv) and puts the parts it gets together along src_dim."""
    x = local.contiguous()
    n = len(pl._ranks)
    if n == 1:
        return x
    me = shape_index(pl)
    src_sizes, dst_sizes = split_sizes(length, n), split_sizes(x.shape[dst_dim], n)
    send, ins = _pack(x, dst_dim, dst_sizes, pl)
    shapes = []
    for q in range(n):
        s = list(x.shape)
        s[src_dim], s[dst_dim] = src_sizes[q], dst_sizes[me]
        shapes.append(s)
    outs = [math.prod(shapes[q]) for q in _members(pl)]
    recv = x.new_empty((sum(outs),))
    dist._all_to_all_v(recv, outs, send, ins, group=group(pl._ranks))
    _received(pl, (sum(outs) - outs[_group_index(pl, me)]) * x.element_size())
    whole = list(shapes[0])
    whole[src_dim] = length
    return _unpack(recv, shapes, src_dim, pl, whole)


def _pad(local, dim, length, pl):
    """S(dim) -> P: this rank's slice in zeros elsewhere (the addends sum to the whole)."""
    lo, hi = split_range(length, len(pl._ranks), shape_index(pl))
    parts = []
    for n in (lo, length - hi):
        shape = list(local.shape)
        shape[dim] = n
        parts.append(local.new_zeros(tuple(shape)))
    return cat([parts[0], local, parts[1]], dim)


class _AllGather(autograd.Function):  # S(dim) -> B
    @staticmethod
    def forward(ctx, local, dim, length, pl):
        ctx.args = (dim, pl)
        return _owned(_gather(local.detach(), dim, length, pl))

    @staticmethod
    def backward(ctx, grad):  # B gradient -> this rank's slice
        dim, pl = ctx.args
        return _slice(grad, dim, pl), None, None, None


class _Slice(autograd.Function):  # B -> S(dim)
    @staticmethod
    def forward(ctx, full, dim, pl):
        ctx.args = (dim, full.shape[dim], pl)
        return _owned(_slice(full.detach(), dim, pl))

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


class _ReduceScatter(autograd.Function):  # P -> S(dim)
    @staticmethod
    def forward(ctx, local, dim, pl):
        ctx.args = (dim, local.shape[dim], pl)
        return _owned(_reduce_scatter(local.detach(), dim, pl))

    @staticmethod
    def backward(ctx, grad):  # split gradient -> broadcast (the partial input's)
        dim, length, pl = ctx.args
        return _gather(grad, dim, length, pl), None, None


class _AllToAll(autograd.Function):  # S(src_dim) -> S(dst_dim)
    @staticmethod
    def forward(ctx, local, src_dim, dst_dim, length, pl):
        ctx.args = (src_dim, dst_dim, local.shape[dst_dim], pl)
        return _owned(_exchange(local.detach(), src_dim, dst_dim, length, pl))

    @staticmethod
    def backward(ctx, grad):  # the same exchange the other way
        src_dim, dst_dim, dst_length, pl = ctx.args
        return _exchange(grad, dst_dim, src_dim, dst_length, pl), None, None, None, None


class _PadZeros(autograd.Function):  # S(dim) -> P
    @staticmethod
    def forward(ctx, local, dim, length, pl):
        ctx.args = (dim, pl)
        return _pad(local.detach(), dim, length, pl)

    @staticmethod
    def backward(ctx, grad):  # broadcast gradient -> this rank's slice
        dim, pl = ctx.args
        return _slice(grad, dim, pl), None, None, None


class _KeepOnFirst(autograd.Function):  # B -> P
    @staticmethod
    def forward(ctx, full, pl):
        return full.detach().clone() if position(pl) <= 0 else full.detach().new_zeros(tuple(full.shape))

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class BroadcastUse(autograd.Function):
    """A broadcast input of an op whose output is split or partial (Note [Gradients of global
    tensors]): the identity forward, the sum over ranks backward. For a leaf (a parameter) in a
    backward() into .grad the sum waits for the end of the pass, where every such leaf's parts go
    in one all-reduce per placement and dtype (`_finish_leaves`), as DDP's buckets, which adds the
    sum to .grad. Note [Identical sums]: the part is kept aside, not accumulated into .grad
    meanwhile -- .grad + (sum - part) would round differently on each rank, and a broadcast
    parameter would drift apart over the ranks (Adam amplifies such noise where a gradient is
    near zero, as a convolution's bias before a batch norm); .grad + sum is the same on all."""

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
            return None, None  # (Note [Identical sums]: the part reaches .grad in the sum)
        return _all_reduce(grad.contiguous().clone(), ctx.pl), None


class _GatherForPartialUse(autograd.Function):
    """S(dim) -> B for an op that makes a split or partial output of it (what BroadcastUse marks):
    the all-gather forward and, since each rank's gradient of that use is only its part, a
    reduce-scatter backward -- the all-reduce BroadcastUse would do, then _AllGather's slice, in
    one collective that receives half the bytes. A ZeRO stage-3 parameter's gradient arrives so
    (Note [Sharded gradients] in nn/graph/zero.py); counted in gradient_bytes_moved() for a leaf."""

    @staticmethod
    def forward(ctx, local, dim, length, pl):
        ctx.args = (dim, pl, local.is_leaf and local.requires_grad)
        return _owned(_gather(local.detach(), dim, length, pl))

    @staticmethod
    def backward(ctx, grad):
        dim, pl, leaf = ctx.args
        before = _moved[0]
        out = _reduce_scatter(grad, dim, pl)
        if leaf:
            _grad_moved[0] += _moved[0] - before
        return out, None, None, None


def gather_for_partial_use(local, src, shape, pl):
    """A 1-d S(d) component gathered to B for an op whose output is not B (dispatch: in place of
    box + BroadcastUse)."""
    return _GatherForPartialUse.apply(local, src._dim, shape[src._dim], pl)


def _finish_leaves():
    """The end of a backward pass: each deferred leaf's gradient gets the sum of every rank's parts
    (one all-reduce per placement and dtype over all of them, in the order the pass met them: the
    same on every rank), added to what .grad holds (Note [Identical sums])."""
    from ..autograd import _engine_state
    pending = _engine_state.__dict__.pop("global_leaves", {})
    if _sharded_leaves[0] is not None:  # (ZeRO stage 2: Note [Sharded gradients])
        pending = _finish_sharded_leaves(pending, *_sharded_leaves[0])
    buckets = {}
    for leaf, part, pl in pending.values():
        buckets.setdefault((repr(pl), str(part.dtype)), (pl, []))[1].append((leaf, part))
    with no_grad():
        for key in sorted(buckets):
            pl, items = buckets[key]
            flat = cat([p.reshape(-1) for _, p in items])
            before = _moved[0]
            summed = _all_reduce(flat.clone(), pl)
            _grad_moved[0] += _moved[0] - before
            start = 0
            for leaf, part in items:
                n = part.numel()
                total = summed[start:start + n].reshape(tuple(part.shape))
                start += n
                if leaf.grad is None:
                    leaf.grad = total.clone()
                else:
                    leaf.grad.add_(total)


# While a ZeRO stage-2 graph's backward runs (zero.sharded_gradients): (the local leaves to shard,
# {id(leaf): its shard so far}, the bucket size in bytes), else None.
_sharded_leaves = [None]


def _bucket_reduce_scatter(parts, pl):
    """Each of `parts` (this rank's addends of tensors laid out P on `pl`, each with at least a row
    per rank) reduce-scattered along dim 0 in one alltoallv: this rank's rows of each sum."""
    n = len(pl._ranks)
    me = shape_index(pl)
    ranges = [[split_range(p.shape[0], n, q) for q in range(n)] for p in parts]
    send, counts = [], []
    for q in _members(pl):  # (the blocks for each member, in group order)
        blocks = [p.narrow(0, r[q][0], r[q][1] - r[q][0]).reshape(-1) for p, r in zip(parts, ranges)]
        send.extend(blocks)
        counts.append(sum(b.numel() for b in blocks))
    mine = [(r[me][1] - r[me][0]) * _without(p.shape, 0) for p, r in zip(parts, ranges)]
    m = sum(mine)
    x = parts[0]
    recv = x.new_empty((n * m,))
    dist._all_to_all_v(recv, [m] * n, cat(send), counts, group=group(pl._ranks))
    nbytes = (n - 1) * m * x.element_size()
    _received(pl, nbytes)
    _grad_moved[0] += nbytes
    total = recv.view((n, m)).sum(0)
    out, off = [], 0
    for p, r, k in zip(parts, ranges, mine):
        rows = r[me][1] - r[me][0]
        out.append(total.narrow(0, off, k).view((rows,) + tuple(p.shape[1:])).to(p.dtype))
        off += k
    return out


def _finish_sharded_leaves(pending, leaves, shards, bucket_bytes):
    """Note [Sharded gradients] (nn/graph/zero.py): of the leaves whose gradients wait for the other
    ranks' parts (`pending`, as _finish_leaves takes it), those in `leaves` are reduce-scattered
    instead of all-reduced: in buckets of about `bucket_bytes` per placement and dtype, in the
    order the pass met them (the same on every rank), each rank keeps only its rows of each sum,
    added to `shards` (micro-batches accumulate there), and the leaf's whole .grad is dropped.
    Returns the pending leaves left to all-reduce."""
    rest, groups = {}, {}
    for key, (leaf, part, pl) in pending.items():
        if key in leaves:
            groups.setdefault((repr(pl), str(part.dtype)), (pl, []))[1].append((key, leaf, part))
        else:
            rest[key] = (leaf, part, pl)
    with no_grad():
        for gkey in sorted(groups):
            pl, items = groups[gkey]
            buckets, size = [[]], 0
            for item in items:
                if buckets[-1] and size + item[2].numel() * item[2].element_size() > bucket_bytes:
                    buckets.append([])
                    size = 0
                buckets[-1].append(item)
                size += item[2].numel() * item[2].element_size()
            for bucket in buckets:
                n, me = len(pl._ranks), shape_index(pl)
                summed = _bucket_reduce_scatter([part.contiguous() for _, _, part in bucket], pl)
                for (key, leaf, part), shard in zip(bucket, summed):
                    # .grad holds any complete contribution (a use of the leaf that needed no sum
                    # over the ranks; the part is not in it: Note [Identical sums]): its rows added
                    if leaf.grad is not None:
                        lo, hi = split_range(part.shape[0], n, me)
                        shard = shard + leaf.grad.narrow(0, lo, hi - lo)
                    leaf.grad = None
                    shards[key] = shard if key not in shards else shards[key] + shard
    return rest


def box(local, src, dst, shape, pl):
    """The local component of a tensor of logical `shape` laid out as `src` on `pl`, re-laid out
    as `dst` (Note [Direct boxing])."""
    if src == dst:
        return local
    k_src, k_dst = src._kind, dst._kind
    if k_src == "S":
        length = shape[src._dim]
        if k_dst == "B":
            return _AllGather.apply(local, src._dim, length, pl)
        if k_dst == "S":
            return _AllToAll.apply(local, src._dim, dst._dim, length, pl)
        return _PadZeros.apply(local, src._dim, length, pl)
    if k_src == "P":
        if k_dst == "B":
            return _AllReduce.apply(local, pl)
        return _ReduceScatter.apply(local, dst._dim, pl)
    if k_dst == "S":  # from broadcast
        return _Slice.apply(local, dst._dim, pl)
    return _KeepOnFirst.apply(local, pl)


def _dims(s):
    return {s._dim} if s._kind == "S" else set()


def _free(cur, k, target):
    """Whether mesh axis k can go from cur[k] to target alone (Note [Direct boxing]): no inner
    axis splits a dim the move splits or gathers."""
    moved = _dims(cur[k]) | _dims(target)
    return not any(cur[m]._kind == "S" and cur[m]._dim in moved for m in range(k + 1, len(cur)))


def _step_elements(shape, cur, k, target, pl, index):
    """The elements the process at placement `index` receives when mesh axis k goes from cur[k]
    to target alone (Note [Bytes moved]'s counts of the 1-d collectives, on the components: the
    inner axes' slices of the other dims stay cut)."""
    a = cur[k]
    if a == target or a._kind == "B" or target._kind == "P" and a._kind != "P":
        return 0  # (a local slice, zeros, or nothing)

    def component(s):  # the process's component with axis k laid out as s
        return levels(shape, tuple(cur[:k]) + (s,) + tuple(cur[k + 1:]), pl, index)[-1]
    whole, own = component(_B), component(a)
    n = pl._hierarchy[k]
    if a._kind == "P":
        if target._kind == "B":
            return 2 * (n - 1) * math.prod(whole) / n
        return (n - 1) * math.prod(component(target))
    if target._kind == "B":
        return math.prod(whole) - math.prod(own)
    new = component(target)
    both = list(new)
    both[a._dim] = own[a._dim]
    return math.prod(new) - math.prod(both)


@functools.lru_cache(maxsize=1024)
def _plan(src, dst, shape, pl):
    """The cheapest sequence of one-axis steps [(axis, its next SBP)] from n-d src to dst (Note
    [Direct boxing]): a shortest path over the n-d SBPs whose steps are the free 1-d boxings, each
    costing the elements every process of the mesh receives (uneven levels counted exactly). Not
    always the target axis by axis: (P, P) -> (B, B) goes by a reduce-scatter on one axis, an
    all-reduce of the slices on the other and an all-gather (1.5 x the tensor received, where an
    all-reduce per axis receives 2 x)."""
    import heapq
    from ..sbp import partial_sum, split
    kinds = [_B, partial_sum] + [split(d) for d in range(len(shape))]
    start, goal = tuple(src), tuple(dst)
    best, queue, count = {start: (0, 0)}, [(0, 0, 0, start, ())], 0
    while queue:
        cost, steps, _, cur, path = heapq.heappop(queue)
        if cur == goal:
            return path
        if (cost, steps) > best[cur]:
            continue
        for k in range(len(cur)):
            for t in kinds:
                if t == cur[k] or not _free(cur, k, t):
                    continue
                nxt = cur[:k] + (t,) + cur[k + 1:]
                c = cost + sum(_step_elements(shape, cur, k, t, pl, i) for i in range(len(pl._ranks)))
                if (c, steps + 1) < best.get(nxt, (math.inf, 0)):
                    best[nxt] = (c, steps + 1)
                    count += 1
                    heapq.heappush(queue, (c, steps + 1, count, nxt, path + ((k, t),)))
    raise AssertionError(f"no boxing from {src} to {dst}")  # (unreachable: innermost-first to B, then out)


def box_nd(local, src, dst, shape, pl):
    """box over a placement's mesh, one axis at a time within its axis groups (Note [Direct
    boxing]). A 1-d placement is box()."""
    if src == dst:
        return local
    if len(src) == 1:
        return box(local, src[0], dst[0], shape, pl)
    differ = [k for k in range(len(src)) if src[k] != dst[k]]
    if not (len(differ) == 1 and _free(src, differ[0], dst[differ[0]])) and \
            not any(s._kind == "P" for s in src + dst) and _lazy_state.current() is None:
        # more than one axis step: point-to-point transfers of exactly the missing boxes instead
        # (Note [Placement changes] on one placement; the steps would move more)
        return Redistribute.apply(local, tuple(src), pl, tuple(dst), pl, tuple(shape))
    apls = axes(pl)
    cur = list(src)
    for k, target in _plan(tuple(src), tuple(dst), tuple(shape), pl):
        local = box(local, cur[k], target, levels(shape, cur, pl)[k], apls[k])
        cur[k] = target
    return local


from ..sbp import broadcast as _B  # noqa: E402


def box_between(local, src_sbp, src_pl, dst_sbp, dst_pl, shape):
    """The component of a tensor of logical `shape` laid out as src_sbp on src_pl, moved to dst_pl
    and laid out as dst_sbp there (Note [Placement changes]); on one placement, box_nd."""
    position(src_pl), position(dst_pl)  # (their groups made on every process, in one order)
    if src_pl == dst_pl:
        return box_nd(local, src_sbp, dst_sbp, shape, src_pl)
    mid_src = tuple(_B if s._kind == "P" else s for s in src_sbp)
    mid_dst = tuple(_B if s._kind == "P" else s for s in dst_sbp)
    local = box_nd(local, tuple(src_sbp), mid_src, shape, src_pl)
    local = Redistribute.apply(local, mid_src, src_pl, mid_dst, dst_pl, tuple(shape))
    return box_nd(local, mid_dst, tuple(dst_sbp), shape, dst_pl)
