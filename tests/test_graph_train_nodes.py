"""The optimizers' updates as nodes of a training graph's program (python/oneflow/nn/graph/
update_nodes.py, Note [Scalar inputs] in src/graph/lazy.h; docs/graph.md "The update as nodes").

A training graph whose backward is nodes ends its program with the optimizer's fused update op
(`sgd_update`, `adam_update`), its learning rate and other float options read per run from
scalar inputs. 20 steps of an MLP and a CNN give eager's losses and parameters bit for bit (with
the passes that keep eager's bits: no matmul+bias fusion), with SGD (momentum, weight decay,
Nesterov), Adam, AdamW and an LR scheduler, and the same numbers as PyTorch to float32 precision."""
import copy

import numpy as np
import pytest
import torch

import oneflow as flow


class Train(flow.nn.Graph):
    def __init__(self, model, opt, sch=None):
        super().__init__()
        self.model = model
        self.add_optimizer(opt, lr_sch=sch)
        self.config.allow_fuse_model_update_ops(True)  # (the default)

    def build(self, x, y):
        loss = flow.nn.functional.cross_entropy(self.model(x), y)
        loss.backward()
        return loss


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 5))


def _cnn(lib):
    # (no conv bias before the BatchNorm: its gradient is rounding noise around 0, which Adam
    # scales up to lr-sized steps -- a different noise in PyTorch)
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 4 * 4, 5))


def _batches(shape, n=20, seed=1):
    rs = np.random.RandomState(seed)
    return [(rs.randn(*shape).astype(np.float32), rs.randint(0, 5, shape[0])) for _ in range(n)]


OPTIMIZERS = {
    "sgd": (lambda lib, ps: lib.optim.SGD(ps, lr=0.1), None),
    "sgd_momentum_wd_nesterov": (lambda lib, ps: lib.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=1e-3,
                                                               nesterov=True), None),
    "adam": (lambda lib, ps: lib.optim.Adam(ps, lr=1e-2, weight_decay=1e-4), None),
    "adamw_amsgrad": (lambda lib, ps: lib.optim.AdamW(ps, lr=1e-2, amsgrad=True), None),
    "sgd_steplr": (lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.5),
                   lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)),
    "adam_cosine": (lambda lib, ps: lib.optim.Adam(ps, lr=1e-2),
                    lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=7)),
}


def _eager(model, make_opt, make_sch, batches):
    opt = make_opt(flow, model.parameters())
    sch = make_sch(flow, opt) if make_sch else None
    losses = []
    for x, y in batches:
        loss = flow.nn.functional.cross_entropy(model(flow.tensor(x)), flow.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sch:
            sch.step()
        losses.append(loss.numpy())
    return np.array(losses), opt


def _graph(model, make_opt, make_sch, batches, update_nodes=True):
    opt = make_opt(flow, model.parameters())
    sch = make_sch(flow, opt) if make_sch else None
    g = Train(model, opt, sch)
    g.config.enable_producer_fusion(False)  # (adds the bias inside the GEMM: not eager's bits)
    g.config.allow_fuse_model_update_ops(update_nodes)
    losses = np.array([g(flow.tensor(x), flow.tensor(y)).numpy() for x, y in batches])
    return losses, g, opt


def _torch(make_model, flow_model, make_opt, make_sch, batches):
    tm = make_model(torch)
    tm.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in flow_model.state_dict().items()})
    opt = make_opt(torch, tm.parameters())
    sch = make_sch(torch, opt) if make_sch else None
    losses = []
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(tm(torch.from_numpy(x)), torch.from_numpy(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sch:
            sch.step()
        losses.append(loss.detach().numpy())
    return np.array(losses), tm


@pytest.mark.parametrize("model_name", ["mlp", "cnn"])
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_update_nodes_train_like_eager_bit_for_bit(model_name, opt_name):
    make_model, shape = (_mlp, (8, 12)) if model_name == "mlp" else (_cnn, (6, 1, 8, 8))
    make_opt, make_sch = OPTIMIZERS[opt_name]
    flow.manual_seed(0)
    model = make_model(flow)
    start = copy.deepcopy(model)
    eager_model = copy.deepcopy(model)
    batches = _batches(shape)
    want, opt_e = _eager(eager_model, make_opt, make_sch, batches)
    got, g, opt_g = _graph(model, make_opt, make_sch, batches)
    np.testing.assert_array_equal(got, want)
    for (name, p), q in zip(model.named_parameters(), eager_model.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)
        assert p.grad is None  # (cleared after each step, as eager's zero_grad(set_to_none))
    for (name, b), c in zip(model.named_buffers(), eager_model.buffers()):
        np.testing.assert_array_equal(b.numpy(), c.numpy(), err_msg=name)
    # the optimizer's state is eager's too (a graph's state_dict resumes eagerly)
    for p, q in zip(model.parameters(), eager_model.parameters()):
        for key, v in opt_e.state[q].items():
            np.testing.assert_array_equal(opt_g.state[p][key].numpy(), v.numpy(), err_msg=key)
    # the update is a node of the program, one per param group; no Python step is left
    (compiled,) = g._compiled.values()
    assert len(compiled.updates) == 1
    (text,) = g._programs()
    op = "sgd_update" if opt_name.startswith("sgd") else "adam_update"
    assert text.count(op + "(") == 1 and "<python" not in text, text
    # no .grad is written: the update reads the gradients where the backward computed them
    # (Note [Dropped gradient writes], src/graph/passes.cpp)
    assert "accumulate_grad_(" not in text and compiled.pass_stats["dropped"] == len(list(model.parameters())), text
    # and against PyTorch (float32 precision: different kernels)
    t_losses, tm = _torch(make_model, start, make_opt, make_sch, batches)
    np.testing.assert_allclose(got, t_losses, rtol=2e-4, atol=2e-5)
    for (name, p), q in zip(model.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-3, atol=1e-4, err_msg=name)


def test_update_nodes_off_steps_in_python_with_the_same_numbers():
    flow.manual_seed(0)
    model = _mlp(flow)
    other = copy.deepcopy(model)
    make_opt, make_sch = OPTIMIZERS["sgd_steplr"]
    batches = _batches((8, 12))
    got, g, _ = _graph(model, make_opt, make_sch, batches)
    off, g_off, _ = _graph(other, make_opt, make_sch, batches, update_nodes=False)
    np.testing.assert_array_equal(got, off)
    for p, q in zip(model.parameters(), other.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    (compiled,) = g_off._compiled.values()
    assert compiled.updates == [] and "sgd_update(" not in g_off._programs()[0]
    assert g.config.passes["update_nodes"] and not g_off.config.passes["update_nodes"]
    assert flow.nn.Graph().config.passes["update_nodes"]  # (the default: measured faster, docs/graph.md)


# Optimizer setups whose update is nodes (OPTIMIZERS) and two that step in Python even with the
# switch on: gradient clipping in a param group (OneFlow's clip_grad_max_norm) and a grad scaler.
PYTHON_STEP = {
    "sgd_clip": (lambda lib, ps: lib.optim.SGD([{"params": list(ps), "clip_grad_max_norm": 0.5,
                                                  "clip_grad_norm_type": 2.0}], lr=0.1, momentum=0.9), None),
    "adam_grad_scaler": (lambda lib, ps: lib.optim.Adam(ps, lr=1e-2, weight_decay=1e-3), None),
}


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS) + sorted(PYTHON_STEP))
def test_update_nodes_equal_the_python_step(opt_name):
    """The update as nodes (the default) against the switch off: the same losses, parameters and
    optimizer state bit for bit (every pass on, as a user runs it: producer fusion included);
    clipping and a grad scaler step in Python either way."""
    make_opt, make_sch = {**OPTIMIZERS, **PYTHON_STEP}[opt_name]
    flow.manual_seed(0)
    model = _mlp(flow)
    other = copy.deepcopy(model)
    batches = _batches((8, 12), n=8)
    runs = []
    for m, nodes in ((model, True), (other, False)):
        opt = make_opt(flow, m.parameters())
        sch = make_sch(flow, opt) if make_sch else None
        g = Train(m, opt, sch)
        g.config.allow_fuse_model_update_ops(nodes)
        if opt_name == "adam_grad_scaler":
            g.set_grad_scaler(flow.amp.GradScaler(init_scale=64.0, growth_interval=3))
        runs.append((np.array([g(flow.tensor(x), flow.tensor(y)).numpy() for x, y in batches]), g, opt))
    (got, g, opt), (want, g_off, opt_off) = runs
    np.testing.assert_array_equal(got, want)
    for p, q in zip(model.parameters(), other.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        for key, v in opt_off.state[q].items():
            np.testing.assert_array_equal(np.asarray(opt.state[p][key]), np.asarray(v), err_msg=key)
    (compiled,) = g._compiled.values()
    assert len(compiled.updates) == (0 if opt_name in PYTHON_STEP else 1)
    assert next(iter(g_off._compiled.values())).updates == []


@pytest.mark.parametrize("shape", [(8, 12), (2, 4, 12)])
def test_linear_weight_gradient_needs_no_copy(shape):
    """Note [Weight-gradient layout] (autograd/formulas.cpp): a Linear's weight gradient comes out
    of its GEMM as a contiguous [out, in] tensor, eagerly (PyTorch's values to float32
    precision) and in a graph, whose update node then reads the GEMM's result: the program has
    no contiguous() copy and the t / transpose views of the gradient are gone."""
    flow.manual_seed(0)
    lin = flow.nn.Linear(12, 5)
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    lin(flow.tensor(x)).pow(2).sum().backward()
    assert lin.weight.grad.is_contiguous() and lin.weight.grad.stride() == (12, 1)
    tl = torch.nn.Linear(12, 5)
    tl.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in lin.state_dict().items()})
    tl(torch.from_numpy(x)).pow(2).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), tl.weight.grad.numpy(), rtol=1e-5, atol=1e-5)

    class G(flow.nn.Graph):
        def __init__(self, m):
            super().__init__()
            self.m = m
            self.add_optimizer(flow.optim.SGD(m.parameters(), lr=0.1, momentum=0.9))

        def build(self, x):
            loss = self.m(x).pow(2).sum()
            loss.backward()
            return loss
    model = flow.nn.Sequential(flow.nn.Linear(12, 16), flow.nn.ReLU(), flow.nn.Linear(16, 5))
    eager = copy.deepcopy(model)
    g = G(model)
    opt_e = flow.optim.SGD(eager.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        got = g(flow.tensor(x))
        opt_e.zero_grad()
        want = eager(flow.tensor(x)).pow(2).sum()
        want.backward()
        opt_e.step()
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    (text,) = g._programs()
    assert "sgd_update(" in text and "contiguous(" not in text, text
    (update,) = [line for line in text.splitlines() if "sgd_update(" in line]
    grads = update.split("], [")[1].split("]")[0].split(", ")
    producers = {line.split(":")[0].strip(): line for line in text.splitlines() if " = " in line}
    for slot in grads:  # (each a GEMM's result or a bias's reduction, not a view of one)
        op = producers[slot].split(" = ")[1].split("(")[0]
        assert op in ("matmul", "mm", "reshape"), producers[slot]


def test_dropped_gradient_writes_change_no_number():
    """The pass that drops the parameters' accumulate_grad_ nodes (the update nodes read the
    gradient slots) switched off: the program writes each .grad and gives the same bits; either
    way .grad is None after the call, as in OneFlow."""
    flow.manual_seed(0)
    model = _mlp(flow)
    other = copy.deepcopy(model)
    make_opt, make_sch = OPTIMIZERS["adam"]
    batches = _batches((8, 12), n=5)
    got, g, _ = _graph(model, make_opt, make_sch, batches)
    opt = make_opt(flow, other.parameters())
    g_off = Train(other, opt)
    g_off.config.enable_producer_fusion(False)
    g_off.config.enable_drop_grad_writes(False)
    off = np.array([g_off(flow.tensor(x), flow.tensor(y)).numpy() for x, y in batches])
    np.testing.assert_array_equal(got, off)
    for p, q in zip(model.parameters(), other.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        assert p.grad is None and q.grad is None
    (text_on,), (text_off,) = g._programs(), g_off._programs()
    assert "accumulate_grad_(" not in text_on
    assert text_off.count("accumulate_grad_(") == len(list(other.parameters())), text_off


def test_gradient_writes_stay_without_update_nodes():
    """Without update nodes the optimizer's step() reads .grad after the program: kept."""
    flow.manual_seed(0)
    model = _mlp(flow)
    _, g, _ = _graph(model, *OPTIMIZERS["sgd"], _batches((8, 12), n=2), update_nodes=False)
    (text,) = g._programs()
    assert text.count("accumulate_grad_(") == len(list(model.parameters())), text


def test_lr_changes_without_tracing_again():
    flow.manual_seed(0)
    model = _mlp(flow)
    opt = flow.optim.SGD(model.parameters(), lr=0.1)
    g = Train(model, opt)
    x, y = flow.randn(8, 12), flow.tensor(np.arange(8) % 5)
    g(x, y)
    (first,) = g._compiled.values()
    before = [p.numpy().copy() for p in model.parameters()]
    opt.param_groups[0]["lr"] = 0.0  # a zero learning rate: the next step moves nothing
    g(x, y)
    (again,) = g._compiled.values()
    assert again is first
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.numpy(), b)


def test_a_changed_update_shape_traces_again():
    flow.manual_seed(0)
    model = _mlp(flow)
    eager = copy.deepcopy(model)
    opt, opt_e = (flow.optim.SGD(m.parameters(), lr=0.1) for m in (model, eager))
    g = Train(model, opt)
    x, y = flow.randn(8, 12), flow.tensor(np.arange(8) % 5)
    for step in range(4):
        if step == 2:  # momentum switched on: buffers to update, another node
            (first,) = g._compiled.values()
            for o in (opt, opt_e):
                o.param_groups[0]["momentum"] = 0.9
        got = g(x, y)
        want = flow.nn.functional.cross_entropy(eager(x), y)
        opt_e.zero_grad()
        want.backward()
        opt_e.step()
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for p, q in zip(model.parameters(), eager.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    (compiled,) = g._compiled.values()
    assert compiled is not first and len(compiled.updates) == 1
    assert all("momentum_buffer" in opt.state[p] for p in model.parameters())


def test_loaded_optimizer_state_is_what_the_nodes_update():
    flow.manual_seed(0)
    model = _mlp(flow)
    opt = flow.optim.Adam(model.parameters(), lr=1e-2)
    g = Train(model, opt)
    x, y = flow.randn(8, 12), flow.tensor(np.arange(8) % 5)
    g(x, y)
    saved = copy.deepcopy(g.state_dict())
    g(x, y)
    after_two = [p.numpy().copy() for p in model.parameters()]
    g.load_state_dict(saved)  # back to one step: the state tensors are new objects
    g(x, y)
    for p, a in zip(model.parameters(), after_two):
        np.testing.assert_array_equal(p.numpy(), a)


def test_optimizers_without_a_node_form_step_in_python():
    flow.manual_seed(0)
    model = _mlp(flow)
    eager = copy.deepcopy(model)
    g = Train(model, flow.optim.RMSprop(model.parameters(), lr=1e-2))
    opt_e = flow.optim.RMSprop(eager.parameters(), lr=1e-2)
    x, y = flow.randn(8, 12), flow.tensor(np.arange(8) % 5)
    for _ in range(3):
        got = g(x, y)
        want = flow.nn.functional.cross_entropy(eager(x), y)
        opt_e.zero_grad()
        want.backward()
        opt_e.step()
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    (compiled,) = g._compiled.values()
    assert compiled.updates == [] and "_update(" not in g._programs()[0]


def test_scalar_input_errors_name_the_op_and_the_argument():
    tracer = flow._C._GraphTracer("cpu")
    x = tracer.input(flow.randn(3))
    tracer.begin()
    try:
        flow.add(x, 1.0)
    finally:
        tracer.end()
    with pytest.raises(ValueError, match="add has no float argument 'lr'"):
        tracer.scalar_input("lr", flow.tensor(0.5, dtype=flow.float64))
    with pytest.raises(ValueError, match="scalar input of add must be a 0-dim float64 CPU tensor"):
        tracer.scalar_input("alpha", flow.tensor(0.5, dtype=flow.float32))
    with pytest.raises(TypeError, match="allow_fuse_model_update_ops: mode must be a bool"):
        flow.nn.Graph().config.allow_fuse_model_update_ops("yes")
