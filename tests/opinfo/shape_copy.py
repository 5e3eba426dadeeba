"""OpInfos of the copying shape ops (src/ops/table/shape_copy.yaml)."""

from .core import *  # noqa: F401,F403


def flip_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4)), (0,)], desc="dim 0"),
        _s([a((2, 3, 4)), (0, 2)], desc="two dims"),
        _s([a((2, 3, 4)), [-1]], desc="negative dim, list"),
        _s([a((2, 3, 4)), 1, 2], desc="varargs", forms=("method",)),
        _s([a((5,)), (0,)], desc="1-d"),
        _s([a(()), (0,)], desc="0-d"),
        _s([a((0, 3)), (1,)], desc="zero-size"),
        _s([a((3, 4)), (0, 0)], desc="repeated dim (error)"),
        _s([a((3, 4)), (2,)], desc="bad dim (error)"),
    ]


def fliplr_samples(min_dim):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype)  # noqa: E731
        out = [_s([a(s)], desc=f"{s}") for s in [(3, 4), (2, 3, 4), (0, 3)]]
        out.append(_s([a((5,))], desc="1-d" + (" (error)" if min_dim > 1 else "")))
        out.append(_s([a(())], desc="0-d (error)"))
        return out
    return gen


def roll_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4)), 1], desc="flattened"),
        _s([a((3, 4)), -5], desc="flattened, negative"),
        _s([a((3, 4)), 2, 1], desc="dim 1"),
        _s([a((2, 3, 4)), (1, -2), (0, 2)], desc="two dims"),
        _s([a((3, 4))], {"shifts": (1, 1), "dims": (0, 0)}, desc="same dim twice"),
        _s([a((3, 4)), 7, -1], desc="shift larger than dim"),
        _s([a((0, 3)), 1, 1], desc="zero-size"),
        _s([a((3, 4)), (1, 2), 0], desc="shifts/dims mismatch (error)"),
    ]


def rot90_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4))], desc="default"),
        _s([a((3, 4)), 2], desc="k=2"),
        _s([a((3, 4)), -1], desc="k=-1"),
        _s([a((2, 3, 4)), 3, (1, 2)], desc="k=3 dims (1,2)"),
        _s([a((2, 3, 4))], {"k": 4, "dims": (2, 0)}, desc="k=4"),
        _s([a((3, 4)), 1, (0, 0)], desc="same dims (error)"),
        _s([a((3,)), 1], desc="1-d (error)"),
    ]


def tri_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((4, 4))], desc="square"),
        _s([a((3, 5)), 1], desc="wide, diagonal 1"),
        _s([a((5, 3))], {"diagonal": -2}, desc="tall, diagonal -2"),
        _s([a((2, 3, 4)), 10], desc="batched, everything kept"),
        _s([a((2, 3, 4)), -10], desc="batched, nothing kept"),
        _s([a((0, 3))], desc="zero-size"),
        _s([a((4,))], desc="1-d (error)"),
    ]


def diag_embed_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3,))], desc="1-d"),
        _s([a((2, 3))], {"offset": 1}, desc="batched, offset 1"),
        _s([a((2, 3)), -2, 0, 2], desc="offset -2, dims (0, 2)"),
        _s([a((2, 3))], {"dim1": -1, "dim2": 0}, desc="dims (-1, 0)"),
        _s([a(())], desc="0-d"),
        _s([a((0, 2))], desc="zero-size"),
        _s([a((3,)), 0, 1, 1], desc="same dims (error)"),
    ]


def diag_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3,))], desc="vector"),
        _s([a((3,)), -1], desc="vector, diagonal -1"),
        _s([a((3, 4))], desc="matrix"),
        _s([a((3, 4)), 2], desc="matrix, diagonal 2"),
        _s([a((3, 4)), -5], desc="matrix, empty diagonal"),
        _s([a((0,))], desc="empty vector"),
        _s([a((2, 2, 2))], desc="3-d (error)"),
    ]


def diagflat_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [_s([a((2, 2))], desc="2-d"), _s([a((3,)), 1], desc="offset 1"), _s([a(())], desc="0-d"),
            _s([a((3,))], {"offset": -2}, desc="offset -2")]


def repeat_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3)), 2, 3], desc="varargs"),
        _s([a((2, 3)), (1, 1)], desc="ones: still a copy"),
        _s([a((3,)), (2, 1, 2)], desc="new leading dims"),
        _s([a(()), (3, 2)], desc="0-d"),
        _s([a((2, 3)), (0, 2)], desc="zero repeats"),
        _s([a((1, 3, 1)), (2, 1, 4)], desc="spec-like"),
        _s([a((2, 3)), (2,)], desc="too few sizes (error)"),
    ]


def tile_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2,)), (2,)], desc="1-d"),
        _s([a((5, 2, 1)), (3, 4)], desc="fewer reps than dims"),
        _s([a((2, 3)), (2, 1, 2)], desc="more reps than dims"),
        _s([a((2, 3)), 2, 2], desc="varargs", forms=("method",)),
        _s([a(()), (2,)], desc="0-d"),
        _s([a((2, 3)), ()], desc="no reps"),
    ]


def repeat_interleave_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    counts = Arr(np.array([1, 0, 2], dtype=np.int64), "int64")
    return [
        _s([a((2, 3)), 2], desc="int, flattened"),
        _s([a((2, 3)), 2], {"dim": 1}, desc="int, dim 1"),
        Sample((a((3, 2)), counts, 0), desc="counts, dim 0", meta=False),
        Sample((a((2, 3)), counts), {"dim": -1}, desc="counts, dim -1", meta=False),
        Sample((a((2, 3)), counts), {"dim": 1, "output_size": 3}, desc="counts with output_size"),
        Sample((a((3,)), Arr(np.array([2], np.int64), "int64")), desc="one count tensor", meta=False),
        _s([a(()), 3], desc="0-d"),
        _s([a((2, 3)), 0], {"dim": 0}, desc="zero repeats"),
        Sample((a((3,)), Arr(np.array([1, -1, 2], np.int64), "int64")), desc="negative count (error)",
               meta=False),
        _s([a((3,)), Arr(np.array([1, 2], np.int64), "int64")], desc="count length mismatch (error)"),
    ]


def stack_samples(name):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype)  # noqa: E731
        out = [
            _s([[a((3,)), a((2,))]], desc="1-d") if name == "hstack" else _s([[a((3,)), a((3,))]], desc="1-d"),
            _s([[a((2, 3)), a((2, 3))]], desc="2-d"),
            _s([[a(()), a(())]], desc="0-d"),
            _s([[a((2, 3, 4)), a((2, 3, 4))]], desc="3-d"),
            _s([(a((2, 1)), a((2, 1)), a((2, 1)))], desc="tuple of three"),
            _s([[]], desc="empty list (error)"),
        ]
        if name == "column_stack":
            out.append(_s([[a((3,)), a((3, 2))]], desc="vector and matrix"))
        return out
    return gen


add(OpInfo("flip", "shape", ALL + COMPLEX, flip_samples))
add(OpInfo("fliplr", "shape", ALL + COMPLEX, fliplr_samples(2)))
add(OpInfo("flipud", "shape", ALL + COMPLEX, fliplr_samples(1)))
add(OpInfo("roll", "shape", ALL + COMPLEX, roll_samples))
add(OpInfo("rot90", "shape", ALL + COMPLEX, rot90_samples))
add(OpInfo("tril", "shape", ALL + COMPLEX, tri_samples, inplace=True))
add(OpInfo("triu", "shape", ALL + COMPLEX, tri_samples, inplace=True))
add(OpInfo("diag_embed", "shape", ALL + COMPLEX, diag_embed_samples))
add(OpInfo("diag", "shape", ALL + COMPLEX, diag_samples))
add(OpInfo("diagflat", "shape", ALL + COMPLEX, diagflat_samples))
# torch has no torch.repeat: the method is its API.
add(OpInfo("repeat", "shape", ALL + COMPLEX, repeat_samples, ref=lambda torch: torch.Tensor.repeat))
add(OpInfo("tile", "shape", ALL + COMPLEX, tile_samples))
add(OpInfo("repeat_interleave", "shape", ALL + COMPLEX, repeat_interleave_samples))
for _n in ("hstack", "vstack", "dstack", "column_stack"):
    add(OpInfo(_n, "shape", ALL, stack_samples(_n), method=""))
