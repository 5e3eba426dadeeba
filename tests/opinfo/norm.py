"""OpInfos of the norms: the table ops linalg_vector_norm / linalg_matrix_norm and the Python
dispatchers oneflow.norm (Tensor.norm), linalg.norm and linalg.matrix_norm."""

from .core import *  # noqa: F401,F403

NAN, INF = float("nan"), float("inf")
_TOL = {"float16": (4e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (1e-5, 1e-5)}
_ORDS = (2, 1, 0, 3, 0.5, 1.5, -1, -2.5, INF, -INF)


def _vector_norm_samples(dtype, rng):
    def x(shape):
        return arr(rng, shape, dtype)

    out = [Sample((x((3, 4)), o), desc=f"ord={o}") for o in _ORDS]
    out += [
        Sample((x((2, 3, 4)),), desc="default ord, all dims"),
        Sample((x((2, 3, 4)),), {"dim": 1}, desc="dim=1"),
        Sample((x((2, 3, 4)), 1, (0, 2), True), desc="ord 1 dims (0, 2) keepdim"),
        Sample((x((2, 3, 4)),), {"ord": INF, "dim": -1}, desc="inf dim -1"),
        Sample((x(()),), desc="0-d"),
        Sample((x((0, 3)),), desc="zero-size (0)"),
        Sample((x((0, 3)), INF), desc="inf norm of empty (error)"),
        Sample((x((0, 3)),), {"ord": 1, "dim": 1}, desc="zero-size kept dim"),
        Sample((x((2, 3)),), {"dtype": DT("float64")}, desc="dtype=float64"),
        Sample((x((2, 3)),), {"dtype": DT("int64")}, desc="integer dtype (error)"),
        Sample((x((2, 3)),), {"dim": 2}, desc="bad dim (error)"),
        Sample((x((400,)),), desc="long vector"),
    ]
    if dtype in FLOATS:
        z = const([[0.0, 0.0, 0.0], [1.0, -2.0, 0.0]], dtype)
        out += [Sample((z, o, 1), desc=f"zero row ord={o}") for o in (2, 0.5, 1.5, 3, INF)]
        out.append(Sample((const([1.0, NAN, -2.0], dtype), INF), desc="NaN inf-norm"))
        out.append(Sample((const([1.0, -3.0, 3.0], dtype), INF), desc="tied maxima"))
    if dtype in COMPLEX:  # the norm of |z|; dtype= must be complex
        out.append(Sample((x((2, 3)),), {"dtype": DT("complex128")}, desc="dtype=complex128"))
        out.append(Sample((const([3 + 4j, -4j, 0j], dtype), INF), desc="complex tied moduli"))
    return out


add(OpInfo("linalg_vector_norm", "reduction", ALL + COMPLEX, _vector_norm_samples,
           fn=lambda lib: lib.linalg.vector_norm, method="", tol=_TOL))


def _matrix_norm_samples(dtype, rng):
    def x(shape):
        return arr(rng, shape, dtype)

    out = [Sample((x((3, 4)), o), desc=f"ord={o}") for o in (1, -1, INF, -INF, "fro")]
    out += [
        Sample((x((2, 3, 4)),), desc="default 'fro', batch"),
        Sample((x((2, 3, 4)), 1, (0, 2)), desc="ord 1 dims (0, 2)"),
        Sample((x((2, 3, 4)), -INF, (-1, 0), True), desc="-inf dims (-1, 0) keepdim"),
        Sample((x((2, 3, 4)),), {"ord": INF, "keepdim": True}, desc="inf keepdim"),
        Sample((x((3,)), 1), desc="1-d input (error)"),
        Sample((x((3, 4)), 3), desc="unsupported order (error)"),
        Sample((x((3, 4)), 1, (0,)), desc="one dim (error)"),
        Sample((x((3, 4)), 1, (0, 0)), desc="same dims (error)"),
        Sample((x((3, 4)), "fro"), {"dtype": DT("float64")}, desc="dtype=float64"),
        Sample((x((0, 3)), "fro"), desc="zero-size fro"),
    ]
    if dtype in FLOATS:
        t = const([[1.0, -2.0], [2.0, 1.0], [-2.0, 1.0]], dtype)
        out.append(Sample((t, 1), desc="tied column sums"))
    return out


add(OpInfo("linalg_matrix_norm", "reduction", ALL + COMPLEX, _matrix_norm_samples, fn=lambda lib: lib.linalg.matrix_norm,
           method=""))


def _linalg_norm_samples(dtype, rng):
    def x(shape):
        return arr(rng, shape, dtype)

    return [
        Sample((x((2, 3, 4)),), desc="default: 2-norm of everything"),
        Sample((x((5,)), 3), desc="1-d ord 3"),
        Sample((x((3, 4)), 1), desc="2-d ord 1 (matrix)"),
        Sample((x((3, 4)), "fro"), desc="2-d 'fro'"),
        Sample((x((3, 4)), INF), desc="2-d inf (matrix)"),
        Sample((x((2, 3, 4)),), {"ord": 1, "dim": 1}, desc="vector along dim 1"),
        Sample((x((2, 3, 4)),), {"ord": -INF, "dim": (0, 2), "keepdim": True}, desc="matrix over (0, 2)"),
        Sample((x((2, 3, 4)), 2), desc="3-d with ord, no dim (error)"),
        Sample((x((2, 3, 4)), "fro"), desc="3-d 'fro', no dim (error)"),
        Sample((x((2, 3, 4)),), {"dim": (0, 1, 2)}, desc="three dims (error)"),
    ]


add(OpInfo("linalg_norm", "reduction", ALL + COMPLEX, _linalg_norm_samples, fn=lambda lib: lib.linalg.norm, method=""))


def _norm_samples(dtype, rng):
    def x(shape):
        return arr(rng, shape, dtype)

    return [
        Sample((x((2, 3, 4)),), desc="default 'fro' = 2-norm of all"),
        Sample((x((3, 4)), 1), desc="p=1 of a matrix: flattened"),
        Sample((x((3, 4)), INF), desc="p=inf"),
        Sample((x((2, 3, 4)), 2, 1), desc="p=2 dim=1"),
        Sample((x((2, 3, 4)),), {"p": "fro", "dim": (1, 2), "keepdim": True}, desc="'fro' dims keepdim"),
        Sample((x((2, 3, 4)),), {"p": 0.5, "dim": -1}, desc="p=0.5"),
        Sample((x((3, 4)),), {"p": 2, "dtype": DT("float64")}, desc="dtype"),
        Sample((x((3, 4)),), {"p": "bad"}, desc="bad string p (error)"),
        Sample((x(()),), desc="0-d"),
    ]


add(OpInfo("norm", "reduction", ALL + COMPLEX, _norm_samples))
