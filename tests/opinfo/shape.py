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
        _s([a((3, 9)), 4], {"dim": 1}, desc="9 into 4 (the spec's example)"),
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
add(OpInfo("reshape", "shape", ALL + COMPLEX, reshape_samples))
# view: same samples; torch has no torch.view function, the method is the API.
add(OpInfo("view", "shape", ALL, reshape_samples, fn=False, ref=lambda torch: torch.Tensor.view))
add(OpInfo("flatten", "shape", ALL + COMPLEX, flatten_samples))
add(OpInfo("squeeze", "shape", ALL + COMPLEX, squeeze_samples))
add(OpInfo("unsqueeze", "shape", ALL + COMPLEX, unsqueeze_samples))
add(OpInfo("transpose", "shape", ALL + COMPLEX, transpose_samples))
add(OpInfo("permute", "shape", ALL + COMPLEX, permute_samples))
add(OpInfo("expand", "shape", ALL, expand_samples, fn=False, ref=lambda torch: torch.Tensor.expand))
add(
    OpInfo(
        "contiguous", "shape", ALL, contiguous_samples, fn=False, ref=lambda torch: torch.Tensor.contiguous
    )
)
add(OpInfo("narrow", "shape", ALL + COMPLEX, narrow_samples))
add(OpInfo("clone", "shape", ALL + COMPLEX, contiguous_samples))
add(OpInfo("cat", "shape", ALL + COMPLEX, cat_samples, method=""))
add(OpInfo("stack", "shape", ALL + COMPLEX, stack_samples, method=""))
add(OpInfo("split", "shape", ALL + COMPLEX, split_samples))
def _oneflow_chunk(torch):
    """OneFlow's chunk: `chunks` pieces of n // chunks, the last taking the remainder (PyTorch
    makes pieces of ceil(n / chunks) and may return fewer)."""
    def f(x, chunks, dim=0):
        n = x.shape[dim]
        sizes = [n // chunks] * (chunks - 1) + [n - (n // chunks) * (chunks - 1)]
        return torch.split(x, sizes, dim)
    return f


add(OpInfo("chunk", "shape", ALL + COMPLEX, chunk_samples, ref=_oneflow_chunk, method="chunk"))

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


# -- views with their own layout rules ------------------------------------------------------


def t_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4))], desc="2-d"),
        _s([a((5,))], desc="1-d"),
        _s([a(())], desc="0-d"),
        _s([a((0, 3))], desc="zero-size"),
        _s([a((2, 3, 4))], desc="3-d (error)"),
    ]


def diagonal_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((4, 5))], desc="main"),
        _s([a((4, 5))], {"offset": 2}, desc="offset 2"),
        _s([a((4, 5))], {"offset": -3}, desc="offset -3"),
        _s([a((4, 5)), 7], desc="offset past the end: empty"),
        _s([a((2, 3, 4))], {"dim1": -1, "dim2": 0}, desc="3-d, dims (-1, 0)"),
        _s([a((2, 3, 4)), 1, 2, 1], desc="3-d positional, reversed dims"),
        _s([a((0, 3))], desc="zero-size"),
        _s([a((3, 3))], {"dim1": 1, "dim2": -1}, desc="same dims (error)"),
    ]


def select_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4)), 0, 1], desc="dim 0"),
        _s([a((3, 4)), -1, -2], desc="negative dim and index"),
        _s([a((2, 3, 4)), 1, 2], desc="3-d middle"),
        _s([a((5,)), 0, 4], desc="1-d -> 0-d"),
        _s([a((3, 4)), 0, 3], desc="index out of range (error)"),
        _s([a(()), 0, 0], desc="0-d (error)"),
    ]


def unfold_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((7,)), 0, 2, 1], desc="overlapping windows"),
        _s([a((3, 8)), 1, 3, 2], desc="dim 1 size 3 step 2"),
        _s([a((3, 8)), -1, 2, 2], desc="dim -1, disjoint"),
        _s([a((6, 4)), 0, 2, 3], desc="step > size (gaps)"),
        _s([a((2, 5, 3)), 1, 5, 1], desc="one window"),
        _s([a(()), 0, 1, 1], desc="0-d"),
        _s([a((4, 3)), 0, 5, 1], desc="size too large (error)"),
        _s([a((4, 3)), 0, 2, 0], desc="step 0 (error)"),
    ]


def as_strided_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4)), (2, 2), (1, 2)], desc="strided window"),
        _s([a((3, 4)), (2, 3), (4, 1), 1], desc="storage offset"),
        _s([a((12,)), (3, 3), (2, 1)], desc="overlapping"),
        _s([a((3, 4)), (3, 2), (0, 1)], desc="stride 0"),
        _s([a((2, 3)), (0, 3), (3, 1)], desc="zero-size"),
        _s([a((2, 2)), (3, 3), (1, 1)], desc="out of bounds (error)"),
    ]


def movedim_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3, 4)), 0, 2], desc="int dims"),
        _s([a((2, 3, 4, 5)), (0, 1), (3, 0)], desc="tuples"),
        _s([a((2, 3, 4)), -1, 0], desc="negative"),
        _s([a((2, 3)), (0, 1), (1, 0)], desc="swap"),
        _s([a((2, 3, 4)), (0, 0), (1, 2)], desc="repeated source (error)"),
        _s([a((2, 3, 4)), (0, 1), (1,)], desc="length mismatch (error)"),
    ]


def unbind_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4))], desc="dim 0"),
        _s([a((3, 4)), 1], desc="dim 1"),
        _s([a((2, 3, 4))], {"dim": -1}, desc="dim -1"),
        _s([a((0, 3)), 1], desc="zero-size"),
    ]


def unflatten_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 12)), 1, (3, 4)], desc="dim 1"),
        _s([a((12, 2)), 0, (2, -1, 3)], desc="inferred"),
        _s([a((2, 6)), -1, (6, 1)], desc="negative dim"),
        _s([a((2, 6)), 1, (4, 2)], desc="wrong product (error)"),
    ]


def ravel_samples(dtype, rng):
    return [_s([arr(rng, s, dtype)], desc=f"{s}") for s in [(3, 4), (2, 3, 4), (), (0, 3)]]


def broadcast_to_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 1)), (3, 4)], desc="(3,1)->(3,4)"),
        _s([a((4,)), (2, 3, 4)], desc="new leading dims"),
        _s([a(()), (2, 2)], desc="0-d"),
        _s([a((3, 1)), (-1, 2)], desc="-1 keeps"),
        _s([a((3, 2)), (3, 4)], desc="incompatible (error)"),
    ]


def as_like_samples(kind):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype)  # noqa: E731
        other = {"expand": [((3, 1), (2, 3, 4)), ((1,), (5,)), ((), (2, 2))],
                 "view": [((2, 6), (3, 4)), ((4,), (2, 2)), ((1,), ())],
                 "reshape": [((2, 6), (4, 3)), ((2, 3, 4), (24,)), ((0, 3), (3, 0))]}[kind]
        out = [_s([a(x), a(y)], desc=f"{x} as {y}") for x, y in other]
        out.append(_s([a((2, 3)), a((4,))], desc="incompatible (error)"))
        return out
    return gen


def tensor_split_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((7, 2)), 3], desc="3 sections of 7"),
        _s([a((2, 6)), 4], {"dim": 1}, desc="sections along dim 1"),
        _s([a((8,)), [1, 5]], desc="indices"),
        _s([a((3, 8)), (2, 2, 7)], {"dim": -1}, desc="repeated indices, dim -1"),
        _s([a((5,)), [-2, 10]], desc="negative and past-the-end indices"),
        # The split points are values: nothing for the meta device to infer them from.
        Sample((a((4, 3)), const([1, 3], "int64")), desc="tensor of indices", meta=False),
        Sample((a((6,)), const(2, "int64")), desc="0-d tensor of sections", meta=False),
        _s([a((4,)), 0], desc="0 sections (error)"),
        _s([a(()), 2], desc="0-d input (error)"),
    ]


def atleast_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [_s([a(s)], desc=f"{s}") for s in [(), (3,), (2, 3), (2, 3, 4), (0,)]] + [
        _s([a(()), a((2,)), a((2, 3))], desc="several (varargs)"),
        _s([[a(()), a((2, 3, 1, 1))]], desc="several (list)"),
    ]


def broadcast_tensors_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 1)), a((1, 4))], desc="two"),
        _s([a((2, 1, 4)), a((3, 1)), a(())], desc="three incl. 0-d"),
        _s([a((3,))], desc="one"),
        _s([a((0, 1)), a((1, 3))], desc="zero-size"),
        _s([a((3,)), a((4,))], desc="mismatch (error)"),
    ]


def meshgrid_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3,)), a((4,))], {"indexing": "ij"}, desc="ij"),
        _s([a((3,)), a((4,)), a((2,))], {"indexing": "xy"}, desc="xy, three"),
        _s([a((3,)), a(())], {"indexing": "ij"}, desc="0-d input"),
        _s([[a((2,)), a((3,))]], {"indexing": "xy"}, desc="list input"),
        _s([a((3,))], {"indexing": "xy"}, desc="one input, xy"),
        _s([a((2, 2)), a((3,))], {"indexing": "ij"}, desc="2-d input (error)"),
    ]


def _python_form(name):
    """flow.<name> is Python glue with another signature than the table op (varargs, slice
    tuples): the boxed-form test, which uses the table signature, checks it separately
    (tests/test_shape_ops.py)."""
    return lambda lib: lambda *a, **k: getattr(lib, name)(*a, **k)


def _slice_ref(torch):
    """x sliced per dim with Python slice semantics (torch indexing lacks negative steps)."""
    def f(x, slice_tup_list):
        for d, tup in enumerate(slice_tup_list):
            idx = list(range(x.shape[d]))[slice(*tup)]
            x = torch.index_select(x, d, torch.tensor(idx, dtype=torch.int64))
        return x
    return f


def slice_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 6, 9)), [[None, None, None], [0, 5, 2], [0, 6, 3]]], desc="spec example"),
        _s([a((5, 4)), [[1, 4, 1]]], desc="fewer tuples than dims"),
        _s([a((6,)), [[-4, None, 1]]], desc="negative start"),
        _s([a((6, 3)), [[None, None, -2], [2, 0, -1]]], desc="negative steps"),
        _s([a((4,)), [[10, 20, 1]]], desc="past the end: empty"),
        _s([a((4,)), [[0, 4, 0]]], desc="step 0 (error)"),
    ]


add(OpInfo("t", "shape", ALL + COMPLEX, t_samples))
add(OpInfo("diagonal", "shape", ALL + COMPLEX, diagonal_samples))
add(OpInfo("select", "shape", ALL + COMPLEX, select_samples))
add(OpInfo("unfold", "shape", ALL, unfold_samples, fn=False, ref=lambda torch: torch.Tensor.unfold))
add(OpInfo("as_strided", "shape", ALL + COMPLEX, as_strided_samples, layout_dependent=True))
add(OpInfo("movedim", "shape", ALL + COMPLEX, movedim_samples))
add(OpInfo("unbind", "shape", ALL + COMPLEX, unbind_samples))
add(OpInfo("unflatten", "shape", ALL + COMPLEX, unflatten_samples))
add(OpInfo("ravel", "shape", ALL + COMPLEX, ravel_samples))
add(OpInfo("broadcast_to", "shape", ALL + COMPLEX, broadcast_to_samples))
for _k in ("expand", "view", "reshape"):
    add(OpInfo(f"{_k}_as", "shape", ALL, as_like_samples(_k), fn=False,
               ref=(lambda n: lambda torch: getattr(torch.Tensor, n))(f"{_k}_as")))
add(OpInfo("tensor_split", "shape", ALL + COMPLEX, tensor_split_samples))
for _n in ("atleast_1d", "atleast_2d", "atleast_3d"):
    add(OpInfo(_n, "shape", ALL, atleast_samples, method=""))
add(OpInfo("broadcast_tensors", "shape", ALL + COMPLEX, broadcast_tensors_samples, method="",
           fn=_python_form("broadcast_tensors")))
add(OpInfo("meshgrid", "shape", ALL + COMPLEX, meshgrid_samples, method="", fn=_python_form("meshgrid")))
add(OpInfo("slice", "shape", ALL + COMPLEX, slice_samples, ref=_slice_ref, method="",
           fn=_python_form("slice")))


def hvdsplit_samples(name):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype)  # noqa: E731
        shape = {"hsplit": (3, 6), "vsplit": (6, 3), "dsplit": (2, 3, 6)}[name]
        out = [
            _s([a(shape), 3], desc="3 equal sections"),
            _s([a(shape), [1, 4]], desc="indices"),
            _s([a(shape), 4], desc="not divisible (error)"),
        ]
        if name == "hsplit":
            out.append(_s([a((6,)), 2], desc="1-d splits dim 0"))
        else:
            out.append(_s([a((6,)), 2], desc="too few dims (error)"))
        return out
    return gen


for _n in ("hsplit", "vsplit", "dsplit"):
    add(OpInfo(_n, "shape", ALL, hvdsplit_samples(_n)))
