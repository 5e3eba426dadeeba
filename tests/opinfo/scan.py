"""OpInfos of the scans (src/ops/table/scan.yaml). The reverse scans and cummaxmin_backward are
internal ops (backward formulas); their references are compositions in torch."""

from .core import *  # noqa: F401,F403

NAN, INF = float("nan"), float("inf")
_SCAN_TOL = {"float16": (4e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (1e-5, 1e-5)}


def _scan_samples(dom=DEFAULT, dtype_kw=(), specials=(), ties=False):
    def gen(dtype, rng):
        def x(shape):
            return arr(rng, shape, dtype, dom)

        out = [
            Sample((x((2, 3, 4)), 1), desc="dim=1 (inner > 1)"),
            Sample((x((2, 3, 4)), -1), desc="dim=-1 (rows)"),
            Sample((x((2, 3, 4)),), {"dim": 0}, desc="dim=0 keyword"),
            Sample((x((7,)), 0), desc="1-d"),
            Sample((x(()), 0), desc="0-d"),
            Sample((x((0, 3)), 0), desc="zero-size scanned dim"),
            Sample((x((3, 0)), 0), desc="zero-size other dim"),
            Sample((x((3, 1)), 1), desc="length-1 dim"),
            Sample((x((2, 3)), 2), desc="bad dim (error)"),
        ]
        for d in dtype_kw:
            out.append(Sample((x((2, 5)), 1), {"dtype": DT(d)}, desc=f"dtype={d}"))
        if dtype in FLOATS:
            for v in specials:
                out.append(Sample((const(v, dtype), 0), desc=f"specials {v}"))
        if ties and dtype != "bool":
            v = rng.integers(0, 3, size=(3, 6)).astype(NP_DTYPE[dtype])
            out.append(Sample((Arr(v, dtype), 1), desc="ties"))
        return out

    return gen


_PROD_DOM = Domain(0.5, 1.5, -2, 2)
add(OpInfo("cumsum", "scan", ALL + COMPLEX,
           _scan_samples(dtype_kw=("float64", "int64"), specials=[[1.0, INF, -INF, 2.0], [1.0, NAN, 2.0]]),
           inplace=True, tol=_SCAN_TOL))


def _cumprod_samples(dtype, rng):
    out = _scan_samples(_PROD_DOM, dtype_kw=("float64",), specials=[[1.0, INF, 2.0, -3.0]])(dtype, rng)
    if dtype in FLOATS + COMPLEX:
        # Zeros: the gradient formula's special cases (one zero, several, at either end).
        for v in ([2.0, 0.0, 3.0, 0.5], [0.0, 2.0, 3.0], [2.0, 3.0, 0.0], [1.5, 0.0, 2.0, 0.0, 3.0], [0.0]):
            out.append(Sample((const(v, dtype), 0), desc=f"zeros {v}"))
        z = rng.uniform(0.5, 1.5, size=(3, 4, 2))
        z[0, 1, 0] = 0.0
        z[1, 0, 1] = z[1, 2, 1] = 0.0
        out.append(Sample((Arr(z.astype(NP_DTYPE[dtype]), dtype), 1), desc="zeros, inner > 1"))
    return out


add(OpInfo("cumprod", "scan", ALL + COMPLEX, _cumprod_samples, inplace=True, tol=_SCAN_TOL))
for _name in ("cummax", "cummin"):
    add(OpInfo(_name, "scan", ALL,
               _scan_samples(specials=[[1.0, NAN, 2.0, NAN, 0.5], [NAN, 1.0, 0.0], [2.0, INF, -INF, 3.0]],
                             ties=True)))
add(OpInfo("logcumsumexp", "scan", FLOATS + COMPLEX,
           _scan_samples(specials=[[-INF, -INF, 1.0], [INF, INF, 1.0], [1.0, NAN, 2.0], [-1e4, 0.0, 50.0]]),
           tol=_SCAN_TOL))


def _reverse(scan):
    return lambda torch: lambda x, dim: getattr(x.flip(dim), scan)(dim).flip(dim)


add(OpInfo("reverse_cumsum", "scan", NUMBER, _scan_samples(), fn=lambda lib: lib._C.reverse_cumsum, method="",
           ref=_reverse("cumsum"), tol=_SCAN_TOL))
add(OpInfo("reverse_logcumsumexp", "scan", FLOATS + COMPLEX, _scan_samples(specials=[[-INF, 2.0, -INF], [1.0, NAN, 2.0]]),
           fn=lambda lib: lib._C.reverse_logcumsumexp, method="", ref=_reverse("logcumsumexp"), tol=_SCAN_TOL))


def _cummaxmin_backward_ref(torch):
    # 16-bit gradients are summed in float32 and rounded once (torch's scatter_add rounds
    # after every addition, in an order of its own).
    def f(grad, indices, dim):
        g = grad.float() if grad.dtype in (torch.float16, torch.bfloat16) else grad
        return torch.zeros_like(g).scatter_add(dim, indices, g).to(grad.dtype)

    return f


def _cummaxmin_backward_samples(dtype, rng):
    def case(shape, dim):
        n = shape[dim]
        # indices of a running extreme: non-decreasing along dim, each <= its position.
        pos = np.arange(n).reshape([-1 if d == dim % len(shape) else 1 for d in range(len(shape))])
        raw = rng.integers(0, n, size=shape)
        idx = np.maximum.accumulate(np.minimum(raw, np.broadcast_to(pos, shape)), axis=dim)
        return (arr(rng, shape, dtype), Arr(idx.astype(np.int64), "int64"), dim)

    return [
        Sample(case((2, 5), 1), desc="rows"),
        Sample(case((4, 3), 0), desc="dim 0 (inner > 1)"),
        Sample(case((2, 3, 4), -2), desc="3-d"),
        Sample((arr(rng, (3,), dtype), Arr(np.array([0, 3, 1]), "int64"), 0), desc="index out of range (error)"),
    ]


add(OpInfo("cummaxmin_backward", "scan", FLOATS, _cummaxmin_backward_samples,
           fn=lambda lib: lib._C.cummaxmin_backward, method="", ref=_cummaxmin_backward_ref))


def _diff_samples(dtype, rng):
    def x(shape):
        return arr(rng, shape, dtype)

    return [
        Sample((x((2, 3, 4)),), desc="default n=1, dim=-1"),
        Sample((x((5, 3)),), {"n": 2, "dim": 0}, desc="n=2 dim=0"),
        Sample((x((4,)),), {"n": 6}, desc="n past the length: empty"),
        Sample((x((4,)),), {"n": 0}, desc="n=0: a copy"),
        Sample((x((2, 3)),), {"dim": 1, "prepend": x((2, 1)), "append": x((2, 2))}, desc="prepend and append"),
        Sample((x((3, 2)),), {"dim": 0, "append": x((2, 2))}, desc="append only"),
        Sample((x((0, 3)),), {"dim": 1}, desc="zero-size other dim"),
        Sample((x((3, 0)),), {"dim": 1, "n": 2}, desc="zero-size differenced dim"),
        Sample((x(()),), desc="0-d (error)"),
        Sample((x((3,)),), {"n": -1}, desc="negative n (error)"),
        Sample((x((2, 3)),), {"dim": 2}, desc="bad dim (error)"),
        Sample((x((2, 3)),), {"prepend": x((3,))}, desc="prepend of another rank (error)"),
        Sample((x((2, 3)),), {"dim": 0, "prepend": x((1, 2))}, desc="prepend of another width (error)"),
    ]


add(OpInfo("diff", "composite", ALL + COMPLEX, _diff_samples, tol=_SCAN_TOL))
