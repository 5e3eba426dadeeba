"""Python glue of the matmul/linalg families: einsum's operand forms and tensordot's dims forms,
over the table ops einsum / tensordot (src/ops/table/matmul.yaml)."""
import builtins

from . import _oneflow_internal as _C
from ._export import export
from ._argcheck import check_tensor

Tensor = _C.Tensor


@export("flow.einsum")
def einsum(equation, *operands):
    """flow.einsum("bij,bjk->bik", a, b) or flow.einsum(eq, [a, b])."""
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


