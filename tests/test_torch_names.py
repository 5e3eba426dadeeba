"""PyTorch names that PyTorch-style scripts call and OneFlow's spec does not list, against torch:
aliases, Tensor properties and methods (in-place comparisons, layout methods, put_,
index_reduce_, new, ...), the math and statistics compositions (python/oneflow/_math.py, _stats.py: isin,
quantile, cov, histogram, ...) and the top-level names (result_type, can_cast, compile, ...).
Linear algebra: test_torch_linalg_names.py; nn: test_torch_nn_names.py."""

import numpy as np
import pytest
import torch

from harness import SHIM, flow
from names_util import both as _both, close as _close

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
    _, rf = getattr(t, name)(tb), getattr(f, name)(fb)
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


# ---------------------------------------------------------------------------------------------
# the factories' default device (set_default_device, `with flow.device(...)`)


def test_default_device_context_and_setter():
    assert str(flow.get_default_device()) == str(torch.get_default_device()) == "cpu"
    for lib in (flow, torch):
        with lib.device("meta"):
            m = lib.nn.Linear(3, 4)
            made = [m.weight, lib.tensor([1.0, 2.0]), lib.zeros(2), lib.randn(3), lib.arange(3), lib.full((2,), 1.5),
                    lib.empty(2), lib.ones(2, device="cpu")]
            with lib.device("cpu"):  # nesting
                inner = lib.zeros(1)
            after_inner = lib.zeros(1)
        assert [t.device.type for t in made] == ["meta"] * 7 + ["cpu"]
        assert inner.device.type == "cpu" and after_inner.device.type == "meta"
        assert lib.zeros(1).device.type == "cpu"
    with pytest.raises(ValueError):
        with flow.device("meta"):
            raise ValueError("inside")
    assert flow.zeros(1).device.type == "cpu"  # restored after an exception
    flow.set_default_device("meta")
    try:
        assert flow.ones(2).device.type == "meta" and str(flow.get_default_device()) == "meta"
    finally:
        flow.set_default_device(None)
    assert flow.ones(2).device.type == "cpu"
