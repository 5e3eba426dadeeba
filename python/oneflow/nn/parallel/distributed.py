"""nn.parallel.DistributedDataParallel: data parallelism over a process group (oneflow.distributed).

Note [DDP buckets]: at construction the parameters and buffers of rank 0 are broadcast, so every
process starts from the same model. The parameters are then cut into buckets, in reverse order
(the order backward tends to finish them), per dtype and device, up to bucket_cap_mb (or
bucket_size parameters, OneFlow's knob). A hook after each parameter's gradient accumulation
counts its bucket down; a full bucket's gradients are flattened and their all-reduce queued on the
group's worker (Note [Collective queue]), so communication overlaps the rest of backward. Buckets
are started strictly in index order, so every process issues the same collectives in the same
order whatever order its backward ran in. When the backward pass ends (a callback queued on the
engine) the remaining buckets are started, then every bucket's result is waited for, divided by
the world size and copied back into the gradients. With find_unused_parameters=True a
parameter without a gradient counts as zero, and the flags of which parameters had one are
all-reduced beside the bucket: a parameter no process used keeps grad None. Inside no_sync() gradients only
accumulate locally; the first backward outside it reduces the sums."""
import contextlib
import weakref

import oneflow as flow

from ... import distributed as dist
from ...distributed import _agree
from ...distributed.algorithms.join import Join, Joinable
from ...autograd import Variable
from ..modules.module import Module


class GradBucket:
    """What a communication hook gets (PyTorch's GradBucket): the bucket's flattened gradients."""

    def __init__(self, index, buffer, params, is_last):
        self._index, self._buffer, self._params, self._last = index, buffer, params, is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer = buffer

    def gradients(self):
        out, offset = [], 0
        for p in self._params:
            out.append(self._buffer[offset:offset + p.numel()].view(p.shape))
            offset += p.numel()
        return out

    def parameters(self):
        return list(self._params)

    def is_last(self):
        return self._last


class _Bucket:
    def __init__(self, params):
        self.params = params
        self.ready = [False] * len(params)
        self.pending = len(params)

    def reset(self):
        self.ready = [False] * len(self.params)
        self.pending = len(self.params)


def _move(x, device):
    if isinstance(x, flow.Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(_move(v, device) for v in x)
    if isinstance(x, dict):
        return {k: _move(v, device) for k, v in x.items()}
    return x


class _DDPJoinHook:
    """DDP's JoinHook (Note [DDP join]): a shadowed iteration, then the final model's sync."""

    def __init__(self, ddp):
        self.ddp = ddp

    def main_hook(self):
        self.ddp._join_active(0, 1)  # (the count said someone still trains)
        self.ddp._shadow()

    def post_hook(self, is_last_joiner):
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
    """Wraps `module`; every process runs its own batch; gradients are averaged across the group
    during backward (Note [DDP buckets]). `.module` is the wrapped model."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, *, bucket_size=None, use_bucket=True, **kwargs):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: expected an nn.Module, got {type(module).__name__}")
        if not dist.is_initialized():
            flow.env.init()  # OneFlow joins the launcher's job implicitly
        self.module = module
        self.device_ids = list(device_ids) if device_ids else None
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.static_graph = static_graph
        self._world = dist.get_world_size(process_group)
        self._root = dist.get_process_group_ranks(process_group)[0] if process_group is not None else 0
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        with flow.no_grad():
            self._broadcast_all(list(module.parameters()) + list(module.buffers()))
        cap = (25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024
        per_bucket = bucket_size if bucket_size is not None else (1 if not use_bucket else None)
        self._buckets, self._where = self._make_buckets(params, cap, per_bucket)
        self._next = 0
        self._finalizing_queued = False
        self._finishers = []
        self._comm_hook = None
        self._join_config = None  # set by algorithms.join.Join (Note [DDP join])
        self._divide_by_initial_world_size = True
        self._divisor = self._world
        self._buffer_root = self._root
        self._handles = [p.register_post_accumulate_grad_hook(self._grad_ready_hook(p)) for p in params]

    # -- buckets --------------------------------------------------------------------------------
    @staticmethod
    def _make_buckets(params, cap, per_bucket):
        buckets, where, cur, size = [], {}, [], 0
        for p in reversed(params):
            nbytes = p.numel() * p.element_size()
            full = per_bucket is not None and len(cur) >= per_bucket
            # (the first bucket holds at most 1 MiB, as PyTorch's: its reduction starts early)
            limit = min(cap, 1 << 20) if not buckets else cap
            if cur and (full or (per_bucket is None and size + nbytes > limit) or p.dtype != cur[0].dtype
                        or p.device != cur[0].device):
                buckets.append(_Bucket(cur))
                cur, size = [], 0
            cur.append(p)
            size += nbytes
        if cur:
            buckets.append(_Bucket(cur))
        for b, bucket in enumerate(buckets):
            for i, p in enumerate(bucket.params):
                where[id(p)] = (b, i)
        return buckets, where

    def _grad_ready_hook(self, param):
        key = id(param)
        # (a weak reference: the parameter keeps its hook, and a strong one back to the wrapper
        # would be a cycle through C++ that Python's collector cannot see)
        owner = weakref.ref(self)

        def hook(p):
            self = owner()
            if self is None or not self.require_backward_grad_sync:
                return
            if not self._finalizing_queued:
                self._finalizing_queued = True
                Variable._execution_engine.queue_callback(self._finish_backward)
            b, i = self._where[key]
            bucket = self._buckets[b]
            if not bucket.ready[i]:
                bucket.ready[i] = True
                bucket.pending -= 1
            while self._next < len(self._buckets) and self._buckets[self._next].pending == 0:
                self._finishers.append(self._reduce(self._buckets[self._next]))
                self._next += 1
        return hook

    def _finish_backward(self):
        try:
            for bucket in self._buckets[self._next:]:
                if bucket.pending and not self.find_unused_parameters:
                    names = {id(p): n for n, p in self.module.named_parameters()}
                    missing = [names.get(id(p), "?") for p, r in zip(bucket.params, bucket.ready) if not r]
                    raise RuntimeError(
                        "DistributedDataParallel: parameters received no gradient in this backward pass: "
                        f"{', '.join(missing)}. Every process must produce a gradient for every parameter, or "
                        "pass find_unused_parameters=True to DistributedDataParallel.")
                self._finishers.append(self._reduce(bucket))
            for finish in self._finishers:  # in bucket order, as they were started
                finish()
        finally:
            self._finishers = []
            for bucket in self._buckets:
                bucket.reset()
            self._next = 0
            self._finalizing_queued = False

    def register_comm_hook(self, state, hook):
        """hook(state, bucket: GradBucket) -> Future of the bucket's averaged flat gradients, called
        in place of the default all-reduce for every bucket (PyTorch's; ready-made ones in
        oneflow.distributed.algorithms.ddp_comm_hooks.default_hooks)."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if not callable(hook):
            raise TypeError(f"register_comm_hook: hook must be callable, got {type(hook).__name__}")
        self._comm_hook = (state, hook)

    def _reduce(self, bucket):
        """Starts the bucket's reduction (queued behind the group's collectives, Note [Collective
        queue]: backward goes on meanwhile) and returns what finishes it at the end of backward."""
        params = bucket.params
        ref = params[0]
        with flow.no_grad(), _agree.trusted():
            flat = flow.cat([(p.grad if p.grad is not None else flow.zeros_like(p)).reshape(-1)
                             for p in params]).detach()
            flags = None
            if self.find_unused_parameters:
                flags = flow.tensor([float(p.grad is not None) for p in params], dtype=flow.float32, device=ref.device)
                flags_work = dist.all_reduce(flags, group=self.process_group, async_op=True)
            if self._comm_hook is None:
                work = dist.all_reduce(flat, group=self.process_group, async_op=True)

                divisor = self._divisor

                def result():
                    work.wait()
                    return flat.div_(divisor)
            else:
                state, hook = self._comm_hook
                index = self._buckets.index(bucket)
                fut = hook(state, GradBucket(index, flat, params, index == len(self._buckets) - 1))
                if not hasattr(fut, "wait"):
                    raise RuntimeError("DistributedDataParallel: a communication hook must return a Future, got "
                                       f"{type(fut).__name__}")

                def result():
                    out = fut.wait()
                    return out[0] if isinstance(out, (list, tuple)) else out

        def finish():
            with flow.no_grad():
                reduced = result()
                if flags is not None:
                    flags_work.wait()
                used = flags.tolist() if flags is not None else [1] * len(params)
                offset = 0
                for p, u in zip(params, used):
                    n = p.numel()
                    g = reduced[offset:offset + n].view(p.shape)
                    offset += n
                    if p.grad is not None:
                        p.grad.copy_(g)
                    elif u:
                        p.grad = g.clone()
        return finish

    # -- forward --------------------------------------------------------------------------------
    def _broadcast_all(self, tensors, root=None):
        """Rank 0's (`root`'s) values of `tensors` in every process, one broadcast per dtype and
        device."""
        groups = {}
        for t in tensors:
            if t.numel():
                groups.setdefault((t.dtype, str(t.device)), []).append(t)
        for ts in groups.values():
            flat = flow.cat([t.detach().reshape(-1) for t in ts])
            dist.broadcast(flat, self._root if root is None else root, group=self.process_group)
            offset = 0
            for t in ts:
                t.copy_(flat[offset:offset + t.numel()].view(t.shape))
                offset += t.numel()

    def forward(self, *inputs, **kwargs):
        if self._finalizing_queued:  # the last backward failed before its end: start afresh
            for bucket in self._buckets:
                bucket.reset()
            self._next, self._finalizing_queued, self._finishers = 0, False, []
        if self._join_config is not None and self.training and flow.is_grad_enabled():
            n = Join.notify_join_context(self)
            if n is not None:
                self._join_active(1, n)
        if self.broadcast_buffers and self.training and self._world > 1:
            buffers = list(self.module.buffers())
            if buffers:
                with flow.no_grad():
                    self._broadcast_all(buffers, self._buffer_root if self._join_config is not None else None)
        if self.device_ids and len(self.device_ids) == 1:
            device = self.device_ids[0]
            device = f"cuda:{device}" if isinstance(device, int) else device
            inputs, kwargs = _move(inputs, device), _move(kwargs, device)
        return self.module(*inputs, **kwargs)

    # -- uneven inputs ----------------------------------------------------------------------------
    # Note [DDP join]: inside join(), every training forward first all-reduces how many processes
    # still train. A process whose inputs ran out leaves the loop and, at the context's exit,
    # shadows the others' iterations -- the same count, buffer broadcast and bucket reductions, in
    # the same order, with zero gradients -- until the count is zero; then the last process to
    # finish sends its parameters to all (theirs stopped changing when they joined).
    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """A context for training on uneven inputs across processes (PyTorch's): gradients are
        averaged over the initial world size (or over the processes still training), and with
        throw_on_early_termination every process raises once one runs out. The same as
        ``algorithms.join.Join([ddp], ...)``."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    # Joinable (algorithms.join)
    def join_hook(self, divide_by_initial_world_size=True, **kwargs):
        self._divide_by_initial_world_size = bool(divide_by_initial_world_size)
        return _DDPJoinHook(self)

    @property
    def join_device(self):
        p = next(self.module.parameters())
        return p.device if p.device.type != "meta" else flow.device("cpu")

    @property
    def join_process_group(self):
        return self.process_group

    def _join_active(self, active, n):
        """An iteration inside Join with n processes training: the gradients' divisor, and (while
        some have stopped) the highest one still training, the buffers' source."""
        if 0 < n < self._world:
            top = flow.tensor([float(dist.get_rank() if active else -1)])
            dist.all_reduce(top, op=dist.ReduceOp.MAX, group=self.process_group)
            self._buffer_root = int(top.item())
        else:
            self._buffer_root = self._root
        self._divisor = self._world if self._divide_by_initial_world_size else max(n, 1)

    def _shadow(self):
        """One iteration of the processes still training, with nothing to add: every bucket's
        reduction with zero gradients (this process used no parameter), whose result -- the
        others' averaged gradients -- lands in .grad as in a real iteration, so that an optimizer
        stepped by a join hook (ZeroRedundancyOptimizer's share) applies the same update."""
        if self.broadcast_buffers and self._world > 1:
            buffers = list(self.module.buffers())
            if buffers:
                with flow.no_grad():
                    self._broadcast_all([b.clone() for b in buffers], self._buffer_root)
        for bucket in self._buckets:
            for p in bucket.params:
                p.grad = None
            self._reduce(bucket)()

    def _sync_final_model(self, is_last_joiner):
        """Every process takes the model of the highest process among the last to stop."""
        owner = flow.tensor([float(dist.get_rank(self.process_group) if is_last_joiner else -1)])
        dist.all_reduce(owner, op=dist.ReduceOp.MAX, group=self.process_group)
        root = int(owner.item())
        ranks = dist.get_process_group_ranks(self.process_group) if self.process_group is not None else None
        with flow.no_grad():
            self._broadcast_all(list(self.module.parameters()) + list(self.module.buffers()),
                                ranks[root] if ranks else root)
        self._divisor = self._world

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside; the first backward after it averages the sums."""
        old, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def extra_repr(self):
        return ""
