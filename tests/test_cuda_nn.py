"""CUDA kernels of the training path: softmax / log_softmax / softmin (src/cuda/softmax.cu) and
nll_loss / cross_entropy (src/cuda/nll.cu), forward and backward against the CPU kernels (the
oracle), and a small model trained on the GPU against the same model trained on the CPU.
Marker ``cuda``: skipped with the reason where there is no device."""

import numpy as np
import pytest

import oneflow as flow
import oneflow.nn.functional as F

cuda = pytest.mark.cuda
DEV = "cuda"
TOL = {"float32": 2e-5, "float64": 1e-10, "float16": 2e-3, "bfloat16": 2e-2}


def _rand(shape, dtype, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    return flow.tensor((rng.standard_normal(shape) * scale).astype("float32")).to(getattr(flow, dtype))


def _close(got, want, dtype):
    assert got.device.type == DEV and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=TOL[dtype], atol=TOL[dtype])


def _both(fn, inputs, grad_seed=1):
    """fn on the CPU inputs and on their CUDA copies; returns (cpu out, cuda out, cpu grads, cuda grads)."""
    host = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in inputs]
    dev = [t.detach().to(DEV).requires_grad_(t.is_floating_point()) for t in inputs]
    want, got = fn(*host), fn(*dev)
    g = _rand(want.shape, str(want.dtype).split(".")[-1], seed=grad_seed, scale=1.0)
    want.backward(g)
    got.backward(g.to(DEV))
    return want, got, [t.grad for t in host], [t.grad for t in dev]


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape,dim", [((4, 10), 1), ((3, 5, 7), 1), ((2, 3, 300), -1), ((6,), 0),
                                       ((2, 40, 3), 1), ((2, 0, 3), 1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family_forward_and_backward(name, shape, dim, dtype):
    fn = getattr(F, name)
    want, got, gw, gg = _both(lambda x: fn(x, dim=dim), [_rand(shape, dtype)])
    _close(got, want, dtype)
    _close(gg[0], gw[0], dtype)


@cuda
@pytest.mark.parametrize("width", [3, 1500, 4096, 8192])  # 1500..8192: the cached-row kernels
def test_softmax_rows_with_inf_and_nan_follow_the_cpu(width):
    x = np.random.default_rng(5).standard_normal((5, width)).astype(np.float32)
    x[0, 1] = np.inf
    x[1, :] = -np.inf
    x[2, 1] = np.nan
    x[3, 0], x[3, -1] = -1e30, 1e30
    x = flow.tensor(x)
    for fn in (F.softmax, F.log_softmax):
        want, got = fn(x, dim=1), fn(x.to(DEV), dim=1)
        np.testing.assert_array_equal(np.isnan(got.cpu().numpy()), np.isnan(want.numpy()))
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("width", [1025, 2048, 3000, 8192, 8193])  # Note [Cached softmax rows], and past it
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_long_rows(name, width, dtype):
    fn = getattr(F, name)
    want, got, gw, gg = _both(lambda x: fn(x, dim=-1), [_rand((3, width), dtype)])
    _close(got, want, dtype)
    _close(gg[0], gw[0], dtype)


def _targets(n_shape, classes, seed=2, ignore=None):
    t = np.random.default_rng(seed).integers(0, classes, n_shape)
    if ignore is not None:
        t.reshape(-1)[::3] = ignore
    return flow.tensor(t)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(8, 5), (4, 6, 3, 2), (5,)])
@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 1},
                                {"weight": True}, {"label_smoothing": 0.2}, {"weight": True, "label_smoothing": 0.1,
                                                                             "ignore_index": 0}])
def test_cross_entropy_and_nll_loss_class_targets(kw, shape, dtype):
    kw = dict(kw)
    classes = shape[0] if len(shape) == 1 else shape[1]
    n_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = _targets(n_shape, classes, ignore=kw.get("ignore_index") if n_shape else None)
    if kw.pop("weight", False):
        kw["weight"] = _rand((classes,), dtype, seed=5).abs() + 0.1
    weight = kw.pop("weight", None)
    x = _rand(shape, dtype)
    for fn in (F.cross_entropy, F.nll_loss):
        if fn is F.nll_loss and "label_smoothing" in kw:
            continue
        def run(x, t, fn=fn):
            w = None if weight is None else weight.to(x.device)
            return fn(F.log_softmax(x, dim=0 if x.dim() == 1 else 1) if fn is F.nll_loss else x, t, weight=w, **kw)
        want, got, gw, gg = _both(run, [x, t])
        _close(got, want, dtype)
        _close(gg[0], gw[0], dtype)


@cuda
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probability_targets(smoothing):
    x = _rand((6, 4, 3), "float32")
    q = F.softmax(_rand((6, 4, 3), "float32", seed=7), dim=1)
    want, got, gw, gg = _both(lambda x, q: F.cross_entropy(x, q, label_smoothing=smoothing), [x, q])
    _close(got, want, "float32")
    _close(gg[0], gw[0], "float32")


@cuda
def test_loss_errors_on_cuda():
    x = flow.randn(4, 3, device=DEV)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(x, flow.tensor([0, 1, 7, 2], device=DEV))
    with pytest.raises(RuntimeError, match="cuda:0 and cpu|cpu and cuda:0"):
        F.cross_entropy(x, flow.tensor([0, 1, 2, 2]))


@cuda
@pytest.mark.parametrize("opt", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_mlp_trains_on_the_gpu_as_on_the_cpu(opt):
    def make():
        flow.manual_seed(0)
        return flow.nn.Sequential(flow.nn.Linear(20, 32), flow.nn.ReLU(), flow.nn.Linear(32, 5))

    host, dev = make(), make().to(DEV)
    assert all(p.device.type == DEV for p in dev.parameters())
    kw = {"lr": 0.05, "momentum": 0.9, "weight_decay": 1e-4} if opt == "SGD" else {"lr": 1e-2}
    runs = [(host, getattr(flow.optim, opt)(host.parameters(), **kw), "cpu"),
            (dev, getattr(flow.optim, opt)(dev.parameters(), **kw), DEV)]
    x, y = _rand((64, 20), "float32", seed=3, scale=1.0), _targets((64,), 5)
    losses = {"cpu": [], DEV: []} if DEV != "cpu" else {"cpu": []}
    for _ in range(6):
        for model, o, d in runs:
            o.zero_grad()
            loss = F.cross_entropy(model(x.to(d)), y.to(d))
            loss.backward()
            o.step()
            losses.setdefault(d, []).append(loss.item())
    for a, b in zip(host.parameters(), dev.parameters()):
        assert b.device.type == DEV
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert losses["cpu"][-1] < losses["cpu"][0]


# ---------------------------------------------------------------------------
# convolutions (cuDNN), pooling, batch norm, layer norm

CONV_TOL = {"float32": 1e-4, "float64": 1e-10}


@pytest.fixture
def no_tf32():
    old = flow.backends.cudnn.allow_tf32
    flow.backends.cudnn.allow_tf32 = False
    yield
    flow.backends.cudnn.allow_tf32 = old


def _close_tol(got, want, tol):
    assert got.device.type == DEV and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", [
    ("conv1d", (2, 4, 17), (6, 4, 3), dict(stride=2, padding=1)),
    ("conv2d", (2, 4, 9, 8), (6, 2, 3, 3), dict(padding=1, groups=2, dilation=2)),
    ("conv2d", (3, 3, 7, 7), (5, 3, 1, 1), {}),
    ("conv3d", (1, 2, 5, 6, 4), (3, 2, 2, 3, 2), dict(stride=(1, 2, 1))),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
], ids=lambda c: c[0] if isinstance(c, tuple) else None)
def test_convolutions_forward_and_backward(case, dtype, no_tf32):
    name, xs, ws, kw = case
    x, w = _rand(xs, dtype, seed=1, scale=1.0), _rand(ws, dtype, seed=2, scale=0.5)
    b = _rand((ws[1] if "transpose" in name else ws[0],), dtype, seed=3)
    fn = getattr(F, name)
    want, got, gw, gg = _both(lambda x, w, b: fn(x, w, b, **kw), [x, w, b])
    tol = CONV_TOL[dtype]
    _close_tol(got, want, tol)
    for a, e in zip(gg, gw):
        _close_tol(a, e, tol * 10)


@cuda
@pytest.mark.parametrize("mode", ["benchmark", "deterministic"])
def test_convolution_algorithm_search(mode, no_tf32):
    """flow.backends.cudnn.benchmark times cuDNN's algorithms once per geometry (Note [cuDNN
    algorithm choice]); deterministic keeps deterministic ones: same values as the CPU, and
    deterministic backward passes repeat bit for bit."""
    cudnn = flow.backends.cudnn
    old = cudnn.benchmark, cudnn.deterministic
    setattr(cudnn, mode, True)
    try:
        assert getattr(cudnn, mode) is True
        x, w, b = _rand((4, 8, 15, 13), "float32", seed=1, scale=1.0), _rand((16, 8, 3, 3), "float32", seed=2), \
            _rand((16,), "float32", seed=3)
        for _ in range(2):  # the second call takes the cached choice
            want, got, gw, gg = _both(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [x, w, b])
            _close_tol(got, want, 1e-4)
            for a, e in zip(gg, gw):
                _close_tol(a, e, 1e-3)
        if mode == "deterministic":
            _, _, _, again = _both(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [x, w, b])
            for a, e in zip(again, gg):
                np.testing.assert_array_equal(a.cpu().numpy(), e.cpu().numpy())
    finally:
        cudnn.benchmark, cudnn.deterministic = old
    assert cudnn.benchmark is old[0]


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pooling_forward_and_backward(dtype):
    x = _rand((2, 3, 9, 10), dtype)
    cases = [lambda x: F.max_pool2d(x, 3, 2, 1), lambda x: F.max_pool2d(x, 2, ceil_mode=True),
             lambda x: F.max_pool2d(x, 3, 1, dilation=2), lambda x: F.avg_pool2d(x, 3, 2, 1),
             lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), lambda x: F.avg_pool2d(x, 2, divisor_override=3),
             lambda x: F.adaptive_avg_pool2d(x, (4, 3)), lambda x: F.adaptive_max_pool2d(x, 5),
             lambda x: F.max_pool1d(x.flatten(2), 4), lambda x: F.avg_pool3d(x.unsqueeze(1), 2)]
    for fn in cases:
        want, got, gw, gg = _both(fn, [x])
        _close_tol(got, want, 1e-6)
        _close_tol(gg[0], gw[0], 1e-6)
    y, i = F.max_pool2d(x.to(DEV), 2, return_indices=True)
    yc, ic = F.max_pool2d(x, 2, return_indices=True)
    np.testing.assert_array_equal(i.cpu().numpy(), ic.numpy())
    np.testing.assert_array_equal(F.max_unpool2d(y, i, 2).cpu().numpy(), F.max_unpool2d(yc, ic, 2).numpy())


@cuda
def test_max_pool_nan_and_integers_follow_the_cpu():
    x = flow.tensor([[[[1.0, float("nan"), 3.0, 2.0], [0.0, 5.0, float("nan"), 1.0]]]])
    want, wi = F.max_pool2d(x, 2, return_indices=True)
    got, gi = F.max_pool2d(x.to(DEV), 2, return_indices=True)
    np.testing.assert_array_equal(np.isnan(got.cpu().numpy()), np.isnan(want.numpy()))
    np.testing.assert_array_equal(gi.cpu().numpy(), wi.numpy())
    xi = flow.tensor(np.random.default_rng(0).integers(-50, 50, (2, 3, 8, 8)).astype("int32"))
    np.testing.assert_array_equal(F.max_pool2d(xi.to(DEV), 3, 2).cpu().numpy(), F.max_pool2d(xi, 3, 2).numpy())


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (8, 3, 40, 41), (9000, 3), (2, 3, 0, 4)])  # large: many
def test_batch_norm_train_and_eval(dtype, shape):  # blocks per channel (Note [Batch norm reductions])
    tol = {"float32": 1e-5, "float64": 1e-10, "float16": 2e-3}[dtype]
    if shape[0] * np.prod(shape[2:]) > 1000 and dtype != "float64":
        tol *= 4  # longer sums in another order
    x = _rand(shape, dtype, scale=2.0) + 1
    for training in (True, False):
        stats = {}
        def run(x, w, b):
            rm = _rand((3,), "float32" if dtype == "float16" else dtype, seed=8).to(x.device)
            rv = _rand((3,), "float32" if dtype == "float16" else dtype, seed=9).abs().to(x.device) + 0.5
            y = F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.2, eps=1e-4)
            stats[x.device.type] = (rm, rv)
            return y
        wdt = "float32" if dtype == "float16" else dtype
        want, got, gw, gg = _both(run, [x, _rand((3,), wdt, seed=5), _rand((3,), wdt, seed=6)])
        _close_tol(got.float(), want.float(), tol)
        for a, e in zip(gg, gw):
            _close_tol(a.float(), e.float(), tol * 20)
        for a, e in zip(stats[DEV], stats["cpu"]):
            _close_tol(a, e, tol)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("width", [40, 700, 8192, 8300])  # rows in registers up to 8192 columns
def test_layer_norm_forward_and_backward(dtype, affine, width):
    x = _rand((6, 5, width), dtype)
    params = [_rand((5, width), dtype, seed=4), _rand((5, width), dtype, seed=5)] if affine else []
    fn = ((lambda x, w, b: F.layer_norm(x, (5, width), w, b, eps=1e-5)) if affine
          else (lambda x: F.layer_norm(x, (width,))))
    want, got, gw, gg = _both(fn, [x] + params)
    tol = CONV_TOL[dtype]
    _close_tol(got, want, tol)
    for a, e in zip(gg, gw):
        _close_tol(a, e, tol * 10)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_parameter_gradients_over_many_rows(dtype):
    """The weight / bias gradients are column sums over row chunks (2310 rows: 73 chunks)."""
    x = _rand((70, 33, 24), dtype)
    w, b = _rand((24,), dtype, seed=4), _rand((24,), dtype, seed=5)
    want, got, gw, gg = _both(lambda x, w, b: F.layer_norm(x, (24,), w, b), [x, w, b])
    tol = CONV_TOL[dtype]
    _close_tol(got, want, tol)
    for a, e in zip(gg, gw):
        _close_tol(a, e, tol * 10)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_forward_and_backward(dtype, affine):
    x = _rand((3, 6, 5, 7), dtype)
    params = [_rand((6,), dtype, seed=4), _rand((6,), dtype, seed=5)] if affine else []
    fn = (lambda x, w, b: F.group_norm(x, 3, w, b, eps=1e-5)) if affine else (lambda x: F.group_norm(x, 2))
    want, got, gw, gg = _both(fn, [x] + params)
    tol = CONV_TOL.get(dtype, 2e-2)
    _close_tol(got, want, tol)
    for a, e in zip(gg, gw):
        _close_tol(a, e, tol * 10)


@cuda
def test_the_example_cnn_trains_on_the_gpu_as_on_the_cpu(no_tf32):
    def make():
        flow.manual_seed(0)
        nn = flow.nn
        # No conv bias before the batch norm: its exact gradient is 0, so what each device
        # computes is rounding noise, which Adam's normalised step turns into +-lr.
        return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(8 * 7 * 7, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 10))

    host, dev = make(), make().to(DEV)
    opts = [flow.optim.Adam(m.parameters(), lr=1e-3) for m in (host, dev)]
    x, y = _rand((16, 1, 14, 14), "float32", seed=3, scale=1.0), _targets((16,), 10)
    for step in range(4):
        for model, o, d in ((host, opts[0], "cpu"), (dev, opts[1], DEV)):
            flow.manual_seed(100 + step)  # the same dropout masks on both devices
            o.zero_grad()
            F.cross_entropy(model(x.to(d)), y.to(d)).backward()
            o.step()
    for a, b in zip(host.state_dict().values(), dev.state_dict().values()):
        np.testing.assert_allclose(b.cpu().float().numpy(), a.float().numpy(), rtol=2e-3, atol=2e-4)


# ---------------------------------------------------------------------------
# index kernels (src/cuda/index.cu)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_index_ops_forward_and_backward(dtype):
    rng = np.random.default_rng(0)
    rows = flow.tensor([4, 0, 4, 2])
    gidx = flow.tensor(rng.integers(0, 7, (5, 4, 3)))
    cases = [
        lambda x: flow.index_select(x, 0, rows.to(x.device)),
        lambda x: flow.index_select(x, 2, rows[1:].to(x.device) % 3),
        lambda x: flow.gather(x, 1, gidx.to(x.device)),
        lambda x: x.transpose(0, 1).gather(0, gidx.transpose(0, 1).to(x.device)),
        lambda x: F.embedding(rows.reshape(2, 2).to(x.device), x.reshape(5, 21)),
        lambda x: F.embedding(rows.to(x.device), x.reshape(5, 21), padding_idx=4),
        lambda x: F.embedding(rows.to(x.device), x.reshape(5, 21), scale_grad_by_freq=True),
        lambda x: flow.zeros(9, 7, 3, dtype=x.dtype, device=x.device).index_add(0, rows.to(x.device) * 2, x[:4]),
        lambda x: flow.zeros(5, 7, 3, dtype=x.dtype, device=x.device).scatter_add(1, gidx.to(x.device), x[:, :4]),
        lambda x: flow.zeros(5, 7, 3, dtype=x.dtype, device=x.device).scatter(1, gidx[:, :1].to(x.device), 2.5) * x,
    ]
    x = _rand((5, 7, 3), dtype)
    tol = TOL[dtype] * 10
    for fn in cases:
        want, got, gw, gg = _both(fn, [x])
        _close(got, want, dtype)
        np.testing.assert_allclose(gg[0].cpu().float().numpy(), gw[0].float().numpy(), rtol=tol, atol=tol)


@cuda
def test_index_errors_on_cuda():
    x = flow.randn(4, 3, device=DEV)
    with pytest.raises((RuntimeError, IndexError), match="out of bounds|out of range"):
        flow.index_select(x, 0, flow.tensor([0, 4], device=DEV))
    with pytest.raises(RuntimeError, match="out of bounds"):
        flow.gather(x, 1, flow.tensor([[0], [3], [1], [2]], device=DEV))
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(flow.tensor([5], device=DEV), x)
    # the range check runs on the device (min / max); the value named comes from the host copy
    for bad in (-5, 7):
        with pytest.raises(RuntimeError, match=f"index {bad} is out of bounds for dimension 1 with size 3"):
            flow.gather(x, 1, flow.tensor([[0], [bad], [1], [2]], device=DEV))
    with pytest.raises(RuntimeError, match="invalid max index: 99 "):
        F.max_unpool2d(flow.randn(1, 1, 2, 2, device=DEV), flow.tensor([[[[0, 1], [2, 99]]]], device=DEV), 2)
    with pytest.raises(RuntimeError, match="invalid max index: -2 "):
        flow._C.max_pool_grad(flow.randn(1, 1, 2, 2, device=DEV), flow.tensor([[[[0, 1], [-2, 3]]]], device=DEV),
                              flow.randn(1, 1, 4, 4, device=DEV), 2)
    x = flow.randn(2, 3, 8, 8, device=DEV)
    y, i = F.max_pool2d(x, 2, return_indices=True)
    assert flow._C.max_pool_grad(y, i, x, 2).shape == (2, 3, 8, 8)  # valid indices pass


@cuda
@pytest.mark.parametrize("kind", ["cumsum", "cumprod", "logcumsumexp"])
def test_scans_on_long_lines_and_along_any_dim(kind):
    x = flow.tensor(np.random.default_rng(0).uniform(0.99, 1.01, 200_000).astype("float32"))  # products stay finite
    fn = getattr(flow, kind)
    for t, dim in ((x, 0), (x.reshape(400, 500), 0), (x.reshape(400, 500), 1), (x.reshape(20, 100, 100), 1)):
        want, got = fn(t, dim), fn(t.to(DEV), dim)
        assert got.device.type == DEV and got.dtype == want.dtype
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=2e-5, atol=1e-5)
    if kind != "logcumsumexp":
        i = flow.tensor(np.random.default_rng(1).integers(-3, 4, (7, 300)).astype("int32"))
        np.testing.assert_array_equal(fn(i.to(DEV), 1).cpu().numpy(), fn(i, 1).numpy())


@cuda
@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "uint8", "bool"])
def test_cummax_cummin_match_the_cpu(name, dtype, cuda_kernels_only):
    """Values and indices as the CPU's (ties and NaNs take over: the latest index), along every
    dim; the gradient sums into each running extreme's position."""
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, (6, 7, 5)).astype(dtype if dtype != "bool" else "int8")  # many ties
    if dtype.startswith("float"):
        x = x + rng.standard_normal(x.shape).astype(dtype) * (rng.random(x.shape) < 0.5)
        x[1, 2, :] = np.nan
        x[2, :, 3] = -np.inf
    t = flow.tensor(x.astype(dtype))
    fn = getattr(flow, name)
    for dim in (0, 1, 2, -1):
        want, got = fn(t, dim), fn(t.to(DEV), dim)
        assert got.values.device.type == DEV and got.indices.dtype == flow.int64
        np.testing.assert_array_equal(got.values.cpu().numpy(), want.values.numpy())
        np.testing.assert_array_equal(got.indices.cpu().numpy(), want.indices.numpy())
    if dtype.startswith("float") and dtype != "float16":
        y = flow.tensor(rng.standard_normal((5, 40)).astype(dtype))
        want, got, gw, gg = _both(lambda a: fn(a, 1).values, [y])
        np.testing.assert_allclose(gg[0].cpu().numpy(), gw[0].numpy(), rtol=1e-6, atol=1e-6)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_var_std_logsumexp(dtype):
    x = _rand((6, 50, 7), dtype) + 100  # an offset that a one-pass variance would lose
    tol = TOL[dtype] * 10
    cases = [lambda t: t.var(), lambda t: t.std(dim=1), lambda t: t.var(dim=(0, 2), unbiased=False, keepdim=True),
             lambda t: flow.var_mean(t, dim=1)[0], lambda t: flow.std_mean(t, dim=2)[1],
             lambda t: t.logsumexp(dim=1), lambda t: t.logsumexp(dim=(0, 2))]
    for fn in cases:
        want, got, gw, gg = _both(fn, [x])
        np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(gg[0].cpu().float().numpy(), gw[0].float().numpy(), rtol=tol, atol=tol)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"])
def test_sort_argsort_topk(dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 6, (4, 9, 33)).astype("float32")  # many ties: stability shows
    if dtype.startswith("float"):
        a.reshape(-1)[::17] = np.nan
        a.reshape(-1)[5::23] = -0.0
    x = flow.tensor(a).to(getattr(flow, dtype))
    g = x.to(DEV)
    cases = [lambda t: t.sort(dim=2), lambda t: t.sort(dim=1, descending=True), lambda t: flow.sort(t, 0, stable=True)]
    if dtype != "bool":  # topk refuses bool (as PyTorch)
        cases += [lambda t: t.topk(5, dim=2), lambda t: t.topk(3, dim=1, largest=False), lambda t: t.flatten().topk(10)]
    for fn in cases:
        want, got = fn(x), fn(g)
        np.testing.assert_array_equal(got.values.cpu().numpy(), want.values.numpy())
        np.testing.assert_array_equal(got.indices.cpu().numpy(), want.indices.numpy())
    np.testing.assert_array_equal(g.argsort(dim=2).cpu().numpy(), x.argsort(dim=2).numpy())


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8"])
def test_kthvalue_median_nanmedian_mode(dtype):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 5, (3, 7, 12)).astype("float32")  # ties everywhere: the picked index shows
    if dtype.startswith("float"):
        a[0, 1, ::5] = np.nan
        a[2, :, 3] = np.nan
    x = flow.tensor(a).to(getattr(flow, dtype))
    g = x.to(DEV)
    cases = [lambda t: t.kthvalue(3, dim=2), lambda t: t.kthvalue(1, dim=0, keepdim=True),
             lambda t: t.median(dim=2), lambda t: t.median(dim=1, keepdim=True), lambda t: t.nanmedian(dim=2),
             lambda t: t.mode(dim=2), lambda t: t.mode(dim=0)]
    for fn in cases:
        want, got = fn(x), fn(g)
        assert got.values.device.type == DEV and got.values.shape == want.values.shape
        np.testing.assert_array_equal(got.values.cpu().float().numpy(), want.values.float().numpy())
        np.testing.assert_array_equal(got.indices.cpu().numpy(), want.indices.numpy())
    np.testing.assert_array_equal(g.median().cpu().float().numpy(), x.median().float().numpy())


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_forward_and_backward(mode, dtype, cuda_kernels_only):
    """src/cuda/embedding_bag.cu against the CPU loops: offsets with an empty bag, padding_idx,
    include_last_offset, 2-D inputs, per_sample_weights (sum), scale_grad_by_freq; weight and
    per-sample-weight gradients. The host fallback is off: the kernels must exist."""
    tol = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-3}[dtype]
    w = _rand((10, 6), dtype, seed=4, scale=1.0)
    idx = flow.tensor([1, 4, 4, 9, 0, 2, 3, 2, 7, 8])
    offsets = flow.tensor([0, 3, 3, 6])  # bag 1 is empty
    psw = _rand((10,), dtype, seed=5, scale=1.0) if mode == "sum" else None
    cases = [dict(), dict(padding_idx=2), dict(scale_grad_by_freq=True)]
    for kw in cases:
        def fn(w, p=None, kw=kw):
            return F.embedding_bag(idx.to(w.device), w, offsets.to(w.device), mode=mode, per_sample_weights=p, **kw)

        inputs = [w] + ([psw] if psw is not None else [])
        want, got, gw, gg = _both(fn, inputs)
        _close_tol(got.float(), want.float(), tol)
        for a, e in zip(gg, gw):
            _close_tol(a.float(), e.float(), tol * 10)
    # include_last_offset and 2-D inputs (bags of equal size)
    last = F.embedding_bag(idx, w, flow.tensor([0, 3, 6, 10]), mode=mode, include_last_offset=True)
    got = F.embedding_bag(idx.to(DEV), w.to(DEV), flow.tensor([0, 3, 6, 10]).to(DEV), mode=mode,
                          include_last_offset=True)
    _close_tol(got.float(), last.float(), tol)
    two = flow.tensor([[1, 2, 3], [4, 4, 0]])
    _close_tol(F.embedding_bag(two.to(DEV), w.to(DEV), mode=mode).float(), F.embedding_bag(two, w, mode=mode).float(),
               tol)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_cdist_direct_kernel(p, dtype, cuda_kernels_only):
    """src/cuda/cdist.cu (every p; p = 2 with few rows takes the direct form, more rows the GEMM
    form) and its gradient (a composition of device ops), against the CPU; batch broadcast."""
    x1, x2 = _rand((2, 1, 7, 5), dtype, seed=6, scale=1.0), _rand((3, 9, 5), dtype, seed=7, scale=1.0)
    x2[0, 0] = x1[0, 0, 0]  # a zero distance (the gradient's masked case)
    want, got, gw, gg = _both(lambda a, b: flow.cdist(a, b, p=p), [x1, x2])
    tol = 1e-5 if dtype == "float32" else 1e-10
    _close_tol(got, want, tol)
    for a, e in zip(gg, gw):
        _close_tol(a, e, tol * 10)
    big1, big2 = _rand((40, 6), dtype, seed=8), _rand((30, 6), dtype, seed=9)
    _close_tol(flow.cdist(big1.to(DEV), big2.to(DEV), p=p), flow.cdist(big1, big2, p=p), tol * 100)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_combined_margin_loss_on_device(dtype, cuda_kernels_only):
    """OneFlow's InsightFace margin on CUDA (device label mask, device ops) and its gradient,
    against the CPU; a label outside [0, C) leaves its row unchanged."""
    x = flow.tensor(np.random.default_rng(10).uniform(-0.9, 0.9, (5, 7)).astype(dtype))
    label = flow.tensor([3, 0, 6, -1, 9])
    fn = lambda x: flow.nn.functional.combined_margin_loss(x, label.to(x.device), 1.0, 0.5, 0.2)  # noqa: E731
    want, got, gw, gg = _both(fn, [x])
    tol = 1e-5 if dtype == "float32" else 1e-12
    _close_tol(got, want, tol)
    _close_tol(gg[0], gw[0], tol * 10)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multi_margin_loss_on_device(reduction, dtype, cuda_kernels_only):
    """src/cuda/margin.cu (one row per thread, in double as the CPU) with p = 1 / 2, class
    weights and a single 1-D sample; gradients against the CPU."""
    x = _rand((6, 5), dtype, seed=14, scale=1.0)
    target = flow.tensor([0, 4, 2, 2, 1, 3])
    weight = _rand((5,), dtype, seed=15, scale=1.0).abs()
    tol = 1e-5 if dtype == "float32" else 1e-12
    for p, w in [(1, None), (2, None), (1, weight)]:
        def fn(x, p=p, w=w):
            return F.multi_margin_loss(x, target.to(x.device), p=p, margin=0.7,
                                       weight=None if w is None else w.to(x.device), reduction=reduction)

        want, got, gw, gg = _both(fn, [x])
        _close_tol(got, want, tol)
        _close_tol(gg[0], gw[0], tol)
    one = _rand((5,), dtype, seed=16, scale=1.0)
    _close_tol(F.multi_margin_loss(one.to(DEV), flow.tensor([3]).to(DEV), reduction=reduction),
               F.multi_margin_loss(one, flow.tensor([3]), reduction=reduction), tol)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss_on_device(reduction, dtype, cuda_kernels_only):
    """multilabel_margin_loss on CUDA (targets up to the first -1; a row without targets; a 1-D
    sample) and its gradient, against the CPU."""
    x = _rand((4, 5), dtype, seed=17, scale=1.0)
    target = flow.tensor([[3, 0, -1, 1, 1], [1, 2, 4, 0, -1], [-1, 2, 2, 2, 2], [4, 3, 2, 1, 0]])
    tol = 1e-5 if dtype == "float32" else 1e-12
    want, got, gw, gg = _both(lambda x: F.multilabel_margin_loss(x, target.to(x.device), reduction=reduction), [x])
    _close_tol(got, want, tol)
    _close_tol(gg[0], gw[0], tol)
    one, t1 = _rand((5,), dtype, seed=18, scale=1.0), flow.tensor([2, 0, -1, 0, 0])
    _close_tol(F.multilabel_margin_loss(one.to(DEV), t1.to(DEV), reduction=reduction),
               F.multilabel_margin_loss(one, t1, reduction=reduction), tol)


# ---------------------------------------------------------------------------
# ctc_loss (src/cuda/ctc.cu)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_on_device(reduction, dtype, cuda_kernels_only):
    """alpha / beta on the device in float64 as the CPU: padded and concatenated targets, repeated
    labels, an element with no target, one whose target cannot fit its input (infinite loss,
    zeroed under zero_infinity), an empty input, the unbatched form; values and gradients."""
    T, N, C = 12, 5, 6
    lp = F.log_softmax(_rand((T, N, C), dtype, seed=3, scale=1.0), -1)
    tgt = flow.tensor([[1, 1, 2, 3], [4, 5, 2, 0], [2, 0, 0, 0], [1, 2, 3, 4], [3, 0, 0, 0]])
    tlen = flow.tensor([4, 3, 0, 4, 1])
    ilen = flow.tensor([12, 9, 7, 3, 0])  # element 3: 4 labels in 3 steps (impossible); element 4: none
    flat = flow.cat([tgt[b, : int(tlen[b])] for b in range(N)])
    for targets in (tgt, flat):
        for zero_infinity in (False, True):
            def loss(x, targets=targets, zero_infinity=zero_infinity):  # noqa: E306
                return F.ctc_loss(x, targets.to(x.device), ilen.to(x.device), tlen.to(x.device),
                                  reduction=reduction, zero_infinity=zero_infinity)
            want, got, gw, gg = _both(loss, [lp])
            w, g = want.cpu().double().numpy(), got.cpu().double().numpy()
            np.testing.assert_array_equal(np.isinf(g), np.isinf(w))
            fin = np.isfinite(w)
            np.testing.assert_allclose(g[fin], w[fin], rtol=TOL[dtype], atol=TOL[dtype])
            if np.isfinite(w).all():
                _close(gg[0], gw[0], dtype)
    one = lambda x: F.ctc_loss(x, flow.tensor([1, 3]).to(x.device), flow.tensor([T]).to(x.device),  # noqa: E731
                               flow.tensor([2]).to(x.device), reduction=reduction)
    want, got, gw, gg = _both(one, [lp[:, 0]])  # unbatched (T, C)
    _close(got, want, dtype)
    _close(gg[0], gw[0], dtype)
