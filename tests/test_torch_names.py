"""PyTorch names that PyTorch-style scripts call and OneFlow's spec does not list, against torch:
aliases (absolute, arctan2, concatenate, nn.functional.sigmoid / tanh), Tensor properties
(is_cpu, itemsize, nbytes, get_device, is_signed), in-place comparisons and logical ops
(eq_ ... logical_xor_, with PyTorch's cast into self's dtype), and rms_norm / nn.RMSNorm."""

import numpy as np
import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow's own names")
RNG = np.random.default_rng(0)


def test_aliases_match_their_ops():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((3, 4)).astype(np.float32)
    fa, fb, ta, tb = flow.tensor(a), flow.tensor(b), torch.tensor(a), torch.tensor(b)
    pairs = [
        (flow.absolute(fa), torch.absolute(ta)), (fa.absolute(), ta.absolute()),
        (flow.arctan2(fa, fb), torch.arctan2(ta, tb)), (fa.arctan2(fb), ta.arctan2(tb)),
        (flow.concatenate([fa, fb], 1), torch.concatenate([ta, tb], 1)),
        (flow.nn.functional.sigmoid(fa), torch.nn.functional.sigmoid(ta)),
        (flow.nn.functional.tanh(fa), torch.nn.functional.tanh(ta)),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    x, y = fa.clone(), ta.clone()
    x.absolute_(), y.absolute_()
    np.testing.assert_array_equal(x.numpy(), y.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "int8", "bool"])
def test_tensor_properties(dtype):
    t = torch.zeros(3, 5, dtype=getattr(torch, dtype))
    f = flow.zeros(3, 5, dtype=getattr(flow, dtype))
    assert (f.is_cpu, f.itemsize, f.nbytes, f.get_device(), f.is_signed()) == \
           (t.is_cpu, t.itemsize, t.nbytes, t.get_device(), t.is_signed())
    assert f[:, 1:3].nbytes == t[:, 1:3].nbytes  # a view: its own elements


_INPLACE = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_", "less_equal_",
            "not_equal_", "logical_and_", "logical_or_", "logical_xor_"]


@pytest.mark.parametrize("name", _INPLACE)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_inplace_comparisons(name, dtype):
    a = RNG.integers(0, 3, (4, 5))
    b = RNG.integers(0, 3, (5,))  # broadcast over self
    t, f = torch.tensor(a).to(getattr(torch, dtype)), flow.tensor(a).to(getattr(flow, dtype))
    tb, fb = torch.tensor(b).to(torch.float32), flow.tensor(b).to(flow.float32)
    rt, rf = getattr(t, name)(tb), getattr(f, name)(fb)
    assert rf is f and str(f.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(f.numpy(), t.numpy())
    if name.startswith("logical"):
        return  # they take tensors only (torch: TypeError for a number)
    # a number operand, and a view of a larger tensor written in place
    t2, f2 = torch.tensor(a).to(getattr(torch, dtype)), flow.tensor(a).to(getattr(flow, dtype))
    getattr(t2[1:3], name)(1), getattr(f2[1:3], name)(1)
    np.testing.assert_array_equal(f2.numpy(), t2.numpy())


def test_logical_not_inplace_and_errors():
    a = RNG.integers(0, 3, (6,)).astype(np.float32)
    t, f = torch.tensor(a), flow.tensor(a)
    t.logical_not_(), f.logical_not_()
    np.testing.assert_array_equal(f.numpy(), t.numpy())
    with pytest.raises(RuntimeError):  # the result would not fit self's shape
        flow.zeros(3).eq_(flow.zeros(2, 3))
    leaf = flow.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError):  # an in-place write into a leaf that requires grad
        leaf.gt_(0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape,norm", [((3, 4, 5), (4, 5)), ((6, 8), (8,)), ((2, 0, 3), (3,)), ((5,), 5)])
@pytest.mark.parametrize("weighted,eps", [(True, None), (False, None), (True, 1e-3)])
def test_rms_norm(dtype, shape, norm, weighted, eps):
    nshape = (norm,) if isinstance(norm, int) else norm
    a = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal(nshape).astype(np.float32)
    t = torch.tensor(a).to(getattr(torch, dtype)).requires_grad_()
    f = flow.tensor(a).to(getattr(flow, dtype)).requires_grad_()
    tw = torch.tensor(w).to(getattr(torch, dtype)).requires_grad_() if weighted else None
    fw = flow.tensor(w).to(getattr(flow, dtype)).requires_grad_() if weighted else None
    yt = torch.nn.functional.rms_norm(t, nshape, tw, eps)  # torch takes no bare int here
    yf = flow.nn.functional.rms_norm(f, norm, fw, eps)
    assert str(yf.dtype).split(".")[-1] == str(yt.dtype).split(".")[-1]
    tol = {"float16": 2e-3, "bfloat16": 1.6e-2}.get(dtype, 1e-5)
    np.testing.assert_allclose(yf.float().detach().numpy(), yt.float().detach().numpy(), rtol=tol, atol=tol)
    g = RNG.standard_normal(shape).astype(np.float32)
    yt.backward(torch.tensor(g).to(yt.dtype)), yf.backward(flow.tensor(g).to(yf.dtype))
    gtol = 10 * tol
    np.testing.assert_allclose(f.grad.float().numpy(), t.grad.float().numpy(), rtol=gtol, atol=gtol)
    if weighted:
        np.testing.assert_allclose(fw.grad.float().numpy(), tw.grad.float().numpy(), rtol=gtol, atol=gtol)


def test_rms_norm_module_and_errors():
    m, tm = flow.nn.RMSNorm([4, 5], eps=1e-6), torch.nn.RMSNorm([4, 5], eps=1e-6)
    assert repr(m) == repr(tm)
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.ones((4, 5), np.float32))
    assert flow.nn.RMSNorm(5, elementwise_affine=False).weight is None
    a = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(m(flow.tensor(a)).detach().numpy(), tm(torch.tensor(a)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(RuntimeError, match="rms_norm"):
        flow.nn.functional.rms_norm(flow.ones(2, 3), (4,))
    with pytest.raises(RuntimeError, match="rms_norm"):
        flow.nn.functional.rms_norm(flow.ones(2, 3), (3,), flow.ones(2))
    with pytest.raises(RuntimeError, match="rms_norm"):
        flow.nn.functional.rms_norm(flow.ones(2, 3, dtype=flow.int64), (3,))


# ---------------------------------------------------------------------------
# compositions in python/oneflow/_torch_compat_ops.py


def _both(fn_name_or_callable, *arrays, **kwargs):
    """(flow result, torch result) of the same call on tensors made from numpy arrays."""
    f_args = [flow.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
    t_args = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
    if isinstance(fn_name_or_callable, str):
        return getattr(flow, fn_name_or_callable)(*f_args, **kwargs), getattr(torch, fn_name_or_callable)(*t_args, **kwargs)
    return fn_name_or_callable(flow, *f_args, **kwargs), fn_name_or_callable(torch, *t_args, **kwargs)


def _close(got, want, rtol=1e-5, atol=1e-6):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, rtol, atol)
        return
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True)


def test_isin():
    e = RNG.integers(0, 10, (4, 5))
    t = RNG.integers(0, 10, (7,))
    for kw in ({}, {"invert": True}, {"assume_unique": True}):
        _close(*_both("isin", e, t, **kw))
    _close(*_both("isin", e.astype(np.float32), t))  # promoted comparison
    _close(*_both("isin", e, np.array([], dtype=np.int64)))
    _close(*_both("isin", e, 3))
    f = np.array([1.0, np.nan, 2.5], np.float32)
    _close(*_both("isin", f, f))  # NaN is never found


@pytest.mark.parametrize("row,col,offset", [(3, 3, 0), (4, 6, -1), (5, 2, 1), (0, 3, 0), (3, 4, 5), (4, 3, -5)])
def test_triangle_indices(row, col, offset):
    for name in ("tril_indices", "triu_indices"):
        _close(getattr(flow, name)(row, col, offset), getattr(torch, name)(row, col, offset))


def test_logspace_cartesian_block_diag_vander():
    _close(flow.logspace(-2, 3, 7), torch.logspace(-2, 3, 7), rtol=1e-6)
    _close(flow.logspace(0, 4, 5, base=2.0, dtype=flow.float64), torch.logspace(0, 4, 5, base=2.0, dtype=torch.float64))
    a, b, c = np.arange(3), np.arange(2) + 10, np.arange(4) - 3
    _close(*_both("cartesian_prod", a, b, c))
    _close(*_both("cartesian_prod", a))
    m = RNG.standard_normal((2, 3)).astype(np.float32)
    _close(*_both("block_diag", m, np.array(5.0, np.float32), np.arange(3).astype(np.int64), np.ones((2, 2), np.float64)))
    x = np.array([1.0, 2.0, 3.0, 5.0], np.float32)
    for kw in ({}, {"N": 3}, {"increasing": True}, {"N": 0}):
        _close(*_both("vander", x, **kw))
    _close(*_both("vander", np.array([1, 2, 3])))


@pytest.mark.parametrize("correction", [1, 0, 2])
def test_cov_corrcoef(correction):
    x = RNG.standard_normal((3, 8))
    fw = RNG.integers(0, 4, (8,))
    aw = RNG.uniform(0.1, 2.0, (8,))
    _close(*_both(lambda L, a, **k: L.cov(a, correction=correction, **k), x))
    _close(*_both(lambda L, a, f, w: L.cov(a, correction=correction, fweights=f, aweights=w), x, fw, aw))
    _close(*_both(lambda L, a, f: L.cov(a, correction=correction, fweights=f), x, fw))
    _close(*_both(lambda L, a, w: L.cov(a, correction=correction, aweights=w), x, aw))
    _close(*_both("cov", x[0]))
    _close(*_both("corrcoef", x))
    _close(*_both("corrcoef", x[0]))
    t = torch.tensor(x, requires_grad=True)
    f = flow.tensor(x, requires_grad=True)
    torch.cov(t, correction=correction).sum().backward(), flow.cov(f, correction=correction).sum().backward()
    _close(f.grad, t.grad)


@pytest.mark.parametrize("q", [0.3, 0.0, 1.0, [0.1, 0.5, 0.9]])
@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (1, False), (0, True), (-1, True)])
def test_quantile(q, interp, dim, keepdim):
    a = RNG.standard_normal((4, 7))
    a[1, 2] = np.nan
    b = a.copy()
    b[3, :] = np.nan
    for arr in (a.astype(np.float32), b):
        fq = flow.tensor(q, dtype=flow.float64 if arr.dtype == np.float64 else flow.float32) if isinstance(q, list) else q
        tq = torch.tensor(q, dtype=torch.float64 if arr.dtype == np.float64 else torch.float32) if isinstance(q, list) else q
        for name in ("quantile", "nanquantile"):
            got = getattr(flow, name)(flow.tensor(arr), fq, dim, keepdim, interpolation=interp)
            want = getattr(torch, name)(torch.tensor(arr), tq, dim, keepdim, interpolation=interp)
            _close(got, want)


def test_quantile_gradient_and_errors():
    a = RNG.standard_normal((3, 6))
    t, f = torch.tensor(a, requires_grad=True), flow.tensor(a, requires_grad=True)
    torch.quantile(t, torch.tensor([0.25, 0.8], dtype=torch.float64), dim=1).sum().backward()
    flow.quantile(f, flow.tensor([0.25, 0.8], dtype=flow.float64), dim=1).sum().backward()
    _close(f.grad, t.grad)
    x = flow.ones(3)
    for call in (lambda: flow.quantile(x, 1.5), lambda: flow.quantile(flow.ones(3, dtype=flow.int64), 0.5),
                 lambda: flow.quantile(flow.ones(0), 0.5), lambda: flow.quantile(x, flow.tensor([[0.5]])),
                 lambda: flow.quantile(x, flow.tensor([0.5], dtype=flow.float64))):
        with pytest.raises(RuntimeError, match="quantile"):
            call()
    with pytest.raises(ValueError):
        flow.quantile(x, 0.5, interpolation="cubic")


def test_dist_addr_renorm_trapezoid_ldexp_unravel():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((4,)).astype(np.float32)
    for p in (2, 1, 3.5, 0, float("inf")):
        _close(*_both("dist", a, b, p=p), rtol=1e-5)
    v1, v2 = RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
    _close(*_both("addr", a, v1, v2))
    _close(*_both("addr", a, v1, v2, beta=0.5, alpha=2.0))
    _close(*_both("addr", np.full((3, 4), np.nan, np.float32), v1, v2, beta=0))
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 0.5), (3, -1, 100.0)):
        _close(*_both("renorm", a, p, dim, maxnorm))
    y = RNG.standard_normal((3, 5)).astype(np.float32)
    x = np.sort(RNG.standard_normal(5)).astype(np.float32)
    _close(*_both("trapezoid", y))
    _close(*_both("trapezoid", y, x))
    _close(*_both("trapezoid", y, dx=0.5, dim=0))
    _close(*_both("trapz", y, x))
    _close(*_both("cumulative_trapezoid", y))
    _close(*_both("cumulative_trapezoid", y, x))
    _close(*_both("ldexp", a, np.array([1, -2, 3, 0])))
    idx = np.array([[0, 5, 11], [7, 3, 2]])
    _close(*_both("unravel_index", idx, (3, 4)))
    with pytest.raises(ValueError):
        flow.unravel_index(flow.tensor([12]), (3, 4))


def test_fill_diagonal_and_sum_to_size():
    for shape, wrap in (((3, 3), False), ((4, 2), False), ((7, 3), True), ((7, 3), False), ((2, 5), True),
                        ((3, 3, 3), False)):
        t, f = torch.zeros(shape), flow.zeros(*shape)
        t.fill_diagonal_(2.5, wrap=wrap), f.fill_diagonal_(2.5, wrap=wrap)
        _close(f, t)
    with pytest.raises(RuntimeError):
        flow.zeros(2, 3, 4).fill_diagonal_(1)
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    for size in ((3, 4), (1, 4), (3, 1), (2, 1, 1), (1,), (2, 3, 4)):
        _close(flow.tensor(a).sum_to_size(*size), torch.tensor(a).sum_to_size(*size))
    _close(flow.tensor(a).sum_to_size((3, 1)), torch.tensor(a).sum_to_size((3, 1)))
    with pytest.raises(RuntimeError):
        flow.tensor(a).sum_to_size(5)


def test_functional_extras():
    F = flow.nn.functional
    x = RNG.standard_normal((2, 6, 3, 3)).astype(np.float32)
    _close(F.channel_shuffle(flow.tensor(x), 3), torch.nn.functional.channel_shuffle(torch.tensor(x), 3))
    _close(flow.nn.ChannelShuffle(2)(flow.tensor(x)), torch.nn.ChannelShuffle(2)(torch.tensor(x)))
    with pytest.raises(RuntimeError):
        F.channel_shuffle(flow.tensor(x), 4)
    r = RNG.standard_normal((5, 3)).astype(np.float32)
    for p in (2, 1, 0.5, float("inf")):
        _close(F.pdist(flow.tensor(r), p), torch.nn.functional.pdist(torch.tensor(r), p), rtol=1e-5)
    got = F.max_pool2d_with_indices(flow.tensor(x), 2)
    want = torch.nn.functional.max_pool2d_with_indices(torch.tensor(x), 2)
    _close(got, want)
    flow.manual_seed(0)
    logits = flow.tensor(RNG.standard_normal((4, 5)).astype(np.float32), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(4), rtol=1e-5)
    hard = F.gumbel_softmax(logits, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(-1) == 1).all()
    hard.sum().backward()  # straight-through: the soft sample's gradient reaches the logits
    assert logits.grad is not None and logits.grad.shape == logits.shape


# ---------------------------------------------------------------------------
# affine_grid / grid_sample (python/oneflow/nn/_functional_grid.py)

_GRID_CASES = [(k, mode, pad, align) for k in (2, 3) for mode in ("bilinear", "nearest", "bicubic")
               for pad in ("zeros", "border", "reflection") for align in (False, True)
               if not (mode == "bicubic" and k == 3)]


@pytest.mark.parametrize("k,mode,pad,align", _GRID_CASES)
def test_grid_sample_against_torch(k, mode, pad, align):
    shape = (2, 3, 5, 6) if k == 2 else (2, 2, 4, 5, 3)
    gshape = (2, 4, 7, 2) if k == 2 else (2, 3, 4, 2, 3)
    a = RNG.standard_normal(shape).astype(np.float32)
    g = RNG.uniform(-1.3, 1.3, gshape).astype(np.float32)  # points outside too
    g.reshape(-1)[:4] = [1.0, -1.0, 0.0, 1.0]  # exactly on the edges
    ti, tg = torch.tensor(a, requires_grad=True), torch.tensor(g, requires_grad=True)
    fi, fg = flow.tensor(a, requires_grad=True), flow.tensor(g, requires_grad=True)
    to = torch.nn.functional.grid_sample(ti, tg, mode, pad, align)
    fo = flow.nn.functional.grid_sample(fi, fg, mode, pad, align)
    _close(fo, to, rtol=1e-5, atol=1e-5)
    w = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    (to * torch.tensor(w)).sum().backward()
    (fo * flow.tensor(w)).sum().backward()
    _close(fi.grad, ti.grad, rtol=1e-5, atol=1e-5)
    if mode != "nearest":  # nearest has no grid gradient (PyTorch: zeros)
        _close(fg.grad, tg.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_against_torch(align):
    th = RNG.standard_normal((2, 2, 3)).astype(np.float32)
    for size in ((2, 1, 4, 5), (2, 3, 1, 3), (2, 1, 6, 1)):
        t = torch.tensor(th, requires_grad=True)
        f = flow.tensor(th, requires_grad=True)
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            want = torch.nn.functional.affine_grid(t, size, align)
        got = flow.nn.functional.affine_grid(f, size, align)
        _close(got, want)
        want.sum().backward(), got.sum().backward()
        _close(f.grad, t.grad)
    th3 = RNG.standard_normal((2, 3, 4)).astype(np.float64)
    _close(flow.nn.functional.affine_grid(flow.tensor(th3), (2, 1, 3, 4, 5), align),
           torch.nn.functional.affine_grid(torch.tensor(th3), (2, 1, 3, 4, 5), align))


def test_grid_errors():
    F = flow.nn.functional
    x, g = flow.ones(1, 1, 3, 3), flow.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError):
        F.grid_sample(x, g, mode="area")
    with pytest.raises(ValueError):
        F.grid_sample(x, g, padding_mode="circular")
    with pytest.raises(RuntimeError, match="grid_sampler"):
        F.grid_sample(x, flow.zeros(1, 2, 2, 3))
    with pytest.raises(RuntimeError, match="grid_sampler"):
        F.grid_sample(x, flow.zeros(2, 2, 2, 2))
    with pytest.raises(RuntimeError, match="bicubic"):
        F.grid_sample(flow.ones(1, 1, 2, 2, 2), flow.zeros(1, 1, 1, 1, 3), mode="bicubic")
    with pytest.raises(ValueError, match="affine"):
        F.affine_grid(flow.zeros(1, 3, 3), (1, 1, 2, 2))
    with pytest.raises(ValueError, match="floating"):
        F.affine_grid(flow.zeros(1, 2, 3, dtype=flow.int64), (1, 1, 2, 2))


def test_scatter_copies_with_gradients():
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    cases = [
        ("slice_scatter", RNG.standard_normal((4, 2)).astype(np.float32), dict(dim=1, start=1, end=5, step=2)),
        ("slice_scatter", RNG.standard_normal((2, 5)).astype(np.float32), dict(dim=0, start=2)),
        ("select_scatter", RNG.standard_normal((5,)).astype(np.float32), dict(dim=0, index=-1)),
        ("diagonal_scatter", RNG.standard_normal((4,)).astype(np.float32), dict(offset=1)),
        ("diagonal_scatter", RNG.standard_normal((3,)).astype(np.float32), dict(offset=-1)),
        ("diagonal_scatter", RNG.standard_normal((4,)).astype(np.float32), dict(offset=0, dim1=1, dim2=0)),
    ]
    for name, src, kw in cases:
        ti, ts = torch.tensor(a, requires_grad=True), torch.tensor(src, requires_grad=True)
        fi, fs = flow.tensor(a, requires_grad=True), flow.tensor(src, requires_grad=True)
        want, got = getattr(torch, name)(ti, ts, **kw), getattr(flow, name)(fi, fs, **kw)
        _close(got, want)
        w = RNG.standard_normal(a.shape).astype(np.float32)
        (want * torch.tensor(w)).sum().backward(), (got * flow.tensor(w)).sum().backward()
        _close(fi.grad, ti.grad), _close(fs.grad, ts.grad)
        _close(getattr(fi.detach(), name)(fs.detach(), **kw), want)  # the method form


def test_combinations_and_histogram():
    x = np.array([3, 1, 4, 1, 5])
    for r, rep in ((2, False), (3, False), (2, True), (0, False), (6, False), (1, True)):
        _close(*_both("combinations", x, r=r, with_replacement=rep))
    v = RNG.standard_normal(200).astype(np.float32)
    w = RNG.uniform(0, 2, 200).astype(np.float32)
    for kw in ({}, {"range": (-1.0, 1.5)}, {"density": True}, {"weight": None}):
        _close(*_both(lambda L, a, **k: L.histogram(a, 7, **k), v, **kw))
    _close(*_both(lambda L, a, b: L.histogram(a, 5, weight=b), v, w))
    _close(*_both(lambda L, a, e: L.histogram(a, e), v, np.array([-2.0, -0.5, 0.0, 0.25, 3.0], np.float32)))
    _close(*_both(lambda L, a: L.histogram(a, 3), np.ones(4, np.float32)))  # min == max: widened by 0.5
    got = flow.histogram(flow.tensor(v), 4)
    assert got.hist.shape == (4,) and got.bin_edges.shape == (5,)


def test_linalg_extras():
    mats = [RNG.standard_normal(s) for s in ((3, 10), (10, 2), (2, 8), (8, 4))]
    _close(*_both(lambda L, *m: L.linalg.multi_dot(list(m)), *mats))
    _close(*_both(lambda L, *m: L.linalg.multi_dot(list(m)), RNG.standard_normal(3), mats[0], mats[1],
                  RNG.standard_normal(2)))
    _close(*_both(lambda L, *m: L.chain_matmul(*m), *mats[:3]))
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((4,))
    _close(*_both(lambda L, a, b: L.linalg.vecdot(a, b), x, y))
    _close(*_both(lambda L, a, b: L.linalg.vecdot(a, b, dim=0), x, x))
    A = RNG.standard_normal((2, 4, 4))
    _close(*_both(lambda L, a: L.linalg.diagonal(a, offset=1), A))
    for p in (None, 2, -2, 1, -1, float("inf"), float("-inf"), "fro", "nuc"):
        _close(*_both(lambda L, a: L.linalg.cond(a, p), A), rtol=1e-6)
    B = RNG.standard_normal((2, 4, 3))
    T = A + 4 * np.eye(4)  # well conditioned triangles
    for upper, left, unit in ((True, True, False), (False, True, True), (True, False, False), (False, False, True)):
        rhs = B if left else B.transpose(0, 2, 1)
        _close(*_both(lambda L, a, b: L.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit),
                      T, rhs), rtol=1e-6, atol=1e-8)
    _close(*_both(lambda L, a: L.linalg.vander(a, N=4), np.array([1.0, 2.0, 0.5])))
    with pytest.raises(RuntimeError):
        flow.linalg.multi_dot([flow.ones(2, 3), flow.ones(2, 3)])


def test_lp_pool3d_and_triplet_with_distance():
    x = RNG.uniform(0.1, 2.0, (2, 3, 4, 5, 6)).astype(np.float32)
    for p, k, s, ceil in ((2, 2, None, False), (1.5, (2, 3, 2), (1, 2, 2), True), (3, 3, 2, False)):
        t, f = torch.tensor(x, requires_grad=True), flow.tensor(x, requires_grad=True)
        want = torch.nn.LPPool3d(p, k, s, ceil)(t)
        got = flow.nn.LPPool3d(p, k, s, ceil)(f)
        _close(got, want, rtol=1e-5)
        want.sum().backward(), got.sum().backward()
        _close(f.grad, t.grad, rtol=1e-4, atol=1e-5)
    _close(flow.nn.functional.lp_pool3d(flow.tensor(x), 2, 2), torch.nn.functional.lp_pool3d(torch.tensor(x), 2, 2))
    a, p_, n = (RNG.standard_normal((6, 4)).astype(np.float32) for _ in range(3))
    cos = (lambda L: lambda u, v: 1 - L.nn.functional.cosine_similarity(u, v))
    for kw in ({}, {"margin": 0.3, "swap": True}, {"reduction": "none"}, {"reduction": "sum", "distance": True}):
        kw = dict(kw)
        use_cos = kw.pop("distance", False)
        ta, tp, tn = (torch.tensor(v, requires_grad=True) for v in (a, p_, n))
        fa, fp, fn = (flow.tensor(v, requires_grad=True) for v in (a, p_, n))
        want = torch.nn.TripletMarginWithDistanceLoss(distance_function=cos(torch) if use_cos else None, **kw)(ta, tp, tn)
        got = flow.nn.TripletMarginWithDistanceLoss(distance_function=cos(flow) if use_cos else None, **kw)(fa, fp, fn)
        _close(got, want)
        want.sum().backward(), got.sum().backward()
        for g, w in ((fa, ta), (fp, tp), (fn, tn)):
            _close(g.grad, w.grad, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError):
        flow.nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(RuntimeError):
        flow.nn.functional.triplet_margin_with_distance_loss(flow.ones(2, 3), flow.ones(2, 3), flow.ones(3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("scale", [0.0, 0.01, 1.0, 8.0, 60.0])
def test_matrix_exp(dtype, scale):
    # The reference is torch in float64 (a float32 result here is computed in double and rounded
    # once; torch's own float32 computation is further off at large norms).
    a = (RNG.standard_normal((3, 4, 4)) * scale / 4).astype(dtype)
    t, f = torch.tensor(a.astype(np.float64), requires_grad=True), flow.tensor(a, requires_grad=True)
    want, got = torch.linalg.matrix_exp(t), flow.linalg.matrix_exp(f)
    tol = 2e-6 if dtype == "float32" else 1e-13
    scale_w = float(want.detach().abs().max())
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol * scale_w)
    assert got.dtype == getattr(flow, dtype)
    g = RNG.standard_normal(a.shape).astype(dtype)
    (want * torch.tensor(g.astype(np.float64))).sum().backward(), (got * flow.tensor(g)).sum().backward()
    np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=10 * tol, atol=10 * tol * float(t.grad.abs().max()))
    np.testing.assert_allclose(flow.matrix_exp(flow.tensor(a[0])).numpy(),
                               torch.matrix_exp(torch.tensor(a[0].astype(np.float64))).numpy(), rtol=tol,
                               atol=tol * scale_w)
    with pytest.raises(RuntimeError):
        flow.linalg.matrix_exp(flow.ones(2, 3))


def test_complex_vector_norms():
    a = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64)
    for kw in ({}, {"ord": 1}, {"ord": float("inf"), "dim": 1}, {"dim": (0, 1), "keepdim": True}, {"ord": 0.5}):
        f, t = flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        got, want = flow.linalg.vector_norm(f, **kw), torch.linalg.vector_norm(t, **kw)
        _close(got, want, rtol=1e-5)
        got.sum().backward(), want.sum().backward()
        _close(f.grad, t.grad, rtol=1e-5, atol=1e-6)
    _close(flow.tensor(a).norm(), torch.tensor(a).norm(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="complex"):
        flow.linalg.inv(flow.tensor(a[:, :3]))


def test_inplace_layout_methods():
    a = RNG.standard_normal((2, 1, 3)).astype(np.float32)
    cases = [("squeeze_", ()), ("squeeze_", (1,)), ("unsqueeze_", (0,)), ("unsqueeze_", (-1,)),
             ("transpose_", (0, 2)), ("swapaxes_", (0, 1)), ("swapdims_", (2, 1)),
             ("as_strided_", ((3, 2), (1, 3))), ("as_strided_", ((2,), (2,), 1))]
    for name, args in cases:
        t, f = torch.tensor(a), flow.tensor(a)
        rt, rf = getattr(t, name)(*args), getattr(f, name)(*args)
        assert rf is f and tuple(f.shape) == tuple(t.shape) and f.stride() == t.stride(), name
        np.testing.assert_array_equal(f.numpy(), t.numpy())
    m, tm = flow.tensor(a[:, 0]), torch.tensor(a[:, 0])
    m.t_(), tm.t_()
    np.testing.assert_array_equal(m.numpy(), tm.numpy())
    base = flow.zeros(2, 3)
    v = base[0]
    v.unsqueeze_(0)  # still a view: writes reach the base
    v[0, 1] = 5.0
    assert float(base[0, 1]) == 5.0
    leaf = flow.zeros(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="t_"):
        leaf.t_()
    with flow.no_grad():
        leaf.t_()
    assert tuple(leaf.shape) == (3, 2)


def test_resize_and_set():
    a = np.arange(6, dtype=np.float32)
    for size in ((2, 3), (4,), (3, 4), (0,), (), (2, 2, 2)):
        t, f = torch.tensor(a), flow.tensor(a)
        t.resize_(*size) if size else t.resize_(size)
        f.resize_(*size) if size else f.resize_(size)
        assert tuple(f.shape) == tuple(t.shape)
        keep = min(6, int(np.prod(size)))
        np.testing.assert_array_equal(f.numpy().reshape(-1)[:keep], t.numpy().reshape(-1)[:keep])
    f, t = flow.tensor(a), torch.tensor(a)
    f.resize_as_(flow.zeros(3, 2)), t.resize_as_(torch.zeros(3, 2))
    np.testing.assert_array_equal(f.numpy(), t.numpy())
    with pytest.raises(RuntimeError):
        flow.zeros(2).resize_(-1, 2)
    src = flow.tensor(a)
    x = flow.zeros(1)
    x.set_(src)
    x[0] = 9.0
    assert float(src[0]) == 9.0 and tuple(x.shape) == (6,)
    x.set_(src, 1, (2, 2), (2, 1))
    t = torch.tensor(a)
    t[0] = 9.0
    np.testing.assert_array_equal(x.numpy(), torch.zeros(1).set_(t.untyped_storage(), 1, (2, 2), (2, 1)).numpy())
    x.set_()
    assert x.numel() == 0


def test_tensorinv_tensorsolve():
    a = RNG.standard_normal((4, 6, 8, 3)) + 0.0
    a = (a.reshape(24, 24) + 6 * np.eye(24)).reshape(4, 6, 8, 3)
    _close(*_both(lambda L, x: L.linalg.tensorinv(x, ind=2), a), rtol=1e-8, atol=1e-10)
    b = RNG.standard_normal((4, 6))
    _close(*_both(lambda L, x, y: L.linalg.tensorsolve(x, y), a, b), rtol=1e-8, atol=1e-10)
    m = RNG.standard_normal((6, 6)) + 4 * np.eye(6)
    a2 = np.ascontiguousarray(np.moveaxis(m.reshape(6, 3, 2), 2, 0))  # (2, 6, 3): dims=(0,) moves the 2 last
    _close(*_both(lambda L, x, y: L.linalg.tensorsolve(x, y, dims=(0,)), a2, RNG.standard_normal(6)),
           rtol=1e-8, atol=1e-10)
    _close(*_both(lambda L, x, y: L.linalg.matmul(x, y), a[0, 0], a[0, 1].T.copy()))
    with pytest.raises(RuntimeError):
        flow.linalg.tensorinv(flow.ones(2, 3), ind=1)


def test_conv_and_linear_bn_fusion():
    from oneflow.nn.utils import fuse_conv_bn_eval, fuse_linear_bn_eval
    flow.manual_seed(0)
    for conv, bn, x in ((flow.nn.Conv2d(3, 4, 3, bias=True), flow.nn.BatchNorm2d(4), flow.randn(2, 3, 6, 6)),
                        (flow.nn.Conv2d(3, 4, 3, bias=False), flow.nn.BatchNorm2d(4), flow.randn(2, 3, 6, 6)),
                        (flow.nn.ConvTranspose2d(3, 4, 3), flow.nn.BatchNorm2d(4), flow.randn(2, 3, 5, 5))):
        bn.running_mean.copy_(flow.randn(4)), bn.running_var.copy_(flow.rand(4) + 0.5)
        bn.weight.data.copy_(flow.randn(4)), bn.bias.data.copy_(flow.randn(4))
        conv.eval(), bn.eval()
        fused = fuse_conv_bn_eval(conv, bn, transpose=isinstance(conv, flow.nn.ConvTranspose2d))
        np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    lin, bn1 = flow.nn.Linear(5, 3), flow.nn.BatchNorm1d(3)
    bn1.running_mean.copy_(flow.randn(3)), bn1.running_var.copy_(flow.rand(3) + 0.5)
    lin.eval(), bn1.eval()
    x = flow.randn(4, 5)
    np.testing.assert_allclose(fuse_linear_bn_eval(lin, bn1)(x).detach().numpy(), bn1(lin(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError):
        fuse_linear_bn_eval(flow.nn.Linear(5, 3), bn1)  # training mode


def test_functional_call_and_skip_init():
    flow.manual_seed(0)
    m = flow.nn.Sequential(flow.nn.Linear(3, 4), flow.nn.BatchNorm1d(4))
    x = flow.randn(5, 3)
    w = flow.randn(4, 3, requires_grad=True)
    out = flow.func.functional_call(m, {"0.weight": w}, (x,))
    want = m[1](flow.nn.functional.linear(x, w, m[0].bias))
    assert m[0].weight is not w and tuple(m[0].weight.shape) == (4, 3)  # restored
    out.sum().backward()
    assert w.grad is not None and m[0].bias.grad is not None
    m.eval()
    rm = flow.full((4,), 2.0)
    a = flow.nn.utils.stateless.functional_call(m, ({"1.running_mean": rm}, {}), x)
    b = (m[0](x) - 2.0) / flow.sqrt(m[1].running_var + m[1].eps) * m[1].weight + m[1].bias
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="missing"):
        flow.func.functional_call(m, {"0.weight": w}, (x,), strict=True)
    with pytest.raises(AttributeError):
        flow.func.functional_call(m, {"0.nothing": w}, (x,))
    assert float(m[0].weight.sum()) == float(m[0].weight.sum())  # unchanged after the error
    lin = flow.nn.utils.skip_init(flow.nn.Linear, 6, 2)
    assert tuple(lin.weight.shape) == (2, 6)


def test_put_index_reduce_apply_map_and_small_methods():
    import warnings
    warnings.simplefilter("ignore")
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    idx, src = np.array([1, 4, 1, -1]), np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    for acc in (False, True):
        t, f = torch.tensor(a), flow.tensor(a)
        t.put_(torch.tensor(idx), torch.tensor(src), accumulate=acc), f.put_(flow.tensor(idx), flow.tensor(src), accumulate=acc)
        if acc:
            _close(f, t)
        else:  # duplicate index 1: either write may win; the others must match
            np.testing.assert_array_equal(np.delete(f.numpy().reshape(-1), 1), np.delete(t.numpy().reshape(-1), 1))
    _close(flow.tensor(a).t().put(flow.tensor([0, 5]), flow.tensor([7.0, 8.0])),
           torch.tensor(a).t().put(torch.tensor([0, 5]), torch.tensor([7.0, 8.0])))
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    s = RNG.standard_normal((5, 4)).astype(np.float32)
    i = np.array([0, 2, 0, 1, 2])
    for reduce in ("prod", "mean", "amax", "amin"):
        for inc in (True, False):
            _close(flow.tensor(x).index_reduce(0, flow.tensor(i), flow.tensor(s), reduce, include_self=inc),
                   torch.tensor(x).index_reduce(0, torch.tensor(i), torch.tensor(s), reduce, include_self=inc),
                   rtol=1e-5)
    _close(flow.tensor(x).index_reduce_(1, flow.tensor([3, 0]), flow.tensor(x[:, :2].copy()), "amax"),
           torch.tensor(x).index_reduce_(1, torch.tensor([3, 0]), torch.tensor(x[:, :2].copy()), "amax"))
    t, f = torch.tensor(a), flow.tensor(a)
    t.apply_(lambda v: v * 2 + 1), f.apply_(lambda v: v * 2 + 1)
    _close(f, t)
    t.map_(torch.tensor(a[0]), lambda u, v: u - v), f.map_(flow.tensor(a[0]), lambda u, v: u - v)
    _close(f, t)
    _close(flow.tensor(a * 3).fix(), torch.tensor(a * 3).fix())
    _close(flow.tensor(a).adjoint(), torch.tensor(a).adjoint())
    assert flow.ones(2, 3).is_same_size(flow.zeros(2, 3)) and not flow.ones(2, 3).is_same_size(flow.zeros(3, 2))


def test_dtype_rules_and_small_top_level_names():
    def mk(L, v):
        table = {"u8": L.uint8, "i64": L.int64, "f16": L.float16, "bool": L.bool, "i32": L.int32,
                 "c64": L.complex64, "f64": L.float64}
        if isinstance(v, str):
            kind, _, zero_d = v.partition("_")
            return L.tensor(3, dtype=table[kind]) if zero_d else L.ones(2, dtype=table[kind])
        return v

    pairs = [("i64", 2.5), ("bool", 2), ("i64", "f64"), ("u8", "i64_0d"), ("f16", 2.5), ("bool", True),
             ("i32", "f64_0d"), ("c64", 1.0), ("i64", "u8"), ("bool", "u8_0d"), ("f16", "f64_0d")]
    for a, b in pairs:
        assert str(flow.result_type(mk(flow, a), mk(flow, b))).split(".")[-1] == \
               str(torch.result_type(mk(torch, a), mk(torch, b))).split(".")[-1], (a, b)
    names = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]
    for x in names:
        for y in names:
            assert flow.can_cast(getattr(flow, x), getattr(flow, y)) == torch.can_cast(getattr(torch, x),
                                                                                     getattr(torch, y)), (x, y)
    before = flow.backends.cuda.matmul.allow_tf32
    flow.set_float32_matmul_precision("medium")
    assert flow.get_float32_matmul_precision() == "medium" and flow.backends.cuda.matmul.allow_tf32
    flow.set_float32_matmul_precision("highest")
    assert not flow.backends.cuda.matmul.allow_tf32
    flow.backends.cuda.matmul.allow_tf32 = before
    with pytest.raises(RuntimeError):
        flow.set_float32_matmul_precision("fast")
    m = flow.nn.Linear(2, 2)
    assert flow.compile(m) is m and flow.compile(mode="max-autotune")(m) is m
    x = RNG.standard_normal((2, 3, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    _close(flow.conv2d(flow.tensor(x), flow.tensor(w), padding=1), torch.conv2d(torch.tensor(x), torch.tensor(w), padding=1),
           rtol=1e-4, atol=1e-5)
    t, f = torch.tensor(x), flow.tensor(x)
    torch.exp_(t), flow.exp_(f)
    _close(f, t, rtol=1e-6)
    _close(flow.permute_copy(flow.tensor(x), (3, 1, 0, 2)), torch.permute_copy(torch.tensor(x), (3, 1, 0, 2)))
    _close(flow.rsub(flow.tensor(x), 2.0, alpha=3), torch.rsub(torch.tensor(x), 2.0, alpha=3))
    s = flow.empty_strided((2, 3), (1, 2))
    assert tuple(s.shape) == (2, 3) and s.stride() == (1, 2)
    a = flow.asarray([1, 2, 3], dtype=flow.float64)
    assert a.dtype == flow.float64 and flow.asarray(a) is a
    spd = RNG.standard_normal((3, 3))
    spd = spd @ spd.T + 3 * np.eye(3)
    L = np.linalg.cholesky(spd)
    b = RNG.standard_normal((3, 2))
    for upper in (False, True):
        fac = L.T.copy() if upper else L
        _close(flow.cholesky_solve(flow.tensor(b), flow.tensor(fac), upper), torch.cholesky_solve(torch.tensor(b), torch.tensor(fac), upper),
               rtol=1e-8, atol=1e-10)
        _close(flow.cholesky_inverse(flow.tensor(fac), upper), torch.cholesky_inverse(torch.tensor(fac), upper), rtol=1e-8,
               atol=1e-10)


def test_legacy_new_layout_and_aliases():
    x = flow.ones(2, 3, dtype=flow.float64)
    n = x.new(4, 5)
    assert tuple(n.shape) == (4, 5) and n.dtype == flow.float64
    assert x.new([1, 2]).dtype == flow.float64 and x.new().numel() == 0
    assert x.new(flow.Size([2, 2])).shape == (2, 2)
    assert x.layout == flow.strided and repr(flow.strided) == "oneflow.strided"
    a = RNG.standard_normal((7, 3)).astype(np.float32)
    for got, want in zip(flow.tensor(a).split_with_sizes([2, 5]), torch.tensor(a).split_with_sizes([2, 5])):
        _close(got, want)
    for got, want in zip(flow.tensor(a).unsafe_chunk(3), torch.tensor(a).unsafe_chunk(3)):
        _close(got, want)
    t, f = torch.tensor(a), flow.tensor(a)
    t.renorm_(2, 0, 1.0), f.renorm_(2, 0, 1.0)
    _close(f, t)
    t.ldexp_(torch.tensor([1.0, 2.0, 3.0])), f.ldexp_(flow.tensor([1.0, 2.0, 3.0]))
    _close(f, t)
    assert x.new_empty_strided((2, 2), (1, 2)).stride() == (1, 2)


@pytest.mark.parametrize("kw", [dict(kernel_size=3, output_size=(5, 4)), dict(kernel_size=(2, 3), output_ratio=(0.5, 0.5)),
                                dict(kernel_size=2, output_size=1), dict(kernel_size=3, output_size=(9, 7))])
def test_fractional_max_pool2d(kw):
    x = RNG.standard_normal((2, 3, 11, 9)).astype(np.float32)
    x[0, 0, 3, 3] = np.nan  # NaN wins its windows, as in PyTorch
    u = RNG.uniform(0, 1, (2, 3, 2)).astype(np.float32)
    tf, ff = torch.tensor(x, requires_grad=True), flow.tensor(x, requires_grad=True)
    to, ti = torch.nn.functional.fractional_max_pool2d(tf, return_indices=True, _random_samples=torch.tensor(u), **kw)
    fo, fi = flow.nn.functional.fractional_max_pool2d(ff, return_indices=True, _random_samples=flow.tensor(u), **kw)
    np.testing.assert_array_equal(fo.detach().numpy(), to.detach().numpy())
    np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    g = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    (to * torch.tensor(g)).sum().backward(), (fo * flow.tensor(g)).sum().backward()
    np.testing.assert_allclose(ff.grad.numpy(), tf.grad.numpy(), rtol=1e-6)
    m = flow.nn.FractionalMaxPool2d(return_indices=True, _random_samples=flow.tensor(u), **kw)
    mo, mi = m(flow.tensor(x[0]).unsqueeze(0).expand(2, 3, 11, 9))
    assert tuple(mo.shape) == tuple(to.shape)


def test_fractional_max_pool3d_and_errors():
    x = RNG.standard_normal((1, 2, 7, 8, 9)).astype(np.float32)
    u = RNG.uniform(0, 1, (1, 2, 3)).astype(np.float32)
    to, ti = torch.nn.functional.fractional_max_pool3d(torch.tensor(x), 2, output_size=(3, 4, 5), return_indices=True,
                                                       _random_samples=torch.tensor(u))
    fo, fi = flow.nn.functional.fractional_max_pool3d(flow.tensor(x), 2, output_size=(3, 4, 5), return_indices=True,
                                                      _random_samples=flow.tensor(u))
    np.testing.assert_array_equal(fo.numpy(), to.numpy())
    np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    flow.manual_seed(0)
    out = flow.nn.FractionalMaxPool3d(2, output_ratio=0.5)(flow.tensor(x[0]))  # unbatched, random samples
    assert tuple(out.shape) == (2, 3, 4, 4)
    with pytest.raises(ValueError):
        flow.nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError):
        flow.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError):
        flow.nn.functional.fractional_max_pool2d(flow.ones(1, 1, 4, 4), 3, output_size=3)


def test_amp_custom_fwd_bwd_stack_dataset_data_parallel():
    seen = {}

    class Scaled(flow.autograd.Function):
        @staticmethod
        @flow.amp.custom_fwd(device_type="cpu", cast_inputs=flow.float32)
        def forward(ctx, x):
            seen["fwd"] = (x.dtype, flow.is_autocast_enabled("cpu"))
            return x * 2

        @staticmethod
        @flow.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = flow.is_autocast_enabled("cpu")
            return g * 2

    x = flow.ones(3, dtype=flow.bfloat16, requires_grad=True)
    with flow.autocast("cpu", dtype=flow.bfloat16):
        y = Scaled.apply(x)
    assert seen["fwd"] == (flow.float32, False) and y.dtype == flow.float32
    y.sum().backward()
    assert seen["bwd"] is False and x.grad is not None  # the forward ran with autocast off

    class Plain(flow.autograd.Function):
        @staticmethod
        @flow.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            return x * 1

        @staticmethod
        @flow.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd2"] = flow.is_autocast_enabled("cpu")
            return g

    x2 = flow.ones(3, requires_grad=True)
    with flow.autocast("cpu", dtype=flow.bfloat16):
        out = Plain.apply(x2)
    out.sum().backward()
    assert seen["bwd2"] is True  # backward under the forward's autocast state
    assert callable(flow.cuda.amp.custom_fwd) and callable(flow.cuda.amp.custom_bwd)

    ds = flow.utils.data.StackDataset(flow.arange(4), [10, 11, 12, 13])
    assert len(ds) == 4 and ds[2][1] == 12 and int(ds[2][0]) == 2
    dd = flow.utils.data.StackDataset(a=[1, 2], b=["x", "y"])
    assert dd[1] == {"a": 2, "b": "y"}
    with pytest.raises(ValueError):
        flow.utils.data.StackDataset([1], [1, 2])
    m = flow.nn.Linear(3, 2)
    dp = flow.nn.DataParallel(m)
    assert dp.module is m and list(dp.state_dict()) == ["module.weight", "module.bias"]
    _close(dp(flow.ones(4, 3)), m(flow.ones(4, 3)))
    with pytest.raises(NotImplementedError):
        flow.nn.DataParallel(m, device_ids=[0, 1])
    assert isinstance(flow.nn.NLLLoss2d(), flow.nn.NLLLoss)


def test_lu_family_against_torch():
    A = RNG.standard_normal((2, 4, 4)) + 0.5 * np.eye(4)
    B = RNG.standard_normal((2, 4, 3))
    fl, tl = flow.linalg.lu_factor(flow.tensor(A)), torch.linalg.lu_factor(torch.tensor(A))
    _close(fl.LU, tl.LU, rtol=1e-10, atol=1e-12), _close(fl.pivots, tl.pivots)
    _close(flow.lu_unpack(fl.LU, fl.pivots), tuple(torch.lu_unpack(tl.LU, tl.pivots)), rtol=1e-10, atol=1e-12)
    for left in (True, False):
        for adj in (True, False):
            b = B if left else np.swapaxes(B, -1, -2).copy()
            _close(flow.linalg.lu_solve(fl.LU, fl.pivots, flow.tensor(b), left=left, adjoint=adj),
                   torch.linalg.lu_solve(tl.LU, tl.pivots, torch.tensor(b), left=left, adjoint=adj), rtol=1e-9,
                   atol=1e-10)
    _close(flow.lu_solve(flow.tensor(B), fl.LU, fl.pivots), torch.lu_solve(torch.tensor(B), tl.LU, tl.pivots),
           rtol=1e-9, atol=1e-10)
    R = RNG.standard_normal((3, 5, 2))
    _close(tuple(flow.linalg.lu(flow.tensor(R))), tuple(torch.linalg.lu(torch.tensor(R))), rtol=1e-10, atol=1e-12)
    # gradients: through lu (P, L, U) and lu_solve, square
    W = RNG.standard_normal((2, 4, 4))
    fa, ta = flow.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    P, L, U = flow.linalg.lu(fa)
    tP, tL, tU = torch.linalg.lu(ta)
    ((L * flow.tensor(W)).sum() + (U * flow.tensor(W)).sum()).backward()
    ((tL * torch.tensor(W)).sum() + (tU * torch.tensor(W)).sum()).backward()
    _close(fa.grad, ta.grad, rtol=1e-8, atol=1e-10)
    fa, ta = flow.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    flow.linalg.lu_solve(*flow.linalg.lu_factor(fa), flow.tensor(B)).sum().backward()
    torch.linalg.lu_solve(*torch.linalg.lu_factor(ta), torch.tensor(B)).sum().backward()
    _close(fa.grad, ta.grad, rtol=1e-8, atol=1e-10)
    # a singular matrix: lu_factor raises, lu_factor_ex reports, lu factorizes
    S = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(RuntimeError, match="U\\[2,2\\] is zero"):
        flow.linalg.lu_factor(flow.tensor(S))
    ex, tex = flow.linalg.lu_factor_ex(flow.tensor(S)), torch.linalg.lu_factor_ex(torch.tensor(S))
    _close(ex.info, tex.info), _close(ex.LU, tex.LU)
    with pytest.raises(RuntimeError, match="Batch element 1"):
        flow.linalg.lu_factor(flow.tensor(np.stack([np.eye(2), S])))
    with pytest.raises(RuntimeError):
        flow.linalg.lu_factor(flow.tensor(A), pivot=False)
    lu_data, piv = flow.tensor(A).lu()
    _close(lu_data, tl.LU, rtol=1e-10, atol=1e-12)


def test_eig_against_torch():
    A = RNG.standard_normal((3, 4, 4))
    w, V = flow.linalg.eig(flow.tensor(A))
    tw, tV = torch.linalg.eig(torch.tensor(A))
    _close(w, tw, rtol=1e-10, atol=1e-12)
    # unit columns with the largest component real: equal up to a sign per column (LAPACK builds
    # may choose either), so compare with each column's largest component made positive
    def canon(v):
        v = v.numpy() if hasattr(v, "numpy") else v
        idx = np.abs(v).argmax(-2)[..., None, :]
        ph = np.take_along_axis(v, idx, -2)
        return v / (ph / np.abs(ph))

    np.testing.assert_allclose(np.abs(V.numpy()).sum(-2), np.abs(tV.numpy()).sum(-2), rtol=1e-9)
    np.testing.assert_allclose(canon(V), canon(tV), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose((flow.tensor(A).to(flow.complex128) @ V).numpy(), (V * w.unsqueeze(-2)).numpy(),
                               rtol=1e-9, atol=1e-10)
    rot = np.array([[0.0, -1.0], [1.0, 0.0]], np.float32)
    _close(flow.linalg.eigvals(flow.tensor(rot)), torch.linalg.eigvals(torch.tensor(rot)))
    with pytest.raises(RuntimeError):
        flow.linalg.eig(flow.ones(2, 3))
    with pytest.raises(NotImplementedError):
        flow.linalg.eigvals(flow.tensor(A, requires_grad=True)).abs().sum().backward()
