"""oneflow: a OneFlow-compatible deep-learning framework with a C++ core.

The extension module `_oneflow_internal` (also `flow._C`) holds the core and every op declared in
the op table (src/ops/table/); this package adds the thin Python layer: exposure of the op table as flow.X /
Tensor.X / flow.nn.functional.X, tensor construction from Python data, printing and indexing.
"""
from . import _oneflow_internal as _C
from ._oneflow_internal import (  # noqa: F401
    Tensor, device, dtype, from_numpy, get_default_dtype, set_default_dtype, manual_seed,
    initial_seed, set_num_threads, get_num_threads, promote_types,
    bool, int8, uint8, int32, int64, float16, bfloat16, float32, float64,
)
from ._size import Size  # noqa: F401

# Aliases used by OneFlow and PyTorch code.
half = float16
float = float32  # noqa: A001
double = float64
int = int32  # noqa: A001
long = int64
char = int8

from . import _tensor  # noqa: E402,F401  (adds the Python-level Tensor methods)
from ._tensor import (  # noqa: E402,F401
    tensor, as_tensor, is_tensor, is_floating_point, numel, seed, set_printoptions,
)
from . import cuda  # noqa: E402,F401
from . import autograd  # noqa: E402,F401
from ._grad_mode import (  # noqa: E402,F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
)
from . import nn  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from ._oneflow_internal import return_types  # noqa: E402,F401


def _expose_op_table():
    """flow.X, Tensor.X (generated in C++), flow.nn.functional.X and the further names an op's
    `also:` lists (flow.linalg.X, ...) from the op table."""
    import importlib

    g = globals()
    for name, flow, method, functional, inplace, aliases, also in _C._op_table():
        fn = getattr(_C, name, None)
        if fn is None:
            continue
        if flow:
            g[name] = fn
            for a in aliases:
                g[a] = fn
        if functional:
            setattr(nn.functional, name, fn)
            if inplace:
                setattr(nn.functional, name + "_", getattr(_C, name + "_"))
        for dotted in also:
            mod, _, attr = dotted.rpartition(".")
            setattr(importlib.import_module(f"{__name__}.{mod}"), attr, fn)
        if method:
            for a in aliases:
                if hasattr(Tensor, name):
                    setattr(Tensor, a, getattr(Tensor, name))
                if inplace and hasattr(Tensor, name + "_"):
                    setattr(Tensor, a + "_", getattr(Tensor, name + "_"))


_expose_op_table()
del _expose_op_table
__version__ = "0.1.0"


def randint(*args, **kwargs):
    """randint(high, size) or randint(low, high, size), like PyTorch."""
    if len(args) == 2 and "size" not in kwargs:
        args = (0,) + args
    elif len(args) == 1 and "size" in kwargs and "high" not in kwargs:
        args = (0,) + args
    return _C.randint(*args, **kwargs)
from . import _activation  # noqa: E402,F401  (nn.functional activations' inplace=)
from . import _loss  # noqa: E402,F401  (nn.functional losses' legacy arguments)
from . import _embedding  # noqa: E402,F401  (nn.functional.embedding's argument handling)
from . import _dropout  # noqa: E402,F401  (nn.functional dropouts' training=/inplace=)
from . import _resample  # noqa: E402,F401  (nn.functional.interpolate's size/scale handling)
