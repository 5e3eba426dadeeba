"""OpInfos of the matrix products."""

from .core import *  # noqa: F401,F403

# -- matmul ---------------------------------------------------------------------
_MM_TOL = {"float32": (1e-5, 1e-5)}
add(OpInfo("matmul", "matmul", MATMUL_DTYPES, matmul_samples, operator=operator.matmul, tol=_MM_TOL))
add(OpInfo("mm", "matmul", MATMUL_DTYPES, mm_samples, tol=_MM_TOL))
add(OpInfo("bmm", "matmul", MATMUL_DTYPES, bmm_samples, tol=_MM_TOL))
