"""One process of the placement tests (tests/test_global_tensor.py runs it through the launcher):
global tensors on placements over some of the job's processes or in another order, moves between
placements (Note [Ranks outside a placement]) and a two-stage pipeline trained against PyTorch."""
import os
import tempfile

import numpy as np
import torch

import global_worker as gw
import oneflow as flow
from global_worker import B, PS, RANK, S0, WORLD, X, check, torch_mse, torch_step

CASES = ["subsets", "one_rank_split", "factories", "moves", "pipeline", "pipeline_graph", "staged_graph", "save_load"]
LAST = flow.placement("cpu", ranks=[WORLD - 1])
REVERSED = flow.placement("cpu", ranks=list(reversed(range(WORLD))))
# a pipeline's stages: the first half of the processes (data parallel), then the rest
FIRST = flow.placement("cpu", ranks=list(range(max(WORLD - 1, 1))))
SECOND = LAST


def case_subsets():
    """Every process runs each op; those outside the placement hold no component and still read
    the value (numpy / item / printing are collective over the job)."""
    x = X((5, 4))
    g = flow.tensor(x, placement=LAST, sbp=B)
    check(g, x, B, "broadcast on the last rank")
    check((g * 2 + 1).sum(0), (x * 2 + 1).sum(0), B, "ops on the last rank")
    r = flow.tensor(x, placement=REVERSED, sbp=S0)
    check(r, x, S0, "split over the ranks in reverse order")
    check(flow.relu(r) @ flow.tensor(X((4, 3), 1), placement=REVERSED, sbp=B), np.maximum(x, 0) @ X((4, 3), 1), S0,
          "matmul in reverse order")
    check(r.sum(), x.sum(), PS, "partial sum in reverse order", atol=1e-4)
    check(r.to_global(sbp=B), x, B, "gathered in reverse order")
    assert "placement=oneflow.placement" in repr(g) and abs(g.sum().item() - float(x.sum())) < 1e-4
    z = flow.zeros(3, 2, placement=LAST, sbp=S0)
    check(z, np.zeros((3, 2), np.float32), S0, "factory on the last rank")
    if WORLD > 1:
        try:
            g + r
        except RuntimeError as e:
            assert "different placements" in str(e)
        else:
            raise AssertionError("an op over two placements")


def case_one_rank_split():
    """to_global of a local tensor onto a placement of one process with a split SBP: every process
    learns the logical shape (the one inside the placement used to skip the size exchange that the
    others waited in, and the job hung)."""
    x = X((5, 3), 4)
    for ranks in ([0], [WORLD - 1]):
        pl = flow.placement("cpu", ranks=ranks)
        for s in (S0, flow.sbp.split(1)):
            g = flow.tensor(x).to_global(placement=pl, sbp=s)
            assert tuple(g.shape) == x.shape, (ranks, s, tuple(g.shape))
            check(g, x, s, f"to_global on {ranks} as {s}")
            check(g * 2, x * 2, s, f"an op on {ranks} as {s}")
        g = flow.tensor(x).local_to_global(placement=pl, sbp=S0, check_meta=False)
        check(g, x, S0, f"local_to_global without the size exchange on {ranks}")


def case_factories():
    """Every factory takes placement= / sbp= (the logical tensor made once: random ones are one
    draw), as OneFlow's."""
    every = flow.placement("cpu", ranks=list(range(WORLD)))
    for make, want, sbp in [
        (lambda **k: flow.arange(1, 8, 2, **k), np.arange(1, 8, 2), S0),
        (lambda **k: flow.full((3, 2), 1.5, **k), np.full((3, 2), 1.5, np.float32), flow.sbp.split(1)),
        (lambda **k: flow.linspace(0, 1, 5, **k), np.linspace(0, 1, 5, dtype=np.float32), B),
        (lambda **k: flow.logspace(0, 2, 3, **k), np.logspace(0, 2, 3, dtype=np.float32), S0),
        (lambda **k: flow.eye(3, 4, **k), np.eye(3, 4, dtype=np.float32), S0),
        (lambda **k: flow.zeros(2, 3, **k), np.zeros((2, 3), np.float32), B),
    ]:
        for pl in (every, LAST):
            check(make(placement=pl, sbp=sbp), want, sbp, f"factory on {pl}")
    for make in (lambda **k: flow.randint(0, 100, (6, 2), **k), lambda **k: flow.randperm(6, **k),
                 lambda **k: flow.normal(0.0, 1.0, (6,), **k), lambda **k: flow.rand(6, **k)):
        g = make(placement=every, sbp=S0)
        full = g.numpy()
        check(g, full, S0, "a random factory's one logical draw")
        assert make(placement=every, sbp=S0).numpy().tolist() != full.tolist(), "two draws alike"
    r = flow.arange(4.0, placement=every, sbp=B, requires_grad=True)
    assert r.requires_grad and r.is_leaf
    for bad, msg in [(lambda: flow.arange(3, placement=every), "both placement and sbp"),
                     (lambda: flow.full((2,), 1.0, sbp=B), "both placement and sbp"),
                     (lambda: flow.eye(2, device="cpu", placement=every, sbp=B), "not both")]:
        try:
            bad()
        except TypeError as e:
            assert msg in str(e), str(e)
        else:
            raise AssertionError(msg)


def case_moves():
    """to_global(placement=...) moves the logical value (any SBP to any SBP); the gradient comes
    back to the first placement."""
    x = X((6, 3), 2)
    src = flow.tensor(x, placement=LAST, sbp=B, requires_grad=True)
    everyone = flow.placement("cpu", ranks=list(range(WORLD)))
    moved = src.to_global(placement=everyone, sbp=S0)
    check(moved, x, S0, "moved from the last rank to every rank, split")
    back = moved.to_global(placement=REVERSED, sbp=flow.sbp.split(1))
    check(back, x, flow.sbp.split(1), "moved again, split by columns, in reverse order")
    (back * back).sum().backward()
    check(src.grad, 2 * x, B, "the gradient moved back")
    first = flow.tensor(x, placement=FIRST, sbp=S0)
    check(first.to_global(placement=LAST), x, S0, "a split tensor moved keeps its sbp")


def _stages():
    torch.manual_seed(3)
    t0, t1 = torch.nn.Linear(5, 8), torch.nn.Linear(8, 3)
    f0, f1 = flow.nn.Linear(5, 8), flow.nn.Linear(8, 3)
    for f, t in ((f0, t0), (f1, t1)):
        f.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return f0.to_global(FIRST, B), f1.to_global(SECOND, B), t0, t1


def case_pipeline():
    """Two stages on two placements (the first data parallel over its processes): activations move
    forward, gradients back; SGD over both stages follows PyTorch on the whole batch."""
    f0, f1, t0, t1 = _stages()
    opt = flow.optim.SGD(list(f0.parameters()) + list(f1.parameters()), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(list(t0.parameters()) + list(t1.parameters()), lr=0.1, momentum=0.9)
    for step in range(3):
        x, y = X((7, 5), 60 + step), X((7, 3), 70 + step)
        h = flow.tanh(f0(flow.tensor(x, placement=FIRST, sbp=S0)))
        out = f1(h.to_global(placement=SECOND, sbp=B))
        loss = ((out - flow.tensor(y, placement=SECOND, sbp=B)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        check(loss, torch_step(topt, torch_mse(lambda t: t1(torch.tanh(t0(t))), x, y)), B, f"pipeline loss {step}")
    for f, t, name in ((f0, t0, "stage 0"), (f1, t1, "stage 1")):
        for (n, p), tp in zip(f.named_parameters(), t.parameters()):
            check(p, tp.detach().numpy(), B, f"{name} {n}")


class PipelineGraph(flow.nn.Graph):
    def __init__(self, f0, f1, opt):
        super().__init__()
        self.f0, self.f1 = f0, f1
        self.add_optimizer(opt)

    def build(self, x, y):
        out = self.f1(flow.tanh(self.f0(x)).to_global(placement=SECOND, sbp=B))
        loss = ((out - y) ** 2).mean()
        loss.backward()
        return loss


def case_pipeline_graph():
    """The pipeline as one nn.Graph: on a process outside a stage, the stage's ops are recorded on
    its meta components; the moves are steps of the program."""
    f0, f1, t0, t1 = _stages()
    opt = flow.optim.Adam(list(f0.parameters()) + list(f1.parameters()), lr=0.01)
    topt = torch.optim.Adam(list(t0.parameters()) + list(t1.parameters()), lr=0.01)
    graph = PipelineGraph(f0, f1, opt)
    for step in range(3):
        x, y = X((7, 5), 80 + step), X((7, 3), 90 + step)
        loss = graph(flow.tensor(x, placement=FIRST, sbp=S0), flow.tensor(y, placement=SECOND, sbp=B))
        want = torch_step(topt, torch_mse(lambda t: t1(torch.tanh(t0(t))), x, y))
        check(loss, want, B, f"pipeline graph loss {step}")
    assert len(graph._compiled) == 1
    check(f0.weight, t0.weight.detach().numpy(), B, "stage 0 weight after the graph's steps")


class StagedGraph(flow.nn.Graph):
    """The pipeline with OneFlow's stage configs: the move between the stages is the second
    stage's input transfer (Note [Block configs]), and the first stage is checkpointed."""

    def __init__(self, f0, f1, opt):
        super().__init__()
        self.stages = flow.nn.Sequential(f0, flow.nn.Tanh(), f1)
        self.stages[0].config.set_stage(0, FIRST)
        self.stages[0].config.activation_checkpointing = True
        self.stages[2].config.set_stage(1, SECOND)
        self.add_optimizer(opt)

    def build(self, x, y):
        loss = ((self.stages(x) - y) ** 2).mean()
        loss.backward()
        return loss


def case_staged_graph():
    f0, f1, t0, t1 = _stages()
    graph = StagedGraph(f0, f1, flow.optim.SGD(list(f0.parameters()) + list(f1.parameters()), lr=0.1))
    topt = torch.optim.SGD(list(t0.parameters()) + list(t1.parameters()), lr=0.1)
    assert graph.stages[2].config.stage_id == 1 and graph.stages[2].config.stage_placement == SECOND
    for step in range(3):
        x, y = X((7, 5), 100 + step), X((7, 3), 110 + step)
        loss = graph(flow.tensor(x, placement=FIRST, sbp=S0), flow.tensor(y, placement=SECOND, sbp=B))
        check(loss, torch_step(topt, torch_mse(lambda t: t1(torch.tanh(t0(t))), x, y)), PS, f"staged loss {step}")
    check(f0.weight, t0.weight.detach().numpy(), B, "stage 0 weight (checkpointed)")


def case_save_load():
    """A module on some processes saved by a process outside it, and loaded back into it."""
    path = os.path.join(tempfile.gettempdir(), f"placement_ckpt_{os.environ['MASTER_PORT']}")
    f0, f1, _, t1 = _stages()
    flow.save(f1.state_dict(), path, global_dst_rank=0)
    f1.weight.data.fill_(0.0) if RANK in SECOND.ranks.tolist() else None
    g = flow.nn.Linear(8, 3).to_global(SECOND, B)
    g.load_state_dict(flow.load(path, global_src_rank=0))
    check(g.weight, t1.weight.detach().numpy(), B, "loaded into a module on the last rank")


if __name__ == "__main__":
    gw.run_worker(globals(), CASES)
