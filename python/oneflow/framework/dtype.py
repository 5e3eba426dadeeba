"""oneflow.framework.dtype: upstream's dtype conversions that libraries call by this path
(flowvision's transforms: `flow.framework.dtype.convert_oneflow_dtype_to_numpy_dtype`)."""
import numpy as np

from .. import _oneflow_internal as _C
from .._tensor import _NP_TO_FLOW

# The exact pairs only: _NP_TO_FLOW also widens uint16/uint32, which have no dtype here.
_FLOW_TO_NP = {f: n for n, f in _NP_TO_FLOW.items() if n.itemsize == f.itemsize}


def dtypes():
    """Every dtype of this framework."""
    return [d for d in vars(_C).values() if isinstance(d, _C.dtype)]


def convert_oneflow_dtype_to_numpy_dtype(oneflow_dtype):
    if oneflow_dtype not in _FLOW_TO_NP:
        raise NotImplementedError(f"convert_oneflow_dtype_to_numpy_dtype: {oneflow_dtype} has no numpy dtype")
    return _FLOW_TO_NP[oneflow_dtype].type


def convert_numpy_dtype_to_oneflow_dtype(numpy_dtype):
    key = np.dtype(numpy_dtype)
    if key not in _NP_TO_FLOW or key.itemsize != _NP_TO_FLOW[key].itemsize:
        raise NotImplementedError(f"convert_numpy_dtype_to_oneflow_dtype: numpy {key} has no oneflow dtype")
    return _NP_TO_FLOW[key]


def is_floating_point(input):
    return input.is_floating_point()
