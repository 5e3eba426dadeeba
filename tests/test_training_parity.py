"""End-to-end parity: a small CNN and a small MLP trained 20 steps from identical weights and data
in oneflow and in torch give the same loss at every step (relative difference <= 1e-4), with
SGD + momentum and with AdamW + a learning-rate scheduler."""
import numpy as np
import pytest
import torch

import oneflow as flow

STEPS = 20


def _cnn(lib):
    nn = lib.nn
    # No bias on the conv before BatchNorm (as usual): BN cancels it, so its exact gradient is 0
    # and each library's is rounding noise, which Adam's g / sqrt(v) turns into full-size steps
    # of either sign; the running mean and eval outputs would then compare noise.
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(4, 6, 3), nn.ReLU(), nn.Flatten(),
                         nn.Linear(6 * 2 * 2, 10))


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh(),
                         nn.Linear(16, 5))


MODELS = {"cnn": (_cnn, (1, 8, 8), 10), "mlp": (_mlp, (20,), 5)}


def _optimizers(kind, fparams, tparams):
    if kind == "sgd":
        return (flow.optim.SGD(fparams, lr=0.05, momentum=0.9), None,
                torch.optim.SGD(tparams, lr=0.05, momentum=0.9), None)
    fo = flow.optim.AdamW(fparams, lr=0.01, weight_decay=0.05)
    to = torch.optim.AdamW(tparams, lr=0.01, weight_decay=0.05)
    fs = flow.optim.lr_scheduler.OneCycleLR(fo, max_lr=0.01, total_steps=STEPS)
    ts = torch.optim.lr_scheduler.OneCycleLR(to, max_lr=0.01, total_steps=STEPS)
    return fo, fs, to, ts


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("opt", ["sgd", "adamw_onecycle"])
def test_training_losses_match_torch(model, opt):
    make, shape, classes = MODELS[model]
    torch.manual_seed(0)
    tm = make(torch)
    fm = make(flow)
    fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    fo, fs, to, ts = _optimizers(opt, fm.parameters(), tm.parameters())
    rng = np.random.default_rng(1)
    floss, tloss = flow.nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    for step in range(STEPS):
        x = rng.standard_normal((16,) + shape).astype(np.float32)
        y = rng.integers(0, classes, 16)
        lf = floss(fm(flow.tensor(x)), flow.tensor(y))
        lt = tloss(tm(torch.tensor(x)), torch.tensor(y))
        fo.zero_grad()
        to.zero_grad()
        lf.backward()
        lt.backward()
        fo.step()
        to.step()
        if fs is not None:
            fs.step()
            ts.step()
        a, b = float(lf), float(lt)
        assert abs(a - b) <= 1e-4 * abs(b), f"step {step}: loss {a} vs torch {b}"
    fm.eval()
    tm.eval()
    x = rng.standard_normal((8,) + shape).astype(np.float32)
    np.testing.assert_allclose(fm(flow.tensor(x)).detach().numpy(),
                               tm(torch.tensor(x)).detach().numpy(), rtol=1e-3, atol=1e-4)
