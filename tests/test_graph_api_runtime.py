"""nn.Graph's compiled programs saved, loaded and shared (python/oneflow/nn/graph/runtime_state.py,
src/graph/serialize.h): runtime_state_dict / load_runtime_state_dict through flow.save / flow.load
into a fresh graph that never traces, is_compiled, enable_shared / share_from; each against the
traced graph, eager oneflow and PyTorch, and the errors."""
import numpy as np
import pytest
import torch

import oneflow as flow


class Net(flow.nn.Module):
    """Linear + GELU + BatchNorm (a buffer), a slice (a hand-written node), a constant made in
    build's trace (folded), Python numbers (wrapped 0-d tensors) and a detach."""

    def __init__(self):
        super().__init__()
        self.fc1 = flow.nn.Linear(6, 12)
        self.bn = flow.nn.BatchNorm1d(12)
        self.fc2 = flow.nn.Linear(12, 4)

    def forward(self, x):
        h = flow.nn.functional.gelu(self.fc1(x)) * 0.5 + 1.0
        h = self.bn(h)
        h = h[:, 1:] + flow.arange(11, dtype=flow.float32) * 0.25
        h = flow.cat([h, h[:, :1].detach()], dim=1)
        return self.fc2(h)


class TNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 12)
        self.bn = torch.nn.BatchNorm1d(12)
        self.fc2 = torch.nn.Linear(12, 4)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(x)) * 0.5 + 1.0
        h = self.bn(h)
        h = h[:, 1:] + torch.arange(11, dtype=torch.float32) * 0.25
        h = torch.cat([h, h[:, :1].detach()], dim=1)
        return self.fc2(h)


class Eval(flow.nn.Graph):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.traces = [0]  # build() calls: a loaded or shared graph must not trace

    def build(self, x):
        self.traces[0] += 1
        return self.model(x)


class Train(flow.nn.Graph):
    def __init__(self, model, opt):
        super().__init__()
        self.model = model
        self.add_optimizer(opt)
        self.traces = [0]

    def build(self, x, y):
        self.traces[0] += 1
        loss = flow.nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        return loss


def _net(seed):
    flow.manual_seed(seed)
    return Net()


def _twin(m):
    tm = TNet()
    tm.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in m.state_dict().items()})
    return tm


def _x(k, n=5):
    return np.random.RandomState(k).randn(n, 6).astype(np.float32)


def _saved(g, tmp_path, **kw):
    path = str(tmp_path / "runtime.of")
    flow.save(g.runtime_state_dict(**kw), path)
    return flow.load(path)


def test_runtime_state_round_trip_runs_without_tracing(tmp_path):
    m = _net(0).eval()
    g = Eval(m)
    g.enable_save_runtime_state_dict()
    assert not g.is_compiled
    want = g(flow.tensor(_x(0))).numpy()
    assert g.is_compiled and g.traces[0] == 1
    state = _saved(g, tmp_path)
    m2 = _net(1).eval()
    m2.load_state_dict(m.state_dict())
    g2 = Eval(m2)
    assert not g2.is_compiled
    g2.load_runtime_state_dict(state)
    assert g2.is_compiled and g2.traces[0] == 0
    assert g2._programs() == g._programs()  # the same nodes, fused ones included
    assert "fused_matmul_bias" in g2._programs()[0]
    tm = _twin(m).eval()
    for k in range(3):
        x = _x(k)
        got = g2(flow.tensor(x)).numpy()
        np.testing.assert_array_equal(got, g(flow.tensor(x)).numpy())
        np.testing.assert_array_equal(got, m(flow.tensor(x)).detach().numpy())
        np.testing.assert_allclose(got, tm(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    assert g2.traces[0] == 0
    np.testing.assert_array_equal(want, g2(flow.tensor(_x(0))).numpy())
    # the loaded program reads the new graph's parameters by reference: updates are seen
    with flow.no_grad():
        m2.fc2.weight.mul_(2.0)
        m2.bn.running_mean.add_(0.5)
    np.testing.assert_array_equal(g2(flow.tensor(_x(1))).numpy(), m2(flow.tensor(_x(1))).detach().numpy())
    # a new signature traces as usual
    g2(flow.tensor(_x(2, n=3)))
    assert g2.traces[0] == 1


def test_runtime_state_with_eager_carries_the_weights(tmp_path):
    m = _net(0).eval()
    g = Eval(m)
    g.enable_save_runtime_state_dict()
    g(flow.tensor(_x(0)))
    state = _saved(g, tmp_path, with_eager=True)
    assert state["oneflow_with_eager_tensor"] and "model.fc1.weight" in state["states"]
    m2 = _net(7).eval()  # other weights: the dict's replace them
    g2 = Eval(m2)
    g2.load_runtime_state_dict(state, warmup_with_run=False)
    np.testing.assert_array_equal(m2.fc1.weight.numpy(), m.fc1.weight.numpy())
    np.testing.assert_array_equal(m2.bn.running_var.numpy(), m.bn.running_var.numpy())
    np.testing.assert_array_equal(g2(flow.tensor(_x(4))).numpy(), g(flow.tensor(_x(4))).numpy())
    assert g2.traces[0] == 0
    # without eager tensors the dict holds no weights
    assert _saved(g, tmp_path)["states"] == {}


def _seq(lib):
    # (no indexing: the backward is nodes of the program, which a saved training graph needs)
    return lib.nn.Sequential(lib.nn.Linear(6, 12), lib.nn.GELU(), lib.nn.BatchNorm1d(12), lib.nn.Linear(12, 4))


def test_runtime_state_training_graph_continues(tmp_path):
    flow.manual_seed(0)
    m = _seq(flow)
    opt = flow.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    g = Train(m, opt)
    g.config.allow_fuse_model_update_ops(False)  # (the step in Python; update nodes: below)
    g.enable_save_runtime_state_dict()
    tm = _seq(torch)
    tm.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in m.state_dict().items()})
    topt = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9)
    ys = [np.random.RandomState(100 + k).randn(5, 4).astype(np.float32) for k in range(5)]

    def torch_step(k):
        topt.zero_grad()
        loss = torch.nn.functional.mse_loss(tm(torch.from_numpy(_x(k))), torch.from_numpy(ys[k]))
        loss.backward()
        topt.step()
        return loss.item()

    for k in range(2):
        np.testing.assert_allclose(g(flow.tensor(_x(k)), flow.tensor(ys[k])).item(), torch_step(k), rtol=1e-5)
    assert not next(iter(g._compiled.values())).backward_steps
    state = _saved(g, tmp_path)
    # a fresh graph of the same class, the model and optimizer restored from their state dicts
    m2 = _seq(flow)
    m2.load_state_dict(m.state_dict())
    opt2 = flow.optim.SGD(m2.parameters(), lr=0.05, momentum=0.9)
    opt2.load_state_dict(opt.state_dict())
    g2 = Train(m2, opt2)
    g2.config.allow_fuse_model_update_ops(False)
    with pytest.raises(ValueError, match="training step"):
        g2.load_runtime_state_dict(state, warmup_with_run=True)
    g2.load_runtime_state_dict(state)  # (a training graph: no warm-up step by default)
    assert "accumulate_grad_" in g2._programs()[0]
    for k in range(2, 5):
        got = g2(flow.tensor(_x(k)), flow.tensor(ys[k])).item()
        np.testing.assert_allclose(got, torch_step(k), rtol=1e-5)
        np.testing.assert_array_equal(got, g(flow.tensor(_x(k)), flow.tensor(ys[k])).item())
    assert g2.traces[0] == 0
    np.testing.assert_allclose(m2[0].weight.numpy(), tm[0].weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(m2[0].weight.numpy(), m[0].weight.numpy())
    np.testing.assert_array_equal(m2[2].running_mean.numpy(), m[2].running_mean.numpy())


class Step(flow.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class WithFunction(Eval):
    def build(self, x):
        return Step.apply(self.model(x))


class WithGenerator(Eval):
    def build(self, x):
        return self.model(x) + flow.rand(x.shape[0], 4, generator=self.gen)


def test_runtime_state_errors(tmp_path):
    m = _net(0).eval()
    g = Eval(m)
    with pytest.raises(RuntimeError, match="enable_save_runtime_state_dict"):
        g.runtime_state_dict()
    g.enable_save_runtime_state_dict()
    with pytest.raises(RuntimeError, match="first call"):
        g.runtime_state_dict()
    with pytest.raises(TypeError, match="with_eager must be a bool"):
        g.runtime_state_dict(with_eager=1)
    g(flow.tensor(_x(0)))
    with pytest.raises(RuntimeError, match="before the graph's first call"):
        g.enable_save_runtime_state_dict()
    state = g.runtime_state_dict()
    # a program with a Python step (an autograd.Function)
    gf = WithFunction(m)
    gf.enable_save_runtime_state_dict()
    gf(flow.tensor(_x(0)))
    with pytest.raises(NotImplementedError, match="Python steps.*Function.apply"):
        gf.runtime_state_dict()
    # a user's Generator belongs to the process
    gg = WithGenerator(m)
    gg.gen = flow.Generator()
    gg.enable_save_runtime_state_dict()
    gg(flow.tensor(_x(0)))
    with pytest.raises(NotImplementedError, match="'rand'.*Generator"):
        gg.runtime_state_dict()
    # loading: another class, a compiled graph, a missing parameter, a dict of another kind
    with pytest.raises(ValueError, match="saved from a Eval"):
        WithFunction(m).load_runtime_state_dict(state)
    with pytest.raises(RuntimeError, match="not called yet"):
        g.load_runtime_state_dict(state)
    with pytest.raises(ValueError, match="runtime_state_dict"):
        Eval(m).load_runtime_state_dict({"model": {}})
    with pytest.raises(TypeError, match="warmup_with_run must be a bool"):
        Eval(m).load_runtime_state_dict(state, warmup_with_run="yes")
    bare = Eval(flow.nn.Sequential())  # no modules of that name
    with pytest.raises(KeyError, match="model.fc1"):
        bare.load_runtime_state_dict(state)
    with pytest.raises(ValueError, match="inference graph"):
        Train(_net(0), flow.optim.SGD(_net(0).parameters(), lr=0.1)).load_runtime_state_dict(state)


def test_share_from_runs_the_shared_programs():
    m = _net(0).eval()
    base = Eval(m)
    base.enable_shared()
    x = flow.tensor(_x(0))
    want = base(x).numpy()
    other = Eval(_net(5).eval())  # its own modules are not what runs: base's parameters are
    other.share_from(base)
    assert other.is_compiled
    np.testing.assert_array_equal(other(x).numpy(), want)
    assert base.traces[0] == 1 and other.traces[0] == 0
    # parameter updates of the shared graph are seen by both
    with flow.no_grad():
        m.fc1.bias.add_(1.0)
    eager = m(flow.tensor(_x(1))).detach().numpy()
    np.testing.assert_array_equal(other(flow.tensor(_x(1))).numpy(), eager)
    np.testing.assert_array_equal(base(flow.tensor(_x(1))).numpy(), eager)
    np.testing.assert_allclose(eager, _twin(m).eval()(torch.from_numpy(_x(1))).detach().numpy(), rtol=1e-5, atol=1e-5)
    # a new signature is traced once, by the shared graph, for both
    y = flow.tensor(_x(2, n=3))
    np.testing.assert_array_equal(other(y).numpy(), m(y).detach().numpy())
    base(y)
    assert base.traces[0] == 2 and other.traces[0] == 0
    # a graph sharing from a sharer shares the first graph's programs
    third = Eval(_net(6).eval())
    third.share_from(other)
    np.testing.assert_array_equal(third(y).numpy(), m(y).detach().numpy())
    assert base.traces[0] == 2 and third.traces[0] == 0


def test_share_from_errors():
    m = _net(0).eval()
    base = Eval(m)
    with pytest.raises(RuntimeError, match="enable_shared"):
        Eval(m).share_from(base)
    base.enable_shared()
    with pytest.raises(RuntimeError, match="must have been called"):
        Eval(m).share_from(base)
    base(flow.tensor(_x(0)))
    with pytest.raises(RuntimeError, match="before the graph's first call"):
        base.enable_shared()
    with pytest.raises(TypeError, match="expected an nn.Graph"):
        Eval(m).share_from(m)
    with pytest.raises(ValueError, match="itself"):
        base.share_from(base)
    compiled = Eval(m)
    compiled(flow.tensor(_x(0)))
    with pytest.raises(RuntimeError, match="compiled already"):
        compiled.share_from(base)
    train = Train(_net(1), flow.optim.SGD(_net(1).parameters(), lr=0.1))
    with pytest.raises(ValueError, match="inference graphs"):
        train.share_from(base)


def test_runtime_state_into_a_bare_graph_and_amp(tmp_path):
    # with_eager: the dict alone runs (a plain nn.Graph, no modules, no build()); the amp setting
    # travels with the programs (bfloat16 on CPU)
    m = _net(0).eval()
    g = Eval(m)
    g.config.enable_amp(True)
    g.enable_save_runtime_state_dict()
    x = flow.tensor(_x(0))
    out = g(x)
    assert out.dtype == flow.bfloat16  # (Linear's fused GEMM runs in the lower dtype, as eager autocast)
    want = out.float().numpy()
    state = _saved(g, tmp_path, with_eager=True)
    bare = flow.nn.Graph()
    bare.load_runtime_state_dict(state)
    assert bare.config.amp_enabled and bare._programs() == g._programs()
    np.testing.assert_array_equal(bare(x).float().numpy(), want)
    with pytest.raises(NotImplementedError, match="must define build"):
        bare(flow.tensor(_x(1, n=2)))  # a signature never saved needs build()


def test_runtime_state_of_an_accumulating_training_graph(tmp_path):
    flow.manual_seed(0)
    m = _seq(flow)
    g = Train(m, flow.optim.Adam(m.parameters(), lr=0.01))
    g.config.set_gradient_accumulation_steps(2)
    g.enable_save_runtime_state_dict()
    ys = [np.random.RandomState(50 + k).randn(6, 4).astype(np.float32) for k in range(3)]
    g(flow.tensor(_x(0, n=6)), flow.tensor(ys[0]))
    state = _saved(g, tmp_path)
    m2 = _seq(flow)
    m2.load_state_dict(m.state_dict())
    opt2 = flow.optim.Adam(m2.parameters(), lr=0.01)
    opt2.load_state_dict(g._optimizers[0][0].state_dict())
    g2 = Train(m2, opt2)
    g2.config.set_gradient_accumulation_steps(2)
    g2.load_runtime_state_dict(state)
    for k in (1, 2):
        got = g2(flow.tensor(_x(k, n=6)), flow.tensor(ys[k]))
        assert got.shape == (2,)  # one loss per micro-batch
        np.testing.assert_array_equal(got.numpy(), g(flow.tensor(_x(k, n=6)), flow.tensor(ys[k])).numpy())
    assert g2.traces[0] == 0
    np.testing.assert_array_equal(m2[3].weight.numpy(), m[3].weight.numpy())


class SplitMax(flow.nn.Module):
    """Local-autograd nodes (Note [Local autograd nodes]): split and max of values that need
    gradients, and cumprod (`traced: local`: its formula reads values)."""

    def __init__(self):
        super().__init__()
        self.fc = flow.nn.Linear(6, 8)

    def forward(self, x):
        a, b = flow.split(self.fc(x), 4, dim=1)
        return flow.cumprod(a, dim=1) * b.max(dim=1, keepdim=True)[0]


def test_runtime_state_keeps_local_autograd_nodes(tmp_path):
    flow.manual_seed(0)
    m = SplitMax()
    g = Train(m, flow.optim.SGD(m.parameters(), lr=0.05))
    g.enable_save_runtime_state_dict()
    ys = [np.random.RandomState(70 + k).randn(5, 4).astype(np.float32) for k in range(3)]
    g(flow.tensor(_x(0)), flow.tensor(ys[0]))
    (text,) = g._programs()
    assert text.count("{local_grads: [") == 3 and "<python" not in text, text
    state = _saved(g, tmp_path)
    m2 = SplitMax()
    m2.load_state_dict(m.state_dict())
    g2 = Train(m2, flow.optim.SGD(m2.parameters(), lr=0.05))
    g2.load_runtime_state_dict(state)
    assert g2._programs() == [text]
    for k in (1, 2):
        got = g2(flow.tensor(_x(k)), flow.tensor(ys[k]))
        np.testing.assert_array_equal(got.numpy(), g(flow.tensor(_x(k)), flow.tensor(ys[k])).numpy())
    assert g2.traces[0] == 0
    np.testing.assert_array_equal(m2.fc.weight.numpy(), m.fc.weight.numpy())


def test_runtime_state_of_another_program_format_is_refused(tmp_path):
    """The program bytes start with their format's version (kFormatVersion, serialize.cpp): a
    program saved in another one is refused with both versions named."""
    m = _net(0).eval()
    g = Eval(m)
    g.enable_save_runtime_state_dict()
    g(flow.tensor(_x(0)))
    state = _saved(g, tmp_path)
    data = state["programs"][0]["program"]
    size = int.from_bytes(data[:8], "little")  # (a string: its int64 length, its bytes)
    magic = data[8:8 + size].decode()
    assert magic.startswith("OFPROG") and int(magic[6:]) >= 2, magic
    older = f"OFPROG{int(magic[6:]) - 1}"
    state["programs"][0]["program"] = data[:8] + older.encode() + data[8 + size:]
    with pytest.raises(ValueError, match=f"saved in format {older}; this build reads {magic}"):
        Eval(m).load_runtime_state_dict(state)


class TrainNodes(Train):
    """The optimizer's update as nodes (allow_fuse_model_update_ops), with an LR scheduler."""

    def __init__(self, model, opt, sch):
        flow.nn.Graph.__init__(self)
        self.model = model
        self.add_optimizer(opt, lr_sch=sch)
        self.config.allow_fuse_model_update_ops(True)
        self.traces = [0]


@pytest.mark.parametrize("make_opt", [lambda ps: flow.optim.SGD(ps, lr=0.05, momentum=0.9),
                                      lambda ps: flow.optim.Adam(ps, lr=0.01)], ids=["sgd_momentum", "adam"])
def test_runtime_state_with_update_nodes(tmp_path, make_opt):
    """A program whose update is nodes reads per-run scalars (the learning rate, ...) and the
    optimizer's state: saved by what they are, and bound to the loading graph's optimizer -- its
    param groups' options (an LR scheduler keeps acting) and its state tensors."""
    flow.manual_seed(0)
    m = _seq(flow)
    opt = make_opt(m.parameters())
    g = TrainNodes(m, opt, flow.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5))
    g.enable_save_runtime_state_dict()
    ys = [np.random.RandomState(90 + k).randn(5, 4).astype(np.float32) for k in range(6)]
    for k in range(2):
        g(flow.tensor(_x(k)), flow.tensor(ys[k]))
    (compiled,) = g._compiled.values()
    assert len(compiled.updates) == 1 and "<python" not in g._programs()[0]
    state = _saved(g, tmp_path)
    m2 = _seq(flow)
    m2.load_state_dict(m.state_dict())
    opt2 = make_opt(m2.parameters())
    opt2.load_state_dict(opt.state_dict())
    sch2 = flow.optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
    sch2.load_state_dict(g._optimizers[0][1].state_dict())
    g2 = TrainNodes(m2, opt2, sch2)
    g2.load_runtime_state_dict(state)
    (loaded,) = g2._compiled.values()
    assert len(loaded.updates) == 1 and loaded.updates[0].opt is opt2
    for k in range(2, 6):  # (the LR halves at steps 2 and 4)
        got = g2(flow.tensor(_x(k)), flow.tensor(ys[k]))
        np.testing.assert_array_equal(got.numpy(), g(flow.tensor(_x(k)), flow.tensor(ys[k])).numpy())
    assert g2.traces[0] == 0
    for p, q in zip(m2.parameters(), m.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        assert p.grad is None
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    for p, q in zip(m2.parameters(), m.parameters()):
        for key, v in opt.state[q].items():
            np.testing.assert_array_equal(opt2.state[p][key].numpy(), v.numpy(), err_msg=key)
    # an optimizer whose update has another form is refused by name
    m3 = _seq(flow)
    g3 = TrainNodes(m3, flow.optim.RMSprop(m3.parameters(), lr=0.01), None)
    with pytest.raises(ValueError, match="updates optimizer 0 with .*_update nodes; this graph has a RMSprop"):
        g3.load_runtime_state_dict(state)
