"""OpInfos of the pointwise math family (src/ops/table/math.yaml, clamp, div's rounding modes)."""

from .core import *  # noqa: F401,F403

NAN, INF = float("nan"), float("inf")
_TRANSCENDENTAL_TOL = {"float32": (5e-6, 1e-5)}  # libm vs SLEEF: a few ulp


def _with(gen, *extra):
    """gen's samples plus extra(dtype, rng) -> list of samples."""

    def g(dtype, rng):
        out = gen(dtype, rng)
        for e in extra:
            out += e(dtype, rng)
        return out

    return g


# -- clamp with number or tensor bounds ------------------------------------------


def _clamp_tensor_samples(dtype, rng):
    lo_hi = (-3, 4) if dtype in INTS else (-1.5, 2.0)
    if dtype == "uint8":
        lo_hi = (2, 6)
    dom = Domain(lo_hi[0] - 2, lo_hi[1] + 2, lo_hi[0] - 2 if dtype != "uint8" else 0, lo_hi[1] + 2)

    def x(shape, d=dtype):
        return arr(rng, shape, d, dom)

    out = [
        Sample((x((3, 4)),), {"min": x((3, 4)), "max": x((3, 4))}, desc="tensor bounds"),
        Sample((x((3, 4)),), {"min": x((4,))}, desc="tensor min, broadcast"),
        Sample((x((3, 1)),), {"max": x((1, 4))}, desc="tensor max, grows the shape"),
        Sample((x((2, 3)),), {"min": x(()), "max": x(())}, desc="0-d tensor bounds"),
        Sample((x((2, 3)), x((2, 3)), x((2, 3))), desc="positional tensors"),
        Sample((x((0, 3)),), {"min": x((3,))}, desc="zero-size"),
        Sample((x((3,)),), desc="no bounds (error)"),
    ]
    if dtype in FLOATS:
        out += [
            Sample((x((2, 3)),), {"min": 1.0, "max": -1.0}, desc="min > max"),
            Sample((const([1.0, NAN, 3.0], dtype),), {"min": x((3,)), "max": const(2.0, dtype)}, desc="NaN input"),
            Sample((x((3,)),), {"min": const([NAN, 0.0, 1.0], dtype)}, desc="NaN bound"),
            Sample((x((2, 3)),), {"min": x((2, 3), "float64")}, desc="float64 bound promotes"),
            Sample((x((2, 3)),), {"min": 0.5}, desc="float number bound"),
        ]
    if dtype in INTS:
        out.append(Sample((x((2, 3)),), {"min": 0.5}, desc="float bound on ints (float result)"))
    return out


for _name in ("clamp", "clip"):
    add(OpInfo(_name, "clamp", NUMBER, _with(clamp_samples, _clamp_tensor_samples), inplace=True))


def _bound_samples(dtype, rng):
    def x(shape):
        return arr(rng, shape, dtype)

    out = binary_samples(dtypes=NUMBER, scalars=(2, -1.5), scalar_first=())(dtype, rng)
    if dtype in FLOATS:
        out.append(Sample((const([NAN, 1.0, 2.0], dtype), const([0.0, NAN, 3.0], dtype)), desc="NaN"))
    out.append(Sample((Arr(rng.random((2, 3)) < 0.5, "bool"), x((2, 3))), desc="bool input promotes"))
    return out


add(OpInfo("clamp_min", "binary", NUMBER, _bound_samples, inplace=True))
add(OpInfo("clamp_max", "binary", NUMBER, _bound_samples, inplace=True))

# -- round(decimals) ---------------------------------------------------------------


def _round_decimals(dtype, rng):
    out = []
    if dtype in FLOATS:
        v = [2.5, 1.25, -123.456, 0.125, 1e3, -0.0, 3.14159]
        for d in (1, 2, -1, -2):
            out.append(Sample((const(v, dtype),), {"decimals": d}, desc=f"decimals={d}"))
        out.append(Sample((arr(rng, (3, 4), dtype),), {"decimals": 3}, desc="random decimals=3"))
    else:
        out.append(Sample((arr(rng, (3,), dtype),), {"decimals": 1}, desc="ints decimals=1 (error)"))
    return out


add(OpInfo("round", "unary", NUMBER, _with(unary_samples(specials=True, halves=True), _round_decimals),
           inplace=True))

# -- unary, float result ---------------------------------------------------------
_UNARY = {
    # name: (dtypes, domain, specials, inplace)
    "frac": (FLOATS, Domain(-9.0, 9.0), True, True),
    "exp2": (ALL + COMPLEX, DEFAULT, True, True),
    "deg2rad": (ALL, Domain(-400.0, 400.0, -100, 100), True, True),
    "rad2deg": (ALL, DEFAULT, True, True),
    "sinc": (ALL + COMPLEX, DEFAULT, True, True),
}
def _sinc_ref(torch):
    # torch's 16-bit sinc backward cancels catastrophically near 0 (errors up to 0.06 in
    # float16); the reference for 16-bit inputs is the float32 computation, rounded once
    # (complex64: the complex128 one, whose backward keeps the digits complex64's loses).
    def f(x):
        if x.dtype in (torch.float16, torch.bfloat16):
            return torch.sinc(x.float()).to(x.dtype)
        if x.dtype == torch.complex64:
            return torch.sinc(x.to(torch.complex128)).to(x.dtype)
        return torch.sinc(x)

    return f


for _name, (_dts, _dom, _spec, _inpl) in _UNARY.items():
    extra = dict(ref=_sinc_ref, oneflow_dtypes=("float16", "bfloat16", "complex64")) if _name == "sinc" else {}
    # (torch's own complex64 sinc, which the in-place test compares with, rounds pi z in
    # complex64: up to 1.4e-5 relative off the complex128 value that flow's matches)
    tol = dict(_TRANSCENDENTAL_TOL, complex64=(2e-5, 1e-5)) if _name == "sinc" else _TRANSCENDENTAL_TOL
    add(OpInfo(_name, "unary_float", _dts, unary_samples(_dom, specials=_spec), inplace=_inpl, tol=tol, **extra))


def _logit_samples(dtype, rng):
    unit = Domain(0.02, 0.98, 0, 1)
    out = [Sample((arr(rng, s, dtype, unit),), desc=f"shape{s}") for s in [(), (5,), (3, 4), (0, 3)]]
    out.append(Sample((arr(rng, (3, 4), dtype, unit),), {"eps": 0.1}, desc="eps=0.1 clamps"))
    out.append(Sample((arr(rng, (3, 4), dtype, unit), 0.25), desc="eps positional"))
    out.append(Sample((arr(rng, (3, 4), dtype, unit),), {"eps": -1.0}, desc="negative eps: no clamp"))
    if dtype in FLOATS:
        out.append(Sample((const([0.0, 1.0, -1.0, 2.0, 0.5, NAN], dtype),), desc="specials"))
    return out


add(OpInfo("logit", "unary_float", ALL, _logit_samples, inplace=True, tol=_TRANSCENDENTAL_TOL))

def _no_bf16_nan(gen):
    """bfloat16 NaNs: torch's vectorised float->bfloat16 conversion sets the sign bit of NaN, its
    scalar one (and ours) does not; ops that read the sign bit are compared on other values."""

    def g(dtype, rng):
        out = gen(dtype, rng)
        if dtype != "bfloat16":
            return out
        keep = [s for s in out if s.desc != "specials"]
        keep.append(Sample((const([v for v in SPECIALS if v == v], dtype),), desc="specials without NaN"))
        return keep

    return g


for _name in ("signbit", "isneginf", "isposinf", "isreal"):
    add(OpInfo(_name, "unary_bool", ALL, _no_bf16_nan(unary_samples(specials=True))))

# -- binary ----------------------------------------------------------------------
_INF_SPECIALS = [([INF, -INF, INF, NAN, 0.0], [INF, -INF, -INF, 1.0, -0.0])]
_BINARY = {
    # name: (dtypes, operator, inplace, dom_x, dom_y, scalars, scalar_first, specials)
    "hypot": (FLOATS, None, True, DEFAULT, DEFAULT, (), (), _INF_SPECIALS),  # (torch: tensors only)
    "logaddexp": (FLOATS + COMPLEX, None, False, DEFAULT, DEFAULT, (), (), _INF_SPECIALS),
    "logaddexp2": (FLOATS, None, False, DEFAULT, DEFAULT, (), (), _INF_SPECIALS),
    "xlogy": (ALL, None, True, DEFAULT, POSITIVE, (2, 0.5), (3, 0.0),
              [([0.0, 0.0, 1.0, 2.0], [NAN, 0.0, 0.0, INF])]),
    "copysign": (ALL, None, True, DEFAULT, DEFAULT, (-1, 2.0), (), [([1.0, 2.0, -3.0], [-0.0, -INF, 0.0])]),
    "nextafter": (FLOATS, None, True, DEFAULT, DEFAULT, (), (), _INF_SPECIALS),
    "fmax": (ALL, None, False, DEFAULT, DEFAULT, (), (), [([NAN, 1.0, NAN], [2.0, NAN, NAN])]),
    "fmin": (ALL, None, False, DEFAULT, DEFAULT, (), (), [([NAN, 1.0, NAN], [2.0, NAN, NAN])]),
    "gcd": (INTS, None, True, Domain(ilo=-40, ihi=40), Domain(ilo=-40, ihi=40), (), (), None),  # (tensors only, as torch)
    "lcm": (INTS, None, True, Domain(ilo=-12, ihi=12), Domain(ilo=-12, ihi=12), (), (), None),  # (tensors only, as torch)
    "bitwise_left_shift": (INTS, operator.lshift, True, Domain(ilo=-9, ihi=9), Domain(ilo=0, ihi=9),
                           (2, 70), (3,), None),
    "bitwise_right_shift": (INTS, operator.rshift, True, Domain(ilo=-90, ihi=90), Domain(ilo=0, ihi=9),
                            (2, 70), (96,), None),
    "float_power": (ALL + COMPLEX, None, True, Domain(0.5, 3.0, 1, 4), Domain(-2.0, 2.0, 0, 3), (2, 0.5), (2,), None),
}
def _logaddexp_ref(torch):
    # torch's logaddexp backward asserts on a real operand beside a complex one (its grad keeps
    # the complex dtype); the same values with the promotion done first, whose cast's backward
    # gives the real operand the real part, as flow's engine does.
    def f(a, b):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.is_complex() != b.is_complex():
            dt = torch.promote_types(a.dtype, b.dtype)
            a, b = a.to(dt), b.to(dt)
        return torch.logaddexp(a, b)

    return f


for _name, (_dts, _op, _inpl, _dx, _dy, _sc, _sf, _spec) in _BINARY.items():
    _extra = dict(ref=_logaddexp_ref) if _name == "logaddexp" else {}
    add(OpInfo(_name, "binary", _dts, binary_samples(_dx, _dy, _sc, _sf, dtypes=_dts, specials=_spec),
               operator=_op, inplace=_inpl, tol=_TRANSCENDENTAL_TOL, **_extra))


add(OpInfo("xlog1py", "binary", ALL,
           binary_samples(DEFAULT, Domain(-0.5, 5.0, 0, 9), (2, 0.5), (3, 0.0), dtypes=ALL,
                          specials=[([0.0, 0.0, 1.0], [NAN, -1.0, -1.0])]),
           fn=lambda lib: lib.special.xlog1py, method="", tol=_TRANSCENDENTAL_TOL))


def _heaviside_samples(dtype, rng):
    def x(shape):
        v = arr(rng, shape, dtype)
        # Zeros are where `values` is used: make sure there are some.
        return Arr(np.where(rng.random(shape) < 0.3, np.zeros((), v.value.dtype), v.value), dtype)

    out = [
        Sample((x((3, 4)), x((3, 4))), desc="same shape"),
        Sample((x((3, 1)), x((4,))), desc="broadcast"),
        Sample((x(()), x((3,))), desc="0-d input"),
        Sample((x((0, 3)), x((3,))), desc="zero-size"),
    ]
    p = "float64" if dtype != "float64" else "float32"
    out.append(Sample((x((2, 3)), arr(rng, (2, 3), p)), desc="different dtypes (error)"))
    if dtype in FLOATS:
        out.append(Sample((const([0.0, NAN, -1.0, INF], dtype), const([0.5, 0.5, 0.5, 0.5], dtype)),
                          desc="specials"))
    return out


add(OpInfo("heaviside", "binary", ALL, _heaviside_samples, inplace=True))


def _isclose_samples(dtype, rng):
    def x(shape):
        return arr(rng, shape, dtype)

    a = x((3, 4))
    near = a.value if dtype in INT_LIKE else (a.value * (1 + 1e-6)).astype(a.value.dtype)
    out = [
        Sample((a, Arr(near, dtype)), desc="nearly equal"),
        Sample((x((3, 4)), x((3, 4))), desc="random"),
        Sample((x((3, 1)), x((4,))), desc="broadcast"),
        Sample((x(()), x(())), desc="0-d"),
        Sample((x((2, 3)), x((2, 3))), {"rtol": 0.5, "atol": 1.0}, desc="loose tolerances"),
        Sample((x((2, 3)), x((2, 3)), 0.1, 0.0), desc="positional rtol/atol"),
        Sample((x((2, 3)), x((2, 3))), {"rtol": -1.0}, desc="negative rtol (error)"),
        Sample((x((2, 3)), x((2, 3))), {"atol": -1.0}, desc="negative atol (error)"),
    ]
    other = "float64" if dtype != "float64" else "float32"
    out.append(Sample((x((2, 3)), arr(rng, (2, 3), other)), desc="different dtypes (error)"))
    if dtype in FLOATS:
        s = const([NAN, INF, -INF, 1.0, NAN], dtype), const([NAN, INF, INF, NAN, 1.0], dtype)
        out.append(Sample(s, desc="specials"))
        out.append(Sample(s, {"equal_nan": True}, desc="specials equal_nan"))
    if dtype in COMPLEX:  # the modulus of the difference; NaN in either part
        s = (const([complex(NAN, 1), complex(INF, 1), 1 + 1j, 1 + 1e-9j, complex(1, NAN)], dtype),
             const([complex(NAN, 1), complex(INF, 1), 1 + 1.1j, 1 + 0j, complex(NAN, 2)], dtype))
        out.append(Sample(s, desc="complex specials"))
        out.append(Sample(s, {"equal_nan": True}, desc="complex specials equal_nan"))
    if dtype in INTS:
        out.append(Sample((const([3, 0, 100], dtype), const([5, 0, 99], dtype)), {"atol": 1.0},
                          desc="integer differences"))
    return out


add(OpInfo("isclose", "binary", ALL + COMPLEX, _isclose_samples))

# -- ternary: addcmul / addcdiv -----------------------------------------------------


def _addc_samples(div):
    def gen(dtype, rng):
        dy = NONZERO if div else DEFAULT

        def x(shape, d=dtype, dom=DEFAULT):
            return arr(rng, shape, d, dom)

        out = [
            Sample((x((3, 4)), x((3, 4)), x((3, 4), dom=dy)), desc="same shape"),
            Sample((x((3, 1)), x((1, 4)), x((4,), dom=dy)), desc="broadcast all three"),
            Sample((x(()), x(()), x((), dom=dy)), desc="0-d"),
            Sample((x((0, 3)), x((3,)), x((3,), dom=dy)), desc="zero-size"),
            Sample((x((2, 3)), x((2, 3)), x((2, 3), dom=dy)), {"value": 2}, desc="value=2"),
        ]
        if dtype in FLOATS:
            out.append(Sample((x((2, 3)), x((2, 3)), x((2, 3), dom=dy)), {"value": -0.5}, desc="value=-0.5"))
            out.append(Sample((x((2, 3)), x((2, 3), "int32"), x((2, 3), dom=dy)), desc="int tensor1"))
        if dtype in COMPLEX:
            out.append(Sample((x((2, 3)), x((2, 3)), x((2, 3), dom=dy)), {"value": 0.5 - 2j}, desc="complex value"))
            out.append(Sample((x((2, 3)), x((2, 3), "float64"), x((2, 3), dom=dy)), desc="real tensor1"))
        if dtype in INTS:
            out.append(Sample((x((2, 3)), x((2, 3)), x((2, 3), dom=dy)), {"value": 0.5},
                              desc="float value on ints"))
            out.append(Sample((x((2, 3)), x((2, 3), "float32"), x((2, 3), "float32", dy)), desc="float tensors"))
        return out

    return gen


add(OpInfo("addcmul", "ternary", NUMBER + COMPLEX, _addc_samples(False), inplace=True, tol=_TRANSCENDENTAL_TOL))
add(OpInfo("addcdiv", "ternary", NUMBER + COMPLEX, _addc_samples(True), inplace=True, tol=_TRANSCENDENTAL_TOL))

# -- custom entries -------------------------------------------------------------------


def _nan_to_num_samples(dtype, rng):
    out = unary_samples(specials=True)(dtype, rng)
    if dtype in FLOATS:
        s = const([NAN, INF, -INF, 1.5, -0.0], dtype)
        out += [
            Sample((s,), {"nan": 2.0}, desc="nan=2"),
            Sample((s,), {"posinf": 10.0, "neginf": -10.0}, desc="posinf/neginf"),
            Sample((s, 1.0, 100.0, -100.0), desc="positional"),
            Sample((s,), {"posinf": 1e40}, desc="posinf beyond the dtype"),
        ]
    if dtype in COMPLEX:  # each part replaced on its own
        s = const([complex(NAN, INF), complex(-INF, 2.0), complex(1.5, NAN), 3 - 1j], dtype)
        out += [Sample((s,), desc="specials in either part"),
                Sample((s,), {"nan": 2.0, "posinf": 9.0, "neginf": -9.0}, desc="replacements")]
    return out


def _nan_to_num_ref(torch):
    # torch has no complex nan_to_num derivative; its composition over the parts defines the
    # same values and differentiates each part on its own, as flow's formula does.
    def f(x, *args, **kwargs):
        if x.is_complex():
            return torch.complex(torch.nan_to_num(x.real, *args, **kwargs), torch.nan_to_num(x.imag, *args, **kwargs))
        return torch.nan_to_num(x, *args, **kwargs)

    return f


add(OpInfo("nan_to_num", "unary", ALL + COMPLEX, _nan_to_num_samples, ref=_nan_to_num_ref, inplace=True))


def _positive_samples(dtype, rng):
    return unary_samples()(dtype, rng)


add(OpInfo("positive", "unary", ALL + COMPLEX, _positive_samples))


def _div_rounding_samples(dtype, rng):
    def x(shape, dom=DEFAULT):
        return arr(rng, shape, dtype, dom)

    out = []
    for mode in ("trunc", "floor"):
        out += [
            Sample((x((3, 4)), x((3, 4), NONZERO)), {"rounding_mode": mode}, desc=f"{mode}"),
            Sample((x((3, 1)), x((4,), NONZERO)), {"rounding_mode": mode}, desc=f"{mode} broadcast"),
            Sample((x((2, 3)), -3), {"rounding_mode": mode}, desc=f"{mode} by a number"),
            Sample((x((0, 3)), x((3,), NONZERO)), {"rounding_mode": mode}, desc=f"{mode} zero-size"),
        ]
    out.append(Sample((x((2, 3)), x((2, 3), NONZERO)), {"rounding_mode": None}, desc="None: true division"))
    out.append(Sample((x((2, 3)), x((2, 3), NONZERO)), {"rounding_mode": "round"}, desc="bad mode (error)"))
    if dtype in INTS:
        z = Arr(np.zeros((3,), NP_DTYPE[dtype]), dtype)
        out.append(Sample((x((3,)), z), {"rounding_mode": "trunc"}, desc="integer division by zero (error)"))
    if dtype in FLOATS:
        out.append(Sample((const([1.0, -1.0, 0.0, 7.5], dtype), const([0.0, 0.0, 0.0, -2.0], dtype)),
                          {"rounding_mode": "trunc"}, desc="trunc specials"))
    return out


add(OpInfo("div_rounding", "binary", ALL, _div_rounding_samples, fn=lambda lib: lib.div, method="div",
           inplace=True, ref=lambda torch: torch.div))
