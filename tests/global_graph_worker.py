"""One process of the global-tensor graph tests (tests/test_global_tensor.py runs it through the
launcher): nn.Graph traced over global tensors (docs/global_tensors.md, Note [Collectives in
graphs]): each process checks the graph's results against PyTorch on the whole tensors, on several
calls of one traced program."""
import os

import numpy as np
import torch

import global_worker as gw
import oneflow as flow
import oneflow.distributed as dist
from global_worker import B, PS, RANK, S0, WORLD, X, check, torch_mse, torch_step

CASES = ["train", "used_after_op", "accumulation", "infer", "nn_step", "random", "collectives", "errors"]


def _pair(first_sbp):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    fm = flow.nn.Sequential(flow.nn.Linear(5, 8), flow.nn.Tanh(), flow.nn.Linear(8, 3))
    fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    fm[0].to_global(gw.P, first_sbp)
    fm[2].to_global(gw.P, B)
    return fm, tm


class TrainGraph(flow.nn.Graph):
    def __init__(self, model, opt, loss_fn):
        super().__init__()
        self.model, self.loss_fn = model, loss_fn
        self.add_optimizer(opt)

    def build(self, x, y):
        loss = self.loss_fn(self.model(x), y)
        loss.backward()
        return loss


def case_train():
    """Data parallel (SGD) and model parallel (first layer split by output features, Adam) training
    steps as one traced program, following PyTorch training on the whole batch."""
    for opt_name, kw, first_sbp in [("SGD", dict(lr=0.1, momentum=0.9), B), ("Adam", dict(lr=0.01), S0)]:
        fm, tm = _pair(first_sbp)
        opt, topt = getattr(flow.optim, opt_name)(fm.parameters(), **kw), getattr(torch.optim, opt_name)(tm.parameters(), **kw)
        graph = TrainGraph(fm, opt, lambda out, y: ((out - y) ** 2).mean())
        for step in range(4):
            x, y = X((7, 5), 10 + step), X((7, 3), 20 + step)
            loss = graph(gw.g_of(x, S0), gw.g_of(y, S0))
            check(loss, torch_step(topt, torch_mse(tm, x, y)), PS, f"graph {opt_name} loss {step}")
        assert len(graph._compiled) == 1, "one program for every call"
        for (n, p), (_, tp) in zip(fm.named_parameters(), tm.named_parameters()):
            check(p, tp.detach().numpy(), p.sbp[0], f"graph {opt_name} {n}")


def _used_after_op(lib, w, b):
    """`tanh(x @ w.t() + [0, 1, 1]) * (b * 2)` in `lib` (oneflow or torch): broadcast parameters
    reaching a split batch only through ops of their own (a transpose, a scale), so the gradient
    each rank computes of them is its part, to be summed over the ranks."""

    class UsedAfterOp(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w, self.b = lib.nn.Parameter(lib.tensor(w)), lib.nn.Parameter(lib.tensor(b))

        def forward(self, x):
            h = lib.matmul(x, self.w.t())
            h[:, 1:] += 1.0  # (an op's output written in place: not a leaf)
            return lib.tanh(h) * (self.b * 2.0)

    return UsedAfterOp()


def case_used_after_op():
    """SGD steps of `_used_after_op` on a split batch, as a graph and in eager, both following
    PyTorch on the whole batch: a traced op's output on a parameter says it requires grad (and is
    no leaf), so the dispatcher sums its gradient over the ranks as eager's does."""
    w, b = X((3, 5), 70), X((3,), 71)
    tm = _used_after_op(torch, w, b)
    models = [_used_after_op(flow, w, b).to_global(gw.P, B) for _ in range(2)]
    opts = [flow.optim.SGD(m.parameters(), lr=0.5) for m in models]
    topt = torch.optim.SGD(tm.parameters(), lr=0.5)
    # (amax over the split rows: a partial max, whose gradient is that of its own autograd.Function)
    loss_fn = lambda out, y: ((out - y) ** 2).sum(1).mean() + out.amax(0).sum()  # noqa: E731
    graph = TrainGraph(models[0], opts[0], loss_fn)
    for step in range(3):
        x, y = X((8, 5), 72 + step), X((8, 3), 75 + step)
        want = torch_step(topt, loss_fn(tm(torch.tensor(x)), torch.tensor(y)))
        check(graph(gw.g_of(x, S0), gw.g_of(y, S0)), want, B, f"graph loss {step}")
        opts[1].zero_grad()
        eager = loss_fn(models[1](gw.g_of(x, S0)), gw.g_of(y, S0))
        eager.backward()
        opts[1].step()
        check(eager, want, B, f"eager loss {step}")
        for how, m in zip(("graph", "eager"), models):
            for (n, p), tp in zip(m.named_parameters(), tm.parameters()):
                check(p, tp.detach().numpy(), B, f"{how} {n} after step {step}")


def case_accumulation():
    """Gradient accumulation over global inputs: each call's batch in 2 micro-batches of its
    logical rows; the steps follow PyTorch on the whole batch, the losses come back stacked."""
    fm, tm = _pair(B)
    opt, topt = flow.optim.SGD(fm.parameters(), lr=0.1), torch.optim.SGD(tm.parameters(), lr=0.1)

    class Acc(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = fm
            self.add_optimizer(opt)
            self.config.set_gradient_accumulation_steps(2)

        def build(self, x, y):
            out = self.model(x)
            loss = ((out - y) ** 2).mean()
            loss.backward()
            return loss, out

    graph = Acc()
    for step in range(2):
        x, y = X((8, 5), 50 + step), X((8, 3), 60 + step)
        losses, out = graph(gw.g_of(x, S0), gw.g_of(y, S0))
        tx, ty = torch.tensor(x), torch.tensor(y)
        micro = [((tm(tx[i * 4:(i + 1) * 4]) - ty[i * 4:(i + 1) * 4]) ** 2).mean() for i in range(2)]
        check(out, tm(tx).detach().numpy(), S0, f"packed outputs {step}")
        check(losses, torch.stack(micro).detach().numpy(), B, f"stacked micro-batch losses {step}")
        topt.zero_grad()
        (sum(micro) / 2).backward()
        topt.step()
    for (n, p), (_, tp) in zip(fm.named_parameters(), tm.named_parameters()):
        check(p, tp.detach().numpy(), p.sbp[0], f"accumulated {n}")


class InferGraph(flow.nn.Graph):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def build(self, x):
        out = self.model(x)
        return out, out.to_global(sbp=B), out.sum(), {"rows": out.to_global(sbp=flow.sbp.split(1)).shape}


def case_infer():
    """An evaluation graph: its outputs are global tensors laid out as traced (split, boxed to
    broadcast in build(), a partial sum), rebuilt in their structure on every call."""
    fm, tm = _pair(B)
    graph = InferGraph(fm)
    for k in range(2):
        x = X((9, 5), 30 + k)
        want = tm(torch.tensor(x)).detach().numpy()
        out, full, total, meta = graph(gw.g_of(x, S0))
        check(out, want, S0, "graph output")
        check(full, want, B, "output boxed to broadcast in build()")
        check(total, want.sum(), PS, "partial-sum output", atol=1e-4)
        assert tuple(meta["rows"]) == (9, 3)
    assert len(graph._compiled) == 1
    other = graph(gw.g_of(X((9, 5), 40), B))  # another sbp: another program
    check(other[0], tm(torch.tensor(X((9, 5), 40))).detach().numpy(), B, "broadcast input")
    assert len(graph._compiled) == 2


def case_nn_step():
    """A CNN training step with batch norm (the whole batch's statistics) and a cross entropy mean
    (the global normaliser's all-reduce) in one program, against PyTorch on the whole batch."""
    torch.manual_seed(1)
    tnet = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 4))
    net = flow.nn.Sequential(flow.nn.Conv2d(2, 3, 3), flow.nn.BatchNorm2d(3), flow.nn.ReLU(),
                             flow.nn.Flatten(), flow.nn.Linear(3 * 4 * 4, 4))
    net.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    net.to_global(gw.P, B)
    opt, topt = flow.optim.SGD(net.parameters(), lr=0.05), torch.optim.SGD(tnet.parameters(), lr=0.05)
    graph = TrainGraph(net, opt, flow.nn.functional.cross_entropy)
    for step in range(3):
        x, t = X((6, 2, 6, 6), 50 + step), np.random.default_rng(step).integers(0, 4, 6)
        loss = graph(gw.g_of(x, S0), gw.g_of(t, S0))
        tl = torch.nn.functional.cross_entropy(tnet(torch.tensor(x)), torch.tensor(t))
        check(loss, torch_step(topt, tl), PS, f"graph CNN loss {step}")
    check(net[1].running_mean, tnet[1].running_mean.numpy(), B, "running_mean")
    check(net[0].weight, tnet[0].weight.detach().numpy(), B, "conv weight after 3 steps")


class RandomGraph(flow.nn.Graph):
    def build(self, x):
        noise = flow.randn(4, 3, placement=x.placement, sbp=B)
        return flow.nn.functional.dropout(x, p=0.5, training=True), noise


def case_random():
    """Random ops in a program draw anew on each run, as one logical value: a broadcast dropout
    mask and a broadcast factory's draw are the same on every rank."""
    graph = RandomGraph()
    x = gw.g_of(np.ones((4, 3), np.float32), B)
    seen = []
    for _ in range(3):
        dropped, noise = graph(x)
        for t in (dropped, noise):
            assert t.sbp == (B,)
            every = [flow.zeros(4, 3) for _ in range(WORLD)]
            dist.all_gather(every, t.to_local().contiguous())
            for e in every:
                np.testing.assert_array_equal(e.numpy(), every[0].numpy(), err_msg="ranks drew differently")
        seen.append(noise.to_local().numpy())
    assert not np.array_equal(seen[0], seen[1]), "a program's random op drew the same values twice"


class CollectiveGraph(flow.nn.Graph):
    def build(self, x):
        y = x * 2
        dist.all_reduce(y)
        parts = [flow.zeros_like(x) for _ in range(WORLD)]
        dist.all_gather(parts, x)
        return y, flow.stack(parts)


def case_collectives():
    """oneflow.distributed collectives called in build() on local tensors run on every call."""
    graph = CollectiveGraph()
    for k in range(3):
        x = flow.full((2,), float(RANK + 10 * k))
        y, parts = graph(x)
        total = sum(2.0 * (r + 10 * k) for r in range(WORLD))
        np.testing.assert_allclose(y.numpy(), [total, total])
        np.testing.assert_allclose(parts.numpy(), [[r + 10 * k] * 2 for r in range(WORLD)])
    assert len(graph._compiled) == 1


def case_errors():
    class Mixed(flow.nn.Graph):
        def build(self, g, local):
            return g + local

    try:
        Mixed()(gw.g_of(X((4, 3)), S0), flow.ones(4, 3))
    except RuntimeError as e:
        assert "expected all tensors to be global" in str(e)
    else:
        raise AssertionError("a global and a local tensor in one op of a graph")
    # (a global tensor in a 0.x job function is no error: tests/legacy_global_worker.py runs them)

    class ISend(flow.nn.Graph):
        def build(self, x):
            dist.isend(x, 0)
            return x

    try:
        ISend()(flow.ones(2))
    except NotImplementedError as e:
        assert "isend" in str(e)
    else:
        raise AssertionError("isend in build()")


if __name__ == "__main__":
    gw.run_worker(globals(), CASES)
