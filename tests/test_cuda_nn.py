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
def test_softmax_rows_with_inf_and_nan_follow_the_cpu():
    x = flow.tensor([[1.0, float("inf"), 2.0], [float("-inf")] * 3, [0.0, float("nan"), 1.0], [-1e30, 0.0, 1e30]])
    for fn in (F.softmax, F.log_softmax):
        want, got = fn(x, dim=1), fn(x.to(DEV), dim=1)
        np.testing.assert_array_equal(np.isnan(got.cpu().numpy()), np.isnan(want.numpy()))
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


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
