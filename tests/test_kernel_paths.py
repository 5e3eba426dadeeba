"""Kernel paths that the OpInfo samples are too small to reach, against numpy / torch:

* reductions whose innermost kept dim is contiguous (sum(dim=0), a middle dim; the "lines"
  path of kernels/reduce.h, its lines split over threads), reductions as runs of a contiguous
  innermost reduced dim, and the vectorised contiguous max/min/argmax, with NaN, ties,
  integers and zero-size dims;
* float exp / tanh / sigmoid (vectorised forms in kernels/vec_math.h) over their whole range
  against a float64 reference, subnormal results of exp included; the functions on SLEEF
  (kernels/sleef_map.h) against torch, contiguous and strided;
* matmul of a batch with a matrix (folded into one GEMM) and its gradients;
* split / chunk into more pieces than a shape has dims, unbind's single backward node;
* autograd.Function saving None;
* index_select slices copied as 1, 2, 4 or any other number of words.
"""
import numpy as np
import pytest
import torch

from harness import DEFAULT_TOL, flow

RNG = np.random.default_rng(0)


# ---------------------------------------------------------------------------
# reductions

_SHAPES = [((8, 8, 32, 33), 1), ((64, 40, 17), 1), ((1030, 70), 0), ((3, 2100, 5), 1),
           ((5, 6, 7), (0, 2)), ((2, 3, 4, 5), (1, 2)), ((3, 0, 4), 1), ((3, 4, 0), 1)]


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("shape,dim", _SHAPES, ids=[f"{s}-{d}" for s, d in _SHAPES])
def test_reduce_lines_float(op, shape, dim):
    a = RNG.uniform(0.5, 1.5, size=shape).astype(np.float32)
    if a.size and op in ("amax", "amin"):
        a.reshape(-1)[::97] = np.nan  # NaN propagates through every path
    t = torch.tensor(a)
    if a.size == 0 and op in ("amax", "amin") and 0 in [shape[d] for d in np.atleast_1d(dim)]:
        with pytest.raises(RuntimeError):
            getattr(flow.tensor(a), op)(dim)
        return
    want = getattr(t, op)(dim) if op != "prod" or isinstance(dim, int) else t.prod(dim[0], keepdim=True).prod(dim[1])
    if op == "prod" and not isinstance(dim, int):
        got = flow.tensor(a).prod(dim[0], keepdim=True).prod(dim[1])
    else:
        got = getattr(flow.tensor(a), op)(dim)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("op", ["sum", "amax", "amin"])
def test_reduce_lines_dtypes(op, dtype):
    a = RNG.integers(0, 100, size=(6, 300, 7))
    t = torch.tensor(a).to(getattr(torch, dtype))
    f = flow.tensor(a).to(getattr(flow, dtype))
    for dim in (0, 1, 2, -1):
        got, want = getattr(f, op)(dim), getattr(t, op)(dim)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


# Views whose innermost reduced dim is contiguous but whose reduced dims do not merge: reduced as
# runs of that dim (kernels/reduce.h), also when the threads split one output's range mid-run.
_RUN_CASES = [((41, 29, 64), (slice(None), slice(None), slice(0, 47)), None),
              ((8, 16, 20, 20), (), (0, 2, 3)), ((6, 7, 300), (slice(None), slice(1, 6)), (0, 2)),
              ((51, 2000), (slice(None), slice(3, 1900)), None)]


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "prod", "all", "any", "argmax", "argmin"])
@pytest.mark.parametrize("shape,index,dim", _RUN_CASES, ids=[str(c[0]) for c in _RUN_CASES])
def test_reduce_runs(op, shape, index, dim):
    a = RNG.uniform(0.9, 1.1, size=shape).astype(np.float32)
    if op in ("all", "any"):
        a = a > 0.92
    if op in ("argmax", "argmin") and dim is not None:
        dim = dim[-1]  # one dim only
    t, f = torch.tensor(a)[index], flow.tensor(a)[index]
    if op == "prod" and dim is not None:
        want, got = t, f
        for d in sorted(dim, reverse=True):
            want, got = want.prod(d), got.prod(d)
    elif dim is None:
        want, got = getattr(t, op)(), getattr(f, op)()
    else:
        want, got = getattr(t, op)(dim), getattr(f, op)(dim)
    w = want.double().numpy() if op not in ("argmax", "argmin", "all", "any") else want.numpy()
    np.testing.assert_allclose(got.numpy().astype(w.dtype), w, rtol=2e-5)


# prod of contiguous rows multiplies 16 lanes of partial products (ProdR::StepContig): every row
# length around the lane count and its tail, zeros / infinities / NaN in the lanes or the tail,
# and integers, whose wrapping products must equal torch's exactly.
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8"])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 33, 1000])
def test_prod_rows_in_lanes(dtype, n):
    if dtype.startswith("float"):
        a = RNG.uniform(0.8, 1.25, size=(6, n)).astype(dtype)
        a[1, n // 2] = 0
        a[2, n - 1] = np.inf
        a[3, 0] = np.nan
        a[4, n // 3], a[4, n - 1] = np.inf, 0  # inf * 0 anywhere in the row: NaN
    else:
        a = RNG.integers(1, 7, size=(6, n)).astype(dtype)  # int products wrap (mod 2^bits)
        a[1, n - 1] = 0
    got, want = flow.tensor(a).prod(1), torch.tensor(a).prod(1)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if dtype.startswith("float"):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6 if dtype == "float32" else 1e-13,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("shape,dim", [((20000, 3), 0), ((4000, 700), 0), ((2, 9000, 40), 1)])
def test_reduce_lines_float_sum_accuracy(shape, dim):
    # Lines of float32 are added in float blocks carried into double (SumR's kLineBlock): the
    # result stays within a few float ulps of the float64 sum, however many lines.
    a = RNG.standard_normal(shape).astype(np.float32) + 3
    want = a.astype(np.float64).sum(dim)
    got = flow.tensor(a).sum(dim).numpy()
    np.testing.assert_allclose(got, want, rtol=3e-7, atol=0)
    np.testing.assert_allclose(flow.tensor(a).mean(dim).numpy(), want / shape[dim], rtol=3e-7, atol=0)


@pytest.mark.parametrize("op", ["argmax", "argmin", "max", "min"])
@pytest.mark.parametrize("shape,dim", [((300, 130), 1), ((130, 300), 0), ((4, 5000), 1), ((5000,), 0)])
def test_arg_extremes_ties_and_nan(op, shape, dim):
    a = RNG.integers(0, 5, size=shape).astype(np.float32)  # many ties: the first index wins
    a.reshape(-1)[7::1000] = -np.inf
    for data in (a, np.where(np.arange(a.size).reshape(shape) % 777 == 5, np.nan, a).astype(np.float32)):
        got, want = getattr(flow.tensor(data), op)(dim), getattr(torch.tensor(data), op)(dim)
        if op in ("max", "min"):  # a namedtuple oneflow.return_types.max / .min, as in torch
            assert type(got).__module__ == "oneflow.return_types" and type(got).__name__ == op
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
            got, want = got.indices, want.indices
        np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---------------------------------------------------------------------------
# tanh / sigmoid


# clamp with number bounds: one branch-free pass, a missing bound as the type's extreme, a NaN
# bound making every result NaN (ops/math_ops.cpp, ClampNumbers).
# Integer pow with tensor exponents: negative ones are allowed (only a Python number exponent is
# refused) and give 1 / a^|b| truncated, as PyTorch: 1 for a = 1, +-1 for a = -1, else 0.
@pytest.mark.parametrize("da,db", [("int64", "int64"), ("int32", "int64"), ("int8", "int32"), ("uint8", "int64"),
                                   ("int32", "uint8"), ("int8", "int8")])
def test_integer_pow_tensor_exponents(da, db):
    a = np.array([2, 3, 1, -1, -1, 0, -2, 5, 0, 7], dtype=np.int64)
    b = np.array([-1, -2, -5, -3, -2, -1, -1, 3, 0, 2], dtype=np.int64)
    if da == "uint8":
        a = np.abs(a)
    if db == "uint8":
        b = np.abs(b)
    ta, tb = torch.tensor(a).to(getattr(torch, da)), torch.tensor(b).to(getattr(torch, db))
    fa, fb = flow.tensor(a).to(getattr(flow, da)), flow.tensor(b).to(getattr(flow, db))
    for got, want in ((fa ** fb, ta ** tb), (flow.pow(2, fb), torch.pow(2, tb)),
                      (fa[::2] ** fb[1::2], ta[::2] ** tb[1::2])):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "uint8"])
@pytest.mark.parametrize("lo,hi", [(-0.5, 0.5), (None, 0.5), (-0.5, None), (1.0, -1.0), (0.0, 0.0),
                                   (float("nan"), 1.0), (0.0, float("nan"))])
def test_clamp_number_bounds(dtype, lo, hi):
    is_int = dtype in ("int32", "uint8")
    if is_int and ((lo is not None and lo != lo) or (hi is not None and hi != hi)):
        return  # a NaN bound for an integer tensor: both libraries refuse to convert it
    rng = np.random.default_rng(2)
    x = rng.standard_normal(70001) * (3 if not is_int else 40)
    if not is_int:
        x[:8] = [np.nan, -np.inf, np.inf, -0.0, 0.0, 0.5, -0.5, 1e-3]
    if is_int:
        lo, hi = (None if lo is None else int(lo * 20) + 5), (None if hi is None else int(hi * 20) + 5)
    t = torch.tensor(x).to(getattr(torch, dtype))
    f = flow.tensor(x).to(getattr(flow, dtype))
    want = t.clamp(lo, hi).double().numpy()
    for got in (f.clamp(lo, hi), f[::2].clamp(lo, hi), f.clone().clamp_(lo, hi)):
        g = got.double().numpy()
        w = want[::2] if len(g) < len(want) else want
        np.testing.assert_array_equal(g, w)
        assert (np.signbit(g) == np.signbit(w))[w == w].all()  # (a NaN's sign is not specified)


# pow with a number exponent over contiguous float / double runs (PowFunctor::BlockScalarB): the
# exponents torch special-cases give torch's results, the others SLEEF's pow, within a few ulps of
# numpy's power in the tensor's dtype (the exponent rounded to it, as flow's type promotion does).
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("e", [2, 3, 0.5, -0.5, -1, -2, 2.5, -1.5, 0.3, 7, -3, 0, 1, 1e10, float("nan"),
                               float("inf"), -float("inf")])
def test_pow_number_exponent(dtype, e):
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(5001) * 3, [0.0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 2, -2,
                                                         1e-30, 1e30, 0.5, -0.5]]).astype(dtype)
    if e in (2, 3, 0.5, -0.5, -1, -2):
        want = torch.tensor(x).pow(e).numpy()
    else:
        with np.errstate(all="ignore"):
            want = np.power(x, np.asarray(e, dtype=dtype))
    tol = dict(rtol=4 * np.finfo(dtype).eps, atol=0, equal_nan=True)
    f = flow.tensor(x)
    for got in (f.pow(e), f ** e, flow.tensor(np.stack([x, x], 1))[:, 0].pow(e), f.clone().pow_(e)):
        g = got.numpy()
        np.testing.assert_allclose(g, want, **tol)
        assert (np.signbit(g) == np.signbit(want))[want == want].all()


# Note [SLEEF blocks]: contiguous float / double runs of these ops go to SLEEF's vector kernels
# (1 ulp; erfc 1.5), strided ones to libm. Both are checked against torch over each function's
# range, its edges and special values (subnormal results to a few subnormal steps), odd lengths
# leaving a tail, and in place.
_SLEEF = {"sin": (-1e4, 1e4), "cos": (-1e4, 1e4), "tan": (-1e3, 1e3), "asin": (-1, 1), "acos": (-1, 1),
          "atan": (-1e6, 1e6), "sinh": (-95, 95), "cosh": (-95, 95), "atanh": (-1, 1), "erf": (-6, 6),
          "erfc": (-6, 30), "log": (0, 1e6), "log2": (0, 1e6), "log10": (0, 1e6), "log1p": (-1, 1e6),
          "exp2": (-160, 130), "expm1": (-100, 90), "lgamma": (-50, 1e4)}
_SPECIAL_VALUES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, -3.0, 1e-40, -1e-40, 1e30,
                   -1e30, 88.5, 89.2, -89.2, 709.5, -709.5, 710.2, 1e300, 0.5, -0.5]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(_SLEEF))
def test_sleef_unary_against_torch(name, dtype):
    lo, hi = _SLEEF[name]
    rng = np.random.default_rng(1)
    with np.errstate(over="ignore"):  # 1e300 -> inf in float32
        x = np.concatenate([rng.uniform(lo, hi, 3001), rng.uniform(-2, 2, 500), _SPECIAL_VALUES]).astype(dtype)
    # float32 against torch's float64 result rounded to float32: torch's own float32 sinh/cosh
    # overflow from 88.9 (its SLEEF) where the results are still finite up to 89.4.
    want = getattr(torch, name)(torch.tensor(x).double()).to(getattr(torch, dtype)).numpy()
    tol = dict(rtol=4 * np.finfo(dtype).eps, atol=4 * np.finfo(dtype).smallest_subnormal, equal_nan=True)
    for got in (getattr(flow, name)(flow.tensor(x)),  # contiguous: SLEEF
                getattr(flow, name)(flow.tensor(np.stack([x, x], 1))[:, 0]),  # strided view: libm
                getattr(flow, name)(flow.tensor(x[:-1])),  # another tail length
                getattr(flow.Tensor, name + "_")(flow.tensor(x))):  # in place
        got = got.numpy()
        n = len(got)
        np.testing.assert_allclose(got, want[:n], **tol, err_msg=name)
        finite = np.isfinite(want[:n]) & (want[:n] != 0)
        assert (np.signbit(got) == np.signbit(want[:n]))[finite | (want[:n] == 0)].all(), name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", [("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 2.0}),
                                     ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 5.0}),
                                     ("logsigmoid", {})], ids=lambda v: str(v))
def test_sleef_compositions_against_torch(name, kw, dtype):
    # Activations composed of SLEEF kernels (SleefCompose): expm1, exp then log1p.
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.standard_normal(3001) * 10, rng.uniform(-100, 100, 500),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 20, -20, 88, -88, 89, -104, 1e-8, -1e-8]]).astype(dtype)
    want = getattr(torch.nn.functional, name)(torch.tensor(x), **kw).numpy()
    tol = dict(rtol=4 * np.finfo(dtype).eps, atol=4 * np.finfo(dtype).smallest_subnormal, equal_nan=True)
    fn = getattr(flow.nn.functional, name)
    for got in (fn(flow.tensor(x), **kw), fn(flow.tensor(np.stack([x, x], 1))[:, 0], **kw)):
        np.testing.assert_allclose(got.numpy(), want, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("eps", [None, 1e-6, 0.2, -1.0])
def test_logit_block_against_torch(eps, dtype):
    # logit's contiguous runs: the clamp and x / (1 - x) in a loop, the log on SLEEF.
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(0, 1, 3001), rng.uniform(-0.5, 1.5, 300),
                        [0.0, -0.0, 1.0, np.nan, np.inf, -np.inf, 1e-30, 1 - 1e-7, 0.5]]).astype(dtype)
    with np.errstate(all="ignore"):
        want = torch.logit(torch.tensor(x), eps=eps).numpy()
    tol = dict(rtol=4 * np.finfo(dtype).eps, atol=0, equal_nan=True)
    for got in (flow.logit(flow.tensor(x), eps=eps), flow.logit(flow.tensor(np.stack([x, x], 1))[:, 0], eps=eps)):
        np.testing.assert_allclose(got.numpy(), want, **tol)


def _binary_operands(dtype, seed):
    rng = np.random.default_rng(seed)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.7, -0.7, 1e-40, 1e30, -1e30]
    a = np.concatenate([rng.standard_normal(2001) * 10, np.repeat(special, len(special))]).astype(dtype)
    b = np.concatenate([rng.standard_normal(2001) * 3, np.tile(special, len(special))]).astype(dtype)
    return a, b


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["atan2", "fmod", "remainder", "hypot", "pow"])
def test_sleef_binary_against_torch_in_every_layout(name, dtype):
    # Two-operand SLEEF kernels (Block2): torch's CPU kernels call the same SLEEF functions, so the
    # results agree to the ulp; broadcast, strided and scalar operands go through the buffers and
    # give the contiguous results.
    a, b = _binary_operands(dtype, 7)
    if name == "pow":
        a = np.abs(a)
    want = getattr(torch, name)(torch.tensor(a), torch.tensor(b)).numpy()
    tol = dict(rtol=2 * np.finfo(dtype).eps, atol=0, equal_nan=True)
    fn = getattr(flow, name)
    got = fn(flow.tensor(a), flow.tensor(b)).numpy()
    np.testing.assert_allclose(got, want, **tol)
    finite = np.isfinite(want)
    assert (np.signbit(got) == np.signbit(want))[finite].all()
    strided = fn(flow.tensor(np.stack([a, a], 1))[:, 0], flow.tensor(np.stack([b, b], 1))[:, 1]).numpy()
    np.testing.assert_array_equal(strided, got)
    if name != "pow":  # (pow's number exponent takes its own block: test_pow_number_exponent)
        scalar = fn(flow.tensor(a), flow.tensor(np.array(0.7, dtype))).numpy()
        np.testing.assert_allclose(scalar, getattr(torch, name)(torch.tensor(a), torch.tensor(np.array(0.7, dtype))).numpy(),
                                   **tol)
    bcast = fn(flow.tensor(a[:300].reshape(3, 100)), flow.tensor(b[:100])).numpy()
    np.testing.assert_array_equal(bcast, fn(flow.tensor(a[:300].reshape(3, 100)),
                                            flow.tensor(np.tile(b[:100], (3, 1)))).numpy())
    inplace = flow.tensor(a)
    getattr(inplace, name + "_")(flow.tensor(b))
    np.testing.assert_array_equal(inplace.numpy(), got)
    # mixed layouts: one operand read in place and the other gathered; a strided result written
    # through the buffer (in place on a view)
    mixed = fn(flow.tensor(a), flow.tensor(np.stack([b, b], 1))[:, 1]).numpy()
    np.testing.assert_array_equal(mixed, got)
    view = flow.tensor(np.stack([a, a], 1))[:, 0]
    getattr(view, name + "_")(flow.tensor(b))
    np.testing.assert_array_equal(view.numpy(), got)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bce_with_logits_block_against_torch(dtype):
    # The ternary block (Block3): exp and log1p on SLEEF, any layout of input / target / pos_weight.
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.standard_normal(3001) * 20, [0.0, -0.0, 100.0, -100.0, 1e-8, np.inf, -np.inf]]).astype(dtype)
    t = rng.random(len(x)).astype(dtype)
    pw = np.array([0.5, 2.0, 3.0], dtype)
    x3, t3 = x[:3006].reshape(-1, 3), t[:3006].reshape(-1, 3)
    # The suite's tolerance for the dtype (tests/harness.py): torch arranges the formula otherwise
    # (log(exp(-m) + exp(-x - m)) + m), and (1 - y) x + ... cancels, so float32 results differ by
    # a few 1e-6 in absolute terms from torch's (and from the exact value) on either side.
    want = torch.nn.functional.binary_cross_entropy_with_logits(
        torch.tensor(x3), torch.tensor(t3), pos_weight=torch.tensor(pw), reduction="none").numpy()
    rtol, atol = DEFAULT_TOL[dtype]
    tol = dict(rtol=rtol, atol=atol, equal_nan=True)
    F = flow.nn.functional
    got = F.binary_cross_entropy_with_logits(flow.tensor(x3), flow.tensor(t3), pos_weight=flow.tensor(pw),
                                             reduction="none").numpy()
    np.testing.assert_allclose(got, want, **tol)
    xt = flow.tensor(np.ascontiguousarray(x3.T)).t()  # a strided input: the same values
    np.testing.assert_array_equal(F.binary_cross_entropy_with_logits(xt, flow.tensor(t3), pos_weight=flow.tensor(pw),
                                                                     reduction="none").numpy(), got)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_float_tanh_sigmoid_accuracy(name):
    x = np.concatenate([np.linspace(-20, 20, 100001), np.logspace(-38, 1.5, 3000),
                        -np.logspace(-38, 1.5, 3000), [0.0, -0.0, np.inf, -np.inf, np.nan,
                                                       0.39999, 0.4, 0.40001, -0.4, 87.0, -87.0,
                                                       89.0, -89.0, 1e30, -1e30]]).astype(np.float32)
    got = getattr(flow, name)(flow.tensor(x)).numpy()
    ref = getattr(torch, name)(torch.tensor(x, dtype=torch.float64)).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    # within 2 float32 ulp of the exact value, or below the smallest normal float (flushed)
    err = np.abs(got[ok].astype(np.float64) - ref[ok])
    assert np.all((err <= 2.4e-7 * np.abs(ref[ok])) | (np.abs(ref[ok]) < 1.2e-38))
    assert np.array_equal(np.signbit(got[ok]), np.signbit(ref[ok].astype(np.float32)))  # -0 kept


def test_float_exp_accuracy():
    x = np.concatenate([np.linspace(-110, 90, 200001), [0.0, -0.0, np.inf, -np.inf, np.nan, -87.3,
                                                        -87.34, -103.97, -103.98, 88.72, 88.73]])
    x = x.astype(np.float32)
    got = flow.exp(flow.tensor(x)).numpy()
    with np.errstate(over="ignore"):
        ref = np.exp(x.astype(np.float64)).astype(np.float32)  # the correctly rounded float
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    ulps = np.abs(got[ok].view(np.int32).astype(np.int64) - ref[ok].view(np.int32).astype(np.int64))
    assert ulps.max() <= 1  # subnormal results and the overflow / underflow edges included


# ---------------------------------------------------------------------------
# matmul of a batch with a matrix


@pytest.mark.parametrize("a_shape,b_shape", [((4, 5, 6), (6, 7)), ((2, 3, 4, 6), (6, 3)),
                                             ((2, 0, 6), (6, 3)), ((2, 3, 0), (0, 4))])
def test_matmul_batch_by_matrix(a_shape, b_shape):
    a, b = RNG.standard_normal(a_shape), RNG.standard_normal(b_shape)
    fa, fb = flow.tensor(a, requires_grad=True), flow.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    fo, to = fa @ fb, ta @ tb
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = RNG.standard_normal(tuple(to.shape))
    fo.backward(flow.tensor(g))
    to.backward(torch.tensor(g))
    np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fb.grad.numpy(), tb.grad.numpy(), rtol=1e-12, atol=1e-12)
    # non-contiguous batch operand (the fold copies it)
    nc = flow.tensor(np.swapaxes(a, 0, 1).copy()).transpose(0, 1)
    np.testing.assert_allclose((nc @ flow.tensor(b)).numpy(), a @ b, rtol=1e-12, atol=1e-12)


def test_matmul_batch_by_matrix_error():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 5x6\)"):
        flow.randn(2, 3, 4) @ flow.randn(5, 6)


# ---------------------------------------------------------------------------
# split / chunk / unbind


def test_split_many_pieces_and_grad():
    a = RNG.standard_normal((40, 3))
    x = flow.tensor(a, requires_grad=True)
    pieces = flow.split(x, 2)
    assert len(pieces) == 20 and len(flow.split(x, [1] * 40)) == 40 and len(x.chunk(20)) == 20
    sum((p * (k + 1)).sum() for k, p in enumerate(pieces)).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.repeat(np.arange(1, 21), 2)[:, None] * np.ones((1, 3)))
    with pytest.raises(RuntimeError, match=r"split_sizes=\[1, 1, .*\]"):
        flow.split(x, [1] * 39)


def test_unbind_one_node_and_unused_pieces():
    a = RNG.standard_normal((30, 4))
    x = flow.tensor(a, requires_grad=True)
    parts = x.unbind(0)
    assert all(p.grad_fn.name() == "UnbindBackward0" for p in parts)
    assert len({repr(p.grad_fn) for p in parts}) == 1  # one node (its address) for all pieces
    (parts[3] * 2 + parts[29]).sum().backward()  # unused pieces get zeros
    want = np.zeros((30, 4))
    want[3], want[29] = 2, 1
    np.testing.assert_array_equal(x.grad.numpy(), want)
    y = flow.tensor(a, requires_grad=True)
    cols = y.unbind(1)
    (cols[1] ** 2).sum().backward()
    want = np.zeros((30, 4))
    want[:, 1] = 2 * a[:, 1]
    np.testing.assert_allclose(y.grad.numpy(), want)


# ---------------------------------------------------------------------------
# autograd.Function


def test_function_saving_none():
    class Scale(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, nothing = ctx.saved_tensors
            assert nothing is None
            return g * 2

    x = flow.tensor([1.0, 2.0], requires_grad=True)
    Scale.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


# ---------------------------------------------------------------------------
# index_select: slice copies by word count (compile-time 1/2/4 words, any other count)

_SLICES = [("float32", 1), ("float32", 2), ("float32", 4), ("float32", 8), ("float32", 3),
           ("float64", 5), ("int8", 3), ("int16", 2), ("bool", 7), ("float64", 4)]


@pytest.mark.parametrize("dtype,inner", _SLICES, ids=[f"{d}-{i}" for d, i in _SLICES])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_slice_widths(dtype, inner, dim):
    x = (RNG.standard_normal((6, 50, inner)) * 50).astype(dtype)
    idx = RNG.integers(0, x.shape[dim], 3000 if dim == 0 else 70)
    got = flow.index_select(flow.tensor(x), dim, flow.tensor(idx)).numpy()
    want = torch.index_select(torch.tensor(x), dim, torch.tensor(idx)).numpy()
    np.testing.assert_array_equal(got, want)


def test_index_select_bad_index_in_a_word_path_raises():
    x = flow.zeros(10, 4)
    with pytest.raises(RuntimeError, match="index_select.*index 10 is out of bounds"):
        flow.index_select(x, 0, flow.tensor([1, 10]))


# ---------------------------------------------------------------------------
# 2-d max pool rows (Note [2-d max pool rows] in kernels/pool.cpp): kernel widths / strides with a
# compile-time path (3/2, 2/2, 3/1) against torch, values and indices, borders, ceil_mode, ties,
# NaN and -inf

_POOLS = [((3, 3), (2, 2), (1, 1), False), ((3, 3), (2, 2), (0, 0), True), ((2, 2), (2, 2), (0, 0), False),
          ((2, 2), (2, 2), (1, 1), True), ((3, 3), (1, 1), (1, 1), False), ((5, 3), (1, 2), (2, 1), False),
          ((3, 2), (2, 2), (1, 0), True), ((1, 3), (1, 2), (0, 1), False)]


# widths whose padded row holds a window (narrower ones are an error, tested with the pool modules)
_POOL_CASES = [p + (w,) for p in _POOLS for w in (1, 2, 5, 17, 64) if w + 2 * p[2][1] >= p[0][1]]


@pytest.mark.parametrize("kernel,stride,pad,ceil,width", _POOL_CASES, ids=[str(p) for p in _POOL_CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool2d_rows(kernel, stride, pad, ceil, width, dtype):
    x = RNG.standard_normal((2, 3, 9, width)).astype(dtype)
    x[0, 0] = np.round(x[0, 0])  # ties: the first maximum in window order wins
    x[0, 1, 2, :] = np.nan
    x[1, 0, ::2] = -np.inf
    x[1, 2] = -np.inf
    got = flow.nn.functional.max_pool2d(flow.tensor(x), kernel, stride, pad, ceil_mode=ceil, return_indices=True)
    want = torch.nn.functional.max_pool2d(torch.tensor(x), kernel, stride, pad, ceil_mode=ceil, return_indices=True)
    np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())


def test_max_pool2d_rows_backward():
    x = RNG.standard_normal((4, 5, 30, 31)).astype(np.float32)
    xf = flow.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    g = RNG.standard_normal((4, 5, 15, 16)).astype(np.float32)
    flow.nn.functional.max_pool2d(xf, 3, 2, 1).backward(flow.tensor(g))
    torch.nn.functional.max_pool2d(xt, 3, 2, 1).backward(torch.tensor(g))
    np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# cross_entropy backward on contiguous rows: softmax numerators written into the gradient row and
# scaled in place (one exp per class), with weights, label smoothing, ignore_index, -inf logits


@pytest.mark.parametrize("classes", [1, 7, 8, 1000, 1003])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_backward_rows(classes, weighted, smoothing, dtype):
    x = (RNG.standard_normal((33, classes)) * 4).astype(dtype)
    x[3, : max(1, classes // 2)] = -np.inf  # -inf logits get probability 0
    y = RNG.integers(0, classes, 33)
    y[3] = classes - 1
    y[5] = -100  # ignored
    w = RNG.uniform(0.5, 2.0, classes).astype(dtype) if weighted else None
    out = []
    for lib in (flow, torch):
        xt = lib.tensor(x, requires_grad=True)
        wt = lib.tensor(w) if weighted else None
        loss = lib.nn.functional.cross_entropy(xt, lib.tensor(y), weight=wt, label_smoothing=smoothing)
        (g,) = lib.autograd.grad(loss, xt)
        out.append(g.numpy() if lib is flow else g.detach().numpy())
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out[0], out[1], rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# tensor_split / hsplit with more split points than an op's int list holds (cut in Python)

_LONG_SPLITS = [30, 17, 16, [5, 3, -2, 90, 120, -200] + list(range(10, 40, 2)), list(range(1, 60, 3))]


@pytest.mark.parametrize("arg", _LONG_SPLITS, ids=[str(a)[:20] for a in _LONG_SPLITS])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_tensor_split_many_pieces(arg, dim):
    x = RNG.standard_normal((100, 100)).astype(np.float32)
    xf = flow.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    pf, pt = flow.tensor_split(xf, arg, dim), torch.tensor_split(xt, arg, dim)
    assert len(pf) == len(pt)
    for a, b in zip(pf, pt):
        np.testing.assert_array_equal(a.numpy(), b.detach().numpy())
    # every piece weighted differently: the gradient shows where each came from
    sum(p.sum() * (k + 1) for k, p in enumerate(pf)).backward()
    sum(p.sum() * (k + 1) for k, p in enumerate(pt)).backward()
    np.testing.assert_array_equal(xf.grad.numpy(), xt.grad.numpy())


def test_hsplit_many_sections():
    x = RNG.standard_normal((3, 40)).astype(np.float32)
    got = flow.hsplit(flow.tensor(x), 20)
    want = torch.hsplit(torch.tensor(x), 20)
    assert len(got) == len(want) == 20
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim,keepdim", [(0, False), ((0, 1), True), (1, False), ((0, 2), False)])
def test_logsumexp_over_leading_dims(dim, keepdim, dtype):
    # Reduced dims before a kept innermost one take whole-tensor passes (column maxima, exp, sums);
    # columns of -inf, one +inf and NaN as the row walk gives them.
    x = np.random.default_rng(9).standard_normal((40, 30, 20)).astype(dtype) * 10
    x[:, 3, 5] = -np.inf
    x[7, 4, 6] = np.inf
    x[2, 1, 1] = np.nan
    got = flow.logsumexp(flow.tensor(x), dim, keepdim).numpy()
    want = torch.logsumexp(torch.tensor(x), dim, keepdim).numpy()
    rtol, atol = DEFAULT_TOL[dtype]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "float16", "complex128", "bool"])
@pytest.mark.parametrize("shape,perm", [((37, 53), (1, 0)), ((8, 8), (1, 0)), ((3, 29, 41), (0, 2, 1)),
                                        ((2, 5, 9, 17), (0, 2, 3, 1)), ((5, 1000), (1, 0)), ((7, 9), (1, 0)),
                                        ((2, 130, 70), (0, 2, 1)), ((128, 64), (1, 0)), ((4, 16, 7, 5), (0, 2, 3, 1))])
def test_transposing_copies_in_tiles(shape, perm, dtype):
    # Copies whose source is unit-stride along the dim before the destination's innermost one run
    # in square tiles (kernels/move.cpp); ragged edges, batch dims and every element width (strips
    # of 64 / 32 / 16 / 8 rows: full and partial strips, full and ragged tiles along them).
    a = np.random.default_rng(10).standard_normal(shape) * 5
    a = (a + 1j * a[::-1]) if dtype == "complex128" else a
    a = a.astype(dtype)
    x = flow.tensor(a).permute(*perm)
    want = np.ascontiguousarray(a.transpose(perm))
    np.testing.assert_array_equal(x.contiguous().numpy(), want)
    np.testing.assert_array_equal(x.clone().numpy(), want)
    out = flow.empty(*want.shape, dtype=x.dtype)
    out.copy_(x)
    np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", [None, "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"])
@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, float("inf")])
def test_cdist_matrix_product_form_and_direct_loops(p, mode, dtype):
    # p = 2 over more than 25 rows (or use_mm_for_euclid_dist) is torch's GEMM form; the direct
    # loops are vectorised reductions. Against torch with the same compute_mode.
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 40, 33)).astype(dtype)
    b = rng.standard_normal((1, 30, 33)).astype(dtype)
    b[0, 3] = a[1, 5]  # a zero distance: the product form clamps before the root
    kw = {} if mode is None else {"compute_mode": mode}
    got = flow.cdist(flow.tensor(a), flow.tensor(b), p=p, **kw).numpy()
    want = torch.cdist(torch.tensor(a), torch.tensor(b), p=p, **kw).numpy()
    rtol, atol = DEFAULT_TOL[dtype]
    if p == 2.0 and mode != "donot_use_mm_for_euclid_dist":
        # The product form's zero distance is the root of a difference of squares that cancels to a
        # few ulps of |a|^2 on either side of 0 (torch's too: which GEMM rounds below 0 depends on
        # the BLAS and the CPU's vector width), so it is exact only to sqrt(eps) |a|.
        bound = 4 * np.sqrt(np.finfo(dtype).eps) * np.linalg.norm(a[1, 5])
        assert 0 <= got[1, 5, 3] <= bound and 0 <= want[1, 5, 3] <= bound, (got[1, 5, 3], want[1, 5, 3])
        got[1, 5, 3] = want[1, 5, 3]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    small = flow.cdist(flow.tensor(a[:, :4]), flow.tensor(b[:, :3]), p=p, **kw).numpy()  # few rows: direct
    np.testing.assert_allclose(small, torch.cdist(torch.tensor(a[:, :4]), torch.tensor(b[:, :3]), p=p, **kw).numpy(),
                               rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", [("binary_cross_entropy", {}), ("kl_div", {}), ("kl_div", {"log_target": True})],
                         ids=lambda v: str(v))
def test_loss_blocks_against_torch(name, kw, dtype):
    # bce / kl_div elementwise terms over float / double runs (Block2: the logs, exp on SLEEF),
    # contiguous and strided operands, against torch's terms (reduction='none').
    rng = np.random.default_rng(12)
    x = np.concatenate([rng.uniform(0, 1, 3001), [0.0, 1.0, 1e-30, 1 - 1e-7, 0.5]]).astype(dtype)
    # targets in [0, 1] (bce requires it; kl_div's y <= 0 terms are 0 in OneFlow, NaN in torch for y < 0)
    y = np.concatenate([rng.uniform(0, 1, 3001), [0.0, 1.0, 0.5, 0.0, 1e-30]]).astype(dtype)
    if name == "kl_div":
        x = np.log(x + 1e-3).astype(dtype)
    want = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(y), reduction="none", **kw).numpy()
    rtol, atol = DEFAULT_TOL[dtype]
    fn = getattr(flow.nn.functional, name)
    for got in (fn(flow.tensor(x), flow.tensor(y), reduction="none", **kw),
                fn(flow.tensor(np.stack([x, x], 1))[:, 1], flow.tensor(np.stack([y, y], 1))[:, 0], reduction="none", **kw)):
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol, equal_nan=True)


def test_float16_conversions_bit_exact_with_torch():
    # Contiguous float <-> float16 runs use the CPU's conversion instructions (where built with
    # them): round to nearest even, overflow to inf, subnormals; the strided loop agrees.
    x = np.concatenate([np.random.default_rng(13).standard_normal(10007).astype("float32") * 1000,
                        np.array([np.inf, -np.inf, 65504, 65519.99, 65520, 1e-8, 6e-8, -6e-8, 3e-5, -0.0, 0.0,
                                  2.0 ** -24, 2.0 ** -25, 1.5 * 2.0 ** -24], "float32")])
    want = torch.tensor(x).half().numpy().view("uint16")
    np.testing.assert_array_equal(flow.tensor(x).half().numpy().view("uint16"), want)
    strided = flow.tensor(np.stack([x, x], 1))[:, 1].half().numpy().view("uint16")
    np.testing.assert_array_equal(strided, want)
    h = torch.tensor(x).half()
    np.testing.assert_array_equal(flow.tensor(h.numpy()).float().numpy(), h.float().numpy())
    assert np.isnan(flow.tensor(np.array([np.nan] * 9, "float32")).half().float().numpy()).all()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_abs_clears_the_sign_bit(dtype):
    # |-0.0| = +0.0 and |-nan| is a positive NaN, as torch (fabs), contiguous and strided.
    x = np.array([-0.0, 0.0, -np.nan, np.nan, -1.5, 2.0, -np.inf], "float32")
    want = np.signbit(torch.abs(torch.tensor(x).to(getattr(torch, dtype))).float().numpy())
    assert not want.any()
    for t in (flow.tensor(x), flow.tensor(np.stack([x, x], 1))[:, 1]):
        got = flow.abs(t.to(getattr(flow, dtype))).float().numpy()
        np.testing.assert_array_equal(np.signbit(got), want)
        np.testing.assert_array_equal(got, np.abs(x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("layout", ["rows", "strided"])
def test_cross_entropy_row_paths_and_extreme_logits(dtype, smoothing, layout):
    """cross_entropy's row log-sum-exp (vectorised contiguous rows, the strided N-d loop): -log p
    is (max - x_y) + log(sum), so large logits keep their log term (1e30, 1e4 + small spread);
    a +inf logit, an all -inf row and a NaN give NaN rows, forward and backward, as torch."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 40))
    x[0, :5] = -np.inf
    x[1, 3] = np.nan
    x[2, :] = -np.inf
    x[3, 7] = np.inf
    x[4, :] = 1e30
    x[5] *= 1000
    x[6] = x[6] * 3 + 1e4
    x = x.astype(dtype)
    t = np.array([5, 1, 2, 3, 4, 9, 0, 39])
    if layout == "strided":  # classes on dim 1 of [N, C, 2]: rows at stride 2
        x, t = np.ascontiguousarray(np.stack([x, x[::-1]], -1)), np.stack([t, t[::-1]], -1)
    xf, xt = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    lf = flow.nn.functional.cross_entropy(xf, flow.tensor(t), reduction="none", label_smoothing=smoothing)
    lt = torch.nn.functional.cross_entropy(xt, torch.tensor(t), reduction="none", label_smoothing=smoothing)
    np.testing.assert_allclose(lf.detach().numpy(), lt.detach().numpy(), rtol=1e-5, atol=1e-6)
    lf.sum().backward()
    lt.sum().backward()
    np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
