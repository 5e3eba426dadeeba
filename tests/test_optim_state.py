"""Optimizer state: state_dict layout (torch's), save/load round trips mid-training that
continue identically, zero_grad, OneFlow's gradient clipping options; LAMB against a numpy
reference of OneFlow's formula; LBFGS against torch."""
import math

import numpy as np
import pytest
import torch

import oneflow as flow
from optim_util import make_params, rel_diff, rel_diff_all, set_grads, step_both

CONFIGS = [
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
    ("Adadelta", dict(lr=1.0)),
    ("Adamax", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01)),
]


def _pair(name, kw, seed=0):
    fp, tp = make_params(seed)
    groups_f = [{"params": fp[:2]}, {"params": fp[2:], "lr": kw["lr"] * 2}]
    groups_t = [{"params": tp[:2]}, {"params": tp[2:], "lr": kw["lr"] * 2}]
    return fp, tp, getattr(flow.optim, name)(groups_f, **kw), \
        getattr(torch.optim, name)(groups_t, **kw)


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_state_dict_layout_matches_torch(name, kw):
    fp, tp, fo, to = _pair(name, kw)
    step_both(fo, to, fp, tp, 3)
    fs, ts = fo.state_dict(), to.state_dict()
    assert sorted(fs["state"]) == sorted(ts["state"])
    for k in ts["state"]:
        assert sorted(fs["state"][k]) == sorted(ts["state"][k]), name
        for key, tv in ts["state"][k].items():
            fv = fs["state"][k][key]
            if isinstance(tv, torch.Tensor):
                assert rel_diff(fv, tv) <= 1e-5, (name, key)
            else:
                assert fv == tv
    assert len(fs["param_groups"]) == len(ts["param_groups"])
    for fg, tg in zip(fs["param_groups"], ts["param_groups"]):
        assert fg["params"] == tg["params"]
        for key in ("lr", "weight_decay", "initial_accumulator_value", "lr_decay", "momentum",
                    "betas", "eps", "amsgrad", "maximize", "nesterov", "centered", "rho"):
            if key in tg:
                assert fg[key] == tg[key], (name, key)


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_state_dict_round_trip_continues_identically(name, kw, tmp_path):
    fp, tp, fo, to = _pair(name, kw)
    rng = step_both(fo, to, fp, tp, 10)
    path = tmp_path / "opt"
    flow.save(fo.state_dict(), str(path))
    # A fresh optimizer over fresh tensors holding the current values.
    fp2 = [flow.tensor(p.detach().numpy(), requires_grad=True) for p in fp]
    fo2 = getattr(flow.optim, name)([{"params": fp2[:2]}, {"params": fp2[2:]}], **kw)
    fo2.load_state_dict(flow.load(str(path)))
    assert fo2.param_groups[1]["lr"] == kw["lr"] * 2
    for k in range(10):
        set_grads(fp2, tp, rng)
        fo2.step()
        to.step()
        assert rel_diff_all(fp2, tp) <= 1e-5, (name, k)


def test_load_state_dict_copies_and_casts():
    fp, tp, fo, to = _pair("Adam", dict(lr=0.01))
    step_both(fo, to, fp, tp, 2)
    sd = fo.state_dict()
    fp2 = [flow.tensor(p.detach().numpy(), requires_grad=True) for p in fp]
    fo2 = flow.optim.Adam([{"params": fp2[:2]}, {"params": fp2[2:]}], lr=0.01)
    fo2.load_state_dict(sd)
    a = fo.state[fp[0]]["exp_avg"]
    b = fo2.state[fp2[0]]["exp_avg"]
    assert not a._shares_storage(b)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_load_state_dict_errors():
    fp, _, fo, _ = _pair("SGD", dict(lr=0.1))
    sd = fo.state_dict()
    one = flow.optim.SGD(fp, lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        one.load_state_dict(sd)
    other = flow.optim.SGD([{"params": fp[:1]}, {"params": fp[1:]}], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size"):
        other.load_state_dict(sd)
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        one.load_state_dict({"state": {}})


def test_zero_grad():
    fp, _ = make_params(0)
    opt = flow.optim.SGD(fp, lr=0.1)
    (fp[0] * 2).sum().backward()
    g = fp[0].grad
    opt.zero_grad(set_to_none=False)
    assert fp[0].grad is g and float(g.abs().sum()) == 0.0
    assert fp[1].grad is None
    opt.zero_grad()
    assert fp[0].grad is None
    # Accumulation after zeroing starts from zero.
    (fp[0] * 3).sum().backward()
    np.testing.assert_array_equal(fp[0].grad.numpy(), np.full((3, 4), 3.0, np.float32))


def test_add_param_group_and_defaults():
    fp, tp = make_params(0)
    fo = flow.optim.SGD(fp[:2], lr=0.1, momentum=0.9)
    to = torch.optim.SGD(tp[:2], lr=0.1, momentum=0.9)
    fo.add_param_group({"params": fp[2:], "lr": 0.01})
    to.add_param_group({"params": tp[2:], "lr": 0.01})
    assert fo.param_groups[1]["momentum"] == 0.9 and fo.param_groups[1]["lr"] == 0.01
    assert fo.param_groups[1].parameters is fo.param_groups[1]["params"]
    step_both(fo, to, fp, tp, 20, what="add_param_group")
    with pytest.raises(ValueError, match="more than one parameter group"):
        fo.add_param_group({"params": fp[:1]})


def test_param_group_from_group_and_default_options():
    # upstream OneFlow's ParamGroup(parameters, default_options): the group's own entries over a
    # copy of the defaults; an optimizer built over such a group steps as torch's.
    fp, tp = make_params(0)
    defaults = {"lr": 0.1, "momentum": 0.9, "extra": [1, 2]}
    pg = flow.optim.optimizer.ParamGroup({"params": fp[:2], "lr": 0.01, "dampening": 0.5}, defaults)
    assert dict(pg.options) == {"lr": 0.01, "momentum": 0.9, "extra": [1, 2], "dampening": 0.5}
    assert pg["params"] == fp[:2] and pg.parameters is pg["params"]
    assert pg["extra"] == [1, 2] and pg["extra"] is not defaults["extra"]
    assert defaults == {"lr": 0.1, "momentum": 0.9, "extra": [1, 2]}
    assert flow.optim.optimizer.ParamGroup({"params": [], "lr": 1.0})["lr"] == 1.0  # a dict, as before
    fo = flow.optim.SGD([{k: v for k, v in pg.items() if k != "extra"}], lr=1.0)
    to = torch.optim.SGD([{"params": tp[:2], "lr": 0.01, "dampening": 0.5}], lr=0.1, momentum=0.9)
    step_both(fo, to, fp[:2], tp[:2], 5, what="ParamGroup(parameters, default_options)")
    with pytest.raises(ValueError, match="'params' entry"):
        flow.optim.optimizer.ParamGroup({"lr": 0.1}, defaults)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        flow.optim.optimizer.ParamGroup({"params": fp[0]}, defaults)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, -math.inf, 0.0, 3.5])
@pytest.mark.parametrize("explicit", [False, True])
def test_clip_grad_options(norm_type, explicit):
    """OneFlow's per-group clip_grad_max_norm / clip_grad_norm_type: the group's grads are
    clipped as one vector before its update (torch: clip_grad_norm_ then step)."""
    fp, tp = make_params(6)
    fo = flow.optim.Adam([{"params": fp[:2], "clip_grad_max_norm": 0.5,
                           "clip_grad_norm_type": norm_type}, {"params": fp[2:]}], lr=0.05)
    to = torch.optim.Adam([{"params": tp[:2]}, {"params": tp[2:]}], lr=0.05)
    rng = np.random.default_rng(1)
    for k in range(20):
        set_grads(fp, tp, rng, scale=3.0)
        torch.nn.utils.clip_grad_norm_(tp[:2], 0.5, norm_type)
        if explicit:
            fo.clip_grad()
        fo.step()
        to.step()
        assert rel_diff_all(fp, tp) <= 1e-5, k


# ---------------------------------------------------------------------------------------------
# LAMB: numpy reference of OneFlow's lamb_update


def _lamb_reference(init, grads, lr, betas, eps, weight_decay, adam_w_mode, bias_correction):
    b1, b2 = betas
    ps = [p.astype(np.float64) for p in init]
    ms = [np.zeros_like(p) for p in ps]
    vs = [np.zeros_like(p) for p in ps]
    out = []
    for t, gs in enumerate(grads, 1):
        for i, g in enumerate(gs):
            p = ps[i]
            l2, wd = (0.0, weight_decay) if adam_w_mode else (weight_decay, 0.0)
            g = g.astype(np.float64) + l2 * p
            ms[i] = b1 * ms[i] + (1 - b1) * g
            vs[i] = b2 * vs[i] + (1 - b2) * g * g
            if bias_correction:
                u = (ms[i] / (1 - b1 ** t)) / (np.sqrt(vs[i]) / math.sqrt(1 - b2 ** t) + eps)
            else:
                u = ms[i] / (np.sqrt(vs[i]) + eps)
            wn, un = np.linalg.norm(p), np.linalg.norm(u)
            trust = wn / un if wn > 0 and un > 0 else 1.0
            ps[i] = p - lr * trust * (u + wd * p)
        out.append([p.copy() for p in ps])
    return out


@pytest.mark.parametrize("adam_w_mode", [True, False])
@pytest.mark.parametrize("bias_correction", [True, False])
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_lamb_against_oneflow_formula(adam_w_mode, bias_correction, weight_decay):
    rng = np.random.default_rng(0)
    shapes = [(4, 5), (7,), ()]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(20)]
    kw = dict(lr=0.01, betas=(0.9, 0.99), eps=1e-6, weight_decay=weight_decay)
    ref = _lamb_reference(init, grads, adam_w_mode=adam_w_mode,
                          bias_correction=bias_correction, **kw)
    params = [flow.tensor(p, requires_grad=True) for p in init]
    opt = flow.optim.LAMB(params, adam_w_mode=adam_w_mode, do_bias_correction=bias_correction,
                          **kw)
    for k, gs in enumerate(grads):
        for p, g in zip(params, gs):
            p.grad = flow.tensor(g)
        opt.step()
        for i, p in enumerate(params):
            assert rel_diff(p, ref[k][i]) <= 1e-5, (k, i)
    assert float(opt.state[params[0]]["step"]) == 20


def test_adam_without_bias_correction_against_formula():
    """OneFlow's do_bias_correction=False: Adam with both correction factors 1."""
    rng = np.random.default_rng(2)
    init = rng.standard_normal((6,)).astype(np.float32)
    p = flow.tensor(init, requires_grad=True)
    opt = flow.optim.Adam([p], lr=0.01, betas=(0.9, 0.99), eps=1e-8, do_bias_correction=False)
    ref, m, v = init.astype(np.float64), 0.0, 0.0
    for _ in range(20):
        g = rng.standard_normal((6,)).astype(np.float32)
        p.grad = flow.tensor(g)
        opt.step()
        m = 0.9 * m + 0.1 * g
        v = 0.99 * v + 0.01 * g.astype(np.float64) ** 2
        ref = ref - 0.01 * m / (np.sqrt(v) + 1e-8)
        assert rel_diff(p, ref) <= 1e-5


# ---------------------------------------------------------------------------------------------
# LBFGS against torch


_A = np.random.default_rng(0).standard_normal((50, 20)).astype(np.float32)
_Y = np.sign(np.random.default_rng(1).standard_normal(50)).astype(np.float32)


def _logistic(lib, x):
    """L2-regularised logistic regression on fixed data (smooth, well conditioned)."""
    z = -(lib.tensor(_Y).to(x.dtype) * (lib.tensor(_A).to(x.dtype) * x).sum(1))
    return (z.exp() + 1).log().sum() + (x * x).sum() * 0.05


def _rosenbrock(lib, x):
    """A Rosenbrock chain (ill conditioned: float64, where rounding does not take over)."""
    a = x[1:] - x[:-1] * x[:-1]
    b = 1 - x[:-1]
    return (a * a).sum() * 10 + (b * b).sum() + (x * x).sum() * 0.1


# float32 while the loss still moves (12 iterations: once converged, which of two equal float32
# losses counts as "no progress" is rounding); float64 over 20 iterations.
@pytest.mark.parametrize("problem,dim,dtype,steps,tol", [
    (_logistic, 20, np.float32, 3, 1e-5), (_logistic, 20, np.float64, 5, 1e-9),
    (_rosenbrock, 6, np.float64, 5, 1e-9)])
@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
@pytest.mark.parametrize("contiguous", [False, True])  # OneFlow's option (upstream's tests pass it)
def test_lbfgs_against_torch(contiguous, line_search, problem, dim, dtype, steps, tol):
    x0 = np.random.default_rng(3).standard_normal(dim).astype(dtype) * 0.5
    fx = flow.tensor(x0, requires_grad=True)
    tx = torch.tensor(x0, requires_grad=True)
    kw = dict(lr=0.5 if line_search is None else 1.0, max_iter=4, history_size=5,
              line_search_fn=line_search)
    fo = flow.optim.LBFGS([fx], contiguous_params=contiguous, **kw)
    to = torch.optim.LBFGS([tx], **kw)

    def closure(opt, x, lib):
        def f():
            opt.zero_grad()
            loss = problem(lib, x)
            loss.backward()
            return loss
        return f

    for k in range(steps):
        lf = fo.step(closure(fo, fx, flow))
        lt = to.step(closure(to, tx, torch))
        assert abs(float(lf) - float(lt)) <= tol * max(1.0, abs(float(lt))), k
        assert rel_diff(fx, tx) <= tol, k
    assert fo.state[fx]["n_iter"] == to.state[tx]["n_iter"]
    assert fo.state[fx]["func_evals"] == to.state[tx]["func_evals"]


def _flow_round_trip(make, closure_steps, tmp_path):
    """Run 2n steps straight, and n steps + save + load into a fresh optimizer + n steps: the
    parameters must be identical (for optimizers without a torch counterpart to compare)."""
    runs = []
    for interrupted in (False, True):
        params = [flow.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3),
                              requires_grad=True), flow.tensor([0.5, -0.25], requires_grad=True)]
        opt = make(params)
        for k in range(10):
            closure_steps(opt, params, k)
            if interrupted and k == 4:
                flow.save(opt.state_dict(), str(tmp_path / "o"))
                params = [flow.tensor(p.detach().numpy(), requires_grad=True) for p in params]
                opt = make(params)
                opt.load_state_dict(flow.load(str(tmp_path / "o")))
        runs.append([p.detach().numpy().copy() for p in params])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def _quadratic_loss(params):
    return sum(((p - 0.3) ** 2 * (i + 1)).sum() for i, p in enumerate(params))


def test_lamb_state_dict_round_trip(tmp_path):
    def steps(opt, params, k):
        opt.zero_grad()
        _quadratic_loss(params).backward()
        opt.step()

    _flow_round_trip(lambda ps: flow.optim.LAMB(ps, lr=0.05, weight_decay=0.01), steps, tmp_path)


def test_lbfgs_state_dict_round_trip(tmp_path):
    def steps(opt, params, k):
        def closure():
            opt.zero_grad()
            loss = _quadratic_loss(params) + (params[0] ** 4).sum()
            loss.backward()
            return loss
        opt.step(closure)

    _flow_round_trip(lambda ps: flow.optim.LBFGS(ps, lr=0.5, max_iter=2, history_size=3),
                     steps, tmp_path)
