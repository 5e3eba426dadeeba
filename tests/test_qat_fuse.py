"""fuse_modules / fuse_modules_qat and the fused QAT modules (conv + bn (+ relu) trained with bn
folded, conv + relu, linear + relu) against PyTorch's torch.ao.quantization on the same model:
state_dict structure, outputs and gradients over SGD steps (bn statistics frozen half-way), and
convert against PyTorch's int8 model."""
import numpy as np
import pytest
import torch
import torch.ao.quantization as tq

import oneflow as flow
import oneflow.ao.quantization as fq

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

GROUPS = [["conv", "bn", "relu"], ["conv2", "bn2"], ["conv3", "relu3"], ["fc", "relu4"]]


def _model(nn, q):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = q.QuantStub()
            self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(8, 4, 3, stride=2)
            self.bn2 = nn.BatchNorm2d(4)
            self.conv3 = nn.Conv2d(4, 4, 1)
            self.relu3 = nn.ReLU()
            self.fc = nn.Linear(4 * 9, 5)
            self.relu4 = nn.ReLU()
            self.dequant = q.DeQuantStub()

        def forward(self, x):
            x = self.quant(x)
            x = self.relu(self.bn(self.conv(x)))
            x = self.bn2(self.conv2(x))
            x = self.relu3(self.conv3(x))
            x = self.relu4(self.fc(x.reshape(x.shape[0], -1)))
            return self.dequant(x)

    return M()


def _pair(seed):
    torch.manual_seed(seed)
    tm, fm = _model(torch.nn, tq), _model(flow.nn, fq)
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, fm


def test_fused_qat_matches_torch():
    tm, fm = _pair(0)
    tm = tq.fuse_modules_qat(tm.train(), GROUPS)
    fm = fq.fuse_modules_qat(fm.train(), GROUPS)
    assert type(fm.conv).__name__ == "ConvBnReLU2d" and isinstance(fm.bn, flow.nn.Identity)
    tm.qconfig = tq.get_default_qat_qconfig("x86")
    fm.qconfig = fq.get_default_qat_qconfig("x86")
    tq.prepare_qat(tm, inplace=True)
    fm = fq.prepare_qat(fm)
    assert type(fm.conv) is flow.ao.nn.intrinsic.qat.ConvBnReLU2d
    assert set(tm.state_dict()) == set(fm.state_dict())
    topt = torch.optim.SGD(tm.parameters(), lr=0.05)
    fopt = flow.optim.SGD(fm.parameters(), lr=0.05)
    fparams = dict(fm.named_parameters())
    rng = np.random.default_rng(0)
    for step in range(4):
        if step == 2:  # PyTorch's recipe: freeze the bn statistics late in training
            tm.apply(torch.ao.nn.intrinsic.qat.freeze_bn_stats)
            fm.apply(flow.ao.nn.intrinsic.qat.freeze_bn_stats)
        x = rng.standard_normal((4, 3, 7, 7)).astype(np.float32)
        tout, fout = tm(torch.tensor(x)), fm(flow.tensor(x))
        np.testing.assert_allclose(fout.numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
        topt.zero_grad()
        fopt.zero_grad()
        tout.square().sum().backward()
        fout.square().sum().backward()
        for name, p in tm.named_parameters():
            np.testing.assert_allclose(fparams[name].grad.numpy(), p.grad.numpy(), rtol=1e-4, atol=2e-6,
                                       err_msg=f"step {step} {name}")
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(getattr(fm.conv.bn, name).numpy(), getattr(tm.conv.bn, name).numpy(),
                                       rtol=1e-5, atol=1e-6)
        topt.step()
        fopt.step()
    assert fm.conv.freeze_bn and not fm.conv.bn.training
    tm.eval(), fm.eval()
    tc, fc = tq.convert(tm), fq.convert(fm)
    assert type(fc.conv) is flow.ao.nn.quantized.ConvReLU2d and type(fc.conv2) is flow.ao.nn.quantized.Conv2d
    assert type(fc.fc) is flow.ao.nn.quantized.LinearReLU
    x = rng.standard_normal((4, 3, 7, 7)).astype(np.float32)
    a, b = tc(torch.tensor(x)).numpy(), fc(flow.tensor(x)).numpy()
    step_size = float(tc.fc.scale)
    assert np.abs(a - b).max() <= step_size * 1.001
    assert (np.abs(a - b) < 1e-6).mean() >= 0.9
    assert float(fc.conv.scale) == pytest.approx(float(tc.conv.scale), rel=1e-6)


def test_fuse_modules_eval_matches_torch():
    tm, fm = _pair(1)
    # give the batch norms non-trivial running statistics first
    x = np.random.default_rng(1).standard_normal((8, 3, 7, 7)).astype(np.float32)
    tm.train()(torch.tensor(x)), fm.train()(flow.tensor(x))
    tm.eval(), fm.eval()
    tf, ff = tq.fuse_modules(tm, GROUPS), fq.fuse_modules(fm, GROUPS)
    assert type(ff.conv2) is flow.nn.Conv2d and type(ff.conv) is flow.ao.nn.intrinsic.ConvReLU2d
    np.testing.assert_allclose(ff(flow.tensor(x)).numpy(), tf(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    # the original model is untouched (inplace=False) and still gives the same result
    np.testing.assert_allclose(fm(flow.tensor(x)).numpy(), ff(flow.tensor(x)).numpy(), rtol=1e-5, atol=1e-5)


def test_fuse_errors():
    fm = _model(flow.nn, fq).train()
    with pytest.raises(RuntimeError, match="eval"):
        fq.fuse_modules(fm, ["conv", "bn"])
    with pytest.raises(NotImplementedError, match="cannot fuse"):
        fq.fuse_modules_qat(fm, ["bn", "relu"])
    with pytest.raises(AttributeError, match="no submodule"):
        fq.fuse_modules_qat(fm, ["conv", "nothing"])
    with pytest.raises(TypeError, match="expected modules"):
        flow.ao.nn.intrinsic.ConvReLU2d(flow.nn.ReLU(), flow.nn.ReLU())
