"""OpInfos of the statistics reductions (src/ops/table/reduce_stats.yaml)."""

from .core import *  # noqa: F401,F403

NAN, INF = float("nan"), float("inf")
_TOL = {"float16": (4e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (1e-5, 1e-5)}


def _var_samples(dtype, rng, with_mean=False):
    out = reduction_samples()(dtype, rng)

    def x(shape):
        return arr(rng, shape, dtype)

    out += [
        Sample((x((2, 3, 4)), 1, False), desc="dim, unbiased=False positional"),
        Sample((x((2, 3, 4)), 1, True, True), desc="dim, unbiased, keepdim positional"),
        Sample((x((2, 3, 4)),), {"dim": (0, 2), "unbiased": False}, desc="dims, unbiased=False"),
        Sample((x((2, 3, 4)), False), desc="var(x, unbiased) overload"),
        Sample((x((2, 3, 4)),), {"dim": 1, "correction": 0}, desc="correction=0"),
        Sample((x((2, 3, 4)),), {"dim": -1, "correction": 2.5}, desc="correction=2.5"),
        Sample((x((3,)),), {"correction": 5}, desc="correction > N (inf)"),
        Sample((x((1,)),), desc="single element (nan)"),
        Sample((x((3, 4)),), {"dim": 1, "unbiased": True, "correction": 1}, desc="both unbiased and correction"),
        Sample((x((300,)) if dtype != "bool" else x((3,)),), desc="long row"),
    ]
    if dtype in FLOATS:
        out.append(Sample((const([1.0, 2.0, 3.0], dtype), 0), desc="spec example"))
        out.append(Sample((const([[1.0, NAN, 2.0], [3.0, 1.0, 2.0]], dtype), 1), desc="NaN"))
        if not with_mean:
            # (torch's Welford mean of [1, inf, 2] is NaN, the mean is inf: var_mean's mean is
            # compared without infinities; see docs/oneflow_differences.md)
            out.append(Sample((const([[1.0, INF, 2.0]], dtype), 1), desc="inf"))
        out.append(Sample((const([1e4 + 1, 1e4 + 2, 1e4 + 3], "float64"),), desc="large offset"))
    return out


def _pair_ref(name):
    return lambda torch: getattr(torch, name)


for _name in ("var", "std"):
    add(OpInfo(_name, "reduction", ALL + COMPLEX, _var_samples, tol=_TOL))
for _name in ("var_mean", "std_mean"):
    add(OpInfo(_name, "reduction", ALL + COMPLEX, lambda dtype, rng: _var_samples(dtype, rng, True), method="", tol=_TOL))


def _logsumexp_samples(dtype, rng):
    def x(shape):
        return arr(rng, shape, dtype)

    out = [
        Sample((x((2, 3, 4)), 1), desc="dim=1"),
        Sample((x((2, 3, 4)), -1), desc="rows"),
        Sample((x((2, 3, 4)), (0, 2)), desc="dims (0, 2)"),
        Sample((x((2, 3, 4)),), {"dim": 0, "keepdim": True}, desc="keepdim"),
        Sample((x((5,)), 0), desc="1-d"),
        Sample((x(()), 0), desc="0-d"),
        Sample((x((0, 3)), 0), desc="reduce an empty dim (-inf)"),
        Sample((x((0, 3)), 1), desc="zero-size kept dim"),
        Sample((x((2, 3)), 3), desc="bad dim (error)"),
        Sample((x((2, 3)), (1, 1)), desc="repeated dim (error)"),
        Sample((x((2, 500)), 1), desc="long rows"),
    ]
    if dtype in FLOATS:
        out.append(Sample((const([[1.0, -INF, 2.0], [-INF, -INF, -INF], [INF, 1.0, 0.0], [NAN, 1.0, 2.0]],
                                 dtype), 1), desc="specials"))
        out.append(Sample((const([[1000.0, 999.0], [-1000.0, -1001.0]], dtype), 1), desc="large magnitudes"))
    return out


add(OpInfo("logsumexp", "reduction", ALL + COMPLEX, _logsumexp_samples, tol=_TOL))


def _nan_samples(dtype, rng):
    out = reduction_samples(dtype_kw=("float64",) if dtype in FLOATS else ("int64", "float32"))(dtype, rng)
    if dtype in FLOATS:
        v = rng.uniform(-3, 3, size=(3, 4))
        v[rng.random((3, 4)) < 0.3] = np.nan
        v[2] = np.nan
        out.append(Sample((Arr(v.astype(NP_DTYPE[dtype]), dtype),), desc="NaNs full"))
        out.append(Sample((Arr(v.astype(NP_DTYPE[dtype]), dtype), 1), desc="NaNs dim 1 (one all-NaN row)"))
        out.append(Sample((Arr(v.astype(NP_DTYPE[dtype]), dtype),), {"dim": 0, "keepdim": True}, desc="NaNs dim 0"))
    return out


add(OpInfo("nansum", "reduction", ALL, _nan_samples, tol=_TOL))
add(OpInfo("nanmean", "reduction", ALL, _nan_samples, tol=_TOL))


def _count_nonzero_samples(dtype, rng):
    def x(shape):
        v = arr(rng, shape, dtype).value
        return Arr(np.where(rng.random(shape) < 0.4, np.zeros((), v.dtype), v), dtype)

    return [
        Sample((x((2, 3, 4)),), desc="full"),
        Sample((x((2, 3, 4)), 1), desc="dim 1"),
        Sample((x((2, 3, 4)),), {"dim": (0, 2)}, desc="dims"),
        Sample((x(()),), desc="0-d"),
        Sample((x((0, 3)), 0), desc="zero-size"),
        Sample((x((2, 3)), 5), desc="bad dim (error)"),
        Sample((x((2, 3)), (0, 0)), desc="repeated dim (error)"),
    ]


add(OpInfo("count_nonzero", "reduction", ALL + COMPLEX, _count_nonzero_samples))
