"""OpInfos of the pointwise ops: unary, binary, comparisons (where: index.py; clamp: math.py)."""

from .core import *  # noqa: F401,F403

# -- pointwise unary, float result for int/bool input ---------------------
_TRANSCENDENTAL_TOL = {"float32": (5e-6, 1e-5)}  # libm vs SLEEF: a few ulp
_UNARY_FLOAT = {
    "exp": (DEFAULT, True),
    "log": (POSITIVE, False),
    "log2": (POSITIVE, False),
    "log10": (POSITIVE, False),
    "log1p": (Domain(-0.5, 5.0, 0, 9), False),
    "expm1": (DEFAULT, False),
    "sqrt": (POSITIVE, False),
    "rsqrt": (POSITIVE, False),
    "sin": (DEFAULT, False),
    "cos": (DEFAULT, False),
    "tan": (Domain(-1.2, 1.2, -1, 1), False),
    "asin": (UNIT, False),
    "acos": (UNIT, False),
    "atan": (DEFAULT, False),
    "sinh": (DEFAULT, False),
    "cosh": (DEFAULT, False),
    "tanh": (DEFAULT, True),
    "asinh": (DEFAULT, False),
    "acosh": (GE_ONE, False),
    "atanh": (UNIT, False),
    "sigmoid": (DEFAULT, True),
    "erf": (DEFAULT, False),
    "erfc": (DEFAULT, False),
    "reciprocal": (NONZERO, False),
}
# Ops with a complex meaning also run on complex64/complex128 (Note [Complex functors]).
_COMPLEX_UNARY = {"exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan",
                  "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid",
                  "reciprocal", "abs", "neg", "sgn", "square", "logical_not", "isnan", "isinf", "isfinite"}
_COMPLEX_BINARY = {"add", "sub", "mul", "div", "pow", "eq", "ne", "logical_and", "logical_or", "logical_xor"}
# (gelu and silu, also float-valued for int input, are in activation.py.)
for _name, (_dom, _spec) in _UNARY_FLOAT.items():
    add(
        OpInfo(
            _name,
            "unary_float",
            ALL + (COMPLEX if _name in _COMPLEX_UNARY else ()),
            unary_samples(_dom, specials=_spec),
            inplace=True,
            tol=_TRANSCENDENTAL_TOL,
        )
    )

# -- pointwise unary, same dtype ------------------------------------------------
_UNARY_SAME = {
    "abs": (abs, True),
    "neg": (operator.neg, True),
    "sign": (None, False),
    "sgn": (None, False),
    "square": (None, True),
    "ceil": (None, True),
    "floor": (None, True),
    "trunc": (None, True),
    "relu": (None, False),
}
for _name, (_op, _spec) in _UNARY_SAME.items():
    add(
        OpInfo(
            _name,
            "unary",
            (ALL if _name in ("sign", "sgn") else NUMBER) + (COMPLEX if _name in _COMPLEX_UNARY else ()),
            unary_samples(specials=_spec, halves=_name == "round"),
            operator=_op,
            inplace=True,
        )
    )

# -- unary with bool result -----------------------------------------------------
for _name in ("logical_not", "isnan", "isinf", "isfinite"):
    add(OpInfo(_name, "unary_bool", ALL + (COMPLEX if _name in _COMPLEX_UNARY else ()),
               unary_samples(specials=True)))
add(OpInfo("bitwise_not", "unary_bool", INT_LIKE, unary_samples(), operator=operator.invert, inplace=True))

# -- binary -----------------------------------------------------------------------
_DIV_SPECIALS = [([1.0, -1.0, 0.0, 2.0], [0.0, 0.0, 0.0, -0.0])]
_NAN_SPECIALS = [([float("nan"), 1.0, float("nan"), 2.0], [1.0, float("nan"), float("nan"), 3.0])]
_BINARY = {
    # name: (dtypes, operator, inplace, dom_x, dom_y, scalars, scalar_first, extra kwargs)
    "add": (ALL, operator.add, True, DEFAULT, DEFAULT, (2, -1.5, True), (3, 0.5), dict(alpha=True)),
    "sub": (NUMBER, operator.sub, True, DEFAULT, DEFAULT, (2, -1.5), (3, 0.5), dict(alpha=True)),
    "mul": (ALL, operator.mul, True, DEFAULT, DEFAULT, (2, -1.5, True), (3, 0.5), {}),
    "div": (ALL, operator.truediv, True, DEFAULT, NONZERO, (2, -1.5), (3, 0.5),
            dict(specials=_DIV_SPECIALS)),
    "floor_divide": (NUMBER, operator.floordiv, True, DEFAULT, NONZERO, (2, -3, 1.5), (7, -7), {}),
    "remainder": (NUMBER, operator.mod, True, DEFAULT, NONZERO, (2, -3, 1.5), (7, -7), {}),
    "fmod": (NUMBER, None, True, DEFAULT, NONZERO, (2, -3, 1.5), (7,), {}),
    "pow": (NUMBER, operator.pow, True, Domain(0.5, 3.0, -3, 3), Domain(-2.0, 2.0, 0, 3),
            (2, 0.5, 0), (2, 1.5), {}),
    "maximum": (ALL, None, False, DEFAULT, DEFAULT, (), (), dict(specials=_NAN_SPECIALS)),
    "minimum": (ALL, None, False, DEFAULT, DEFAULT, (), (), dict(specials=_NAN_SPECIALS)),
    "atan2": (ALL, None, True, DEFAULT, DEFAULT, (), (), {}),
    "bitwise_and": (INT_LIKE, operator.and_, True, DEFAULT, DEFAULT, (3, True), (5,), {}),
    "bitwise_or": (INT_LIKE, operator.or_, True, DEFAULT, DEFAULT, (3, True), (5,), {}),
    "bitwise_xor": (INT_LIKE, operator.xor, True, DEFAULT, DEFAULT, (3, True), (5,), {}),
    "logical_and": (ALL, None, False, DEFAULT, DEFAULT, (), (), {}),
    "logical_or": (ALL, None, False, DEFAULT, DEFAULT, (), (), {}),
    "logical_xor": (ALL, None, False, DEFAULT, DEFAULT, (), (), {}),
    "eq": (ALL, operator.eq, False, DEFAULT, DEFAULT, (2, 0.5, True), (2,), dict(specials=_NAN_SPECIALS)),
    "ne": (ALL, operator.ne, False, DEFAULT, DEFAULT, (2, 0.5, True), (2,), dict(specials=_NAN_SPECIALS)),
    "lt": (ALL, operator.lt, False, DEFAULT, DEFAULT, (2, 0.5), (2,), dict(specials=_NAN_SPECIALS)),
    "le": (ALL, operator.le, False, DEFAULT, DEFAULT, (2, 0.5), (2,), {}),
    "gt": (ALL, operator.gt, False, DEFAULT, DEFAULT, (2, 0.5), (2,), {}),
    "ge": (ALL, operator.ge, False, DEFAULT, DEFAULT, (2, 0.5), (2,), {}),
}
for _name, (_dts, _op, _inpl, _dx, _dy, _sc, _sf, _kw) in _BINARY.items():
    if _name in _COMPLEX_BINARY:
        _dts = _dts + COMPLEX
    add(
        OpInfo(
            _name,
            "binary",
            _dts,
            binary_samples(_dx, _dy, _sc, _sf, dtypes=_dts, **_kw),
            operator=_op,
            inplace=_inpl,
            # pow/atan2/div: libm vs SLEEF, and float16 results rounded from
            # slightly different float32 values.
            tol=_TRANSCENDENTAL_TOL,
        )
    )

