"""Householder products and LDL beyond the opinfo rows (tests/opinfo/linalg.py): their relation
to the decompositions they come from, LDL's singular case and the errors."""

import numpy as np
import pytest
import torch

import oneflow as flow

RNG = np.random.default_rng(7)


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_geqrf_then_householder_is_qr(dtype):
    A = RNG.standard_normal((2, 5, 3)).astype(dtype)
    if np.iscomplexobj(A):
        A = A + 1j * RNG.standard_normal(A.shape)
    a, tau = flow.geqrf(flow.tensor(A))
    Q = flow.linalg.householder_product(a, tau)
    Qr, R = flow.linalg.qr(flow.tensor(A))
    np.testing.assert_allclose(Q.numpy(), Qr.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.triu(a.numpy())[..., :3, :], R.numpy(), rtol=1e-10, atol=1e-12)
    # ormqr applies the full Q (m x m) without forming it
    C = RNG.standard_normal((2, 5, 4)).astype(dtype)
    full = flow.linalg.householder_product(flow.cat([a, flow.zeros(2, 5, 2, dtype=a.dtype)], -1),
                                           flow.cat([tau, flow.zeros(2, 2, dtype=tau.dtype)], -1))
    np.testing.assert_allclose(flow.ormqr(a, tau, flow.tensor(C)).numpy(), (full @ flow.tensor(C)).numpy(),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(flow.ormqr(a, tau, flow.tensor(C), transpose=True).numpy(),
                               (full.mH @ flow.tensor(C)).numpy(), rtol=1e-10, atol=1e-12)


def test_householder_gradient_ignores_upper_triangle():
    A = RNG.standard_normal((4, 3))
    tau = RNG.standard_normal(3)
    grads = []
    for lib in (flow, torch):
        a, t = lib.tensor(A, requires_grad=True), lib.tensor(tau, requires_grad=True)
        (lib.linalg.householder_product(a, t) ** 2).sum().backward()
        grads.append((a.grad, t.grad))
    np.testing.assert_allclose(_np(grads[0][0]), _np(grads[1][0]), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(_np(grads[0][1]), _np(grads[1][1]), rtol=1e-9, atol=1e-10)
    assert np.all(np.triu(grads[0][0].numpy()) == 0)


def test_ldl_reconstructs_and_solves():
    S = RNG.standard_normal((2, 5, 5))
    S = S + S.transpose(0, 2, 1)
    LD, piv, info = flow.linalg.ldl_factor_ex(flow.tensor(S))
    tLD, tpiv, tinfo = torch.linalg.ldl_factor_ex(torch.tensor(S))
    np.testing.assert_allclose(LD.numpy(), _np(tLD), rtol=1e-10, atol=1e-12)
    assert piv.dtype == flow.int32 and np.array_equal(piv.numpy(), tpiv.numpy())
    assert np.array_equal(info.numpy(), tinfo.numpy()) and info.dtype == flow.int32
    B = RNG.standard_normal((5, 3))
    X = flow.linalg.ldl_solve(LD, piv, flow.tensor(B))
    np.testing.assert_allclose(S @ X.numpy(), np.broadcast_to(B, (2, 5, 3)), rtol=1e-9, atol=1e-10)
    # int64 pivots are accepted, as PyTorch does
    np.testing.assert_allclose(flow.linalg.ldl_solve(LD, piv.long(), flow.tensor(B)).numpy(), X.numpy())


def test_ldl_singular_and_errors():
    Z = np.zeros((3, 3))
    LD, piv, info = flow.linalg.ldl_factor_ex(flow.tensor(Z))
    tLD, tpiv, tinfo = torch.linalg.ldl_factor_ex(torch.tensor(Z))
    assert info.item() == tinfo.item() == 1
    assert np.array_equal(piv.numpy(), tpiv.numpy())
    # PyTorch's ldl_factor fails there with an internal assert; ours is a LinAlgError
    with pytest.raises(flow.linalg.LinAlgError, match=r"D\(1,1\) is zero"):
        flow.linalg.ldl_factor(flow.tensor(Z))
    with pytest.raises(flow.linalg.LinAlgError, match=r"Batch element 1"):
        flow.linalg.ldl_factor_ex(flow.tensor(np.stack([np.eye(3), Z])), check_errors=True)
    with pytest.raises(RuntimeError, match="square"):
        flow.linalg.ldl_factor(flow.ones(2, 3, dtype=flow.float64))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        flow.linalg.ldl_factor(flow.ones(2, 2, dtype=flow.int32))
    LD, piv = flow.linalg.ldl_factor(flow.tensor(np.eye(3)))
    with pytest.raises(IndexError):
        flow.linalg.ldl_solve(LD, piv, flow.ones(3, dtype=flow.float64))
    with pytest.raises(RuntimeError, match="same dtype"):
        flow.linalg.ldl_solve(LD, piv, flow.ones(3, 1))
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes"):
        flow.linalg.ldl_solve(LD, piv, flow.ones(2, 1, dtype=flow.float64))
    with pytest.raises(RuntimeError, match="not implemented"):
        x = flow.tensor(np.eye(3) * 2, requires_grad=True)
        flow.linalg.ldl_factor(x)[0].sum().backward()


def test_householder_errors():
    A = flow.randn(4, 3, dtype=flow.float64)
    with pytest.raises(RuntimeError, match="tau dtype Float does not match input dtype Double"):
        flow.linalg.householder_product(A, flow.randn(2))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        flow.linalg.householder_product(flow.randn(3), flow.randn(1))
    with pytest.raises(RuntimeError, match=r"tau.shape\[-1\] must be equal to min"):
        flow.ormqr(A, flow.randn(2, dtype=flow.float64), flow.randn(4, 2, dtype=flow.float64))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        flow.ormqr(A.expand(2, 4, 3), flow.randn(2, 3, dtype=flow.float64), flow.randn(4, 2, dtype=flow.float64))
    with pytest.raises(RuntimeError, match="not implemented"):
        x = flow.randn(3, 3, requires_grad=True)
        flow.geqrf(x)[0].sum().backward()


@pytest.mark.parametrize("left,transpose", [(True, False), (True, True), (False, False), (False, True)])
def test_composite_and_lapack_paths_agree(left, transpose):
    """Without a gradient the products run on LAPACK (orgqr/ormqr); with one, on the
    differentiable composite: both give the same values, also for complex input."""
    A = RNG.standard_normal((2, 5, 3)) + 1j * RNG.standard_normal((2, 5, 3))
    C = RNG.standard_normal((2, 5, 4) if left else (2, 4, 5)) + 1j * RNG.standard_normal((2, 5, 4) if left else (2, 4, 5))
    a, tau = flow.geqrf(flow.tensor(A))
    fast = flow.ormqr(a, tau, flow.tensor(C), left=left, transpose=transpose)
    slow = flow.ormqr(a.clone().requires_grad_(), tau, flow.tensor(C), left=left, transpose=transpose)
    assert slow.requires_grad and not fast.requires_grad
    np.testing.assert_allclose(slow.detach().numpy(), fast.numpy(), rtol=1e-10, atol=1e-12)
    q_fast = flow.linalg.householder_product(a, tau)
    q_slow = flow.linalg.householder_product(a, tau.clone().requires_grad_())
    np.testing.assert_allclose(q_slow.detach().numpy(), q_fast.numpy(), rtol=1e-10, atol=1e-12)
