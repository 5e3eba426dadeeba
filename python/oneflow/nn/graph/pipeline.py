"""The 1F1B pipeline schedule of a training graph's micro-batches (OneFlow's pipeline parallelism:
``block.config.set_stage(stage_id, placement)`` on the stages' modules and
``config.set_gradient_accumulation_steps(n)``; docs/graph.md "Pipelines").

Note [1F1B]: every process runs the whole program of each micro-batch -- the ops of a stage it is
not part of run on meta components and move nothing (Note [Ranks outside a placement]) -- and the
moves between stages are point-to-point transfers (Note [Placement changes]). Run one micro-batch
after another (forward, backward, next), the stages take turns: the first stage waits while the
last computes. Here a process of stage k of S runs S - 1 - k forwards ahead ("warm-up"), then
alternates one forward and one backward, and ends with the backwards left (the schedule of
PipeDream-Flush / Megatron-LM, which OneFlow's stage scheduling follows):

    stage 0 of 2:  F0 F1 B0 F2 B1 F3 B2 B3
    stage 1 of 2:  F0 B0 F1 B1 F2 B2 F3 B3

so the first stage computes micro-batch i + 1's forward while the last computes micro-batch i's,
and at most S - k activations of a micro-batch are alive on stage k (GPipe: all n). The sends are
deferred (transfer.DeferredSends: waited for at the end of the call), or stage 0 would block
sending F1's activation that stage 1 takes only after stage 0 has received B0's gradient. Every
stage runs each micro-batch's backward in order 0, 1, ..., so the gradients accumulate in the
order of the sequential run and the results are the same, number for number.

The schedule needs each process's stage: the blocks' ``set_stage`` ids and placements (a graph
without them runs its micro-batches one after another, and so does one whose
``config.set_pipeline_schedule("sequential")``: the A/B switch). A process in two stages' placements, or
stages on placements that share processes, would run two schedules at once: those graphs run
sequentially too. A process in no stage takes the last stage's schedule (it moves nothing)."""
import contextlib

from ..._global.transfer import DeferredSends


def stages(graph):
    """[(stage_id, placement)] of the graph's blocks and their tensors with set_stage, by stage id
    (one placement per id), or [] when none has one."""
    from .block import _configs, tensor_stage
    found = {}

    def add(stage_id, placement):
        if stage_id is None or placement is None:
            return
        have = found.setdefault(stage_id, placement)
        if have != placement:
            raise ValueError(f"nn.Graph {graph.name}: pipeline stage {stage_id} is set on two "
                             f"placements, {have} and {placement}")
    for block in graph._modules.values():
        module = getattr(block, "origin", block)
        for m in module.modules():
            cfg = _configs.get(m)
            if cfg is not None:
                add(cfg._stage_id, cfg._placement)
            for t in (*m._parameters.values(), *m._buffers.values()):
                stage = tensor_stage(t) if t is not None else None
                if stage is not None:
                    add(*stage)
    return sorted(found.items())


def schedule(n, num_stages, stage):
    """The order [("F" | "B", micro-batch)] in which a process of `stage` (0-based, of
    `num_stages`) runs `n` micro-batches (Note [1F1B])."""
    warm = min(num_stages - 1 - stage, n)
    order = [("F", i) for i in range(warm)]
    for i in range(n - warm):
        order += [("F", warm + i), ("B", i)]
    return order + [("B", i) for i in range(n - warm, n)]


def _my_stage(graph):
    """(number of stages, this process's stage), or None where the schedule is sequential."""
    from ... import distributed as dist
    found = stages(graph)
    if len(found) < 2:
        return None
    ranks = [set(pl._ranks) for _, pl in found]
    if any(a & b for i, a in enumerate(ranks) for b in ranks[i + 1:]):
        return None
    me = dist.get_rank()
    mine = [k for k, rs in enumerate(ranks) if me in rs]
    return len(found), (mine[0] if mine else len(found) - 1)


def run_micro_batches(graph, compiled, micro):
    """The program run on each micro-batch's tensors (`micro`): their outputs, in micro-batch
    order; with pipeline stages, in the 1F1B order of this process's stage (Note [1F1B]) unless
    config.set_pipeline_schedule("sequential"). The
    order run is left in graph._pipeline_order."""
    where = _my_stage(graph) if graph.training and graph.config.pipeline_schedule == "1f1b" else None
    if where is None:
        order = [(kind, i) for i in range(len(micro)) for kind in ("F", "B")]
    else:
        order = schedule(len(micro), *where)
    object.__setattr__(graph, "_pipeline_order", order)
    runs, outs = {}, [None] * len(micro)
    with (DeferredSends() if where is not None else contextlib.nullcontext()):
        for kind, i in order:
            if kind == "F":
                runs[i] = graph._execute_in_steps(compiled, micro[i])
                _advance(runs, outs, i)  # (to its backward, or its end where it has none)
            elif runs.get(i) is not None:
                _advance(runs, outs, i)  # (the backward and the rest)
                while runs[i] is not None:  # (a program with several backward() calls)
                    _advance(runs, outs, i)
    return outs


def _advance(runs, outs, i):
    try:
        next(runs[i])
    except StopIteration as done:
        outs[i], runs[i] = done.value, None
