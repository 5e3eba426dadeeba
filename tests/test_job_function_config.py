"""FunctionConfig properties that act (docs/job_functions.md's table): default_placement_scope
enters its placement around the job's Python; the cuDNN properties set flow.backends.cudnn's
switches while the job runs (compiled and eager); default_data_type / AMP, with results checked
against PyTorch on the same values."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp


@pytest.fixture(autouse=True)
def _fresh_session():
    flow.clear_default_session()
    flow.enable_eager_execution(False)
    yield
    flow.clear_default_session()
    flow.enable_eager_execution(False)


def test_default_placement_scope_is_entered():
    cfg = flow.function_config()
    cfg.default_placement_scope(flow.scope.placement("cpu", "0:0"))
    seen = []

    @flow.global_function(function_config=cfg)
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        seen.append(flow.current_scope().device)
        return x * 2

    np.testing.assert_array_equal(job(np.ones(2, np.float32)), [2.0, 2.0])
    np.testing.assert_array_equal(job(np.ones(2, np.float32)), [2.0, 2.0])  # (the compiled run)
    assert seen == [flow.device("cpu")]
    assert flow.current_scope().device == flow.device("cpu")

    # a placement over several devices needs a process each (tests/test_legacy_global_jobs.py): in
    # a process alone the job raises that at its call
    cfg2 = flow.function_config()
    cfg2.default_placement_scope(flow.scope.placement("cpu", "0:0-1"))

    @flow.global_function(function_config=cfg2)
    def wide(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x

    with pytest.raises(ValueError, match="oneflow.distributed.launch"):
        wide(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="default_placement_scope"):
        cfg2.default_placement_scope("cpu:0")


def test_a_placement_scope_can_be_entered_again():
    p = flow.scope.placement("cpu", "0:0")
    for _ in range(2):
        with p:
            assert flow.current_scope().device == flow.device("cpu")


@pytest.mark.parametrize("eager", [False, True])
def test_cudnn_properties_set_the_backend_switches_while_the_job_runs(eager):
    flow.enable_eager_execution(eager)
    cudnn = flow.backends.cudnn
    before = (cudnn.deterministic, cudnn.benchmark)
    cfg = flow.function_config()
    cfg.cudnn_conv_use_deterministic_algo_only(True)
    cfg.cudnn_conv_heuristic_search_algo(False)  # OneFlow then timed the algorithms: cudnn.benchmark
    seen = []

    def handler(y: tp.Numpy):
        seen.append((cudnn.deterministic, cudnn.benchmark))

    @flow.global_function(function_config=cfg)
    def conv(x: tp.Numpy.Placeholder((1, 2, 5, 5)), w: tp.Numpy.Placeholder((3, 2, 3, 3))) -> tp.Numpy:
        y = flow.nn.conv2d(x, w, strides=1, padding="SAME")
        flow.watch(y, handler)
        return y

    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    for _ in range(2):
        out = conv(x, w)
        want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1).numpy()
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert seen == [(True, True), (True, True)]
    assert (cudnn.deterministic, cudnn.benchmark) == before  # restored after each call
    with pytest.raises(TypeError, match="bool"):
        cfg.cudnn_conv_use_deterministic_algo_only("yes")


def _add_loss_job(cfg):
    @flow.global_function(type="train", function_config=cfg)
    def step(x: tp.Numpy.Placeholder((4, 3)), y: tp.Numpy.Placeholder((4, 2))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3, 2), initializer=flow.constant_initializer(0.5))
        loss = flow.math.reduce_mean(flow.math.square(flow.matmul(x, w) - y))
        flow.losses.add_loss(loss)
        return loss
    return step


def _data(n):
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((4, 3)).astype(np.float32) * 3, rng.standard_normal((4, 2)).astype(np.float32))
            for _ in range(n)]


def _torch_steps(data, make_opt, clip=None, sched=None):
    w = torch.full((3, 2), 0.5, requires_grad=True)
    o = make_opt([w])
    s = sched(o) if sched else None
    losses = []
    for x, y in data:
        loss = (torch.from_numpy(x) @ w - torch.from_numpy(y)).square().mean()
        losses.append(loss.item())
        o.zero_grad()
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_([w], clip)
        o.step()
        if s is not None:
            s.step()
    return losses, w.detach().numpy()


def test_train_conf_momentum_with_clipping_and_add_loss():
    """0.1-0.2's form: the update is FunctionConfig.train's, the loss named by flow.losses.add_loss;
    gradient clipping by the global norm comes from clip_conf."""
    cfg = flow.function_config()
    cfg.train.primary_lr(0.05)
    cfg.train.model_update_conf({"momentum_conf": {"beta": 0.8},
                                 "clip_conf": {"clip_by_global_norm": {"clip_norm": 0.5}}})
    step = _add_loss_job(cfg)
    data = _data(5)
    losses = [float(step(x, y)) for x, y in data]
    want_losses, want_w = _torch_steps(data, lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8), clip=0.5)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    w = flow.get_all_variables()["w"].numpy()
    np.testing.assert_allclose(w, want_w, rtol=1e-5, atol=1e-6)
    # the clipping acted: without it the weights differ
    _, unclipped = _torch_steps(data, lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8))
    assert not np.allclose(unclipped, want_w, atol=1e-3)


def test_train_conf_adam_with_a_decay():
    cfg = flow.function_config()
    cfg.train.primary_lr(0.1)
    cfg.train.model_update_conf({"adam_conf": {"beta1": 0.85, "do_bias_correction": True},
                                 "learning_rate_decay": {"exponential_conf": {"decay_batches": 1,
                                                                              "decay_rate": 0.5}}})
    step = _add_loss_job(cfg)
    data = _data(4)
    losses = [float(step(x, y)) for x, y in data]
    want_losses, want_w = _torch_steps(data, lambda p: torch.optim.Adam(p, lr=0.1, betas=(0.85, 0.999)),
                                       sched=lambda o: torch.optim.lr_scheduler.ExponentialLR(o, 0.5))
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), want_w, rtol=1e-5, atol=1e-6)


def test_train_conf_errors():
    """The training configuration is checked when the job is traced (add_loss), before it runs."""
    def fails(conf, err, match):
        flow.clear_default_session()
        cfg = flow.function_config()
        cfg.train.primary_lr(conf.pop("lr", 0.1))
        cfg.train.model_update_conf(conf)
        with pytest.raises(err, match=match):
            _add_loss_job(cfg)(*_data(1)[0])

    fails({"momentum_conf": {}, "adam_conf": {}}, ValueError, "exactly one of")
    fails({"momentum_conf": {"momentum": 0.9}}, ValueError, "no field")
    fails({"naive_conf": {}, "clip_conf": {"by_norm": 1}}, ValueError, "no field")
    fails({"naive_conf": {}, "lr": -1}, ValueError, "positive")
    with pytest.raises(NotImplementedError, match="flow.regularizers"):
        flow.function_config().train.weight_l2(1e-4)

    step = _add_loss_job(flow.function_config())  # no train configuration
    with pytest.raises(RuntimeError, match="primary_lr"):
        step(*_data(1)[0])

    @flow.global_function()
    def predict(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        flow.losses.add_loss(x.sum())
        return x

    with pytest.raises(RuntimeError, match="'train'"):
        predict(np.ones(2, np.float32))


IDS = [np.array([0, 2, 2], np.int32), np.array([1, 4, 0], np.int32), np.array([5, 5, 3], np.int32)]


def _lookup_job(cfg, make_optimizer):
    @flow.global_function(type="train", function_config=cfg)
    def step(ids: tp.Numpy.Placeholder((3,), dtype=flow.int32), c: tp.Numpy.Placeholder((3, 2))) -> tp.Numpy:
        emb = flow.get_variable("embedding", shape=(6, 2), initializer=flow.constant_initializer(1.0))
        dense = flow.get_variable("dense", shape=(2,), initializer=flow.constant_initializer(1.0))
        loss = (flow.gather(emb, ids) * c).sum() + (dense * c.sum(0)).sum()
        make_optimizer().minimize(loss)
        return loss
    return step


@pytest.mark.parametrize("sliced", [False, True])
def test_indexed_slices_optimizer_conf_updates_only_the_rows_looked_up(sliced):
    """0.x's indexed-slices momentum update of the variable the configuration names: the rows a
    batch did not look up keep their value and their momentum (which otherwise goes on moving
    them); a variable it does not name updates densely."""
    cfg = flow.function_config()
    if sliced:
        cfg.indexed_slices_optimizer_conf({"include_op_names": {"op_name": ["embedding"]}})
    step = _lookup_job(cfg, lambda: flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]),
                                                       momentum=0.9))
    rng = np.random.default_rng(3)
    emb, m, dense, dm = np.ones((6, 2)), np.zeros((6, 2)), np.ones(2), np.zeros(2)
    for ids in IDS:
        c = rng.standard_normal((3, 2)).astype(np.float32)
        step(ids, c)
        g = np.zeros((6, 2))
        np.add.at(g, ids, c)
        rows = np.isin(np.arange(6), ids) if sliced else np.ones(6, bool)
        new_m = 0.9 * m - 0.1 * g
        m[rows], emb[rows] = new_m[rows], emb[rows] + new_m[rows]
        dm = 0.9 * dm - 0.1 * c.sum(0)
        dense = dense + dm
    got = flow.get_all_variables()
    np.testing.assert_allclose(got["embedding"].numpy(), emb, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["dense"].numpy(), dense, rtol=1e-5, atol=1e-6)


def test_indexed_slices_adam_and_the_configuration_checks():
    """Adam's moments of the rows not looked up stay as they were (0.x's lazy indexed-slices Adam);
    the configuration's form is checked when set."""
    cfg = flow.function_config()
    cfg.indexed_slices_optimizer_conf({"include_op_names": {"op_name": ["embedding"]}})
    step = _lookup_job(cfg, lambda: flow.optimizer.Adam(flow.optimizer.PiecewiseConstantScheduler([], [0.1])))
    rng = np.random.default_rng(4)
    emb, m, v = np.ones((6, 2)), np.zeros((6, 2)), np.zeros((6, 2))
    for ids in IDS:
        c = rng.standard_normal((3, 2)).astype(np.float32)
        step(ids, c)
        g = np.zeros((6, 2))
        np.add.at(g, ids, c)
        rows = np.isin(np.arange(6), ids)
        m[rows] = 0.9 * m[rows] + 0.1 * g[rows]
        v[rows] = 0.999 * v[rows] + 0.001 * g[rows] ** 2
        emb[rows] -= 0.1 * m[rows] / (np.sqrt(v[rows]) + 1e-8)
    np.testing.assert_allclose(flow.get_all_variables()["embedding"].numpy(), emb, rtol=1e-5, atol=1e-6)
    for bad in ([1], {"include_op_names": ["embedding"]}, {"include_op_names": {"op_name": [3]}}, {"op_names": {}}):
        with pytest.raises(TypeError, match="indexed_slices_optimizer_conf"):
            flow.function_config().indexed_slices_optimizer_conf(bad)


@pytest.mark.parametrize("eager", [False, True])
def test_auto_mixed_precision_runs_the_job_under_autocast(eager):
    """enable_auto_mixed_precision: the job's ops run under autocast (bfloat16 on the CPU) -- the
    predict job's matmul is torch.autocast's to the bit, returned as float32 (numpy has no
    bfloat16) -- and a train job's SGD step follows torch's autocast step."""
    flow.enable_eager_execution(eager)
    cfg = flow.FunctionConfig()
    cfg.enable_auto_mixed_precision(True)
    rs = np.random.RandomState(0)
    x, w0 = rs.randn(4, 8).astype(np.float32), rs.randn(8, 3).astype(np.float32)

    @flow.global_function("predict", cfg)
    def predict(x: tp.Numpy.Placeholder((4, 8))) -> tp.Numpy:
        return flow.matmul(x, flow.get_variable("w", shape=(8, 3)))

    @flow.global_function("train", cfg)
    def train(x: tp.Numpy.Placeholder((4, 8))) -> tp.Numpy:
        loss = flow.math.reduce_mean(flow.matmul(x, flow.get_variable("w", shape=(8, 3))))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5]), momentum=0).minimize(loss)
        return loss

    flow.load_variables({"w": w0})
    got = predict(x)
    w = torch.from_numpy(w0).requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.from_numpy(x) @ w
        loss = y.mean()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, y.detach().float().numpy())
    assert np.abs(got - x @ w0).max() > 1e-3  # (not float32's product)
    train(x)
    loss.backward()
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), (w - 0.5 * w.grad).detach().numpy(),
                               rtol=1e-2, atol=1e-3)


def test_default_initializer_conf_fills_variables_made_without_one():
    """default_initializer_conf: 0.x's InitializerConf message as a dict (its FunctionConfig took
    one) or an initializer fills the variables created without their own; checked when set."""
    cfg = flow.FunctionConfig()
    cfg.default_initializer_conf({"constant_conf": {"value": 0.5}})

    @flow.global_function("predict", cfg)
    def job() -> tp.Numpy:
        own = flow.get_variable("own", shape=(2,), initializer=flow.constant_initializer(2.0))
        proto = flow.current_global_function_desc().job_config_proto  # (reported as given)
        assert proto is not None
        return flow.get_variable("v", shape=(2, 3)) + own.reshape(2, 1)

    np.testing.assert_array_equal(job(), np.full((2, 3), 2.5, np.float32))

    cfg = flow.FunctionConfig()
    cfg.default_initializer_conf({"random_uniform_conf": {"min": 3.0, "max": 4.0}})

    @flow.global_function("predict", cfg)
    def uniform() -> tp.Numpy:
        return flow.get_variable("u", shape=(64,)) + 0

    got = uniform()
    assert got.min() >= 3.0 and got.max() <= 4.0 and got.std() > 0.1

    cfg = flow.FunctionConfig()
    cfg.default_initializer_conf(flow.ones_initializer())

    @flow.global_function("predict", cfg)
    def ones() -> tp.Numpy:
        return flow.get_variable("o", shape=(3,)) + 0

    np.testing.assert_array_equal(ones(), np.ones(3, np.float32))
    for bad in (3, {"nope_conf": {}}, {"constant_conf": {"val": 1.0}}, {"constant_conf": 1.0}):
        with pytest.raises(TypeError, match="default_initializer_conf"):
            flow.FunctionConfig().default_initializer_conf(bad)
