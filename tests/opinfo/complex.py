"""OpInfos of the complex family (src/ops/table/complex.yaml): construction from real parts,
real/imag/view_as_real/view_as_complex views, conj, angle. The complex-capable ops of other
families list COMPLEX among their dtypes in their own modules (pointwise, reduce, matmul)."""

from .core import *  # noqa: F401,F403

_REAL = ("float32", "float64")


def _pair_samples(dom_a=DEFAULT, dom_b=DEFAULT):
    """Two real tensors of one dtype: complex(real, imag) / polar(abs, angle)."""

    def gen(dtype, rng):
        def a(shape):
            return arr(rng, shape, dtype, dom_a)

        def b(shape):
            return arr(rng, shape, dtype, dom_b)

        other = "float64" if dtype == "float32" else "float32"
        return [
            Sample((a((3, 4)), b((3, 4))), desc="same shape"),
            Sample((a((3, 1)), b((1, 4))), desc="broadcast"),
            Sample((a(()), b(())), desc="0-d"),
            Sample((a((0, 3)), b((0, 3))), desc="zero-size"),
            Sample((a((2, 3)), arr(rng, (2, 3), other, dom_b)), desc="mixed dtypes (error)"),
            Sample((Arr(np.ones((2,), np.int64), "int64"), Arr(np.ones((2,), np.int64), "int64")),
                   desc="int64 (error)"),
        ]

    return gen


def _view_as_complex_samples(dtype, rng):
    return [
        Sample((arr(rng, (3, 2), dtype),), desc="(3,2)"),
        Sample((arr(rng, (2, 3, 2), dtype),), desc="(2,3,2)"),
        Sample((arr(rng, (2,), dtype),), desc="(2,)"),
        Sample((arr(rng, (3, 3), dtype),), desc="last dim 3 (error)"),
    ]


def _imag_samples(dtype, rng):
    return [Sample((arr(rng, s, dtype),), desc=f"shape{s}" + ("" if dtype in COMPLEX else " (error)"))
            for s in UNARY_SHAPES]


add(
    OpInfo("complex", "complex", _REAL, _pair_samples(), method=""),
    OpInfo("polar", "complex", _REAL, _pair_samples(POSITIVE), method="",
           tol={"float32": (1e-5, 1e-5)}),
    # Tensor.real / .imag are properties, in torch too.
    OpInfo("real", "complex", FLOATS + COMPLEX, unary_samples(), method=""),
    OpInfo("imag", "complex", COMPLEX, _imag_samples, method=""),  # real input: test_complex.py
    OpInfo("view_as_real", "complex", COMPLEX, unary_samples(), method=""),
    # A view needing a unit-stride last dim: non-contiguous inputs are compared on one layout.
    OpInfo("view_as_complex", "complex", _REAL, _view_as_complex_samples, method="",
           layout_dependent=True),
    OpInfo("conj", "complex", ALL + COMPLEX, unary_samples()),
    OpInfo("conj_physical", "complex", ALL + COMPLEX, unary_samples()),
    OpInfo("angle", "complex", NUMBER + COMPLEX, unary_samples(specials=True),
           tol={"float32": (5e-6, 1e-5)}),
)
