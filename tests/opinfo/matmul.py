"""OpInfos of the matrix products."""

from .core import *  # noqa: F401,F403

# -- matmul ---------------------------------------------------------------------
_MM_TOL = {"float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}
# complex64/complex128: OpenBLAS cgemm/zgemm.
add(OpInfo("matmul", "matmul", MATMUL_DTYPES + COMPLEX, matmul_samples, operator=operator.matmul, tol=_MM_TOL))
add(OpInfo("mm", "matmul", MATMUL_DTYPES + COMPLEX, mm_samples, tol=_MM_TOL))
add(OpInfo("bmm", "matmul", MATMUL_DTYPES + COMPLEX, bmm_samples, tol=_MM_TOL))

# -- the add*mm family, vector products, contractions ---------------------------------------
# Every dtype torch's CPU kernels take (no bool); 16-bit products accumulate in float32 on
# both sides, so small inner sizes keep them within one or two ulps.
_BLAS_DTYPES = INTS + FLOATS
_BLAS_TOL = {"float32": (1e-5, 1e-5), "float16": (4e-3, 4e-3), "bfloat16": (3e-2, 3e-2)}
_D = Domain(-1.0, 1.0, -3, 3)


def _m(rng, shape, dtype):
    return arr(rng, shape, dtype, _D)


def addmm_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    ints = dtype in INTS
    out = [
        _s([a((2, 4)), a((2, 3)), a((3, 4))], desc="plain"),
        _s([a((4,)), a((2, 3)), a((3, 4))], desc="broadcast row"),
        _s([a(()), a((2, 3)), a((3, 4))], desc="0-d input"),
        _s([a((2, 4)), a((2, 3)), a((3, 4))], {"beta": 2, "alpha": 3}, desc="beta, alpha"),
        _s([a((2, 4)), a((2, 3)), a((3, 4))], {"beta": 0}, desc="beta 0"),
        _s([a((2, 4)), a((2, 0)), a((0, 4))], desc="k = 0"),
        _s([a((0, 4)), a((0, 3)), a((3, 4))], desc="zero rows"),
        _s([a((2, 4)), a((2, 3)), a((4, 4))], desc="shape mismatch (error)"),
        _s([a((3, 3)), a((2, 3)), a((3, 4))], desc="input not broadcastable (error)"),
    ]
    if not ints:
        out.append(_s([a((2, 4)), a((2, 3)), a((3, 4))], {"beta": 0.5, "alpha": -1.5}, desc="float coefficients"))
    return out


def addmv_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2,)), a((2, 3)), a((3,))], desc="plain"),
        _s([a(()), a((2, 3)), a((3,))], desc="0-d input"),
        _s([a((2,)), a((2, 3)), a((3,))], {"beta": 0, "alpha": 2}, desc="beta 0, alpha 2"),
        _s([a((2,)), a((2, 0)), a((0,))], desc="k = 0"),
        _s([a((2,)), a((2, 3)), a((4,))], desc="size mismatch (error)"),
    ]


def addbmm_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 4)), a((3, 2, 5)), a((3, 5, 4))], desc="plain"),
        # (broadcasting input: tests/test_shape_ops.py; torch's addbmm_ would resize self)
        _s([a((2, 4)), a((3, 2, 5)), a((3, 5, 4))], {"beta": 2, "alpha": 0}, desc="alpha 0"),
        _s([a((2, 4)), a((0, 2, 5)), a((0, 5, 4))], {"beta": 3}, desc="empty batch"),
        _s([a((2, 4)), a((3, 2, 5)), a((2, 5, 4))], desc="batch mismatch (error)"),
    ]


def baddbmm_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 2, 4)), a((3, 2, 5)), a((3, 5, 4))], desc="plain"),
        _s([a((2, 4)), a((3, 2, 5)), a((3, 5, 4))], {"beta": 0.5 if dtype not in INTS else 2}, desc="broadcast"),
        _s([a((3, 2, 4)), a((3, 2, 5)), a((3, 5, 4))], {"beta": 0}, desc="beta 0"),
        _s([a((3, 2, 4)), a((3, 2, 5)), a((3, 4, 4))], desc="shape mismatch (error)"),
    ]


def dot_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [
        _s([a((5,)), a((5,))], desc="plain"),
        _s([a((0,)), a((0,))], desc="empty"),
        _s([a((3,)), a((4,))], desc="size mismatch (error)"),
        _s([a((2, 2)), a((2, 2))], desc="2-d (error)"),
    ]


def mv_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4)), a((4,))], desc="plain"),
        _s([a((0, 4)), a((4,))], desc="zero rows"),
        _s([a((3, 0)), a((0,))], desc="k = 0"),
        _s([a((3, 4)), a((5,))], desc="size mismatch (error)"),
    ]


def outer_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3,)), a((4,))], desc="plain"),
        _s([a((0,)), a((2,))], desc="empty"),
        _s([a((2, 2)), a((2,))], desc="2-d (error)"),
    ]


def inner_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3,)), a((3,))], desc="vectors"),
        _s([a((2, 3)), a((4, 3))], desc="matrices"),
        _s([a((2, 2, 3)), a((3,))], desc="3-d and vector"),
        _s([a(()), a((2, 3))], desc="0-d"),
        _s([a((2, 3)), a((3, 2))], desc="mismatch (error)"),
    ]


def tensordot_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4, 5)), a((4, 5, 6))], desc="dims=2 default"),
        _s([a((3, 4)), a((4, 5))], {"dims": 1}, desc="dims=1"),
        _s([a((3, 4, 5)), a((5, 3, 2))], {"dims": ([0, 2], [1, 0])}, desc="dim lists"),
        _s([a((2, 3)), a((4,))], {"dims": 0}, desc="outer"),
        _s([a((3, 4)), a((5, 4))], {"dims": ([1], [0])}, desc="mismatch (error)"),
    ]


def kron_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [
        _s([a((2, 3)), a((3, 2))], desc="matrices"),
        _s([a((2,)), a((2, 3))], desc="different ranks"),
        _s([a(()), a((2,))], desc="0-d"),
        _s([a((2, 0)), a((2, 2))], desc="zero-size"),
    ]


def cross_samples(linalg):
    def gen(dtype, rng):
        a = lambda s: _m(rng, s, dtype)  # noqa: E731
        out = [
            _s([a((3,)), a((3,))], desc="vectors"),
            _s([a((4, 3)), a((4, 3))], {"dim": 1}, desc="dim 1"),
            _s([a((3, 2)), a((3, 2))], {"dim": 0}, desc="dim 0"),
            _s([a((2, 3)), a((1, 3))], {"dim": -1}, desc="broadcast"),
            _s([a((2, 2)), a((2, 2))], {"dim": -1}, desc="no size 3 (error)"),
        ]
        if not linalg:
            out.append(_s([a((2, 3, 4)), a((2, 3, 4))], desc="default dim: first of size 3"))
        return out
    return gen


def trace_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [_s([a((3, 3))], desc="square"), _s([a((2, 4))], desc="wide"), _s([a((0, 2))], desc="empty"),
            _s([a((3,))], desc="1-d (error)")]


def cdist_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)  # noqa: E731
    return [
        _s([a((3, 4)), a((5, 4))], desc="p=2"),
        _s([a((3, 4)), a((2, 4))], {"p": 1.0}, desc="p=1"),
        _s([a((2, 3, 4)), a((1, 5, 4))], {"p": 3.0}, desc="p=3, broadcast batch"),
        _s([a((3, 2)), a((4, 2))], {"p": float("inf")}, desc="p=inf"),
        _s([a((3, 2)), a((4, 2))], {"p": 0.5}, desc="p=0.5"),
        _s([a((3, 2)), a((4, 2))], {"p": 0.0}, desc="p=0"),
        _s([a((0, 2)), a((4, 2))], desc="no rows"),
        _s([a((3, 2)), a((4, 3))], desc="columns mismatch (error)"),
    ]


def einsum_samples(dtype, rng):
    a = lambda s: _m(rng, s, dtype)  # noqa: E731
    return [
        _s(["bij,bjk->bik", a((2, 3, 4)), a((2, 4, 5))], desc="batched matmul"),
        _s(["ij,jk", a((3, 4)), a((4, 2))], desc="implicit output"),
        _s(["ii->i", a((3, 3))], desc="diagonal"),
        _s(["ii", a((3, 3))], desc="trace"),
        _s(["ij->ji", a((2, 3))], desc="transpose"),
        _s(["i,j->ij", a((3,)), a((2,))], desc="outer"),
        _s(["i,i->", a((4,)), a((4,))], desc="dot"),
        _s(["...ij,...jk->...ik", a((2, 1, 3, 4)), a((5, 4, 2))], desc="ellipsis broadcast"),
        _s(["bA,ca", a((2, 3)), a((4, 3))], desc="upper case, implicit order"),
        _s(["ij,ij->ij", a((2, 1)), a((2, 3))], desc="size-1 broadcast"),
        _s(["ijk,jil->kl", a((2, 3, 4)), a((3, 2, 5))], desc="two contracted dims"),
        _s(["abc,cd,de->abe", a((2, 3, 4)), a((4, 5)), a((5, 2))], desc="three operands"),
        _s(["iij->j", a((2, 2, 3))], desc="diagonal then sum"),
        _s(["i...->...", a((3, 2, 2))], desc="sum leading dim"),
        _s(["ij,jk", [a((3, 4)), a((4, 2))]], desc="operands as a list"),
        _s(["ij,jk->ik", a((3, 4)), a((5, 2))], desc="size mismatch (error)"),
        _s(["ij,jk->iz", a((3, 4)), a((4, 2))], desc="unknown output subscript (error)"),
        _s(["ijk,jk", a((3, 4)), a((4, 2))], desc="too many subscripts (error)"),
        _s(["ij,jk->ik", a((3, 4))], desc="too few operands (error)"),
    ]


add(OpInfo("addmm", "matmul", _BLAS_DTYPES + COMPLEX, addmm_samples, inplace=True, tol=_BLAS_TOL))
add(OpInfo("addmv", "matmul", _BLAS_DTYPES + COMPLEX, addmv_samples, inplace=True, tol=_BLAS_TOL))
add(OpInfo("addbmm", "matmul", _BLAS_DTYPES + COMPLEX, addbmm_samples, inplace=True, tol=_BLAS_TOL))
add(OpInfo("baddbmm", "matmul", _BLAS_DTYPES + COMPLEX, baddbmm_samples, inplace=True, tol=_BLAS_TOL))
add(OpInfo("dot", "matmul", _BLAS_DTYPES + COMPLEX, dot_samples, tol=_BLAS_TOL))
add(OpInfo("vdot", "matmul", _BLAS_DTYPES + COMPLEX, dot_samples, tol=_BLAS_TOL))
add(OpInfo("mv", "matmul", _BLAS_DTYPES + COMPLEX, mv_samples, tol=_BLAS_TOL))
add(OpInfo("outer", "matmul", NUMBER + COMPLEX, outer_samples, tol=_BLAS_TOL))
add(OpInfo("inner", "matmul", _BLAS_DTYPES + COMPLEX, inner_samples, tol=_BLAS_TOL))
# flow.tensordot / flow.einsum are Python glue over the table ops (boxed form: tests/test_shape_ops.py).
add(OpInfo("tensordot", "matmul", _BLAS_DTYPES + COMPLEX, tensordot_samples, method="", tol=_BLAS_TOL,
           fn=lambda lib: lambda *a, **k: lib.tensordot(*a, **k)))
add(OpInfo("kron", "matmul", NUMBER + COMPLEX, kron_samples, tol=_BLAS_TOL))
add(OpInfo("cross", "matmul", NUMBER + COMPLEX, cross_samples(False), tol=_BLAS_TOL))
add(OpInfo("linalg_cross", "matmul", NUMBER + COMPLEX, cross_samples(True), fn=lambda lib: lib.linalg.cross, method="",
           tol=_BLAS_TOL))
def _trace_ref(torch):
    """torch.trace; torch before 2.13 has no 16-bit CPU kernel: there, the float32 trace rounded to
    the input's dtype (what 2.13 computes: it accumulates in float)."""

    def f(x):
        try:
            return torch.trace(x)
        except NotImplementedError:
            if x.dtype not in (torch.float16, torch.bfloat16):
                raise
            return torch.trace(x.float()).to(x.dtype)

    return f


add(OpInfo("trace", "matmul", NUMBER + COMPLEX, trace_samples, tol=_BLAS_TOL, ref=_trace_ref))
add(OpInfo("cdist", "matmul", ("float32", "float64"), cdist_samples, method="", tol={"float32": (1e-5, 1e-5)}))
add(OpInfo("einsum", "matmul", _BLAS_DTYPES + COMPLEX, einsum_samples, method="", tol=_BLAS_TOL,
           fn=lambda lib: lambda *a, **k: lib.einsum(*a, **k)))
