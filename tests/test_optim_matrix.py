"""Adafactor and Muon (python/oneflow/optim/matrix.py) against torch.optim, step by step over
their options, param groups, state_dict round trips and argument errors."""
import itertools

import numpy as np
import pytest
import torch

import oneflow as flow
from optim_util import make_params, rel_diff, set_grads, step_both

# Adafactor: a matrix, a vector, a 3-d tensor (factored over its last two dims) and a scalar.
ADAFACTOR_SHAPES = [(3, 4), (5,), (2, 3, 2), ()]
MUON_SHAPES = [(3, 4), (6, 2), (5, 5)]


def _combos(**options):
    keys = list(options)
    return [dict(zip(keys, values)) for values in itertools.product(*(options[k] for k in keys))]


def _ids(cases):
    return ["-".join(f"{k}={v}" for k, v in c.items()) for c in cases]


ADAFACTOR_CASES = _combos(lr=[1e-2, 0.3], weight_decay=[0.0, 0.1], maximize=[False, True]) + [
    dict(d=2.0), dict(beta2_decay=-0.5), dict(eps=(1e-20, 1e-2)), dict(eps=(None, 0.0))]


@pytest.mark.parametrize("kw", ADAFACTOR_CASES, ids=_ids(ADAFACTOR_CASES))
def test_adafactor(kw):
    fp, tp = make_params(0, ADAFACTOR_SHAPES)
    fo, to = flow.optim.Adafactor(fp, **kw), torch.optim.Adafactor(tp, **kw)
    step_both(fo, to, fp, tp, 25, seed=1, what=f"Adafactor({kw})")


def test_adafactor_state_and_groups():
    fp, tp = make_params(2, ADAFACTOR_SHAPES)
    groups = lambda ps: [{"params": ps[:2]}, {"params": ps[2:], "lr": 0.2, "weight_decay": 0.05}]  # noqa: E731
    fo, to = flow.optim.Adafactor(groups(fp)), torch.optim.Adafactor(groups(tp))
    step_both(fo, to, fp, tp, 5, seed=3, what="Adafactor groups")
    st = fo.state_dict()["state"]
    assert set(st[0]) == {"step", "row_var", "col_var"} and set(st[1]) == {"step", "variance"}
    assert tuple(st[2]["row_var"].shape) == (2, 3, 1) and tuple(st[2]["col_var"].shape) == (2, 1, 2)
    assert st[0]["step"].item() == 5
    fp2, _ = make_params(2, ADAFACTOR_SHAPES)
    for a, b in zip(fp2, fp):
        a.data.copy_(b.data)
    fo2 = flow.optim.Adafactor(groups(fp2))
    fo2.load_state_dict(fo.state_dict())
    rng = np.random.default_rng(9)
    for _ in range(3):
        set_grads(fp, tp, rng)
        for a, b in zip(fp2, fp):
            a.grad = b.grad.clone()
        fo.step(), fo2.step()
    for a, b in zip(fp2, fp):
        assert flow.equal(a, b)


@pytest.mark.parametrize("kw,match", [
    (dict(lr=-1.0), "Learning rate"), (dict(beta2_decay=0.5), "beta2_decay"),
    (dict(eps=(-1.0, 1e-3)), "epsilon1"), (dict(eps=(None, -1.0)), "epsilon2"),
    (dict(d=0.5), "Clipping threshold d"), (dict(weight_decay=-0.1), "weight_decay")])
def test_adafactor_argument_errors(kw, match):
    p = [flow.zeros(2, requires_grad=True)]
    with pytest.raises(ValueError, match=match):
        flow.optim.Adafactor(p, **kw)
    with pytest.raises(ValueError, match=match):
        torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **kw)


def test_complex_parameters_refused():
    for name in ("Adafactor", "Muon"):
        p = flow.zeros(2, 2, dtype=flow.complex64, requires_grad=True)
        p.grad = flow.ones(2, 2, dtype=flow.complex64)
        with pytest.raises(RuntimeError, match=f"{name} does not support complex"):
            getattr(flow.optim, name)([p]).step()


MUON_CASES = _combos(nesterov=[True, False], momentum=[0.95, 0.0], adjust_lr_fn=[None, "match_rms_adamw"]) + [
    dict(weight_decay=0.0), dict(ns_steps=3, ns_coefficients=(2.0, -1.5, 0.5))]


@pytest.mark.parametrize("kw", MUON_CASES, ids=_ids(MUON_CASES))
def test_muon_updates(kw):
    # The orthogonalisation runs in bfloat16 (as torch's): each step's update is compared with
    # torch's from the same parameters, to bfloat16 accuracy.
    fp, tp = make_params(4, MUON_SHAPES)
    fo, to = flow.optim.Muon(fp, lr=0.02, **kw), torch.optim.Muon(tp, lr=0.02, **kw)
    rng = np.random.default_rng(5)
    for k in range(8):
        before = [t.detach().clone() for t in tp]
        set_grads(fp, tp, rng)
        fo.step(), to.step()
        for f, t, b in zip(fp, tp, before):
            d = rel_diff(f.detach().numpy() - b.numpy(), (t.detach() - b).numpy())
            assert d < 2e-2, f"Muon({kw}) step {k}: update differs by {d:.3g}"
            f.data.copy_(flow.tensor(t.detach().numpy()))  # next step from the same point


def test_muon_update_is_orthogonal():
    # NS drives the singular values of the update towards ~1 (into [0.5, 1.5] in 5 steps)
    p = flow.randn(8, 5, requires_grad=True)
    opt = flow.optim.Muon([p], lr=1.0, weight_decay=0.0, momentum=0.0, nesterov=False)
    before = p.detach().clone()
    p.grad = flow.randn(8, 5)
    opt.step()
    s = np.linalg.svd((before - p.detach()).numpy() / np.sqrt(8 / 5), compute_uv=False)
    assert s.min() > 0.4 and s.max() < 1.6, s


def test_muon_errors_and_state():
    with pytest.raises(ValueError, match="only supports 2D parameters"):
        flow.optim.Muon([flow.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="Adjust learning rate function bad"):
        flow.optim.Muon([flow.zeros(2, 2, requires_grad=True)], adjust_lr_fn="bad")
    with pytest.raises(ValueError, match="momentum"):
        flow.optim.Muon([flow.zeros(2, 2, requires_grad=True)], momentum=-1.0)
    p = flow.zeros(3, 2, requires_grad=True)
    opt = flow.optim.Muon([p], ns_steps=100)
    p.grad = flow.ones(3, 2)
    with pytest.raises(ValueError, match="less than 100"):
        opt.step()
    p2 = flow.ones(3, 2, requires_grad=True)
    opt2 = flow.optim.Muon([p2])
    p2.grad = flow.ones(3, 2)
    opt2.step()
    assert set(opt2.state_dict()["state"][0]) == {"momentum_buffer"}


def test_muon_step_matches_torch_over_steps():
    # the parameters themselves over 20 steps (small lr: bfloat16 updates stay within 1e-4)
    fp, tp = make_params(6, MUON_SHAPES)
    fo, to = flow.optim.Muon(fp, lr=1e-3), torch.optim.Muon(tp, lr=1e-3)
    step_both(fo, to, fp, tp, 20, seed=8, tol=1e-4, what="Muon")
