"""Batched float32 products small enough for the direct kernel (Note [Small batched products] in
src/kernels/gemm.cpp): every operand layout (row-major, transposed views, a broadcast batch of
stride 0), sizes off the 4x3 block and the 8-lane k, baddbmm's beta and alpha, the gradients and
the sizes at the kernel's edges, against PyTorch."""
import numpy as np
import pytest
import torch

from harness import flow


def _pair(shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    return flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(f, t, tol=1e-5):
    np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def _pair64(shape, seed):
    # the float64 twin: the reference for long sums, whose float32 rounding depends on the order
    a = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    return flow.tensor(a, requires_grad=True), torch.tensor(a.astype("float64"), requires_grad=True)


@pytest.mark.parametrize("m,k,n", [(27, 64, 27), (1, 1, 1), (5, 3, 7), (4, 8, 3), (13, 17, 11), (128, 9, 2),
                                   (2, 300, 128)])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_bmm_matches_torch_forward_and_backward(m, k, n, layout):
    a_shape = (6, m, k) if layout[0] == "n" else (6, k, m)
    b_shape = (6, k, n) if layout[1] == "n" else (6, n, k)
    fa, ta = _pair64(a_shape, 0)
    fb, tb = _pair64(b_shape, 1)
    tol = 1e-5 * max(k, 4) ** 0.5  # float32 rounding of a k-term sum, against float64
    fa2, ta2 = (fa, ta) if layout[0] == "n" else (fa.transpose(1, 2), ta.transpose(1, 2))
    fb2, tb2 = (fb, tb) if layout[1] == "n" else (fb.transpose(1, 2), tb.transpose(1, 2))
    fo, to = flow.bmm(fa2, fb2), torch.bmm(ta2, tb2)
    _close(fo, to, tol)
    g = np.random.default_rng(2).standard_normal(tuple(to.shape)).astype("float32")
    fo.backward(flow.tensor(g))
    to.backward(torch.tensor(g.astype("float64")))
    _close(fa.grad, ta.grad, 1e-5 * max(n, 4) ** 0.5)
    _close(fb.grad, tb.grad, 1e-5 * max(m, 4) ** 0.5)


def test_interaction_of_a_batch_with_itself():
    # DLRM's x @ x^T: both operands the same memory, k-contiguous
    fx, tx = _pair((512, 27, 64), 3)
    fo, to = flow.bmm(fx, fx.transpose(1, 2)), torch.bmm(tx, tx.transpose(1, 2))
    _close(fo, to, 1e-4)
    fo.sum().backward()
    to.sum().backward()
    _close(fx.grad, tx.grad, 1e-4)


def test_broadcast_batch_of_stride_zero():
    fa, ta = _pair((5, 9), 4)
    fb, tb = _pair((3, 9, 6), 5)
    fo = flow.bmm(fa.detach().unsqueeze(0).expand(3, 5, 9), fb.detach())
    to = torch.bmm(ta.detach().unsqueeze(0).expand(3, 5, 9), tb.detach())
    _close(fo, to)
    _close(flow.matmul(fa.detach(), fb.detach()), torch.matmul(ta.detach(), tb.detach()))


@pytest.mark.parametrize("beta,alpha", [(0.0, 1.0), (1.0, 1.0), (0.5, -2.0)])
def test_baddbmm_beta_alpha(beta, alpha):
    fc, tc = _pair((4, 7, 5), 6)
    fa, ta = _pair((4, 7, 10), 7)
    fb, tb = _pair((4, 10, 5), 8)
    _close(flow.baddbmm(fc, fa, fb, beta=beta, alpha=alpha), torch.baddbmm(tc, ta, tb, beta=beta, alpha=alpha))


def test_beta_zero_ignores_nan_in_the_input():
    c = np.full((3, 4, 4), np.nan, dtype="float32")
    a = np.ones((3, 4, 2), dtype="float32")
    out = flow.baddbmm(flow.tensor(c), flow.tensor(a), flow.tensor(a.transpose(0, 2, 1).copy()), beta=0.0)
    np.testing.assert_array_equal(out.numpy(), np.full((3, 4, 4), 2.0, dtype="float32"))


@pytest.mark.parametrize("m,k,n", [(129, 8, 4), (4, 8, 129), (64, 256, 64)])
def test_products_past_the_small_kernel_still_match(m, k, n):
    fa, ta = _pair((3, m, k), 9)
    fb, tb = _pair((3, k, n), 10)
    _close(flow.bmm(fa, fb), torch.bmm(ta, tb), 1e-4)


def test_special_values_propagate():
    a = np.ones((2, 3, 9), dtype="float32")
    a[0, 1, 4] = np.inf
    a[1, 2, 8] = np.nan
    b = np.ones((2, 9, 5), dtype="float32")
    _close(flow.bmm(flow.tensor(a), flow.tensor(b)), torch.bmm(torch.tensor(a), torch.tensor(b)))
