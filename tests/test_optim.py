"""Every optimizer against torch.optim, step by step (20+ steps, every option combination,
several param groups): same parameters and gradients, relative difference <= 1e-5 (float32)."""
import itertools

import numpy as np
import pytest
import torch

import oneflow as flow
from optim_util import make_params, rel_diff, rel_diff_all, step_both


def _combos(**options):
    keys = list(options)
    for values in itertools.product(*(options[k] for k in keys)):
        yield dict(zip(keys, values))


def _ids(cases):
    return ["-".join(f"{k}={v}" for k, v in c.items()) for c in cases]


def _run(name, kwargs, steps=25, seed=0, grad_scale=1.0, tol=1e-5, torch_name=None):
    fp, tp = make_params(seed)
    fo = getattr(flow.optim, name)(fp, **kwargs)
    to = getattr(torch.optim, torch_name or name)(tp, **kwargs)
    step_both(fo, to, fp, tp, steps, seed=seed + 1, tol=tol, what=f"{name}({kwargs})",
              grad_scale=grad_scale)


def _run_groups(name, defaults, group_opts, steps=20, torch_name=None, **torch_extra):
    """Two param groups: the first with the defaults, the second with `group_opts`."""
    fp, tp = make_params(3)
    fo = getattr(flow.optim, name)([{"params": fp[:2]}, dict(params=fp[2:], **group_opts)],
                                   **defaults)
    to = getattr(torch.optim, torch_name or name)(
        [{"params": tp[:2]}, dict(params=tp[2:], **group_opts)], **defaults, **torch_extra)
    step_both(fo, to, fp, tp, steps, seed=7, what=f"{name} groups")


SGD_CASES = [c for c in _combos(momentum=[0.0, 0.9], dampening=[0.0, 0.3], nesterov=[False, True],
                                weight_decay=[0.0, 0.05], maximize=[False, True])
             if not (c["nesterov"] and (c["momentum"] == 0 or c["dampening"] != 0))]


@pytest.mark.parametrize("kw", SGD_CASES, ids=_ids(SGD_CASES))
def test_sgd(kw):
    _run("SGD", dict(lr=0.05, **kw))


ADAM_CASES = list(_combos(amsgrad=[False, True], weight_decay=[0.0, 0.1], maximize=[False, True]))


@pytest.mark.parametrize("kw", ADAM_CASES, ids=_ids(ADAM_CASES))
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_adamw(name, kw):
    _run(name, dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6, **kw), steps=30)


def test_adamw_default_weight_decay_is_torchs():
    fp, tp = make_params(1)
    fo, to = flow.optim.AdamW(fp, lr=0.01), torch.optim.AdamW(tp, lr=0.01)
    assert fo.defaults["weight_decay"] == to.defaults["weight_decay"] == 0.01
    step_both(fo, to, fp, tp, 20, what="AdamW defaults")


RMSPROP_CASES = list(_combos(centered=[False, True], momentum=[0.0, 0.5], weight_decay=[0.0, 0.1],
                             maximize=[False, True]))


@pytest.mark.parametrize("kw", RMSPROP_CASES, ids=_ids(RMSPROP_CASES))
def test_rmsprop(kw):
    _run("RMSprop", dict(lr=0.01, alpha=0.9, **kw))


ADAGRAD_CASES = list(_combos(lr_decay=[0.0, 0.05], initial_accumulator_value=[0.0, 0.3],
                             weight_decay=[0.0, 0.1], maximize=[False, True]))


@pytest.mark.parametrize("kw", ADAGRAD_CASES, ids=_ids(ADAGRAD_CASES))
def test_adagrad(kw):
    _run("Adagrad", dict(lr=0.1, **kw))


ADADELTA_CASES = list(_combos(rho=[0.9, 0.5], weight_decay=[0.0, 0.1], maximize=[False, True]))


@pytest.mark.parametrize("kw", ADADELTA_CASES, ids=_ids(ADADELTA_CASES))
def test_adadelta(kw):
    _run("Adadelta", dict(lr=1.0, **kw))


ADAMAX_CASES = list(_combos(weight_decay=[0.0, 0.1], maximize=[False, True]))


@pytest.mark.parametrize("kw", ADAMAX_CASES, ids=_ids(ADAMAX_CASES))
def test_adamax(kw):
    _run("Adamax", dict(lr=0.02, betas=(0.85, 0.99), **kw))


NADAM_CASES = list(_combos(weight_decay=[0.0, 0.1], decoupled_weight_decay=[False, True],
                           momentum_decay=[4e-3, 0.05], maximize=[False, True]))


@pytest.mark.parametrize("kw", NADAM_CASES, ids=_ids(NADAM_CASES))
def test_nadam(kw):
    _run("NAdam", dict(lr=0.01, **kw))


RADAM_CASES = list(_combos(weight_decay=[0.0, 0.1], decoupled_weight_decay=[False, True],
                           maximize=[False, True]))


@pytest.mark.parametrize("kw", RADAM_CASES, ids=_ids(RADAM_CASES))
def test_radam(kw):
    # 30 steps: RAdam switches to the rectified adaptive step after step 5.
    _run("RAdam", dict(lr=0.01, **kw), steps=30)


@pytest.mark.parametrize("name,defaults,group", [
    ("SGD", dict(lr=0.1, momentum=0.9), dict(lr=0.01, nesterov=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01), dict(lr=0.05, amsgrad=True, betas=(0.5, 0.9))),
    ("AdamW", dict(lr=0.01, weight_decay=0.05), dict(weight_decay=0.5, maximize=True)),
    ("RMSprop", dict(lr=0.01), dict(centered=True, momentum=0.9)),
    ("Adagrad", dict(lr=0.1), dict(lr_decay=0.1, initial_accumulator_value=1.0)),
    ("Adadelta", dict(lr=1.0), dict(rho=0.5, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01), dict(lr=0.1, betas=(0.5, 0.5))),
    ("NAdam", dict(lr=0.01), dict(momentum_decay=0.1, decoupled_weight_decay=True,
                                  weight_decay=0.1)),
    ("RAdam", dict(lr=0.01), dict(lr=0.1, weight_decay=0.2)),
])
def test_param_groups(name, defaults, group):
    _run_groups(name, defaults, group)


@pytest.mark.parametrize("dtype", [np.float64])
def test_adam_float64(dtype):
    fp, tp = make_params(5, dtype=dtype)
    fo, to = flow.optim.Adam(fp, lr=0.01, amsgrad=True), torch.optim.Adam(tp, lr=0.01, amsgrad=True)
    step_both(fo, to, fp, tp, 20, tol=1e-12, what="Adam float64")


def test_large_parameter_threaded_update():
    """A parameter large enough for the threaded path gives the same numbers."""
    fp, tp = make_params(9, shapes=[(300, 1000)])
    fo = flow.optim.Adam(fp, lr=0.01, weight_decay=0.1)
    to = torch.optim.Adam(tp, lr=0.01, weight_decay=0.1)
    step_both(fo, to, fp, tp, 3, what="Adam large")
    fp, tp = make_params(9, shapes=[(300, 1000)])
    fo = flow.optim.SGD(fp, lr=0.01, momentum=0.9, nesterov=True)
    to = torch.optim.SGD(tp, lr=0.01, momentum=0.9, nesterov=True)
    step_both(fo, to, fp, tp, 3, what="SGD large")


def test_non_contiguous_parameter():
    base = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    f = flow.tensor(base).t().detach().requires_grad_(True)
    t = torch.tensor(base).t().detach().requires_grad_(True)
    assert not f.is_contiguous()
    fo, to = flow.optim.Adam([f], lr=0.1), torch.optim.Adam([t], lr=0.1)
    step_both(fo, to, [f], [t], 10, what="Adam non-contiguous")
    assert not f.is_contiguous()


def test_params_without_grad_are_skipped():
    fp, tp = make_params(2)
    fo, to = flow.optim.Adam(fp, lr=0.1), torch.optim.Adam(tp, lr=0.1)
    rng = np.random.default_rng(0)
    for k in range(6):
        for i, (f, t) in enumerate(zip(fp, tp)):
            if (i + k) % 3 == 0:
                f.grad, t.grad = None, None
            else:
                g = rng.standard_normal(tuple(t.shape)).astype(np.float32)
                f.grad, t.grad = flow.tensor(g), torch.tensor(g)
        fo.step()
        to.step()
        assert rel_diff_all(fp, tp) <= 1e-5
    # Per-parameter step counts differ, as in torch.
    for i, (f, t) in enumerate(zip(fp, tp)):
        if t in to.state:
            assert float(fo.state[f]["step"]) == float(to.state[t]["step"])
        else:
            assert f not in fo.state


def test_closure_returns_loss_and_runs_with_grad():
    fp, tp = make_params(4, shapes=[(3,)])
    fo, to = flow.optim.SGD(fp, lr=0.1), torch.optim.SGD(tp, lr=0.1)

    def closure_f():
        fo.zero_grad()
        loss = (fp[0] * fp[0]).sum()
        loss.backward()
        return loss

    def closure_t():
        to.zero_grad()
        loss = (tp[0] * tp[0]).sum()
        loss.backward()
        return loss

    with flow.no_grad():
        lf = fo.step(closure_f)
    lt = to.step(closure_t)
    assert abs(float(lf) - float(lt)) <= 1e-6 * abs(float(lt))
    assert rel_diff(fp[0], tp[0]) <= 1e-6


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,kw,keys", [
    ("Adam", dict(lr=0.01, weight_decay=0.1), ["exp_avg", "exp_avg_sq"]),
    ("SGD", dict(lr=0.1, momentum=0.9), ["momentum_buffer"]),
    ("RMSprop", dict(lr=0.01, centered=True), ["square_avg", "grad_avg"]),
])
def test_16bit_parameters_round_once(dtype, name, kw, keys):
    """16-bit parameters: each step equals torch's float32 step on the same (upcast) values and
    state, rounded once to the 16-bit dtype (docs/oneflow_differences.md)."""
    fdt, tdt = getattr(flow, dtype), getattr(torch, dtype)
    rng = np.random.default_rng(0)
    p = flow.tensor(rng.standard_normal(50).astype(np.float32)).cast(fdt).requires_grad_(True)
    opt = getattr(flow.optim, name)([p], **kw)
    for k in range(6):
        g = flow.tensor(rng.standard_normal(50).astype(np.float32)).cast(fdt)
        tp = torch.tensor(p.detach().cast(flow.float32).numpy(), requires_grad=True)
        topt = getattr(torch.optim, name)([tp], **kw)
        if k:  # the same state, upcast
            topt.state[tp] = {key: torch.tensor(v.cast(flow.float32).numpy()) if key != "step"
                              else torch.tensor(float(v)) for key, v in opt.state[p].items()}
        tp.grad = torch.tensor(g.cast(flow.float32).numpy())
        p.grad = g
        opt.step()
        topt.step()
        want = tp.detach().to(tdt).float().numpy()
        got = p.detach().cast(flow.float32).numpy()
        # one rounding of (nearly) the same float32 value: at most one 16-bit ulp apart
        ulp = np.abs(want) * (2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -10)
        assert np.all(np.abs(got - want) <= ulp + 1e-6), k
        for key in keys:
            tw = topt.state[tp][key].to(tdt).float().numpy()
            fw = opt.state[p][key].cast(flow.float32).numpy()
            assert np.all(np.abs(fw - tw) <= np.abs(tw) * 2.0 ** -6 + 1e-6), (k, key)


RPROP_CASES = list(_combos(lr=[0.01, 0.1], etas=[(0.5, 1.2), (0.3, 1.5)], step_sizes=[(1e-6, 50), (1e-3, 0.05)],
                           maximize=[False, True]))


@pytest.mark.parametrize("kw", RPROP_CASES, ids=_ids(RPROP_CASES))
def test_rprop(kw):
    _run("Rprop", kw)


ASGD_CASES = list(_combos(lambd=[1e-4, 0.1], alpha=[0.75, 0.5], t0=[1e6, 5.0], weight_decay=[0.0, 0.05],
                          maximize=[False, True]))


@pytest.mark.parametrize("kw", ASGD_CASES, ids=_ids(ASGD_CASES))
def test_asgd(kw):
    _run("ASGD", dict(lr=0.05, **kw))


def test_rprop_asgd_state_dicts_round_trip():
    for name in ("Rprop", "ASGD"):
        fp, tp = make_params(5)
        fo, to = getattr(flow.optim, name)(fp), getattr(torch.optim, name)(tp)
        step_both(fo, to, fp, tp, 3, seed=2, what=name)
        sd = fo.state_dict()
        assert set(sd["state"][0]) == set(to.state_dict()["state"][0])
        fo2 = getattr(flow.optim, name)(fp)
        fo2.load_state_dict(sd)
        step_both(fo2, to, fp, tp, 3, seed=4, what=name + " reloaded")
    with pytest.raises(ValueError):
        flow.optim.Rprop(make_params(0)[0], etas=(1.5, 1.2))
