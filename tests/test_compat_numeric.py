"""gradient, frexp and histogramdd against PyTorch (python/oneflow/_math.py, _stats.py): forward
over shapes, spacings, edge orders, dtypes and special values; gradient's backward; errors."""

import numpy as np
import pytest
import torch

import oneflow as flow


def _t(lib, a):
    return lib.tensor(np.ascontiguousarray(a))


def _same(got, want, tol):
    got, want = [got] if not isinstance(got, (tuple, list)) else got, [want] if not isinstance(
        want, (tuple, list)) else want
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------------------------
# gradient

GRADIENT_CASES = [
    ("1-D", (7,), {}),
    ("2-D all dims", (5, 6), {}),
    ("2-D scalar spacing", (5, 6), {"spacing": 0.5}),
    ("dim 1", (4, 5, 3), {"dim": 1}),
    ("dims list, per-dim spacing", (4, 5, 3), {"dim": [0, 2], "spacing": [2.0, 0.25]}),
    ("negative dim", (4, 5), {"dim": -1}),
    ("edge_order 2", (6, 5), {"edge_order": 2}),
    ("edge_order 2 spacing", (6, 5), {"edge_order": 2, "spacing": 3.0}),
    ("size 2 edge 1", (2, 3), {}),
]


@pytest.mark.parametrize("shape,kw", [(c[1], c[2]) for c in GRADIENT_CASES], ids=[c[0] for c in GRADIENT_CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_uniform(shape, kw, dtype):
    a = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    _same(flow.gradient(_t(flow, a), **kw), torch.gradient(_t(torch, a), **kw), tol)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates(edge_order):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 5))
    x0 = np.cumsum(rng.uniform(0.1, 1.0, 6))
    x1 = np.cumsum(rng.uniform(0.1, 1.0, 5))
    got = flow.gradient(_t(flow, a), spacing=(_t(flow, x0), _t(flow, x1)), edge_order=edge_order)
    want = torch.gradient(_t(torch, a), spacing=(_t(torch, x0), _t(torch, x1)), edge_order=edge_order)
    _same(got, want, 1e-10)
    got = flow.gradient(_t(flow, a), spacing=(_t(flow, x1),), dim=1, edge_order=edge_order)
    want = torch.gradient(_t(torch, a), spacing=(_t(torch, x1),), dim=1, edge_order=edge_order)
    _same(got, want, 1e-10)


def test_gradient_integer_input_and_noncontiguous():
    a = np.array([1, 2, 4, 7, 11], dtype=np.int64)
    _same(flow.gradient(_t(flow, a)), torch.gradient(_t(torch, a)), 1e-6)
    b = np.random.default_rng(2).standard_normal((5, 4))
    _same(flow.gradient(_t(flow, b).t(), dim=0), torch.gradient(_t(torch, b).t(), dim=0), 1e-12)


def test_gradient_backward_matches_torch():
    a = np.random.default_rng(3).standard_normal((5, 4))
    w = np.random.default_rng(4).standard_normal((5, 4))
    x, t = _t(flow, a).requires_grad_(), _t(torch, a).requires_grad_()
    sum((g * _t(flow, w)).sum() for g in flow.gradient(x, edge_order=2)).backward()
    sum((g * _t(torch, w)).sum() for g in torch.gradient(t, edge_order=2)).backward()
    _same(x.grad, t.grad, 1e-12)


@pytest.mark.parametrize("call", [
    lambda L: L.gradient(L.ones(1)),                       # too short for edge_order 1
    lambda L: L.gradient(L.ones(2, 2), edge_order=2),      # too short for edge_order 2
    lambda L: L.gradient(L.ones(3), edge_order=3),
    lambda L: L.gradient(L.ones(3, 3), spacing=[1.0, 2.0, 3.0]),
])
def test_gradient_errors(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError):
        call(flow)


# ---------------------------------------------------------------------------------------------
# frexp


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frexp_matches_torch(dtype):
    info = np.finfo(dtype)
    vals = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 0.75, 3.0, -1024.0, 1023.999, 2.0 ** 20 - 1e-3, 1e-3,
                     info.tiny, info.tiny / 8, info.max, -info.max, np.inf, -np.inf, np.nan], dtype=dtype)
    rng = np.random.default_rng(5)
    vals = np.concatenate([vals, (rng.standard_normal(200) * 10.0 ** rng.integers(-30, 30, 200)).astype(dtype)])
    m, e = flow.frexp(_t(flow, vals))
    tm, te = torch.frexp(_t(torch, vals))
    assert e.dtype == flow.int32 and m.dtype == getattr(flow, dtype)
    np.testing.assert_array_equal(m.numpy(), tm.numpy())
    np.testing.assert_array_equal(e.numpy(), te.numpy())
    r = _t(flow, vals).frexp()
    np.testing.assert_array_equal(r.mantissa.numpy(), tm.numpy())


def test_frexp_rejects_integers():
    with pytest.raises(RuntimeError):
        torch.frexp(torch.ones(2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="frexp"):
        flow.frexp(flow.ones(2, dtype=flow.int64))


# ---------------------------------------------------------------------------------------------
# histogramdd


HIST_CASES = [
    ("int bins", (50, 2), {"bins": 4}),
    ("per-dim bins", (60, 3), {"bins": [2, 3, 4]}),
    ("range", (50, 2), {"bins": [3, 3], "range": [-1.0, 1.0, -0.5, 2.0]}),
    ("density", (80, 2), {"bins": [4, 5], "density": True}),
    ("1-D points", (40, 1), {"bins": 6}),
    ("batched points", (4, 10, 2), {"bins": 3}),
]


@pytest.mark.parametrize("shape,kw", [(c[1], c[2]) for c in HIST_CASES], ids=[c[0] for c in HIST_CASES])
@pytest.mark.parametrize("weighted", [False, True])
def test_histogramdd_matches_torch(shape, kw, weighted):
    rng = np.random.default_rng(6)
    a = rng.standard_normal(shape)
    kwf, kwt = dict(kw), dict(kw)
    if weighted:
        w = rng.uniform(0, 2, shape[:-1])
        kwf["weight"], kwt["weight"] = _t(flow, w), _t(torch, w)
    h, edges = flow.histogramdd(_t(flow, a), **kwf)
    th, tedges = torch.histogramdd(_t(torch, a), **kwt)
    _same(h, th, 1e-10)
    _same(list(edges), list(tedges), 1e-12)


def test_histogramdd_edges_and_boundaries():
    a = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.25], [2.0, 0.5], [-1.0, 0.3]])
    ex, ey = np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.25, 1.0])
    h, _ = flow.histogramdd(_t(flow, a), bins=[_t(flow, ex), _t(flow, ey)])
    th, _ = torch.histogramdd(_t(torch, a), bins=[_t(torch, ex), _t(torch, ey)])
    _same(h, th, 0)
    same = np.ones((5, 2))  # every point equal: the span widened by 0.5 each side
    _same(flow.histogramdd(_t(flow, same), bins=2)[0], torch.histogramdd(_t(torch, same), bins=2)[0], 0)


def test_histogramdd_errors():
    with pytest.raises(RuntimeError):
        flow.histogramdd(flow.ones(4, 2), bins=[2, 2, 2])
    with pytest.raises(RuntimeError):
        flow.histogramdd(flow.ones(4, 2), bins=2, range=[0.0, 1.0])
    with pytest.raises(RuntimeError):
        flow.histogramdd(flow.ones(4, 2, dtype=flow.int64), bins=2)
