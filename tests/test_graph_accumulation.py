"""nn.Graph gradient accumulation (GraphConfig.set_gradient_accumulation_steps): one call takes a
mini-batch, split along dim 0 into micro-batches; each micro-batch's loss counts 1/n, the
optimizer steps once, outputs come back packed along dim 0. Checked against PyTorch stepping
every n micro-batches with the loss scaled by 1/n (OneFlow's own test of the feature does the
same with its eager mode)."""
import numpy as np
import pytest
import torch

import oneflow as flow

X = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)


def _linear(lib):
    m = lib.nn.Linear(3, 8)
    lib.nn.init.constant_(m.weight, 2.068758)
    lib.nn.init.constant_(m.bias, 1.23)
    return m


def _build(lib, m, x):
    out = m(x) + lib.ones(x.shape[0], 8)  # a factory inside the step
    out = out.reshape(-1)
    return out, out.sum()


class _AccGraph(flow.nn.Graph):
    def __init__(self, model, opt, steps):
        super().__init__()
        self.model = model
        self.add_optimizer(opt)
        self.config.set_gradient_accumulation_steps(steps)

    def build(self, x):
        out, loss = _build(flow, self.model, x)
        loss.backward()
        return out, loss


@pytest.mark.parametrize("opt_name,kw", [("SGD", dict(lr=0.01, momentum=0.9)), ("Adam", dict(lr=0.01))])
def test_accumulated_steps_match_torch(opt_name, kw):
    fm, tm = _linear(flow), _linear(torch)
    fo, to = getattr(flow.optim, opt_name)(fm.parameters(), **kw), getattr(torch.optim, opt_name)(tm.parameters(), **kw)
    graph = _AccGraph(fm, fo, 4)
    assert graph.config.gradient_accumulation_steps == 4
    for step in range(3):
        out, loss = graph(flow.tensor(X))
        touts, tlosses = [], []
        for i in range(4):
            o, l = _build(torch, tm, torch.tensor(X[2 * i:2 * i + 2]))
            (l * 0.25).backward()
            touts.append(o.detach())
            tlosses.append(l.detach())
        to.step()
        to.zero_grad()
        assert tuple(loss.shape) == (4,) and tuple(out.shape) == (64,)  # packed along dim 0
        np.testing.assert_allclose(loss.numpy(), torch.stack(tlosses).numpy(), rtol=1e-5)
        np.testing.assert_allclose(out.numpy(), torch.cat(touts).numpy(), rtol=1e-5)
        np.testing.assert_allclose(fm.weight.numpy(), tm.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(fm.bias.numpy(), tm.bias.detach().numpy(), rtol=1e-5, atol=1e-6)
        assert fm.weight.grad is None  # cleared after the step, as without accumulation
    assert len(graph._compiled) == 1  # traced once, on the micro-batch's shapes


def test_one_step_equals_the_whole_batch_at_once():
    """With a mean loss, n micro-batches of m rows step like one batch of n*m rows."""
    class G(flow.nn.Graph):
        def __init__(self, model, steps):
            super().__init__()
            self.model = model
            self.add_optimizer(flow.optim.SGD(model.parameters(), lr=0.1))
            if steps > 1:
                self.config.set_gradient_accumulation_steps(steps)

        def build(self, x, y):
            loss = flow.nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            return loss

    rng = np.random.default_rng(1)
    x, y = flow.tensor(rng.standard_normal((12, 3)).astype(np.float32)), flow.tensor(rng.standard_normal((12, 8)).astype(np.float32))
    a, b = _linear(flow), _linear(flow)
    losses = G(a, 3)(x, y)
    whole = G(b, 1)(x, y)
    np.testing.assert_allclose(a.weight.numpy(), b.weight.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses.numpy().mean(), whole.numpy(), rtol=1e-5)


def test_eval_graph_ignores_accumulation():
    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = _linear(flow)
            self.config.set_gradient_accumulation_steps(4)

        def build(self, x):
            return self.model(x)

    out = G()(flow.tensor(X[:3]))  # 3 rows: not split
    assert tuple(out.shape) == (3, 8)


def test_accumulation_errors():
    cfg = flow.nn.Graph().config
    with pytest.raises(ValueError, match="at least 1"):
        cfg.set_gradient_accumulation_steps(0)
    with pytest.raises(TypeError, match="must be an int"):
        cfg.set_gradient_accumulation_steps(2.0)
    m = _linear(flow)
    graph = _AccGraph(m, flow.optim.SGD(m.parameters(), lr=0.1), 3)
    with pytest.raises(ValueError, match=r"into 3 micro-batches; input 0 has shape \(8, 3\)"):
        graph(flow.tensor(X))
    assert m.weight.grad is None and float(m.weight[0, 0]) == pytest.approx(2.068758)  # nothing ran
