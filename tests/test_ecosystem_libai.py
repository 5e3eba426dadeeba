"""What LiBai (OneFlow's large-model toolbox) needs of the framework beyond the names it imports
(issue 37), each written from LiBai's documented usage: its models stage position embeddings in
their graphs, its trainer re-places global parameters and logs the learning rate by stepping the
scheduler after each graph call, its default configs train with AMP through the fused ops. LiBai
itself is no test dependency: docs/upstream_suite.md "Ecosystem code" says how it was run."""
import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow import nn
from oneflow.nn.graph import GraphModule, GraphTensor


def _cpu():
    return flow.placement("cpu", [0])


class _Patches(nn.Module):
    """A ViT-shaped model: patch projection, a position-embedding parameter, blocks, a head."""

    def __init__(self):
        super().__init__()
        self.patch = nn.Linear(12, 8)
        self.pos_embed = nn.Parameter(flow.randn(1, 4, 8) * 0.02)
        self.blocks = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        h = self.patch(x) + self.pos_embed
        return self.head(self.blocks(h).mean(1))


def _model():
    flow.manual_seed(0)
    return _Patches().to_global(_cpu(), flow.sbp.broadcast)


def _batches(n):
    rs = np.random.RandomState(3)
    return [(flow.tensor(rs.randn(2, 4, 12).astype(np.float32)).to_global(_cpu(), flow.sbp.broadcast),
             flow.tensor(rs.randint(0, 3, 2)).to_global(_cpu(), flow.sbp.broadcast)) for _ in range(n)]


class _Train(nn.Graph):
    def __init__(self, model, opt, sch=None, stage=False):
        super().__init__()
        self.model, self.loss = model, nn.CrossEntropyLoss()
        self.add_optimizer(opt, lr_sch=sch)
        if stage:  # as LiBai's set_pipeline_stage_id: the first layer's tensors and modules on stage 0
            self.model.pos_embed.to(GraphTensor).set_stage(0, _cpu())
            self.model.patch.to(GraphModule).set_stage(0, _cpu())
            self.model.head.to(GraphModule).set_stage(0, _cpu())

    def build(self, x, y):
        loss = self.loss(self.model(x), y)
        loss.backward()
        return loss


def test_graph_tensor_set_stage_as_libai_stages_embeddings():
    eager, staged = _model(), _model()
    opt_e, opt_g = flow.optim.SGD(eager.parameters(), lr=0.1), flow.optim.SGD(staged.parameters(), lr=0.1)
    g = _Train(staged, opt_g, stage=True)
    view = g.model.pos_embed.to(GraphTensor)
    assert (view.name, view.type) == ("pos_embed", "PARAMETER")
    # each view of the tensor reads the stage it was given (the stage belongs to the tensor)
    assert g.model.pos_embed.to(GraphTensor).stage_id == 0 and view.stage_placement == _cpu()
    assert g.model.blocks[0].weight.to(GraphTensor).stage_id is None
    for x, y in _batches(3):  # staging places nothing on one process: the same training as eager
        le = nn.CrossEntropyLoss()(eager(x), y)
        le.backward()
        opt_e.step()
        opt_e.zero_grad()
        np.testing.assert_allclose(g(x, y).numpy(), le.numpy(), rtol=1e-6)
    np.testing.assert_allclose(staged.pos_embed.numpy(), eager.pos_embed.numpy(), rtol=1e-6)


def test_graph_tensor_set_stage_errors():
    g = _Train(_model(), flow.optim.SGD(_model().parameters(), lr=0.1))
    view = g.model.pos_embed.to(GraphTensor)
    with pytest.raises(ValueError, match="stage_id must be a non-negative int"):
        view.set_stage(-1, _cpu())
    with pytest.raises(TypeError, match="placement must be a oneflow.placement"):
        view.set_stage(0, "cpu")
    view.stage_id = 2  # (OneFlow's older spelling: the id alone)
    assert (view.stage_id, view.stage_placement) == (2, None)


def test_module_apply_replaces_global_parameters_in_place():
    # LiBai's build_model: model._apply(f) with f re-placing every (global) tensor on the device
    # type of its configuration; the parameters keep their identity, so optimizers stay valid.
    m = nn.Linear(3, 2).to_global(_cpu(), flow.sbp.broadcast)
    w = m.weight
    opt = flow.optim.SGD(m.parameters(), lr=1.0)
    m._apply(lambda t: t.to_global(placement=flow.placement("cpu", ranks=t.placement.ranks)))
    assert m.weight is w and w.is_global and w.placement == _cpu()
    before = w.numpy().copy()
    m(flow.ones(1, 3).to_global(_cpu(), flow.sbp.broadcast)).sum().backward()
    opt.step()
    np.testing.assert_allclose(w.numpy(), before - 1.0)  # d(sum)/dW = ones: the step reached w
    other = nn.Linear(3, 2).to_global(_cpu(), flow.sbp.broadcast).weight  # a GlobalParameter
    w.data = other
    np.testing.assert_array_equal(w.numpy(), other.numpy())
    with pytest.raises(TypeError, match="must be set to a global tensor"):
        w.data = flow.zeros(2, 3)


def test_data_utils_path_as_libai_reaches_it():
    # LiBai's get_batch: `isinstance(data, flow.utils.data._utils.worker.ExceptionWrapper)`, by
    # attribute from `import oneflow as flow` alone.
    wrapper = flow.utils.data._utils.worker.ExceptionWrapper
    loader = flow.utils.data.DataLoader(flow.utils.data.TensorDataset(flow.arange(6)), batch_size=4)
    assert not any(isinstance(b, wrapper) for b in loader)
    try:
        raise KeyError("missing")
    except KeyError:
        import sys
        caught = wrapper(sys.exc_info(), "in DataLoader worker process 0")
    with pytest.raises(KeyError, match="in DataLoader worker process 0"):
        caught.reraise()
    assert flow.utils.data._utils.collate.default_collate is flow.utils.data.default_collate


def _warmup_cosine(opt):
    # LiBai's WarmupCosineLR: OneFlow's WarmupLR over CosineDecayLR (closed forms of the step)
    return flow.optim.lr_scheduler.WarmupLR(flow.optim.lr_scheduler.CosineDecayLR(opt, decay_steps=4, alpha=0.1),
                                           warmup_factor=0.25, warmup_iters=2, warmup_method="linear")


def test_graph_steps_its_own_schedule_as_oneflow():
    # LiBai's trainer gives the graph the scheduler and steps that same object after every graph
    # call to log the rate (hooks.LRScheduler): OneFlow's graph schedules by its own step count,
    # so the rate moves once per call -- the same run as eager training with sch.step().
    eager, graphed = _model(), _model()
    opt_e = flow.optim.SGD(eager.parameters(), lr=0.5)
    opt_g = flow.optim.SGD(graphed.parameters(), lr=0.5)
    sch_e, sch_g = _warmup_cosine(opt_e), _warmup_cosine(opt_g)
    g = _Train(graphed, opt_g, sch_g)
    logged, want = [], []
    for x, y in _batches(5):
        want.append(opt_e.param_groups[0]["lr"])
        le = nn.CrossEntropyLoss()(eager(x), y)
        le.backward()
        opt_e.step()
        opt_e.zero_grad()
        sch_e.step()
        np.testing.assert_allclose(g(x, y).numpy(), le.numpy(), rtol=1e-6)
        logged.append(sch_g.get_last_lr()[0])
        sch_g.step()
    assert logged == want and want[0] == 0.125 and want[1] > want[0] > want[-1]  # (warmup, then the cosine)
    for a, b in zip(graphed.parameters(), eager.parameters()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
    # left alone, the given scheduler stays where it was: the graph stepped its own copy (saved
    # with the graph), whose rate the optimizer takes
    m2 = _model()
    opt = flow.optim.SGD(m2.parameters(), lr=0.5)
    sch = _warmup_cosine(opt)
    g2 = _Train(m2, opt, sch)
    for x, y in _batches(2):
        g2(x, y)
    assert sch.last_epoch == 0 and g2.state_dict()["_lr_schedulers"][0]["last_epoch"] == 2
    assert opt.param_groups[0]["lr"] == logged[2]


def _half_activation():
    rs = np.random.RandomState(5)
    x = flow.tensor(rs.randn(2, 3, 8).astype(np.float32))
    w = flow.tensor(rs.randn(8, 8).astype(np.float32))
    b = flow.tensor(rs.randn(8).astype(np.float32), requires_grad=True)
    return x, w, b


@pytest.mark.parametrize("op", ["fused_bias_add_gelu", "fused_bias_add_dropout"])
def test_bias_add_fusions_under_autocast(op):
    # LiBai's MLP and attention output under AMP: a bfloat16 matmul result and its float32 bias.
    # Both run in float32, as the composition `a + b` promotes (OneFlow's AMP: gray list).
    x, w, b = _half_activation()
    with flow.autocast("cpu"):
        h = flow.matmul(x, w)
        assert h.dtype == flow.bfloat16
        if op == "fused_bias_add_gelu":
            y = flow._C.fused_bias_add_gelu(h, b, axis=2)
        else:
            y = flow._C.fused_bias_add_dropout(h, b, p=0.0, axis=2)
    assert y.dtype == flow.float32
    y.sum().backward()
    tb = torch.tensor(b.detach().numpy(), requires_grad=True)
    th = torch.tensor(h.float().numpy())
    want = torch.nn.functional.gelu(th + tb) if op == "fused_bias_add_gelu" else th + tb
    want.sum().backward()
    np.testing.assert_allclose(y.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert b.grad.dtype == flow.float32
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_gemm_fusions_under_autocast_run_in_bfloat16():
    # fused_matmul_bias and fused_glu are GEMMs (OneFlow's AMP white list): the lower dtype, as
    # torch's linear under autocast.
    x, w, b = _half_activation()
    with flow.autocast("cpu"):
        y = flow._C.fused_matmul_bias(x, w, b.detach())
        gl = flow._C.fused_glu(x, flow.cat([w, w * 0.5]), flow.cat([b.detach(), b.detach()]), activation="gelu")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ty = torch.nn.functional.linear(torch.tensor(x.numpy()), torch.tensor(w.numpy()),
                                        torch.tensor(b.detach().numpy()))
    assert y.dtype == gl.dtype == flow.bfloat16 and ty.dtype == torch.bfloat16
    np.testing.assert_allclose(y.float().numpy(), ty.float().numpy(), rtol=2e-2, atol=5e-2)
    assert gl.shape == (2, 3, 8)


def test_fusions_keep_their_dtype_errors_outside_autocast():
    a = flow.randn(2, 8, dtype=flow.float64)
    with pytest.raises(RuntimeError, match=r"fused_bias_add_dropout\(\): expected the bias of the input's dtype"):
        flow._C.fused_bias_add_dropout(a, flow.randn(8), p=0.1, axis=1)
    with pytest.raises(RuntimeError, match=r"fused_glu\(\): expected w, b, v, c of the input's dtype"):
        flow._C.fused_glu(a, flow.randn(4, 8), activation="none")


def test_amp_graph_traces_libai_style_mlp():
    # LiBai's default configs (train.amp.enabled) trace their graphs under AMP: the MLP's
    # matmul + fused_bias_add_gelu + fused_bias_add_dropout on global tensors, a loss in float32.
    flow.manual_seed(0)

    def glob(t):
        return nn.Parameter(t.to_global(_cpu(), flow.sbp.broadcast))
    w1, b1 = glob(flow.randn(8, 16) * 0.1), glob(flow.zeros(16))
    w2, b2 = glob(flow.randn(16, 8) * 0.1), glob(flow.zeros(8))

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1, self.b1, self.w2, self.b2 = w1, b1, w2, b2

        def forward(self, x):
            h = flow._C.fused_bias_add_gelu(flow.matmul(x, self.w1), self.b1, axis=1)
            return flow._C.fused_bias_add_dropout(flow.matmul(h, self.w2), self.b2, p=0.0, axis=1)

    m = Mlp()
    opt = flow.optim.SGD(m.parameters(), lr=0.1)

    class G(nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m
            self.add_optimizer(opt)
            self.config.enable_amp(True)

        def build(self, x):
            loss = self.m(x).float().pow(2).mean()
            loss.backward()
            return loss

    g, x = G(), flow.randn(4, 8).to_global(_cpu(), flow.sbp.broadcast)
    losses = [float(g(x).numpy()) for _ in range(3)]
    assert losses[2] < losses[0] and all(p.dtype == flow.float32 for p in m.parameters())
