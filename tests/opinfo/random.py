"""OpInfos of the random factories (checked by distribution, see RANDOM_DIST)."""

from .core import *  # noqa: F401,F403

# ---- random -----------------------------------------------------------------
# Random ops are checked on shape/dtype (against torch), range and statistics,
# and reproducibility under manual_seed; never on values against torch.


@dataclass(frozen=True)
class Dist:
    kind: str  # "uniform" [lo, hi), "normal", "randint" [lo, hi), "perm" of n
    lo: float = 0.0
    hi: float = 1.0
    mean: float = 0.0
    std: float = 1.0


def rand_samples(dtype, rng):
    return [
        _s([2, 3], {"dtype": DT(dtype)}, desc="varargs"),
        _s([(4, 5)], {"dtype": DT(dtype)}, desc="tuple"),
        _s([()], {"dtype": DT(dtype)}, desc="0-d"),
        _s([0, 3], {"dtype": DT(dtype)}, desc="zero-size"),
        _s([20000], {"dtype": DT(dtype)}, desc="stats"),
    ]


def randint_samples(dtype, rng):
    lo = 0 if dtype == "uint8" else -3
    return [
        _s([lo, 7, (3, 4)], {"dtype": DT(dtype)}, desc="low/high"),
        _s([5, (2, 3)], {"dtype": DT(dtype)}, desc="high only"),
        _s([lo, 7, (20000,)], {"dtype": DT(dtype)}, desc="stats"),
        _s([0, 4, (0, 2)], {"dtype": DT(dtype)}, desc="zero-size"),
    ] + ([_s([0, 10, (5,)], desc="default dtype")] if dtype == "int64" else [])


def randperm_samples(dtype, rng):
    out = [
        _s([10], {"dtype": DT(dtype)}, desc="n=10"),
        _s([1], {"dtype": DT(dtype)}, desc="n=1"),
        _s([0], {"dtype": DT(dtype)}, desc="n=0"),
        _s([1000], {"dtype": DT(dtype)}, desc="stats"),
    ]
    if dtype == "int64":
        out.append(_s([7], desc="default dtype"))
    return out


def normal_samples(dtype, rng):
    return [
        _s([2.0, 3.0, (20000,)], {"dtype": DT(dtype)}, desc="stats"),
        _s([0.0, 1.0, (2, 3)], {"dtype": DT(dtype)}, desc="2-d"),
        _s([-1.0, 0.5], {"size": (4,), "dtype": DT(dtype)}, desc="size kwarg"),
    ]


def random_like_samples(dtype, rng):
    return [
        _s([arr(rng, (2, 3), dtype)], desc="2-d"),
        _s([arr(rng, (), dtype)], desc="0-d"),
        _s([arr(rng, (20000,), dtype)], desc="stats"),
        _s([arr(rng, (3,), dtype)], {"dtype": DT("float64")}, desc="dtype=float64"),
    ]


# Which distribution each random op draws from (for the statistics test).
RANDOM_DIST.update({
    "rand": Dist("uniform", 0.0, 1.0, 0.5, (1 / 12) ** 0.5),
    "rand_like": Dist("uniform", 0.0, 1.0, 0.5, (1 / 12) ** 0.5),
    "randn": Dist("normal", mean=0.0, std=1.0),
    "randn_like": Dist("normal", mean=0.0, std=1.0),
    "normal": Dist("normal", mean=2.0, std=3.0),  # the "stats" sample's parameters
    "randint": Dist("randint"),
    "randperm": Dist("perm"),
})

# -- random ---------------------------------------------------------------------------
add(OpInfo("rand", "random", FLOATS, rand_samples, method="", takes_device=True))
add(OpInfo("randn", "random", FLOATS, rand_samples, method="", takes_device=True))
add(OpInfo("randint", "random", NUMBER, randint_samples, method="", takes_device=True))
add(OpInfo("randperm", "random", ("int32", "int64", "float32", "float64"), randperm_samples,
           method="", takes_device=True))
add(OpInfo("normal", "random", ("float32", "float64"), normal_samples, method="", takes_device=True))
add(OpInfo("rand_like", "random", FLOATS, random_like_samples, method=""))
add(OpInfo("randn_like", "random", FLOATS, random_like_samples, method=""))
