"""LU and Cholesky based linear algebra on cuSOLVER (src/cuda/solver.cpp, ops/linalg_ops.cpp):
inv, det, slogdet, solve and cholesky against the CPU's LAPACK kernels (the oracle), batched and
broadcast, with gradients and the CPU's error messages. The host fallback is off, so a missing
kernel fails. Marker ``cuda``: skipped with the reason where there is no device; with DEV = "cpu"
the test logic runs anywhere."""

import numpy as np
import pytest

import oneflow as flow

cuda = pytest.mark.cuda
DEV = "cuda"
TOL = {"float32": 2e-4, "float64": 1e-10}


pytestmark = pytest.mark.usefixtures("cuda_kernels_only")


def _mat(shape, dtype, seed=0, spd=False):
    """Random values; square matrices made well conditioned (diagonally dominant, or SPD)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        n = shape[-1]
        a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n) if spd else a + n * np.eye(n) * 0.5
    return flow.tensor(a.astype(dtype))


def _close(got, want, dtype, what):
    assert got.device.type == DEV and got.dtype == want.dtype and got.shape == want.shape, what
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=TOL[dtype], atol=TOL[dtype], err_msg=what)


def _both(fn, inputs):
    host = [t.detach().clone().requires_grad_() for t in inputs]
    dev = [t.detach().to(DEV).requires_grad_() for t in inputs]
    want, got = fn(*host), fn(*dev)
    (want * want).sum().backward()
    (got * got).sum().backward()
    return want, got, [t.grad for t in host], [t.grad for t in dev]


CASES = [
    ("inv", lambda a: flow.linalg.inv(a), [(4, 4)]),
    ("inv batched", lambda a: flow.linalg.inv(a), [(2, 3, 5, 5)]),
    ("det", lambda a: flow.linalg.det(a), [(3, 4, 4)]),
    ("slogdet", lambda a: flow.linalg.slogdet(a)[1], [(3, 4, 4)]),
    ("solve", lambda a, b: flow.linalg.solve(a, b), [(4, 4), (4, 3)]),
    ("solve vector", lambda a, b: flow.linalg.solve(a, b), [(2, 4, 4), (2, 4)]),
    ("solve broadcast", lambda a, b: flow.linalg.solve(a, b), [(1, 4, 4), (3, 4, 2)]),
    ("solve left=False", lambda a, b: flow.linalg.solve(a, b, left=False), [(4, 4), (3, 4)]),
]


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0] if isinstance(c, tuple) else None)
def test_lu_ops_match_cpu(case, dtype):
    name, fn, shapes = case
    inputs = [_mat(s, dtype, seed=i) for i, s in enumerate(shapes)]
    want, got, gw, gg = _both(fn, inputs)
    _close(got, want, dtype, name)
    for a, e in zip(gg, gw):
        _close(a, e, dtype, name + " gradient")


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_matches_cpu(upper, dtype):
    a = _mat((2, 5, 5), dtype, seed=3, spd=True)
    want, got, gw, gg = _both(lambda x: flow.linalg.cholesky(x, upper=upper), [a])
    _close(got, want, dtype, "cholesky")
    _close(gg[0], gw[0], dtype, "cholesky gradient")


@cuda
def test_sign_and_singular_errors():
    a = flow.tensor([[[0.0, 1.0], [1.0, 0.0]], [[2.0, 0.0], [0.0, -3.0]]], dtype=flow.float64)
    s, l = flow.linalg.slogdet(a.to(DEV))
    np.testing.assert_allclose(s.cpu().numpy(), [-1.0, -1.0])
    np.testing.assert_allclose(l.cpu().numpy(), [0.0, np.log(6.0)])
    np.testing.assert_allclose(flow.linalg.det(flow.zeros(3, 3).to(DEV)).cpu().numpy(), 0.0)
    singular = flow.ones(3, 3).to(DEV)
    with pytest.raises(RuntimeError, match="singular"):
        flow.linalg.inv(singular)
    with pytest.raises(RuntimeError, match="singular"):
        flow.linalg.solve(singular, flow.ones(3).to(DEV))
    with pytest.raises(RuntimeError, match="positive-definite"):
        flow.linalg.cholesky(-flow.eye(3).to(DEV))


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5)])
def test_qr_on_device(shape, mode, dtype):
    """cuSOLVER's geqrf / orgqr: Q and R as the CPU's (Householder QR with LAPACK's sign
    convention, which both follow), Q R = A, gradients of a loss of Q and R."""
    a = _mat(shape, dtype, seed=11)
    want_q, want_r = flow.linalg.qr(a, mode=mode)
    got_q, got_r = flow.linalg.qr(a.to(DEV), mode=mode)
    _close(got_r, want_r, dtype, "R")
    if mode == "r":
        return
    _close(got_q, want_q, dtype, "Q")
    _close(got_q @ got_r, a, dtype, "Q R = A")
    if mode == "reduced":
        both = lambda x: flow.cat([q.flatten(-2) for q in flow.linalg.qr(x)], -1)  # noqa: E731
        want, got, gw, gg = _both(both, [a])
        _close(gg[0], gw[0], dtype, "qr gradient")


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_on_device(uplo, dtype):
    """cuSOLVER's syevd: eigenvalues as the CPU's (ascending), eigenvectors up to sign
    (A V = V diag(w)), gradients of sign-invariant losses. Eigenvalues at least 2 apart:
    eigenvector gradients scale with 1 / (w_i - w_j), and so does the rounding difference between
    LAPACK and cuSOLVER (a gap of 0.1 put float32 gradients 3e-4 apart)."""
    rng = np.random.default_rng(12)
    q = np.linalg.qr(rng.standard_normal((3, 5, 5)))[0]
    w = np.linspace(2.0, 10.0, 5) + rng.uniform(0, 0.5, (3, 5))
    a = flow.tensor(((q * w[:, None, :]) @ np.swapaxes(q, -1, -2)).astype(dtype))
    want_w, want_v = flow.linalg.eigh(a, UPLO=uplo)
    got_w, got_v = flow.linalg.eigh(a.to(DEV), UPLO=uplo)
    _close(got_w, want_w, dtype, "eigenvalues")
    _close(got_v.abs(), want_v.abs(), dtype, "|eigenvectors|")
    ad = a.to(DEV)
    _close(ad @ got_v, (got_v * got_w.unsqueeze(-2)).cpu(), dtype, "A V = V diag(w)")
    _close(flow.linalg.eigvalsh(ad, UPLO=uplo), want_w, dtype, "eigvalsh")
    loss = lambda x: flow.linalg.eigh(x, UPLO=uplo)[0] + (flow.linalg.eigh(x, UPLO=uplo)[1] ** 4).sum(-1)  # noqa: E731
    want, got, gw, gg = _both(loss, [a])
    _close(got, want, dtype, "loss")
    for g1, g2 in zip(gg, gw):
        _close(g1, g2, dtype, "eigh gradient")


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5)])
def test_svd_on_device(shape, full, dtype):
    """cuSOLVER's gesvd (a wide matrix through its transpose): singular values as the CPU's,
    singular vectors up to sign (U diag(S) Vh = A), svdvals / matrix_rank / pinv, and gradients
    of sign-invariant losses."""
    a = _mat(shape, dtype, seed=13)
    want_u, want_s, want_vh = flow.linalg.svd(a, full_matrices=full)
    got_u, got_s, got_vh = flow.linalg.svd(a.to(DEV), full_matrices=full)
    _close(got_s, want_s, dtype, "S")
    assert got_u.shape == want_u.shape and got_vh.shape == want_vh.shape
    k = min(shape[-2:])
    _close(got_u[..., :k].abs(), want_u[..., :k].abs(), dtype, "|U|")
    _close(got_vh[..., :k, :].abs(), want_vh[..., :k, :].abs(), dtype, "|Vh|")
    _close((got_u[..., :k] * got_s.unsqueeze(-2)) @ got_vh[..., :k, :], a, dtype, "U S Vh = A")
    _close(flow.linalg.svdvals(a.to(DEV)), want_s, dtype, "svdvals")
    _close(flow.linalg.pinv(a.to(DEV)), flow.linalg.pinv(a), dtype, "pinv")
    _close(flow.linalg.matrix_rank(a.to(DEV)), flow.linalg.matrix_rank(a), dtype, "matrix_rank")
    if not full:
        loss = lambda x: flow.linalg.svd(x, full_matrices=False)[1] + (flow.linalg.svd(x, full_matrices=False)[0] ** 4).sum(-2)  # noqa: E731,E501
        want, got, gw, gg = _both(loss, [a])
        _close(gg[0], gw[0], dtype, "svd gradient")
