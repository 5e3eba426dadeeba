"""linalg.LinAlgError and the *_ex forms (inv_ex, solve_ex, cholesky_ex) against PyTorch: the
failures of LAPACK on the input's values raise flow.linalg.LinAlgError (a RuntimeError, as
torch.linalg.LinAlgError); the _ex forms return LAPACK's int32 info per matrix instead, and raise
it with check_errors=True. Results, infos and gradients as PyTorch's."""

import numpy as np
import pytest
import torch

import oneflow as flow

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]


def _pd(rng, *batch, n=3):
    a = rng.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _close(got, want, tol=1e-10):
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)


def test_linalg_error_is_a_runtime_error():
    assert issubclass(flow.linalg.LinAlgError, RuntimeError)
    assert issubclass(torch.linalg.LinAlgError, RuntimeError)


FAILURES = [
    ("inv", lambda L: L.linalg.inv(L.tensor(SINGULAR)), "singular"),
    ("inverse batch", lambda L: L.inverse(L.stack([L.eye(2), L.tensor(SINGULAR)])), "Batch element 1"),
    ("solve", lambda L: L.linalg.solve(L.tensor(SINGULAR), L.ones(2)), "singular"),
    ("cholesky", lambda L: L.linalg.cholesky(-L.eye(2)), "order 1"),
    ("cholesky batch", lambda L: L.linalg.cholesky(L.stack([L.eye(2), -L.eye(2)])), "Batch element 1"),
    ("matrix_power -1", lambda L: L.linalg.matrix_power(L.tensor(SINGULAR), -1), "singular"),
    ("inv_ex check_errors", lambda L: L.linalg.inv_ex(L.tensor(SINGULAR), check_errors=True), "singular"),
    ("cholesky_ex check_errors", lambda L: L.linalg.cholesky_ex(-L.eye(3), check_errors=True), "order 1"),
    ("solve_ex check_errors", lambda L: L.linalg.solve_ex(L.tensor(SINGULAR), L.ones(2, 1), check_errors=True),
     "singular"),
]


@pytest.mark.parametrize("fn,words", [(c[1], c[2]) for c in FAILURES], ids=[c[0] for c in FAILURES])
def test_failures_raise_linalg_error(fn, words):
    with pytest.raises(torch.linalg.LinAlgError):
        fn(torch)
    with pytest.raises(flow.linalg.LinAlgError, match=words.replace("[", r"\[").replace("]", r"\]")):
        fn(flow)
    # caught as the RuntimeError it is, and the framework still works
    with pytest.raises(RuntimeError):
        fn(flow)
    assert float(flow.ones(2).sum()) == 2.0


@pytest.mark.parametrize("fn", [lambda L: L.linalg.inv(L.ones(2, 3)),  # shape mistake
                                lambda L: L.linalg.lu_factor(L.tensor(SINGULAR))])  # PyTorch's own check
def test_plain_runtime_errors_stay_plain(fn):
    for lib in (torch, flow):
        with pytest.raises(RuntimeError) as info:
            fn(lib)
        assert not isinstance(info.value, lib.linalg.LinAlgError)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inv_ex_matches_torch(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3, 3)).astype(dtype)
    a[2] = [[1, 2, 3], [2, 4, 6], [0, 0, 1]]  # singular: U[2,2] = 0 after pivoting
    inv, info = flow.linalg.inv_ex(flow.tensor(a))
    t_inv, t_info = torch.linalg.inv_ex(torch.tensor(a))
    assert info.dtype == flow.int32 and tuple(info.shape) == (4,)
    np.testing.assert_array_equal(info.numpy(), t_info.numpy())
    ok = t_info.numpy() == 0
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(inv.numpy()[ok], t_inv.numpy()[ok], rtol=tol, atol=tol)
    r = flow.linalg.inv_ex(flow.tensor(a[0]))
    assert r.info.dim() == 0 and int(r.info) == 0
    np.testing.assert_allclose(r.inverse.numpy(), np.linalg.inv(a[0]), rtol=tol, atol=tol)


def test_inv_ex_grad_matches_torch():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 3))
    w = rng.standard_normal((2, 3, 3))
    x, t = flow.tensor(a).requires_grad_(), torch.tensor(a, requires_grad=True)
    (flow.linalg.inv_ex(x)[0] * flow.tensor(w)).sum().backward()
    (torch.linalg.inv_ex(t)[0] * torch.tensor(w)).sum().backward()
    _close(x.grad, t.grad)
    assert not flow.linalg.inv_ex(x).info.requires_grad


@pytest.mark.parametrize("left", [True, False])
def test_solve_ex_matches_torch(left):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4, 4))
    a[1] = 0.0  # singular
    b = rng.standard_normal((3, 4, 2) if left else (3, 2, 4))
    x, info = flow.linalg.solve_ex(flow.tensor(a), flow.tensor(b), left=left)
    tx, tinfo = torch.linalg.solve_ex(torch.tensor(a), torch.tensor(b), left=left)
    np.testing.assert_array_equal(info.numpy(), tinfo.numpy())
    assert info.dtype == flow.int32
    for i in (0, 2):
        np.testing.assert_allclose(x.numpy()[i], tx.numpy()[i], rtol=1e-10, atol=1e-10)


def test_solve_ex_vector_and_broadcast_and_grad():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3, 3)), rng.standard_normal(3)
    res = flow.linalg.solve_ex(flow.tensor(a), flow.tensor(b))
    tres = torch.linalg.solve_ex(torch.tensor(a), torch.tensor(b))
    assert tuple(res.info.shape) == tuple(tres.info.shape)
    np.testing.assert_allclose(res.result.numpy(), tres.result.numpy(), rtol=1e-10, atol=1e-10)
    for sa, sb in (((1, 3, 3), (4, 3, 2)), ((3, 3), (4, 3, 2)), ((2, 1, 3, 3), (5, 3, 1))):  # broadcast A
        a2, b2 = rng.standard_normal(sa), rng.standard_normal(sb)
        r, tr = flow.linalg.solve_ex(flow.tensor(a2), flow.tensor(b2)), torch.linalg.solve_ex(torch.tensor(a2),
                                                                                             torch.tensor(b2))
        assert tuple(r.info.shape) == tuple(tr.info.shape)  # one info per matrix of A
        np.testing.assert_allclose(r.result.numpy(), tr.result.numpy(), rtol=1e-10, atol=1e-10)
    bb = rng.standard_normal((2, 3))  # a batch of vectors
    res = flow.linalg.solve_ex(flow.tensor(a), flow.tensor(bb))
    tres = torch.linalg.solve_ex(torch.tensor(a), torch.tensor(bb))
    assert tuple(res.info.shape) == tuple(tres.info.shape) == (2,)
    np.testing.assert_allclose(res.result.numpy(), tres.result.numpy(), rtol=1e-10, atol=1e-10)
    fa, fb = flow.tensor(a).requires_grad_(), flow.tensor(b).requires_grad_()
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    flow.linalg.solve_ex(fa, fb).result.pow(2).sum().backward()
    torch.linalg.solve_ex(ta, tb).result.pow(2).sum().backward()
    _close(fa.grad, ta.grad)
    _close(fb.grad, tb.grad)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_matches_torch(upper):
    rng = np.random.default_rng(4)
    a = _pd(rng, 3)
    a[1] = -np.eye(3)
    a[2, 1, 1] = -5.0  # the leading minor of order 2 fails
    L, info = flow.linalg.cholesky_ex(flow.tensor(a), upper=upper)
    tL, tinfo = torch.linalg.cholesky_ex(torch.tensor(a), upper=upper)
    np.testing.assert_array_equal(info.numpy(), tinfo.numpy())
    assert list(info.numpy()) == [0, 1, 2]
    np.testing.assert_allclose(L.numpy()[0], tL.numpy()[0], rtol=1e-12, atol=1e-12)


def test_cholesky_ex_grad_and_float32():
    rng = np.random.default_rng(5)
    a = _pd(rng, 2)
    w = rng.standard_normal((2, 3, 3))
    x, t = flow.tensor(a).requires_grad_(), torch.tensor(a, requires_grad=True)
    (flow.linalg.cholesky_ex(x).L * flow.tensor(w)).sum().backward()
    (torch.linalg.cholesky_ex(t).L * torch.tensor(w)).sum().backward()
    _close(x.grad, t.grad, 1e-9)
    a32 = a.astype(np.float32)
    np.testing.assert_allclose(flow.linalg.cholesky_ex(flow.tensor(a32)).L.numpy(),
                               torch.linalg.cholesky_ex(torch.tensor(a32)).L.numpy(), rtol=1e-5, atol=1e-5)


def test_ex_zero_size_and_errors():
    for f, t in [(flow.linalg.inv_ex, torch.linalg.inv_ex), (flow.linalg.cholesky_ex, torch.linalg.cholesky_ex)]:
        r, tr = f(flow.zeros(0, 2, 2)), t(torch.zeros(0, 2, 2))
        assert tuple(r[0].shape) == tuple(tr[0].shape) and tuple(r[1].shape) == tuple(tr[1].shape) == (0,)
    with pytest.raises(RuntimeError, match="square"):
        flow.linalg.inv_ex(flow.ones(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        flow.linalg.cholesky_ex(flow.ones(3))
    with pytest.raises(RuntimeError):
        flow.linalg.solve_ex(flow.eye(3), flow.ones(2, 2))
