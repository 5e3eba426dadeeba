"""Random generation: the Philox generator (known answers, state, seeding, isolation, thread-count
independence), the generator objects against torch's API, and every random op's distribution by
goodness-of-fit tests (Kolmogorov-Smirnov for continuous ones, chi-square for discrete ones).

Seeds are fixed, so every statistical test is deterministic; the thresholds are p < 1e-4 (a
correct generator fails none of them, a wrong transform fails by a wide margin).
"""

import math

import numpy as np
import pytest
import torch

from harness import SHIM, flow, to_numpy

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow's generator")

P_MIN = 1e-4


def _ks_pvalue(d, n):
    """Asymptotic Kolmogorov distribution: P(sqrt(n) D > x)."""
    x = (math.sqrt(n) + 0.12 + 0.11 / math.sqrt(n)) * d
    return max(
        0.0,
        min(1.0, 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * x * x) for k in range(1, 101))),
    )


def ks_test(sample, cdf):
    """p-value of the one-sample KS test of `sample` (1-d numpy) against `cdf` (vectorised)."""
    x = np.sort(sample.astype(np.float64))
    n = x.size
    f = cdf(x)
    d = max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(0, n) / n))
    return _ks_pvalue(d, n)


def chi2_test(counts, expected):
    """p-value of Pearson's chi-square test (bins with expectation < 5 merged into one)."""
    counts, expected = np.asarray(counts, np.float64), np.asarray(expected, np.float64)
    small = expected < 5
    if small.any():
        counts = np.append(counts[~small], counts[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
    stat = float(((counts - expected) ** 2 / expected).sum())
    df = counts.size - 1
    return float(
        torch.special.gammaincc(
            torch.tensor(df / 2, dtype=torch.float64), torch.tensor(stat / 2, dtype=torch.float64)
        )
    )


def normal_cdf(x, mean=0.0, std=1.0):
    return 0.5 * (1 + torch.erf(torch.from_numpy((x - mean) / (std * math.sqrt(2)))).numpy())


# ---------------------------------------------------------------------------
# the Philox generator


def test_philox_known_answers():
    # Random123's known-answer vectors of philox4x32-10 (counter words lo..hi, key lo/hi).
    kat = [
        ((0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((2**64 - 1, 2**64 - 1, 2**64 - 1), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            (0x85A308D3243F6A88, 0x0370734413198A2E, 0x299F31D0A4093822),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ]
    for (lo, hi, key), want in kat:
        assert flow._C._philox4x32(lo, hi, key) == want


def test_generator_api_matches_torch():
    g, tg = flow.Generator(), torch.Generator()
    assert g.initial_seed() == tg.initial_seed() == 67280421310721
    assert g.manual_seed(5) is g and tg.manual_seed(5) is tg
    assert g.initial_seed() == 5
    assert g.manual_seed(-1).initial_seed() == tg.manual_seed(-1).initial_seed() == 2**64 - 1
    assert str(g.device) == "cpu" and g.device == flow.device("cpu")
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2**63
    state = g.get_state()
    assert state.dtype == flow.uint8 and state.shape == (16,)
    assert flow.manual_seed(3) is flow.default_generator
    assert flow.initial_seed() == 3 == flow.default_generator.initial_seed()


def test_generator_errors():
    g = flow.Generator()
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(flow.zeros(16))
    with pytest.raises(RuntimeError, match="size 16"):
        g.set_state(flow.zeros(5, dtype=flow.uint8))
    with pytest.raises(ValueError, match="Overflow"):
        g.manual_seed(2**64)
    with pytest.raises(TypeError, match="int seed"):
        g.manual_seed(1.5)
    if not flow.cuda.is_available():  # with a device: tests/test_cuda_random.py
        with pytest.raises(RuntimeError, match="cuda"):
            flow.Generator("cuda")
    with pytest.raises(TypeError, match="Generator"):
        flow.rand(3, generator=5)
    # torch raises the same kinds for its own API
    with pytest.raises(TypeError):
        torch.Generator().set_state(torch.zeros(16))
    with pytest.raises(RuntimeError):
        torch.Generator().set_state(torch.zeros(5, dtype=torch.uint8))


def test_state_roundtrip_reproduces_draws():
    g = flow.Generator().manual_seed(42)
    flow.rand(10, generator=g)
    state = g.get_state()
    a = flow.randn(1000, generator=g)
    b = flow.randint(0, 100, (50,), generator=g)
    g.set_state(state)
    np.testing.assert_array_equal(to_numpy(flow.randn(1000, generator=g)), to_numpy(a))
    np.testing.assert_array_equal(to_numpy(flow.randint(0, 100, (50,), generator=g)), to_numpy(b))
    # the default generator's state
    flow.manual_seed(7)
    s = flow.get_rng_state()
    x = flow.rand(100)
    flow.set_rng_state(s)
    np.testing.assert_array_equal(to_numpy(flow.rand(100)), to_numpy(x))
    _after_fork()


def _after_fork():
    """fork_rng restores the state: the draw after the block equals the draw without it."""
    flow.manual_seed(11)
    with flow.random.fork_rng():
        flow.rand(100)
    a = flow.rand(5)
    flow.manual_seed(11)
    b = flow.rand(5)
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


def test_generators_are_isolated():
    g1, g2 = flow.Generator().manual_seed(1), flow.Generator().manual_seed(1)
    flow.manual_seed(9)
    ref_default = to_numpy(flow.rand(20))
    flow.manual_seed(9)
    a = to_numpy(flow.rand(20, generator=g1))
    flow.rand(1000, generator=g1)  # advances g1 only
    np.testing.assert_array_equal(to_numpy(flow.rand(20)), ref_default)
    np.testing.assert_array_equal(to_numpy(flow.rand(20, generator=g2)), a)
    assert g1.get_offset() > g2.get_offset()


def test_offsets_count_blocks():
    g = flow.Generator().manual_seed(0)
    flow.rand(8, generator=g)  # float32: 4 values per Philox block
    assert g.get_offset() == 2
    flow.rand(3, dtype=flow.float64, generator=g)  # float64: 2 values per block
    assert g.get_offset() == 4


@pytest.mark.parametrize("op", ["rand", "randn", "randint", "bernoulli", "normal_", "randperm"])
def test_result_independent_of_thread_count(op):
    n = 300_000  # above the parallel grain
    calls = {
        "rand": lambda g: flow.rand(n, generator=g),
        "randn": lambda g: flow.randn(n, dtype=flow.float64, generator=g),
        "randint": lambda g: flow.randint(0, 1000, (n,), generator=g),
        "bernoulli": lambda g: flow.bernoulli(flow.full((n,), 0.3), generator=g),
        "normal_": lambda g: flow.empty(n, dtype=flow.float16).normal_(generator=g),
        "randperm": lambda g: flow.randperm(n, generator=g),
    }
    old = flow.get_num_threads()
    try:
        flow.set_num_threads(1)
        a = to_numpy(calls[op](flow.Generator().manual_seed(3)))
        flow.set_num_threads(max(2, old))
        b = to_numpy(calls[op](flow.Generator().manual_seed(3)))
    finally:
        flow.set_num_threads(old)
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------
# distributions (goodness of fit)

N = 200_000


def _gen(seed=123):
    return flow.Generator().manual_seed(seed)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_rand_uniform(dtype):
    v = to_numpy(flow.rand(N, dtype=getattr(flow, dtype), generator=_gen())).astype(np.float64)
    assert v.min() >= 0.0 and v.max() < 1.0
    if dtype in ("float32", "float64"):
        assert ks_test(v, lambda x: x) > P_MIN
    else:  # a discrete uniform on the dtype's grid: chi-square over 16 equal bins
        counts, _ = np.histogram(v, bins=16, range=(0.0, 1.0))
        assert chi2_test(counts, np.full(16, N / 16)) > P_MIN
    if dtype == "float64":  # 53 random bits, not 32: (almost) no repeated values
        assert np.unique(v).size > N - 5


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_randn_normal(dtype):
    v = to_numpy(flow.randn(N, dtype=getattr(flow, dtype), generator=_gen()))
    assert ks_test(v, normal_cdf) > P_MIN
    # tails: P(|z| > 3) = 0.0027
    assert abs(np.mean(np.abs(v) > 3) - 0.0027) < 0.0006


def test_normal_overloads_distribution():
    g = _gen()
    v = to_numpy(flow.normal(2.0, 3.0, (N,), generator=g))
    assert ks_test(v, lambda x: normal_cdf(x, 2.0, 3.0)) > P_MIN
    mean = flow.linspace(-5, 5, 10).reshape(10, 1).expand(10, N // 10)
    std = flow.linspace(0.5, 2.0, 10).reshape(10, 1)
    s = to_numpy(flow.normal(mean, std, generator=g))
    for i, (m, sd) in enumerate(zip(np.linspace(-5, 5, 10), np.linspace(0.5, 2.0, 10))):
        assert ks_test(s[i], lambda x: normal_cdf(x, m, sd)) > P_MIN


def test_uniform_and_normal_fills():
    g = _gen()
    u = to_numpy(flow.empty(N).uniform_(-2.0, 3.0, generator=g)).astype(np.float64)
    assert u.min() >= -2.0 and u.max() < 3.0
    assert ks_test(u, lambda x: (x + 2.0) / 5.0) > P_MIN
    z = to_numpy(flow.empty(N, dtype=flow.float64).normal_(1.0, 0.5, generator=g))
    assert ks_test(z, lambda x: normal_cdf(x, 1.0, 0.5)) > P_MIN


def test_exponential_cauchy_log_normal():
    g = _gen()
    e = to_numpy(flow.empty(N).exponential_(2.0, generator=g)).astype(np.float64)
    assert e.min() > 0 and np.all(np.isfinite(e))
    assert ks_test(e, lambda x: 1 - np.exp(-2.0 * x)) > P_MIN
    c = to_numpy(flow.empty(N, dtype=flow.float64).cauchy_(1.0, 0.5, generator=g))
    assert np.all(np.isfinite(c))
    assert ks_test(c, lambda x: 0.5 + np.arctan((x - 1.0) / 0.5) / math.pi) > P_MIN
    ln = to_numpy(flow.empty(N).log_normal_(0.5, 0.25, generator=g)).astype(np.float64)
    assert ln.min() > 0
    assert ks_test(np.log(ln), lambda x: normal_cdf(x, 0.5, 0.25)) > P_MIN


@pytest.mark.parametrize("p", [0.05, 0.3, 0.9])
def test_geometric(p):
    v = to_numpy(flow.empty(N, dtype=flow.int64).geometric_(p, generator=_gen()))
    assert v.min() >= 1
    k = np.arange(1, 60)
    pmf = (1 - p) ** (k - 1) * p
    counts = np.array([np.sum(v == i) for i in k])
    expected = N * pmf
    counts = np.append(counts, np.sum(v >= 60))
    expected = np.append(expected, N * (1 - p) ** 59)
    assert chi2_test(counts, expected) > P_MIN


@pytest.mark.parametrize("lam", [0.5, 4.0, 9.9, 10.0, 37.5, 1000.0])
def test_poisson(lam):
    v = to_numpy(flow.poisson(flow.full((N,), lam, dtype=flow.float64), generator=_gen()))
    assert np.all(v == np.round(v)) and v.min() >= 0
    lo, hi = int(max(0, lam - 6 * math.sqrt(lam) - 2)), int(lam + 6 * math.sqrt(lam) + 3)
    k = np.arange(lo, hi)
    log_pmf = k * math.log(lam) - lam - np.array([math.lgamma(i + 1) for i in k])
    counts = np.array([np.sum(v == i) for i in k])
    expected = N * np.exp(log_pmf)
    assert np.sum(v < lo) + np.sum(v >= hi) < 5
    assert chi2_test(counts, expected) > P_MIN


@pytest.mark.parametrize("n,p", [(20, 0.3), (7, 0.9), (100, 0.4), (1000, 0.85), (3, 0.01)])
def test_binomial(n, p):
    # n min(p, 1-p) < 10: geometric waiting times; else BTRS. Both against the exact pmf.
    v = to_numpy(flow.binomial(flow.full((N,), float(n), dtype=flow.float64), flow.full((N,), p, dtype=flow.float64),
                               generator=_gen()))
    assert np.all(v == np.round(v)) and v.min() >= 0 and v.max() <= n
    k = np.arange(n + 1)
    log_pmf = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in k]) \
        + k * math.log(p) + (n - k) * math.log1p(-p)
    expected = N * np.exp(log_pmf)
    keep = expected >= 5  # (chi-square cells; the tails pooled)
    counts = np.array([np.sum(v == i) for i in k])
    counts = np.append(counts[keep], counts[~keep].sum())
    expected = np.append(expected[keep], expected[~keep].sum())
    assert chi2_test(counts, expected) > P_MIN


def test_binomial_edges_and_errors():
    v = flow.binomial(flow.tensor([5.0, 5.0, -1.0, 0.0, 7.0]), flow.tensor([0.0, 1.0, 0.5, 0.5, 1.5]))
    assert v.tolist() == [0.0, 5.0, 0.0, 0.0, 7.0]
    assert math.isnan(flow.binomial(flow.tensor([5.0]), flow.tensor([float("nan")])).item())
    for dt in (flow.float16, flow.bfloat16):  # (beyond torch, whose CPU binomial refuses them)
        h = flow.binomial(flow.full((2000,), 40.0, dtype=dt), flow.full((2000,), 0.25, dtype=dt))
        assert h.dtype == dt and abs(h.float().mean().item() - 10) < 0.5
    big = flow.binomial(flow.full((4000,), 1e9), flow.full((4000,), 0.2))  # O(1) draws per element
    assert abs(big.double().mean().item() / 2e8 - 1) < 1e-4
    with pytest.raises(ValueError, match="floating-point dtypes for count"):
        flow.binomial(flow.tensor([3, 4]), flow.tensor([0.5, 0.5]))
    with pytest.raises(RuntimeError, match="broadcast|size"):
        flow.binomial(flow.ones(3), flow.full((2,), 0.5))
    c = flow.tensor([10.0], requires_grad=True)
    r = flow.binomial(c, flow.tensor([0.3]))
    with pytest.raises(RuntimeError, match="binomial"):
        r.sum().backward()


def test_poisson_zero_rate_and_mixed():
    rates = flow.tensor([0.0, 0.0, 3.0])
    v = flow.poisson(rates, generator=_gen())
    assert v[0].item() == 0.0 and v[1].item() == 0.0


@pytest.mark.parametrize("p", [0.0, 0.01, 0.5, 1.0])
def test_bernoulli(p):
    g = _gen()
    v = to_numpy(flow.bernoulli(flow.full((N,), p), generator=g))
    assert set(np.unique(v)) <= {0.0, 1.0}
    k = v.sum()
    if p in (0.0, 1.0):
        assert k == p * N
    else:
        assert abs(k - N * p) < 5 * math.sqrt(N * p * (1 - p))
    w = to_numpy(flow.empty(N, dtype=flow.int32).bernoulli_(p, generator=g))
    if 0 < p < 1:
        assert abs(w.sum() - N * p) < 5 * math.sqrt(N * p * (1 - p))


def test_bernoulli_tensor_p_broadcast():
    p = flow.tensor([0.1, 0.5, 0.9])
    v = to_numpy(flow.zeros(N // 3, 3).bernoulli_(p, generator=_gen()))
    for j, pj in enumerate([0.1, 0.5, 0.9]):
        n = v.shape[0]
        assert abs(v[:, j].sum() - n * pj) < 5 * math.sqrt(n * pj * (1 - pj))


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "float32"])
def test_randint_uniform(dtype):
    lo, hi = (0, 200) if dtype == "uint8" else (-50, 77)
    v = to_numpy(flow.randint(lo, hi, (N,), dtype=getattr(flow, dtype), generator=_gen())).astype(
        np.int64
    )
    assert v.min() >= lo and v.max() < hi
    counts = np.bincount(v - lo, minlength=hi - lo)
    assert chi2_test(counts, np.full(hi - lo, N / (hi - lo))) > P_MIN


def test_randint_wide_range():
    v = to_numpy(flow.randint(-(2**62), 2**62, (N,), generator=_gen()))
    # 8 equal bins of the 2^63-wide range
    counts = np.bincount(((v.astype(object) + 2**62) // 2**60).astype(np.int64), minlength=8)
    assert counts.size == 8 and chi2_test(counts, np.full(8, N / 8)) > P_MIN


def test_random_full_range_and_dtypes():
    g = _gen()
    for dtype, top in [
        (flow.uint8, 255),
        (flow.int8, 127),
        (flow.bool, 1),
        (flow.float16, 2048),
        (flow.float32, 2**24),
    ]:
        v = to_numpy(flow.empty(N, dtype=dtype).random_(generator=g)).astype(np.float64)
        assert v.min() >= 0 and v.max() <= top
        assert v.max() > top * 0.99  # reaches (nearly) the top of its range
    v = to_numpy(flow.empty(N, dtype=flow.int64).random_(generator=g))
    assert v.min() >= 0 and v.max() > 2**62
    v = to_numpy(flow.empty(N, dtype=flow.int32).random_(10, generator=g))
    assert v.min() == 0 and v.max() == 9


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_first_draw(replacement):
    p = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 10.0])
    rows = 20000
    probs = flow.tensor(np.tile(p, (rows, 1)), dtype=flow.float64)
    v = to_numpy(flow.multinomial(probs, 3, replacement, generator=_gen()))
    assert v.shape == (rows, 3)
    assert not np.any(v == 0) or not replacement  # zero mass is never drawn with replacement
    counts = np.bincount(v[:, 0], minlength=p.size)
    nz = p > 0
    assert counts[0] == 0
    assert chi2_test(counts[nz], rows * p[nz] / p.sum()) > P_MIN
    if not replacement:
        assert all(len(set(r)) == 3 for r in v)
        # second draw given the first: P(j | i) = p_j / (1 - p_i)
        first5 = v[:, 0] == 5
        c2 = np.bincount(v[first5, 1], minlength=p.size)[1:5]
        assert chi2_test(c2, first5.sum() * p[1:5] / p[1:5].sum()) > P_MIN


def test_multinomial_with_replacement_counts():
    p = np.array([1.0, 2.0, 3.0, 4.0])
    v = to_numpy(flow.multinomial(flow.tensor(p), N, True, generator=_gen()))
    assert chi2_test(np.bincount(v, minlength=4), N * p / p.sum()) > P_MIN


def test_randperm_uniform():
    # The position of each value over many permutations of 8 is uniform.
    g = _gen()
    pos = np.zeros((8, 8))
    for _ in range(4000):
        perm = to_numpy(flow.randperm(8, generator=g))
        pos[perm, np.arange(8)] += 1
    assert chi2_test(pos.ravel(), np.full(64, 4000 / 8)) > P_MIN
    big = to_numpy(flow.randperm(1_000_003, generator=g))
    np.testing.assert_array_equal(np.sort(big), np.arange(1_000_003))


# ---------------------------------------------------------------------------
# layouts, autograd, dtypes


def test_inplace_fill_non_contiguous_writes_through():
    base = flow.zeros(6, 8)
    view = base[::2].transpose(0, 1)
    out = view.uniform_(1.0, 2.0, generator=_gen())
    assert out is view
    b = to_numpy(base)
    assert np.all((b[::2] >= 1.0) & (b[::2] < 2.0)) and np.all(b[1::2] == 0)
    with pytest.raises(RuntimeError, match="more than one element"):
        flow.zeros(1).expand(3).normal_()


@pytest.mark.parametrize(
    "name,args",
    [
        ("uniform_", ()),
        ("normal_", ()),
        ("exponential_", ()),
        ("cauchy_", ()),
        ("log_normal_", ()),
        ("geometric_", (0.5,)),
        ("random_", (0, 5)),
        ("bernoulli_", (0.5,)),
    ],
)
def test_inplace_random_autograd_like_torch(name, args):
    for lib in (flow, torch):
        x = lib.ones(4, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            getattr(x, name)(*args)
        y = x * 2
        getattr(y, name)(*args)
        assert y.grad_fn is not None
        (y * x).sum().backward()
        # x * 2 no longer feeds y: only the second factor's gradient (y's values) reaches x
        np.testing.assert_allclose(to_numpy(x.grad), to_numpy(y.detach()), rtol=1e-6)


def test_normal_tensor_gradient_is_zero_like_torch():
    m = flow.zeros(3, requires_grad=True)
    s = flow.ones(3, requires_grad=True)
    flow.normal(m, s).sum().backward()
    assert to_numpy(m.grad).tolist() == [0, 0, 0] and to_numpy(s.grad).tolist() == [0, 0, 0]
    y = flow.poisson(flow.full((3,), 2.0, requires_grad=True))
    assert y.grad_fn is not None


def test_requires_grad_and_meta():
    x = flow.rand(2, 3, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    with pytest.raises(RuntimeError, match="floating point"):
        flow.randint(0, 3, (2,), requires_grad=True)
    m = flow.randn(4, 5, device="meta")
    assert m.is_meta and tuple(m.shape) == (4, 5)
    assert flow.empty(3, device="meta").uniform_().is_meta
    assert tuple(flow.multinomial(flow.empty(2, 5, device="meta"), 3).shape) == (2, 3)


def test_public_names():
    for name in [
        "uniform_",
        "normal_",
        "bernoulli_",
        "bernoulli",
        "exponential_",
        "geometric_",
        "log_normal_",
        "cauchy_",
        "random_",
        "multinomial",
    ]:
        assert hasattr(flow.Tensor, name), name
    for name in [
        "rand",
        "randn",
        "randint",
        "randperm",
        "normal",
        "bernoulli",
        "multinomial",
        "poisson",
        "rand_like",
        "randn_like",
        "randint_like",
        "manual_seed",
        "seed",
        "initial_seed",
        "get_rng_state",
        "set_rng_state",
        "Generator",
        "default_generator",
    ]:
        assert hasattr(flow, name), name
    assert not hasattr(flow, "uniform_")
    x = flow.zeros(3)
    assert flow.randint_like(x, 5).dtype == flow.float32
    assert flow.randint(5, (2,)).dtype == flow.int64
    assert flow.randint(high=5, size=(2,)).shape == (2,)


def test_uniform_keyword_names():
    # torch's (from, to) and OneFlow's (a, b)
    x = flow.empty(1000).uniform_(a=2.0, b=3.0)
    assert 2.0 <= to_numpy(x).min() and to_numpy(x).max() < 3.0
    y = flow.empty(1000).uniform_(**{"from": -1.0, "to": 0.0})
    assert -1.0 <= to_numpy(y).min() and to_numpy(y).max() < 0.0
    assert flow.empty(10).uniform_(5.0, 6.0).min().item() >= 5.0


def test_generator_copy_pickle_clone_like_torch():
    import copy
    import pickle

    for lib in (flow, torch):
        g = lib.Generator().manual_seed(5)
        lib.rand(3, generator=g)
        for h in (copy.deepcopy(g), pickle.loads(pickle.dumps(g)), g.clone_state()):
            assert h is not g and h.initial_seed() == 5
            assert (
                to_numpy(lib.rand(4, generator=h)).tolist()
                == to_numpy(lib.rand(4, generator=g.clone_state())).tolist()
            )


def test_randperm_exactness_checks():
    with pytest.raises(RuntimeError, match="2049|2\\^11"):
        flow.randperm(3000, dtype=flow.float16)
    with pytest.raises(RuntimeError, match="2\\^8"):
        flow.randperm(300, dtype=flow.bfloat16)
    with pytest.raises(RuntimeError, match="bool"):
        flow.randperm(2, dtype=flow.bool)
    assert sorted(to_numpy(flow.randperm(2049, dtype=flow.float16)).tolist()) == list(range(2049))
