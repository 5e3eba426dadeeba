"""oneflow.linalg: filled from the op table (entries whose `also:` names `linalg.X`)."""

# Raised for a LAPACK / cuSOLVER failure on the input's values (a singular matrix, one that is not
# positive-definite, no convergence); a RuntimeError, as torch.linalg.LinAlgError.
from ._oneflow_internal import _LinAlgError as LinAlgError  # noqa: E402,F401
