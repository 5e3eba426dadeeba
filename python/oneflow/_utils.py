"""Upstream OneFlow's `oneflow._utils` (PyTorch's `torch._utils`): the flat-buffer helpers that
gradient bucketing code imports."""
from . import _oneflow_internal as _C


def _flatten_dense_tensors(tensors):
    """The tensors' values, each flattened, concatenated into one 1-d tensor (one tensor: its
    flattened view, as PyTorch's)."""
    if len(tensors) == 1:
        return _C.reshape(tensors[0].contiguous(), [-1])
    return _C.cat([_C.reshape(t.contiguous(), [-1]) for t in tensors], 0)


def _unflatten_dense_tensors(flat, tensors):
    """Views of `flat` shaped as `tensors` (consecutive, in order): the inverse of
    _flatten_dense_tensors."""
    outputs = []
    offset = 0
    for t in tensors:
        n = t.numel()
        outputs.append(flat.narrow(0, offset, n).view_as(t))
        offset += n
    return tuple(outputs)
