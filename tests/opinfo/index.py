"""OpInfos of the selection / scatter / indexing ops (src/ops/table/index.yaml).

OneFlow accepts integral conditions and masks (nonzero = true) where PyTorch wants bool: those
samples compare with torch run on the bool-converted mask (the refs below), and the dtypes that
carry them are ``oneflow_dtypes`` (skipped under the torch shim).
"""

from .core import *  # noqa: F401,F403


def idx(values, dtype="int64"):
    return Arr(np.asarray(values, dtype=NP_DTYPE[dtype]), dtype)


def rand_idx(rng, shape, hi, dtype="int64"):
    return Arr(rng.integers(0, hi, size=shape).astype(NP_DTYPE[dtype]), dtype)


def mask(rng, shape, dtype="bool"):
    m = rng.random(shape) < 0.5
    if dtype == "bool":
        return Arr(m, "bool")
    v = np.where(m, rng.integers(1, 3, size=shape) * (1 if dtype == "uint8" else -1), 0)
    return Arr(v.astype(NP_DTYPE[dtype]), dtype)


def fill_value(dtype):
    return True if dtype == "bool" else 3 if dtype in INTS else 2.5


def _as_bool_masks(f, positions):
    """torch call with the integral masks at ``positions`` converted to bool (OneFlow's rule)."""

    def g(*args, **kwargs):
        args = list(args)
        for p in positions:
            a = args[p] if p < len(args) else None
            if hasattr(a, "dtype") and a.dtype != a.new_zeros(()).bool().dtype and not a.is_floating_point():
                args[p] = args[p] != 0
        return f(*args, **kwargs)

    return g


def _masked_inplace(name):
    """x.<name>_(mask, ...) with torch's mask converted to bool (OneFlow's integral masks)."""

    def inplace(lib):
        def f(x, mask, *args, **kwargs):
            if lib.__name__ == "torch":
                mask = _as_bool_masks(lambda m: m, [0])(mask)
            return getattr(x, name + "_")(mask, *args, **kwargs)

        return f

    return inplace


# The dtype whose samples add OneFlow's integral masks (see the module docstring).
MASK_DTYPE = "float32"

# -- where ------------------------------------------------------------------------


def where_index_samples(dtype, rng):
    out = where_samples(dtype, rng)
    if dtype == MASK_DTYPE:
        out += [
            Sample((mask(rng, (3, 4), "int32"), arr(rng, (3, 4), dtype), arr(rng, (3, 4), dtype)),
                   desc="int32 condition (OneFlow)"),
            Sample((mask(rng, (3, 1), "uint8"), arr(rng, (1, 4), dtype), 1.5), desc="uint8 condition, broadcast"),
            Sample((mask(rng, (2, 3), "int64"), arr(rng, (2, 3), dtype), arr(rng, (2, 3), "float64")),
                   desc="int64 condition, mixed dtypes"),
        ]
    out.append(Sample((arr(rng, (3,), "float32"), arr(rng, (3,), dtype), arr(rng, (3,), dtype)),
                      desc="float condition: error"))
    return out


add(OpInfo("where", "where", ALL, where_index_samples,
           ref=lambda torch: _as_bool_masks(torch.where, [0]), oneflow_dtypes=(MASK_DTYPE,)))

# -- masked_* ---------------------------------------------------------------------


def masked_fill_samples(dtype, rng):
    v = fill_value(dtype)
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    out = [
        Sample((x((3, 4)), mask(rng, (3, 4)), v), desc="same shape"),
        Sample((x((3, 4)), mask(rng, (4,)), v), desc="broadcast mask"),
        Sample((x((3, 4)), mask(rng, (3, 1)), v), desc="column mask"),
        Sample((x(()), mask(rng, ()), v), desc="0-d"),
        Sample((x((0, 3)), mask(rng, (3,)), v), desc="zero-size"),
        Sample((x((2, 3)), mask(rng, (2, 3)), arr(rng, (), dtype)), desc="0-d tensor value"),
        Sample((x((2, 3)), mask(rng, (2, 3)), arr(rng, (), "float64")), desc="float64 0-d value"),
        Sample((x((3,)), mask(rng, (2, 3)), v), desc="mask broadcasts self (in place: error)"),
        Sample((x((2, 3)), mask(rng, (2, 3)), arr(rng, (2,), dtype)), desc="1-d value: error"),
        Sample((x((2, 3)), Arr(rng.random((2, 3)), "float64"), v), desc="float mask: error"),
    ]
    if dtype in ("int8", "uint8"):
        out.append(Sample((x((2, 3)), mask(rng, (2, 3)), 1000), desc="value overflows: error"))
    if dtype == MASK_DTYPE:
        out.append(Sample((x((3, 4)), mask(rng, (3, 4), "int8"), v), desc="int8 mask (OneFlow)"))
        out.append(Sample((x((3, 4)), mask(rng, (4,), "int64"), 1.0), desc="int64 mask, broadcast"))
    return out


add(OpInfo("masked_fill", "masked", ALL + COMPLEX, masked_fill_samples, inplace=True,
           inplace_fn=_masked_inplace("masked_fill"),
           ref=lambda torch: _as_bool_masks(torch.masked_fill, [1]), oneflow_dtypes=(MASK_DTYPE,)))


def masked_select_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    out = [
        Sample((x((3, 4)), mask(rng, (3, 4))), desc="same shape"),
        Sample((x((3, 4)), mask(rng, (4,))), desc="broadcast mask"),
        Sample((x((4,)), mask(rng, (2, 4))), desc="mask broadcasts input"),
        Sample((x(()), Arr(np.array(True), "bool")), desc="0-d"),
        Sample((x((0, 3)), mask(rng, (3,))), desc="zero-size"),
        Sample((x((2, 3)), Arr(np.zeros((2, 3), bool), "bool")), desc="nothing selected"),
        Sample((x((2, 3)), mask(rng, (3, 3))), desc="shape mismatch: error"),
    ]
    if dtype == MASK_DTYPE:
        out.append(Sample((x((3, 4)), mask(rng, (3, 4), "uint8")), desc="uint8 mask (OneFlow)"))
    return out


add(OpInfo("masked_select", "masked", ALL + COMPLEX, masked_select_samples, data_dependent=True,
           ref=lambda torch: _as_bool_masks(torch.masked_select, [1]), oneflow_dtypes=(MASK_DTYPE,)))


def masked_scatter_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    out = [
        Sample((x((3, 4)), mask(rng, (3, 4)), x((3, 4))), desc="same shape"),
        Sample((x((3, 4)), mask(rng, (4,)), x((2, 8))), desc="broadcast mask, larger source"),
        Sample((x(()), Arr(np.array(True), "bool"), x((2,))), desc="0-d"),
        Sample((x((0, 3)), mask(rng, (3,)), x((2,))), desc="zero-size"),
        Sample((x((2, 3)), Arr(np.ones((2, 3), bool), "bool"), x((5,))), desc="source too small: error"),
    ]
    other = "float64" if dtype != "float64" else "float32"
    out.append(Sample((x((2, 3)), mask(rng, (2, 3)), arr(rng, (6,), other)), desc="source dtype: error"))
    if dtype == MASK_DTYPE:
        out.append(Sample((x((3, 4)), mask(rng, (3, 4), "int32"), x((12,))), desc="int32 mask (OneFlow)"))
    return out


add(OpInfo("masked_scatter", "masked", ALL + COMPLEX, masked_scatter_samples, inplace=True,
           inplace_fn=_masked_inplace("masked_scatter"),
           ref=lambda torch: _as_bool_masks(torch.masked_scatter, [1]), oneflow_dtypes=(MASK_DTYPE,)))


def nonzero_samples(dtype, rng, as_tuple=True):
    z = Domain(-1.0, 1.0, -1, 1)
    out = [
        Sample((arr(rng, (3, 4), dtype, z),), desc="2-d"),
        Sample((arr(rng, (2, 3, 4), dtype, z),), desc="3-d"),
        Sample((arr(rng, (7,), dtype, z),), desc="1-d"),
        Sample((const(1, dtype),), desc="0-d nonzero"),
        Sample((const(0, dtype),), desc="0-d zero"),
        Sample((arr(rng, (0, 3), dtype),), desc="zero-size"),
    ]
    if as_tuple:
        out += [
            Sample((arr(rng, (3, 4), dtype, z),), {"as_tuple": True}, desc="as_tuple"),
            Sample((const(1, dtype),), {"as_tuple": True}, desc="0-d as_tuple"),
            Sample((arr(rng, (5,), dtype, z),), {"as_tuple": True}, desc="1-d as_tuple"),
        ]
    if dtype in FLOATS:
        out.append(Sample((const([0.0, -0.0, float("nan"), 1.0], dtype),), desc="nan counts, -0.0 not"))
    return out


add(OpInfo("nonzero", "nonzero", ALL, nonzero_samples, data_dependent=True))
add(OpInfo("argwhere", "nonzero", ALL, lambda d, r: nonzero_samples(d, r, False), data_dependent=True))

# -- gather / scatter ------------------------------------------------------------------


def _gather_ref(torch):
    """torch.gather with OneFlow's gather(input, index, dim=...) order accepted."""

    def g(input, *args, sparse_grad=False, **kwargs):
        dim, index = kwargs.get("dim"), kwargs.get("index")
        if args and isinstance(args[0], torch.Tensor):
            index = args[0]
            dim = args[1] if len(args) > 1 else (0 if dim is None else dim)
        else:
            if args:
                dim = args[0]
            if len(args) > 1:
                index = args[1]
        return torch.gather(input, dim, index, sparse_grad=sparse_grad)

    return g


def gather_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((3, 4)), 1, rand_idx(rng, (3, 2), 4)), desc="dim 1"),
        Sample((x((3, 4)), 0, rand_idx(rng, (5, 4), 3)), desc="dim 0, repeats"),
        Sample((x((3, 4)), -1, rand_idx(rng, (2, 3), 4)), desc="dim -1, smaller index"),
        Sample((x((2, 3, 4)), 1, rand_idx(rng, (2, 5, 4), 3)), desc="3-d"),
        Sample((x((2, 3, 4)), 2, rand_idx(rng, (1, 2, 6), 4, "int32")), desc="int32 index"),
        Sample((x(()), 0, idx(0)), desc="0-d"),
        Sample((x((5,)), 0, idx(3)), desc="0-d index"),
        Sample((x((3, 4)), 1, Arr(np.zeros((3, 0), np.int64), "int64")), desc="empty index"),
        Sample((x((3, 4)), 1, rand_idx(rng, (3, 2), 4)), {"sparse_grad": True}, desc="sparse_grad"),
        Sample((x((3, 4)), rand_idx(rng, (3, 2), 4)), {"dim": 1}, desc="OneFlow order gather(x, index, dim=1)"),
        Sample((x((3, 4)), rand_idx(rng, (2, 4), 3)), desc="OneFlow order, default dim 0"),
        Sample((x((3, 4)),), {"dim": 1, "index": rand_idx(rng, (3, 2), 4)}, desc="keywords"),
        Sample((x((3, 4)), 1, idx([[0], [4], [1]])), desc="index out of range: error"),
        Sample((x((3, 4)), 1, idx([[0], [-1], [1]])), desc="negative index: error"),
        Sample((x((3, 4)), 1, Arr(np.zeros((3, 1), np.float32), "float32")), desc="float index: error"),
        Sample((x((3, 4)), 1, idx([0, 1])), desc="index ndim mismatch: error"),
        Sample((x((3, 4)), 1, rand_idx(rng, (4, 1), 4)), desc="index too large: error"),
        Sample((x((3, 4)), 2, rand_idx(rng, (3, 1), 4)), desc="bad dim: error"),
    ]


add(OpInfo("gather", "gather", ALL + COMPLEX, gather_samples, ref=_gather_ref))


def _scatter_src(rng, dtype, shape):
    return arr(rng, shape, dtype)


def _perm_idx(rng, rows, n, k):
    """Distinct targets per row: [rows, k] indices into a dim of size n."""
    return Arr(np.stack([rng.permutation(n)[:k] for _ in range(rows)]).astype(np.int64), "int64")


def scatter_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    v = fill_value(dtype)
    out = [
        Sample((x((3, 5)), 1, _perm_idx(rng, 3, 5, 3), x((3, 3))), desc="dim 1"),
        Sample((x((4, 3)), 0, idx([[0, 1, 2], [3, 0, 1]]), x((2, 3))), desc="dim 0"),
        Sample((x((3, 5)), -1, _perm_idx(rng, 2, 5, 2), x((3, 4))), desc="dim -1, src larger than index"),
        Sample((x((3, 5)), 1, idx([[0, 0], [1, 1], [2, 2]]), x((3, 2))), desc="repeated targets (last wins)"),
        Sample((x((3, 5)), 1, _perm_idx(rng, 3, 5, 2), v), desc="scalar value positional"),
        Sample((x((3, 5)), 1, _perm_idx(rng, 3, 5, 2)), {"value": v}, desc="value="),
        Sample((x(()), 0, idx(0), x(())), desc="0-d"),
        Sample((x((3, 5)), 1, Arr(np.zeros((3, 0), np.int64), "int64"), x((3, 0))), desc="empty index"),
        Sample((x((3, 5)), 1, Arr(_perm_idx(rng, 3, 5, 3).value.astype(np.int32), "int32"), x((3, 3))),
               desc="int32 index"),
        Sample((x((3, 5)), 1, idx([[0], [5], [1]]), x((3, 1))), desc="index out of range: error"),
        Sample((x((3, 5)), 1, _perm_idx(rng, 3, 5, 2), x((3, 1))), desc="src smaller than index: error"),
        Sample((x((3, 5)), 1, _perm_idx(rng, 3, 5, 2), x((3, 2))), {"reduce": "mean"}, desc="bad reduce: error"),
    ]
    other = "float64" if dtype != "float64" else "float32"
    out.append(Sample((x((3, 5)), 1, _perm_idx(rng, 3, 5, 2), arr(rng, (3, 2), other)), desc="src dtype: error"))
    if dtype != "bool":
        dup = idx([[0, 0, 1], [2, 2, 2], [4, 3, 4]])
        out += [
            Sample((x((3, 5)), 1, dup, x((3, 3))), {"reduce": "add"}, desc="reduce add"),
            Sample((x((3, 5)), 1, dup, x((3, 3))), {"reduce": "multiply"}, desc="reduce multiply"),
            Sample((x((3, 5)), 1, dup, 2), {"reduce": "add"}, desc="reduce add, scalar"),
            Sample((x((3, 5)), 1, dup, 2), {"reduce": "multiply"}, desc="reduce multiply, scalar"),
        ]
    return out


add(OpInfo("scatter", "scatter", ALL + COMPLEX, scatter_samples, inplace=True))


def scatter_add_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((3, 5)), 1, rand_idx(rng, (3, 4), 5), x((3, 4))), desc="dim 1, repeats"),
        Sample((x((4, 3)), 0, rand_idx(rng, (6, 3), 4), x((6, 3))), desc="dim 0, repeats"),
        Sample((x((2, 3, 4)), 1, rand_idx(rng, (2, 5, 3), 3), x((2, 5, 4))), desc="3-d, src larger"),
        Sample((x((6,)), 0, rand_idx(rng, (10,), 6), x((10,))), desc="1-d"),
        Sample((x(()), 0, idx(0), x(())), desc="0-d"),
        Sample((x((3, 5)), -1, Arr(np.zeros((3, 0), np.int64), "int64"), x((3, 0))), desc="empty index"),
        Sample((x((3, 5)), 1, idx([[0], [7], [1]]), x((3, 1))), desc="index out of range: error"),
        Sample((x((3, 5)), 1, idx([0, 1]), x((2,))), desc="ndim mismatch: error"),
    ]


add(OpInfo("scatter_add", "scatter", ALL, scatter_add_samples, inplace=True))


def scatter_reduce_samples(dtype, rng):
    # Small integers: products and sums stay exact in every dtype.
    dom = Domain(-2.0, 2.0, -2, 2) if dtype != "uint8" else Domain(0.0, 2.0, 0, 2)
    x = lambda s: arr(rng, s, dtype, dom)  # noqa: E731
    ind = rand_idx(rng, (3, 4), 5)
    out = []
    for red in ("sum", "prod", "mean", "amax", "amin"):
        if dtype == "bool" and red == "mean":
            out.append(Sample((x((3, 5)), 1, ind, x((3, 4)), red), desc="bool mean: error"))
            continue
        for inc in (True, False):
            out.append(Sample((x((3, 5)), 1, ind, x((3, 4)), red), {"include_self": inc},
                              desc=f"{red} include_self={inc}"))
        out.append(Sample((x((4, 3)), 0, rand_idx(rng, (5, 3), 4), x((5, 3)), red), desc=f"{red} dim 0"))
    out += [
        Sample((x(()), 0, idx(0), x(()), "sum"), desc="0-d"),
        Sample((x((3, 5)), 1, ind, x((3, 4)), "max"), desc="max (amax)"),
        Sample((x((3, 5)), 1, ind, x((3, 4)), "add"), desc="bad reduce: error"),
    ]
    return out


add(OpInfo("scatter_reduce", "scatter", ALL, scatter_reduce_samples, inplace=True))

# -- take / take_along_dim / index_* ------------------------------------------------


def take_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((3, 4)), rand_idx(rng, (2, 3), 12)), desc="2-d index"),
        Sample((x((3, 4)), idx([-1, -12, 5])), desc="negative indices"),
        Sample((x((5,)), idx(2)), desc="0-d index"),
        Sample((x(()), idx([0, 0])), desc="0-d input"),
        Sample((x((3, 4)), Arr(np.zeros((0,), np.int64), "int64")), desc="empty index"),
        Sample((x((3, 4)), idx([12])), desc="out of range: error"),
        Sample((x((3, 4)), idx([0, 1], "int32")), desc="int32 index: error"),
    ]


add(OpInfo("take", "gather", ALL + COMPLEX, take_samples))


def take_along_dim_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((3, 4)), rand_idx(rng, (3, 2), 4), 1), desc="dim 1"),
        Sample((x((3, 4)), rand_idx(rng, (2, 4), 3)), {"dim": 0}, desc="dim 0"),
        Sample((x((3, 4)), rand_idx(rng, (1, 5), 4), -1), desc="broadcast indices"),
        Sample((x((3, 1)), rand_idx(rng, (3, 2), 1), 1), desc="broadcast input"),
        Sample((x((3, 4)), idx([[-1], [-4], [0]]), 1), desc="negative indices"),
        Sample((x((3, 4)), rand_idx(rng, (5,), 12)), desc="dim None (flattened)"),
        Sample((x(()), idx(0), 0), desc="0-d"),
        Sample((x((3, 4)), idx([[0], [1], [2]], "int32"), 1), desc="int32 indices: error"),
        Sample((x((3, 4)), idx([0, 1]), 1), desc="ndim mismatch: error"),
        Sample((x((3, 4)), idx([13])), desc="dim None, out of range: error"),
    ]


add(OpInfo("take_along_dim", "gather", ALL + COMPLEX, take_along_dim_samples))


def index_select_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((3, 4)), 0, idx([2, 0, 2])), desc="dim 0, repeats"),
        Sample((x((3, 4)), 1, idx([3, 1])), desc="dim 1"),
        Sample((x((2, 3, 4)), -2, idx([1], "int32")), desc="dim -2, int32"),
        Sample((x((5,)), 0, idx(3)), desc="0-d index"),
        Sample((x(()), 0, idx([0])), desc="0-d input"),
        Sample((x((3, 4)), 1, Arr(np.zeros((0,), np.int64), "int64")), desc="empty index"),
        Sample((x((0, 4)), 1, idx([1, 1])), desc="zero-size input"),
        Sample((x((3, 4)), 1, idx([0, 4])), desc="out of range: error"),
        Sample((x((3, 4)), 1, idx([0, -1])), desc="negative: error"),
        Sample((x((3, 4)), 1, idx([[0, 1]])), desc="2-d index: error"),
        Sample((x((3, 4)), 1, Arr(np.zeros((2,), np.float32), "float32")), desc="float index: error"),
    ]


add(OpInfo("index_select", "gather", ALL + COMPLEX, index_select_samples))


def index_add_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    out = [
        Sample((x((4, 3)), 0, idx([0, 2, 0]), x((3, 3))), desc="dim 0, repeats"),
        Sample((x((3, 5)), 1, idx([4, 0], "int32"), x((3, 2))), desc="dim 1, int32"),
        Sample((x((2, 3, 4)), -1, idx([1, 1, 3]), x((2, 3, 3))), desc="dim -1"),
        Sample((x(()), 0, idx([0]), x(())), desc="0-d"),
        Sample((x((3, 4)), 0, Arr(np.zeros((0,), np.int64), "int64"), x((0, 4))), desc="empty index"),
        Sample((x((4, 3)), 0, idx([0, 4]), x((2, 3))), desc="out of range: error"),
        Sample((x((4, 3)), 0, idx([0, 1]), x((3, 3))), desc="count mismatch: error"),
        Sample((x((4, 3)), 0, idx([0, 1]), x((2, 2))), desc="slice shape mismatch: error"),
    ]
    if dtype != "bool":
        out.append(Sample((x((4, 3)), 0, idx([1, 3, 1]), x((3, 3))), {"alpha": 2 if dtype in INTS else 0.5},
                          desc="alpha"))
    return out


add(OpInfo("index_add", "index", ALL + COMPLEX, index_add_samples, inplace=True))


def index_fill_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    v = fill_value(dtype)
    return [
        Sample((x((4, 3)), 0, idx([0, 2, 0]), v), desc="dim 0, repeats"),
        Sample((x((3, 5)), 1, idx([4, -1]), v), desc="dim 1, negative"),
        Sample((x((2, 3, 4)), -1, idx([1]), arr(rng, (), dtype)), desc="0-d tensor value"),
        Sample((x(()), 0, idx([0]), v), desc="0-d"),
        Sample((x((3, 4)), 0, Arr(np.zeros((0,), np.int64), "int64"), v), desc="empty index"),
        Sample((x((4, 3)), 0, idx([0, 4]), v), desc="out of range: error"),
        Sample((x((4, 3)), 0, idx([0, 1], "int32"), v), desc="int32 index: error"),
        Sample((x((4, 3)), 0, idx([0]), arr(rng, (2,), dtype)), desc="1-d value: error"),
    ]


add(OpInfo("index_fill", "index", ALL + COMPLEX, index_fill_samples, inplace=True))


def index_copy_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((4, 3)), 0, idx([3, 0]), x((2, 3))), desc="dim 0"),
        Sample((x((3, 5)), 1, idx([4, 0, 2]), x((3, 3))), desc="dim 1"),
        Sample((x((2, 3, 4)), -1, idx([1]), x((2, 3, 1))), desc="dim -1"),
        Sample((x(()), 0, idx([0]), x(())), desc="0-d"),
        Sample((x((4, 3)), 0, idx([0, 4]), x((2, 3))), desc="out of range: error"),
        Sample((x((4, 3)), 0, idx([0, 1], "int32"), x((2, 3))), desc="int32 index: error"),
        Sample((x((4, 3)), 0, idx([0, 1, 2]), x((2, 3))), desc="count mismatch: error"),
        Sample((x((4, 3)), 0, idx([0, 1]), x((2,))), desc="ndim mismatch: error"),
    ]


add(OpInfo("index_copy", "index", ALL + COMPLEX, index_copy_samples, inplace=True))


def index_put_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    other = "float64" if dtype != "float64" else "float32"
    return [
        Sample((x((4, 3)), (idx([0, 2]),), x((2, 3))), desc="rows"),
        Sample((x((4, 3)), (idx([0, 2, 3]), idx([1, 1, 0])), x((3,))), desc="points"),
        Sample((x((4, 3)), (idx([[0], [3]]), idx([0, 2])), x((1,))), desc="broadcast indices and values"),
        Sample((x((4, 3)), (idx([1, 1, 2]),), x((3, 3))), {"accumulate": True}, desc="accumulate, repeats"),
        Sample((x((4, 3)), (idx([-1, 0], "int32"),), x((3,))), desc="negative, int32"),
        Sample((x((4, 3)), (Arr(np.zeros((0,), np.int64), "int64"),), x((3,))), desc="empty index"),
        Sample((x((4, 3)), (idx([4]),), x((3,))), desc="out of range: error"),
        Sample((x((4, 3)), (idx([0]),), arr(rng, (3,), other)), desc="values dtype: error"),
        Sample((x((4, 3)), (idx([0, 1]),), x((3, 2))), desc="values shape: error"),
    ]


add(OpInfo("index_put", "index", ALL + COMPLEX, index_put_samples, inplace=True))

# -- n-d index ops (OneFlow; references written with torch indexing) --------------------


def _nd(indices):
    return tuple(indices.long().unbind(-1))


def _gather_nd_ref(torch):
    return lambda params, indices: params[_nd(indices)]


def _scatter_nd_ref(torch):
    def f(indices, updates, shape):
        z = torch.zeros(shape, dtype=updates.dtype)
        return z.index_put(_nd(indices), updates, accumulate=True)

    return f


def _tensor_scatter_nd_update_ref(torch):
    def f(params, indices, updates):
        cleared = params.index_put(_nd(indices), torch.zeros((), dtype=params.dtype))
        return cleared.index_put(_nd(indices), updates, accumulate=True)

    return f


def _tensor_scatter_nd_add_ref(torch):
    return lambda params, indices, updates: params.index_put(_nd(indices), updates, accumulate=True)


def gather_nd_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((3, 3)), idx([[0], [2]], "int32")), desc="rows (spec example 1)"),
        Sample((x((3, 3)), idx([[0, 2], [2, 1]])), desc="points (spec example 2)"),
        Sample((x((2, 3, 4)), rand_idx(rng, (2, 2, 2), 2)), desc="batched, slices"),
        Sample((x((2, 3)), Arr(np.zeros((0, 2), np.int64), "int64")), desc="no rows"),
        Sample((x((3, 3)), idx([[3]])), desc="out of range: error"),
        Sample((x((3, 3)), idx([[0, 0, 0]])), desc="K too large: error"),
    ]


def scatter_nd_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((idx([[1], [6], [4]], "int32"), x((3,)), [8]), desc="spec example"),
        Sample((idx([[0], [2], [0]]), x((3, 4)), [3, 4]), desc="slices, repeats add"),
        Sample((idx([[0, 1], [2, 3]]), x((2,)), (3, 4)), desc="points"),
        Sample((idx([[3]]), x((1,)), [3]), desc="out of range: error"),
        Sample((idx([[0]]), x((2,)), [3]), desc="updates shape: error"),
    ]


def tensor_scatter_nd_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((x((5, 3)), idx([[0], [4], [2]], "int32"), x((3, 3))), desc="spec example"),
        Sample((x((3, 4)), idx([[0, 1], [2, 3], [1, 1]]), x((3,))), desc="points"),
        Sample((x((2, 3, 4)), idx([[1, 2]]), x((1, 4))), desc="slices"),
        Sample((x((3, 4)), idx([[5]]), x((1, 4))), desc="out of range: error"),
        Sample((x((3, 4)), idx([[0]]), x((1, 3))), desc="updates shape: error"),
    ]


add(OpInfo("gather_nd", "nd", ALL + COMPLEX, gather_nd_samples, ref=_gather_nd_ref, method=""))
add(OpInfo("scatter_nd", "nd", ALL, scatter_nd_samples, ref=_scatter_nd_ref, method=""))
add(OpInfo("tensor_scatter_nd_update", "nd", ALL, tensor_scatter_nd_samples, ref=_tensor_scatter_nd_update_ref,
           method=""))
add(OpInfo("tensor_scatter_nd_add", "nd", ALL, tensor_scatter_nd_samples, ref=_tensor_scatter_nd_add_ref,
           method=""))
