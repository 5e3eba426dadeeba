"""Lazy modules: the first input fixes in_features / in_channels / num_features, the module
becomes its eager class with parameters initialised as that class would (same shapes, same
init statistics; a seeded lazy module equals the eager one built with the same seed), optimizers
built before the first call train the materialised parameters, state dicts load into an
uninitialised lazy module, and the reprs match torch's."""

import numpy as np
import pytest
import torch

from harness import SHIM, flow
from nn_util import as_installed_torch_repr

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow lazy modules")

CASES = [
    ("LazyLinear", (4,), "Linear", (5, 4), (3, 5)),
    ("LazyConv1d", (6, 3), "Conv1d", (2, 6, 3), (2, 2, 9)),
    ("LazyConv2d", (6, 3), "Conv2d", (3, 6, 3), (2, 3, 7, 7)),
    ("LazyConv3d", (4, 2), "Conv3d", (2, 4, 2), (1, 2, 4, 4, 4)),
    ("LazyConvTranspose1d", (5, 3), "ConvTranspose1d", (2, 5, 3), (2, 2, 6)),
    ("LazyConvTranspose2d", (5, 3), "ConvTranspose2d", (3, 5, 3), (2, 3, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), "ConvTranspose3d", (3, 2, 2), (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), "BatchNorm1d", (6,), (4, 6)),
    ("LazyBatchNorm2d", (), "BatchNorm2d", (3,), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), "BatchNorm3d", (2,), (2, 2, 3, 3, 3)),
    ("LazyInstanceNorm1d", (), "InstanceNorm1d", (3, 1e-5, 0.1, True, True), (2, 3, 8)),
    ("LazyInstanceNorm2d", (), "InstanceNorm2d", (3, 1e-5, 0.1, True, True), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), "InstanceNorm3d", (2, 1e-5, 0.1, True, True), (1, 2, 3, 3, 3)),
    ("LazyInstanceNorm1d", (), "InstanceNorm1d", (3, 1e-5, 0.1, True, True), (3, 8)),  # unbatched (C, L)
]


@pytest.mark.parametrize("lazy,args,eager,eager_args,shape", CASES, ids=[c[0] for c in CASES])
def test_lazy_module_becomes_eager(lazy, args, eager, eager_args, shape):
    assert as_installed_torch_repr(repr(getattr(flow.nn, lazy)(*args))) == repr(getattr(torch.nn, lazy)(*args))
    x = flow.randn(*shape)
    flow.manual_seed(3)
    m = getattr(flow.nn, lazy)(*args)
    y = m(x)  # initialises: the draws right after the seed, as the eager module's
    flow.manual_seed(3)
    ref = getattr(flow.nn, eager)(*eager_args)
    assert type(m) is getattr(flow.nn, eager) and repr(m) == repr(ref)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in ref.named_parameters()]
    assert [(n, tuple(b.shape)) for n, b in m.named_buffers()] == [(n, tuple(b.shape)) for n, b in ref.named_buffers()]
    for p in m.parameters():
        assert type(p) is flow.nn.Parameter
    yr = ref(x)  # (batch norms update their running statistics in this call, as m did)
    for (n, a), (_, b) in zip(m.state_dict().items(), ref.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)  # the eager init, same draws
    np.testing.assert_allclose(y.detach().numpy(), yr.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_optimizer_before_first_call_and_state_dict_loading():
    flow.manual_seed(0)
    m = flow.nn.Sequential(flow.nn.LazyLinear(8), flow.nn.ReLU(), flow.nn.LazyLinear(2))
    opt = flow.optim.SGD(m.parameters(), lr=0.1)
    x, t = flow.randn(16, 5), flow.randn(16, 2)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = ((m(x) - t) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < losses[0]  # the optimizer holds the materialised parameters
    lz = flow.nn.Sequential(flow.nn.LazyLinear(8), flow.nn.ReLU(), flow.nn.LazyLinear(2))
    lz.load_state_dict(m.state_dict())
    np.testing.assert_allclose(lz(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    assert type(lz[0]) is flow.nn.Linear
    with pytest.raises(ValueError):
        flow.nn.LazyConv2d(5, 3, groups=2)
    with pytest.raises(ValueError):
        flow.nn.LazyConv2d(4, 3, groups=2)(flow.randn(1, 3, 5, 5))


def test_buffer_marker():
    class M(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = flow.nn.Buffer(flow.ones(3))
            self.b = flow.nn.Buffer(flow.zeros(2), persistent=False)

    m = M()
    assert [n for n, _ in m.named_buffers()] == ["a", "b"]
    assert list(m.state_dict()) == ["a"]
    assert isinstance(m.a, flow.nn.Buffer) and not isinstance(flow.ones(1), flow.nn.Buffer)
    t = torch.nn.Module()
    t.a = torch.nn.Buffer(torch.ones(3))
    assert list(t.state_dict()) == list(m.state_dict())
    m.a = flow.full((3,), 2.0)  # reassigning a registered buffer keeps it a buffer
    assert float(m.state_dict()["a"].sum()) == 6.0


def test_adaptive_log_softmax_against_torch():
    import copy
    torch.manual_seed(0)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=True)
    fm = flow.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=True)
    assert [(n, tuple(p.shape)) for n, p in fm.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 16)).astype(np.float32)
    tgt = np.array([0, 3, 4, 9, 10, 14, 15, 19, 2, 11, 16, 5])
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fo, to = fm(fx, flow.tensor(tgt)), tm(tx, torch.tensor(tgt))
    np.testing.assert_allclose(fo.output.detach().numpy(), to.output.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(fo.loss.detach()), float(to.loss.detach()), rtol=1e-5)
    fo.loss.backward(), to.loss.backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    for (n, a), (_, b) in zip(fm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=n)
    np.testing.assert_allclose(fm.log_prob(flow.tensor(x)).detach().numpy(), tm.log_prob(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(fm.predict(flow.tensor(x)).numpy(), tm.predict(torch.tensor(x)).numpy())
    single = fm(flow.tensor(x[0]), flow.tensor(tgt[0]))
    assert single.output.dim() == 0
    with pytest.raises(RuntimeError, match="Target values"):
        fm(flow.tensor(x[:2]), flow.tensor([0, 20]))
    with pytest.raises(ValueError):
        flow.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [10, 4])
