"""optim.swa_utils against torch.optim.swa_utils: AveragedModel (SWA running mean, EMA through
avg_fn / multi_avg_fn, buffers copied or averaged), SWALR's learning rates, update_bn."""
import numpy as np
import pytest
import torch

from harness import flow


def _net(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.BatchNorm1d(6), lib.nn.ReLU(), lib.nn.Linear(6, 2))


def _twins(seed):
    t = _net(torch)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in t.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    f = _net(flow)
    f.load_state_dict({k: flow.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return f, t


def _train_bn(f, t, seed):
    """A forward in train mode: moves the batch-norm statistics (and num_batches_tracked)."""
    x = np.random.default_rng(seed).standard_normal((8, 4)).astype(np.float32)
    f.train(), t.train()
    f(flow.tensor(x)), t(torch.tensor(x))


def _same_state(fm, tm):
    fs, ts = fm.state_dict(), tm.state_dict()
    assert list(fs) == list(ts)
    for k in ts:
        np.testing.assert_allclose(fs[k].numpy(), ts[k].numpy(), rtol=1e-6, atol=1e-6, err_msg=k)


FNS = {
    "swa": lambda su: {},
    "ema multi": lambda su: {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)},
    "ema avg_fn": lambda su: {"avg_fn": su.get_ema_avg_fn(0.8)},
    "swa avg_fn": lambda su: {"avg_fn": su.get_swa_avg_fn()},
    "swa multi": lambda su: {"multi_avg_fn": su.get_swa_multi_avg_fn()},
}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("fn", list(FNS))
def test_averaged_model_as_torch(fn, use_buffers):
    fa = ta = None
    for step in range(4):
        f, t = _twins(step)
        _train_bn(f, t, step)
        if fa is None:
            fa = flow.optim.swa_utils.AveragedModel(f, use_buffers=use_buffers, **FNS[fn](flow.optim.swa_utils))
            # PyTorch's own get_swa_multi_avg_fn fails on integer buffers (an integer addcdiv):
            # its per-tensor form, the same running mean, is the reference there.
            ref_fn = "swa avg_fn" if fn == "swa multi" and use_buffers else fn
            ta = torch.optim.swa_utils.AveragedModel(t, use_buffers=use_buffers, **FNS[ref_fn](torch.optim.swa_utils))
        fa.update_parameters(f)
        ta.update_parameters(t)
        _same_state(fa, ta)
    assert fa.n_averaged.item() == 4 and fa.n_averaged.dtype == flow.int64
    x = np.random.default_rng(9).standard_normal((3, 4)).astype(np.float32)
    fa.eval(), ta.eval()
    np.testing.assert_allclose(fa(flow.tensor(x)).detach().numpy(), ta(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    assert [n for n, _ in fa.named_parameters()] == [n for n, _ in ta.named_parameters()]


def test_averaged_model_is_a_copy_and_checks_arguments():
    f, _ = _twins(0)
    fa = flow.optim.swa_utils.AveragedModel(f)
    assert fa.module is not f and fa.module[0].weight is not f[0].weight
    su = flow.optim.swa_utils
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        su.AveragedModel(f, avg_fn=su.get_ema_avg_fn(), multi_avg_fn=su.get_ema_multi_avg_fn())


def _sgd(lib, params, lrs):
    groups = [{"params": [p], "lr": lr} for p, lr in zip(params, lrs)]
    return lib.optim.SGD(groups, lr=0.1)


@pytest.mark.parametrize("kwargs", [
    {"swa_lr": 0.05}, {"swa_lr": 0.05, "anneal_epochs": 3, "anneal_strategy": "linear"},
    {"swa_lr": [0.01, 0.2], "anneal_epochs": 4}, {"swa_lr": 0.02, "anneal_epochs": 0},
], ids=["cos10", "linear3", "per-group", "no-anneal"])
def test_swalr_learning_rates_as_torch(kwargs):
    fo = _sgd(flow, [flow.nn.Parameter(flow.zeros(2)), flow.nn.Parameter(flow.zeros(2))], [0.5, 0.1])
    to = _sgd(torch, [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))], [0.5, 0.1])
    fs = flow.optim.swa_utils.SWALR(fo, **kwargs)
    ts = torch.optim.swa_utils.SWALR(to, **kwargs)
    for _ in range(14):
        np.testing.assert_allclose([g["lr"] for g in fo.param_groups], [g["lr"] for g in to.param_groups],
                                   rtol=1e-12)
        np.testing.assert_allclose(fs.get_last_lr(), ts.get_last_lr(), rtol=1e-12)
        fo.step(), to.step()
        fs.step(), ts.step()


def test_swalr_errors():
    opt = _sgd(flow, [flow.nn.Parameter(flow.zeros(2))], [0.1])
    su = flow.optim.swa_utils
    with pytest.raises(ValueError, match="anneal_strategy must by one of 'cos' or 'linear'"):
        su.SWALR(opt, 0.05, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        su.SWALR(opt, 0.05, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length"):
        su.SWALR(opt, [0.05, 0.1])


def test_update_bn_as_torch():
    f, t = _twins(3)
    f.eval(), t.eval()
    f[1].momentum = t[1].momentum = 0.3
    rng = np.random.default_rng(4)
    batches = [rng.standard_normal((5, 4)).astype(np.float32) * (i + 1) for i in range(3)]
    # Batches as tensors and as (input, target) pairs: the first item is the input.
    flow.optim.swa_utils.update_bn([flow.tensor(b) if i % 2 else (flow.tensor(b), 0) for i, b in enumerate(batches)], f)
    torch.optim.swa_utils.update_bn([torch.tensor(b) if i % 2 else (torch.tensor(b), 0) for i, b in enumerate(batches)], t)
    _same_state(f, t)
    assert not f.training and f[1].momentum == 0.3
    g = _net(flow).train()  # a model without batch norms: nothing to do
    flow.optim.swa_utils.update_bn([], flow.nn.Linear(2, 2))
    assert g.training
