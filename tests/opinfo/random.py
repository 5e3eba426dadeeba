"""OpInfos of the random ops (checked by distribution, see RANDOM_DIST).

Random ops are checked on shape/dtype and error outcome (against torch), support, statistics,
reproducibility under manual_seed and under a seeded ``generator=``; never on values against
torch.  The distribution tests proper (chi-square / Kolmogorov-Smirnov per op) are in
tests/test_random.py.
"""

from .core import *  # noqa: F401,F403

# ---- random -----------------------------------------------------------------


@dataclass(frozen=True)
class Dist:
    # "uniform" [lo, hi), "normal", "randint" [lo, hi) (from the sample's args), "perm" of n,
    # "bernoulli" (0/1), "multinomial" (indices), "moments": only mean/std are checked (with
    # support [lo, hi]).
    kind: str
    lo: float = 0.0
    hi: float = 1.0
    mean: float = 0.0
    std: float = 1.0
    integral: bool = False  # "moments": integer values only


def rand_samples(dtype, rng):
    return [
        _s([2, 3], {"dtype": DT(dtype)}, desc="varargs"),
        _s([(4, 5)], {"dtype": DT(dtype)}, desc="tuple"),
        _s([()], {"dtype": DT(dtype)}, desc="0-d"),
        _s([0, 3], {"dtype": DT(dtype)}, desc="zero-size"),
        _s([(3, 2)], {"dtype": DT(dtype), "generator": Gen(7)}, desc="generator"),
        _s([20000], {"dtype": DT(dtype)}, desc="stats"),
    ]


def randint_samples(dtype, rng):
    lo = 0 if dtype == "uint8" else -3
    out = [
        _s([lo, 7, (3, 4)], {"dtype": DT(dtype)}, desc="low/high"),
        _s([5, (2, 3)], {"dtype": DT(dtype)}, desc="high only"),
        _s([lo, 7, (20000,)], {"dtype": DT(dtype)}, desc="stats"),
        _s([0, 4, (0, 2)], {"dtype": DT(dtype)}, desc="zero-size"),
        _s([0, 4, (5,)], {"dtype": DT(dtype), "generator": Gen(3)}, desc="generator"),
        _s([5, 2, (3,)], {"dtype": DT(dtype)}, desc="low >= high (error)"),
    ]
    if dtype in ("uint8", "int8"):
        out.append(_s([0, 300, (3,)], {"dtype": DT(dtype)}, desc="high out of range (error)"))
    if dtype == "int64":
        out.append(_s([0, 10, (5,)], desc="default dtype"))
    return out


def randperm_samples(dtype, rng):
    out = [
        _s([10], {"dtype": DT(dtype)}, desc="n=10"),
        _s([1], {"dtype": DT(dtype)}, desc="n=1"),
        _s([0], {"dtype": DT(dtype)}, desc="n=0"),
        _s([6], {"dtype": DT(dtype), "generator": Gen(1)}, desc="generator"),
        # every value must fit the dtype exactly: int8 and bfloat16 hold 0..127 / 0..256
        _s([100 if dtype in ("int8", "uint8", "bfloat16") else 1000], {"dtype": DT(dtype)},
           desc="stats"),
    ] + ([_s([300], {"dtype": DT(dtype)}, desc="n beyond the dtype (error)")]
         if dtype in ("int8", "uint8") else [])
    if dtype == "int64":
        out.append(_s([7], desc="default dtype"))
    return out


def normal_samples(dtype, rng):
    def a(shape, lo=-2.0, hi=2.0):
        return arr(rng, shape, dtype, Domain(lo, hi))

    return [
        _s([2.0, 3.0, (20000,)], {"dtype": DT(dtype)}, desc="stats"),
        _s([0.0, 1.0, (2, 3)], {"dtype": DT(dtype)}, desc="2-d"),
        _s([-1.0, 0.5], {"size": (4,), "dtype": DT(dtype)}, desc="size kwarg"),
        _s([0.0, 1.0, (3,)], {"dtype": DT(dtype), "generator": Gen(11)}, desc="generator"),
        _s([a((2, 3)), a((2, 3), 0.1, 2.0)], desc="tensor mean, tensor std"),
        _s([a((2, 3)), a((3,), 0.1, 2.0)], desc="tensor mean, tensor std, broadcast"),
        _s([a((4,)), 0.5], desc="tensor mean, float std"),
        _s([a((4,))], desc="tensor mean, default std"),
        _s([1.5, a((2, 2), 0.1, 2.0)], desc="float mean, tensor std"),
        _s([a(()), a((), 0.1, 1.0)], desc="0-d"),
        _s([a((0, 2)), 1.0], desc="zero-size"),
        _s([0.0, -1.0, (3,)], {"dtype": DT(dtype)}, desc="negative std (error)"),
        _s([a((3,)), a((3,), -2.0, -1.0)], desc="negative tensor std (error)"),
        _s([a((2, 3)), a((4,), 0.1, 2.0)], desc="shapes don't broadcast (error)"),
    ]


def random_like_samples(dtype, rng):
    return [
        _s([arr(rng, (2, 3), dtype)], desc="2-d"),
        _s([arr(rng, (), dtype)], desc="0-d"),
        _s([arr(rng, (20000,), dtype)], desc="stats"),
        _s([arr(rng, (3,), dtype)], {"dtype": DT("float64")}, desc="dtype=float64"),
        _s([arr(rng, (3,), dtype)], {"generator": Gen(5)}, desc="generator"),
    ]


def randint_like_samples(dtype, rng):
    lo = 0 if dtype == "uint8" else -3
    return [
        _s([arr(rng, (2, 3), dtype), 5], desc="high only"),
        _s([arr(rng, (3, 4), dtype), lo, 7], desc="low/high"),
        _s([arr(rng, (20000,), dtype), lo, 7], desc="stats"),
        _s([arr(rng, (0, 2), dtype), 4], desc="zero-size"),
        _s([arr(rng, (3,), dtype), 4], {"generator": Gen(2)}, desc="generator"),
        _s([arr(rng, (3,), dtype), 0, 10], {"dtype": DT("int64")}, desc="dtype=int64"),
    ]


def bernoulli_samples(dtype, rng):
    def probs(shape):
        return arr(rng, shape, dtype, Domain(0.0, 1.0))

    return [
        _s([probs((3, 4))], desc="probabilities"),
        _s([probs(())], desc="0-d"),
        _s([probs((0, 3))], desc="zero-size"),
        _s([const(np.full(20000, 0.3), dtype)], desc="stats"),
        _s([probs((5,))], {"generator": Gen(4)}, desc="generator"),
        _s([probs((2, 3)), 0.25], desc="p float"),
        _s([probs((2, 3))], {"p": 1.0}, desc="p=1"),
        _s([const([0.5, 1.5], dtype)], desc="probability > 1 (error)"),
        _s([probs((3,)), -0.5], desc="p < 0 (error)"),
    ]


def multinomial_samples(dtype, rng):
    w = arr(rng, (2, 5), dtype, Domain(0.1, 1.0))
    return [
        _s([w, 3], desc="2-d without replacement"),
        _s([w, 8, True], desc="2-d with replacement"),
        _s([arr(rng, (6,), dtype, Domain(0.1, 1.0)), 6], desc="1-d all categories"),
        _s([const([0.0, 1.0, 0.0], dtype), 2], desc="zero-probability categories"),
        _s([arr(rng, (0, 4), dtype, Domain(0.1, 1.0)), 2], desc="zero rows"),
        _s([w, 2], {"replacement": True, "generator": Gen(9)}, desc="generator"),
        _s([const([1.0, 2.0, 3.0, 4.0], dtype), 20000, True], desc="stats"),
        _s([w, 6], desc="more samples than categories (error)"),
        _s([w, 0], desc="no samples (error)"),
        _s([const([1.0, -2.0], dtype), 1], desc="negative probability (error)"),
        _s([const([0.0, 0.0], dtype), 1], desc="zero sum (error)"),
        _s([arr(rng, (2, 2, 2), dtype, Domain(0.1, 1.0)), 1], desc="3-d (error)"),
    ]


def poisson_samples(dtype, rng):
    return [
        _s([arr(rng, (3, 4), dtype, Domain(0.0, 30.0))], desc="rates"),
        _s([arr(rng, (), dtype, Domain(0.0, 5.0))], desc="0-d"),
        _s([arr(rng, (0, 2), dtype, Domain(0.0, 5.0))], desc="zero-size"),
        _s([const(np.full(20000, 4.0), dtype)], desc="stats"),
        _s([arr(rng, (4,), dtype, Domain(0.0, 5.0)), Gen(6)], desc="generator"),
        _s([const([1.0, -1.0], dtype)], desc="negative rate (error)"),
    ]


def fill_samples(stats_args, args, errors=()):
    """Samples of an in-place fill x.X_(*args): the target tensor is zeros of each shape."""
    def gen(dtype, rng):
        def z(shape):
            return Arr(np.zeros(shape, dtype=NP_DTYPE[dtype]), dtype)

        out = [
            _s([z((3, 4)), *args], desc="2-d"),
            _s([z(())] + list(args), desc="0-d"),
            _s([z((0, 3))] + list(args), desc="zero-size"),
            _s([z((4,)), *args], {"generator": Gen(8)}, desc="generator"),
            _s([z((20000,)), *stats_args], desc="stats"),
        ]
        for e in errors:
            out.append(_s([z((3,)), *e], desc=f"args {e} (error)"))
        return out

    return gen


def _inplace(name):
    """x.X_(...) on a copy of x: a non-leaf when x requires grad, so that the gradient tests see
    the in-place fill's (zero) gradient as torch does."""
    return lambda lib: (lambda x, *a, **k: getattr(x * 1, name)(*a, **k))


def standard_gamma_samples(dtype, rng):
    return [
        _s([arr(rng, (3, 4), dtype, Domain(0.05, 20.0))], desc="concentrations"),
        _s([arr(rng, (), dtype, Domain(0.5, 5.0))], desc="0-d"),
        _s([arr(rng, (0, 2), dtype, Domain(0.5, 5.0))], desc="zero-size"),
        _s([const(np.full(20000, 3.0), dtype)], desc="stats"),
        _s([arr(rng, (4,), dtype, Domain(0.5, 5.0)), Gen(6)], desc="generator"),
    ]


def binomial_samples(dtype, rng):
    counts = lambda shape, hi: Arr(rng.integers(0, hi, size=shape).astype(NP_DTYPE[dtype]), dtype)  # noqa: E731
    return [
        _s([counts((3, 4), 60), arr(rng, (3, 4), dtype, Domain(0.0, 1.0))], desc="counts, probs"),
        _s([counts((2, 3), 60), arr(rng, (3,), dtype, Domain(0.0, 1.0))], desc="broadcast"),
        _s([counts((), 9), arr(rng, (), dtype, Domain(0.0, 1.0))], desc="0-d"),
        _s([counts((0, 2), 9), arr(rng, (0, 2), dtype, Domain(0.0, 1.0))], desc="zero-size"),
        _s([const(np.full(20000, 40.0), dtype), const(np.full(20000, 0.25), dtype)], desc="stats"),
        _s([counts((4,), 30), const([0.0, 1.0, 0.5, 0.9], dtype), Gen(6)], desc="generator"),
        _s([Arr(np.array([3, 4]), "int64"), const([0.5, 0.5], dtype)], desc="integer count (error)"),
    ]


# Which distribution each random op draws from (for the statistics test): the parameters of
# the "stats" sample.
RANDOM_DIST.update({
    "rand": Dist("uniform", 0.0, 1.0, 0.5, (1 / 12) ** 0.5),
    "rand_like": Dist("uniform", 0.0, 1.0, 0.5, (1 / 12) ** 0.5),
    "randn": Dist("normal", mean=0.0, std=1.0),
    "randn_like": Dist("normal", mean=0.0, std=1.0),
    "normal": Dist("normal", mean=2.0, std=3.0),
    "randint": Dist("randint"),
    "randint_like": Dist("randint"),
    "randperm": Dist("perm"),
    "bernoulli": Dist("bernoulli", mean=0.3, std=(0.3 * 0.7) ** 0.5),
    "multinomial": Dist("multinomial"),
    "poisson": Dist("moments", 0.0, float("inf"), 4.0, 2.0, integral=True),
    "binomial": Dist("moments", 0.0, 60.0, 10.0, 7.5 ** 0.5, integral=True),  # (counts < 60)
    "standard_gamma": Dist("moments", 0.0, float("inf"), 3.0, 3.0 ** 0.5),
    "bernoulli_": Dist("bernoulli", mean=0.3, std=(0.3 * 0.7) ** 0.5),
    "uniform_": Dist("uniform", -2.0, 3.0, 0.5, 5 / 12 ** 0.5),
    "normal_": Dist("normal", mean=-1.0, std=2.0),
    "exponential_": Dist("moments", 0.0, float("inf"), 0.5, 0.5),
    "geometric_": Dist("moments", 1.0, float("inf"), 1 / 0.3, (0.7 / 0.09) ** 0.5, integral=True),
    "log_normal_": Dist("moments", 0.0, float("inf"), 2.718281828 ** 0.125, 0.60389),
    "cauchy_": Dist("cauchy", mean=1.0, std=0.5),  # median, scale
    "random_": Dist("randint"),
})


def random_samples(dtype, rng):
    lo = 0 if dtype == "uint8" else -3
    z = [Arr(np.zeros(shape, dtype=NP_DTYPE[dtype]), dtype) for shape in [(3, 4), (), (0, 3), (4,)]]
    return [
        _s([z[0], 0, 5], desc="from, to"),
        _s([z[0], 5], desc="to only"),
        _s([z[0]], desc="full range"),
        _s([z[1], 2, 4], desc="0-d"),
        _s([z[2], 0, 5], desc="zero-size"),
        _s([z[3], 0, 5], {"generator": Gen(8)}, desc="generator"),
        _s([Arr(np.zeros(20000, dtype=NP_DTYPE[dtype]), dtype), lo, 7], desc="stats"),
        _s([z[3], 5, 2], desc="from >= to (error)"),
    ] + ([_s([z[3], 0, 300], desc="to out of range (error)")] if dtype in ("uint8", "int8") else [])


# -- random ---------------------------------------------------------------------------
add(OpInfo("rand", "random", FLOATS, rand_samples, method="", takes_device=True))
add(OpInfo("randn", "random", FLOATS, rand_samples, method="", takes_device=True))
add(OpInfo("randint", "random", NUMBER, randint_samples, method="", takes_device=True))
add(OpInfo("randperm", "random", NUMBER, randperm_samples, method="", takes_device=True))
add(OpInfo("normal", "random", FLOATS, normal_samples, method="", takes_device=True))
add(OpInfo("rand_like", "random", FLOATS, random_like_samples, method=""))
add(OpInfo("randn_like", "random", FLOATS, random_like_samples, method=""))
add(OpInfo("randint_like", "random", NUMBER, randint_like_samples, method=""))
add(OpInfo("bernoulli", "random", FLOATS, bernoulli_samples))
# the in-place form is its own table entry (its p may be a tensor; the out-of-place p is a float)
add(OpInfo("bernoulli_", "random", FLOATS, fill_samples((0.3,), (0.5,), [(1.5,), (-0.5,)]),
           fn=_inplace("bernoulli_"), method=""))
add(OpInfo("multinomial", "random", FLOATS, multinomial_samples))
add(OpInfo("poisson", "random", FLOATS, poisson_samples, method=""))
add(OpInfo("standard_gamma", "random", ("float32", "float64"), standard_gamma_samples,
           fn=lambda lib: lib._standard_gamma, method=""))  # (torch: no 16-bit CPU gamma)
add(OpInfo("binomial", "random", ("float32", "float64"), binomial_samples, method=""))  # (torch: no 16-bit CPU binomial)
add(OpInfo("uniform_", "random", FLOATS, fill_samples((-2.0, 3.0), (-1.0, 1.0), [(2.0, 1.0)]),
           fn=_inplace("uniform_"), method=""))
add(OpInfo("normal_", "random", FLOATS, fill_samples((-1.0, 2.0), (0.0, 1.0), [(0.0, -1.0)]),
           fn=_inplace("normal_"), method=""))
add(OpInfo("exponential_", "random", FLOATS, fill_samples((2.0,), (1.5,), [(0.0,), (-1.0,)]),
           fn=_inplace("exponential_"), method=""))
add(OpInfo("geometric_", "random", ("int32", "int64") + FLOATS,
           fill_samples((0.3,), (0.5,), [(0.0,), (1.5,)]), fn=_inplace("geometric_"), method=""))
add(OpInfo("log_normal_", "random", FLOATS, fill_samples((0.0, 0.5), (1.0, 0.5), [(0.0, -1.0)]),
           fn=_inplace("log_normal_"), method=""))
add(OpInfo("cauchy_", "random", FLOATS, fill_samples((1.0, 0.5), (0.0, 1.0), [(0.0, 0.0)]),
           fn=_inplace("cauchy_"), method=""))
add(OpInfo("random_", "random", NUMBER, random_samples, fn=_inplace("random_"), method=""))
