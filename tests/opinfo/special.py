"""OpInfos of the special functions (src/ops/table/special.yaml). Several exist in PyTorch only as
torch.special.X; the reference is always torch's own function of the same name.

Tolerances: float32 results here are computed in double and rounded once, while PyTorch's
float32 kernels (Cephes-style float polynomials) are a few ulp off; float64 is compared tightly.
"""

from .core import *  # noqa: F401,F403

NAN, INF = float("nan"), float("inf")
# (rtol, atol): a few float32 ulp; float64 at 1e-10 relative.
_SPECIAL_TOL = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}


def _special(name):
    return lambda lib: getattr(lib.special, name)


_LOW = ("float16", "bfloat16")


def _via_float32(fn):
    """Reference for 16-bit inputs where torch has no 16-bit kernel (zeta, ndtri, log_ndtr):
    computed in float32 and rounded to the input's dtype (what flow defines them as)."""

    def ref(torch):
        f = fn(torch)
        low = (torch.float16, torch.bfloat16)

        def g(*args, **kw):
            dts = [a.dtype for a in args if isinstance(a, torch.Tensor) and a.dtype in low]
            if not dts:
                return f(*args, **kw)
            up = [a.float() if isinstance(a, torch.Tensor) and a.dtype in low else a for a in args]
            return f(*up, **kw).to(dts[0])

        return g

    return ref


def _samples(dom, specials=(), extra=(), wide_specials=()):
    """unary samples on `dom`, plus float edge values and extra (args, kwargs, desc) cases.
    wide_specials: edge values only for float32/float64 (in 16-bit types the saved result is
    too coarse for the gradient formulas there, e.g. exp(x^2/2) at x = -6)."""

    def gen(dtype, rng):
        out = unary_samples(dom)(dtype, rng)
        if dtype in FLOATS and specials:
            more = list(wide_specials) if dtype in ("float32", "float64") else []
            out.append(Sample((const(list(specials) + more, dtype),), desc="specials"))
        for args, kw, desc in extra:
            out.append(Sample(tuple(a(dtype, rng) if callable(a) else a for a in args), kw, desc=desc))
        return out

    return gen


_UNIT_OPEN = Domain(-0.95, 0.95, 0, 0)  # erfinv: integers only 0 (erfinv(+-1) = +-inf)
_EDGES = [0.0, -0.0, INF, -INF, NAN]

add(OpInfo("erfinv", "unary_float", ALL,
           _samples(_UNIT_OPEN, [0.0, -0.0, 1.0, -1.0, 1.5, NAN, 0.999, -0.9999, 1e-8]),
           inplace=True, tol=_SPECIAL_TOL))
add(OpInfo("lgamma", "unary_float", ALL,
           _samples(Domain(0.1, 8.0, 1, 9), [0.0, -0.0, -1.0, -1.5, INF, -INF, NAN, 1e-30, 2.5]),
           inplace=True, tol=_SPECIAL_TOL))
add(OpInfo("digamma", "unary_float", ALL,
           _samples(Domain(0.1, 8.0, 1, 9), [0.0, -0.0, -1.25, -1.5, -2.7, 1.4616321, 30.0, NAN, INF]),
           inplace=True, tol=_SPECIAL_TOL))


def _polygamma_samples(dtype, rng):
    x = lambda s, dom=Domain(0.3, 6.0, 1, 9): arr(rng, s, dtype, dom)  # noqa: E731
    out = [Sample((n, x((3, 4))), desc=f"n={n}") for n in (0, 1, 2, 3, 5)]
    out += [Sample((1, x(())), desc="0-d"), Sample((2, x((0, 3))), desc="zero-size"),
            Sample((-1, x((3,))), desc="negative n (error)")]
    if dtype in FLOATS:
        out.append(Sample((1, const([-1.5, -0.5, 0.25, 40.0, 0.0], dtype)), desc="trigamma reflection"))
        out.append(Sample((2, const([-1.5, 1e-3, 50.0, -1.0, 0.0], dtype)), desc="n=2 edges"))
    return out


# torch's float64 trigamma (n = 1) is accurate to ~5e-10 relative only (ours to 1e-16, checked
# against mpmath in tests/test_special_math.py).
add(OpInfo("polygamma", "unary_float", ALL, _polygamma_samples, method="",
           tol=dict(_SPECIAL_TOL, float64=(2e-9, 1e-12))))


def _mvlgamma_samples(dtype, rng):
    x = lambda s: arr(rng, s, dtype, Domain(2.0, 6.0, 2, 9))  # noqa: E731
    return [
        Sample((x((3, 4)), 1), desc="p=1"),
        Sample((x((3, 4)),), {"p": 3}, desc="p=3"),
        Sample((x(()), 2), desc="0-d"),
        Sample((x((0, 2)), 2), desc="zero-size"),
        Sample((x((3,)), 0), desc="p=0 (error)"),
    ]


add(OpInfo("mvlgamma", "unary_float", ALL, _mvlgamma_samples, inplace=True, tol=_SPECIAL_TOL))


def _zeta_samples(dtype, rng):
    s = lambda shape: arr(rng, shape, dtype, Domain(1.5, 6.0, 2, 6))  # noqa: E731
    q = lambda shape: arr(rng, shape, dtype, Domain(0.5, 5.0, 1, 5))  # noqa: E731
    out = [
        Sample((s((3, 4)), q((3, 4))), desc="same shape"),
        Sample((s((3, 1)), q((4,))), desc="broadcast"),
        Sample((s(()), q((3,))), desc="0-d order"),
        Sample((2.0, q((2, 3))), desc="number order"),
        Sample((3.5, q((3, 1))), desc="number order 3.5"),
        Sample((5, q(())), desc="integer order, 0-d q"),
        Sample((s((2, 3)), 1.5), desc="number q"),
        Sample((s((0, 3)), q((3,))), desc="zero-size"),
    ]
    if dtype in FLOATS:
        out.append(Sample((const([2.0, 1.0, 0.5, 2.0, 3.0, 2.0, 4.0], dtype),
                           const([1.0, 1.0, 1.0, -1.0, -1.5, 0.0, 1e9], dtype)), desc="specials"))
    return out


add(OpInfo("zeta", "binary", ALL, _zeta_samples, fn=_special("zeta"), method="", tol=_SPECIAL_TOL,
           ref=_via_float32(_special("zeta")), oneflow_dtypes=_LOW))

_BESSEL_DOM = Domain(-12.0, 12.0, -9, 9)
# (+-inf left out: the limits are inf / 0 here, torch's Cephes code gives NaN; see
# tests/test_special_math.py and docs/oneflow_differences.md)
_BESSEL_EDGES = [0.0, -0.0, 1e-20, 29.9, 30.1, -45.0, 300.0, NAN]
add(OpInfo("i0", "unary_float", ALL, _samples(_BESSEL_DOM, _BESSEL_EDGES), inplace=True, tol=_SPECIAL_TOL))
for _name in ("i0e", "i1", "i1e"):
    add(OpInfo(_name, "unary_float", ALL, _samples(_BESSEL_DOM, _BESSEL_EDGES), fn=_special(_name), method="",
               tol=_SPECIAL_TOL))

add(OpInfo("ndtr", "unary_float", ALL, _samples(DEFAULT, _EDGES + [-30.0, 8.0]), fn=_special("ndtr"),
           method="", tol=_SPECIAL_TOL))
add(OpInfo("ndtri", "unary_float", ALL,
           _samples(Domain(0.01, 0.99, 0, 1), [0.0, 1.0, 0.5, 1 - 1e-3, -0.5, 2.0, NAN, 0.02425],
                    wide_specials=[1e-10, 1 - 1e-7]),
           fn=_special("ndtri"), method="", tol=_SPECIAL_TOL, ref=_via_float32(_special("ndtri")),
           oneflow_dtypes=_LOW))
add(OpInfo("log_ndtr", "unary_float", ALL,
           _samples(Domain(-8.0, 8.0, -9, 9), _EDGES + [-3.0, 10.0, -1.0, -0.99],
                    wide_specials=[-20.0, -38.0, -40.0]),
           fn=_special("log_ndtr"), method="", tol=_SPECIAL_TOL, ref=_via_float32(_special("log_ndtr")),
           oneflow_dtypes=_LOW))
add(OpInfo("entr", "unary_float", ALL, _samples(POSITIVE, [0.0, -1.0, NAN, INF, 1.0, 1e-30]),
           fn=_special("entr"), method="", tol=_SPECIAL_TOL))


def _igamma_samples(dtype, rng):
    a = lambda shape: arr(rng, shape, dtype, Domain(0.1, 20.0, 1, 12))  # noqa: E731
    x = lambda shape: arr(rng, shape, dtype, Domain(0.05, 30.0, 1, 20))  # noqa: E731
    out = [
        Sample((a((3, 4)), x((3, 4))), desc="same shape"),
        Sample((a((3, 1)), x((4,))), desc="broadcast"),
        Sample((a(()), x((5,))), desc="0-d a"),
        Sample((a((0, 3)), x((3,))), desc="zero-size"),
        Sample((2.5, x((3, 4))), desc="number a"),
        Sample((40.0, x((5,))), desc="number a, large"),
    ]
    if dtype in FLOATS:
        # both branches (x < a + 1: series; else continued fraction), large a, and the edges:
        # a = 0, x = 0, negative, infinite and NaN arguments
        out.append(Sample((const([0.5, 5.0, 50.0, 200.0, 2.0, 0.0, 0.0, 3.0, -1.0, INF, INF, 2.0, NAN, 1e-3],
                                 dtype),
                           const([0.2, 5.5, 45.0, 230.0, 0.0, 1.0, 0.0, INF, 1.0, 2.0, INF, -0.5, 1.0, 1e-3],
                                 dtype)), desc="specials"))
    return out


# float64 at 1e-8: PyTorch's Cephes kernel (an asymptotic expansion for large a near x) is
# ~1e-9 off there (a = 50, x = 45: 8e-10 relative; ours is within 1e-14 of mpmath, pinned in
# tests/test_math_kernels.py).
_IGAMMA_TOL = dict(_SPECIAL_TOL, float64=(1e-8, 1e-12))
def _igamma_fn(name):
    """lib.<name>(a, x), a number a taken as a constant tensor (PyTorch takes tensors only): the
    number-a samples are the ones whose gradient (in x) the gradient tests compare."""
    def fn(lib):
        op = getattr(lib, name)
        return lambda a, x: op(a if isinstance(a, lib.Tensor) else lib.full_like(x, a), x)
    return fn


for _name in ("igamma", "igammac"):
    add(OpInfo(_name, "binary", FLOATS, _igamma_samples, fn=_igamma_fn(_name), inplace=True, tol=_IGAMMA_TOL,
               ref=_via_float32(_igamma_fn(_name)), oneflow_dtypes=_LOW))


# torch.special's Bessel functions and erfcx (the bessel family, src/ops/table/bessel.yaml): torch
# has no 16-bit kernels (reference: float32, rounded) and differentiates erfcx only (the others'
# closed-form derivatives are TORCH_GRAD_GAPS in tests/test_ops_grad.py). Edges: no +-inf where
# torch's Cephes code gives NaN for a limit of 0 (J, Y: accuracy and limits in
# tests/test_special_bessel.py).
_OSC = Domain(-30.0, 30.0, -9, 9)
_POS = Domain(0.05, 30.0, 1, 9)
_BESSEL_FAMILY = [
    ("bessel_j0", _OSC, [0.0, -0.0, 1e-20, 2.404825557695773, 300.0, NAN]),
    ("bessel_j1", _OSC, [0.0, -0.0, 1e-20, 3.8317059702075125, 300.0, NAN]),
    ("bessel_y0", _POS, [1e-3, 0.8935769662791675, 300.0, NAN]),
    ("bessel_y1", _POS, [1e-3, 2.197141326031017, 300.0, NAN]),
    ("modified_bessel_k0", _POS, [1e-3, 700.0, INF, NAN]),
    ("modified_bessel_k1", _POS, [1e-3, 700.0, INF, NAN]),
    ("scaled_modified_bessel_k0", _POS, [1e-3, 700.0, 1e6, INF, NAN]),
    ("scaled_modified_bessel_k1", _POS, [1e-3, 700.0, 1e6, INF, NAN]),
    ("spherical_bessel_j0", _OSC, [0.0, -0.0, 1e-20, 0.49, 0.51, INF, -INF, NAN]),
    ("erfcx", Domain(-5.0, 30.0, -3, 9), [0.0, -0.0, 24.9, 25.1, 1e5, INF, -INF, NAN]),
]


def mp_unary(mpfn):
    """A torch function evaluating mpfn (mpmath) per element in double, rounded to the input's
    dtype (integers: float32), for references where torch's own values are not accurate:
    torch's float64 J / Y are up to 2.8e-7 off (tests/test_special_bessel.py)."""
    import mpmath

    def ref(torch):
        def g(x):
            out_dt = x.dtype if x.is_floating_point() else torch.float32
            vals = x.detach().double().reshape(-1).tolist()
            with mpmath.workdps(30):
                ys = [float(mpfn(mpmath.mpf(v))) if v == v else float("nan") for v in vals]
            return torch.tensor(ys, dtype=torch.float64).reshape(x.shape).to(out_dt)
        return g

    return ref


def _mp_y(nu):
    import mpmath
    return lambda x: mpmath.bessely(nu, x) if x > 0 else (mpmath.mpf("-inf") if x == 0 else mpmath.mpf("nan"))


def _mp_j(nu):
    import mpmath
    return lambda x: mpmath.besselj(nu, x) if mpmath.isfinite(x) else mpmath.mpf(0)


MP_BESSEL = {"bessel_j0": _mp_j(0), "bessel_j1": _mp_j(1), "bessel_y0": _mp_y(0), "bessel_y1": _mp_y(1)}
for _name, _dom, _edges in _BESSEL_FAMILY:
    _ref = mp_unary(MP_BESSEL[_name]) if _name in MP_BESSEL else _via_float32(_special(_name))
    add(OpInfo(_name, "unary_float", ALL, _samples(_dom, _edges), fn=_special(_name), method="",
               tol=_SPECIAL_TOL, ref=_ref, oneflow_dtypes=_LOW))


# _standard_gamma_grad(alpha, x): torch's is an approximation (a series, an asymptotic form and a
# fitted rational function, relative error up to ~3e-3 far in the tail); ours differentiates the incomplete
# gamma's expansions exactly (checked against finite differences in
# tests/test_distributions_rsample_gamma.py). No derivative of its own in either library.
def _standard_gamma_grad_samples(dtype, rng):
    a = lambda shape: arr(rng, shape, dtype, Domain(0.05, 50.0, 1, 12))  # noqa: E731
    x = lambda shape: arr(rng, shape, dtype, Domain(0.05, 40.0, 1, 20))  # noqa: E731
    return [
        Sample((a((3, 4)), x((3, 4))), desc="same shape"),
        Sample((a((3, 1)), x((4,))), desc="broadcast"),
        Sample((a(()), x((5,))), desc="0-d alpha"),
        Sample((a((0, 3)), x((3,))), desc="zero-size"),
    ]


_SG_TOL = {"float32": (5e-3, 1e-6), "float64": (5e-3, 1e-10), "float16": (1e-2, 1e-3), "bfloat16": (3e-2, 1e-2)}
add(OpInfo("standard_gamma_grad", "binary", FLOATS, _standard_gamma_grad_samples,
           fn=lambda lib: lib._standard_gamma_grad, method="", tol=_SG_TOL,
           ref=_via_float32(lambda lib: lib._standard_gamma_grad), oneflow_dtypes=_LOW))
