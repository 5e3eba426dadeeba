"""One process of the pipeline tests (tests/test_graph_pipeline.py runs it through the launcher):
a two-stage training graph (``set_stage`` on two placements, gradient accumulation) run in the
1F1B order (Note [1F1B], python/oneflow/nn/graph/pipeline.py) against the same graph run one
micro-batch after another and PyTorch on the whole batch."""
import sys

import numpy as np
import torch

import global_worker as gw
import oneflow as flow
from global_worker import B, RANK, S0, WORLD, X, check, torch_mse, torch_step
from oneflow.nn.graph.pipeline import schedule

CASES = ["one_f_one_b"]
# the stages: every process but the last (data parallel there), then the last
FIRST = flow.placement("cpu", ranks=list(range(max(WORLD - 1, 1))))
SECOND = flow.placement("cpu", ranks=[WORLD - 1])
MICRO = 4


def _stages():
    torch.manual_seed(5)
    t0, t1 = torch.nn.Linear(5, 8), torch.nn.Linear(8, 3)
    f0, f1 = flow.nn.Linear(5, 8), flow.nn.Linear(8, 3)
    for f, t in ((f0, t0), (f1, t1)):
        f.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return f0.to_global(FIRST, B), f1.to_global(SECOND, B), t0, t1


class Staged(flow.nn.Graph):
    """The stages set with set_stage (pipelined), or moved by to_global in build (sequential)."""

    def __init__(self, f0, f1, opt, staged):
        super().__init__()
        self.f0, self.f1, self.staged = f0, f1, staged
        if staged:
            self.f0.config.set_stage(0, FIRST)
            self.f1.config.set_stage(1, SECOND)
        self.add_optimizer(opt)
        self.config.set_gradient_accumulation_steps(MICRO)

    def build(self, x, y):
        h = flow.tanh(self.f0(x))
        out = self.f1(h if self.staged else h.to_global(placement=SECOND, sbp=B))
        loss = ((out - y) ** 2).mean()
        loss.backward()
        return loss


def _run(staged, steps=2):
    f0, f1, t0, t1 = _stages()
    opt = flow.optim.SGD(list(f0.parameters()) + list(f1.parameters()), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(list(t0.parameters()) + list(t1.parameters()), lr=0.1, momentum=0.9)
    graph = Staged(f0, f1, opt, staged)
    losses = []
    for step in range(steps):
        x, y = X((8, 5), 120 + step), X((8, 3), 130 + step)
        loss = graph(flow.tensor(x, placement=FIRST, sbp=S0), flow.tensor(y, placement=SECOND, sbp=B))
        # PyTorch: the mean of the micro-batches' losses, one step
        topt.zero_grad()
        parts = [torch_mse(lambda t: t1(torch.tanh(t0(t))), x[2 * i:2 * i + 2], y[2 * i:2 * i + 2]) for i in range(MICRO)]
        (sum(parts) / MICRO).backward()
        topt.step()
        want = np.array([p.detach().numpy() for p in parts])
        check(loss.to_global(sbp=B), want, B, f"{'1F1B' if staged else 'sequential'} losses {step}")
        losses.append(loss.numpy())
    return graph, f0, f1, t0, t1, losses


def case_one_f_one_b():
    seq, s0, s1, _, _, seq_losses = _run(False)
    assert seq._pipeline_order == [(k, i) for i in range(MICRO) for k in ("F", "B")], seq._pipeline_order
    pipe, p0, p1, t0, t1, losses = _run(True)
    stage = 0 if RANK in FIRST.ranks.tolist() else 1
    assert pipe._pipeline_order == schedule(MICRO, 2, stage), (RANK, pipe._pipeline_order)
    for a, b in zip(losses, seq_losses):  # the same ops in the same order: the same numbers
        np.testing.assert_array_equal(a, b)
    for f, s, t, name in ((p0, s0, t0, "stage 0"), (p1, s1, t1, "stage 1")):
        for (n, p), q, tp in zip(f.named_parameters(), s.parameters(), t.parameters()):
            np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=f"{name} {n}: 1F1B vs sequential")
            check(p, tp.detach().numpy(), B, f"{name} {n} against PyTorch")
    print(f"rank {RANK}: stage {stage} ran {' '.join(k + str(i) for k, i in pipe._pipeline_order)}", flush=True)


if __name__ == "__main__":
    flow.env.init()
    gw.P = flow.placement("cpu", ranks=list(range(WORLD)))
    for case in (CASES if sys.argv[1] == "all" else [sys.argv[1]]):
        globals()["case_" + case]()
    print(f"rank {RANK}: {sys.argv[1]} ok", flush=True)
