"""Placement changes of global tensors (to_global(placement=...)): point-to-point transfers
between the processes that hold the data and those that need it.

Note [Placement changes]: each process of the target placement needs a box of the logical tensor
(its component: the nested balanced splits of the target SBP), each process of the source one holds
a box. For every target process and every distinct source box overlapping its own, the overlap
comes from a holder of that box: the target process itself when it holds it (a local copy), else
one of the holders (several under a broadcast axis: chosen round-robin over the targets, so they
share the sending). Each transfer is one isend / irecv pair between those two processes only: no
process outside the two placements takes part, and nothing goes through a broadcast. Partial-sum
axes are summed first on the source placement (all-reduce) and made on the target after (the first
rank keeps the value), as boxing on one placement does. The backward pass moves the gradient the
same way back (Note [Gradients of global tensors] in boxing.py)."""
import itertools
import math

from .. import autograd, distributed as dist
from .runtime import _owned, _received, levels, split_range

_TAG = 0x6F62  # the transfers' point-to-point tag (apart from a user's tag 0)


def regions(shape, sbp, pl):
    """world rank -> the box ((lo, hi) per dim) of the logical tensor its component holds, for a
    P-free n-d `sbp` on `pl` (the nesting of runtime.levels)."""
    out = {}
    for idx, coords in enumerate(itertools.product(*[range(n) for n in pl._hierarchy])):
        box = [[0, n] for n in shape]
        for axis, s in enumerate(sbp):
            if s._kind == "S":
                lo, hi = box[s._dim]
                a, b = split_range(hi - lo, pl._hierarchy[axis], coords[axis])
                box[s._dim] = [lo + a, lo + b]
        out[pl._ranks[idx]] = tuple((lo, hi) for lo, hi in box)
    return out


def _overlap(a, b):
    box = tuple((max(x[0], y[0]), min(x[1], y[1])) for x, y in zip(a, b))
    return box if all(lo < hi for lo, hi in box) else None


def _within(box, outer):
    return tuple(slice(lo - o[0], hi - o[0]) for (lo, hi), o in zip(box, outer))


def _size(box):
    return tuple(hi - lo for lo, hi in box)


def plan(shape, src_sbp, src_pl, dst_sbp, dst_pl):
    """The transfers [(source rank, target rank, box)] of Note [Placement changes]; the same list
    on every process."""
    have, need = regions(shape, src_sbp, src_pl), regions(shape, dst_sbp, dst_pl)
    holders = {}
    for r in src_pl._ranks:
        holders.setdefault(have[r], []).append(r)
    moves = []
    for j, r in enumerate(dst_pl._ranks):
        for box, hs in holders.items():
            part = _overlap(box, need[r])
            if part is not None:
                moves.append((r if r in hs else hs[j % len(hs)], r, part))
    return moves, have, need


_deferred = [None]  # while DeferredSends is active: the sends not yet waited for, with their buffers


class DeferredSends:
    """Within it, the sends of placement changes are posted and not waited for (their buffers
    kept) until it ends: a pipeline stage goes on to its next micro-batch while the next stage
    takes the activation (or the previous one the gradient). Needed by the 1F1B schedule (Note
    [1F1B], nn/graph/pipeline.py), where a stage sends a micro-batch's activation before it waits
    for an earlier one's gradient: a blocking send would wait for a receive that the other stage
    posts only after its own send of that gradient completes."""

    def __enter__(self):
        if _deferred[0] is not None:
            raise RuntimeError("DeferredSends: already active")
        _deferred[0] = []
        return self

    def __exit__(self, exc_type, *exc):
        sends, _deferred[0] = _deferred[0], None
        if exc_type is not None:  # (the peer may never receive: not waited, the buffers kept alive)
            _abandoned.extend(sends)
            return False
        for work, _ in sends:
            work.wait()
        return False


_abandoned = []  # sends of a schedule that raised: their buffers must outlive the transfers


def _redistribute(local, src_sbp, src_pl, dst_sbp, dst_pl, shape):
    """This process's component of the tensor laid out as (P-free) dst_sbp on dst_pl, from the
    components laid out as src_sbp on src_pl (a meta tensor on processes outside dst_pl)."""
    from .. import _lazy_state
    from .._grad_mode import no_grad
    from .._oneflow_internal import empty
    dtype = local.dtype
    if _lazy_state.current() is not None:  # nn.Graph learning the step's output: nothing moves
        return empty(levels(shape, dst_sbp, dst_pl)[-1], dtype=dtype, device="meta")
    rank = dist.get_rank()
    moves, have, need = plan(shape, src_sbp, src_pl, dst_sbp, dst_pl)
    wire = src_pl.type if src_pl.type == dst_pl.type else "cpu"  # (NCCL pairs only CUDA with CUDA)
    mine = [(s, box) for s, r, box in moves if r == rank]
    whole = len(mine) == 1 and mine[0][1] == need[rank]  # one piece: taken as it comes, no copy
    out = empty(_size(need[rank]), dtype=dtype, device=dst_pl.type) if rank in need and not whole else None
    sends, recvs = [], []
    with no_grad():
        for s, r, box in moves:
            if s == rank and r == rank:
                piece = local[_within(box, have[rank])].to(dst_pl.type)
                if whole:
                    out = piece.contiguous()
                else:
                    out[_within(box, need[rank])] = piece
            elif s == rank:
                piece = local[_within(box, have[rank])].to(wire).contiguous()
                sends.append((dist.isend(piece, r, tag=_TAG), piece))
            elif r == rank:
                buf = empty(_size(box), dtype=dtype, device=wire)
                recvs.append((dist.irecv(buf, s, tag=_TAG), buf, box))
        for work, buf, box in recvs:
            work.wait()
            if whole:
                out = buf.to(dst_pl.type)
            else:
                out[_within(box, need[rank])] = buf.to(dst_pl.type)
            _received(dst_pl, buf.numel() * buf.element_size())
        if _deferred[0] is not None:  # (Note [1F1B]: waited when the schedule ends)
            _deferred[0].extend(sends)
        else:
            for work, _ in sends:
                work.wait()
    if out is None:
        return empty(levels(shape, dst_sbp, dst_pl)[-1], dtype=dtype, device="meta")
    return out


class Redistribute(autograd.Function):
    """_redistribute as an autograd step: the gradient (laid out as the output, P-free) goes back
    the same way."""

    @staticmethod
    def forward(ctx, local, src_sbp, src_pl, dst_sbp, dst_pl, shape):
        ctx.args = (src_sbp, src_pl, dst_sbp, dst_pl, shape)
        return _owned(_redistribute(local.detach(), src_sbp, src_pl, dst_sbp, dst_pl, shape))

    @staticmethod
    def backward(ctx, grad):
        src_sbp, src_pl, dst_sbp, dst_pl, shape = ctx.args
        return _redistribute(grad, dst_sbp, dst_pl, src_sbp, src_pl, shape), None, None, None, None, None


def minimum_bytes(shape, src_sbp, src_pl, dst_sbp, dst_pl, element_size, rank):
    """The least bytes `rank` must receive for a P-free move: the part of its target box it does
    not hold already (tests and the benchmark compare the counter with it)."""
    have, need = regions(shape, src_sbp, src_pl), regions(shape, dst_sbp, dst_pl)
    if rank not in need:
        return 0
    own = _overlap(have[rank], need[rank]) if rank in have else None
    return (math.prod(_size(need[rank])) - (math.prod(_size(own)) if own else 0)) * element_size
