"""0.x's quantization-aware training of a job (FunctionConfig.enable_qat, qat.*; _legacy/qat.py):
a tiny CNN job's outputs against the same fake-quantization composition written with PyTorch's
fake_quantize_per_tensor_affine / per_channel_affine on the job's variables, the observers'
statistics shared by a train and a predict job, the config options and the loss still falling."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import oneflow as flow
import oneflow.typing as tp

N = 4
pytestmark = pytest.mark.usefixtures("fresh_job_session")


@pytest.fixture(autouse=True)
def _compiled_jobs():
    """(a test that runs jobs eagerly leaves them compiled again)"""
    yield
    flow.enable_eager_execution(False)


def _config(**qat):
    cfg = flow.FunctionConfig()
    cfg.enable_qat(True)
    for k, v in qat.items():
        getattr(cfg.qat, k)(v)
    return cfg


def _model(x):
    h = flow.layers.conv2d(x, 3, 3, padding="SAME", activation=flow.nn.relu, name="c1")
    h = flow.layers.conv2d(h, 2, 3, padding="SAME", name="c2")
    h = flow.reshape(h, (N, -1))
    return flow.layers.dense(h, 3, name="fc")


def _initial():
    """The model's first values (loaded before the jobs make their variables)."""
    rs = np.random.RandomState(0)
    shapes = {"c1-weight": (3, 1, 3, 3), "c1-bias": (3,), "c2-weight": (2, 3, 3, 3), "c2-bias": (2,),
              "fc-weight": (3, 72), "fc-bias": (3,)}
    return {k: rs.uniform(-0.5, 0.5, s).astype(np.float32) * (0.02 if k.endswith("bias") else 1)
            for k, s in shapes.items()}


def _jobs(cfg, lr=0.1):
    @flow.global_function("train", cfg)
    def train(x: tp.Numpy.Placeholder((N, 1, 6, 6)), y: tp.Numpy.Placeholder((N,), dtype=flow.int32)) -> tp.Numpy:
        logits = _model(x)
        loss = flow.math.reduce_mean(flow.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [lr]), momentum=0).minimize(loss)
        return logits

    @flow.global_function("predict", cfg)
    def predict(x: tp.Numpy.Placeholder((N, 1, 6, 6))) -> tp.Numpy:
        return _model(x)
    return train, predict


def _ste(x, fq):
    """0.x's fake quantization: fq's value, the identity's gradient (PyTorch's masks clipped ones)."""
    return x + (fq(x.detach()) - x).detach()


class _Ref:
    """The job's fake-quantization composition in PyTorch (0.x's QAT pass, default backend)."""

    def __init__(self, momentum=0.95, symmetric=True, per_channel=False, stop=100):
        self.m, self.sym, self.per_channel, self.stop = momentum, symmetric, per_channel, stop
        self.stats = {}  # observer -> (moving max, moving min)

    def _qparams(self, mx, mn):
        if self.sym:
            return torch.maximum(mx.abs(), mn.abs()) / 127, torch.zeros_like(mx), -128, 127
        scale = (mx - mn) / 255
        return scale, -torch.round(mn / scale), 0, 255

    def act(self, name, x, train, step):
        x0 = x
        x = x.detach()
        if train and step < self.stop:
            mx, mn = x.max().reshape(1), x.min().reshape(1)
            if self.sym:
                mx = torch.maximum(mx.abs(), mn.abs())
                mn = -mx
            if name in self.stats:
                pmx, pmn = self.stats[name]
                mx, mn = pmx * self.m + mx * (1 - self.m), pmn * self.m + mn * (1 - self.m)
            self.stats[name] = (mx, mn)
        scale, zp, lo, hi = self._qparams(*self.stats[name])
        return _ste(x0, lambda v: torch.fake_quantize_per_tensor_affine(v, scale.float(), zp.int(), lo, hi)), scale

    def weight(self, w):
        d = w.detach()
        if self.per_channel:
            flat = d.reshape(d.shape[0], -1)
            scale, zp, lo, hi = self._qparams(flat.amax(1), flat.amin(1))
            return _ste(w, lambda v: torch.fake_quantize_per_channel_affine(v, scale, zp.int(), 0, lo, hi)), scale
        scale, zp, lo, hi = self._qparams(d.max().reshape(1), d.min().reshape(1))
        return _ste(w, lambda v: torch.fake_quantize_per_tensor_affine(v, scale, zp.int(), lo, hi)), scale

    def bias(self, b, s_in, s_w):
        scale = (s_in * s_w).expand(b.shape[0]).contiguous()
        zp = torch.zeros(b.shape[0], dtype=torch.int32)
        return _ste(b, lambda v: torch.fake_quantize_per_channel_affine(v, scale, zp, 0, -128, 127))

    def conv(self, name, x, v, train, step, relu):
        x, s_in = (self.act(f"{name}-in_0", x, train, step) if name == "c1" else (x, self.out_scale))
        w, s_w = self.weight(v[f"{name}-weight"])
        h = F.conv2d(x, w, self.bias(v[f"{name}-bias"], s_in, s_w), padding=1)
        h = torch.relu(h) if relu else h
        out, self.out_scale = self.act(f"{name}-out", h, train, step)
        return out

    def forward(self, x, v, train, step):
        h = self.conv("c1", x, v, train, step, True)
        h = self.conv("c2", h, v, train, step, False).reshape(N, -1)  # (quantized: not again)
        w, _ = self.weight(v["fc-weight"])
        out, _ = self.act("fc-out", h @ w.t(), train, step)
        return out + v["fc-bias"]


def _variables():
    return {k: torch.from_numpy(v.numpy().copy()) for k, v in flow.get_all_variables().items()}


def _data(seed):
    rs = np.random.RandomState(seed)
    return rs.uniform(-1, 1, (N, 1, 6, 6)).astype(np.float32), rs.randint(0, 3, N).astype(np.int32)


def _check_stats(ref, v):
    for name, (mx, mn) in ref.stats.items():  # the observers' statistics are variables
        np.testing.assert_allclose(v[f"{name}-fake-quant-moving-max"], mx, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(v[f"{name}-fake-quant-moving-min"], mn, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("eager", [False, True])
def test_cnn_job_matches_the_fake_quant_composition(eager):
    flow.enable_eager_execution(eager)
    train, predict = _jobs(_config(moving_min_max_stop_update_after_iters=2, moving_min_max_momentum=0.9))
    flow.load_variables(_initial())
    ref = _Ref(momentum=0.9, stop=2)
    v = {k: torch.from_numpy(a) for k, a in _initial().items()}
    for step in range(3):  # the third step is past stop_update_after_iters: the statistics stay
        x, y = _data(step)
        got = train(x, y)
        params = {k: t.clone().requires_grad_() for k, t in v.items() if "fake-quant" not in k}
        want = ref.forward(torch.from_numpy(x), params, True, step)
        np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-5, atol=1e-5)
        F.cross_entropy(want, torch.from_numpy(y).long()).backward()
        v = _variables()
        _check_stats(ref, v)
        for k, p in params.items():  # the update: SGD on the straight-through gradients
            np.testing.assert_allclose(v[k], (p - 0.1 * p.grad).detach(), rtol=1e-5, atol=1e-6, err_msg=k)
    assert set(ref.stats) == {"c1-in_0", "c1-out", "c2-out", "fc-out"}
    # the predict job reads the train job's statistics and leaves them as they are
    x, _ = _data(7)
    want = ref.forward(torch.from_numpy(x), v, False, 0).numpy()
    np.testing.assert_allclose(predict(x), want, rtol=1e-5, atol=1e-5)
    after = _variables()
    for k in v:
        np.testing.assert_array_equal(after[k], v[k])


def test_per_channel_affine_weights_and_affine_activations():
    train, predict = _jobs(_config(per_channel_weight_quantization=True, symmetric=False,
                                   moving_min_max_stop_update_after_iters=10))
    flow.load_variables(_initial())
    ref = _Ref(symmetric=False, per_channel=True, stop=10)
    v = {k: torch.from_numpy(a) for k, a in _initial().items()}
    for step in range(2):
        x, y = _data(step)
        want = ref.forward(torch.from_numpy(x), v, True, step).numpy()
        np.testing.assert_allclose(train(x, y), want, rtol=1e-5, atol=1e-5)
        v = _variables()
        _check_stats(ref, v)


def test_the_loss_falls_and_quantization_changes_the_values():
    cfg = _config(moving_min_max_stop_update_after_iters=1000)

    @flow.global_function("train", cfg)
    def train(x: tp.Numpy.Placeholder((N, 1, 6, 6)), y: tp.Numpy.Placeholder((N,), dtype=flow.int32)) -> tp.Numpy:
        loss = flow.math.reduce_mean(flow.nn.sparse_softmax_cross_entropy_with_logits(y, _model(x)))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.2]), momentum=0.9).minimize(loss)
        return loss

    @flow.global_function("predict")  # the same model without QAT
    def plain(x: tp.Numpy.Placeholder((N, 1, 6, 6))) -> tp.Numpy:
        return _model(x)

    flow.load_variables(_initial())
    x, y = _data(0)
    losses = [float(train(x, y)) for _ in range(25)]
    assert losses[-1] < 0.5 * losses[0], losses
    v = {k: a for k, a in _variables().items() if "fake-quant" not in k}
    ref = _Ref(stop=0)  # (no updates: the train job's statistics)
    ref.stats = {k[:-len("-fake-quant-moving-max")]: (a, _variables()[k.replace("max", "min")])
                 for k, a in _variables().items() if k.endswith("-fake-quant-moving-max")}
    quantized = ref.forward(torch.from_numpy(x), v, False, 0).numpy()
    assert np.abs(plain(x) - quantized).max() > 1e-4  # the job without QAT computes in float


def test_builtin_ops_and_the_backends():
    """flow.nn.conv2d / flow.matmul / nn.max_pool2d / math.add_n: the default backend quantizes
    all four kinds, inputs and outputs; tensorrt conv2d and matmul only; cambricon their inputs
    only (its power-of-two scales)."""
    def run(backend):
        flow.clear_default_session()
        cfg = _config(moving_min_max_stop_update_after_iters=5, target_backend=backend)

        @flow.global_function("predict", cfg)
        def job(x: tp.Numpy.Placeholder((N, 1, 6, 6))) -> tp.Numpy:
            w = flow.get_variable("w", shape=(2, 1, 3, 3), initializer=flow.constant_initializer(0.3))
            h = flow.nn.max_pool2d(flow.nn.conv2d(x, w, 1, "SAME"), 2, 2, "VALID")
            h = flow.math.add_n([h, h])
            return flow.matmul(flow.reshape(h, (N, -1)), flow.get_variable("m", shape=(18, 2)))

        return job, {k for k in flow.get_all_variables() if "fake-quant" in k}

    # (flow.reshape passes a quantized blob on: 0.x's transparent reshape, not cambricon's)
    names = {"": {"conv2d_0-in_0", "conv2d_0-out", "max_pool_2d_0-out", "add_n_0-out", "matmul_0-out"},
             "tensorrt": {"conv2d_0-in_0", "conv2d_0-out", "matmul_0-in_0", "matmul_0-out"},
             "cambricon": {"conv2d_0-in_0", "matmul_0-in_0"}}
    x, _ = _data(1)
    for backend, want in names.items():
        # a predict job before any training has no statistics: the eager observer says so
        flow.enable_eager_execution(True)
        job, _ = run(backend)
        with pytest.raises(RuntimeError, match="no statistics"):
            job(x)
        flow.enable_eager_execution(False)
        job, _ = run(backend)
        job(x)
        made = {k for k in flow.get_all_variables() if "fake-quant" in k}
        assert made == {f"{n}-fake-quant-moving-{m}" for n in want for m in ("max", "min")}, backend


def _chain_initial():
    rs = np.random.RandomState(3)
    return {"w": rs.uniform(-0.5, 0.5, (3, 1, 3, 3)).astype(np.float32),
            "b": rs.uniform(-0.1, 0.1, (3,)).astype(np.float32),
            "fc-weight": rs.uniform(-0.2, 0.2, (3, 108)).astype(np.float32),
            "fc-bias": np.zeros(3, np.float32)}


@pytest.mark.parametrize("eager", [False, True])
def test_conv_bias_add_bn_relu_of_separate_ops_quantized_at_the_chain_end(eager):
    """0.x's chain conv2d -> bias_add -> normalization -> relu written as four ops: one
    fake quantization after the relu (none after the convolution), the bias by input scale x
    weight scale, the batch normalization in float on the convolution's unquantized output
    (0.x did not fold it), trained three steps against PyTorch's fake_quantize composition."""
    flow.enable_eager_execution(eager)
    cfg = _config(moving_min_max_stop_update_after_iters=2, moving_min_max_momentum=0.9)

    @flow.global_function("train", cfg)
    def train(x: tp.Numpy.Placeholder((N, 1, 6, 6)), y: tp.Numpy.Placeholder((N,), dtype=flow.int32)) -> tp.Numpy:
        h = flow.nn.conv2d(x, flow.get_variable("w", shape=(3, 1, 3, 3)), 1, "SAME")
        h = flow.nn.bias_add(h, flow.get_variable("b", shape=(3,)))
        h = flow.nn.relu(flow.layers.batch_normalization(h, axis=1, name="bn"))
        logits = flow.layers.dense(flow.reshape(h, (N, -1)), 3, name="fc")
        loss = flow.math.reduce_mean(flow.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0).minimize(loss)
        return logits

    flow.load_variables(_chain_initial())
    ref = _Ref(momentum=0.9, stop=2)
    v = {k: torch.from_numpy(a) for k, a in _chain_initial().items()}
    v.update({"bn-gamma": torch.ones(3), "bn-beta": torch.zeros(3), "bn-moving_mean": torch.zeros(3),
              "bn-moving_variance": torch.ones(3)})
    for step in range(3):
        x, y = _data(step)
        got = train(x, y)
        p = {k: t.clone().requires_grad_("moving" not in k) for k, t in v.items() if "fake-quant" not in k}
        xq, s_in = ref.act("conv2d_0-in_0", torch.from_numpy(x), True, step)
        wq, s_w = ref.weight(p["w"])
        h = F.conv2d(xq, wq, ref.bias(p["b"], s_in, s_w), padding=1)
        h = F.batch_norm(h, p["bn-moving_mean"], p["bn-moving_variance"], p["bn-gamma"], p["bn-beta"],
                         training=True, momentum=0.01, eps=1e-3)
        h, _ = ref.act("conv2d_0-out", torch.relu(h), True, step)
        fw, _ = ref.weight(p["fc-weight"])
        want, _ = ref.act("fc-out", h.reshape(N, -1) @ fw.t(), True, step)
        want = want + p["fc-bias"]
        np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-5, atol=1e-5)
        F.cross_entropy(want, torch.from_numpy(y).long()).backward()
        v = _variables()
        _check_stats(ref, v)
        for k, t in p.items():
            expect = t - 0.1 * t.grad if t.requires_grad else t  # (moving statistics: batch_norm's update)
            np.testing.assert_allclose(v[k], expect.detach(), rtol=1e-4, atol=1e-5, err_msg=k)
    # (the reshape passes the chain's quantized output to the dense layer's matmul: no fc-in_0)
    assert {k[:-len("-fake-quant-moving-max")] for k in v if k.endswith("-moving-max")} == \
        {"conv2d_0-in_0", "conv2d_0-out", "fc-out"}


def _chain_blobs(x, v, ref, quantized_bias, bias=True):
    """The blobs of conv -> bias_add -> normalization -> relu in PyTorch (the first step of a
    train job: batch statistics, gamma 1, beta 0), the convolution's input and weight quantized."""
    xq, s_in = ref.act("in", torch.from_numpy(x), True, 0)
    wq, s_w = ref.weight(torch.from_numpy(v["w"]))
    out = {"conv": F.conv2d(xq, wq, padding=1)}
    out["conv relu"] = torch.relu(out["conv"])
    h = out["conv"]
    if bias:
        b = torch.from_numpy(v["b"])
        h = out["bias_add"] = h + (ref.bias(b, s_in, s_w) if quantized_bias else b).reshape(1, -1, 1, 1)
    out["bn"] = F.batch_norm(h, None, None, training=True, eps=1e-3)
    out["relu"] = torch.relu(out["bn"])
    return out


def test_where_the_chain_ends():
    """The chain ends where 0.x's did: at a blob with another consumer (returned, or read by a
    second op), at an op of another kind (an add after the batch normalization), or at the relu;
    links are optional (conv -> relu, conv -> normalization -> relu) and layers.conv2d ->
    layers.batch_normalization_relu chains across the layers (channels first or last). The observer of the chain's end
    ("<conv>-out", affine: its moving min and max after one step are that blob's) tells which."""
    def conv(x):
        return flow.nn.conv2d(x, flow.get_variable("w", shape=(3, 1, 3, 3)), 1, "SAME")

    def bias_add(h):
        return flow.nn.bias_add(h, flow.get_variable("b", shape=(3,)))

    def bn(h):
        return flow.layers.batch_normalization(h, axis=1, name="bn")

    def mean(h):
        return flow.math.reduce_mean(h)

    def layers(x):
        h = flow.layers.conv2d(x, 3, 3, padding="SAME", name="conv2d_0", weight_name="w", bias_name="b")
        return mean(flow.layers.batch_normalization_relu(h, axis=1, name="bn")), None

    def layers_nhwc(x):  # (the same blobs channels-last: their min and max are the same)
        h = flow.layers.conv2d(flow.transpose(x, perm=[0, 2, 3, 1]), 3, 3, padding="SAME", data_format="NHWC",
                               name="conv2d_0", weight_name="w", bias_name="b")
        return mean(flow.nn.relu(flow.layers.batch_normalization(h, axis=-1, name="bn"))), None

    # job body -> (loss, extra blob) ; the blob the observer saw ; bias quantized ; has a bias
    cases = {
        "whole chain": (lambda x: (mean(flow.nn.relu(bn(bias_add(conv(x))))), None), "relu", True, True),
        "conv returned": (lambda x: (lambda c: (mean(flow.nn.relu(bn(bias_add(c)))), c))(conv(x)),
                          "conv", False, True),
        "bias_add read twice": (lambda x: (lambda a: (mean(flow.nn.relu(bn(a))) + mean(a), None))(bias_add(conv(x))),
                                "bias_add", True, True),
        "add after bn": (lambda x: (mean(flow.math.relu(bn(bias_add(conv(x))) + 0.5)), None), "bn", True, True),
        "conv -> relu": (lambda x: (mean(flow.nn.relu(conv(x))), None), "conv relu", False, False),
        "conv -> bn -> relu": (lambda x: (mean(flow.math.relu(bn(conv(x)))), None), "relu", False, False),
        "layers": (layers, "relu", True, True),
        "layers, channels last": (layers_nhwc, "relu", True, True),
    }
    init = _chain_initial()
    x, _ = _data(5)
    for case, (body, end, quantized_bias, has_bias) in cases.items():
        flow.clear_default_session()

        @flow.global_function("train", _config(symmetric=False, moving_min_max_stop_update_after_iters=5))
        def job(x: tp.Numpy.Placeholder((N, 1, 6, 6))) -> tp.Numpy:
            loss, extra = body(x)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]), momentum=0).minimize(loss)
            return loss if extra is None else extra

        flow.load_variables({"w": init["w"], "b": init["b"]})
        job(x)
        ref = _Ref(symmetric=False)
        blobs = _chain_blobs(x, init, ref, quantized_bias, has_bias)
        v = _variables()
        got = (v["conv2d_0-out-fake-quant-moving-min"], v["conv2d_0-out-fake-quant-moving-max"])
        want = blobs[end]
        np.testing.assert_allclose(got, (want.min().reshape(1), want.max().reshape(1)), rtol=1e-5, atol=1e-6,
                                   err_msg=case)


def test_configuration_checks():
    cfg = flow.FunctionConfig()
    with pytest.raises(TypeError, match="qat.symmetric"):
        cfg.qat.symmetric("yes")
    with pytest.raises(ValueError, match="target_backend"):
        cfg.qat.target_backend("tpu")
    with pytest.raises(ValueError, match="momentum"):
        cfg.qat.moving_min_max_momentum(1.5)
    with pytest.raises(AttributeError, match="no field 'bits'"):
        cfg.qat.bits(4)
    with pytest.raises(TypeError, match="FunctionConfig.qat"):
        cfg.qat(3)
    cfg.qat({"symmetric": False})
    cfg.qat.per_channel_weight_quantization(True)
    assert cfg.function_desc["qat"] == {"symmetric": False, "per_channel_weight_quantization": True}

    # activations need moving_min_max_stop_update_after_iters (0.x's pass checked it), found at the
    # first call before anything runs
    @flow.global_function("predict", _config())
    def job(x: tp.Numpy.Placeholder((N, 1, 6, 6))) -> tp.Numpy:
        assert flow.current_global_function_desc().job_config_proto.enable_quantization_aware_training
        return flow.layers.conv2d(x, 2, 3, name="c")

    with pytest.raises(ValueError, match="moving_min_max_stop_update_after_iters"):
        job(_data(0)[0])

    cfg = _config(moving_min_max_stop_update_after_iters=1)
    cfg.default_data_type(flow.float64)

    @flow.global_function("predict", cfg)
    def job64(x: tp.Numpy.Placeholder((N, 1, 6, 6), dtype=flow.float64)) -> tp.Numpy:
        return flow.layers.conv2d(x, 2, 3, name="c")

    with pytest.raises(ValueError, match="default_data_type float32"):
        job64(_data(0)[0].astype(np.float64))
