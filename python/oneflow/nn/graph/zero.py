"""ZeRO for data-parallel global graphs (``graph.config.enable_zero``; OneFlow's optimizer
placement optimization, https://arxiv.org/abs/1910.02054; docs/graph.md "ZeRO").

A data-parallel parameter is a global tensor broadcast over a 1-D placement: every rank holds all
of it, its gradient and its optimizer state. With ZeRO each such parameter of at least
``shard_min_size`` elements (and at least one row per rank) is split along dim 0 over the ranks
(``split(0)``) for what its stage shards:

- stage 1, optimizer state: the optimizer steps each parameter laid out as ``split(0)`` (its
  gradient too: each rank's rows), so the state it creates (momentum, Adam's moments) is split and
  stays split, and each rank updates its rows only; the parameter is then gathered back to
  broadcast (an all-gather) for the next forward.
- stage 2, and gradients: as stage 1, and the backward's reduction of each such gradient over the
  ranks is a reduce-scatter that leaves each rank only its rows (Note [Sharded gradients]).
- stage 3, and parameters: the parameters are laid out ``split(0)`` before the graph is traced and
  stay so; the graph's ops gather them where their SBP signatures need them (the boxing is part of
  the program, as OneFlow inserts it), their gradients come split -- each use's parts
  reduce-scattered (boxing._GatherForPartialUse) -- and the step runs on the split tensors.

The logical values are the same in every stage, so training follows the unsharded graph (and
PyTorch) number for number up to the order of the sums; ``graph._zero_stats`` is what this rank
held at its last step (bytes of parameters, gradients and optimizer state).
"""
import contextlib

# Note [Sharded gradients]: in a data-parallel graph a broadcast parameter's gradient is the sum of
# every rank's part. Unsharded, boxing._finish_leaves all-reduces the parts at the end of the
# backward pass (one all-reduce per placement and dtype, as DDP's buckets): every rank receives
# 2 (n - 1) / n of the gradient and holds all of it. With ZeRO stage 2 each rank's optimizer
# updates only its rows, so it needs only its rows of the sum: the parts of the shardable
# parameters are reduce-scattered instead (boxing._finish_sharded_leaves: one alltoallv per bucket
# of about BUCKET_BYTES, the blocks of every parameter of the bucket packed per rank), each rank
# receiving (n - 1) / n of the gradient, half of the all-reduce, and keeping 1 / n of it. The
# whole .grad is dropped as the shard is taken; micro-batches of gradient accumulation add to the
# shards. The step then runs on the split gradient (zero_update), and the all-gather of the
# updated parameters is the other half of the all-reduce's traffic (ZeRO's claim: the same
# volume as data parallelism, the gradient never held whole after the pass). The order of the
# sums is the collective's: results equal the unsharded graph's up to float rounding.
BUCKET_BYTES = 1 << 22

ZERO_STAGES = (1, 2, 3)
RESTORE_LEVELS = (0, 1, 2)


def check_args(mode, stage, shard_min_size, shard_restore_level):
    if not isinstance(mode, bool):
        raise TypeError(f"enable_zero: mode must be a bool, got {type(mode).__name__}")
    if isinstance(stage, bool) or not isinstance(stage, int) or stage not in ZERO_STAGES:
        raise ValueError(f"enable_zero: stage must be 1, 2 or 3, got {stage!r}")
    if isinstance(shard_min_size, bool) or not isinstance(shard_min_size, int) or shard_min_size < 1:
        raise ValueError(f"enable_zero: shard_min_size must be a positive int, got {shard_min_size!r}")
    if shard_restore_level not in RESTORE_LEVELS or isinstance(shard_restore_level, bool):
        raise ValueError(f"enable_zero: shard_restore_level must be 0, 1 or 2, got {shard_restore_level!r}")


def _is_global(t):
    return getattr(type(t), "_global_tensor_", False)


def _shardable(p, min_size):
    """A broadcast parameter on a 1-D placement of several ranks, big enough."""
    if not _is_global(p) or len(p.placement.hierarchy) != 1:
        return False
    ranks = p.placement.hierarchy[0]
    return (ranks > 1 and p.dim() >= 1 and p.shape[0] >= ranks and p.numel() >= min_size
            and all(s._kind == "B" for s in p.sbp))


def _params(graph):
    seen = {}
    for opt, _ in graph._optimizers:
        for group in opt.param_groups:
            for p in group["params"]:
                seen[id(p)] = p
    return list(seen.values())


def shard_parameters(graph):
    """Stage 3, before tracing: each shardable parameter laid out split(0) in place (its identity,
    the optimizers' references, kept)."""
    zero = graph.config._zero
    if zero is None or zero[0] < 3:
        return
    from ..._grad_mode import no_grad
    from ...sbp import split
    with no_grad():
        for p in _params(graph):
            if _shardable(p, zero[1]):
                p.data = p.to_global(sbp=split(0))


def _local_bytes(t):
    if t is None:
        return 0
    local = t.to_local() if _is_global(t) else t
    return local.numel() * local.element_size()


def _stage(graph):
    zero = graph.config._zero
    return 0 if zero is None else zero[0]


_NOTHING = contextlib.nullcontext()


def sharded_gradients(graph):
    """Around a call's backward passes of a ZeRO stage-2 training graph (Note [Sharded
    gradients]): its shardable parameters' gradients reduce-scattered into `graph._grad_shards`
    ({id(parameter): this rank's rows}, read by zero_update); elsewhere nothing (a shared empty
    context: a training call pays no more)."""
    return _sharding(graph) if _stage(graph) == 2 else _NOTHING


@contextlib.contextmanager
def _sharding(graph):
    from ..._global import boxing
    params = [p for p in _params(graph) if _shardable(p, graph.config._zero[1])]
    by_leaf = {id(p.to_local()): p for p in params}
    shards = {}
    boxing._sharded_leaves[0] = (by_leaf, shards, BUCKET_BYTES)
    try:
        yield
    finally:
        boxing._sharded_leaves[0] = None
        object.__setattr__(graph, "_grad_shards", {id(by_leaf[k]): v for k, v in shards.items()})


@contextlib.contextmanager
def zero_update(graph, opt):
    """Around an optimizer's step (stages 1 and 2): its shardable parameters and their gradients
    laid out split(0), gathered back to broadcast after."""
    zero = graph.config._zero
    if zero is None:
        yield
        return
    from ..._grad_mode import no_grad
    from ...sbp import broadcast, split
    stage, min_size = zero[0], zero[1]
    sharded = []
    shards = getattr(graph, "_grad_shards", {})
    with no_grad():
        for group in opt.param_groups:
            for p in group["params"]:
                if stage == 2 and id(p) in shards:  # (reduce-scattered: Note [Sharded gradients])
                    from ..._global.tensor import GlobalTensor
                    g = GlobalTensor(shards.pop(id(p)), p.placement, (split(0),), tuple(p.shape))
                    if p.grad is not None:  # (a complete part the pass left in .grad: its rows)
                        g = g + p.grad.to_global(sbp=split(0))
                    p.grad = None
                    p.data = p.to_global(sbp=split(0))
                    p.grad = g
                    sharded.append(p)
                elif stage < 3 and p.grad is not None and _shardable(p, min_size):
                    g = p.grad.to_global(sbp=split(0))  # (this rank's rows: no communication)
                    if stage == 2:
                        g = g.clone()  # (not a view: the whole gradient goes before the step)
                    p.grad = None
                    p.data = p.to_global(sbp=split(0))
                    p.grad = g
                    sharded.append(p)
    stats = {"param_bytes": 0, "grad_bytes": 0, "state_bytes": 0}
    try:
        yield
    finally:
        for group in opt.param_groups:
            for p in group["params"]:
                stats["param_bytes"] += _local_bytes(p)
                stats["grad_bytes"] += _local_bytes(p.grad)
                for v in opt.state.get(p, {}).values():
                    if hasattr(v, "numel") and v.dim() > 0:
                        stats["state_bytes"] += _local_bytes(v)
        with no_grad():
            for p in sharded:
                p.grad = None
                p.data = p.to_global(sbp=broadcast)  # (all-gather)
        object.__setattr__(graph, "_zero_stats", stats)
