"""The job-function API's learning rates as OneFlow 0.x's learning-rate kernel computes them
(oneflow/core/kernel/learning_rate_schedule_kernel.cpp of 0.2-0.5), its SGD momentum rule, and
``CustomScheduler`` (a rate read from a blob the job computes): _legacy/optimizer.py,
_legacy/train_conf.py. Each formula is written out here in Python / numpy."""
import math

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp


pytestmark = pytest.mark.usefixtures("fresh_job_session")

X = np.array([[1.0, -2.0, 0.5], [0.3, 0.1, -1.0]], np.float32)
W0 = np.array([0.5, -1.0, 2.0], np.float32)


def _grad(w):
    """The gradient of loss = sum((X @ w) ** 2) (a scalar loss: no division by its size)."""
    x = X.astype(np.float64)
    return 2 * x.T @ (x @ w)


def _piece(boundaries, step):
    """0.x's kernel: the first i with step <= boundaries[i]."""
    return next((i for i, b in enumerate(boundaries) if step <= b), len(boundaries))


def test_piecewise_boundaries_are_the_last_step_of_their_piece():
    """0.x's kernel keeps values[i] up to boundaries[i] included: [2, 4] gives steps 0-2, 3-4, 5-."""
    pc = flow.optimizer.PiecewiseConstantScheduler([2, 4], [0.1, 0.01, 0.001])
    assert [pc.lr(s) for s in range(7)] == [0.1, 0.1, 0.1, 0.01, 0.01, 0.001, 0.001]
    ps = flow.optimizer.PiecewiseScalingScheduler(0.5, [0, 3], [0.1, 0.01])
    assert [ps.lr(s) for s in range(6)] == pytest.approx([0.5, 0.05, 0.05, 0.05, 0.005, 0.005])
    scalar = flow.optimizer.PiecewiseScalingScheduler(1.0, [1, 2], 0.5)  # one scale for every boundary
    assert [scalar.lr(s) for s in range(4)] == pytest.approx([1.0, 1.0, 0.5, 0.5])
    for s in range(12):
        assert pc.lr(s) == [0.1, 0.01, 0.001][_piece([2, 4], s)]


def test_warmup_multiplies_the_base_rate_and_the_decay_counts_from_zero():
    """In the warmup 0.x's kernel takes base_lr * multiplier (not the decayed rate); after it the
    decay of the same step, counted from step 0."""
    lin = flow.optimizer.warmup.linear(3, 0.2)
    cos = flow.optimizer.CosineScheduler(0.1, 10, warmup=lin)
    for s in range(3):
        assert cos.lr(s) == pytest.approx(0.1 * (0.2 + 0.8 * s / 3))
    for s in range(3, 12):
        t = min(s, 10)
        assert cos.lr(s) == pytest.approx(0.1 * 0.5 * (1 + math.cos(math.pi * t / 10)))
    pc = flow.optimizer.PiecewiseConstantScheduler([0], [0.4, 0.04], warmup=flow.optimizer.warmup.constant(2, 0.5))
    assert [pc.lr(s) for s in range(4)] == pytest.approx([0.2, 0.2, 0.04, 0.04])  # values[0] is the base


def test_polynomial_cycle_counts_step_zero_as_one():
    """0.x's polynomial decay with cycle=True treats step 0 as step 1 (no restart at 0)."""
    p = flow.optimizer.PolynomialScheduler(0.1, steps=4, end_learning_rate=0.01, power=2.0, cycle=True)
    for s in range(10):
        c = max(s, 1)
        decay = 4 * math.ceil(c / 4)
        assert p.lr(s) == pytest.approx(0.09 * (1 - c / decay) ** 2 + 0.01)
    flat = flow.optimizer.PolynomialScheduler(0.1, steps=4, end_learning_rate=0.01)
    assert flat.lr(0) == pytest.approx(0.1) and flat.lr(9) == pytest.approx(0.01)


def _steps(job, steps):
    """w (from W0) after each of `steps` calls of `job` on X."""
    flow.load_variables({"w": W0})
    out = []
    for _ in range(steps):
        job(X)
        out.append(flow.get_all_variables()["w"].numpy().copy())
    return out


def _run(make_optimizer, eager, steps=4):
    """A train job of one variable w (loss sum((X @ w) ** 2)), minimized by make_optimizer(loss,
    w), for `steps` calls; w after each."""
    flow.enable_eager_execution(eager)
    try:
        @flow.global_function(type="train")
        def train(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
            w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(0.0))
            loss = (flow.matmul(x, flow.reshape(w, (3, 1))) ** 2).sum()
            make_optimizer(loss, w).minimize(loss)
            return loss

        return _steps(train, steps)
    finally:
        flow.enable_eager_execution(False)


def _reference(rate, beta, steps=4):
    """0.x's momentum rule m = beta m - lr g, w = w + m (naive when beta is 0), in float64."""
    w, m, out = W0.astype(np.float64), np.zeros(3), []
    for step in range(steps):
        g = _grad(w)
        lr = rate(step, w)
        if beta == 0:
            w = w - lr * g
        else:
            m = beta * m - lr * g
            w = w + m
        out.append(w)
    return out


def _close(got, want):
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("eager", [False, True])
def test_sgd_momentum_keeps_the_rate_inside_the_buffer(eager):
    """flow.optimizer.SGD is 0.x's momentum rule: a new rate acts on new gradients only (PyTorch's
    SGD multiplies the whole buffer by the new rate); the piecewise boundary is 0.x's."""
    rates = [0.02, 0.02, 0.005, 0.005]
    got = _run(lambda loss, w: flow.optimizer.SGD(
        flow.optimizer.PiecewiseConstantScheduler([1], [0.02, 0.005]), momentum=0.9), eager)
    _close(got, _reference(lambda step, w: rates[step], 0.9))
    # PyTorch's placement of the rate gives other values once it changes
    v, buf = W0.astype(np.float64), np.zeros(3)
    for step in range(4):
        buf = 0.9 * buf + _grad(v)
        v = v - rates[step] * buf
    assert not np.allclose(got[-1], v, rtol=1e-4)


@pytest.mark.parametrize("eager", [False, True])
def test_custom_scheduler_reads_the_rate_from_a_blob(eager):
    """CustomScheduler(blob): each call's rate is the blob's value in that call (here computed
    from w, so it changes every step)."""
    def make(loss, w):
        rate = flow.math.reduce_sum(flow.math.abs(w)) * 0.001 + 0.001
        return flow.optimizer.SGD(flow.optimizer.CustomScheduler(rate), momentum=0)

    got = _run(make, eager)
    _close(got, _reference(lambda step, w: np.abs(w).sum() * 0.001 + 0.001, 0.0))


@pytest.mark.parametrize("eager", [False, True])
def test_custom_scheduler_by_a_blobs_logical_name(eager):
    """CustomScheduler(blob.logical_blob_name), as 0.x scripts pass a computed rate: the name the
    job gave the blob in that call finds it (blob_names.py)."""
    def make(loss, w):
        rate = flow.math.reduce_sum(flow.math.abs(w)) * 0.001 + 0.001
        assert rate.logical_blob_name.endswith("-blob_0/out") and rate.blob_name == "out"
        return flow.optimizer.SGD(flow.optimizer.CustomScheduler(rate.logical_blob_name), momentum=0)

    got = _run(make, eager)
    _close(got, _reference(lambda step, w: np.abs(w).sum() * 0.001 + 0.001, 0.0))


@pytest.mark.parametrize("eager", [False, True])
def test_custom_scheduler_by_a_variable_name(eager):
    """CustomScheduler("lr/out"): the rate is the variable's value at that call (the script
    moves it between calls here, as a schedule kept in a variable)."""
    flow.enable_eager_execution(eager)
    try:
        @flow.global_function(type="train")
        def train(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
            w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(0.0))
            flow.get_variable("lr", shape=(1,), initializer=flow.constant_initializer(0.0), trainable=False)
            loss = (flow.matmul(x, flow.reshape(w, (3, 1))) ** 2).sum()
            flow.optimizer.Adam(flow.optimizer.CustomScheduler("lr/out")).minimize(loss)
            return loss

        got = []
        for lr in (0.04, 0.01):
            flow.load_variables({"w": got[-1] if got else W0, "lr": np.array([lr], np.float32)})
            train(X)
            got.append(flow.get_all_variables()["w"].numpy().copy())
    finally:
        flow.enable_eager_execution(False)
    # Adam without bias correction (0.x's default) at 0.04, then 0.01
    w, m, v = W0.astype(np.float64), 0.0, 0.0
    for lr, out in zip((0.04, 0.01), got):
        g = _grad(w)
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        w = w - lr * m / (np.sqrt(v) + 1e-8)
        np.testing.assert_allclose(out, w, rtol=2e-5, atol=1e-6)


def test_custom_scheduler_errors_before_the_job_runs():
    with pytest.raises(TypeError, match="CustomScheduler: lbn"):
        flow.optimizer.CustomScheduler(3)
    with pytest.raises(ValueError, match="CustomScheduler: lbn"):
        flow.optimizer.CustomScheduler("op/out/extra")
    with pytest.raises(RuntimeError, match="CustomScheduler"):
        flow.optimizer.CustomScheduler("lr").lr(0)

    def fails(make, match):
        flow.clear_default_session()
        with pytest.raises(ValueError, match=match):
            _run(make, False, steps=1)
        assert "w" not in flow.get_all_variables() or np.array_equal(flow.get_all_variables()["w"].numpy(), W0)

    fails(lambda loss, w: flow.optimizer.SGD(flow.optimizer.CustomScheduler("nope/out")), "names no blob or variable")
    fails(lambda loss, w: flow.optimizer.SGD(flow.optimizer.CustomScheduler(w * 1.0)), "one value")


def _add_loss_job(cfg):
    @flow.global_function(type="train", function_config=cfg)
    def step(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3,), initializer=flow.constant_initializer(0.0))
        loss = (flow.matmul(x, flow.reshape(w, (3, 1))) ** 2).sum()
        flow.losses.add_loss(loss)
        return loss
    return step


def _run_conf(lr, update_conf, steps):
    """w after each of `steps` calls of the add_loss job configured by train.primary_lr(lr) and
    train.model_update_conf(update_conf)."""
    cfg = flow.function_config()
    cfg.train.primary_lr(lr)
    cfg.train.model_update_conf(update_conf)
    return _steps(_add_loss_job(cfg), steps)


@pytest.mark.parametrize("decay, rate", [
    ({"piecewise_scaling_conf": {"boundaries": [1], "scales": [0.5, 0.1]}},
     lambda s: 0.02 * [0.5, 0.1][_piece([1], s)]),
    ({"inverse_time_conf": {"decay_batches": 2, "decay_rate": 0.5}}, lambda s: 0.02 / (1 + 0.5 * s / 2)),
    ({"natural_exp_conf": {"decay_batches": 2, "decay_rate": 0.5, "staircase": True}},
     lambda s: 0.02 * math.exp(-0.5 * (s // 2))),
    ({"linear_cosine_conf": {"decay_batches": 3}},
     lambda s: 0.02 * (((3 - min(s, 3)) / 3) * 0.5 * (1 + math.cos(math.pi * min(s, 3) / 3)) + 0.001)),
])
def test_train_conf_decays_in_their_message_form(decay, rate):
    """FunctionConfig.train's learning_rate_decay messages as 0.x's .proto has them
    (piecewise_scaling_conf: one scale per piece, boundaries + 1)."""
    got = _run_conf(0.02, {"naive_conf": {}, "learning_rate_decay": decay}, 4)
    _close(got, _reference(lambda s, w: rate(s), 0.0))


def test_train_conf_warmup_of_a_piecewise_constant_decay_multiplies_primary_lr():
    got = _run_conf(0.04, {"naive_conf": {}, "warmup_conf": {"constant_conf": {"warmup_batches": 1, "multiplier": 0.5}},
                           "learning_rate_decay": {"piecewise_constant_conf": {"boundaries": [1],
                                                                               "values": [0.01, 0.001]}}}, 3)
    _close(got, _reference(lambda s, w: [0.02, 0.01, 0.001][s], 0.0, steps=3))
    cfg = flow.function_config()
    cfg.train.primary_lr(0.04)
    cfg.train.model_update_conf({"naive_conf": {}, "learning_rate_decay": {
        "piecewise_scaling_conf": {"boundaries": [1], "scales": [0.5]}}})
    with pytest.raises(ValueError, match="one more scale than boundaries"):
        _add_loss_job(cfg)(X)
