"""Norm-derived quantities of oneflow.linalg and the top level outside OneFlow's spec, over the
table's linalg norms and singular values: linalg.cond, frobenius_norm, nuclear_norm (and PyTorch's
removed flow.matrix_rank, raising as there)
(the vector / matrix norm dispatch itself is python/oneflow/_math.py). Tested against PyTorch in
tests/test_torch_linalg_names.py."""
import oneflow as flow

from .._export import export, export_value
from .._argcheck import check_int_list, check_tensor


@export("flow.linalg.cond", out=True)
def cond(A, p=None):
    """The condition number in the p-norm: the ratio of extreme singular values for p None / 2
    / -2, else norm(A, p) * norm(inv(A), p) (inf for a singular matrix, as PyTorch)."""
    check_tensor(A, "linalg_cond", "A", 1)
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        s = flow.linalg.svdvals(A)
        hi, lo = s[..., 0], s[..., -1]
        return hi / lo if p != -2 else lo / hi
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.cond(ord=" + str(p) + "): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    try:
        inv = flow.linalg.inv(A)
    except RuntimeError:
        return flow.full(A.shape[:-2], float("inf"), dtype=A.dtype, device=A.device)
    return flow.linalg.matrix_norm(A, p) * flow.linalg.matrix_norm(inv, p)


@export("flow.frobenius_norm")
def frobenius_norm(input, dim, keepdim=False):
    """The 2-norm of the entries over `dim` (one dim or several, PyTorch's frobenius_norm; a
    real result for complex input)."""
    dims = check_int_list(dim, "frobenius_norm", "dim", 2, one_int=True)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    return flow.linalg.vector_norm(input, 2, dims, keepdim)


@export("flow.matrix_rank")
def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed, as PyTorch's torch.matrix_rank (since 1.9): its RuntimeError names the
    replacement, linalg.matrix_rank (`tol` and `symmetric` are its `tol` / `hermitian`)."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed.\n"
        "Please use the `oneflow.linalg.matrix_rank` function instead. The parameter 'symmetric' "
        "was renamed in `oneflow.linalg.matrix_rank()` to 'hermitian'.")
export_value(lambda A, dim=(-2, -1), keepdim=False: flow.linalg.matrix_norm(
    check_tensor(A, "nuclear_norm", "input"), "nuc", dim, keepdim), "flow.nuclear_norm")
