"""Linear-algebra names outside OneFlow's spec against torch (python/oneflow/linalg/:
_products.py, _solve.py, _eigen.py, _norms.py, _lu.py): multi_dot, vecdot, cond, solve_triangular, matrix_exp, tensorinv / tensorsolve,
complex vector norms, the LU family and eig."""

import numpy as np
import pytest
import torch

from harness import SHIM, flow
from names_util import both as _both, close as _close

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow's own names")
RNG = np.random.default_rng(0)


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
    # the eigenvalues' gradient (a real input's is the real part of the complex one)
    f, t = flow.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    flow.linalg.eigvals(f).abs().sum().backward()
    torch.linalg.eigvals(t).abs().sum().backward()
    _close(f.grad, t.grad, rtol=1e-8, atol=1e-10)


def test_frobenius_norm():
    """torch.frobenius_norm: the entries' 2-norm over one or two dims (dim is required)."""
    x = RNG.standard_normal((2, 3, 4))
    for dim in (1, (0, 2), (-2, -1)):
        for keepdim in (False, True):
            _close(*_both(lambda L, t: L.frobenius_norm(t, dim, keepdim=keepdim), x))
    c = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
    _close(*_both(lambda L, t: L.frobenius_norm(t, 1), c))
    with pytest.raises(RuntimeError, match="at most 2 dimensions"):
        flow.frobenius_norm(flow.tensor(x), (0, 1, 2))
