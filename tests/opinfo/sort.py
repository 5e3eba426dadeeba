"""OpInfos of the sorting and searching ops (src/ops/table/sort.yaml).

PyTorch leaves the positions of equal values unspecified in a non-stable sort, topk, kthvalue and
median(dim): their samples use distinct values (``distinct``), and ties are tested with
stable=True, where the order is defined (ours is always stable).
"""

from .core import *  # noqa: F401,F403

NAN = float("nan")
INF = float("inf")


def _distinct_long(rng, n, dtype):
    """n distinct values (``distinct`` runs out of bfloat16's 8 mantissa bits past ~256)."""
    if dtype != "bfloat16":
        return distinct(rng, (n,), dtype)
    bits = (np.arange(n, dtype=np.uint32) + 0x3F00) << 16  # 0.5, then every bfloat16 upward
    v = bits.view(np.float32) * np.where(rng.random(n) < 0.5, -1, 1).astype(np.float32)
    return Arr(v[rng.permutation(n)], dtype)


def _ties(rng, shape, dtype):
    """Values with many repeats (small integers; False/True for bool)."""
    return arr(rng, shape, dtype, Domain(-2.0, 2.0, -2, 2) if dtype != "uint8" else Domain(0.0, 2.0, 0, 2))


def _ties_f(rng, shape, dtype):
    a = _ties(rng, shape, dtype)
    if dtype in FLOATS:
        return Arr(np.round(a.value).astype(a.value.dtype), dtype)
    return a


def sort_samples(dtype, rng, argsort=False):
    d = lambda s: distinct(rng, s, dtype) if dtype != "bool" else arr(rng, s, dtype)  # noqa: E731
    st = {"stable": True}
    out = [
        Sample((_ties_f(rng, (3, 6), dtype),), st, desc="ties, stable"),
        Sample((_ties_f(rng, (3, 6), dtype),), {"stable": True, "descending": True}, desc="ties, stable, descending"),
        Sample((_ties_f(rng, (4, 3), dtype), 0), st, desc="ties, dim 0, stable"),
        Sample((_ties_f(rng, (700,), dtype),), st, desc="long row with ties (radix path)"),
        Sample((_ties_f(rng, (0, 3), dtype),), st, desc="zero-size"),
        Sample((_ties_f(rng, (3, 0), dtype),), st, desc="empty rows"),
    ]
    if dtype != "bool":
        out += [
            Sample((d((3, 5)),), desc="distinct"),
            Sample((d((3, 5)),), {"descending": True}, desc="descending"),
            Sample((d((4, 3)), 0), desc="dim 0"),
            Sample((d((2, 3, 4)),), {"dim": -2, "descending": True}, desc="dim -2 descending"),
            Sample((d(()),), desc="0-d"),
        ]
        if dtype not in ("int8", "uint8"):  # more distinct values than 8 bits hold
            out.append(Sample((_distinct_long(rng, 600, dtype),), desc="long row (radix path)"))
            out.append(Sample((_distinct_long(rng, 600, dtype),), {"descending": True}, desc="long row descending"))
    else:
        out.append(Sample((arr(rng, (), dtype),), desc="0-d"))
    if dtype in FLOATS:
        sp = [0.5, NAN, -INF, 2.0, INF, -1.0, -0.5, 3.0]
        out += [
            Sample((const(sp, dtype),), desc="nan and inf"),
            Sample((const(sp, dtype),), {"descending": True}, desc="nan and inf, descending"),
        ]
    out.append(Sample((d((3, 4)) if dtype != "bool" else arr(rng, (3, 4), dtype), 2), desc="bad dim: error"))
    return out


add(OpInfo("sort", "sort", ALL, sort_samples))
add(OpInfo("argsort", "sort", ALL, lambda d, r: sort_samples(d, r, True)))


def msort_samples(dtype, rng):
    d = lambda s: distinct(rng, s, dtype) if dtype != "bool" else arr(rng, s, dtype)  # noqa: E731
    return [
        Sample((d((4, 3)),), desc="2-d"),
        Sample((d((5,)),), desc="1-d"),
        Sample((d(()),), desc="0-d"),
        Sample((d((0, 3)),), desc="zero-size"),
    ]


add(OpInfo("msort", "sort", ALL, msort_samples))


def _topk_ref(torch):
    # sorted=False leaves torch's order unspecified; ours is always sorted, which is one valid answer.
    def f(input, *args, **kwargs):
        kwargs["sorted"] = True
        if len(args) > 3:
            args = args[:3]
        return torch.topk(input, *args, **kwargs)

    return f


def topk_samples(dtype, rng):
    d = lambda s: distinct(rng, s, dtype)  # noqa: E731
    out = [
        Sample((d((3, 6)), 2), desc="k=2"),
        Sample((d((3, 6)), 3), {"largest": False}, desc="smallest"),
        Sample((d((4, 3)), 2, 0), desc="dim 0"),
        Sample((d((2, 3, 4)), 4), {"dim": -1}, desc="k = size"),
        Sample((d((3, 6)), 0), desc="k=0"),
        Sample((d((3, 6)), 4), {"sorted": False}, desc="sorted=False"),
        Sample((d(()), 1), desc="0-d"),
        Sample((d((0, 3)), 2), desc="zero-size"),
        Sample((d((3, 6)), 7), desc="k too large: error"),
        Sample((d((3, 6)), -1), desc="k negative: error"),
    ]
    if dtype not in ("int8", "uint8"):
        out.append(Sample((_distinct_long(rng, 700, dtype), 5), desc="long row (heap path)"))
        out.append(Sample((_distinct_long(rng, 700, dtype), 300), {"largest": False},
                          desc="long row, large k (sort path)"))
    if dtype in FLOATS:
        out.append(Sample((const([0.5, NAN, -INF, 2.0, INF, -1.0], dtype), 3), desc="nan and inf"))
        out.append(Sample((const([0.5, NAN, -INF, 2.0, INF, -1.0], dtype), 3), {"largest": False},
                          desc="nan and inf, smallest"))
    return out


add(OpInfo("topk", "sort", NUMBER, topk_samples, ref=_topk_ref))


def kthvalue_samples(dtype, rng):
    d = lambda s: distinct(rng, s, dtype)  # noqa: E731
    out = [
        Sample((d((3, 6)), 2), desc="k=2"),
        Sample((d((3, 6)), 6, 1, True), desc="k = size, keepdim"),
        Sample((d((4, 3)), 1, 0), desc="dim 0"),
        Sample((d((2, 3, 4)), 3), {"dim": -2}, desc="dim -2"),
        Sample((d(()), 1), desc="0-d"),
        Sample((d((0, 3)), 2), desc="zero-size"),
        Sample((d((3, 6)), 7), desc="k too large: error"),
        Sample((d((3, 0)), 1), desc="empty dim: error"),
    ]
    if dtype in FLOATS:
        out.append(Sample((const([0.5, NAN, -INF, 2.0, INF, -1.0], dtype), 6), desc="nan is largest"))
    return out


add(OpInfo("kthvalue", "sort", NUMBER, kthvalue_samples))


def median_samples(dtype, rng):
    d = lambda s: distinct(rng, s, dtype)  # noqa: E731
    out = [
        Sample((_ties(rng, (3, 5), dtype),), desc="all elements, ties"),
        Sample((d((3, 6)),), desc="all elements, even count (lower median)"),
        Sample((d((3, 5)), 1), desc="dim 1"),
        Sample((d((4, 3)), 0, True), desc="dim 0 keepdim"),
        Sample((d((2, 3, 4)),), {"dim": -1}, desc="dim -1"),
        Sample((d(()),), desc="0-d"),
        Sample((d(()), 0), desc="0-d dim"),
        Sample((d((0, 3)), 1), desc="zero-size"),
        Sample((d((3, 0)), 1), desc="empty dim: error"),
    ]
    if dtype in FLOATS:
        sp = [[0.5, NAN, -1.0, 2.0], [3.0, -2.0, 1.0, 0.25], [NAN, 1.5, NAN, 4.0]]
        out += [
            Sample((const(sp, dtype),), desc="nan, all elements"),
            Sample((const(sp, dtype), 1), desc="nan rows"),
            Sample((Arr(np.zeros((0,), NP_DTYPE[dtype]), dtype),), desc="empty: nan"),
        ]
    return out


add(OpInfo("median", "sort", NUMBER, median_samples))
add(OpInfo("nanmedian", "sort", NUMBER, median_samples))


def mode_samples(dtype, rng):
    return [
        Sample((_ties_f(rng, (3, 7), dtype),), desc="ties"),
        Sample((_ties_f(rng, (5, 3), dtype), 0), desc="dim 0"),
        Sample((_ties_f(rng, (2, 3, 6), dtype),), {"dim": 1, "keepdim": True}, desc="dim 1 keepdim"),
        Sample((const([3, 3, 1, 1], dtype) if dtype != "bool" else const([1, 1, 0, 0], dtype),), desc="tie: smaller"),
        Sample((_ties_f(rng, (), dtype),), desc="0-d"),
        Sample((_ties_f(rng, (0, 3), dtype),), desc="zero-size"),
        Sample((_ties_f(rng, (3, 0), dtype),), desc="empty dim: error"),
    ]


add(OpInfo("mode", "sort", ALL, mode_samples))


def _unique_ref(consecutive):
    def ref(torch):
        def f(input, *args, **kwargs):
            if not consecutive:
                kwargs["sorted"] = True  # torch's order for sorted=False is unspecified; ours sorted
                if args:
                    args = args[1:]
            return (torch.unique_consecutive if consecutive else torch.unique)(input, *args, **kwargs)

        return f

    return ref


def unique_samples(dtype, rng, consecutive=False):
    t = lambda s: _ties_f(rng, s, dtype)  # noqa: E731
    out = [
        Sample((t((12,)),), desc="1-d"),
        Sample((t((3, 4)),), {"return_inverse": True}, desc="inverse"),
        Sample((t((3, 4)),), {"return_counts": True}, desc="counts"),
        Sample((t((3, 4)),), {"return_inverse": True, "return_counts": True}, desc="inverse and counts"),
        Sample((t((4, 2)),), {"dim": 0, "return_inverse": True, "return_counts": True}, desc="dim 0"),
        Sample((t((2, 5)),), {"dim": 1, "return_counts": True}, desc="dim 1"),
        Sample((t(()),), {"return_inverse": True}, desc="0-d"),
        Sample((t((0, 3)),), {"return_counts": True}, desc="zero-size"),
        Sample((t((900,)),), {"return_inverse": True, "return_counts": True}, desc="long (radix path)"),
    ]
    if dtype not in ("bool", "int8", "uint8"):
        wide = arr(rng, (900,), dtype, Domain(-300.0, 300.0, -300, 300))
        wide = Arr(np.round(wide.value).astype(wide.value.dtype), dtype)
        out.append(Sample((wide,), desc="long, wide range (several radix passes)"))
    if not consecutive:
        out.append(Sample((t((3, 4)), False), desc="sorted=False"))
    if dtype in FLOATS:
        out.append(Sample((const([1.0, NAN, 2.0, NAN, 1.0, -INF], dtype),), {"return_counts": True},
                          desc="every nan distinct"))
    return out


add(OpInfo("unique", "unique", ALL, unique_samples, ref=_unique_ref(False), data_dependent=True))
add(OpInfo("unique_consecutive", "unique", ALL, lambda d, r: unique_samples(d, r, True), ref=_unique_ref(True),
           data_dependent=True))


def _sorted_seq(rng, shape, dtype):
    a = distinct(rng, shape, dtype)
    return Arr(np.sort(a.value, axis=-1), dtype)


def searchsorted_samples(dtype, rng):
    seq = _sorted_seq(rng, (7,), dtype)
    vals = lambda s: Arr(rng.choice(seq.value.ravel(), size=s), dtype)  # noqa: E731 (hits and exact ties)
    other = "float64" if dtype != "float64" else "float32"
    out = [
        Sample((seq, vals((3, 4))), desc="1-d sequence"),
        Sample((seq, vals((5,))), {"right": True}, desc="right"),
        Sample((seq, vals((5,))), {"side": "right"}, desc="side=right"),
        Sample((seq, vals((5,))), {"side": "left", "out_int32": True}, desc="left, int32"),
        Sample((_sorted_seq(rng, (2, 5), dtype), Arr(rng.choice(seq.value, size=(2, 3)), dtype)), desc="rows"),
        Sample((seq, Arr(seq.value[3], dtype)), desc="0-d value"),
        Sample((seq, 3), desc="scalar value"),
        Sample((seq, arr(rng, (4,), other)), desc="mixed dtypes"),
        Sample((seq, vals((0,))), desc="no values"),
        Sample((seq, vals((4,))), {"side": "left", "right": True}, desc="side/right conflict: error"),
        Sample((seq, vals((4,))), {"side": "middle"}, desc="bad side: error"),
        Sample((_sorted_seq(rng, (2, 5), dtype), vals((3, 3))), desc="row mismatch: error"),
    ]
    perm = rng.permutation(7)
    shuffled = Arr(seq.value[perm], dtype)
    out.append(Sample((shuffled, vals((6,))), {"sorter": Arr(np.argsort(perm).astype(np.int64), "int64")},
                      desc="sorter"))
    if dtype in FLOATS:
        out.append(Sample((const([-INF, -1.0, 0.0, 2.0, INF], dtype), const([NAN, INF, -INF, 0.0], dtype)),
                          desc="nan and inf values"))
    return out


add(OpInfo("searchsorted", "search", NUMBER, searchsorted_samples, method=""))


def bucketize_samples(dtype, rng):
    b = _sorted_seq(rng, (6,), dtype)
    vals = lambda s: Arr(rng.choice(b.value, size=s), dtype)  # noqa: E731
    return [
        Sample((vals((3, 4)), b), desc="2-d input"),
        Sample((vals((5,)), b), {"right": True}, desc="right"),
        Sample((vals((5,)), b), {"out_int32": True}, desc="int32"),
        Sample((Arr(b.value[2], dtype), b), desc="0-d input"),
        Sample((vals((4,)), _sorted_seq(rng, (2, 3), dtype)), desc="2-d boundaries: error"),
    ]


add(OpInfo("bucketize", "search", NUMBER, bucketize_samples, method=""))


def bincount_samples(dtype, rng):
    """Integer dtypes: the input's; float dtypes: the weights' (int64 input), so that the
    weighted count is tested with every float dtype."""
    hi = 6
    idt = dtype if dtype in INTS else "int64"
    x = lambda n: Arr(rng.integers(0, hi, size=n).astype(NP_DTYPE[idt]), idt)  # noqa: E731
    if dtype in FLOATS:
        return [
            Sample((x(10), arr(rng, (10,), dtype)), desc="weights"),
            Sample((x(10),), {"weights": arr(rng, (10,), dtype), "minlength": 8}, desc="weights, minlength"),
            Sample((x(0),), {"weights": arr(rng, (0,), dtype)}, desc="empty"),
            Sample((x(5),), {"weights": arr(rng, (4,), dtype)}, desc="weights length: error"),
        ]
    return [
        Sample((x(20),), desc="counts"),
        Sample((x(20),), {"minlength": 10}, desc="minlength"),
        Sample((x(10),), {"weights": arr(rng, (10,), "int32")}, desc="int weights -> float64"),
        Sample((x(0),), {"minlength": 3}, desc="empty"),
        Sample((Arr(rng.integers(0, hi, size=(2, 3)).astype(NP_DTYPE[idt]), idt),), desc="2-d: error"),
        Sample((x(5),), {"minlength": -1}, desc="negative minlength: error"),
    ] + ([Sample((Arr(np.array([1, -1, 2], NP_DTYPE[idt]), idt),), desc="negative input: error")]
         if idt != "uint8" else [])


add(OpInfo("bincount", "search", INTS + FLOATS, bincount_samples, data_dependent=True))


def histc_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype, Domain(-3.0, 3.0))  # noqa: E731
    return [
        Sample((x((50,)),), desc="defaults (data range)"),
        Sample((x((4, 10)), 8, -2, 2), desc="range, values outside ignored"),
        Sample((x((30,)),), {"bins": 5, "min": -3.5, "max": 3.5}, desc="keywords"),
        Sample((const([1.0, 1.0, 1.0], dtype),), {"bins": 4}, desc="constant data"),
        Sample((x(()),), {"bins": 3}, desc="0-d"),
        Sample((x((0,)),), {"bins": 3}, desc="empty"),
        Sample((x((10,)),), {"bins": 0}, desc="bins=0: error"),
        Sample((x((10,)), 4, 3, 1), desc="min > max: error"),
        Sample((const([1.0, NAN], dtype),), desc="nan range: error"),
    ]


add(OpInfo("histc", "search", FLOATS, histc_samples))


def _in_top_k_ref(torch):
    def f(targets, predictions, k):
        t = targets.long()
        ok = (t >= 0) & (t < predictions.shape[1])
        tv = predictions.gather(1, t.clamp(0, predictions.shape[1] - 1).unsqueeze(1))
        higher = (predictions > tv).sum(1)
        finite = torch.isfinite(predictions).all(1)
        return ok & finite & (higher < k)

    return f


def in_top_k_samples(dtype, rng):
    p = lambda s: arr(rng, s, dtype)  # noqa: E731
    ties = Arr(np.array([[1.0, 2.0, 2.0, 0.0], [3.0, 3.0, 3.0, 3.0]], NP_DTYPE[dtype]), dtype)
    targets = rng.integers(0, 5, 6)
    return [
        Sample((Arr(targets.astype(np.int64), "int64"), p((6, 5)), 2), desc="k=2"),
        Sample((Arr(targets.astype(np.int32), "int32"), p((6, 5)), 1), desc="int32 targets, k=1"),
        Sample((Arr(np.array([3, 1], np.int32), "int32"),
                const([[0.0, 1.0, 2.0, 3.0], [3.0, 2.0, 1.0, 0.0]], dtype), 1), desc="spec example"),
        Sample((Arr(np.array([1, 2], np.int64), "int64"), ties, 1), desc="ties count as in"),
        Sample((Arr(np.array([0, 5], np.int64), "int64"), p((2, 4)), 3), desc="target out of range: false"),
        Sample((Arr(np.array([0, 1], np.int64), "int64"), const([[1.0, INF], [NAN, 0.0]], dtype), 2),
               desc="non-finite: false"),
        Sample((Arr(np.zeros(0, np.int64), "int64"), p((0, 3)), 1), desc="no rows"),
        Sample((Arr(np.array([0, 1], np.int64), "int64"), p((3, 4)), 1), desc="row count mismatch: error"),
    ]


add(OpInfo("in_top_k", "search", FLOATS, in_top_k_samples, ref=_in_top_k_ref))
