"""OneFlow 0.x's optimizers and schedules without a flow.optim twin (_legacy/optimizer.py,
_legacy/update_rules.py): LARS, LAMB, LazyAdam, SGDW, CombinedOptimizer, and the
InverseTime / NaturalExp / LinearCosine schedules, in train jobs (compiled and eager), each
checked over a few steps against the 0.x kernel's formula written out in numpy (or PyTorch's
optimizer where one is the same rule)."""
import math
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp


pytestmark = pytest.mark.usefixtures("fresh_job_session")

X = np.array([[1.0, -2.0, 0.5], [0.3, 0.1, -1.0]], np.float32)
INIT = {"w-weight": np.array([0.5, -1.0, 2.0], np.float32), "w_bn-gamma": np.array([1.5, 0.2, -0.7], np.float32)}


def _loss_and_grads(w, g):
    """loss = sum((x * w * g).sum(1) ** 2) and its gradients, in numpy (float64)."""
    x = X.astype(np.float64)
    s = (x * w * g).sum(1)
    return (s ** 2).sum(), (2 * s[:, None] * x * g).sum(0), (2 * s[:, None] * x * w).sum(0)


def _train(make_optimizer, eager, steps=3):
    """Runs a train job of the two variables for `steps` calls; their values after each call."""
    flow.enable_eager_execution(eager)
    try:
        @flow.global_function(type="train")
        def train(v: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
            w = flow.get_variable("w-weight", shape=(3,), initializer=flow.constant_initializer(0.0))
            g = flow.get_variable("w_bn-gamma", shape=(3,), initializer=flow.constant_initializer(0.0))
            loss = ((v * w * g).sum(1) ** 2).sum()
            make_optimizer().minimize(loss)
            return loss

        flow.load_variables(INIT)
        out = []
        for _ in range(steps):
            train(X)
            out.append({n: v.numpy().copy() for n, v in flow.get_all_variables().items()})
        return out
    finally:
        flow.enable_eager_execution(False)


def _reference(update, steps=3):
    """The variables after each step of `update(step, name, w, grad, state) -> w` in float64."""
    vals = {n: v.astype(np.float64) for n, v in INIT.items()}
    state = {n: {} for n in vals}
    out = []
    for step in range(steps):
        _, gw, gg = _loss_and_grads(vals["w-weight"], vals["w_bn-gamma"])
        grads = {"w-weight": gw, "w_bn-gamma": gg}
        vals = {n: update(step, n, vals[n], grads[n], state[n]) for n in vals}
        out.append(dict(vals))
    return out


def _compare(got, want):
    for g, w in zip(got, want):
        for n in w:
            np.testing.assert_allclose(g[n], w[n], rtol=2e-5, atol=1e-6, err_msg=n)


def test_new_schedules_follow_the_0x_formulas():
    """InverseTime, NaturalExp (staircase floors step / steps) and LinearCosine, step by step."""
    inv = flow.optimizer.InverseTimeScheduler(0.1, steps=4, decay_rate=0.5)
    inv_s = flow.optimizer.InverseTimeScheduler(0.1, steps=4, decay_rate=0.5, staircase=True)
    nat = flow.optimizer.NaturalExpScheduler(0.1, steps=4, decay_rate=0.5)
    nat_s = flow.optimizer.NaturalExpScheduler(0.1, steps=4, decay_rate=0.5, staircase=True)
    lin = flow.optimizer.LinearCosineScheduler(0.1, steps=6, num_periods=1.5, alpha=0.1, beta=0.01)
    for step in range(10):
        assert inv.lr(step) == pytest.approx(0.1 / (1 + 0.5 * step / 4))
        assert inv_s.lr(step) == pytest.approx(0.1 / (1 + 0.5 * (step // 4)))
        assert nat.lr(step) == pytest.approx(0.1 * math.exp(-0.5 * step / 4))
        assert nat_s.lr(step) == pytest.approx(0.1 * math.exp(-0.5 * (step // 4)))
        t = min(step, 6)
        assert lin.lr(step) == pytest.approx(
            0.1 * ((0.1 + (6 - t) / 6) * 0.5 * (1 + math.cos(2 * math.pi * 1.5 * t / 6)) + 0.01))
    warm = flow.optimizer.NaturalExpScheduler(0.1, 4, 0.5, warmup=flow.optimizer.warmup.constant(2, 0.5))
    # in the warmup 0.x's kernel multiplies the base rate, not the decayed one
    assert warm.lr(1) == pytest.approx(0.05) and warm.lr(2) == pytest.approx(nat.lr(2))
    with pytest.warns(DeprecationWarning, match="PolynomialScheduler"):
        old = flow.optimizer.PolynomialSchduler(0.1, steps=4)
    assert old.lr(2) == pytest.approx(flow.optimizer.PolynomialScheduler(0.1, steps=4).lr(2))
    with pytest.raises(ValueError, match="InverseTimeScheduler: steps"):
        flow.optimizer.InverseTimeScheduler(0.1, steps=0, decay_rate=0.5)


@pytest.mark.parametrize("eager", [False, True])
def test_schedule_drives_the_job_rate(eager):
    """A job's SGD at InverseTimeScheduler's rate for each train step (0, 1, 2)."""
    sched = lambda: flow.optimizer.InverseTimeScheduler(0.05, steps=1, decay_rate=1.0)  # noqa: E731
    got = _train(lambda: flow.optimizer.SGD(sched(), momentum=0), eager)
    _compare(got, _reference(lambda step, n, w, g, st: w - 0.05 / (1 + step) * g))


@pytest.mark.parametrize("eager", [False, True])
def test_sgdw_decoupled_decay_and_0x_momentum(eager):
    """SGDW: m = beta m - lr g, w = w + m - lr wd w, the decay only on the variables the
    excludes filter keeps, at a rate that changes each step (the rate stays inside m)."""
    sched = lambda: flow.optimizer.NaturalExpScheduler(0.02, steps=1, decay_rate=0.5)  # noqa: E731

    def ref(step, n, w, g, st):
        lr, wd = 0.02 * math.exp(-0.5 * step), (0.3 if n == "w-weight" else 0.0)
        st["m"] = 0.9 * st.get("m", 0.0) - lr * g
        return w + st["m"] - lr * wd * w

    got = _train(lambda: flow.optimizer.SGDW(sched(), momentum=0.9, weight_decay=0.3,
                                             weight_decay_excludes="_bn-"), eager)
    _compare(got, _reference(ref))
    got = _train(lambda: flow.optimizer.SGDW(sched(), momentum=0, weight_decay=0.3), eager, steps=2)
    _compare(got, _reference(lambda step, n, w, g, st: w - 0.02 * math.exp(-0.5 * step) * (g + 0.3 * w), steps=2))


@pytest.mark.parametrize("eager", [False, True])
def test_lars_trust_ratio_momentum_and_decay(eager):
    """LARS: local_lr = lr * c ||w|| / (eps + ||g|| + wd ||w||), m = beta m - local_lr g,
    w = w + m - local_lr wd w; weight_decay_includes picks the decayed variable."""

    def ref(step, n, w, g, st):
        wd = 0.01 if n == "w-weight" else 0.0
        wn, gn = np.linalg.norm(w), np.linalg.norm(g)
        local = 0.5 * 0.02 * wn / (1e-9 + gn + wd * wn)
        st["m"] = 0.8 * st.get("m", 0.0) - local * g
        return w + st["m"] - local * wd * w

    got = _train(lambda: flow.optimizer.LARS(flow.optimizer.PiecewiseConstantScheduler([], [0.5]), momentum_beta=0.8,
                                             lars_coefficient=0.02, weight_decay=0.01,
                                             weight_decay_includes=["weight$"]), eager)
    _compare(got, _reference(ref))


@pytest.mark.parametrize("eager", [False, True])
def test_lamb_layerwise_trust_ratio(eager):
    """LAMB: u = (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps), w -= lr ||w|| / ||u|| (u + wd w)."""

    def ref(step, n, w, g, st):
        t = step + 1
        st["m"] = 0.9 * st.get("m", 0.0) + 0.1 * g
        st["v"] = 0.99 * st.get("v", 0.0) + 0.01 * g * g
        u = (st["m"] / (1 - 0.9 ** t)) / (np.sqrt(st["v"] / (1 - 0.99 ** t)) + 1e-6)
        wd = 0.1 if n == "w-weight" else 0.0
        return w - 0.05 * np.linalg.norm(w) / np.linalg.norm(u) * (u + wd * w)

    got = _train(lambda: flow.optimizer.LAMB(flow.optimizer.PiecewiseConstantScheduler([], [0.05]), beta2=0.99,
                                             weight_decay=0.1, weight_decay_excludes="_bn-"), eager)
    _compare(got, _reference(ref))


@pytest.mark.parametrize("eager", [False, True])
def test_lazy_adam_updates_only_the_rows_looked_up(eager):
    """LazyAdam on an embedding table read with flow.gather: the rows the ids pick move by Adam
    at lr sqrt(1 - b2^t) / (1 - b1^t); the other rows keep their values and moments (a row
    picked at step 0 and not at step 1 is still, at step 2, where Adam left it after step 0 with
    its moments from then)."""
    table0 = np.arange(15, dtype=np.float32).reshape(5, 3) / 10 - 0.7
    ids_per_step = [np.array([0, 2, 2], np.int32), np.array([1, 3, 3], np.int32), np.array([0, 1, 1], np.int32)]
    coef = np.array([[1.0, -2.0, 0.5], [0.3, 0.1, -1.0], [2.0, 0.0, 1.0]], np.float32)
    flow.enable_eager_execution(eager)
    try:
        @flow.global_function(type="train")
        def train(ids: tp.Numpy.Placeholder((3,), dtype=flow.int32), c: tp.Numpy.Placeholder((3, 3))) -> tp.Numpy:
            table = flow.get_variable("emb", shape=(5, 3), initializer=flow.constant_initializer(0.0))
            rows = flow.gather(table, ids)
            loss = (rows * rows * c).sum()
            flow.optimizer.LazyAdam(flow.optimizer.PiecewiseConstantScheduler([], [0.1])).minimize(loss)
            return loss

        flow.load_variables({"emb": table0})
        got = []
        for ids in ids_per_step:
            train(ids, coef)
            got.append(flow.get_all_variables()["emb"].numpy().copy())
    finally:
        flow.enable_eager_execution(False)
    w, m, v = table0.astype(np.float64), np.zeros((5, 3)), np.zeros((5, 3))
    for t, (ids, g_out) in enumerate(zip(ids_per_step, got), 1):
        g = np.zeros((5, 3))
        np.add.at(g, ids, 2 * w[ids] * coef)
        touched = np.zeros(5, bool)
        touched[ids] = True
        lr = 0.1 * math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        m[touched] = 0.9 * m[touched] + 0.1 * g[touched]
        v[touched] = 0.999 * v[touched] + 0.001 * g[touched] ** 2
        w[touched] -= lr * m[touched] / (np.sqrt(v[touched]) + 1e-8)
        np.testing.assert_allclose(g_out, w, rtol=2e-5, atol=1e-6)
    np.testing.assert_array_equal(got[-1][4], table0[4])  # never looked up


@pytest.mark.parametrize("eager", [False, True])
def test_combined_optimizer_matches_torch_sgd_and_adam(eager):
    """CombinedOptimizer([SGD on one variable, Adam on the other]) as torch's two optimizers."""
    def make():
        sched = flow.optimizer.PiecewiseConstantScheduler([], [0.05])
        return flow.optimizer.CombinedOptimizer([
            flow.optimizer.SGD(sched, momentum=0, variables=["w-weight"]),
            flow.optimizer.Adam(sched, do_bias_correction=True, variables=["w_bn-gamma"])])

    got = _train(make, eager)
    tw = {n: torch.tensor(INIT[n], requires_grad=True) for n in INIT}
    sgd, adam = torch.optim.SGD([tw["w-weight"]], lr=0.05), torch.optim.Adam([tw["w_bn-gamma"]], lr=0.05)
    for step in range(3):
        loss = ((torch.from_numpy(X) * tw["w-weight"] * tw["w_bn-gamma"]).sum(1) ** 2).sum()
        sgd.zero_grad()
        adam.zero_grad()
        loss.backward()
        sgd.step()
        adam.step()
        for n in INIT:
            np.testing.assert_allclose(got[step][n], tw[n].detach().numpy(), rtol=1e-5, atol=1e-6)


def test_combined_optimizer_rejects_overlap_and_inner_loss_scales():
    sched = flow.optimizer.PiecewiseConstantScheduler([], [0.05])
    with pytest.raises(ValueError, match="both SGD and Adam"):
        _train(lambda: flow.optimizer.CombinedOptimizer([flow.optimizer.SGD(sched, variables=["w-weight"]),
                                                         flow.optimizer.Adam(sched)]), False, steps=1)
    with pytest.raises(ValueError, match="give the loss scale to the CombinedOptimizer"):
        flow.optimizer.CombinedOptimizer([flow.optimizer.SGD(sched, loss_scale_factor=8.0)])
    with pytest.raises(TypeError, match="non-empty list"):
        flow.optimizer.CombinedOptimizer([])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="lr_scheduler must be a flow.optimizer scheduler"):
            flow.optimizer.LARS(0.1)
