"""Dynamic-shape nodes (Note [Dynamic shapes], src/graph/dynamic_shapes.h): ops whose output's size
depends on values (nonzero, masked_select, unique, repeat_interleave with a tensor of repeats, ...)
traced in an nn.Graph. The program prints their value-decided dims as `?`, each call sizes them
from that call's values (the sizes are not those of the tracing call), the arena plans none of
them, a saved program keeps them, and their backward is nodes of the program -- all against
PyTorch and eager."""
import numpy as np
import pytest
import torch

import oneflow as flow


class Infer(flow.nn.Graph):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.traces = [0]

    def build(self, *args):
        self.traces[0] += 1
        return self.fn(*args)


def _program(g):
    (c,) = g._compiled.values()
    return c


def _x(seed, shape=(5, 4)):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def _selects(x):
    v = flow.masked_select(x, x > 0)
    return flow.nonzero(x > 0.5), v * 2.0 + 1.0, v.sum(), flow.unique(flow.round(v * 2.0), return_counts=True)


def _torch_selects(x):
    v = torch.masked_select(x, x > 0)
    return torch.nonzero(x > 0.5), v * 2.0 + 1.0, v.sum(), torch.unique(torch.round(v * 2.0), return_counts=True)


def _flat(o):
    return [t for e in o for t in _flat(e)] if isinstance(o, (list, tuple)) else [o]


def test_sizes_follow_each_calls_values():
    g = Infer(_selects)
    for seed in range(4):  # (one trace: the counts of positives differ from call to call)
        x = _x(seed)
        got, eager, want = _flat(g(flow.tensor(x))), _flat(_selects(flow.tensor(x))), _flat(_torch_selects(torch.tensor(x)))
        for a, b, c in zip(got, eager, want):
            assert tuple(a.shape) == tuple(b.shape) == tuple(c.shape)
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-6)
    assert g.traces[0] == 1


def test_program_prints_dynamic_dims():
    g = Infer(lambda x: flow.nonzero(x > 0).float().sum(0) + flow.argwhere(x).shape[1])
    g(flow.tensor(_x(0)))
    text = g._programs()[0]
    assert "i64[?,2] = nonzero(" in text and "i64[?,2] = argwhere(" not in text, text  # (DCE: argwhere's size read only)
    assert "f32[?,2] = cast(" in text or "f32[?,?] = cast(" in text, text
    # a reduction over the dynamic dim is static again only when 0-dim; here it is [2]
    assert "sum(" in text


def test_dynamic_values_have_their_own_allocations():
    # the tracing call selects few elements; later calls select more: an arena sized at trace time
    # would be overrun
    def fn(x):
        v = flow.masked_select(x, x > 0)
        return (flow.exp(v) * 3.0 - v).sum() + x.sum()

    g = Infer(fn)
    few = -np.abs(_x(0, (64, 64)))
    few[0, :3] = 1.0
    g(flow.tensor(few))
    c = _program(g)
    text = c.program.describe()
    dynamic = {int(s) for s in __import__("re").findall(r"%(\d+):f32\[\?\]", text)}
    assert dynamic, text
    plan = c.program.memory_plan()
    assert not {b[0] for b in plan["blocks"]} & dynamic
    for seed in range(3):
        x = _x(seed, (64, 64))
        want = torch.tensor(x)
        v = torch.masked_select(want, want > 0)
        np.testing.assert_allclose(g(flow.tensor(x)).numpy(), ((torch.exp(v) * 3.0 - v).sum() + want.sum()).numpy(),
                                   rtol=1e-5)


class Train(flow.nn.Graph):
    def __init__(self, model, opt):
        super().__init__()
        self.model = model
        self.add_optimizer(opt)

    def build(self, x, mask, reps):
        h = self.model(x)
        # (mean: its gradient divides by the run's count, `div(.., %k.numel())`)
        loss = (flow.masked_select(h, mask) ** 2).mean() + flow.repeat_interleave(h, reps, dim=0).sum()
        loss.backward()
        return loss


def test_training_through_dynamic_nodes_matches_torch():
    flow.manual_seed(0)
    model = flow.nn.Linear(4, 3)
    tmodel = torch.nn.Linear(4, 3)
    tmodel.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()})
    g = Train(model, flow.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.1, momentum=0.9)
    rs = np.random.RandomState(0)
    for step in range(4):
        x = rs.randn(6, 4).astype(np.float32)
        mask = rs.rand(6, 3) > [0.2, 0.5, 0.8, 0.5][step]
        reps = rs.randint(0, 4, size=6)
        loss = g(flow.tensor(x), flow.tensor(mask), flow.tensor(reps))
        topt.zero_grad()
        th = tmodel(torch.tensor(x))
        tloss = (torch.masked_select(th, torch.tensor(mask)) ** 2).mean() + \
            torch.repeat_interleave(th, torch.tensor(reps), dim=0).sum()
        tloss.backward()
        topt.step()
        np.testing.assert_allclose(loss.numpy(), tloss.detach().numpy(), rtol=1e-5)
    c = _program(g)
    assert c.backward_steps == []  # the backward through them is nodes of the program
    assert ".numel())" in c.program.describe()
    for k, v in model.state_dict().items():
        np.testing.assert_allclose(v.numpy(), tmodel.state_dict()[k].numpy(), rtol=1e-5, atol=1e-6)


def test_saved_program_keeps_dynamic_dims(tmp_path):
    g = Infer(_selects)
    g.enable_save_runtime_state_dict()
    g(flow.tensor(_x(0)))
    path = str(tmp_path / "dyn.of")
    flow.save(g.runtime_state_dict(), path)
    g2 = Infer(_selects)
    g2.load_runtime_state_dict(flow.load(path))
    assert g2._programs() == g._programs() and "[?]" in g2._programs()[0]
    x = _x(3)
    for a, b in zip(_flat(g2(flow.tensor(x))), _flat(_selects(flow.tensor(x)))):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert g2.traces[0] == 0


def test_values_tracing_cannot_know_are_refused():
    # the mask is a random draw: tracing does not run it, so nonzero's size is unknown (named)
    g = Infer(lambda x: flow.nonzero(flow.rand(5) > 0.5) + x.sum().long())
    with pytest.raises(NotImplementedError, match="nonzero.*random draw"):
        g(flow.tensor(_x(0)))
    # an input written in place before it is read: its tracing-call value is not the run's
    def written(x):
        x.add_(1.0)
        return flow.nonzero(x > 1.0)
    with pytest.raises(NotImplementedError, match="nonzero.*written in place by add_"):
        Infer(written)(flow.tensor(_x(0)))


def test_tensor_split_at_traced_indices():
    # the pieces' sizes are the indices' values: each call's own (negative and past-the-end
    # indices as Python slicing takes them), against PyTorch's views
    g = Infer(lambda x, idx: flow.tensor_split(x, idx, dim=1))
    x = _x(0, (3, 7))
    for idx in ([2, 5], [-2, 9], [6, 1], [0, 7]):
        got = g(flow.tensor(x), flow.tensor(idx))
        want = torch.tensor_split(torch.tensor(x), torch.tensor(idx), dim=1)
        assert len(got) == len(want) == 3
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert g.traces[0] == 1
