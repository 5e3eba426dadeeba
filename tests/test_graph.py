"""flow.nn.Graph (python/oneflow/nn/graph/graph.py, src/graph/lazy.h): build() traced once into a
program of recorded ops, run many times. Eval and training graphs are checked against eager
oneflow and against PyTorch (same weights, same data): outputs, losses, parameters after several
optimizer steps, BatchNorm statistics, LR schedules; plus what tracing fixes (shapes, Python
values), what it must not fix (random masks, captured parameters' current values), and the
errors a user gets at trace time."""
import copy
import threading

import numpy as np
import pytest
import torch

import oneflow as flow


def _to_torch(m_flow, m_torch):
    """Copies a oneflow module's parameters and buffers into the same-shaped torch module."""
    sd = {k: torch.from_numpy(v.numpy().copy()) for k, v in m_flow.state_dict().items()}
    m_torch.load_state_dict(sd)
    return m_torch


class Eval(flow.nn.Graph):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def build(self, x):
        return self.model(x)


class Train(flow.nn.Graph):
    def __init__(self, model, loss_fn, opt, sch=None):
        super().__init__()
        self.model, self.loss_fn = model, loss_fn
        self.add_optimizer(opt, lr_sch=sch)

    def build(self, x, y):
        loss = self.loss_fn(self.model(x), y)
        loss.backward()
        return loss


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.GELU(), lib.nn.Linear(16, 16), lib.nn.Tanh(),
                             lib.nn.Linear(16, 4))


def test_eval_graph_equals_eager_and_torch():
    flow.manual_seed(0)
    m = _mlp(flow)
    tm = _to_torch(m, _mlp(torch))
    g = Eval(m)
    for k in range(3):
        x = np.random.RandomState(k).randn(5, 8).astype(np.float32)
        got = g(flow.tensor(x))
        assert not got.requires_grad
        np.testing.assert_allclose(got.numpy(), m(flow.tensor(x)).detach().numpy(), rtol=0, atol=0)
        np.testing.assert_allclose(got.numpy(), tm(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert len(g._compiled) == 1  # traced once
    g(flow.randn(7, 8))            # a new shape traces again
    assert len(g._compiled) == 2
    text = g._programs()[0]
    assert "linear" in text or "matmul" in text or "addmm" in text


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
def test_training_graph_matches_eager_and_torch(opt_name):
    flow.manual_seed(1)
    m = _mlp(flow)
    m_eager = copy.deepcopy(m)
    tm = _to_torch(m, _mlp(torch))

    def make(lib, params):
        if opt_name == "sgd":
            return lib.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-3)
        return lib.optim.Adam(params, lr=0.01)

    opt, opt_e, topt = make(flow, m.parameters()), make(flow, m_eager.parameters()), make(torch, tm.parameters())
    sch = flow.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    sch_e = flow.optim.lr_scheduler.StepLR(opt_e, step_size=2, gamma=0.5)
    tsch = torch.optim.lr_scheduler.StepLR(topt, step_size=2, gamma=0.5)
    g = Train(m, flow.nn.MSELoss(), opt, sch)
    rs = np.random.RandomState(0)
    for _ in range(5):
        x, y = rs.randn(6, 8).astype(np.float32), rs.randn(6, 4).astype(np.float32)
        loss = g(flow.tensor(x), flow.tensor(y))
        # eager oneflow, same steps
        le = flow.nn.functional.mse_loss(m_eager(flow.tensor(x)), flow.tensor(y))
        opt_e.zero_grad()
        le.backward()
        opt_e.step()
        sch_e.step()
        # torch
        lt = torch.nn.functional.mse_loss(tm(torch.from_numpy(x)), torch.from_numpy(y))
        topt.zero_grad()
        lt.backward()
        topt.step()
        tsch.step()
        assert loss.shape == () and not loss.requires_grad
        np.testing.assert_allclose(loss.numpy(), le.detach().numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(loss.numpy(), lt.detach().numpy(), rtol=1e-5, atol=1e-6)
    for p, pe, pt in zip(m.parameters(), m_eager.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.numpy(), pe.numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(p.numpy(), pt.detach().numpy(), rtol=1e-4, atol=1e-5)
        assert p.grad is None  # the graph clears gradients after its step
    assert opt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"])
    assert len(g._compiled) == 1


class _CNN:
    @staticmethod
    def make(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
                                 lib.nn.MaxPool2d(2), lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 3))


def test_cnn_with_batchnorm_trains_like_torch():
    flow.manual_seed(2)
    m = _CNN.make(flow)
    tm = _to_torch(m, _CNN.make(torch))
    opt = flow.optim.SGD(m.parameters(), lr=0.05)
    topt = torch.optim.SGD(tm.parameters(), lr=0.05)
    g = Train(m, flow.nn.CrossEntropyLoss(), opt)
    rs = np.random.RandomState(3)
    for _ in range(3):
        x = rs.randn(4, 2, 8, 8).astype(np.float32)
        y = rs.randint(0, 3, size=4).astype(np.int64)
        loss = g(flow.tensor(x), flow.tensor(y))
        lt = torch.nn.functional.cross_entropy(tm(torch.from_numpy(x)), torch.from_numpy(y))
        topt.zero_grad()
        lt.backward()
        topt.step()
        np.testing.assert_allclose(loss.numpy(), lt.detach().numpy(), rtol=1e-5, atol=1e-6)
    # running statistics and the batch counter are updated by the program on every call
    np.testing.assert_allclose(m[1].running_mean.numpy(), tm[1].running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m[1].running_var.numpy(), tm[1].running_var.numpy(), rtol=1e-5, atol=1e-6)
    assert int(m[1].num_batches_tracked.item()) == 3
    for p, pt in zip(m.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.numpy(), pt.detach().numpy(), rtol=1e-4, atol=1e-5)
    m.eval()
    tm.eval()
    x = rs.randn(2, 2, 8, 8).astype(np.float32)
    np.testing.assert_allclose(Eval(m)(flow.tensor(x)).numpy(), tm(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_transformer_encoder_layer_graph():
    flow.manual_seed(4)
    m = flow.nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True)
    tm = _to_torch(m, torch.nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True))
    m.eval()
    tm.eval()
    g = Eval(m)
    for k in range(2):
        x = np.random.RandomState(k).randn(2, 5, 16).astype(np.float32)
        got = g(flow.tensor(x)).numpy()
        np.testing.assert_allclose(got, tm(torch.from_numpy(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
        with flow.no_grad():  # eager's numbers bit for bit: the traced attention takes eager's
            want = m(flow.tensor(x)).numpy()  # fused kernel (_lazy_state.device_type of a meta q)
        np.testing.assert_array_equal(got, want)
    assert "fused_attention(" in g._programs()[0]


class Pieces(flow.nn.Graph):
    """Indexing, assignment, views, detach, no_grad, Python numbers, nested outputs."""

    def __init__(self, w):
        super().__init__()
        self.w = w  # a captured tensor: the program reads its current values

    def build(self, x, scale, extra=None):
        y = x[:, 1:] * scale + self.w[0]
        z = y.clone()
        z[0] = -1.0
        z[:, 0] += x[:, 0]
        d = (y * 2).detach()
        with flow.no_grad():
            n = x.sum(dim=1, keepdim=True)
        return {"y": y, "z": z, "both": (d, n), "tag": "ok", "w": self.w}


def test_indexing_views_and_structures():
    w = flow.tensor([[0.5, 1.0]])
    g = Pieces(w)
    x = flow.arange(12.0).reshape(4, 3)
    out = g(x, 3.0)
    xn = x.numpy()
    y = xn[:, 1:] * 3.0 + np.array([0.5, 1.0], np.float32)
    z = y.copy()
    z[0] = -1.0
    z[:, 0] += xn[:, 0]
    np.testing.assert_allclose(out["y"].numpy(), y)
    np.testing.assert_allclose(out["z"].numpy(), z)
    np.testing.assert_allclose(out["both"][0].numpy(), y * 2)
    np.testing.assert_allclose(out["both"][1].numpy(), xn.sum(1, keepdims=True))
    assert out["tag"] == "ok" and out["w"] is w
    w.fill_(2.0)  # captured by reference
    out2 = g(x + 1, 3.0)
    np.testing.assert_allclose(out2["y"].numpy(), (xn[:, 1:] + 1) * 3.0 + 2.0)  # w is now all 2
    g(x, 2.0)  # another Python number traces another program
    assert len(g._compiled) == 2


def test_no_grad_region_blocks_gradients_at_run_time():
    class Stop(flow.nn.Graph):
        def __init__(self, lin, opt):
            super().__init__()
            self.lin = lin
            self.add_optimizer(opt)

        def build(self, x):
            out = self.lin(x)
            with flow.no_grad():
                target = self.lin(x) * 0.5  # no gradient through the target
            loss = ((out - target) ** 2).mean()
            loss.backward()
            return loss

    flow.manual_seed(5)
    lin = flow.nn.Linear(3, 2)
    ref = copy.deepcopy(lin)
    opt = flow.optim.SGD(lin.parameters(), lr=0.1)
    ropt = flow.optim.SGD(ref.parameters(), lr=0.1)
    g = Stop(lin, opt)
    x = flow.randn(4, 3)
    for _ in range(2):
        g(x)
        out = ref(x)
        with flow.no_grad():
            target = ref(x) * 0.5
        loss = ((out - target) ** 2).mean()
        ropt.zero_grad()
        loss.backward()
        ropt.step()
    np.testing.assert_allclose(lin.weight.numpy(), ref.weight.numpy(), rtol=1e-6, atol=1e-7)


def test_dropout_mask_is_drawn_on_every_run():
    g = Eval(flow.nn.Dropout(0.5))
    x = flow.ones(1000)
    a, b = g(x).numpy(), g(x).numpy()
    assert set(np.unique(a)) <= {0.0, 2.0} and (a != b).any()
    assert 300 < (a == 0).sum() < 700


def test_in_place_buffer_update_runs_each_call():
    class Count(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("n", flow.zeros(()))

        def forward(self, x):
            self.n.add_(1)
            return x + self.n

    m = Count()
    g = Eval(m)
    for k in range(1, 4):
        np.testing.assert_allclose(g(flow.zeros(2)).numpy(), [k, k])
    assert m.n.item() == 3.0


def test_amp_graph_runs_under_autocast():
    flow.manual_seed(6)
    w = flow.randn(8, 8)

    class MM(flow.nn.Graph):
        def build(self, x):
            return flow.matmul(x, w).sum(dim=1)

    g, plain = MM(), MM()
    g.config.enable_amp(True)
    x = flow.randn(4, 8)
    got = g(x)
    with flow.autocast("cpu", dtype=flow.bfloat16):
        want = flow.matmul(x, w).sum(dim=1)
    assert got.dtype == want.dtype  # matmul in bfloat16, sum back in float32
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert not np.array_equal(plain(x).numpy(), want.numpy())  # without amp: float32 matmul
    tw = torch.from_numpy(w.numpy())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        tm = torch.matmul(torch.from_numpy(x.numpy()), tw).float().sum(dim=1)
    np.testing.assert_allclose(got.numpy(), tm.numpy(), rtol=1e-2, atol=1e-2)


def test_eager_ops_of_other_threads_are_not_traced():
    seen = []

    class T(flow.nn.Graph):
        def build(self, x):
            th = threading.Thread(target=lambda: seen.append((flow.ones(2) + 1).numpy()))
            th.start()
            th.join()
            return x * 2

    np.testing.assert_allclose(T()(flow.ones(3)).numpy(), [2, 2, 2])
    np.testing.assert_allclose(seen[0], [2, 2])


# ---- errors ----

def test_shape_error_at_trace_time():
    class Bad(flow.nn.Graph):
        def build(self, x):
            return x + flow.ones(5)

    with pytest.raises(RuntimeError, match="size"):
        Bad()(flow.ones(3))


def test_values_cannot_be_read_in_build():
    class Peek(flow.nn.Graph):
        def build(self, x):
            return x * x.sum().item()

    with pytest.raises(RuntimeError, match="nn.Graph"):
        Peek()(flow.ones(3))


def test_backward_needs_an_optimizer_and_training_needs_backward():
    lin = flow.nn.Linear(2, 1)

    class NoOpt(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def build(self, x):
            loss = self.lin(x).sum()
            loss.backward()
            return loss

    with pytest.raises(RuntimeError, match="add_optimizer"):
        NoOpt()(flow.ones(1, 2))

    class NoBackward(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.lin = lin
            self.add_optimizer(flow.optim.SGD(lin.parameters(), lr=0.1))

        def build(self, x):
            return self.lin(x).sum()

    with pytest.raises(RuntimeError, match="backward"):
        NoBackward()(flow.ones(1, 2))
    assert lin.weight.grad is None


def test_graph_inside_graph_and_missing_build():
    inner = Eval(flow.nn.Identity())

    class Outer(flow.nn.Graph):
        def build(self, x):
            return inner(x)

    with pytest.raises(RuntimeError, match="another graph"):
        Outer()(flow.ones(2))
    with pytest.raises(NotImplementedError, match="build"):
        flow.nn.Graph()(flow.ones(2))
    # the failed traces left no tracer behind: eager ops run as usual
    assert (flow.ones(2) + 1).tolist() == [2.0, 2.0]


def test_repr_and_config():
    g = Eval(flow.nn.Linear(2, 3))
    assert "(MODULE:model:Linear)" in repr(g) and g.name.startswith("Eval_")
    assert not g.training
    with pytest.raises(TypeError, match="enable_amp"):
        g.config.enable_amp("yes")


def test_factory_on_the_inputs_device():
    """device=x.device of a lazy x (the meta device while tracing) is the graph's device."""
    class Shift(flow.nn.Graph):
        def build(self, x):
            assert str(x.device) == "meta"
            return x + flow.arange(x.shape[1], device=x.device, dtype=x.dtype)

    out = Shift()(flow.ones(2, 3))
    assert out.device == flow.device("cpu")
    np.testing.assert_array_equal(out.numpy(), [[1, 2, 3], [1, 2, 3]])


@pytest.mark.cuda
def test_training_graph_on_cuda():
    """The same program runs CUDA tensors: a CNN's training graph equals eager CUDA steps."""
    flow.manual_seed(7)
    m = _CNN.make(flow).to("cuda")
    ref = copy.deepcopy(m)
    opt = flow.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    ropt = flow.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    g = Train(m, flow.nn.CrossEntropyLoss(), opt)
    rs = np.random.RandomState(8)
    for _ in range(3):
        x = flow.tensor(rs.randn(4, 2, 8, 8).astype(np.float32), device="cuda")
        y = flow.tensor(rs.randint(0, 3, size=4), device="cuda")
        loss = g(x, y)
        assert loss.is_cuda
        lr = flow.nn.functional.cross_entropy(ref(x), y)
        ropt.zero_grad()
        lr.backward()
        ropt.step()
        np.testing.assert_allclose(loss.cpu().numpy(), lr.detach().cpu().numpy(), rtol=1e-5, atol=1e-6)
    for p, q in zip(m.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(), rtol=1e-5, atol=1e-6)
    x = flow.ones(2, 3, device="cuda")

    class Shift(flow.nn.Graph):
        def build(self, x):
            return x + flow.zeros(3, device=x.device)

    assert Shift()(x).is_cuda


class _Cube(flow.autograd.Function):
    calls = 0

    @staticmethod
    def forward(ctx, x, scale):
        _Cube.calls += 1
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x ** 3 * scale, x.sum()

    @staticmethod
    def backward(ctx, g, gs):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2 * ctx.scale + gs, None


def test_autograd_function_and_rnn_in_a_training_graph():
    """autograd.Function runs as a Python step of the program beside an LSTM (table ops):
    forward and backward are the user's, gradients equal eager ones and PyTorch's."""
    class Net(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = flow.nn.LSTM(4, 6, batch_first=True)
            self.lin = flow.nn.Linear(6, 1)

        def forward(self, x):
            y, _ = self.lstm(x)
            c, s = _Cube.apply(self.lin(y[:, -1]), 0.5)
            return c.mean() + 0.1 * s

    flow.manual_seed(9)
    m = Net()
    ref = copy.deepcopy(m)
    tm = torch.nn.LSTM(4, 6, batch_first=True)
    tlin = torch.nn.Linear(6, 1)
    _to_torch(m.lstm, tm)
    _to_torch(m.lin, tlin)
    opt = flow.optim.SGD(m.parameters(), lr=0.1)
    ropt = flow.optim.SGD(ref.parameters(), lr=0.1)
    topt = torch.optim.SGD(list(tm.parameters()) + list(tlin.parameters()), lr=0.1)

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m
            self.add_optimizer(opt)

        def build(self, x):
            loss = self.m(x)
            loss.backward()
            return loss

    g = G()
    rs = np.random.RandomState(10)
    for _ in range(3):
        x = rs.randn(2, 5, 4).astype(np.float32)
        loss = g(flow.tensor(x))
        le = ref(flow.tensor(x))
        ropt.zero_grad()
        le.backward()
        ropt.step()
        h = tlin(tm(torch.from_numpy(x))[0][:, -1])
        lt = (h ** 3 * 0.5).mean() + 0.1 * h.sum()
        topt.zero_grad()
        lt.backward()
        topt.step()
        np.testing.assert_allclose(loss.numpy(), le.detach().numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(loss.numpy(), lt.detach().numpy(), rtol=1e-5, atol=1e-6)
    for p, q in zip(m.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
    assert "<python" in g._programs()[0]


def test_gru_eval_graph_matches_torch():
    flow.manual_seed(11)
    m = flow.nn.GRU(3, 5, num_layers=2)
    tm = _to_torch(m, torch.nn.GRU(3, 5, num_layers=2))
    x = np.random.RandomState(12).randn(4, 2, 3).astype(np.float32)
    got = Eval(m)(flow.tensor(x))
    want = tm(torch.from_numpy(x))
    np.testing.assert_allclose(got[0].numpy(), want[0].detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1].numpy(), want[1].detach().numpy(), rtol=1e-5, atol=1e-6)


def test_state_dict_resumes_training_and_config_hints():
    flow.manual_seed(13)
    m = _mlp(flow)
    opt = flow.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    g = Train(m, flow.nn.MSELoss(), opt, flow.optim.lr_scheduler.StepLR(opt, 1, 0.5))
    g.config.allow_fuse_model_update_ops(True)
    g.config.enable_cudnn_conv_heuristic_search_algo(False)
    # (a switch of its own now: the update as nodes, update_nodes.py; the other, a hint)
    assert g.config.passes["update_nodes"] is True
    assert g.config.hints["enable_cudnn_conv_heuristic_search_algo"] is False
    with pytest.raises(AttributeError, match="no option"):
        g.config.make_it_fast(True)
    rs = np.random.RandomState(14)
    data = [(flow.tensor(rs.randn(4, 8).astype(np.float32)), flow.tensor(rs.randn(4, 4).astype(np.float32)))
            for _ in range(4)]
    for x, y in data[:2]:
        g(x, y)
    sd = copy.deepcopy(g.state_dict())
    assert set(sd) == {"model", "loss_fn", "_optimizers", "_lr_schedulers"}
    rest = [g(x, y).numpy() for x, y in data[2:]]
    # a fresh graph loaded from the state continues identically (momentum and LR included)
    m2 = _mlp(flow)
    opt2 = flow.optim.SGD(m2.parameters(), lr=0.1, momentum=0.9)
    g2 = Train(m2, flow.nn.MSELoss(), opt2, flow.optim.lr_scheduler.StepLR(opt2, 1, 0.5))
    g2.load_state_dict(sd)
    again = [g2(x, y).numpy() for x, y in data[2:]]
    np.testing.assert_array_equal(np.array(rest), np.array(again))
    for p, q in zip(m.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_lazy_tensors_print_and_say_so():
    seen = []

    class Peek(flow.nn.Graph):
        def build(self, x):
            y = x * 2
            seen.append((repr(y), y.is_lazy, flow.ones(1).is_lazy))
            # a factory with no device computes nothing while tracing (its default device later)
            seen.append(repr(flow.arange(3, dtype=flow.float32)))
            return y

    Peek()(flow.ones(2, 3))
    text, lazy, eager_inside = seen[0]
    assert text == "tensor(..., size=(2, 3), dtype=oneflow.float32, is_lazy=True)"
    assert lazy and not flow.ones(1).is_lazy
    assert eager_inside  # a factory inside build() is recorded too: lazy
    assert seen[1] == "tensor(..., size=(3,), dtype=oneflow.float32, is_lazy=True)"


def test_sizes_named_tuples_and_keyword_tensors_in_python_steps():
    """Outputs keep their types (flow.Size, torch-style named tuples); an autograd.Function given a
    tensor by keyword reads the real tensor at run time; its output requires grad in the trace."""
    class Scale(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x, *, factor):
            ctx.save_for_backward(factor)
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            (factor,) = ctx.saved_tensors
            return grad * factor

    seen = {}

    class G(flow.nn.Graph):
        def build(self, x, f):
            y = Scale.apply(x, factor=f)
            seen["requires_grad"] = y.requires_grad
            return y.shape, flow.max(y, dim=1), y

    g = G()
    for k in range(2):
        x = flow.arange(6.0).reshape(2, 3) + k
        f = flow.full((1,), 2.0 + k)
        shape, mx, y = g(x, f)
        assert type(shape) is flow.Size and shape == (2, 3)
        assert type(mx).__name__ == type(flow.max(x, dim=1)).__name__ and mx.indices.tolist() == [2, 2]
        np.testing.assert_allclose(mx.values.numpy(), (x.numpy() * (2 + k)).max(1))
        np.testing.assert_allclose(y.numpy(), x.numpy() * (2 + k))
    assert seen["requires_grad"] is False  # (no input requires grad)
    g2 = G()
    g2(flow.ones(2, 3, requires_grad=True), flow.full((1,), 2.0))
    assert seen["requires_grad"] is True


def test_blocks_config_and_activation_checkpointing():
    """A graph's modules are blocks (OneFlow's ModuleBlock) with a config; activation
    checkpointing recomputes a block's forward in the backward pass, the steps unchanged."""
    calls = {"n": 0}

    class Counted(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = flow.nn.Linear(4, 4)

        def forward(self, x):
            calls["n"] += 1
            return flow.tanh(self.lin(x))

    def make():
        flow.manual_seed(3)
        return flow.nn.Sequential(Counted(), flow.nn.Linear(4, 1))

    class G(flow.nn.Graph):
        def __init__(self, model, checkpointing):
            super().__init__()
            self.model = model
            self.add_optimizer(flow.optim.SGD(model.parameters(), lr=0.1))
            self.model[0].config.activation_checkpointing = checkpointing

        def build(self, x):
            loss = self.model(x).pow(2).mean()
            loss.backward()
            return loss

    plain, ckpt = make(), make()
    g0, g1 = G(plain, False), G(ckpt, True)
    from oneflow.nn.graph.block import Block
    assert isinstance(g1.model, Block) and isinstance(g1.model[0], Block) and g1.model.origin is ckpt
    assert g1.model[0].config.activation_checkpointing and not g0.model[0].config.activation_checkpointing
    assert g1.model[0].lin.weight.to(flow.Tensor) is ckpt[0].lin.weight and len(list(g1.model)) == 2
    rs = np.random.RandomState(0)
    for step in range(3):
        x = flow.tensor(rs.randn(5, 4).astype(np.float32))
        calls["n"] = 0
        l0 = g0(x)
        assert calls["n"] == (1 if step == 0 else 0)  # traced once, then the program runs alone
        calls["n"] = 0
        l1 = g1(x)
        assert calls["n"] == (3 if step == 0 else 2)  # each run: the forward and its recomputation
        np.testing.assert_allclose(l1.numpy(), l0.numpy(), rtol=1e-6)
    for p, q in zip(plain.parameters(), ckpt.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-6)
    cfg = g1.model[0].config
    cfg.set_stage(2)
    assert cfg.stage_id == 2 and cfg.stage_placement is None
    with pytest.raises(ValueError):
        cfg.set_stage(-1)
    with pytest.raises(TypeError):
        cfg.set_stage(0, "cpu")
    with pytest.raises(TypeError):
        cfg.activation_checkpointing = 1
    with pytest.raises(AttributeError):
        g1.missing
