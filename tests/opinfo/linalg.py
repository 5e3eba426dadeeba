"""OpInfos of the linear-algebra ops (src/ops/table/linalg.yaml), real and complex.

Inputs are well conditioned (random plus n * I) so that float32 results of two LAPACK
implementations agree; complex samples have random imaginary parts too. Decompositions whose
factors are unique only up to signs (real) or phases (complex) (svd, eigh) are compared after
making each singular/eigen vector's first row real and non-negative; eigh and cholesky read one
triangle, so their samples go through a Hermitian-making wrapper (A + A^H, A A^H + n I) and finite
differences see a function of every entry.
"""

from .core import *  # noqa: F401,F403

LINALG_DTYPES = ("float32", "float64", "complex64", "complex128")
# float32 gradients of factorisations go through several solves/products whose rounding differs
# between LAPACK builds (OpenBLAS here, MKL in torch); float64 stays tight.
_TOL = {"float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4)}


def _uniform(rng, shape, dtype):
    v = rng.uniform(-1, 1, size=shape)
    if dtype.startswith("complex"):
        v = v + 1j * rng.uniform(-1, 1, size=shape)
    return v


def _well_conditioned(rng, batch, n, dtype):
    v = _uniform(rng, batch + (n, n), dtype) + n * np.eye(n)
    return Arr(v.astype(NP_DTYPE[dtype]), dtype)


def _mat(rng, shape, dtype):
    return Arr(_uniform(rng, shape, dtype).astype(NP_DTYPE[dtype]), dtype)


def _mH(a):
    return a.transpose(-2, -1).conj()


def square_samples(dtype, rng):
    w = lambda b, n: _well_conditioned(rng, b, n, dtype)  # noqa: E731
    return [
        _s([w((), 3)], desc="3x3"),
        _s([w((2,), 2)], desc="batch of 2x2"),
        _s([w((2, 1), 4)], desc="2-d batch of 4x4"),
        _s([w((), 1)], desc="1x1"),
        _s([_mat(rng, (0, 0), dtype)], desc="0x0"),
        _s([_mat(rng, (2, 3), dtype)], desc="not square (error)"),
        _s([_mat(rng, (3,), dtype)], desc="1-d (error)"),
    ]


def logdet_samples(dtype, rng):
    out = square_samples(dtype, rng)
    out.append(_s([Arr(np.array([[0.0, 1.0], [1.0, 0.5]], NP_DTYPE[dtype]), dtype)], desc="negative det"))
    return out


def det_samples(dtype, rng):
    # (slogdet/logdet at singular matrices, -inf: tests/test_shape_ops.py)
    out = logdet_samples(dtype, rng)
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [0.5, 3.0]]])
    out.append(_s([Arr(singular.astype(NP_DTYPE[dtype]), dtype)], desc="batch with a singular matrix"))
    return out


def inverse_samples(dtype, rng):
    out = square_samples(dtype, rng)
    out.append(_s([Arr(np.array([[1.0, 2.0], [2.0, 4.0]], NP_DTYPE[dtype]), dtype)], desc="singular (error)"))
    return out


def solve_samples(dtype, rng):
    w = lambda b, n: _well_conditioned(rng, b, n, dtype)  # noqa: E731
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([w((), 3), m((3, 2))], desc="matrix rhs"),
        _s([w((), 3), m((3,))], desc="vector rhs"),
        _s([w((2,), 3), m((2, 3))], desc="batched vector rhs"),
        _s([w((2,), 3), m((3, 4))], desc="broadcast rhs"),
        _s([w((1,), 2), m((3, 2, 2))], desc="broadcast A"),
        _s([w((), 3), m((2, 3))], {"left": False}, desc="left=False"),
        _s([w((), 3), m((4, 2))], desc="incompatible (error)"),
        _s([Arr(np.zeros((2, 2), NP_DTYPE[dtype]), dtype), m((2,))], desc="singular (error)"),
    ]


def spd_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [_s([m((3, 3))], desc="3x3"), _s([m((2, 4, 4))], desc="batch of 4x4"), _s([m((1, 1))], desc="1x1"),
            _s([m((3, 3))], {"upper": True}, desc="upper")]


def _spd(lib, a):
    n = a.shape[-1]
    # (the identity made from `a`: a global `a` gets a global one, as a user would make it)
    return a @ _mH(a) + n * lib.diag_embed(lib.ones_like(a[..., 0]))


def qr_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((4, 3))], desc="tall"),
        _s([m((3, 5))], desc="wide"),
        _s([m((2, 3, 3))], desc="batched square"),
        _s([m((4, 3))], {"mode": "complete"}, desc="complete, tall"),
        _s([m((2, 4))], {"mode": "complete"}, desc="complete, wide"),
        _s([m((4, 3))], {"mode": "r"}, desc="mode r"),
        _s([m((0, 3))], desc="no rows"),
        _s([m((3, 3))], {"mode": "bogus"}, desc="bad mode (error)"),
    ]


def legacy_qr_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [_s([m((4, 3))], desc="some"), _s([m((2, 4)), False], desc="some=False"), _s([m((2, 3, 3))], desc="batched")]


def _first_row_signs(lib, U):
    """Per column, what makes its first entry real and non-negative: the sign (real) or the
    conjugate phase (complex) of that entry; 1 where it is 0."""
    u = U[..., :1, :]
    if U.dtype.is_complex:
        mag = u.abs()
        return lib.where(mag == 0, lib.ones_like(u), u.conj() / lib.where(mag == 0, lib.ones_like(mag), mag))
    s = lib.sign(u)
    return lib.where(s == 0, lib.ones_like(s), s)


def _svd_canonical(lib):
    def f(A, *args, **kwargs):
        U, S, Vh = lib.linalg.svd(A, *args, **kwargs)
        k = S.shape[-1]
        U, Vh = U[..., :, :k], Vh[..., :k, :]  # the full_matrices complement is not unique
        s = _first_row_signs(lib, U)
        return U * s, S, Vh * _mH(s)
    return f


def _legacy_svd_canonical(lib):
    def f(A, *args, **kwargs):
        U, S, V = lib.svd(A, *args, **kwargs)
        if kwargs.get("compute_uv", True) and (len(args) < 2 or args[1]):
            k = S.shape[-1]
            U, V = U[..., :, :k], V[..., :, :k]
            s = _first_row_signs(lib, U)
            return U * s, S, V * s
        return U, S, V
    return f


def svd_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((4, 3))], {"full_matrices": False}, desc="tall, reduced"),
        _s([m((3, 5))], {"full_matrices": False}, desc="wide, reduced"),
        _s([m((2, 3, 3))], {"full_matrices": False}, desc="batched square"),
        _s([m((4, 2))], desc="tall, full"),
        _s([m((2, 4))], desc="wide, full"),
        _s([m((0, 3))], desc="no rows"),
    ]


def legacy_svd_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((4, 3))], desc="some"),
        _s([m((3, 4)), False], desc="some=False"),
        _s([m((2, 3, 3))], desc="batched"),
        _s([m((3, 2))], {"compute_uv": False}, desc="values only"),
    ]


def svdvals_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [_s([m((4, 3))], desc="tall"), _s([m((2, 3, 5))], desc="batched wide"), _s([m((0, 2))], desc="empty"),
            _s([m((3,))], desc="1-d (error)")]


def _eigh_canonical(lib):
    def f(A, *args, **kwargs):
        L, V = lib.linalg.eigh(A + _mH(A), *args, **kwargs)
        return L, V * _first_row_signs(lib, V)
    return f


def eigh_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((3, 3))], desc="3x3"),
        _s([m((2, 4, 4))], {"UPLO": "U"}, desc="batched, upper"),
        _s([m((1, 1))], desc="1x1"),
        _s([m((0, 0))], desc="0x0"),
        _s([m((3, 3))], {"UPLO": "X"}, desc="bad UPLO (error)"),
    ]


def pinv_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((4, 3))], desc="tall"),
        _s([m((2, 2, 3))], desc="batched wide"),
        _s([Arr(np.array([[1.0, 2.0], [2.0, 4.0]], NP_DTYPE[dtype]), dtype)], desc="rank-deficient"),
        _s([m((3, 3))], {"rtol": 0.3}, desc="rtol"),
        _s([m((3, 3))], {"atol": 0.5}, desc="atol"),
        _s([m((0, 3))], desc="empty"),
    ]


def pinverse_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [_s([m((4, 3))], desc="tall"), _s([m((2, 3, 2)), 0.1], desc="rcond")]


def matrix_rank_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    low = rng.uniform(-1, 1, (4, 2)) @ rng.uniform(-1, 1, (2, 5))
    return [
        _s([m((3, 4))], desc="full rank"),
        _s([Arr(low.astype(NP_DTYPE[dtype]), dtype)], desc="rank 2"),
        _s([m((2, 3, 3))], {"atol": 0.5}, desc="atol"),
        _s([Arr((low @ low.T).astype(NP_DTYPE[dtype]), dtype)], {"hermitian": True}, desc="hermitian"),
        _s([m((0, 3))], desc="empty"),
    ]


def matrix_power_samples(dtype, rng):
    w = lambda b, n: _well_conditioned(rng, b, n, dtype)  # noqa: E731
    small = lambda s: Arr((_uniform(rng, s, dtype) * 0.5).astype(NP_DTYPE[dtype]), dtype)  # noqa: E731
    return [
        _s([small((3, 3)), 3], desc="n=3"),
        _s([small((2, 2, 2)), 0], desc="n=0"),
        _s([small((3, 3)), 1], desc="n=1"),
        _s([small((2, 2)), 6], desc="n=6"),
        _s([w((), 3), -2], desc="n=-2"),
        _s([small((2, 3)), 2], desc="not square (error)"),
    ]


def _sym(lib, a):
    return a + _mH(a)


add(OpInfo("inverse", "linalg", LINALG_DTYPES, inverse_samples, tol=_TOL))
add(OpInfo("det", "linalg", LINALG_DTYPES, det_samples, tol=_TOL))
add(OpInfo("slogdet", "linalg", LINALG_DTYPES, logdet_samples, tol=_TOL))
add(OpInfo("logdet", "linalg", LINALG_DTYPES, logdet_samples, tol=_TOL))
add(OpInfo("linalg_solve", "linalg", LINALG_DTYPES, solve_samples, fn=lambda lib: lib.linalg.solve, method="",
           tol=_TOL))
add(OpInfo("cholesky", "linalg", LINALG_DTYPES, spd_samples, method="", tol=_TOL,
           fn=lambda lib: lambda a, **kw: lib.linalg.cholesky(_spd(lib, a), **kw)))
add(OpInfo("linalg_qr", "linalg", LINALG_DTYPES, qr_samples, fn=lambda lib: lib.linalg.qr, method="", tol=_TOL))
add(OpInfo("qr", "linalg", LINALG_DTYPES, legacy_qr_samples, tol=_TOL))
add(OpInfo("linalg_svd", "linalg", LINALG_DTYPES, svd_samples, fn=_svd_canonical, method="", tol=_TOL))
add(OpInfo("svd", "linalg", LINALG_DTYPES, legacy_svd_samples, fn=_legacy_svd_canonical, method="", tol=_TOL))
add(OpInfo("linalg_svdvals", "linalg", LINALG_DTYPES, svdvals_samples, fn=lambda lib: lib.linalg.svdvals,
           method="", tol=_TOL))
add(OpInfo("linalg_eigh", "linalg", LINALG_DTYPES, eigh_samples, fn=_eigh_canonical, method="", tol=_TOL))
add(OpInfo("linalg_eigvalsh", "linalg", LINALG_DTYPES, eigh_samples, method="", tol=_TOL,
           fn=lambda lib: lambda a, *args, **kw: lib.linalg.eigvalsh(_sym(lib, a), *args, **kw)))
add(OpInfo("linalg_pinv", "linalg", LINALG_DTYPES, pinv_samples, fn=lambda lib: lib.linalg.pinv, method="",
           tol=_TOL))
add(OpInfo("pinverse", "linalg", LINALG_DTYPES, pinverse_samples, tol=_TOL))
add(OpInfo("linalg_matrix_rank", "linalg", LINALG_DTYPES, matrix_rank_samples,
           fn=lambda lib: lib.linalg.matrix_rank, method=""))
add(OpInfo("matrix_power", "linalg", LINALG_DTYPES, matrix_power_samples, tol=_TOL))
# The _ex forms: their infos on singular / indefinite inputs (where the result is LAPACK's
# leftover, not comparable) are tests/test_linalg_ex.py's.
add(OpInfo("linalg_inv_ex", "linalg", LINALG_DTYPES, square_samples, fn=lambda lib: lib.linalg.inv_ex, method="",
           tol=_TOL))
add(OpInfo("linalg_solve_ex", "linalg", LINALG_DTYPES,
           lambda dtype, rng: [s for s in solve_samples(dtype, rng) if "singular" not in s.desc],
           fn=lambda lib: lib.linalg.solve_ex, method="", tol=_TOL))
add(OpInfo("linalg_cholesky_ex", "linalg", LINALG_DTYPES, spd_samples, method="", tol=_TOL,
           fn=lambda lib: lambda a, **kw: lib.linalg.cholesky_ex(_spd(lib, a), **kw)))


# -- references for the gradient tests where torch's own backward has a gap -------------------


def torch_det_by_cofactors(A):
    """det of 2x2 matrices as a polynomial: torch's det backward returns zeros at singular
    matrices, where the gradient (the cofactor matrix) is well defined and nonzero."""
    return A[..., 0, 0] * A[..., 1, 1] - A[..., 0, 1] * A[..., 1, 0]


def torch_pinv_via_svd(A, *, atol=None, rtol=None, hermitian=False):
    """pinv through torch's differentiable SVD. torch's pinv backward assumes the cut-off keeps
    exactly the nonzero singular values; with atol/rtol truncating nonzero ones its gradient is
    not the derivative (finite differences agree with this composition instead)."""
    import torch

    U, S, Vh = torch.linalg.svd(A, full_matrices=False)
    m, n = A.shape[-2], A.shape[-1]
    eps = torch.finfo(A.dtype).eps
    r = rtol if rtol is not None else (0.0 if atol is not None and atol > 0 else eps * max(m, n))
    tol = torch.clamp(S.amax(-1, keepdim=True) * r, min=atol or 0.0)
    keep = S > tol
    inv = torch.where(keep, 1 / torch.where(keep, S, torch.ones_like(S)), torch.zeros_like(S))
    return (Vh.mH * inv.unsqueeze(-2)) @ U.mH


def lstsq_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((5, 3)), m((5, 2))], desc="overdetermined"),
        _s([m((2, 4)), m((2, 3))], desc="underdetermined: minimum norm"),
        _s([m((2, 4, 3)), m((2, 4, 2))], desc="batched"),
        # Whether residuals are reported depends on the rank (values): no meta inference.
        Sample((m((5, 3)), m((5, 2))), {"driver": "gelsd"}, desc="gelsd: residuals and singular values", meta=False),
        Sample((m((5, 3)), m((5, 2))), {"driver": "gels"}, desc="gels", meta=False),
        _s([m((4, 3)), m((4,))], desc="vector rhs"),
        _s([m((4, 3)), m((5, 2))], desc="rows mismatch (error)"),
    ]


def _lstsq_fields(lib):
    def f(*args, **kwargs):
        r = lib.linalg.lstsq(*args, **kwargs)
        return r.solution, r.residuals, r.rank, r.singular_values
    return f


add(OpInfo("linalg_lstsq", "linalg", LINALG_DTYPES, lstsq_samples, fn=_lstsq_fields, method="", tol=_TOL))


def lu_factor_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((3, 3))], desc="square"),
        _s([m((2, 4, 4))], desc="batched square"),
        _s([m((4, 3))], desc="tall"),
        _s([m((3, 5))], desc="wide"),
        _s([m((0, 0))], desc="empty"),
        _s([m((3,))], desc="vector (error)"),
    ]


# The table op linalg_lu_factor through linalg.lu_factor_ex (its Python form: the gradient for
# square matrices is python/oneflow/linalg/_lu.py's Function).
add(OpInfo("linalg_lu_factor", "linalg", LINALG_DTYPES, lu_factor_samples, fn=lambda lib: lib.linalg.lu_factor_ex,
           method="", tol=_TOL))


def eig_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    sym = rng.standard_normal((3, 3))
    return [
        _s([m((4, 4))], desc="square"),
        _s([m((2, 3, 3))], desc="batched"),
        _s([Arr((sym + sym.T).astype(NP_DTYPE[dtype]), dtype)], desc="symmetric: real spectrum"),
        _s([Arr(np.array([[0.0, -1.0], [1.0, 0.0]], dtype=NP_DTYPE[dtype]), dtype)], desc="rotation: conjugate pair"),
        _s([m((0, 0))], desc="empty"),
        _s([m((3, 4))], desc="not square (error)"),
    ]


# linalg_eig through linalg.eigvals: the eigenvectors' phase makes a generic loss on them
# ill-defined (PyTorch's backward refuses it); they and their gradient through phase-free
# functions are compared in tests/test_linalg_complex.py.
add(OpInfo("linalg_eig", "linalg", LINALG_DTYPES, eig_samples, fn=lambda lib: lib.linalg.eigvals, method="",
           tol=_TOL))


# -- Householder reflectors and LDL (src/ops/linalg_householder_ops.cpp, linalg_ldl_ops.cpp) --


def geqrf_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((4, 3))], desc="tall"),
        _s([m((3, 5))], desc="wide"),
        _s([m((2, 3, 3))], desc="batched"),
        _s([m((0, 3))], desc="no rows"),
        _s([m((3,))], desc="1-d (error)"),
    ]


def householder_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((4, 3)), m((3,))], desc="tall, k = n"),
        _s([m((4, 3)), m((2,))], desc="k < n"),
        _s([m((2, 3, 3)), m((2, 2))], desc="batched square"),
        _s([m((3, 2)), m((0,))], desc="no reflectors: identity columns"),
        _s([m((3, 0)), m((0,))], desc="no columns"),
        _s([m((3, 4)), m((2,))], desc="wide (error)"),
        _s([m((4, 2)), m((3,))], desc="more reflectors than columns (error)"),
        _s([m((2, 4, 3)), m((3,))], desc="tau without batch (error)"),
    ]


def ormqr_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((4, 3)), m((3,)), m((4, 2))], desc="left"),
        _s([m((4, 3)), m((3,)), m((4, 2)), True, True], desc="left, transpose"),
        _s([m((4, 3)), m((3,)), m((5, 4))], {"left": False}, desc="right"),
        _s([m((4, 3)), m((3,)), m((5, 4))], {"left": False, "transpose": True}, desc="right, transpose"),
        _s([m((3, 5)), m((3,)), m((3, 2))], desc="wide input"),
        _s([m((2, 4, 3)), m((2, 3)), m((2, 4, 2))], desc="batched"),
        _s([m((4, 3)), m((2,)), m((4, 2))], desc="too few reflectors (error)"),
        _s([m((4, 3)), m((3,)), m((3, 2))], desc="other rows mismatch (error)"),
    ]


add(OpInfo("geqrf", "linalg", LINALG_DTYPES, geqrf_samples, tol=_TOL))
add(OpInfo("linalg_householder_product", "linalg", LINALG_DTYPES, householder_samples,
           fn=lambda lib: lib.linalg.householder_product, method="", tol=_TOL))
add(OpInfo("orgqr", "linalg", LINALG_DTYPES, householder_samples, tol=_TOL))
add(OpInfo("ormqr", "linalg", LINALG_DTYPES, ormqr_samples, tol=_TOL))


def _symmetrised(lib, a, hermitian):
    return a + (_mH(a) if hermitian else a.transpose(-2, -1))


def ldl_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    out = [
        _s([m((3, 3))], desc="3x3"),
        _s([m((2, 4, 4))], desc="batched"),
        _s([m((1, 1))], desc="1x1"),
        _s([m((0, 0))], desc="0x0"),
        _s([m((5, 5))], {"hermitian": True}, desc="hermitian"),
        _s([m((2, 3))], desc="not square (error)"),
    ]
    return out


def ldl_solve_samples(dtype, rng):
    m = lambda s: _mat(rng, s, dtype)  # noqa: E731
    return [
        _s([m((3, 3)), m((3, 2))], desc="3x3"),
        _s([m((2, 4, 4)), m((4, 1))], desc="batch broadcast"),
        _s([m((4, 4)), m((2, 4, 3))], desc="B batched"),
        _s([m((5, 5)), m((5, 2))], {"hermitian": True}, desc="hermitian"),
        _s([m((3, 3)), m((2, 2))], desc="rows mismatch (error)"),
    ]


def _ldl_ex(lib):
    return lambda a, **kw: lib.linalg.ldl_factor_ex(_symmetrised(lib, a, kw.get("hermitian", False)), **kw)


def _ldl(lib):
    return lambda a, **kw: lib.linalg.ldl_factor(_symmetrised(lib, a, kw.get("hermitian", False)), **kw)


def _ldl_solve(lib):
    def f(a, b, **kw):
        LD, piv = lib.linalg.ldl_factor(_symmetrised(lib, a, kw.get("hermitian", False)), **kw)
        return lib.linalg.ldl_solve(LD, piv, b, **kw)
    return f


add(OpInfo("linalg_ldl_factor_ex", "linalg", LINALG_DTYPES, ldl_samples, fn=_ldl_ex, method="", tol=_TOL))
add(OpInfo("linalg_ldl_factor", "linalg", LINALG_DTYPES, ldl_samples, fn=_ldl, method="", tol=_TOL))
add(OpInfo("linalg_ldl_solve", "linalg", LINALG_DTYPES, ldl_solve_samples, fn=_ldl_solve, method="", tol=_TOL))
