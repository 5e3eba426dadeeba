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
