"""Complex linear algebra against PyTorch: what the opinfo table (tests/opinfo/linalg.py, which
runs every LAPACK op over complex64/complex128 forward and backward) does not reach: eigenvectors
of non-Hermitian matrices and their gradient, the phase (gauge) checks of the decompositions'
backward, the Python composites (lu family, triangular and Cholesky solves, matrix_exp, cond,
lstsq), Tensor.mH / .H, higher-order gradients and the errors."""

import numpy as np
import pytest
import torch

import oneflow as flow

RNG = np.random.default_rng(20261127)


def _c(shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy()
    return t.detach().numpy()


def _close(got, want, rtol=1e-9, atol=1e-10):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    np.testing.assert_allclose(_np(got), _np(want), rtol=rtol, atol=atol)


def _pair(a, grad=False):
    return flow.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def _canon(v):
    """Each column divided by the phase of its largest entry: eigenvectors are unique up to it."""
    v = _np(v)
    idx = np.abs(v).argmax(-2)[..., None, :]
    ph = np.take_along_axis(v, idx, -2)
    return v / (ph / np.abs(ph))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_eig_complex_input(dtype):
    A = _c((2, 4, 4), dtype)
    w, V = flow.linalg.eig(flow.tensor(A))
    tw, tV = torch.linalg.eig(torch.tensor(A))
    tol = 1e-4 if dtype == np.complex64 else 1e-9
    _close(w, tw, rtol=tol, atol=tol)
    np.testing.assert_allclose(_canon(V), _canon(tV), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.linalg.norm(_np(V), axis=-2), 1.0, rtol=tol)
    np.testing.assert_allclose(A @ _np(V), _np(V) * _np(w)[..., None, :], rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("real", [False, True])
def test_eig_gradient_through_phase_free_loss(real):
    """|V| and the eigenvalues do not depend on the eigenvectors' phases: the loss is well
    defined, and the gradient (real part for a real A) matches PyTorch's."""
    A = RNG.standard_normal((3, 3)) if real else _c((3, 3))
    weights = RNG.standard_normal((3, 3))
    grads = []
    for lib in (flow, torch):
        x = lib.tensor(A, requires_grad=True)
        w, V = lib.linalg.eig(x)
        loss = (V.abs() * lib.tensor(weights)).sum() + (w * w.conj()).real.sum() + w.imag.sum()
        loss.backward()
        grads.append(x.grad)
    _close(*grads, rtol=1e-7, atol=1e-9)


def test_phase_dependent_losses_raise():
    """A loss on a complex singular/eigen vector's phase is ill-defined: the backward refuses it
    (RuntimeError naming the op), as PyTorch's does."""
    A = _c((3, 3))
    H = A @ A.conj().T
    cases = [
        (A, lambda L, x: L.linalg.svd(x)[0].real.sum(), "svd"),
        (A, lambda L, x: L.linalg.svd(x, full_matrices=False)[2].imag.sum(), "svd"),
        (H, lambda L, x: L.linalg.eigh(x)[1].real.sum(), "eigh"),
        (A, lambda L, x: L.linalg.eig(x)[1].real.sum(), "eig"),
    ]
    for a, loss_fn, name in cases:
        t = torch.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError):
            loss_fn(torch, t).backward()
        f = flow.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError, match=f"linalg.{name}.*phase"):
            loss_fn(flow, f).backward()


def test_mH_and_H_conjugate():
    a = _c((2, 3, 4))
    f, t = _pair(a, grad=True)
    _close(f.mH, t.mH)
    _close(f[0].H, t[0].H)
    _close(f.adjoint(), t.adjoint())
    g = _c((2, 4, 3))
    f.mH.backward(flow.tensor(g))
    t.mH.backward(torch.tensor(g))
    _close(f.grad, t.grad)
    r = RNG.standard_normal((3, 2))
    _close(flow.tensor(r).mH, torch.tensor(r).mH)
    with pytest.raises(RuntimeError, match="mH"):
        flow.tensor(a[0, 0]).mH
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
        flow.tensor(a[0, 0]).H
    _close(flow.tensor(a[0, 0, 0]).H, torch.tensor(a[0, 0, 0]).conj())


def test_lu_family():
    A, B = _c((2, 3, 3)), _c((2, 3, 2))
    (fA, tA), (fB, tB) = _pair(A), _pair(B)
    for fr, tr in zip(flow.linalg.lu(fA), torch.linalg.lu(tA)):
        _close(fr, tr)
    fLU, fpiv = flow.linalg.lu_factor(fA)
    tLU, tpiv = torch.linalg.lu_factor(tA)
    _close(fLU, tLU)
    for kw in ({}, {"adjoint": True}):
        _close(flow.linalg.lu_solve(fLU, fpiv, fB, **kw), torch.linalg.lu_solve(tLU, tpiv, tB, **kw))
    _close(flow.linalg.lu_solve(fLU, fpiv, fB.mT, left=False), torch.linalg.lu_solve(tLU, tpiv, tB.mT, left=False))
    for fr, tr in zip(flow.lu_unpack(fLU, fpiv), torch.lu_unpack(tLU, tpiv)):
        _close(fr, tr)
    # the LU gradient (python/oneflow/linalg/_lu.py's Function) with complex cotangents
    (fA, tA) = _pair(A, grad=True)
    gP, gL, gU = _c((2, 3, 3)), _c((2, 3, 3)), _c((2, 3, 3))
    for lib, x in ((flow, fA), (torch, tA)):
        P, L, U = lib.linalg.lu(x)
        ((L * lib.tensor(gL).conj()).real.sum() + (U * lib.tensor(gU).conj()).real.sum()).backward()
    _close(fA.grad, tA.grad, rtol=1e-8, atol=1e-9)


def test_triangular_and_cholesky_solves():
    A, B = _c((3, 3)) + 3 * np.eye(3), _c((3, 2))
    H = A @ A.conj().T
    L = np.linalg.cholesky(H)
    (fA, tA), (fB, tB), (fL, tL) = _pair(A), _pair(B), _pair(L)
    for kw in ({"upper": True}, {"upper": False, "left": True}, {"upper": True, "unitriangular": True}):
        tri = fA.triu() if kw["upper"] else fA.tril()
        ttri = tA.triu() if kw["upper"] else tA.tril()
        _close(flow.linalg.solve_triangular(tri, fB, **kw), torch.linalg.solve_triangular(ttri, tB, **kw))
    _close(flow.cholesky_solve(fB, fL), torch.cholesky_solve(tB, tL))
    _close(flow.cholesky_solve(fB, fL.mH, upper=True), torch.cholesky_solve(tB, tL.mH, upper=True))
    _close(flow.cholesky_inverse(fL), torch.cholesky_inverse(tL))
    _close(flow.cholesky_inverse(fL.mH, upper=True), torch.cholesky_inverse(tL.mH, upper=True))
    _close(flow.linalg.cholesky(flow.tensor(H), upper=True), torch.linalg.cholesky(torch.tensor(H), upper=True))


def test_composites():
    A = _c((2, 3, 3)) + 2 * np.eye(3)
    for name, fn in [
        ("matrix_exp", lambda L, x: L.linalg.matrix_exp(x)),
        ("cond", lambda L, x: L.linalg.cond(x)),
        # (torch's own cond backward for p != 2 fails: "modified by an inplace operation")
        ("cond fro", lambda L, x: L.linalg.cond(x, "fro") if L is flow
         else L.linalg.matrix_norm(x, "fro") * L.linalg.matrix_norm(L.linalg.inv(x), "fro")),
        ("matrix_norm nuc", lambda L, x: L.linalg.matrix_norm(x, "nuc")),
        ("matrix_norm 2", lambda L, x: L.linalg.matrix_norm(x, 2)),
        ("matrix_power -3", lambda L, x: L.linalg.matrix_power(x, -3)),
        ("logdet", lambda L, x: L.logdet(x)),
        ("pinv", lambda L, x: L.linalg.pinv(x)),
        ("pinv hermitian", lambda L, x: L.linalg.pinv(x @ x.mH, hermitian=True)),
        ("inv", lambda L, x: L.linalg.inv(x)),
    ]:
        fA, tA = _pair(A, grad=True)
        got, want = fn(flow, fA), fn(torch, tA)
        _close(got, want, rtol=1e-8, atol=1e-9)
        g = _c(tuple(got.shape)) if got.dtype.is_complex else RNG.standard_normal(tuple(got.shape))
        fg, = flow.autograd.grad(got, fA, flow.tensor(g))
        tg, = torch.autograd.grad(want, tA, torch.tensor(g))
        _close(fg, tg, rtol=1e-7, atol=1e-8)
    # logdet of a matrix with a negative real determinant: log|det| + i pi, as PyTorch
    neg = np.array([[0.0, 1.0], [1.0, 0.5]], np.complex128)
    _close(flow.logdet(flow.tensor(neg)), torch.logdet(torch.tensor(neg)))
    _close(flow.linalg.matrix_rank(flow.tensor(A[0] @ A[0].conj().T), hermitian=True),
           torch.linalg.matrix_rank(torch.tensor(A[0] @ A[0].conj().T), hermitian=True))
    T4 = _c((4, 2, 2))
    _close(flow.linalg.tensorinv(flow.tensor(T4), ind=1), torch.linalg.tensorinv(torch.tensor(T4), ind=1))


def test_lstsq_complex():
    A, B = _c((5, 3)), _c((5, 2))
    fA, tA = _pair(A)
    fB, tB = _pair(B)
    got, want = flow.linalg.lstsq(fA, fB, driver="gelsd"), torch.linalg.lstsq(tA, tB, driver="gelsd")
    _close(got.solution, want.solution)
    _close(got.residuals, want.residuals)  # real: |A x - B|^2 per column
    _close(got.singular_values, want.singular_values)
    assert got.rank.item() == want.rank.item() == 3
    # the default driver (gelsy) reports no residuals, with the real dtype
    _close(flow.linalg.lstsq(fA, fB).residuals, torch.linalg.lstsq(tA, tB).residuals)


def test_second_order():
    """The backward formulas are differentiable table ops: the gradient of a gradient (complex
    det and inverse) matches PyTorch's."""
    A = _c((3, 3)) + 2 * np.eye(3)
    out = []
    for lib in (flow, torch):
        x = lib.tensor(A, requires_grad=True)
        g, = lib.autograd.grad(lib.linalg.det(x).abs(), x, create_graph=True)
        h, = lib.autograd.grad((lib.linalg.inv(x) * g).abs().sum(), x)
        out.append(h)
    _close(*out, rtol=1e-7, atol=1e-9)


def test_errors():
    A = _c((3, 3))
    with pytest.raises(RuntimeError, match="Low precision"):
        flow.linalg.inv(flow.tensor(A.real.astype(np.float16)))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        flow.linalg.det(flow.ones(3, 3, dtype=flow.int64))
    with pytest.raises(RuntimeError, match="square"):
        flow.linalg.inv(flow.tensor(A[:, :2]))
    singular = np.array([[1, 2j], [1, 2j]])
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.inv(torch.tensor(singular))
    with pytest.raises(flow.linalg.LinAlgError, match="singular"):
        flow.linalg.inv(flow.tensor(singular))
    with pytest.raises(flow.linalg.LinAlgError, match="positive-definite"):
        flow.linalg.cholesky(flow.tensor(-np.eye(2, dtype=np.complex64)))
    with pytest.raises(RuntimeError, match="same dtype"):
        flow.linalg.solve(flow.tensor(A), flow.tensor(A.real))
