"""LR schedulers against torch.optim.lr_scheduler, step by step over 100 steps (several settings
each, two param groups); OneFlow-only schedulers against their documented formulas; state_dict
round trips that continue identically."""
import math

import numpy as np
import pytest
import torch

import oneflow as flow

F, T = flow.optim.lr_scheduler, torch.optim.lr_scheduler


def _opts(kind="SGD", **kw):
    pf = [flow.zeros(2, requires_grad=True), flow.zeros(3, requires_grad=True)]
    pt = [torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)]
    kw = kw or ({"momentum": 0.9} if kind == "SGD" else {})
    fo = getattr(flow.optim, kind)([{"params": pf[:1]}, {"params": pf[1:], "lr": 0.05}], lr=0.1,
                                   **kw)
    to = getattr(torch.optim, kind)([{"params": pt[:1]}, {"params": pt[1:], "lr": 0.05}], lr=0.1,
                                    **kw)
    return fo, to


def _close(a, b, what):
    assert len(a) == len(b), what
    for x, y in zip(a, b):
        assert abs(x - y) <= 1e-12 * max(1.0, abs(y)), f"{what}: {a} vs {b}"


def _compare(fs, ts, fo, to, steps=100, metric=None, momentum=None):
    _close(fs.get_last_lr(), ts.get_last_lr(), "initial")
    for k in range(steps):
        fo.step()
        to.step()
        if metric is None:
            fs.step()
            ts.step()
        else:
            fs.step(metric(k))
            ts.step(metric(k))
        what = f"step {k}"
        _close(fs.get_last_lr(), ts.get_last_lr(), what)
        _close([g["lr"] for g in fo.param_groups], [g["lr"] for g in to.param_groups], what)
        if momentum:
            _close([_mom(g, momentum) for g in fo.param_groups],
                   [_mom(g, momentum) for g in to.param_groups], what + " momentum")


def _mom(group, key):
    return group["betas"][0] if key == "betas" else group["momentum"]


CASES = [
    ("StepLR", dict(step_size=7)), ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[10, 30, 30, 60])),
    ("MultiStepLR", dict(milestones=[5, 80], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.97)), ("ExponentialLR", dict(gamma=0.5)),
    ("CosineAnnealingLR", dict(T_max=30)), ("CosineAnnealingLR", dict(T_max=17, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=10)),
    ("CosineAnnealingWarmRestarts", dict(T_0=5, T_mult=2, eta_min=0.01)),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e)),
    ("LambdaLR", dict(lr_lambda=[lambda e: 1 / (e + 1), lambda e: 0.5 + e % 3])),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.97)),
    ("MultiplicativeLR", dict(lr_lambda=[lambda e: 0.9, lambda e: 1.01])),
    ("LinearLR", dict()), ("LinearLR", dict(start_factor=0.25, end_factor=0.5, total_iters=40)),
    ("ConstantLR", dict()), ("ConstantLR", dict(factor=0.5, total_iters=20)),
    ("PolynomialLR", dict()), ("PolynomialLR", dict(total_iters=50, power=2.0)),
    ("PolynomialLR", dict(total_iters=30, power=0.5)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=101)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.2], epochs=10, steps_per_epoch=11,
                        anneal_strategy="linear", pct_start=0.4)),
    ("OneCycleLR", dict(max_lr=0.3, total_steps=120, three_phase=True, div_factor=10.0)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=10)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=7, step_size_down=13,
                      mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.001, max_lr=0.05, step_size_up=5, mode="exp_range",
                      gamma=0.98)),
    ("CyclicLR", dict(base_lr=0.001, max_lr=0.05, step_size_up=5,
                      scale_fn=lambda x: 0.5 ** x, scale_mode="iterations")),
]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_scheduler_matches_torch(name, kw):
    fo, to = _opts()
    fs, ts = getattr(F, name)(fo, **kw), getattr(T, name)(to, **kw)
    mom = "momentum" if name in ("OneCycleLR", "CyclicLR") else None
    _compare(fs, ts, fo, to, steps=100, momentum=mom)


@pytest.mark.parametrize("name,kw", [
    ("OneCycleLR", dict(max_lr=0.01, total_steps=100)),
    ("CyclicLR", dict(base_lr=0.001, max_lr=0.01, step_size_up=4)),
])
def test_momentum_cycling_with_adam_betas(name, kw):
    fo, to = _opts("Adam")
    fs, ts = getattr(F, name)(fo, **kw), getattr(T, name)(to, **kw)
    _compare(fs, ts, fo, to, steps=100, momentum="betas")


@pytest.mark.parametrize("kw", [dict(), dict(mode="max", factor=0.5, patience=3, cooldown=2),
                                dict(threshold_mode="abs", threshold=0.1, min_lr=[0.02, 0.01]),
                                dict(patience=0, eps=0.05)])
def test_reduce_lr_on_plateau(kw):
    fo, to = _opts()
    fs, ts = F.ReduceLROnPlateau(fo, **kw), T.ReduceLROnPlateau(to, **kw)
    metrics = [1.0 / (1 + k // 7) + 0.05 * math.sin(k) for k in range(100)]
    _compare(fs, ts, fo, to, metric=lambda k: metrics[k])
    assert fs.num_bad_epochs == ts.num_bad_epochs and fs.best == ts.best


def test_sequential_lr():
    fo, to = _opts()

    def build(M, o):
        return M.SequentialLR(o, [M.ConstantLR(o, factor=0.1, total_iters=2),
                                  M.ExponentialLR(o, gamma=0.9),
                                  M.CosineAnnealingLR(o, T_max=20)], milestones=[5, 40])

    _compare(build(F, fo), build(T, to), fo, to)


def test_chained_scheduler():
    fo, to = _opts()

    def build(M, o):
        return M.ChainedScheduler([M.ConstantLR(o, factor=0.1, total_iters=2),
                                   M.ExponentialLR(o, gamma=0.9), M.StepLR(o, step_size=10)])

    _compare(build(F, fo), build(T, to), fo, to)


def test_two_schedulers_chain_through_param_groups():
    fo, to = _opts()
    fa, fb = F.StepLR(fo, 10, gamma=0.5), F.ExponentialLR(fo, gamma=0.99)
    ta, tb = T.StepLR(to, 10, gamma=0.5), T.ExponentialLR(to, gamma=0.99)
    for _ in range(60):
        fo.step()
        to.step()
        fa.step()
        fb.step()
        ta.step()
        tb.step()
        _close([g["lr"] for g in fo.param_groups], [g["lr"] for g in to.param_groups], "chain")


@pytest.mark.parametrize("name,kw", [("StepLR", dict(step_size=5)),
                                     ("CosineAnnealingLR", dict(T_max=10)),
                                     ("LinearLR", dict(total_iters=7)),
                                     ("PolynomialLR", dict(total_iters=9)),
                                     ("MultiStepLR", dict(milestones=[3, 8]))])
def test_step_with_epoch_uses_closed_form(name, kw):
    fo, to = _opts()
    fs, ts = getattr(F, name)(fo, **kw), getattr(T, name)(to, **kw)
    for epoch in (4, 9, 2, 15):
        with pytest.warns(UserWarning):
            fs.step(epoch)
        with pytest.warns(UserWarning):
            ts.step(epoch)
        _close(fs.get_last_lr(), ts.get_last_lr(), f"epoch {epoch}")


@pytest.mark.parametrize("name,kw", [
    ("StepLR", dict(step_size=7)), ("MultiStepLR", dict(milestones=[10, 30, 30])),
    ("CosineAnnealingLR", dict(T_max=13)), ("CosineAnnealingWarmRestarts", dict(T_0=4, T_mult=2)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=80)), ("CyclicLR", dict(base_lr=0.01, max_lr=0.1,
                                                                        step_size_up=6)),
    ("LinearLR", dict(total_iters=50)), ("PolynomialLR", dict(total_iters=40, power=2.0))])
def test_state_dict_round_trip(name, kw, tmp_path):
    fo, to = _opts()
    fs, ts = getattr(F, name)(fo, **kw), getattr(T, name)(to, **kw)
    _compare(fs, ts, fo, to, steps=30)
    flow.save({"opt": fo.state_dict(), "sched": fs.state_dict()}, str(tmp_path / "ck"))
    fo2, _ = _opts()
    fs2 = getattr(F, name)(fo2, **kw)
    ck = flow.load(str(tmp_path / "ck"))
    fo2.load_state_dict(ck["opt"])
    fs2.load_state_dict(ck["sched"])
    assert fs2.last_epoch == ts.last_epoch
    _compare(fs2, ts, fo2, to, steps=40)


# ---------------------------------------------------------------------------------------------
# OneFlow's own schedulers, against their documented formulas


def _run_flow(make, steps=100):
    fo, _ = _opts()
    s = make(fo)
    out = [s.get_last_lr()]
    for _ in range(steps):
        fo.step()
        s.step()
        out.append(s.get_last_lr())
    assert [g["lr"] for g in fo.param_groups] == out[-1]
    return out


BASE = [0.1, 0.05]


def _cosine_decay(base, step, decay_steps, alpha):
    if step >= decay_steps:
        return base * alpha
    return base * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * step / decay_steps)) + alpha)


@pytest.mark.parametrize("decay_steps,alpha", [(30, 0.0), (45, 0.1), (1, 0.5)])
def test_cosine_decay_lr(decay_steps, alpha):
    got = _run_flow(lambda o: F.CosineDecayLR(o, decay_steps=decay_steps, alpha=alpha))
    for k, lrs in enumerate(got):
        _close(lrs, [_cosine_decay(b, k, decay_steps, alpha) for b in BASE], f"step {k}")


def _oneflow_poly(base, step, decay, end, power, cycle):
    if cycle:
        step = max(step, 1)
        decay = decay * math.ceil(step / decay)
    else:
        step = min(step, decay)
    return (base - end) * (1 - step / decay) ** power + end


@pytest.mark.parametrize("kw", [dict(decay_batch=20), dict(decay_batch=15, end_learning_rate=0.01,
                                                           power=2.0),
                                dict(steps=12, power=0.5, cycle=True),
                                dict(decay_batch=25, cycle=True, end_learning_rate=0.0)])
def test_polynomial_lr_oneflow_signature(kw):
    got = _run_flow(lambda o: F.PolynomialLR(o, **kw))
    decay = kw.get("decay_batch", kw.get("steps"))
    end = kw.get("end_learning_rate", 0.0001)
    for k, lrs in enumerate(got):
        want = [_oneflow_poly(b, k, decay, end, kw.get("power", 1.0), kw.get("cycle", False))
                for b in BASE]
        _close(lrs, want, f"step {k}")


def _warm_restarts_ref(base, step, T_0, T_mult, eta_min, decay_rate, restart_limit):
    """Upstream OneFlow's documented CosineAnnealingWarmRestarts with decay_rate / restart_limit."""
    if T_mult > 1:
        n = math.floor(math.log(1 - step / T_0 * (1 - T_mult), T_mult))
        t_i = T_mult ** n * T_0
        t_cur = step - (1 - T_mult ** n) / (1 - T_mult) * T_0
    else:
        n, t_i = step // T_0, T_0
        t_cur = step - t_i * n
    if restart_limit and n >= restart_limit:
        return eta_min
    return eta_min + (base * decay_rate ** n - eta_min) * 0.5 * (1 + math.cos(math.pi * t_cur / t_i))


@pytest.mark.parametrize("kw", [dict(T_0=10, T_mult=2, eta_min=0.01, decay_rate=0.5, restart_limit=2),
                                dict(T_0=7, decay_rate=0.8), dict(T_0=5, T_mult=3, restart_limit=1),
                                dict(T_0=6, T_mult=2, eta_min=0.001)])
def test_cosine_warm_restarts_decay_rate_and_restart_limit(kw):
    got = _run_flow(lambda o: F.CosineAnnealingWarmRestarts(o, **kw))
    ref = {**dict(T_mult=1, eta_min=0.0, decay_rate=1.0, restart_limit=0), **kw}
    for k, lrs in enumerate(got):
        _close([round(x, 12) for x in lrs],
               [round(_warm_restarts_ref(b, k, **ref), 12) for b in BASE], f"step {k}")
    # step(epoch) jumps to the same point of the schedule
    fo, _ = _opts()
    s = F.CosineAnnealingWarmRestarts(fo, **kw)
    s.step(37)
    _close([round(x, 12) for x in s.get_last_lr()],
           [round(_warm_restarts_ref(b, 37, **ref), 12) for b in BASE], "epoch 37")


def _warmup_ref(base, step, factor, iters, method, inner, prefix):
    """OneFlow's WarmupLR: warmup factor, then the wrapped schedule."""
    if step < iters:
        if method == "constant":
            return base * factor
        end = inner(base, iters) / base if inner is not None and not prefix else 1.0
        return base * (factor + (end - factor) * step / iters)
    if inner is None:
        return base
    return inner(base, step - iters if prefix else step)


@pytest.mark.parametrize("method", ["linear", "constant"])
@pytest.mark.parametrize("prefix", [False, True])
@pytest.mark.parametrize("inner", ["none", "cosine_decay", "step", "multistep"])
def test_warmup_lr(method, prefix, inner):
    makers = {
        "none": (None, None),
        "cosine_decay": (lambda o: F.CosineDecayLR(o, decay_steps=50, alpha=0.1),
                         lambda b, s: _cosine_decay(b, s, 50, 0.1)),
        "step": (lambda o: F.StepLR(o, step_size=10, gamma=0.5),
                 lambda b, s: b * 0.5 ** (s // 10)),
        "multistep": (lambda o: F.MultiStepLR(o, milestones=[20, 40], gamma=0.1),
                      lambda b, s: b * 0.1 ** ((s >= 20) + (s >= 40))),
    }
    make_inner, ref_inner = makers[inner]

    def make(o):
        arg = make_inner(o) if make_inner else o
        return F.WarmupLR(arg, warmup_factor=0.2, warmup_iters=7, warmup_method=method,
                          warmup_prefix=prefix)

    got = _run_flow(make)
    for k, lrs in enumerate(got):
        want = [_warmup_ref(b, k, 0.2, 7, method, ref_inner, prefix) for b in BASE]
        _close(lrs, want, f"step {k}")


def test_warmup_lr_documented_constant_example():
    """OneFlow's docstring example: constant warmup 0.5 for 5 steps, then 0.001."""
    p = flow.zeros(1, requires_grad=True)
    opt = flow.optim.SGD([p], lr=0.001)
    s = F.WarmUpLR(opt, warmup_factor=0.5, warmup_iters=5, warmup_method="constant")
    lrs = [s.get_last_lr()[0]]
    for _ in range(7):
        opt.step()
        s.step()
        lrs.append(s.get_last_lr()[0])
    np.testing.assert_allclose(lrs, [0.0005] * 5 + [0.001] * 3, rtol=1e-12)


def test_last_step_alias_and_oneflow_resume():
    fo, _ = _opts()
    s = F.StepLR(fo, step_size=2)
    for _ in range(5):
        s.step()
    assert s.last_step == s.last_epoch == 5
    fo2, _ = _opts()
    for g, g0 in zip(fo2.param_groups, fo.param_groups):
        g["initial_lr"], g["lr"] = g0["initial_lr"], g0["lr"]  # as optimizer.load_state_dict
    s2 = F.StepLR(fo2, step_size=2, last_step=4)
    assert s2.last_epoch == 5
    _close(s2.get_last_lr(), s.get_last_lr(), "resumed")
