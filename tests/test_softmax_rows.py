"""The contiguous-row softmax kernels (src/ops/softmax_ops.cpp ForwardRows, kernels/row_math.h)
against torch: row lengths around the vector width (lane accumulators plus a scalar tail),
1-element and zero-size rows, more rows than one tile (64), non-contiguous inputs, rows of -inf / +inf / NaN, every float
dtype, the backward ops; and the exp of non-positive arguments those kernels use
(vec_math.h ExpNonPositiveFloat), which must give ExpFloat's bits.
"""

import numpy as np
import pytest
import torch

from harness import flow

OPS = ["softmax", "log_softmax"]
# 1, the float lane count (8) and around it, 16-float rows, lengths with tails, long rows
LENGTHS = [1, 2, 7, 8, 9, 15, 16, 17, 33, 100, 128, 129, 1000]


def _both(fn, a, dtype="float32", **kw):
    got = fn(flow, flow.tensor(a).to(getattr(flow, dtype)), **kw)
    want = fn(torch, torch.tensor(a).to(getattr(torch, dtype)), **kw)
    return got.float().numpy(), want.float().numpy()


def _tol(dtype):
    # absolute: log_softmax's values reach ~ -15, where one float32 ulp is 1e-6
    return {"float32": dict(rtol=2e-6, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-15),
            "float16": dict(rtol=4e-3, atol=1e-4), "bfloat16": dict(rtol=2e-2, atol=1e-3)}[dtype]


@pytest.mark.parametrize("op", OPS + ["softmin"])
@pytest.mark.parametrize("n", LENGTHS)
def test_row_lengths(op, n):
    rng = np.random.default_rng(0)
    a = rng.uniform(-6, 6, size=(137, n)).astype(np.float32)  # 2 tiles of 64 rows and a part
    lib_fn = (lambda lib, t: lib.nn.functional.softmin(t, -1)) if op == "softmin" else \
        (lambda lib, t: getattr(lib, op)(t, -1))
    np.testing.assert_allclose(*_both(lib_fn, a), **_tol("float32"))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [1, 9, 128, 131])
def test_row_dtypes(op, dtype, n):
    rng = np.random.default_rng(0)
    a = rng.uniform(-4, 4, size=(19, n))
    np.testing.assert_allclose(*_both(lambda lib, t: getattr(lib, op)(t, -1), a, dtype), **_tol(dtype))


@pytest.mark.parametrize("op", OPS)
def test_many_short_rows_threaded(op):
    rng = np.random.default_rng(0)
    # 8192 x 128 is the benchmarked shape: enough rows for every thread
    a = rng.standard_normal((8192, 128)).astype(np.float32)
    np.testing.assert_allclose(*_both(lambda lib, t: getattr(lib, op)(t, 1), a), **_tol("float32"))


@pytest.mark.parametrize("op", OPS)
def test_zero_size_and_noncontiguous(op):
    rng = np.random.default_rng(0)
    for shape in [(0, 5), (5, 0), (0, 0)]:
        got = getattr(flow, op)(flow.zeros(shape), -1)
        assert tuple(got.shape) == shape
    a = rng.uniform(-3, 3, size=(40, 66)).astype(np.float32)
    for view in (lambda t: t.t(), lambda t: t[:, ::3], lambda t: t[::2, 1:-1]):
        got = getattr(flow, op)(view(flow.tensor(a)), -1)
        want = getattr(torch, op)(view(torch.tensor(a)), -1)
        np.testing.assert_allclose(got.numpy(), want.numpy(), **_tol("float32"))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", [3, 8, 20, 128])
def test_special_rows(op, n):
    rng = np.random.default_rng(0)
    inf, nan = np.inf, np.nan
    rows = [np.full(n, -inf), np.full(n, inf), np.full(n, nan), np.zeros(n), np.full(n, 1e30),
            np.full(n, -1e30)]
    for k in (0, n // 2, n - 1):
        for v in (inf, -inf, nan, 1e4, -1e4):
            r = rng.uniform(-2, 2, size=n)
            r[k] = v
            rows.append(r)
    a = np.stack(rows).astype(np.float32)
    got, want = _both(lambda lib, t: getattr(lib, op)(t, -1), a)
    np.testing.assert_allclose(got, want, **_tol("float32"), equal_nan=True)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 9, 16, 128, 129])
def test_row_backward(op, dtype, n):
    rng = np.random.default_rng(0)
    a = rng.uniform(-3, 3, size=(21, n))
    g = rng.uniform(-1, 1, size=(21, n))
    grads = []
    for lib in (flow, torch):
        x = lib.tensor(a).to(getattr(lib, dtype)).requires_grad_()
        getattr(lib, op)(x, -1).backward(lib.tensor(g).to(getattr(lib, dtype)))
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], **_tol(dtype))


def test_exp_non_positive_matches_exp_float():
    """softmax of the row [0, v] (v <= 0) is e / (1 + e) with e = exp(v), computed by the kernel
    as e * (1 / (1 + e)) in float32: with flow.exp's e (ExpFloat) that is bit-exact if the
    kernel's exp of v gives ExpFloat's bits. Non-positive float32 bit patterns are sampled
    evenly (every 997th), with -0, the smallest subnormal, the cut-off of exp's underflow and
    -inf added."""
    bits = np.arange(0x80000000, 0xFF800001, 997, dtype=np.uint64).astype(np.uint32)
    v = np.concatenate([bits.view(np.float32), np.float32([-0.0, -1e-45, -103.972084, -103.97209,
                                                          -87.33655, -np.inf])])
    pair = np.stack([np.zeros_like(v), v], axis=1)
    got = flow.softmax(flow.tensor(pair), 1).numpy()[:, 1]
    e = flow.exp(flow.tensor(v)).numpy()
    want = e * (np.float32(1) / (np.float32(1) + e))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
