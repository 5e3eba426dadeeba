"""nn.utils.parametrizations.orthogonal against torch: orthogonality right after registration
(square / tall / wide / batched, every map, with and without trivialization), the same weight
and the same gradients of the originals from the same state, assignment through right_inverse,
a few SGD steps, and the error cases."""

import numpy as np
import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow parametrize")
MAPS = ["matrix_exp", "cayley", "householder"]
SHAPES = [(4, 4), (5, 3), (3, 5)]


def _mod(L, shape, seed=0):
    """A module with a `weight` of the given shape (any number of dims) and fixed values."""
    m = L.nn.Module()
    w = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    m.weight = L.nn.Parameter(L.tensor(w))
    return m


def _pair(shape, mp=None, triv=True, seed=0):
    fm, tm = _mod(flow, shape, seed), _mod(torch, shape, seed)
    flow.nn.utils.parametrizations.orthogonal(fm, orthogonal_map=mp, use_trivialization=triv)
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=mp, use_trivialization=triv)
    return fm, tm


def _np(t):
    return t.detach().numpy()


def _assert_orthogonal(w, atol=1e-5):
    w = _np(w) if not isinstance(w, np.ndarray) else w
    n, k = w.shape[-2:]
    g = np.swapaxes(w, -1, -2) @ w if n >= k else w @ np.swapaxes(w, -1, -2)
    np.testing.assert_allclose(g, np.broadcast_to(np.eye(min(n, k)), g.shape), atol=atol)


def _noise(rng, shape):
    """Off-diagonal noise: the Householder map reads trunc(diagonal) as the column signs."""
    n, k = shape[-2:]
    return torch.tensor((0.3 * rng.standard_normal(shape) * (1 - np.eye(n, k))).astype(np.float32))


def _sync(fm, tm):
    """Copies torch's originals (and base buffers) into ours."""
    for (k, a), (k2, b) in zip(fm.state_dict().items(), tm.state_dict().items()):
        assert k == k2
        with flow.no_grad():
            a.copy_(flow.tensor(_np(b)))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mp", MAPS)
@pytest.mark.parametrize("triv", [True, False])
def test_register_value_and_grad(shape, mp, triv):
    fm, tm = _pair(shape, mp, triv)
    _assert_orthogonal(fm.weight)
    _assert_orthogonal(tm.weight)
    assert list(fm.state_dict()) == list(tm.state_dict())
    assert ("parametrizations.weight.0.base" in fm.state_dict()) == triv
    assert type(fm.parametrizations.weight[0].orthogonal_map).__name__ == "_OrthMaps"
    if not triv or shape[0] == shape[1]:  # no random completion: the same state without syncing
        np.testing.assert_allclose(_np(fm.parametrizations.weight.original),
                                   _np(tm.parametrizations.weight.original), atol=1e-5)
        np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), atol=1e-5)
    # perturb the original so the map is not at its identity point, then compare with torch
    rng = np.random.default_rng(1)
    with torch.no_grad():
        tm.parametrizations.weight.original.add_(_noise(rng, shape))
    _sync(fm, tm)
    fw, tw = fm.weight, tm.weight
    _assert_orthogonal(fw)
    np.testing.assert_allclose(_np(fw), _np(tw), atol=2e-5)
    c = rng.standard_normal(shape).astype(np.float32)
    (fw * flow.tensor(c)).sum().backward()
    (tw * torch.tensor(c)).sum().backward()
    fg, tg = fm.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad
    assert fg is not None
    np.testing.assert_allclose(_np(fg), _np(tg), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("shape", [(2, 4, 3), (2, 3, 5), (4, 3, 2, 2)])
@pytest.mark.parametrize("mp", [None, "cayley"])
def test_batched(shape, mp):
    fm, tm = _pair(shape, mp, True)
    assert tuple(fm.weight.shape) == shape
    _assert_orthogonal(fm.weight)
    assert fm.parametrizations.weight[0].orthogonal_map.name == tm.parametrizations.weight[0].orthogonal_map.name
    rng = np.random.default_rng(2)
    with torch.no_grad():
        tm.parametrizations.weight.original.add_(_noise(rng, shape))
    _sync(fm, tm)
    np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), atol=2e-5)
    fm.weight.pow(3).sum().backward()
    tm.weight.pow(3).sum().backward()
    np.testing.assert_allclose(_np(fm.parametrizations.weight.original.grad),
                               _np(tm.parametrizations.weight.original.grad), atol=1e-4, rtol=1e-4)


def test_default_map_and_linear_conv():
    for shape, name in (((4, 4), "matrix_exp"), ((5, 3), "householder"), ((3, 5), "householder")):
        fm, tm = _pair(shape)
        assert fm.parametrizations.weight[0].orthogonal_map.name == name
        assert tm.parametrizations.weight[0].orthogonal_map.name == name
    lin = flow.nn.utils.parametrizations.orthogonal(flow.nn.Linear(6, 4))
    assert type(lin).__name__ == "ParametrizedLinear"
    _assert_orthogonal(lin.weight)
    y = lin(flow.randn(2, 6))
    assert tuple(y.shape) == (2, 4)
    conv = flow.nn.utils.parametrizations.orthogonal(flow.nn.Conv2d(3, 4, 2))
    _assert_orthogonal(conv.weight)
    assert tuple(conv(flow.randn(1, 3, 5, 5)).shape) == (1, 4, 4, 4)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mp", MAPS)
def test_assign_orthogonal_round_trip(shape, mp):
    q = np.linalg.qr(np.random.default_rng(3).standard_normal((max(shape), min(shape))))[0].astype(np.float32)
    q = q if shape[0] >= shape[1] else q.T
    for triv in (True, False):
        fm, tm = _pair(shape, mp, triv)
        if not triv and mp != "householder":
            with pytest.raises(NotImplementedError):
                fm.weight = flow.tensor(q)
            with pytest.raises(NotImplementedError):
                tm.weight = torch.tensor(q)
            continue
        fm.weight = flow.tensor(q)
        tm.weight = torch.tensor(q)
        np.testing.assert_allclose(_np(fm.weight), q, atol=1e-5)
        np.testing.assert_allclose(_np(fm.parametrizations.weight.original),
                                   _np(tm.parametrizations.weight.original), atol=1e-5)
        if triv:  # the original is -I, the base holds the value (completed when not square)
            np.testing.assert_allclose(_np(fm.parametrizations.weight.original), -np.eye(*shape), atol=0)
            base = _np(fm.parametrizations.weight[0].base)
            _assert_orthogonal(base)
            np.testing.assert_allclose(base[:, :min(shape)], q if shape[0] >= shape[1] else q.T, atol=1e-5)


def test_assign_non_orthogonal():
    a = np.random.default_rng(4).standard_normal((4, 4)).astype(np.float32)
    for mp, triv in (("matrix_exp", True), ("cayley", True), ("householder", True), ("householder", False)):
        fm, tm = _pair((4, 4), mp, triv)
        fm.weight = flow.tensor(a)
        tm.weight = torch.tensor(a)
        _assert_orthogonal(fm.weight)  # projected: the Q factor of a, diag(R) > 0
        np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), atol=1e-5)
    fm, tm = _pair((5, 3), "householder", False)
    b = np.random.default_rng(5).standard_normal((5, 3)).astype(np.float32)
    fm.weight, tm.weight = flow.tensor(b), torch.tensor(b)
    np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), atol=1e-5)
    for L, m in ((flow, fm), (torch, tm)):
        with pytest.raises(ValueError, match="shape"):
            m.weight = L.zeros(3, 5)


@pytest.mark.parametrize("mp", MAPS)
def test_sgd_keeps_orthogonality(mp):
    fm, tm = _pair((5, 3), mp, True)
    _sync(fm, tm)
    x = np.random.default_rng(6).standard_normal((8, 3)).astype(np.float32)
    fo = flow.optim.SGD(fm.parameters(), lr=0.1)
    to = torch.optim.SGD(tm.parameters(), lr=0.1)
    for _ in range(4):
        for L, m, o in ((flow, fm, fo), (torch, tm, to)):
            o.zero_grad()
            (L.tensor(x) @ m.weight.T).sin().sum().backward()
            o.step()
        _assert_orthogonal(fm.weight)
    np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), atol=1e-4)
    orig = _np(fm.parametrizations.weight.original)
    assert np.abs(orig + np.eye(5, 3)).max() > 1e-3  # it did move


def test_errors():
    for L in (flow, torch):
        O = L.nn.utils.parametrizations.orthogonal
        with pytest.raises(ValueError, match="matrix or batch"):
            O(_mod(L, (4,)))
        with pytest.raises(ValueError, match="orthogonal_map"):
            O(_mod(L, (4, 4)), orthogonal_map="qr")
        with pytest.raises(ValueError, match="no parameter or buffer"):
            O(_mod(L, (4, 4)), name="bias")
        m = L.nn.Module()
        c = (np.ones((3, 3)) + 1j * np.eye(3)).astype(np.complex64)
        m.weight = L.nn.Parameter(L.tensor(c))
        with pytest.raises(ValueError, match="complex"):
            O(m, orthogonal_map="householder")
        assert not L.nn.utils.parametrize.is_parametrized(m)
