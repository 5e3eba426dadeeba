"""One process of the pipeline tests (tests/test_graph_pipeline.py runs it through the launcher):
a two-stage training graph (``set_stage`` on two placements, gradient accumulation) run in the
1F1B order (Note [1F1B], python/oneflow/nn/graph/pipeline.py) against the same graph run one
micro-batch after another and PyTorch on the whole batch."""

import numpy as np
import torch

import global_worker as gw
import oneflow as flow
from global_worker import B, RANK, S0, WORLD, X, check, torch_mse, torch_step
from oneflow.nn.graph.pipeline import schedule

CASES = ["one_f_one_b", "stage_per_rank"]
MICRO = 4


def _layouts(case):
    """The stages' placements: two stages, every process but the last (data parallel there) and
    the last; or one stage per process."""
    if case == "one_f_one_b":
        return [flow.placement("cpu", ranks=list(range(max(WORLD - 1, 1)))), flow.placement("cpu", ranks=[WORLD - 1])]
    return [flow.placement("cpu", ranks=[r]) for r in range(WORLD)]


def _stages(placements):
    """A Linear per stage (5 -> 8 -> ... -> 3), on its placement, and the PyTorch twins."""
    torch.manual_seed(5)
    sizes = [5] + [8] * (len(placements) - 1) + [3]
    flows, torches = [], []
    for k, pl in enumerate(placements):
        t, f = torch.nn.Linear(sizes[k], sizes[k + 1]), flow.nn.Linear(sizes[k], sizes[k + 1])
        f.load_state_dict({n: flow.tensor(v.detach().numpy()) for n, v in t.state_dict().items()})
        flows.append(f.to_global(pl, B))
        torches.append(t)
    return flows, torches


class Staged(flow.nn.Graph):
    """The stages set with set_stage (pipelined, or sequential by the schedule switch), or moved
    by to_global in build (sequential)."""

    def __init__(self, mods, placements, opt, staged, schedule="1f1b"):
        super().__init__()
        self.mods, self.placements, self.staged = flow.nn.ModuleList(mods), placements, staged
        if staged:
            for k, pl in enumerate(placements):
                self.mods[k].config.set_stage(k, pl)
        self.config.set_pipeline_schedule(schedule)
        self.add_optimizer(opt)
        self.config.set_gradient_accumulation_steps(MICRO)

    def build(self, x, y):
        h = x
        for k, m in enumerate(self.mods):
            if k and not self.staged:
                h = h.to_global(placement=self.placements[k], sbp=B)
            h = m(h)
            if k + 1 < len(self.placements):
                h = flow.tanh(h)
        loss = ((h - y) ** 2).mean()
        loss.backward()
        return loss


def _torch_model(torches):
    def run(t):
        for k, m in enumerate(torches):
            t = m(t)
            if k + 1 < len(torches):
                t = torch.tanh(t)
        return t
    return run


def _run(case, staged, steps=2, schedule="1f1b"):
    placements = _layouts(case)
    flows, torches = _stages(placements)
    opt = flow.optim.SGD([p for f in flows for p in f.parameters()], lr=0.1, momentum=0.9)
    topt = torch.optim.SGD([p for t in torches for p in t.parameters()], lr=0.1, momentum=0.9)
    graph = Staged(flows, placements, opt, staged, schedule)
    losses = []
    for step in range(steps):
        x, y = X((8, 5), 120 + step), X((8, 3), 130 + step)
        loss = graph(flow.tensor(x, placement=placements[0], sbp=S0), flow.tensor(y, placement=placements[-1], sbp=B))
        # PyTorch: the mean of the micro-batches' losses, one step
        topt.zero_grad()
        parts = [torch_mse(_torch_model(torches), x[2 * i:2 * i + 2], y[2 * i:2 * i + 2]) for i in range(MICRO)]
        (sum(parts) / MICRO).backward()
        topt.step()
        want = np.array([p.detach().numpy() for p in parts])
        check(loss.to_global(sbp=B), want, B, f"{case} {schedule if staged else 'to_global'} losses {step}")
        losses.append(loss.numpy())
    return graph, placements, flows, torches, losses


def _compare(case):
    """The pipelined graph against the sequential ones -- without stages, and the staged graph with
    config.set_pipeline_schedule("sequential") -- (the same numbers) and PyTorch; the order this
    process ran."""
    in_order = [(k, i) for i in range(MICRO) for k in ("F", "B")]
    seq, _, seq_mods, _, seq_losses = _run(case, False)
    assert seq._pipeline_order == in_order, seq._pipeline_order
    off, _, off_mods, _, off_losses = _run(case, True, schedule="sequential")
    assert off._pipeline_order == in_order, off._pipeline_order
    pipe, placements, mods, torches, losses = _run(case, True)
    stage = [k for k, pl in enumerate(placements) if RANK in pl.ranks.tolist()][0]
    assert pipe._pipeline_order == schedule(MICRO, len(placements), stage), (RANK, pipe._pipeline_order)
    for a, b, c in zip(losses, seq_losses, off_losses):  # the same ops in the same order: the same numbers
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    for k, (f, s, o, t) in enumerate(zip(mods, seq_mods, off_mods, torches)):
        for (n, p), q, r, tp in zip(f.named_parameters(), s.parameters(), o.parameters(), t.parameters()):
            np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=f"stage {k} {n}: 1F1B vs sequential")
            np.testing.assert_array_equal(p.numpy(), r.numpy(), err_msg=f"stage {k} {n}: 1F1B vs the switch off")
            check(p, tp.detach().numpy(), B, f"stage {k} {n} against PyTorch")
    print(f"rank {RANK}: {case}: stage {stage} of {len(placements)} ran "
          f"{' '.join(k + str(i) for k, i in pipe._pipeline_order)}", flush=True)


def case_one_f_one_b():
    _compare("one_f_one_b")


def case_stage_per_rank():
    _compare("stage_per_rank")


if __name__ == "__main__":
    gw.run_worker(globals(), CASES)
