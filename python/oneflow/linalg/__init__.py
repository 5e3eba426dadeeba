"""oneflow.linalg: the op table's entries whose `also:` names `linalg.X`, and the Python
definitions of this package, by subject: _products (einsum, tensordot, multi_dot, vecdot, ...),
_solve (solve_triangular, tensorinv / tensorsolve, cholesky_solve / inverse), _eigen (eig,
eigvals, matrix_exp), _norms (norm, vector_norm, matrix_norm, cond, frobenius / nuclear norms),
_tolerance (matrix_rank and pinv under PyTorch's tolerance overloads) and _lu (the LU family).
Their modules are private so that no module name shadows a public one (`linalg.lu`)."""

# Raised for a LAPACK / cuSOLVER failure on the input's values (a singular matrix, one that is not
# positive-definite, no convergence); a RuntimeError, as torch.linalg.LinAlgError.
from .._oneflow_internal import _LinAlgError as LinAlgError  # noqa: F401
from . import _products, _solve, _eigen, _norms, _tolerance, _lu, _lowrank  # noqa: F401
