"""PowerSGD gradient compression for DDP (PyTorch's powerSGD_hook; Vogels et al., 2019).

Note [PowerSGD]: after `start_powerSGD_iter` plain all-reduces, each gradient matrix M (a
tensor viewed as rows x the rest) of a bucket is replaced by a rank-r approximation averaged over
the processes, with two all-reduces of thin matrices instead of one of M: P = M Q (all-reduced,
then orthonormalised column by column), Q = M^T P (all-reduced), M ~ P Q^T / world. Q starts
random (one seed on every process) and, with warm_start, starts the next iteration where this one
ended (a step of power iteration per training step). With error feedback each process adds what
the last approximation left out of its gradient before compressing. Vectors (biases) and matrices
that would not shrink by `min_compression_rate` go through a plain all-reduce.
`batched_powerSGD_hook` compresses the whole bucket as one square matrix instead."""
import math

import numpy as np

import oneflow as flow

from ... import _pg
from ..._collectives import all_reduce
from . import default_hooks


class PowerSGDState:
    """The hook's state: its settings, the iteration count, each bucket's error and P / Q."""

    __slots__ = ("process_group", "matrix_approximation_rank", "start_powerSGD_iter", "min_compression_rate",
                 "use_error_feedback", "warm_start", "orthogonalization_epsilon", "rng", "error_dict",
                 "p_memory_dict", "q_memory_dict", "iter", "total_numel_before_compression",
                 "total_numel_after_compression", "compression_stats_logging_frequency",
                 "batch_tensors_with_same_shape")

    def __init__(self, process_group, matrix_approximation_rank=1, start_powerSGD_iter=1_000,  # noqa: N803
                 min_compression_rate=2, use_error_feedback=True, warm_start=True, orthogonalization_epsilon=0,
                 random_seed=0, compression_stats_logging_frequency=10_000, batch_tensors_with_same_shape=False):
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError("PowerSGDState: start_powerSGD_iter must be > 1 with use_error_feedback or warm_start "
                             "(the first iterations run plain all-reduces)")
        if matrix_approximation_rank < 1:
            raise ValueError(f"PowerSGDState: matrix_approximation_rank must be >= 1, got {matrix_approximation_rank}")
        self.process_group = process_group
        self.matrix_approximation_rank = int(matrix_approximation_rank)
        self.start_powerSGD_iter = int(start_powerSGD_iter)
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback, self.warm_start = use_error_feedback, warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)  # (the same draws on every process)
        self.error_dict, self.p_memory_dict, self.q_memory_dict = {}, {}, {}
        self.iter = 0
        self.total_numel_before_compression = self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape

    def maybe_increase_iter(self, bucket):
        if bucket.is_last():
            self.iter += 1

    def compression_stats(self):
        """(compression rate, elements before, elements after) over the compressed iterations."""
        after = self.total_numel_after_compression
        rate = self.total_numel_before_compression / after if after else 0
        return rate, self.total_numel_before_compression, after

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__ if k != "process_group"}

    def __setstate__(self, state):
        self.process_group = None
        for k, v in state.items():
            setattr(self, k, v)


def _group(state):
    return state.process_group if state.process_group is not None else _pg.GroupMember.WORLD


def _orthonormalize(p, epsilon):
    """Gram-Schmidt on p's columns, in place."""
    for i in range(p.shape[1]):
        col = p[:, i]
        norm = flow.linalg.norm(col)
        col.div_(norm if epsilon == 0 else norm + epsilon)
        if i + 1 < p.shape[1]:
            rest = p[:, i + 1:]
            rest.sub_(col.unsqueeze(1) * (col @ rest).unsqueeze(0))


def _random(state, shape, like):
    seed = int(state.rng.randint(1_000_000_000))
    g = flow.Generator()
    g.manual_seed(seed)
    return flow.randn(*shape, generator=g, dtype=like.dtype).to(like.device)


def _done(value):
    from ....futures import Future
    fut = Future()
    fut.set_result(value)
    return fut


def _summed(parts, group):
    """Each tensor of `parts` summed over the group, all in one all-reduce of a flat buffer."""
    flat = flow.cat([p.reshape(-1) for p in parts])
    all_reduce(flat, group=group)
    out, offset = [], 0
    for p in parts:
        out.append(flat[offset:offset + p.numel()].reshape(p.shape).clone())
        offset += p.numel()
    return out


def _compress(state, key, matrices, world, group):
    """Each matrix of `matrices` replaced in place by the rank-r approximation of its average."""
    shapes = [(m.shape[0], m.shape[1], min(m.shape[0], m.shape[1], state.matrix_approximation_rank))
              for m in matrices]
    like = matrices[0]
    fresh = key not in state.q_memory_dict or not state.warm_start
    if fresh:
        state.q_memory_dict[key] = [_random(state, (m, r), like) for _, m, r in shapes]
    qs = state.q_memory_dict[key]
    ps = _summed([mat @ q for mat, q in zip(matrices, qs)], group)
    for p in ps:
        _orthonormalize(p, state.orthogonalization_epsilon)
    qs = _summed([mat.t() @ p for mat, p in zip(matrices, ps)], group)
    for mat, p, q in zip(matrices, ps, qs):
        mat.copy_((p @ q.t()).div_(world))
    state.q_memory_dict[key] = qs
    state.p_memory_dict[key] = ps


def _plain_average(state, bucket):
    """Before start_powerSGD_iter: the plain average's future (else None)."""
    if state.iter >= state.start_powerSGD_iter:
        return None
    state.maybe_increase_iter(bucket)
    return default_hooks._allreduce_fut(state.process_group, bucket.buffer())


def _add_error(state, key, buffer):
    """Error feedback: what the last approximation left out added in; the buffer before it is
    compressed (or None without error feedback)."""
    if not state.use_error_feedback:
        return None
    if key not in state.error_dict:
        state.error_dict[key] = flow.zeros_like(buffer)
    buffer.add_(state.error_dict[key])
    return buffer.clone()


def _finish(state, key, buffer, before, bucket):
    """The new error, the memory kept for a warm start, the iteration count; the bucket's future."""
    if before is not None:
        state.error_dict[key] = before - buffer
    if not state.warm_start:
        state.p_memory_dict.pop(key, None)
        state.q_memory_dict.pop(key, None)
    state.maybe_increase_iter(bucket)
    return _done(buffer)


def powerSGD_hook(state, bucket):  # noqa: N802 - PyTorch's name
    """DDP communication hook: PowerSGD compression of the bucket's gradient matrices (Note
    [PowerSGD]); a plain average for the first state.start_powerSGD_iter iterations."""
    early = _plain_average(state, bucket)
    if early is not None:
        return early
    group, buffer = _group(state), bucket.buffer()
    world = group.size()
    key = bucket.index()
    with flow.no_grad():
        before = _add_error(state, key, buffer)
        compress, plain = [], []
        for t in bucket.gradients():
            if t.dim() > 1:
                n, m = t.shape[0], t.numel() // t.shape[0]
                r = min(n, m, state.matrix_approximation_rank)
                if n * m >= (n + m) * r * state.min_compression_rate:
                    compress.append(t.reshape(n, m))
                    state.total_numel_before_compression += n * m
                    state.total_numel_after_compression += (n + m) * r
                    continue
            plain.append(t)
            state.total_numel_before_compression += t.numel()
            state.total_numel_after_compression += t.numel()
        if plain:
            for t, total in zip(plain, _summed(plain, group)):
                t.copy_(total.div_(world))
        if compress:
            _compress(state, key, compress, world, group)
        return _finish(state, key, buffer, before, bucket)


def batched_powerSGD_hook(state, bucket):  # noqa: N802
    """PowerSGD over the whole bucket at once: its flat gradients padded to a square matrix."""
    early = _plain_average(state, bucket)
    if early is not None:
        return early
    group, buffer = _group(state), bucket.buffer()
    world = group.size()
    key = bucket.index()
    total = buffer.numel()
    side = math.ceil(math.sqrt(total))
    with flow.no_grad():
        before = _add_error(state, key, buffer)
        square = flow.zeros(side * side, dtype=buffer.dtype, device=buffer.device)
        square[:total] = buffer
        matrix = square.view(side, side)
        _compress(state, key, [matrix], world, group)
        r = min(side, state.matrix_approximation_rank)
        state.total_numel_before_compression += total
        state.total_numel_after_compression += 2 * side * r
        buffer.copy_(square[:total])
        return _finish(state, key, buffer, before, bucket)
