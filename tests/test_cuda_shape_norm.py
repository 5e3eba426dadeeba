"""tril / triu (+ in place) and diag_embed on CUDA (a host-made mask applied by where /
masked_fill_), vector norms (src/cuda/row_stats.cu) and clip_grad_norm_ on CUDA, against the CPU.
Marker ``cuda``: skipped with the reason where there is no device."""
import numpy as np
import pytest

import oneflow as flow

cuda = pytest.mark.cuda
DEV = "cuda"


def _rand(shape, dtype="float32", seed=0):
    a = np.random.default_rng(seed).standard_normal(shape) * 3
    if dtype == "complex64":
        return flow.tensor((a + 1j * a[::-1]).astype("complex64"))
    return flow.tensor(a.astype("float32")).to(getattr(flow, dtype))


def _same(got, want):
    assert got.device.type == DEV and got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@cuda
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64", "float64"])
@pytest.mark.parametrize("k", [-2, 0, 1, 7])
def test_tril_triu_and_in_place(dtype, k):
    x = _rand((2, 4, 6), dtype)
    for name in ("tril", "triu"):
        _same(getattr(flow, name)(x.to(DEV), k), getattr(flow, name)(x, k))
        _same(getattr(x.to(DEV).transpose(1, 2), name)(k), getattr(x.transpose(1, 2), name)(k))
        xd, xh = x.to(DEV).clone(), x.clone()
        getattr(xd, name + "_")(k)
        getattr(xh, name + "_")(k)
        _same(xd, xh)
    xr = _rand((5, 5)).to(DEV).requires_grad_()
    flow.triu(xr, 1).sum().backward()
    np.testing.assert_array_equal(xr.grad.cpu().numpy(), np.triu(np.ones((5, 5), "float32"), 1))


@cuda
def test_diag_embed():
    x = _rand((3, 4))
    for off, d1, d2 in [(0, -2, -1), (1, 0, 2), (-2, 1, 0)]:
        _same(flow.diag_embed(x.to(DEV), off, d1, d2), flow.diag_embed(x, off, d1, d2))


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, float("inf"), float("-inf")])
def test_vector_norm(dtype, ord):
    x = _rand((4, 5, 6), dtype)
    x[0, 0, 0] = 0
    tol = {"float32": 1e-6, "float64": 1e-12, "float16": 1e-3}[dtype]
    for kw in (dict(), dict(dim=1), dict(dim=(0, 2), keepdim=True), dict(dim=-1)):
        got, want = flow.linalg.vector_norm(x.to(DEV), ord, **kw), flow.linalg.vector_norm(x, ord, **kw)
        assert got.device.type == DEV and got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=tol, atol=tol)
    nan = x.to(DEV).clone()
    nan[1, 2, 3] = float("nan")
    # NaN propagates (ord 0 counts it as a nonzero, as torch)
    got, want = flow.linalg.vector_norm(nan, ord).item(), flow.linalg.vector_norm(nan.cpu(), ord).item()
    assert (np.isnan(got) and np.isnan(want)) if ord != 0 else got == want


@cuda
def test_norm_backward_and_clip_grad_norm():
    x = _rand((7, 9))
    grads = []
    for d in ("cpu", DEV):
        xr = x.detach().clone().to(d).requires_grad_()
        flow.linalg.vector_norm(xr, 2, dim=1).sum().backward()
        grads.append(xr.grad)
    np.testing.assert_allclose(grads[1].cpu().numpy(), grads[0].numpy(), rtol=1e-5, atol=1e-6)
    norms = []
    params = {}
    for d in ("cpu", DEV):
        ps = [_rand((3, 4), seed=1).to(d).requires_grad_(), _rand((5,), seed=2).to(d).requires_grad_()]
        for p, s in zip(ps, (3, 4)):
            p.grad = _rand(tuple(p.shape), seed=s).to(d)
        norms.append(flow.nn.utils.clip_grad_norm_(ps, max_norm=1.0))
        params[d] = ps
    np.testing.assert_allclose(norms[1].cpu().numpy(), norms[0].numpy(), rtol=1e-6)
    for a, b in zip(params[DEV], params["cpu"]):
        np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


@cuda
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_pad_forward_and_backward(mode, dtype):
    x = _rand((2, 3, 5, 6), dtype)
    pads = [(2, 1, 0, 3), (1, 1, 2, 2)] + ([(1, 2), (1, -1, 0, 2, 1, 0)] if mode == "constant" else [])
    for pad in pads:
        kw = dict(value=1.5) if mode == "constant" else {}
        outs = []
        for d in ("cpu", DEV):
            xr = x.detach().clone().to(d).requires_grad_()
            y = flow.nn.functional.pad(xr, pad, mode=mode, **kw)
            g = _rand(tuple(y.shape), dtype, seed=7).to(d)
            (y * g).sum().backward()
            outs.append((y, xr.grad))
        tol = 1e-2 if dtype == "float16" else 1e-6
        for got, want in zip(outs[1], outs[0]):
            assert got.device.type == DEV and got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=tol, atol=tol)


@cuda
def test_integer_division_by_zero_on_cuda():
    """A zero Python-number divisor is an error on CUDA too (checked on the host); a divisor tensor
    on the device is not read back for the check (no synchronisation, as in PyTorch's CUDA
    kernels): its zero lanes give an unspecified value, the others the exact quotient."""
    a = flow.tensor([4, 5, 6], device=DEV)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a // 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a % 0
    r = (a // flow.tensor([2, 0, 3], device=DEV)).cpu().numpy()
    assert r[0] == 2 and r[2] == 2
    np.testing.assert_array_equal((a // flow.tensor([2, 1, 3], device=DEV)).cpu().numpy(), [2, 5, 2])


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("mode,shape,kw", [
    ("nearest", (2, 3, 5, 7), dict(scale_factor=2)),
    ("nearest", (2, 3, 9, 4), dict(size=(4, 7))),
    ("nearest-exact", (2, 3, 5, 7), dict(size=(8, 3))),
    ("bilinear", (2, 3, 5, 7), dict(size=(9, 4))),
    ("bilinear", (2, 3, 5, 7), dict(scale_factor=1.5, align_corners=True)),
    ("bicubic", (1, 2, 6, 5), dict(size=(11, 8))),
    ("linear", (2, 3, 10), dict(size=7)),
    ("trilinear", (1, 2, 3, 4, 5), dict(scale_factor=2)),
    ("area", (2, 3, 10, 9), dict(size=(4, 5))),
])
def test_interpolate_forward_and_backward(mode, shape, kw, dtype):
    x = _rand(shape, dtype)
    outs = []
    for d in ("cpu", DEV):
        xr = x.detach().clone().to(d).requires_grad_()
        y = flow.nn.functional.interpolate(xr, mode=mode, **kw)
        g = _rand(tuple(y.shape), dtype, seed=3).to(d)
        (y * g).sum().backward()
        outs.append((y, xr.grad))
    tol = 2e-2 if dtype == "float16" else 1e-5 if dtype == "float32" else 1e-12
    for got, want in zip(outs[1], outs[0]):
        assert got.device.type == DEV and got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=tol, atol=tol)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_nansum_nanmean_count_nonzero(dtype):
    x = _rand((4, 5, 6), "float32")
    x[0, 1, :] = float("nan")
    x[1, 2, 3] = float("nan")
    x[2, 0, 0] = 0
    x = x.to(getattr(flow, dtype)) if dtype != "int64" else flow.nan_to_num(x).to(flow.int64)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for kw in (dict(), dict(dim=1), dict(dim=(0, 2), keepdim=True)):
        cases = [flow.nansum, lambda t, **k: flow.count_nonzero(t, dim=k.get("dim"))]
        if dtype != "int64":
            cases.append(flow.nanmean)
        for fn in cases:
            got, want = fn(x.to(DEV), **kw), fn(x, **kw)
            assert got.device.type == DEV and got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_unfold_fold(dtype):
    x = _rand((2, 3, 7, 8), "float32").to(getattr(flow, dtype))
    for kw in (dict(kernel_size=3), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(2, 3))):
        _same(flow.nn.functional.unfold(x.to(DEV), **kw), flow.nn.functional.unfold(x, **kw))
        cols = flow.nn.functional.unfold(x, **kw)
        _same(flow.nn.functional.fold(cols.to(DEV), (7, 8), **kw), flow.nn.functional.fold(cols, (7, 8), **kw))
        _same(flow.nn.functional.fold(cols[0].to(DEV), (7, 8), **kw), flow.nn.functional.fold(cols[0], (7, 8), **kw))
    if dtype == "float32":  # unfold's gradient is fold
        xr = x.detach().clone().to(DEV).requires_grad_()
        flow.nn.functional.unfold(xr, kernel_size=3, padding=1).sum().backward()
        xh = x.detach().clone().requires_grad_()
        flow.nn.functional.unfold(xh, kernel_size=3, padding=1).sum().backward()
        _same(xr.grad, xh.grad)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int8"])
def test_clamp_with_number_bounds_runs_on_the_device(dtype, cuda_kernels_only):
    """clamp / clamp_ / clamp_min / clamp_max with Python-number bounds (the CPU's vectorised
    number pass walks host memory: CUDA tensors take the functor kernels), NaN bounds included."""
    x = flow.tensor(np.random.default_rng(2).standard_normal((5, 7)) * 4).to(getattr(flow, dtype))
    d = x.to(DEV)
    cases = [lambda t: t.clamp(-1, 2), lambda t: t.clamp(min=0), lambda t: t.clamp(max=1),
             lambda t: flow.clamp(t, -3, -3), lambda t: t.clamp_(-2, 1)]
    if dtype.startswith("float"):
        cases.append(lambda t: t.clamp(float("nan"), 1.0))
    for fn in cases:
        want, got = fn(x.clone()), fn(d.clone())
        assert got.device.type == DEV and got.dtype == want.dtype
        np.testing.assert_array_equal(got.cpu().float().numpy(), want.float().numpy())
