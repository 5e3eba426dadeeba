"""Products of oneflow.linalg and the top level: einsum's operand forms and tensordot's dims
forms over the table ops einsum / tensordot (src/ops/table/matmul.yaml); linalg.multi_dot (the
optimal multiplication order), chain_matmul, vecdot, linalg.matmul; and the linalg forms of two
matrix-shaped ops, linalg.diagonal and linalg.vander. Tested against PyTorch in
tests/test_torch_linalg_names.py and tests/test_ops_generic.py."""
import builtins
import numbers

import oneflow as flow

from .. import _oneflow_internal as _C
from .._export import export
from .._argcheck import check_tensor, check_tensors

Tensor = _C.Tensor


def _sublist_label(n):
    """One entry of PyTorch's sublist format: 0..25 -> A..Z, 26..51 -> a..z, Ellipsis -> '...'."""
    if n is Ellipsis:
        return "..."
    if 0 <= n < 26:
        return chr(ord("A") + n)
    if 26 <= n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


@export("flow.einsum")
def einsum(*args):
    """flow.einsum("bij,bjk->bik", a, b), flow.einsum(eq, [a, b]), or PyTorch's sublist format
    flow.einsum(a, [0, 1, 2], b, [0, 2, 3], [0, 1, 3]) (an operand, its subscripts, ..., and
    optionally the output's subscripts)."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):  # the sublist format: written as the equation it stands for
        equation = ",".join("".join(_sublist_label(n) for n in sub) for sub in args[1::2])
        if len(args) % 2:
            equation += "->" + "".join(_sublist_label(n) for n in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _C.einsum(equation, list(operands))


@export("flow.tensordot")
def tensordot(a, b, dims=2, out=None):
    """Contracts the last `dims` dims of a with the first of b, or the given dim lists
    (dims=([1, 0], [0, 1]), or a 2-element tensor/list of lists)."""
    check_tensor(a, "tensordot", "a", 1)
    check_tensor(b, "tensordot", "b", 2)
    if out is not None:
        raise TypeError("tensordot(): the out= argument is not supported")
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.numel() == 1 else dims.tolist()
    if isinstance(dims, builtins.int) and not isinstance(dims, builtins.bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > builtins.min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da = list(range(a.ndim - dims, a.ndim))
        db = list(range(dims))
    else:
        if not isinstance(dims, (list, tuple)) or len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be an int or a pair of dim lists")
        da, db = dims
        da = [da] if isinstance(da, builtins.int) else list(da)
        db = [db] if isinstance(db, builtins.int) else list(db)
    return _C.tensordot(a, b, da, db)


@export("flow.linalg.multi_dot", out=True)
def multi_dot(tensors):
    """The product of the chain of matrices (first / last may be 1-D), multiplied in the order
    of fewest scalar multiplications (the classic dynamic programme)."""
    check_tensors(tensors, "linalg_multi_dot", "tensors", 1)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_1d, last_1d = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_1d:
        mats[0] = mats[0].unsqueeze(0)
    if last_1d:
        mats[-1] = mats[-1].unsqueeze(1)
    for k, m in enumerate(mats):
        if m.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {k} must be 2D but got {tensors[k].dim()}D")
    for k in builtins.range(n - 1):
        if mats[k].shape[1] != mats[k + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {k} and {k + 1} with shapes {list(tensors[k].shape)} and "
                               f"{list(tensors[k + 1].shape)} cannot be multiplied")
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    cost = [[0] * n for _ in builtins.range(n)]
    split = [[0] * n for _ in builtins.range(n)]
    for length in builtins.range(1, n):
        for i in builtins.range(n - length):
            j = i + length
            cost[i][j] = None
            for k in builtins.range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return flow.mm(product(i, k), product(k + 1, j))

    out = product(0, n - 1)
    if first_1d:
        out = out.squeeze(0)
    if last_1d:
        out = out.squeeze(-1)
    return out


@export("flow.chain_matmul")
def chain_matmul(*matrices):
    """Deprecated PyTorch name of linalg.multi_dot (2-D matrices)."""
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"chain_matmul(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(m).__name__}")
    if len(matrices) == 1:
        if matrices[0].dim() != 2:  # multi_dot checks the others; one matrix is returned as is
            raise RuntimeError(f"chain_matmul(): Tensor dimension is {matrices[0].dim()}, expected 2 instead.")
        return matrices[0]
    return multi_dot(matrices)


@export("flow.linalg.vecdot", out=True)
def vecdot(x, y, *, dim=-1):
    """sum(conj(x) * y) along dim (broadcast); x and y of one dtype, as PyTorch's (no promotion)."""
    check_tensor(x, "linalg.vecdot", "x", 1)
    check_tensor(y, "linalg.vecdot", "y", 2)
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot(): Expected x and y to have the same dtype, but found x of type "
                           f"{x.dtype.name} and y of type {y.dtype.name} instead")
    return (x.conj() * y).sum(dim) if x.dtype.is_complex else (x * y).sum(dim)


@export("flow.linalg.diagonal")
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the (batched) matrices, dims -2 / -1 by default."""
    check_tensor(A, "linalg_diagonal", "A", 1)
    return A.diagonal(offset, dim1, dim2)


@export("flow.linalg.vander")
def linalg_vander(x, *, N=None):
    """The Vandermonde matrices of x's last dim (batched: (*, n) -> (*, n, N)), columns x^0 ..
    x^(N-1), as PyTorch's (flow.vander is the 1-D, decreasing form). N > 1; integer input gives
    int64; PyTorch reads a 0-d x as one element, so does this."""
    check_tensor(x, "linalg_vander", "x", 1)
    if N is not None and (isinstance(N, bool) or not isinstance(N, numbers.Integral)):
        raise TypeError(f"linalg_vander(): argument 'N' must be int, not {type(N).__name__}")
    refused = {flow.bool: "Bool", flow.float16: "Half", flow.bfloat16: "BFloat16"}.get(x.dtype)
    if refused:  # PyTorch's kernel list
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got {refused}")
    if x.dim() == 0:
        x = x.reshape(1)
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(flow.int64)
    col = x.unsqueeze(-1)
    # x^1 .. x^(N-1) as a running product: differentiable, and exact for integers
    powers = flow.cumprod(col.expand(*x.shape, n - 1), -1)
    return flow.cat([flow.ones_like(col), powers], -1)
@export("flow.linalg.matmul", out=True)
def linalg_matmul(input, other):
    """PyTorch's alias of matmul, without flow.matmul's OneFlow parameters (transpose_a,
    transpose_b, alpha): a third positional argument is a TypeError there."""
    return flow.matmul(input, other)
