"""nn.functional.softmax / log_softmax / softmin: the table ops (src/ops/table/softmax.yaml)
under PyTorch's nn.functional signature.

Note [softmax's third positional]: PyTorch's `F.softmax(input, dim=None, _stacklevel=3,
dtype=None)` takes an unused `_stacklevel` third, so `F.softmax(x, 1, 5)` is valid there;
OneFlow's `F.softmax(input, dim=None, dtype=None)` takes the dtype third. Both forms work: a
`flow.dtype` third is OneFlow's dtype, anything else is PyTorch's ignored `_stacklevel`.
`flow.softmax` and `Tensor.softmax` keep the table's signature (PyTorch's dtype is third there).
"""
from .. import _oneflow_internal as _C


def _dtype_of(_stacklevel, dtype):
    if dtype is None and isinstance(_stacklevel, _C.dtype):
        return _stacklevel
    return dtype


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along dim (dim=None: PyTorch's legacy implicit dim), after casting
    to dtype when given."""
    return _C.softmax(input, dim, _dtype_of(_stacklevel, dtype))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along dim in one pass, after casting to dtype when given."""
    return _C.log_softmax(input, dim, _dtype_of(_stacklevel, dtype))


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along dim, after casting to dtype when given."""
    return _C.softmin(input, dim, _dtype_of(_stacklevel, dtype))
