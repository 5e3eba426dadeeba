"""QAT of the weightless leaf modules PyTorch observes (Hardswish, LeakyReLU, ReLU6, ELU, unfused
BatchNorm2d, GroupNorm, LayerNorm, InstanceNorm) against torch.ao.quantization: same prepared
structure, training steps, convert against PyTorch's int8 model. Norms are compared one op at a
time: their float32 outputs differ from PyTorch's in the last bits, which can move a value onto the
neighbouring grid point, and later layers would amplify that one step."""
import numpy as np
import pytest
import torch
import torch.ao.quantization as tq

import oneflow as flow
import oneflow.ao.quantization as fq

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _model(nn, q):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = q.QuantStub()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.hs = nn.Hardswish()
            self.conv2 = nn.Conv2d(8, 4, 3, stride=2)
            self.leaky = nn.LeakyReLU(0.1)
            self.relu6 = nn.ReLU6()
            self.fc = nn.Linear(36, 6)
            self.elu = nn.ELU()
            self.dequant = q.DeQuantStub()

        def forward(self, x):
            x = self.quant(x)
            x = self.hs(self.conv(x))
            x = self.relu6(self.leaky(self.conv2(x)))
            x = self.elu(self.fc(x.reshape(x.shape[0], -1)))
            return self.dequant(x)

    return M()


def _run(steps):
    torch.manual_seed(0)
    tm, fm = _model(torch.nn, tq), _model(flow.nn, fq)
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tm.qconfig = tq.get_default_qat_qconfig("x86")
    fm.qconfig = fq.get_default_qat_qconfig("x86")
    tq.prepare_qat(tm.train(), inplace=True)
    fm = fq.prepare_qat(fm.train())
    assert set(tm.state_dict()) == set(fm.state_dict())
    topt = torch.optim.SGD(tm.parameters(), lr=0.05)
    fopt = flow.optim.SGD(fm.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    outs = []
    for _ in range(steps):
        x = rng.standard_normal((4, 3, 7, 7)).astype(np.float32)
        tout, fout = tm(torch.tensor(x)), fm(flow.tensor(x))
        outs.append((tout.detach().numpy(), fout.numpy(), float(tm.elu.activation_post_process.scale)))
        topt.zero_grad()
        fopt.zero_grad()
        tout.square().sum().backward()
        fout.square().sum().backward()
        topt.step()
        fopt.step()
    tm.eval(), fm.eval()
    tc, fc = tq.convert(tm), fq.convert(fm)
    x = rng.standard_normal((4, 3, 7, 7)).astype(np.float32)
    return tm, fm, outs, tc(torch.tensor(x)).numpy(), fc(flow.tensor(x)).numpy(), fc, float(tc.elu.scale)


def test_elementwise_ops_match_torch_step_by_step():
    tm, fm, outs, a, b, fc, step_size = _run(steps=4)
    for tout, fout, _ in outs:
        np.testing.assert_allclose(fout, tout, rtol=1e-5, atol=1e-6)
    fparams = dict(fm.named_parameters())
    for name, p in tm.named_parameters():
        if p.grad is not None:
            np.testing.assert_allclose(fparams[name].grad.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert type(fc.hs) is flow.ao.nn.quantized.FloatOp and type(fc.relu6) is flow.ao.nn.quantized.ReLU6
    assert np.abs(a - b).max() <= step_size * 1.001
    assert (np.abs(a - b) < 1e-6).mean() >= 0.9


OPS = [("BatchNorm2d", (4,), (2, 4, 3, 3)), ("GroupNorm", (2, 4), (2, 4, 3, 3)), ("LayerNorm", (5,), (3, 4, 5)),
       ("InstanceNorm2d", (4,), (2, 4, 3, 3)), ("Hardswish", (), (3, 8)), ("ELU", (), (3, 8)),
       ("LeakyReLU", (0.2,), (3, 8))]


@pytest.mark.parametrize("name,args,shape", OPS)
def test_single_op_qat_and_convert_match_torch(name, args, shape):
    # one op between the stubs: same input grid on both sides, so PyTorch's quantized kernel and our
    # float op + requantization agree within one output step (float32 norms differ in the last bits)
    def build(nn, q):
        return nn.Sequential(q.QuantStub(), getattr(nn, name)(*args), q.DeQuantStub())

    torch.manual_seed(0)
    tm, fm = build(torch.nn, tq), build(flow.nn, fq)
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tm.qconfig = tq.get_default_qat_qconfig("x86")
    fm.qconfig = fq.get_default_qat_qconfig("x86")
    tq.prepare_qat(tm.train(), inplace=True)
    fm = fq.prepare_qat(fm.train())
    assert set(tm.state_dict()) == set(fm.state_dict()) and hasattr(fm[1], "activation_post_process")
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = (rng.standard_normal(shape) * 2).astype(np.float32)
        tout, fout = tm(torch.tensor(x)).detach().numpy(), fm(flow.tensor(x)).numpy()
        scale = float(tm[1].activation_post_process.scale)
        assert np.abs(fout - tout).max() <= scale * 1.001 and (np.abs(fout - tout) < 1e-6).mean() >= 0.9
    tm.eval(), fm.eval()
    tc, fc = tq.convert(tm), fq.convert(fm)
    assert type(fc[1]) is flow.ao.nn.quantized.FloatOp and not fc[1].op.training
    x = (rng.standard_normal(shape) * 2).astype(np.float32)
    a, b = tc(torch.tensor(x)).numpy(), fc(flow.tensor(x)).numpy()
    step_size = float(tc[1].scale)
    assert np.abs(a - b).max() <= step_size * 1.001
    assert (np.abs(a - b) < 1e-6).mean() >= 0.9
