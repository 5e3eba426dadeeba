"""Note [Collective agreement]: Gloo aborts the whole process (std::terminate in its I/O thread)
when the processes of a collective pass buffers of different sizes, and moves garbage when they
call different collectives or roots. So before a Gloo collective moves data, the processes
all-gather a fingerprint of the call (the collective, dtype, element count, root) and each raises
the same RuntimeError, naming every rank's call, when they differ: a user's mistake becomes a
Python error in every process instead of a crash. It costs one small all-gather per collective
(a fraction of a millisecond on a LAN; nothing next to a training step's buckets);
ONEFLOW_DIST_CHECK=0 turns it off. NCCL's calls are not checked (their check would stall the
stream: as PyTorch's, a mismatch there hangs until the timeout). Point-to-point transfers are
checked in C++ (Note [Checked transfers] in src/dist/process_group.h)."""
import contextlib
import os
import threading

import oneflow as flow

from ._pg import _is_nccl

_OPS = ["all_reduce", "reduce", "broadcast", "all_gather", "gather", "scatter", "all_to_all", "all_gather_v",
        "all_to_all_v"]
# (dtypes by number: the fingerprints' and flow.comm's send headers')
DTYPES = [flow.bool, flow.int8, flow.uint8, flow.int32, flow.int64, flow.float16, flow.bfloat16, flow.float32,
           flow.float64, flow.complex64, flow.complex128, flow.int16]  # (int16 appended: Note [DType numbers])


_local = threading.local()


def enabled():
    return os.environ.get("ONEFLOW_DIST_CHECK", "1") != "0" and not getattr(_local, "trusted", False)


@contextlib.contextmanager
def trusted():
    """Collectives whose agreement is known by construction (DDP's buckets, laid out the same in
    every process from the model DDP checked at construction) skip the check."""
    old, _local.trusted = getattr(_local, "trusted", False), True
    try:
        yield
    finally:
        _local.trusted = old


def _describe(row):
    op, dtype, numel, root = row
    where = f" with root {root}" if root >= 0 else ""
    count = f"{numel}" if numel >= 0 else "per-rank"
    return f"{_OPS[op]} of {count} {str(DTYPES[dtype]).replace('oneflow.', '')} elements{where}"


def agree(g, impl, op, buf, root=-1, numel=None):
    """Raises RuntimeError in every process of g unless all call `op` on buffers like `buf`
    (`numel`: the elements to compare instead of buf's)."""
    if g.size() == 1 or _is_nccl(impl) or not enabled():
        return
    numel = buf.numel() if numel is None else numel
    mine = flow.tensor([_OPS.index(op), DTYPES.index(buf.dtype), numel, root], dtype=flow.int64)
    rows = flow.empty(g.size(), 4, dtype=flow.int64)
    try:
        impl.all_gather(mine, rows)
    except RuntimeError as e:  # (a peer gone, a timeout: name the collective the user called)
        raise RuntimeError(str(e).replace("distributed.all_gather", f"distributed.{op}", 1)) from None
    rows = rows.tolist()
    if any(r != rows[0] for r in rows):
        calls = "; ".join(f"rank {g._ranks[i]}: {_describe(r)}" for i, r in enumerate(rows))
        raise RuntimeError(f"distributed.{op}: the processes of the group made different calls ({calls}); every "
                           "process must call the same collective with the same dtype, size and root")


def agree_v(g, impl, op, dtype, sent, received):
    """agree() for the uneven collectives: `sent[j]` is the element count this process gives
    member j, `received[j]` the count it takes from member j; every process raises the same
    RuntimeError unless all call `op` on `dtype` and each count sent is the count its receiver
    expects."""
    n = g.size()
    if n == 1 or _is_nccl(impl) or not enabled():
        return
    # first the fingerprint every collective exchanges (the same size: a process in another
    # collective meets a clear error, not a Gloo abort; -1: the counts are compared next)
    agree(g, impl, op, flow.empty(0, dtype=dtype), numel=-1)
    mine = flow.tensor([_OPS.index(op), DTYPES.index(dtype)] + list(sent) + list(received), dtype=flow.int64)
    rows = flow.empty(n, 2 + 2 * n, dtype=flow.int64)
    try:
        impl.all_gather(mine, rows)
    except RuntimeError as e:
        raise RuntimeError(str(e).replace("distributed.all_gather", f"distributed.{op}", 1)) from None
    rows = rows.tolist()
    if any(r[:2] != rows[0][:2] for r in rows):
        calls = "; ".join(f"rank {g._ranks[i]}: {_OPS[r[0]]} of {str(DTYPES[r[1]]).replace('oneflow.', '')}"
                          for i, r in enumerate(rows))
        raise RuntimeError(f"distributed.{op}: the processes of the group made different calls ({calls})")
    for i in range(n):
        for j in range(n):
            if rows[i][2 + j] != rows[j][2 + n + i]:
                raise RuntimeError(
                    f"distributed.{op}: rank {g._ranks[i]} sends {rows[i][2 + j]} elements to rank {g._ranks[j]}, "
                    f"which expects {rows[j][2 + n + i]}: the processes disagree on the tensor's shape or layout")
