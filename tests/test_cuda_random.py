"""Random numbers on CUDA (src/cuda/random.cu): under the same seed the device draws the CPU's
numbers (Note [Philox offsets]: the same counter blocks, word layout and transforms), bit for bit
for uniforms, integers, Bernoulli draws, permutations and dropout masks, and to libm accuracy for
the transcendental transforms (normal, log-normal, exponential, Cauchy, geometric).
Marker ``cuda``: skipped with the reason where there is no device."""

import numpy as np
import pytest

import oneflow as flow
import oneflow.nn.functional as F

cuda = pytest.mark.cuda
DEV = "cuda"
FLOATS = ["float32", "float64", "float16", "bfloat16"]


def _pair(make, seed=7):
    """make(device) under the same seed on the CPU and on the device, as float64 numpy arrays."""
    out = []
    for dev in ("cpu", DEV):
        flow.manual_seed(seed)
        t = make(dev)
        assert t.device.type == dev
        out.append(t.cpu().to(flow.float64).numpy() if t.dtype != flow.bool else t.cpu().numpy())
    return out


@cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 5, 257, 1000, 70001])
def test_rand_is_the_cpu_stream(dtype, n):
    want, got = _pair(lambda d: flow.rand(n, dtype=getattr(flow, dtype), device=d))
    np.testing.assert_array_equal(got, want)


@cuda
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "float32", "bool"])
def test_randint_and_random_are_the_cpu_stream(dtype):
    lo, hi = (0, 2) if dtype == "bool" else (-5 if dtype != "uint8" else 0, 100)
    want, got = _pair(lambda d: flow.randint(lo, hi, (3, 333), device=d).to(getattr(flow, dtype)))
    np.testing.assert_array_equal(got, want)
    want, got = _pair(lambda d: flow.empty(999, dtype=flow.int64, device=d).random_(-(2 ** 40), 2 ** 40))
    np.testing.assert_array_equal(got, want)


@cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 2, 3, 255, 256, 257, 1001])  # odd batch tails take the spare word
def test_randn_and_normal_match_the_cpu(dtype, n):
    tol = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1e-2}[dtype]
    want, got = _pair(lambda d: flow.randn(n, dtype=getattr(flow, dtype), device=d))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    want, got = _pair(lambda d: flow.empty(n, dtype=getattr(flow, dtype), device=d).normal_(2.0, 0.5))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@cuda
@pytest.mark.parametrize("method,args", [("uniform_", (-2.0, 3.0)), ("exponential_", (1.5,)), ("cauchy_", (0.0, 2.0)),
                                         ("log_normal_", (0.0, 0.5)), ("geometric_", (0.3,)), ("bernoulli_", (0.3,))])
def test_in_place_fills_match_the_cpu(method, args):
    for dtype in ("float32", "float64"):
        want, got = _pair(lambda d: getattr(flow.empty(4, 513, dtype=getattr(flow, dtype), device=d), method)(*args))
        if method in ("uniform_", "bernoulli_"):
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@cuda
def test_bernoulli_with_probabilities_and_randperm():
    p = flow.rand(6, 50)
    want, got = _pair(lambda d: flow.bernoulli(p.to(d)))
    np.testing.assert_array_equal(got, want)
    want, got = _pair(lambda d: flow.randperm(1000, device=d))
    np.testing.assert_array_equal(got, want)
    with pytest.raises(RuntimeError, match="probabilities in \\[0, 1\\]"):
        flow.bernoulli(flow.tensor([0.5, 1.5], device=DEV))


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_dropout_masks_and_gradients_are_the_cpu_ones(dtype):
    x = flow.randn(8, 300).to(getattr(flow, dtype))
    outs, grads = [], []
    for dev in ("cpu", DEV):
        flow.manual_seed(11)
        xi = x.detach().to(dev).requires_grad_()
        y = F.dropout(xi, p=0.4, training=True)
        y.sum().backward()
        outs.append(y.detach().cpu().float().numpy())
        grads.append(xi.grad.cpu().float().numpy())
    np.testing.assert_array_equal(outs[1], outs[0])
    np.testing.assert_array_equal(grads[1], grads[0])
    kept = (outs[0] != 0).mean()
    assert 0.5 < kept < 0.7
    flow.manual_seed(11)
    m = flow.nn.Dropout(0.5).to(DEV)
    m.eval()
    z = x.float().to(DEV)
    np.testing.assert_array_equal(m(z).cpu().numpy(), z.cpu().numpy())


@cuda
def test_cuda_draws_advance_the_cuda_generator_only():
    flow.manual_seed(5)
    a = flow.rand(10, device=DEV)
    cpu_state = flow.get_rng_state()
    b = flow.rand(10, device=DEV)
    assert not np.array_equal(a.cpu().numpy(), b.cpu().numpy())
    assert np.array_equal(flow.get_rng_state().numpy(), cpu_state.numpy())


@cuda
def test_multinomial_and_poisson_are_the_cpu_draws():
    probs = flow.tensor([[0.1, 0.0, 0.5, 0.4], [1.0, 1.0, 1.0, 1.0]])
    for kw in (dict(num_samples=3), dict(num_samples=10, replacement=True)):
        want, got = _pair(lambda d: flow.multinomial(probs.to(d), **kw))
        np.testing.assert_array_equal(got, want)
    rate = flow.tensor([0.5, 3.0, 20.0, 0.0])
    want, got = _pair(lambda d: flow.poisson(rate.to(d)))
    np.testing.assert_array_equal(got, want)
    with pytest.raises(RuntimeError, match="probability"):
        flow.multinomial(flow.tensor([0.5, -1.0], device=DEV), 1)
