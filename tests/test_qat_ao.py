"""oneflow.ao.quantization's eager QAT flow against PyTorch's torch.ao.quantization: the same model
and weights, prepare_qat with the same default qconfig, a few SGD steps compared step by step
(fake-quantized outputs, gradients, learned scales / zero points), then convert (ours runs in
float on the quantization grid; PyTorch's runs int8 kernels)."""
import numpy as np
import pytest
import torch
import torch.ao.quantization as tq

import oneflow as flow
import oneflow.ao.quantization as fq

# PyTorch's eager quantization warns that it is deprecated (and reduce_range); the reference still runs
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _model(nn, q):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = q.QuantStub()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(8, 4, 3, stride=2, bias=False)
            self.conv1d = nn.Conv1d(4, 4, 2)
            self.fc = nn.Linear(4 * 8, 5)
            self.dequant = q.DeQuantStub()

        def forward(self, x):
            x = self.quant(x)
            x = self.relu(self.conv(x))
            x = self.conv2(x)
            x = self.conv1d(x.reshape(x.shape[0], 4, 9))
            x = self.fc(x.reshape(x.shape[0], -1))
            return self.dequant(x)

    return M()


def _pair(backend, version, seed=0):
    torch.manual_seed(seed)
    tm = _model(torch.nn, tq)
    fm = _model(flow.nn, fq)
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tm.qconfig = tq.get_default_qat_qconfig(backend, version)
    fm.qconfig = fq.get_default_qat_qconfig(backend, version)
    tq.prepare_qat(tm.train(), inplace=True)
    fm = fq.prepare_qat(fm.train())
    return tm, fm


def _fake_quants(model):
    return {n: m for n, m in model.named_modules() if type(m).__name__ in ("FakeQuantize", "FusedMovingAvgObsFakeQuantize")}


@pytest.mark.parametrize("backend,version", [("x86", 1), ("fbgemm", 1), ("qnnpack", 1), ("x86", 0)])
def test_prepare_train_convert_matches_torch(backend, version):
    tm, fm = _pair(backend, version)
    assert set(tm.state_dict()) == set(fm.state_dict())  # same structure: same names of every buffer
    assert set(_fake_quants(tm)) == set(_fake_quants(fm)) and len(_fake_quants(fm)) == 8  # conv1d: output only
    topt = torch.optim.SGD(tm.parameters(), lr=0.05)
    fopt = flow.optim.SGD(fm.parameters(), lr=0.05)
    rng = np.random.default_rng(1)
    fparams = dict(fm.named_parameters())
    for step in range(4):
        x = (rng.standard_normal((4, 3, 7, 7)) * (1 + 0.3 * step)).astype(np.float32)
        tout, fout = tm(torch.tensor(x)), fm(flow.tensor(x))
        np.testing.assert_allclose(fout.numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
        tloss, floss = tout.square().sum(), fout.square().sum()
        topt.zero_grad()
        fopt.zero_grad()
        tloss.backward()
        floss.backward()
        for name, p in tm.named_parameters():
            np.testing.assert_allclose(fparams[name].grad.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"step {step} {name}")
        tfq, ffq = _fake_quants(tm), _fake_quants(fm)
        for name in tfq:
            np.testing.assert_allclose(ffq[name].scale.numpy(), tfq[name].scale.numpy(), rtol=1e-6,
                                       err_msg=f"step {step} {name}")
            np.testing.assert_array_equal(ffq[name].zero_point.numpy(), tfq[name].zero_point.numpy())
            tobs, fobs = tfq[name].activation_post_process, ffq[name].activation_post_process
            np.testing.assert_allclose(fobs.min_val.numpy(), tobs.min_val.numpy(), rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(fobs.max_val.numpy(), tobs.max_val.numpy(), rtol=1e-6, atol=1e-7)
        topt.step()
        fopt.step()
    # freeze the observers, then convert (PyTorch's int8 kernels on its side)
    tm.apply(tq.disable_observer)
    fm.apply(fq.disable_observer)
    tm.eval(), fm.eval()
    x = rng.standard_normal((4, 3, 7, 7)).astype(np.float32)
    np.testing.assert_allclose(fm(flow.tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    torch.backends.quantized.engine = "qnnpack" if backend == "qnnpack" else "x86"
    tc, fc = tq.convert(tm), fq.convert(fm)
    assert type(fc.conv).__name__ == "Conv2d" and type(fc.fc).__module__.endswith("quantized.modules")
    assert not any("activation_post_process" in n or "fake_quant" in n for n, _ in fc.named_modules())
    for name in ("quant", "conv", "conv2", "conv1d", "fc"):
        assert float(getattr(fc, name).scale) == pytest.approx(float(getattr(tc, name).scale), rel=1e-6)
        assert int(getattr(fc, name).zero_point) == int(getattr(tc, name).zero_point)
    a, b = tc(torch.tensor(x)).numpy(), fc(flow.tensor(x)).numpy()
    # ours rounds a float accumulation onto the output grid, PyTorch an int32 one: at most one step apart
    step_size = float(tc.fc.scale)
    assert np.abs(a - b).max() <= step_size * 1.001
    assert (np.abs(a - b) < 1e-6).mean() >= 0.9
    # the converted output lies on the output grid
    q = b / step_size + int(tc.fc.zero_point)
    np.testing.assert_allclose(q, np.round(q), atol=1e-3)


@pytest.mark.parametrize("per_channel", [False, True])
def test_fake_quantize_gradient_is_masked_like_torch(per_channel):
    rng = np.random.default_rng(2)
    x_np = (rng.standard_normal((3, 5, 4)) * 3).astype(np.float32)
    x, tx = flow.tensor(x_np, requires_grad=True), torch.tensor(x_np, requires_grad=True)
    if per_channel:
        scale, zp = np.array([0.01, 0.02, 0.05], np.float32), np.array([0, 3, -2], np.int32)
        y = fq.fake_quantize(x, flow.tensor(scale), flow.tensor(zp), -128, 127, ch_axis=0)
        ty = torch.fake_quantize_per_channel_affine(tx, torch.tensor(scale), torch.tensor(zp), 0, -128, 127)
    else:
        y = fq.fake_quantize(x, flow.tensor([0.013]), flow.tensor([60]), 0, 127)
        ty = torch.fake_quantize_per_tensor_affine(tx, 0.013, 60, 0, 127)
    np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
    g = rng.standard_normal(x_np.shape).astype(np.float32)
    y.backward(flow.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert (x.grad.numpy() == 0).any() and (x.grad.numpy() != 0).any()  # both clamped and passed values


@pytest.mark.parametrize("lo,hi,symmetric", [
    (0.0, 0.0, False), (-1e-7, 2e-7, False), (0.0, 1e-6, False), (-3.0, -1.0, False), (0.5, 7.0, False),
    (-2.5, 1.25, False), (-2.5, 1.25, True), (-1e-7, 3e-7, True), (0.5, 7.0, True), (-0.3, 0.0, True),
    (-1e-6, -1e-7, False), (-1e-6, -1e-7, True), (0.0, 0.0, True)])
def test_choose_qparams_matches_torch_fused_op(lo, hi, symmetric):
    # the fused op's qparams for a running min / max, including its degenerate-range branches
    qmin, qmax = (-128, 127) if symmetric else (0, 127)
    x = torch.tensor([lo, hi])
    scale, zp = torch.tensor([1.0]), torch.tensor([0], dtype=torch.int32)
    torch.fused_moving_avg_obs_fake_quant(x, torch.tensor([1]), torch.tensor([1]), torch.tensor(float("inf")),
                                          torch.tensor(float("-inf")), scale, zp, 0.01, qmin, qmax, 0, False,
                                          symmetric)
    s, z = fq.choose_qparams(np.float32(lo), np.float32(hi), qmin, qmax, symmetric)
    assert s[0] == scale.item() and z[0] == zp.item()


def test_quant_wrapper_and_module_qconfig():
    # a submodule's own qconfig None keeps it float; QuantWrapper quantizes the wrapped module's input
    net = flow.nn.Sequential(flow.nn.Linear(4, 4), flow.nn.Linear(4, 2))
    net[1].qconfig = None
    wrapped = fq.QuantWrapper(net)
    wrapped.qconfig = fq.get_default_qat_qconfig("x86")
    qat = fq.prepare_qat(wrapped)
    assert type(qat.module[0]).__module__.endswith("qat.modules") and type(qat.module[1]) is flow.nn.Linear
    assert hasattr(qat.quant, "activation_post_process") and not hasattr(qat.dequant, "activation_post_process")
    assert type(wrapped.module[0]) is flow.nn.Linear  # not inplace: the original model is untouched
    out = qat(flow.randn(3, 4))
    assert out.shape == (3, 2)


def test_qat_errors():
    m = _model(flow.nn, fq)
    m.qconfig = fq.get_default_qat_qconfig("x86")
    with pytest.raises(RuntimeError, match="training mode"):
        fq.prepare_qat(m.eval())
    with pytest.raises(ValueError, match="backend"):
        fq.get_default_qat_qconfig("tpu")
    with pytest.raises(ValueError, match="observer instance"):
        fq.QConfig(activation=fq.FakeQuantize(), weight=fq.default_weight_fake_quant)
    with pytest.raises(ValueError, match="qconfig is required"):
        flow.ao.nn.qat.Conv2d(1, 1, 1)
    with pytest.raises(ValueError, match="quant_min"):
        fq.FakeQuantize(quant_min=5, quant_max=1)
    with pytest.raises(ValueError, match="dtype"):
        fq.MovingAverageMinMaxObserver(dtype="float16")
    # convert without prepare_qat: the QuantStub has a qconfig but learned nothing
    m.train()
    fq.propagate_qconfig_(m)
    assert m.quant.qconfig is m.qconfig
    with pytest.raises(RuntimeError, match="prepare_qat"):
        fq.convert(m)


def test_qat_checkpoint_from_torch_and_back_into_a_fresh_model():
    # a QAT checkpoint written by PyTorch (per-channel statistics sized by training) loads into a fresh
    # prepared oneflow model, whose frozen fake-quantized outputs then equal PyTorch's
    tm, _ = _pair("x86", 1, seed=3)
    topt = torch.optim.SGD(tm.parameters(), lr=0.05)
    rng = np.random.default_rng(4)
    for _ in range(2):
        topt.zero_grad()
        tm(torch.tensor(rng.standard_normal((4, 3, 7, 7)).astype(np.float32))).square().sum().backward()
        topt.step()
    fresh = _model(flow.nn, fq)
    fresh.qconfig = fq.get_default_qat_qconfig("x86")
    fresh = fq.prepare_qat(fresh.train())
    fresh.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    assert tuple(fresh.conv.weight_fake_quant.activation_post_process.min_val.shape) == (8,)
    tm.apply(tq.disable_observer)
    fresh.apply(fq.disable_observer)
    x = rng.standard_normal((4, 3, 7, 7)).astype(np.float32)
    np.testing.assert_allclose(fresh(flow.tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    # and our own checkpoint into another fresh model
    again = _model(flow.nn, fq)
    again.qconfig = fq.get_default_qat_qconfig("x86")
    again = fq.prepare_qat(again.train())
    again.load_state_dict(fresh.state_dict())
    again.apply(fq.disable_observer)
    np.testing.assert_array_equal(again(flow.tensor(x)).numpy(), fresh(flow.tensor(x)).numpy())
