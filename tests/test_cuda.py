"""The CUDA device: moving tensors, copies and casts, the caching allocator, pointwise ops on the
shared functors, cuBLAS matmuls, autograd across devices, errors. Every test but the last group
needs a GPU (marker ``cuda``: skipped with the reason elsewhere); results are compared with the
CPU kernels (the oracle) and with PyTorch on the same GPU when torch has CUDA."""

import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.nn.functional as F

cuda = pytest.mark.cuda
TORCH_CUDA = torch.cuda.is_available()

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def _host(dtype, shape=(3, 5), seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return flow.tensor(rng.random(shape) > 0.5)
    if dtype in ("int8", "uint8", "int32", "int64"):
        return flow.tensor(rng.integers(0 if dtype == "uint8" else -50, 50, shape).astype(dtype))
    return flow.tensor(rng.standard_normal(shape).astype("float32")).to(getattr(flow, dtype))


def _np(t):
    t = t.cpu()
    if t.dtype == flow.bfloat16:
        t = t.float()
    return t.numpy()


# ---------------------------------------------------------------------------
# moving tensors


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(dtype):
    x = _host(dtype)
    y = x.cuda()
    assert y.is_cuda and y.device.type == "cuda" and y.device.index == 0
    assert y.dtype == x.dtype and y.shape == x.shape
    np.testing.assert_array_equal(_np(y), _np(x))
    assert not y.cpu().is_cuda


@cuda
def test_to_forms_and_printing():
    x = flow.arange(6, dtype=flow.float32).reshape(2, 3)
    for spec in ("cuda", "cuda:0", flow.device("cuda"), flow.device("cuda", 0)):
        y = x.to(spec)
        assert y.device == flow.device("cuda:0")
    y = x.to("cuda", flow.float64)
    assert y.dtype == flow.float64 and y.is_cuda
    assert "device='cuda:0'" in repr(y)
    assert y.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert y[1, 2].item() == 5.0
    with pytest.raises(TypeError, match="cpu"):
        y.numpy()


@cuda
@pytest.mark.parametrize("src,dst", [("float32", "float16"), ("float16", "int32"), ("int64", "bfloat16"),
                                     ("float64", "bool"), ("bool", "float32"), ("uint8", "int8")])
def test_casts_on_device(src, dst):
    x = _host(src, (4, 6), seed=1)
    want = x.to(getattr(flow, dst))
    got = x.cuda().to(getattr(flow, dst))
    assert got.is_cuda and got.dtype == getattr(flow, dst)
    np.testing.assert_array_equal(_np(got), _np(want))


@cuda
def test_non_contiguous_copies_both_ways():
    x = flow.tensor(np.arange(60, dtype=np.float32).reshape(3, 4, 5))
    v = x.transpose(0, 2)[::2]  # non-contiguous host view
    np.testing.assert_array_equal(v.cuda().cpu().numpy(), v.numpy())
    d = x.cuda().transpose(0, 2)[::2]  # non-contiguous device view
    np.testing.assert_array_equal(d.cpu().numpy(), v.numpy())
    # a device view written from the host, broadcast and cast
    z = flow.zeros(3, 4, 5, device="cuda")
    z[:, 1].copy_(flow.tensor([1, 2, 3, 4, 5]))
    want = np.zeros((3, 4, 5), np.float32)
    want[:, 1] = [1, 2, 3, 4, 5]
    np.testing.assert_array_equal(z.cpu().numpy(), want)
    z.fill_(7)
    np.testing.assert_array_equal(z.cpu().numpy(), np.full((3, 4, 5), 7, np.float32))


@cuda
def test_creation_on_device():
    assert flow.zeros(2, 3, device="cuda").is_cuda
    np.testing.assert_array_equal(flow.ones(2, 3, device="cuda").cpu().numpy(), np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(flow.full((2, 2), 3.5, device="cuda").cpu().numpy(), np.full((2, 2), 3.5, np.float32))
    e = flow.empty(0, 4, device="cuda")
    assert e.shape == (0, 4) and e.is_cuda
    assert flow.zeros_like(e).is_cuda
    # arange / linspace: the CPU's values, moved once
    for got, want in [(flow.arange(5, 17, 3, device="cuda"), flow.arange(5, 17, 3)),
                      (flow.arange(0.5, 2.0, 0.1, device="cuda"), flow.arange(0.5, 2.0, 0.1)),
                      (flow.linspace(-1, 1, 9, device="cuda"), flow.linspace(-1, 1, 9)),
                      (flow.linspace(0, 10, 4, dtype=flow.int64, device="cuda"), flow.linspace(0, 10, 4, dtype=flow.int64))]:
        assert got.is_cuda and got.dtype == want.dtype
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    a, b = flow.arange(7.0, device="cuda"), flow.linspace(1, 2, 7, device="cuda")
    np.testing.assert_allclose(flow.dot(a, b).cpu().numpy(), flow.dot(a.cpu(), b.cpu()).numpy(), rtol=1e-6)
    ai = flow.arange(7, device="cuda", dtype=flow.int32)
    d = flow.dot(ai, ai)
    assert d.is_cuda and d.dtype == flow.int32 and d.item() == 91


# ---------------------------------------------------------------------------
# pointwise ops: the shared functors on the device


UNARY = ["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "abs", "neg", "floor", "erf", "relu", "gelu", "silu"]


@cuda
@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_unary_matches_cpu_and_torch(name, dtype):
    x = _host(dtype, (37, 29), seed=2).abs() + 0.1
    fn = getattr(flow, name, None) or getattr(flow.nn.functional, name)
    want = fn(x)
    got = fn(x.cuda())
    assert got.is_cuda and got.dtype == want.dtype
    tol = {"float16": 2e-3, "bfloat16": 1e-2}.get(dtype, 1e-6 if dtype == "float64" else 2e-6)
    np.testing.assert_allclose(_np(got).astype(np.float64), _np(want).astype(np.float64), rtol=tol, atol=tol)
    if TORCH_CUDA:
        tfn = getattr(torch, name, None) or getattr(torch.nn.functional, name)
        tx = torch.from_numpy(_np(x.float()).copy()).to(getattr(torch, dtype)).cuda()
        tr = tfn(tx).float().cpu().numpy()
        np.testing.assert_allclose(_np(got).astype(np.float64), tr, rtol=max(tol, 1e-5), atol=max(tol, 1e-5))


@cuda
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_nextafter_16_bit_on_device(dtype, cuda_kernels_only):
    """16-bit nextafter steps in its own format on the device too (cuda/nextafter.cu): NaN, equal
    operands, signed zeros, infinities, broadcast, a number and a 0-d CPU tensor as `other`."""
    dt = getattr(flow, dtype)
    vals = [0.0, -0.0, 1.0, -1.0, 65504.0, -65504.0, float("inf"), float("-inf"), float("nan"), 1e-7, 3.5]
    a = flow.tensor(vals, dtype=dt).reshape(11, 1)
    b = flow.tensor([0.0, 2.0, -2.0, float("inf"), float("nan")], dtype=dt)
    def same(got, want):  # 16-bit values widen to float exactly: equal values and signs
        g, w = got.cpu().float().numpy(), want.cpu().float().numpy()
        np.testing.assert_array_equal(g, w)
        assert (np.signbit(g) == np.signbit(w))[~np.isnan(w)].all()

    want, got = flow.nextafter(a, b), flow.nextafter(a.cuda(), b.cuda())
    assert got.is_cuda and got.dtype == dt and got.shape == want.shape
    same(got, want)
    for other in (1.0, flow.tensor(-3.0, dtype=dt)):
        same(flow.nextafter(a.cuda(), other), flow.nextafter(a, other))
    x = a.cuda().clone()
    x.nextafter_(b[1:2].cuda())
    same(x, flow.nextafter(a, b[1:2]))


@cuda
def test_binary_broadcast_scalars_and_promotion():
    a = _host("float32", (4, 1, 5), seed=3)
    b = _host("int64", (3, 1), seed=4)
    ga, gb = a.cuda(), b.cuda()
    for op in (flow.add, flow.mul, flow.sub, flow.maximum, flow.atan2, flow.lt, flow.eq):
        want, got = op(a, b), op(ga, gb)
        assert got.is_cuda and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-6, atol=1e-6)
    # Python numbers and 0-d CPU tensors travel to the kernel by value
    np.testing.assert_allclose(_np(ga * 2.5 + 1), _np(a * 2.5 + 1), rtol=1e-6)
    np.testing.assert_allclose(_np(2 - ga), _np(2 - a), rtol=1e-6)
    np.testing.assert_allclose(_np(ga / flow.tensor(4.0)), _np(a / 4.0), rtol=1e-6)
    assert (ga / flow.tensor(4.0)).is_cuda and (flow.tensor(4.0) / ga).is_cuda
    # integer ops and ternary
    np.testing.assert_array_equal(_np(gb // 3), _np(b // 3))
    np.testing.assert_array_equal(_np(gb.bitwise_and(6)), _np(b.bitwise_and(6)))
    c = _host("float32", (4, 3, 5), seed=5)
    np.testing.assert_allclose(_np(flow.addcmul(ga, gb.float(), c.cuda(), value=0.5)),
                               _np(flow.addcmul(a, b.float(), c, value=0.5)), rtol=1e-6)


@cuda
def test_in_place_and_non_contiguous_pointwise():
    x = _host("float32", (6, 8), seed=6)
    gx = x.cuda()
    v, gv = x.t()[::2], gx.t()[::2]
    gv.mul_(3).add_(1)
    v.mul_(3).add_(1)
    np.testing.assert_allclose(gx.cpu().numpy(), x.numpy(), rtol=1e-6)
    gx.add_(gx)  # exact self-overlap
    x.add_(x)
    np.testing.assert_allclose(gx.cpu().numpy(), x.numpy(), rtol=1e-6)
    y = flow.exp(gx[:, 1:7:3])  # strided input
    np.testing.assert_allclose(y.cpu().numpy(), np.exp(x.numpy()[:, 1:7:3]), rtol=1e-5)
    with pytest.raises(RuntimeError):
        gx.int().add_(1.5)  # result type can't be cast to the in-place output


@cuda
def test_large_pointwise_uses_all_blocks():
    n = (1 << 22) + 3
    x = flow.arange(n, dtype=flow.float32).cuda()
    y = (x * 2 - x).cpu().numpy()
    np.testing.assert_array_equal(y, np.arange(n, dtype=np.float32))


# ---------------------------------------------------------------------------
# reductions: the CPU reducers in the CUDA reduce kernel


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "bool"])
def test_reductions_match_cpu(dtype):
    x = _host(dtype, (6, 7, 300), seed=8)
    g = x.cuda()
    cases = [
        lambda t: t.sum(), lambda t: t.sum(dim=1), lambda t: t.sum(dim=(0, 2), keepdim=True),
        lambda t: t.transpose(0, 2)[::2].sum(dim=0),            # non-contiguous input
        lambda t: t.amax(dim=2), lambda t: t.amin(dim=(0, 1)), lambda t: t.max(dim=1).indices,
        lambda t: t.argmax(), lambda t: t.argmin(dim=2), lambda t: t.all(dim=1), lambda t: t.any(),
    ]
    if dtype != "bool":
        cases += [lambda t: t.prod(dim=0)]
    if dtype in ("float32", "float64", "float16"):
        cases += [lambda t: t.mean(), lambda t: t.mean(dim=(1, 2))]
    tol = 2e-2 if dtype == "float16" else 1e-5
    for i, case in enumerate(cases):
        want, got = case(x), case(g)
        assert got.is_cuda and got.dtype == want.dtype and got.shape == want.shape, i
        np.testing.assert_allclose(_np(got).astype(np.float64), _np(want).astype(np.float64),
                                   rtol=tol, atol=tol, err_msg=str(i))


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "bool"])
def test_split_reductions_match_cpu(dtype):
    """Note [Split CUDA reductions]: long contiguous ranges (several blocks per output) and a leading
    dim over contiguous outputs (column tiles over row chunks); ties (small integers) so that
    argmax / argmin must keep the first index across blocks."""
    rng = np.random.default_rng(9)
    ints = rng.integers(0, 4, (700, 90))
    tie = flow.tensor(ints.astype("float32")).to(getattr(flow, dtype)) if dtype != "bool" else flow.tensor(ints > 1)
    long1 = _host(dtype, (50_000,), seed=10)
    rows = _host(dtype, (3, 20_000), seed=11)
    cases = [(long1, lambda t: t.sum()), (long1, lambda t: t.amax()), (long1, lambda t: t.any()),
             (rows, lambda t: t.sum(dim=1)), (rows, lambda t: t.amin(dim=1, keepdim=True)),
             (tie, lambda t: t.sum(dim=0)), (tie, lambda t: t.amax(dim=0)), (tie, lambda t: t.all(dim=0)),
             (tie, lambda t: t.argmax(dim=0)), (tie, lambda t: t.argmin(dim=0)), (tie, lambda t: t.argmax()),
             (tie.reshape(-1), lambda t: t.argmin()), (tie.t(), lambda t: t.sum(dim=1)),
             (long1.reshape(10, 2, 50, 50), lambda t: t.amax(dim=(0, 2, 3))),  # several reduced dims
             (long1.reshape(10, 2, 50, 50), lambda t: t.argmax(dim=1))]
    if dtype in ("float32", "float64", "float16"):
        cases += [(long1, lambda t: t.mean()), (tie, lambda t: t.mean(dim=0)),
                  (long1.reshape(10, 2, 50, 50), lambda t: t.mean(dim=(0, 2, 3)))]
    tol = 2e-2 if dtype == "float16" else 1e-5
    for i, (x, case) in enumerate(cases):
        want, got = case(x), case(x.cuda())
        assert got.is_cuda and got.dtype == want.dtype and got.shape == want.shape, i
        np.testing.assert_allclose(_np(got).astype(np.float64), _np(want).astype(np.float64),
                                   rtol=tol, atol=tol * (100 if dtype == "float16" else 1), err_msg=str(i))


@cuda
def test_argmax_ties_and_nan_follow_the_cpu():
    x = flow.tensor([[1.0, 3.0, 3.0, 0.0] * 100, [2.0, float("nan"), 5.0, float("nan")] * 100])
    g = x.cuda()
    np.testing.assert_array_equal(g.argmax(dim=1).cpu().numpy(), x.argmax(dim=1).numpy())
    np.testing.assert_array_equal(g.amax(dim=1).cpu().numpy(), x.amax(dim=1).numpy())


# ---------------------------------------------------------------------------
# matmul on cuBLAS


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_matmul_family(dtype):
    dt = getattr(flow, dtype)
    tol = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-4, "float64": 1e-10}[dtype]
    rng = np.random.default_rng(7)
    a = flow.tensor(rng.standard_normal((5, 7, 9)).astype(np.float32)).to(dt)
    b = flow.tensor(rng.standard_normal((9, 4)).astype(np.float32)).to(dt)
    c = flow.tensor(rng.standard_normal((5, 9, 3)).astype(np.float32)).to(dt)
    cases = [
        lambda m: flow.mm(m(a[0]), m(b)),
        lambda m: flow.mm(m(a[0]).t().contiguous().t(), m(b)),   # column-major operand
        lambda m: flow.mm(m(a[1, :, ::2]), m(b[::2])),            # needs a copy
        lambda m: flow.bmm(m(a), m(c)),
        lambda m: flow.bmm(m(a).transpose(1, 2).contiguous().transpose(1, 2), m(c)),
        lambda m: flow.matmul(m(a), m(b)),                        # folded batch
        lambda m: flow.matmul(m(a[:, :1]), m(c)),                 # broadcast batch
        lambda m: flow.matmul(m(b[:, 0]), m(b)),                  # vector @ matrix
        lambda m: flow.matmul(m(a[0]), m(b[:, 1])),               # matrix @ vector (gemv)
        lambda m: flow.mm(m(a[0, :, :0]), m(b[:0])),              # k == 0: zeros
    ]
    for i, case in enumerate(cases):
        want = case(lambda t: t.double())
        got = case(lambda t: t.cuda())
        assert got.is_cuda and got.dtype == dt, i
        np.testing.assert_allclose(_np(got).astype(np.float64), want.numpy(), rtol=tol, atol=tol, err_msg=str(i))


@cuda
def test_matmul_int_falls_back_and_tf32_switch():
    a = flow.arange(4, dtype=flow.int64).reshape(2, 2).cuda()
    flow._C._cuda_forget_fallback_warnings()
    with pytest.warns(UserWarning, match="mm|matmul"):  # cuBLAS has no integer GEMM: host fallback
        got = flow.mm(a, a)
    assert got.is_cuda and got.dtype == flow.int64
    np.testing.assert_array_equal(got.cpu().numpy(), [[2, 3], [6, 11]])
    x = flow.randn(64, 64).cuda()
    flow.backends.cuda.matmul.allow_tf32 = True
    try:
        y = flow.mm(x, x)
    finally:
        flow.backends.cuda.matmul.allow_tf32 = False
    np.testing.assert_allclose(y.cpu().numpy(), (x.cpu() @ x.cpu()).numpy(), rtol=2e-2, atol=2e-2)


# ---------------------------------------------------------------------------
# autograd across devices


@cuda
def test_backward_on_device_and_through_to():
    w = flow.randn(4, 3, requires_grad=True)
    x = flow.randn(5, 4)
    # through .to(): the gradient comes back to the host leaf
    b = flow.randn(3).cuda().requires_grad_()  # a device leaf, broadcast: its gradient is a sum
    loss = (flow.tanh(x.cuda() @ w.to("cuda") + b) * 2).sum()
    assert loss.is_cuda
    loss.backward()
    want = torch.from_numpy(w.detach().numpy()).requires_grad_()
    tb = torch.from_numpy(b.detach().cpu().numpy()).requires_grad_()
    (torch.tanh(torch.from_numpy(x.numpy()) @ want + tb) * 2).sum().backward()
    assert not w.grad.is_cuda and b.grad.is_cuda
    np.testing.assert_allclose(w.grad.numpy(), want.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b.grad.cpu().numpy(), tb.grad.numpy(), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# allocator and runtime


@cuda
def test_allocator_reuses_blocks_and_counts():
    flow.cuda.synchronize()
    flow.cuda.empty_cache()
    base = flow.cuda.memory_allocated()
    x = flow.empty(1 << 20, device="cuda")  # 4 MiB
    assert flow.cuda.memory_allocated() - base == 4 << 20
    reserved = flow.cuda.memory_reserved()
    del x
    assert flow.cuda.memory_allocated() == base
    assert flow.cuda.memory_reserved() == reserved  # cached, not returned
    hits = flow.cuda.memory_stats()["cache_hits"]
    y = flow.empty(1 << 20, device="cuda")
    assert flow.cuda.memory_stats()["cache_hits"] == hits + 1
    assert flow.cuda.max_memory_allocated() >= base + (4 << 20)
    del y
    flow.cuda.empty_cache()
    assert flow.cuda.memory_reserved() < reserved


@cuda
def test_out_of_memory_is_a_runtime_error_naming_the_size():
    with pytest.raises(RuntimeError, match=r"CUDA out of memory. Tried to allocate 1024.00 GiB"):
        flow.empty(1 << 38, dtype=flow.float32, device="cuda")
    flow.ones(10, device="cuda")  # the device still works


@cuda
def test_device_queries():
    assert flow.cuda.device_count() >= 1
    assert flow.cuda.current_device() == 0
    name = flow.cuda.get_device_name()
    assert isinstance(name, str) and name
    assert flow.cuda.get_device_capability()[0] >= 7
    free, total = flow.cuda.mem_get_info()
    assert 0 < free <= total
    flow.cuda.synchronize()


@cuda
def test_cuda_seeding_and_rng_state():
    flow.cuda.manual_seed(3)
    assert flow.cuda.initial_seed() == 3
    state = flow.cuda.get_rng_state()
    assert state.dtype == flow.uint8 and not state.is_cuda
    flow.cuda.manual_seed_all(11)
    assert flow.cuda.initial_seed() == 11
    flow.cuda.set_rng_state(state)
    assert flow.cuda.initial_seed() == 3
    flow.manual_seed(5)  # every device's default generator
    assert flow.cuda.initial_seed() == 5 and flow.initial_seed() == 5
    g = flow.Generator(device="cuda")
    assert g.device.type == "cuda"


# ---------------------------------------------------------------------------
# errors: clear Python exceptions, never a crash


@cuda
def test_mixed_devices_name_both():
    with pytest.raises(RuntimeError, match="cuda:0 and cpu|cpu and cuda:0"):
        flow.ones(3, device="cuda") + flow.ones(3)
    with pytest.raises(RuntimeError, match="cuda:0 and cpu|cpu and cuda:0"):
        flow.mm(flow.ones(2, 2, device="cuda"), flow.ones(2, 2))


@cuda
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16", "complex64", "complex128"])
def test_shape_ops_move_any_dtype_on_device(dtype):
    x = flow.arange(24).reshape(2, 3, 4).to(getattr(flow, dtype))
    g = x.cuda()
    for f in (lambda t: t.flip(1), lambda t: t.transpose(0, 2).contiguous(), lambda t: flow.cat([t, t], 1),
              lambda t: flow.roll(t, 1, 2), lambda t: t[:, 1:].clone(), lambda t: flow.stack([t, t])):
        want, got = f(x), f(g)
        assert got.is_cuda and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


# Note [Complex on CUDA]: complex64 / complex128 pointwise ops and casts run in device kernels.

COMPLEX_UNARY = [flow.exp, flow.log, flow.sqrt, flow.sin, flow.cos, flow.tanh, flow.sigmoid, flow.reciprocal,
                 flow.abs, flow.neg, flow.sgn, flow.square, flow.isnan, flow.isinf, flow.isfinite, flow.angle,
                 flow.conj_physical, flow.isreal]
COMPLEX_BINARY = [flow.add, flow.sub, flow.mul, flow.div, flow.pow, flow.eq, flow.ne]


@cuda
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_pointwise_kernels(dtype, cuda_kernels_only):
    rng = np.random.default_rng(3)
    cplx = lambda *shape: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)  # noqa: E731
    z, w = cplx(4, 5), cplx(4, 5)
    w[1, 1] = 0
    dt = getattr(flow, dtype)
    zc, wc = flow.tensor(z, dtype=dt), flow.tensor(w, dtype=dt)
    zg, wg = zc.cuda(), wc.cuda()
    tol = 1e-5 if dtype == "complex64" else 1e-12

    def check(got, want, what):
        assert got.is_cuda and got.dtype == want.dtype and got.shape == want.shape, what
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol, equal_nan=True, err_msg=what)

    for f in COMPLEX_UNARY:
        check(f(zg), f(zc), f.__name__)
    for f in COMPLEX_BINARY:
        check(f(zg, wg), f(zc, wc), f.__name__)
        check(f(zg, wg[:, 1:2]), f(zc, wc[:, 1:2]), f.__name__ + " broadcast")
        check(f(zg.t(), wg.t()), f(zc.t(), wc.t()), f.__name__ + " strided")
    check(zg * (1.5 - 2j), zc * (1.5 - 2j), "python complex scalar")
    check(zg + 2, zc + 2, "python int scalar")
    check(zg * flow.tensor(0.5 + 1j), zc * flow.tensor(0.5 + 1j), "0-d CPU complex128 tensor")
    x = flow.tensor(rng.standard_normal((4, 5)).astype("float32"))
    check(x.cuda() + wg, x + wc, "real + complex promotes on the device")
    g = zg.clone()
    g.mul_(wg)
    check(g, zc * wc, "in-place")
    # non-finite parts, where libcu++ and libstdc++ must agree (the transcendental functions' C99
    # special cases are left to the generic sweep)
    sp = flow.tensor(np.array([np.nan + 1j, np.inf - 2j, 1 - 1j * np.inf, 0j]), dtype=dt)
    for f in (flow.isnan, flow.isinf, flow.isfinite, flow.abs, flow.neg, flow.isreal):
        check(f(sp.cuda()), f(sp), f.__name__ + " of non-finite values")
    # a zero base: 0, inf + nan i or nan + nan i by the exponent's signs (glibc's cpow on the CPU)
    expo = flow.tensor([0.5 + 1j, 2j, -1.5 + 0.5j, 0j, 1j, -1 + 0j, 2 + 0j], dtype=dt)
    base = flow.zeros(7, dtype=dt) + flow.tensor([0, 1 + 1j, 0, 0, 0, 0, 0], dtype=dt)
    got, want = flow.pow(base.cuda(), expo.cuda()), flow.pow(base, expo)
    check(got, want, "pow of a zero base")
    g, w = got.cpu().numpy(), want.numpy()  # numpy's comparison takes inf + nan i for nan + nan i
    assert (np.isinf(g.real) == np.isinf(w.real)).all() and (np.isnan(g.real) == np.isnan(w.real)).all(), (g, w)


@cuda
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_matmul_and_reductions(dtype, cuda_kernels_only):
    """cuBLAS's complex GEMM (row-major through the transposed product, complex alpha / beta) and
    the complex sum / mean / prod reducers of kernels/reducers.h in the CUDA reduce kernel."""
    rng = np.random.default_rng(5)
    cplx = lambda *shape: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)  # noqa: E731
    dt = getattr(flow, dtype)
    a, b, c = (flow.tensor(cplx(*s), dtype=dt) for s in [(5, 7), (7, 3), (5, 3)])
    tol = 1e-4 if dtype == "complex64" else 1e-10

    def check(got, want, what):
        assert got.is_cuda and got.dtype == want.dtype and got.shape == want.shape, what
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol, err_msg=what)

    check(flow.mm(a.cuda(), b.cuda()), flow.mm(a, b), "mm")
    check(flow.mm(a.cuda().t().contiguous().t(), b.cuda()), flow.mm(a, b), "mm of a transposed operand")
    check(flow.addmm(c.cuda(), a.cuda(), b.cuda(), beta=0.5, alpha=2.0), flow.addmm(c, a, b, beta=0.5, alpha=2.0),
          "addmm")
    x, y = flow.tensor(cplx(2, 4, 6), dtype=dt), flow.tensor(cplx(2, 6, 3), dtype=dt)
    check(flow.bmm(x.cuda(), y.cuda()), flow.bmm(x, y), "bmm")
    z = flow.tensor(cplx(3, 40), dtype=dt) * 0.3
    for name, f in [("sum", lambda t: t.sum()), ("sum(1)", lambda t: t.sum(1)), ("mean(0)", lambda t: t.mean(0)),
                    ("prod(1)", lambda t: (t[:, :6] / 0.3).prod(1)), ("sum(t)", lambda t: t.t().sum(1, keepdim=True))]:
        check(f(z.cuda()), f(z), name)


@cuda
def test_complex_casts_on_device(cuda_kernels_only):
    rng = np.random.default_rng(4)
    z = flow.tensor(rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)), dtype=flow.complex128)
    z[0, 0] = 0
    g = z.cuda()
    for dt in (flow.complex64, flow.float32, flow.float64, flow.float16, flow.int32, flow.bool):
        want, got = z.to(dt), g.to(dt)
        assert got.is_cuda and got.dtype == dt
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-3 if dt == flow.float16 else 1e-6)
    x = _host("float32", (3, 4))
    for dt in (flow.complex64, flow.complex128):
        np.testing.assert_allclose(x.cuda().to(dt).cpu().numpy(), x.to(dt).numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.cuda().t().to(dt).cpu().numpy(), x.t().to(dt).numpy(), rtol=1e-6)


# Note [Host fallback]: an op without a CUDA kernel runs on host copies of its inputs, warns once
# per op, and its results (and gradients) are on the device.


@cuda
def test_host_fallback_matches_cpu_with_grad_and_warns_once():
    """linalg_lu_factor has no CUDA kernel yet (getrf through cuSOLVER is to come): it runs on
    host copies, its results and its gradient reach the CUDA tensors, and the warning names it
    once."""
    flow._C._cuda_forget_fallback_warnings()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 4))
    w = flow.tensor(rng.standard_normal((2, 4, 4)))
    dev = flow.tensor(a).cuda().requires_grad_()
    with pytest.warns(UserWarning, match=r"linalg_lu_factor\(\) has no CUDA kernel"):
        LU, piv = flow.linalg.lu_factor(dev)
    assert LU.is_cuda and piv.is_cuda
    ref = flow.tensor(a).requires_grad_()
    want_lu, want_piv = flow.linalg.lu_factor(ref)
    np.testing.assert_allclose(LU.detach().cpu().numpy(), want_lu.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(piv.cpu().numpy(), want_piv.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the backward's own ops may fall back too
        (LU * w.cuda()).sum().backward()
    (want_lu * w).sum().backward()
    assert dev.grad.is_cuda
    np.testing.assert_allclose(dev.grad.cpu().numpy(), ref.grad.numpy(), rtol=1e-10, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second call does not warn again
        flow.linalg.lu_factor(dev.detach())


@cuda
def test_host_fallback_tuple_outputs_and_inplace():
    rng = np.random.default_rng(1)
    q, k, v = (flow.tensor(rng.standard_normal((2, 4, 3)).astype("float32")) for _ in range(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no CUDA kernel yet (CUDA's attention is the composition)
        out, lse = flow._C.fused_attention(q.cuda(), k.cuda(), v.cuda(), None, 0.5, False)  # two outputs back
    want_o, want_l = flow._C.fused_attention(q, k, v, None, 0.5, False)
    assert out.is_cuda and lse.is_cuda and lse.dtype == flow.float32
    np.testing.assert_allclose(out.cpu().numpy(), want_o.numpy(), rtol=1e-6)
    np.testing.assert_allclose(lse.cpu().numpy(), want_l.numpy(), rtol=1e-6)
    # an in-place case without a CUDA kernel (index_add_ into complex: no complex atomics), on a
    # CUDA view, repeated indices included
    cplx = lambda *shape: (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype("complex64")  # noqa: E731
    z, src, idx = flow.tensor(cplx(3, 4)), flow.tensor(cplx(3, 2)), flow.tensor([2, 0, 2])
    g = z.cuda()
    view = g[:, 1:3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = view.index_add_(0, idx.cuda(), src.cuda())
    assert out is view or out.data_ptr() == view.data_ptr()
    want = z.clone()
    want[:, 1:3].index_add_(0, idx, src)
    np.testing.assert_allclose(g.cpu().numpy(), want.numpy(), rtol=1e-6)
    # the write reaches the CUDA tensor's version counter: autograd sees it
    a = z.cuda().requires_grad_()
    y = a * 1
    prod = y * y  # saves y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y.index_add_(0, idx.cuda(), flow.tensor(cplx(3, 4)).cuda())
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        prod.abs().sum().backward()


@cuda
def test_host_fallback_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("ONEFLOW_CUDA_HOST_FALLBACK", "0")
    x = flow.ones(2, 4, 3, device="cuda")
    with pytest.raises(NotImplementedError, match="cuda"):
        flow._C.fused_attention(x, x, x, None, 1.0, False)  # no CUDA kernel yet: a clear error, not a crash


@cuda
def test_host_fallback_keeps_real_errors():
    x = flow.ones(3, 4, device="cuda")  # not square: the CPU kernel's error, not a fallback notice
    with pytest.raises(RuntimeError, match="square"):
        flow.linalg.inv(x)


@cuda
def test_invalid_device_index():
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        flow.ones(2, device=f"cuda:{flow.cuda.device_count()}")


def test_cpu_only_build_refuses_cuda_clearly():
    if flow.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    assert flow.cuda.device_count() == 0
    with pytest.raises(RuntimeError, match="not available|CUDA"):
        flow.ones(2, device="cuda")
    with pytest.raises(RuntimeError):
        flow.ones(2).cuda()


# ---------------------------------------------------------------------------
# pinned memory and asynchronous uploads


@cuda
def test_pin_memory_and_non_blocking_uploads():
    x = flow.arange(1 << 20, dtype=flow.float32)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.pin_memory() is p
    np.testing.assert_array_equal(p.numpy(), x.numpy())
    outs = [p.to("cuda", non_blocking=True), p.cuda(non_blocking=True), (p[::2]).cuda(non_blocking=True)]
    flow.cuda.synchronize()
    for o, want in zip(outs, (x, x, x[::2])):
        assert o.is_cuda
        np.testing.assert_array_equal(o.cpu().numpy(), want.numpy())
    assert flow.tensor([1.0, 2.0], pin_memory=True).is_pinned()
    # A freed pinned block is not handed out again before the uploads from it have run.
    for i in range(20):
        src = flow.full((1 << 18,), float(i)).pin_memory()
        dst = src.to("cuda", non_blocking=True)
        del src
        assert dst[-1].item() == float(i)
    loader = flow.utils.data.DataLoader(flow.utils.data.TensorDataset(flow.arange(8.0)), batch_size=4, pin_memory=True)
    assert all(b[0].is_pinned() for b in loader)
    with pytest.raises(RuntimeError, match="pin"):
        flow.ones(2, device="cuda").pin_memory()


def test_pin_memory_without_a_gpu_is_a_clear_error():
    if flow.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    assert not flow.ones(2).is_pinned()
    with pytest.raises(RuntimeError, match="pin_memory"):
        flow.ones(2).pin_memory()
    loader = flow.utils.data.DataLoader(flow.utils.data.TensorDataset(flow.arange(4.0)), batch_size=2, pin_memory=True)
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0], [2.0, 3.0]]  # nothing to pin for: plain batches
