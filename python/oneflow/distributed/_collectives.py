"""The collectives of oneflow.distributed, as PyTorch's: each works on the caller's tensors in
place, through a contiguous buffer on the device its library works on (ProcessGroup._route: a
CPU buffer for Gloo, the tensor's GPU for NCCL): the tensor itself when it is one, otherwise a
staged copy written back afterwards. Gloo's are synchronous: with async_op=True they return an
already completed Work, except isend / irecv, whose transfer completes in Work.wait() (so a ring
of isend-then-irecv does not deadlock). NCCL's are enqueued on the device's stream, like kernels."""
import pickle

import numpy as np

import oneflow as flow

from ._agree import agree, agree_v
from ._pg import ReduceOp, _Done, _State, _group, _is_nccl, _peer


class Work:
    """The handle of an operation (async_op=True, isend, irecv)."""

    def __init__(self, tensors=(), pending=None, on_done=None, keep=None):
        self._tensors, self._pending, self._on_done = list(tensors), pending, on_done
        self._source = None
        self._keep = keep  # a staged buffer the transfer reads, alive until wait()

    def wait(self, timeout=None):
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._source = pending.wait()
            self._keep = None
            if self._on_done is not None:
                self._on_done()
        return True

    def is_completed(self):
        return self._pending is None

    def is_success(self):
        return self._pending is None

    def exception(self):
        return None

    def source_rank(self):
        return self._source

    def result(self):
        return self._tensors

    def synchronize(self):
        self.wait()

    def get_future(self):
        """A oneflow.futures.Future of result(), complete when this work is."""
        from ..futures import Future
        fut = Future()
        if self._pending is None:
            fut.set_result(self.result())
        else:
            fut._waiter = lambda: (self.wait(), self.result())[1]
        return fut


def _done(tensors, async_op):
    return Work(tensors) if async_op else None


def _check(t, op, name="tensor"):
    if not isinstance(t, flow.Tensor):
        raise TypeError(f"distributed.{op}: {name} must be a Tensor, got {type(t).__name__}")


def _route(g, t, op):
    """(the library group, the device of its buffers) for tensor t."""
    _check(t, op)
    return g._route(t)


def _setup(group, tensor, op, peer=None, group_peer=None, what="src"):
    """(group, root as a group rank or None, library group, device of its buffers), or None for a
    process outside the group (whose call does nothing)."""
    g = _group(group)
    if g is None:
        return None
    root = group_peer if group_peer is not None else (None if peer is None else _peer(g, peer, what))
    impl, dev = _route(g, tensor, op)
    return g, root, impl, dev


def _buffer(t, op, device):
    """(a contiguous tensor on `device` with t's values, whether it is a copy to write back)."""
    _check(t, op)
    if t.device == flow.device(device) and t.is_contiguous():
        return t, False
    return t.detach().to(device).contiguous(), True


def _write_back(t, buf, copied):
    if copied:
        with flow.no_grad():
            t.copy_(buf.to(t.device))


def _reduce_view(buf, op, opname):
    """The buffer as the C++ reduction sees it, and the op code: complex as pairs of reals (SUM /
    AVG only), AVG as SUM (the caller divides)."""
    op = ReduceOp(op)
    if buf.is_complex():
        if op not in (ReduceOp.SUM, ReduceOp.AVG):
            raise TypeError(f"distributed.{opname}: {op.name} is not defined for complex tensors")
        buf = flow.view_as_real(buf)
    if op == ReduceOp.AVG and not (buf.is_floating_point() or buf.is_complex()):
        raise TypeError(f"distributed.{opname}: ReduceOp.AVG needs a floating point tensor, got {buf.dtype}")
    return buf, int(ReduceOp.SUM if op == ReduceOp.AVG else op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Every process's `tensor` becomes the reduction (sum by default) of all of them."""
    s = _setup(group, tensor, "all_reduce")
    if s is None:
        return _done([], async_op)
    g, _, impl, dev = s
    buf, copied = _buffer(tensor, "all_reduce", dev)
    view, code = _reduce_view(buf, op, "all_reduce")
    agree(g, impl, "all_reduce", view)

    def finish():
        if ReduceOp(op) == ReduceOp.AVG:
            with flow.no_grad():
                buf.div_(g.size())
        _write_back(tensor, buf, copied)
    if async_op and not _is_nccl(impl):  # queued behind the group's collectives (Note [Collective queue])
        return Work([tensor], impl.all_reduce_async(view, code), finish, keep=buf)
    impl.all_reduce(view, code)
    finish()
    return _done([tensor], async_op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """The reduction lands in `dst`'s tensor; the others' are left as they were."""
    s = _setup(group, tensor, "reduce", dst, group_dst, "dst")
    if s is None:
        return _done([], async_op)
    g, root, impl, dev = s
    buf, copied = _buffer(tensor, "reduce", dev)
    view, code = _reduce_view(buf, op, "reduce")
    agree(g, impl, "reduce", view, root)
    impl.reduce(view, code, root)
    if g.rank() == root:
        if ReduceOp(op) == ReduceOp.AVG:
            with flow.no_grad():
                buf.div_(g.size())
        _write_back(tensor, buf, copied)
    return _done([tensor], async_op)


def broadcast(tensor, src=0, group=None, async_op=False, group_src=None):
    """Every process's `tensor` becomes `src`'s."""
    s = _setup(group, tensor, "broadcast", src, group_src)
    if s is None:
        return _done([], async_op)
    g, root, impl, dev = s
    buf, copied = _buffer(tensor, "broadcast", dev)
    agree(g, impl, "broadcast", buf, root)
    impl.broadcast(buf, root)
    if g.rank() != root:
        _write_back(tensor, buf, copied)
    return _done([tensor], async_op)


def _same_shape(ts, like, op, name):
    for t in ts:
        _check(t, op, name)
        if t.shape != like.shape or t.dtype != like.dtype:
            raise ValueError(f"distributed.{op}: every tensor of {name} must have the shape {tuple(like.shape)} and "
                             f"dtype {like.dtype} of the input, got {tuple(t.shape)} {t.dtype}")


def _rooted_list(g, root, lst, like, op, where):
    """Whether this process is the root; there `lst` must hold one tensor per rank shaped like
    `like`, elsewhere it must be absent."""
    name = f"{op}_list"
    if g.rank() == root:
        if lst is None or len(lst) != g.size():
            raise ValueError(f"distributed.{op}: the {where} needs a {name} of {g.size()} tensors")
        _same_shape(lst, like, op, name)
        return True
    if lst:
        raise ValueError(f"distributed.{op}: {name} is only given on the {where} rank")
    return False


def _gathered(buf, n):
    return flow.empty((n,) + tuple(buf.shape), dtype=buf.dtype, device=buf.device)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[i] becomes process i's `tensor` (one entry per rank of the group)."""
    s = _setup(group, tensor, "all_gather")
    if s is None:
        return _done([], async_op)
    g, _, impl, dev = s
    buf, _ = _buffer(tensor, "all_gather", dev)
    if len(tensor_list) != g.size():
        raise ValueError(f"distributed.all_gather: tensor_list needs one tensor per rank ({g.size()}), "
                         f"got {len(tensor_list)}")
    _same_shape(tensor_list, buf, "all_gather", "tensor_list")
    out = _gathered(buf, g.size())
    agree(g, impl, "all_gather", buf)
    impl.all_gather(buf, out)
    with flow.no_grad():
        for t, part in zip(tensor_list, out):
            t.copy_(part.to(t.device))
    return _done(tensor_list, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor holds every process's input, in rank order: concatenated along dim 0, or
    stacked on a new dim 0."""
    s = _setup(group, input_tensor, "all_gather_into_tensor")
    if s is None:
        return _done([], async_op)
    g, _, impl, dev = s
    buf, _ = _buffer(input_tensor, "all_gather_into_tensor", dev)
    _check(output_tensor, "all_gather_into_tensor", "output_tensor")
    if output_tensor.numel() != buf.numel() * g.size() or output_tensor.dtype != buf.dtype:
        raise ValueError(f"distributed.all_gather_into_tensor: the output must hold {g.size()} times the input's "
                         f"{buf.numel()} elements of {buf.dtype}, got {output_tensor.numel()} of {output_tensor.dtype}")
    out, copied = _buffer(output_tensor, "all_gather_into_tensor", dev)
    agree(g, impl, "all_gather", buf)
    impl.all_gather(buf, out)
    _write_back(output_tensor, out, copied)
    return _done([output_tensor], async_op)


_all_gather_base = all_gather_into_tensor


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False, group_dst=None):
    """gather_list (on dst only) receives every process's tensor, in rank order."""
    s = _setup(group, tensor, "gather", dst, group_dst, "dst")
    if s is None:
        return _done([], async_op)
    g, root, impl, dev = s
    buf, _ = _buffer(tensor, "gather", dev)
    out = _gathered(buf, g.size()) if _rooted_list(g, root, gather_list, buf, "gather", "destination") else None
    agree(g, impl, "gather", buf, root)
    impl.gather(buf, out, root)
    if out is not None:
        with flow.no_grad():
            for t, part in zip(gather_list, out):
                t.copy_(part.to(t.device))
    return _done([tensor], async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False, group_src=None):
    """Process i's tensor becomes src's scatter_list[i]."""
    s = _setup(group, tensor, "scatter", src, group_src)
    if s is None:
        return _done([], async_op)
    g, root, impl, dev = s
    buf, copied = _buffer(tensor, "scatter", dev)
    inputs = None
    if _rooted_list(g, root, scatter_list, buf, "scatter", "source"):
        inputs = [_buffer(t, "scatter", dev)[0] for t in scatter_list]
    agree(g, impl, "scatter", buf, root)
    impl.scatter(inputs, buf, root)
    _write_back(tensor, buf, copied)
    return _done([tensor], async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """output becomes block `rank` of the reduction of every process's input (input holds
    size() blocks of output's shape, concatenated or stacked)."""
    g = _group(group)
    if g is None:
        return _done([], async_op)
    _check(output, "reduce_scatter_tensor", "output")
    if input.numel() != output.numel() * g.size() or input.dtype != output.dtype:
        raise ValueError(f"distributed.reduce_scatter_tensor: the input must hold {g.size()} times the output's "
                         f"{output.numel()} elements of {output.dtype}, got {input.numel()} of {input.dtype}")
    # (Gloo's reduce-scatter needs float types: reduce all, keep this rank's block)
    _, dev = _route(g, input, "reduce_scatter_tensor")
    whole, copied = _buffer(input, "reduce_scatter_tensor", dev)
    whole = (whole if copied else whole.clone()).reshape(g.size(), -1)  # (the input stays as it was)
    all_reduce(whole, op, group)
    with flow.no_grad():
        output.copy_(whole[g.rank()].reshape(output.shape).to(output.device))
    return _done([output], async_op)


_reduce_scatter_base = reduce_scatter_tensor


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output becomes the reduction over processes of their input_list[rank]."""
    g = _group(group)
    if g is None:
        return _done([], async_op)
    if len(input_list) != g.size():
        raise ValueError(f"distributed.reduce_scatter: input_list needs one tensor per rank ({g.size()})")
    _same_shape(input_list, output, "reduce_scatter", "input_list")
    stacked = flow.stack([t.detach() for t in input_list])
    return reduce_scatter_tensor(output, stacked, op, group, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Block i of input (along dim 0) goes to process i; block j of output comes from process j.
    Without split sizes the blocks are equal; with them, each process's blocks may differ."""
    g = _group(group)
    if g is None:
        return _done([], async_op)
    n = g.size()
    _check(input, "all_to_all_single", "input")
    _check(output, "all_to_all_single", "output")
    if output_split_sizes is None and input_split_sizes is None:
        if input.numel() != output.numel() or input.dim() == 0 or input.shape[0] % n:
            raise ValueError(f"distributed.all_to_all_single: input and output must have the same size, with a "
                             f"first dimension divisible by {n}")
        impl, dev = _route(g, input, "all_to_all_single")
        buf, _ = _buffer(input, "all_to_all_single", dev)
        out, copied = _buffer(output, "all_to_all_single", dev)
        agree(g, impl, "all_to_all", buf)
        impl.all_to_all(buf, out)
        _write_back(output, out, copied)
        return _done([output], async_op)
    ins = _splits(input, input_split_sizes, n, "input_split_sizes")
    outs = _splits(output, output_split_sizes, n, "output_split_sizes")
    result = [flow.empty_like(o) for o in outs]
    all_to_all(result, list(ins), group)
    with flow.no_grad():
        for o, r in zip(outs, result):
            o.copy_(r)
    return _done([output], async_op)


def _splits(t, sizes, n, name):
    rows = t.shape[0] if t.dim() else 0
    sizes = [rows // n] * n if sizes is None else [int(s) for s in sizes]
    if len(sizes) != n or sum(sizes) != rows:
        raise ValueError(f"distributed.all_to_all_single: {name} must be {n} sizes summing to {rows}, got {sizes}")
    return flow.split(t, sizes, dim=0) if t.dim() else [t] * n


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """output_tensor_list[j] becomes process j's input_tensor_list[rank]. The blocks may differ in
    size: they travel padded to the largest one."""
    g = _group(group)
    if g is None:
        return _done([], async_op)
    n = g.size()
    if len(input_tensor_list) != n or len(output_tensor_list) != n:
        raise ValueError(f"distributed.all_to_all: both lists need one tensor per rank ({n})")
    dtype = input_tensor_list[0].dtype
    for t in list(input_tensor_list) + list(output_tensor_list):
        _check(t, "all_to_all", "a list entry")
        if t.dtype != dtype:
            raise ValueError(f"distributed.all_to_all: every tensor must be {dtype}, got {t.dtype}")
    width = max([t.numel() for t in input_tensor_list] + [t.numel() for t in output_tensor_list] + [1])
    width = int(_max_over(g, width))
    impl, dev = _route(g, input_tensor_list[0], "all_to_all")
    send = flow.zeros((n, width), dtype=dtype, device=dev)
    with flow.no_grad():
        for i, t in enumerate(input_tensor_list):
            send[i, :t.numel()] = t.detach().to(dev).reshape(-1)
    recv = flow.empty((n, width), dtype=dtype, device=dev)
    agree(g, impl, "all_to_all", send)
    impl.all_to_all(send, recv)
    with flow.no_grad():
        for j, t in enumerate(output_tensor_list):
            t.copy_(recv[j, :t.numel()].reshape(t.shape).to(t.device))
    return _done(output_tensor_list, async_op)


def _all_gather_v(output, input, counts, group=None):
    """The uneven all-gather (boxing's S -> B): output (flat, contiguous) becomes every member's
    input in group rank order, member i's holding counts[i] elements (counts[rank] is input's).
    Gloo moves exactly those elements; NCCL's blocks travel padded to the largest."""
    g = _group(group)
    if g is None:
        return
    n, me = g.size(), g.rank()
    counts = [int(c) for c in counts]
    if len(counts) != n or input.numel() != counts[me] or output.numel() != sum(counts):
        raise ValueError(f"distributed._all_gather_v: {n} counts, this member's equal to the input's "
                         f"{input.numel()} elements and summing to the output's {output.numel()}, got {counts}")
    impl, dev = _route(g, input, "_all_gather_v")
    buf, _ = _buffer(input, "_all_gather_v", dev)
    out, copied = _buffer(output, "_all_gather_v", dev)
    if _is_nccl(impl):
        top = max(counts)
        padded = flow.zeros(top, dtype=buf.dtype, device=dev)
        padded[:counts[me]] = buf.reshape(-1)
        every = flow.empty(n * top, dtype=buf.dtype, device=dev)
        impl.all_gather(padded, every)
        with flow.no_grad():
            out.copy_(flow.cat([every[i * top:i * top + c] for i, c in enumerate(counts)]))
    else:
        agree_v(g, impl, "all_gather_v", buf.dtype, [counts[me]] * n, counts)
        impl.all_gather_v(buf, out, counts)
    _write_back(output, out, copied)


def _all_to_all_v(output, output_counts, input, input_counts, group=None):
    """The uneven all-to-all (boxing's S(i) -> S(j) and reduce-scatter): input (flat) holds
    input_counts[j] elements for member j, packed in group rank order; output (flat) receives
    output_counts[j] from member j. Gloo moves exactly those; NCCL's travel padded."""
    g = _group(group)
    if g is None:
        return
    n = g.size()
    ins, outs = [int(c) for c in input_counts], [int(c) for c in output_counts]
    if len(ins) != n or len(outs) != n or sum(ins) != input.numel() or sum(outs) != output.numel():
        raise ValueError(f"distributed._all_to_all_v: {n} counts a side summing to the input's {input.numel()} and "
                         f"the output's {output.numel()} elements, got {ins} and {outs}")
    impl, dev = _route(g, input, "_all_to_all_v")
    buf, _ = _buffer(input, "_all_to_all_v", dev)
    out, copied = _buffer(output, "_all_to_all_v", dev)
    if _is_nccl(impl):
        pieces = list(flow.split(buf.reshape(-1), ins))
        got = [flow.empty(c, dtype=buf.dtype, device=dev) for c in outs]
        all_to_all(got, pieces, group)
        with flow.no_grad():
            out.copy_(flow.cat(got))
    else:
        agree_v(g, impl, "all_to_all_v", buf.dtype, ins, outs)
        impl.all_to_all_v(buf, ins, out, outs)
    _write_back(output, out, copied)


def _max_over(g, value):
    t = flow.tensor([value], dtype=flow.int64)
    all_reduce(t, ReduceOp.MAX, g)
    return t.item()


def barrier(group=None, async_op=False, device_ids=None):
    """Returns when every process of the group has called it."""
    g = _group(group)
    if g is not None:
        if g._gloo is not None:
            g._gloo.barrier()
        for nccl in g._nccl.values():
            nccl.barrier()
    return _done([], async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that says who did not come: every process checks in through the store; the
    group's rank 0 waits up to `timeout` (the group's by default) and raises a RuntimeError naming
    the missing ranks (the first one, or all with wait_all_ranks), the others raise when rank 0
    does not release them. Slower than barrier(): for debugging hangs, as PyTorch's."""
    import time
    from ._pg import _State, _store_timeout
    g = _group(group)
    if g is None:
        return
    g._monitored += 1
    key = f"{g._prefix}/monitored_barrier/{g._monitored}"
    store = _State.store
    t = _store_timeout(timeout) if timeout is not None else _State.timeout
    store.set(f"{key}/{g.rank()}", b"1")
    if g.rank() != 0:
        try:
            store.wait([f"{key}/done"], t)
        except RuntimeError:
            raise RuntimeError(f"distributed.monitored_barrier: rank {g._ranks[g.rank()]} was not released by rank "
                               f"{g._ranks[0]} within {t:g} s (rank {g._ranks[0]} or another process did not "
                               "arrive)") from None
        return
    deadline = time.monotonic() + t
    missing = list(range(1, g.size()))
    while missing:
        missing = [r for r in missing if not store.check([f"{key}/{r}"])]
        if missing and time.monotonic() > deadline:
            named = missing if wait_all_ranks else missing[:1]
            who = ", ".join(str(g._ranks[r]) for r in named)
            raise RuntimeError(f"distributed.monitored_barrier: rank{'s' if len(named) > 1 else ''} {who} failed to "
                               f"pass monitoredBarrier in {t:g} s")
        if missing:
            time.sleep(0.01)
    store.set(f"{key}/done", b"1")


def isend(tensor, dst, group=None, tag=0, group_dst=None):
    """Starts sending `tensor` to dst; the returned Work's wait() completes it."""
    g = _group(group)
    if g is None:
        return None
    peer = group_dst if group_dst is not None else _peer(g, dst, "dst")
    impl, dev = _route(g, tensor, "send")
    buf, _ = _buffer(tensor, "send", dev)
    if _is_nccl(impl):  # enqueued on the stream: done as far as the host is concerned
        impl.send(buf, peer)
        return Work([tensor], _Done(peer), keep=buf)
    return Work([tensor], impl.isend(buf, peer, int(tag)), keep=buf)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Starts receiving into `tensor` from src (any rank when None); complete with wait()."""
    g = _group(group)
    if g is None:
        return None
    peer = group_src if group_src is not None else (-1 if src is None else _peer(g, src, "src"))
    impl, dev = _route(g, tensor, "recv")
    buf, copied = _buffer(tensor, "recv", dev)
    if _is_nccl(impl):
        impl.recv(buf, peer)
        pending = _Done(peer)
    else:  # (size and dtype checked against the sender's: Note [Checked transfers])
        pending = impl.irecv(buf, peer, int(tag))
    return Work([tensor], pending, lambda: _write_back(tensor, buf, copied))


def send(tensor, dst, group=None, tag=0, group_dst=None):
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into `tensor`; returns the sender's rank (in the world, as PyTorch)."""
    g = _group(group)
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return g._ranks[work.source_rank()]


class P2POp:
    """One operation of batch_isend_irecv: P2POp(dist.isend or dist.irecv, tensor, peer)."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("P2POp: op must be distributed.isend or distributed.irecv")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer


def batch_isend_irecv(p2p_op_list):
    """Starts every operation, then returns their Works (wait on each)."""
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works


# Python objects travel pickled, as uint8 tensors; their lengths first.
def _to_bytes_tensor(obj):
    data = pickle.dumps(obj)
    return flow.from_numpy(np.frombuffer(data, dtype=np.uint8).copy()), len(data)


def _from_bytes_tensor(t, n):
    return pickle.loads(t[:n].numpy().tobytes())


def all_gather_object(object_list, obj, group=None):
    """object_list[i] becomes process i's obj (which must pickle)."""
    g = _group(group)
    if g is None:
        return
    if len(object_list) != g.size():
        raise ValueError(f"distributed.all_gather_object: object_list needs {g.size()} entries")
    data, n = _to_bytes_tensor(obj)
    sizes = flow.empty(g.size(), dtype=flow.int64)
    all_gather_into_tensor(sizes, flow.tensor([n], dtype=flow.int64), g)
    width = int(sizes.max().item())
    padded = flow.zeros(width, dtype=flow.uint8)
    padded[:n] = data
    out = flow.empty((g.size(), width), dtype=flow.uint8)
    all_gather_into_tensor(out, padded, g)
    for i in range(g.size()):
        object_list[i] = _from_bytes_tensor(out[i], int(sizes[i].item()))


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    g = _group(group)
    if g is None:
        return
    gathered = [None] * g.size()
    all_gather_object(gathered, obj, group)
    if g.rank() == _peer(g, dst, "dst"):
        if object_gather_list is None or len(object_gather_list) != g.size():
            raise ValueError(f"distributed.gather_object: dst needs an object_gather_list of {g.size()} entries")
        object_gather_list[:] = gathered


def broadcast_object_list(object_list, src=0, group=None, device=None, group_src=None):
    """Every process's object_list becomes src's (the lists have the same length everywhere)."""
    g = _group(group)
    if g is None:
        return
    root = group_src if group_src is not None else _peer(g, src, "src")
    if g.rank() == root:
        data, n = _to_bytes_tensor(list(object_list))
        size = flow.tensor([n], dtype=flow.int64)
    else:
        size = flow.zeros(1, dtype=flow.int64)
    broadcast(size, group=g, group_src=root)
    if g.rank() != root:
        data = flow.empty(int(size.item()), dtype=flow.uint8)
    broadcast(data, group=g, group_src=root)
    if g.rank() != root:
        object_list[:] = _from_bytes_tensor(data, int(size.item()))


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0, group=None,
                        group_src=None):
    """scatter_object_output_list[0] becomes src's scatter_object_input_list[rank]."""
    g = _group(group)
    if g is None:
        return
    root = group_src if group_src is not None else _peer(g, src, "src")
    objs = [list(scatter_object_input_list) if g.rank() == root else None]
    broadcast_object_list(objs, g._ranks[root], group)
    scatter_object_output_list[0] = objs[0][g.rank()]


def send_object_list(object_list, dst, group=None, device=None):
    data, n = _to_bytes_tensor(list(object_list))
    send(flow.tensor([n], dtype=flow.int64), dst, group)
    send(data, dst, group)


def recv_object_list(object_list, src=None, group=None, device=None):
    size = flow.zeros(1, dtype=flow.int64)
    sender = recv(size, src, group)
    data = flow.empty(int(size.item()), dtype=flow.uint8)
    recv(data, sender, group)
    object_list[:] = _from_bytes_tensor(data, int(size.item()))
    return sender


# Note [Collectives in graphs] (_traced.py): the tensor collectives record themselves into a
# program while nn.Graph traces build(), and do nothing on meta tensors.
# Their errors on a lost connection name the process that failed (Note [Failed processes]).
def _wrap_collectives():
    from ._failures import explained
    from ._traced import traceable, untraceable
    g = globals()
    for name in ("all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor", "gather", "scatter",
                 "reduce_scatter_tensor", "reduce_scatter", "all_to_all_single", "all_to_all", "send",
                 "_all_gather_v", "_all_to_all_v", "barrier"):
        g[name] = explained(g[name], _State)
    for name in ("all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor", "gather", "scatter",
                 "reduce_scatter_tensor", "reduce_scatter", "all_to_all_single", "all_to_all", "send",
                 "_all_gather_v", "_all_to_all_v"):
        g[name] = traceable(g[name], lambda async_op: _done([], async_op))
    g["recv"] = traceable(g["recv"], lambda async_op: -1)
    g["isend"], g["irecv"] = untraceable(g["isend"]), untraceable(g["irecv"])
    g["_all_gather_base"], g["_reduce_scatter_base"] = g["all_gather_into_tensor"], g["reduce_scatter_tensor"]


_wrap_collectives()
