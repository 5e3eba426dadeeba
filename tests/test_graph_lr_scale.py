"""OneFlow's `lr_scale` of a param group: a graph's update uses lr * lr_scale (update nodes and the
Python step alike); eager step() ignores it, as OneFlow's eager optimizers do. PyTorch, given each
group's scaled lr, is the reference (python/oneflow/nn/graph/update_nodes.py lr_scaled)."""
import numpy as np
import pytest
import torch

import oneflow as flow


def _models():
    flow.manual_seed(0)
    m = flow.nn.Sequential(flow.nn.Linear(6, 5), flow.nn.Tanh(), flow.nn.Linear(5, 3))
    t = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    with torch.no_grad():
        for tp, fp in zip(t.parameters(), m.parameters()):
            tp.copy_(torch.tensor(fp.numpy()))
    return m, t


@pytest.mark.parametrize("nodes", [True, False], ids=["update-nodes", "python-step"])
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_graph_update_scales_lr(nodes, momentum):
    m, t = _models()
    scales = (0.1, 0.5)
    opt = flow.optim.SGD([{"params": m[0].parameters(), "lr_scale": scales[0]},
                          {"params": m[2].parameters(), "lr_scale": scales[1]}], lr=0.5, momentum=momentum)
    sch = flow.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    topt = torch.optim.SGD([{"params": t[0].parameters(), "lr": 0.5 * scales[0]},
                            {"params": t[2].parameters(), "lr": 0.5 * scales[1]}], lr=0.5, momentum=momentum)
    tsch = torch.optim.lr_scheduler.StepLR(topt, step_size=2, gamma=0.5)

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m
            self.add_optimizer(opt, lr_sch=sch)
            self.config.allow_fuse_model_update_ops(nodes)

        def build(self, x, y):
            loss = ((self.m(x) - y) ** 2).mean()
            loss.backward()
            return loss

    g = G()
    rs = np.random.RandomState(1)
    for _ in range(5):
        x, y = rs.randn(4, 6).astype(np.float32), rs.randn(4, 3).astype(np.float32)
        loss = g(flow.tensor(x), flow.tensor(y))
        topt.zero_grad()
        tl = ((t(torch.tensor(x)) - torch.tensor(y)) ** 2).mean()
        tl.backward()
        topt.step()
        tsch.step()
        np.testing.assert_allclose(loss.numpy(), tl.item(), rtol=1e-5)
    for fp, tp in zip(m.parameters(), t.parameters()):
        np.testing.assert_allclose(fp.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert [gr["lr"] for gr in opt.param_groups] == [0.5 * 0.5 ** 2] * 2  # (the unscaled lr, kept)
    assert bool(g._compiled and next(iter(g._compiled.values())).updates) == nodes


def test_eager_step_ignores_lr_scale():
    m, t = _models()
    opt = flow.optim.SGD([{"params": m.parameters(), "lr_scale": 0.1}], lr=0.5)
    topt = torch.optim.SGD(t.parameters(), lr=0.5)
    x = np.random.RandomState(2).randn(4, 6).astype(np.float32)
    m(flow.tensor(x)).sum().backward()
    opt.step()
    t(torch.tensor(x)).sum().backward()
    topt.step()
    for fp, tp in zip(m.parameters(), t.parameters()):
        np.testing.assert_allclose(fp.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)
