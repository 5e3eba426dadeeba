"""OpInfos of the views, copying shape ops and dtype conversions."""

from .core import *  # noqa: F401,F403

# ---- shape / view ops ---------------------------------------------------




def reshape_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3, 4)), (6, 4)], desc="(2,3,4)->(6,4)"),
        _s([a((2, 3, 4)), (-1,)], desc="flatten via -1"),
        _s([a((2, 3, 4)), (4, -1, 2)], desc="inferred middle"),
        _s([a(()), (1,)], desc="0-d -> (1,)"),
        _s([a((1,)), ()], desc="(1,) -> 0-d"),
        _s([a((0, 3)), (3, 0)], desc="zero-size"),
        _s([a((2, 3, 4)), 4, 6], desc="varargs", forms=("method",)),
    ]


def flatten_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3, 4))], desc="all"),
        _s([a((2, 3, 4))], {"start_dim": 1}, desc="start_dim=1"),
        _s([a((2, 3, 4, 5))], {"start_dim": 1, "end_dim": 2}, desc="middle"),
        _s([a((2, 3, 4))], {"start_dim": -2}, desc="negative start"),
        _s([a(())], desc="0-d -> (1,)"),
        _s([a((0, 3))], desc="zero-size"),
    ]


def squeeze_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((1, 3, 1, 4))], desc="all"),
        _s([a((1, 3, 1, 4)), 0], desc="dim 0"),
        _s([a((1, 3, 1, 4)), -2], desc="dim -2"),
        _s([a((1, 3, 1, 4)), 1], desc="non-1 dim is a no-op"),
        _s([a((1, 3, 1, 4)), (0, 2)], desc="tuple of dims"),
        _s([a((1, 1))], desc="all ones -> 0-d"),
        _s([a(())], desc="0-d"),
        _s([a((0, 1, 3))], desc="zero-size"),
    ]


def unsqueeze_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4)), 0], desc="front"),
        _s([a((3, 4)), -1], desc="back"),
        _s([a((3, 4)), 1], desc="middle"),
        _s([a(()), 0], desc="0-d"),
        _s([a((0, 3)), 1], desc="zero-size"),
    ]


def transpose_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3, 4)), 0, 2], desc="0,2"),
        _s([a((2, 3, 4)), 1, -1], desc="1,-1"),
        _s([a((3, 4)), 0, 1], desc="2-d"),
        _s([a((5,)), 0, 0], desc="1-d"),
        _s([a((0, 3)), 0, 1], desc="zero-size"),
    ]


def permute_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3, 4)), (2, 0, 1)], desc="tuple"),
        _s([a((2, 3, 4)), (-1, 0, 1)], desc="negative"),
        _s([a((2, 3, 4)), 1, 2, 0], desc="varargs", forms=("method",)),
        _s([a(()), ()], desc="0-d"),
        _s([a((0, 3)), (1, 0)], desc="zero-size"),
    ]


def expand_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    # torch has no functional torch.expand; the method is the API.
    return [
        _s([a((3, 1)), 3, 4], desc="(3,1)->(3,4)"),
        _s([a((3, 1)), (2, 3, 5)], desc="new leading dim, tuple"),
        _s([a((3, 1)), -1, 4], desc="-1 keeps size"),
        _s([a(()), 2, 3], desc="0-d"),
        _s([a((1, 3)), 0, 3], desc="to zero-size"),
    ]


def contiguous_samples(dtype, rng):
    return [_s([arr(rng, s, dtype)], desc=f"{s}") for s in [(3, 4), (2, 3, 4), (), (0, 3)]]


def narrow_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((4, 5)), 0, 1, 2], desc="dim 0"),
        _s([a((4, 5)), -1, 2, 3], desc="dim -1"),
        _s([a((4, 5)), 1, 0, 0], desc="zero length"),
        _s([a((2, 3, 4)), 1, 1, 2], desc="3-d middle"),
    ]


def cat_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([[a((2, 3)), a((4, 3))]], desc="dim 0"),
        _s([[a((2, 3)), a((2, 1)), a((2, 2))]], {"dim": 1}, desc="dim 1, three"),
        _s([[a((2, 3, 4)), a((2, 3, 1))], -1], desc="dim -1 positional"),
        _s([[a((0, 3)), a((2, 3))]], desc="with zero-size"),
        _s([[a((5,))]], desc="single"),
        _s([(a((2,)), a((3,)))], desc="tuple input"),
    ]


def stack_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([[a((2, 3)), a((2, 3))]], desc="dim 0"),
        _s([[a((2, 3)), a((2, 3)), a((2, 3))]], {"dim": 1}, desc="dim 1"),
        _s([[a((2, 3)), a((2, 3))], -1], desc="dim -1"),
        _s([[a(()), a(()), a(())]], desc="0-d"),
        _s([[a((0, 3)), a((0, 3))]], desc="zero-size"),
    ]


def split_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((5, 3)), 2], desc="size 2, uneven"),
        _s([a((4, 6)), 3], {"dim": 1}, desc="dim 1"),
        _s([a((4, 6)), [1, 3, 2]], {"dim": -1}, desc="sections"),
        _s([a((4, 6)), 10], desc="size larger than dim"),
    ]


def chunk_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((6, 2)), 3], desc="even"),
        _s([a((5, 2)), 3], desc="uneven"),
        _s([a((4, 7)), 2], {"dim": -1}, desc="dim -1"),
        _s([a((2, 3)), 5], desc="more chunks than rows"),
    ]


def _cast_values(rng, src, dst):
    """Values that every dtype pair converts without undefined behaviour
    (float -> int of out-of-range values is UB in C)."""
    n = 12
    if src == "bool":
        return Arr(rng.random(n) < 0.5, src)
    lo = 0 if (src == "uint8" or dst == "uint8") else -100
    if src in INTS:
        v = rng.integers(lo, 101, n)
        v[:2] = 0  # zeros matter for -> bool
        return Arr(v.astype(NP_DTYPE[src]), src)
    v = rng.uniform(lo, 100, n)
    v[:2] = 0.0
    v[2] = 0.4  # nonzero but truncates to 0: bool True, int 0
    v[3] = 2.75
    return Arr(v.astype(NP_DTYPE[src]), src)


def cast_samples(dtype, rng):
    out = [Sample((_cast_values(rng, dtype, d), DT(d)), desc=f"-> {d}") for d in ALL]
    # A non-trivial shape too, with 0-d and zero-size.
    out.append(Sample((arr(rng, (2, 3), dtype), DT("float32")), desc="2-d -> float32"))
    out.append(Sample((arr(rng, (), dtype), DT("int64")), desc="0-d -> int64"))
    out.append(Sample((arr(rng, (0, 3), dtype), DT("float64")), desc="zero-size -> float64"))
    return out


def cast_method_samples(target):
    def gen(dtype, rng):
        return [
            Sample((_cast_values(rng, dtype, target),), desc="1-d"),
            Sample((arr(rng, (), dtype),), desc="0-d"),
        ]

    return gen

# -- shape / view ----------------------------------------------------------------
add(OpInfo("reshape", "shape", ALL, reshape_samples))
# view: same samples; torch has no torch.view function, the method is the API.
add(OpInfo("view", "shape", ALL, reshape_samples, fn=False, ref=lambda torch: torch.Tensor.view))
add(OpInfo("flatten", "shape", ALL, flatten_samples))
add(OpInfo("squeeze", "shape", ALL, squeeze_samples))
add(OpInfo("unsqueeze", "shape", ALL, unsqueeze_samples))
add(OpInfo("transpose", "shape", ALL, transpose_samples))
add(OpInfo("permute", "shape", ALL, permute_samples))
add(OpInfo("expand", "shape", ALL, expand_samples, fn=False, ref=lambda torch: torch.Tensor.expand))
add(
    OpInfo(
        "contiguous", "shape", ALL, contiguous_samples, fn=False, ref=lambda torch: torch.Tensor.contiguous
    )
)
add(OpInfo("narrow", "shape", ALL, narrow_samples))
add(OpInfo("clone", "shape", ALL, contiguous_samples))
add(OpInfo("cat", "shape", ALL, cat_samples, method=""))
add(OpInfo("stack", "shape", ALL, stack_samples, method=""))
add(OpInfo("split", "shape", ALL, split_samples))
add(OpInfo("chunk", "shape", ALL, chunk_samples))

# -- dtype conversion ------------------------------------------------------------
add(OpInfo("cast", "cast", ALL, cast_samples, ref=lambda torch: torch.Tensor.to, method="to"))
for _name, _target in [
    ("float", "float32"),
    ("double", "float64"),
    ("long", "int64"),
    ("int", "int32"),
    ("half", "float16"),
    ("bool", "bool"),
]:
    add(
        OpInfo(
            _name,
            "cast",
            ALL,
            cast_method_samples(_target),
            fn=False,
            ref=(lambda n: lambda torch: getattr(torch.Tensor, n))(_name),
        )
    )
