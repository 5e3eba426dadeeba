"""F.linear's two CPU paths (python/oneflow/nn/functional.py): fused_matmul_bias for floating
tensors of one dtype with a 1-D bias, matmul + add otherwise; both against PyTorch, forward and
backward, over the inputs that pick one or the other."""
import numpy as np
import pytest
import torch

from harness import flow


def _both(shape, seed, dtype="float32"):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize("x_shape", [(5,), (4, 5), (2, 3, 5), (3, 0, 5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_matches_torch(x_shape, dtype, with_bias):
    fx, tx = _both(x_shape, 0, dtype)
    fw, tw = _both((6, 5), 1, dtype)
    fb, tb = _both((6,), 2, dtype) if with_bias else (None, None)
    fo, to = flow.nn.functional.linear(fx, fw, fb), torch.nn.functional.linear(tx, tw, tb)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = np.random.default_rng(3).standard_normal(tuple(to.shape)).astype(dtype)
    fo.backward(flow.tensor(g))
    to.backward(torch.tensor(g))
    pairs = [(fx, tx), (fw, tw)] + ([(fb, tb)] if with_bias else [])
    for f, t in pairs:
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_transposed_input_and_broadcast_bias():
    fx, tx = _both((5, 4), 4)
    fw, tw = _both((6, 5), 5)
    fb, tb = _both((1, 6), 6)  # not 1-D: the matmul + add path
    fo = flow.nn.functional.linear(fx.t(), fw, fb)
    to = torch.nn.functional.linear(tx.t(), tw, tb)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-5)
    fo.sum().backward()
    to.sum().backward()
    for f, t in ((fx, tx), (fw, tw), (fb, tb)):
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_no_grad_and_the_module():
    lin = flow.nn.Linear(7, 3)
    tlin = torch.nn.Linear(7, 3)
    with torch.no_grad():
        tlin.weight.copy_(torch.tensor(lin.weight.numpy()))
        tlin.bias.copy_(torch.tensor(lin.bias.numpy()))
    x = np.random.default_rng(7).standard_normal((9, 7)).astype("float32")
    with flow.no_grad():
        out = lin(flow.tensor(x))
    assert not out.requires_grad
    np.testing.assert_allclose(out.numpy(), tlin(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_mixed_dtypes_keep_the_composition_error():
    x = flow.ones(2, 3, dtype=flow.float64)
    w, b = flow.ones(4, 3), flow.ones(4)
    with pytest.raises(RuntimeError):
        torch.nn.functional.linear(torch.ones(2, 3, dtype=torch.float64), torch.ones(4, 3), torch.ones(4))
    with pytest.raises(RuntimeError):
        flow.nn.functional.linear(x, w, b)
