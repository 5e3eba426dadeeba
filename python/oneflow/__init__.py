"""oneflow: a OneFlow-compatible deep-learning framework with a C++ core.

The extension module `_oneflow_internal` (also `flow._C`) holds the core and every op declared in
the op table (src/ops/table/); this package adds the thin Python layer: exposure of the op table as flow.X /
Tensor.X / flow.nn.functional.X, tensor construction from Python data, printing and indexing.
"""
from . import _oneflow_internal as _C
from ._oneflow_internal import (  # noqa: F401
    Tensor, device, dtype, from_numpy, get_default_dtype, set_default_dtype,
    set_num_threads, get_num_threads, promote_types,
    bool, int8, uint8, int32, int64, float16, bfloat16, float32, float64, complex64, complex128,
)
from ._size import Size  # noqa: F401

# Aliases used by OneFlow and PyTorch code.
half = float16
float = float32  # noqa: A001
double = float64
cfloat = complex64
cdouble = complex128
int = int32  # noqa: A001
long = int64
char = int8

from . import _tensor  # noqa: E402,F401  (adds the Python-level Tensor methods)
from ._tensor import (  # noqa: E402,F401
    tensor, as_tensor, is_tensor, is_floating_point, is_complex, numel, set_printoptions,
)
from . import cuda  # noqa: E402,F401
from . import autograd  # noqa: E402,F401
from ._grad_mode import (  # noqa: E402,F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled, is_inference_mode_enabled,
)
from . import nn  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import special  # noqa: E402,F401
from . import fft  # noqa: E402,F401
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
            if mod:
                setattr(importlib.import_module(f"{__name__}.{mod}"), attr, fn)
            else:  # a further top-level name (flow._standard_gamma)
                g[attr] = fn
        if method:
            for a in aliases:
                if hasattr(Tensor, name):
                    setattr(Tensor, a, getattr(Tensor, name))
                if inplace and hasattr(Tensor, name + "_"):
                    setattr(Tensor, a + "_", getattr(Tensor, name + "_"))


_expose_op_table()
del _expose_op_table
from ._index import (  # noqa: E402,F401  (overloaded call forms of table ops)
    where, nonzero, gather, median, nanmedian, unique, unique_consecutive,
)
from . import _math  # noqa: E402,F401  (norm dispatch, allclose/equal, var(x, unbiased))
from ._shape import *  # noqa: E402,F401,F403  (shape-op glue: meshgrid, tensor_split, slice, ...)
from ._linalg import *  # noqa: E402,F401,F403  (einsum and tensordot argument forms)
from ._complex import *  # noqa: E402,F401,F403  (is_conj, resolve_conj: conj is eager)
from ._spectral import *  # noqa: E402,F401,F403  (windows, stft, istft)
from .version import __version__  # noqa: E402

from ._random import (  # noqa: E402,F401
    Generator, default_generator, manual_seed, initial_seed, seed, get_rng_state, set_rng_state,
    randint, randint_like,
)
from . import random  # noqa: E402,F401
from ._compat import (  # noqa: E402,F401
    finfo, iinfo, set_default_tensor_type, use_deterministic_algorithms,
    are_deterministic_algorithms_enabled, is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode, get_deterministic_debug_mode, get_num_interop_threads,
    set_num_interop_threads, is_nonzero,
    memory_format, contiguous_format, preserve_format, channels_last, channels_last_3d, clone,
)
from ._compat import TENSOR_TYPES as _TENSOR_TYPES  # noqa: E402
globals().update(_TENSOR_TYPES)  # flow.FloatTensor, flow.LongTensor, ...
from . import amp, backends, cpu, func, utils  # noqa: E402,F401
from .amp import autocast, is_autocast_available  # noqa: E402,F401
from .amp.autocast_mode import (  # noqa: E402,F401
    get_autocast_dtype, is_autocast_enabled, set_autocast_dtype, set_autocast_enabled,
    is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype,
    set_autocast_cpu_dtype, get_autocast_gpu_dtype, set_autocast_gpu_dtype,
    is_autocast_cache_enabled, set_autocast_cache_enabled, clear_autocast_cache,
)
from .utils.dlpack import from_dlpack  # noqa: E402,F401
from . import distributions, mock_torch  # noqa: E402,F401
from . import optim  # noqa: E402,F401  (training: optimizers, LR schedulers)
from ._serialization import load, save  # noqa: E402,F401
from . import hub  # noqa: E402,F401  (models from a hubconf.py repository, load_state_dict_from_url)
from . import _activation  # noqa: E402,F401  (nn.functional activations' inplace=)
from . import _loss  # noqa: E402,F401  (nn.functional losses' legacy arguments)
from . import _embedding  # noqa: E402,F401  (nn.functional.embedding's argument handling)
from . import _compat_math  # noqa: E402,F401  (isin, quantile, cov, histogram, trapezoid, ...)
from . import _compat_linalg  # noqa: E402,F401  (linalg.multi_dot, matrix_exp, cond, eig, ...)
from . import _compat_tensor  # noqa: E402,F401  (fill_diagonal_, resize_, put_, index_reduce_, new, ...)
from . import _torch_compat_ops  # noqa: E402,F401  (result_type, compile, top-level aliases)
from . import _special_polys  # noqa: E402,F401  (special: Chebyshev, Hermite, Laguerre, Legendre polynomials)
from . import _linalg_lu  # noqa: E402,F401  (linalg.lu_factor, lu, lu_solve, lu_unpack)
from . import sbp  # noqa: E402,F401  (global tensors: split / broadcast / partial_sum)
from ._global import placement  # noqa: E402,F401  (global tensors: docs/global_tensors.md)
from ._global import module_to_global as _module_to_global, tensor_to_global as _to_global  # noqa: E402


def _not_global(name):
    def f(self, *args, **kwargs):
        raise RuntimeError(f"{name}: this is a local tensor; only a global tensor (.to_global(placement, sbp)) has it")
    return f


Tensor.to_global = Tensor.to_consistent = _to_global
nn.Module.to_global = nn.Module.to_consistent = _module_to_global
Tensor.local_to_global = _to_global
Tensor.global_to_global = _not_global("global_to_global")
Tensor.to_local = _not_global("to_local")
Tensor.is_global = Tensor.is_consistent = property(lambda self: False)
Tensor.is_local = property(lambda self: True)
Tensor.placement = property(_not_global("placement"))
Tensor.sbp = property(_not_global("sbp"))
from . import _compat_numeric  # noqa: E402,F401  (gradient, frexp, histogramdd)
from . import _compat_native  # noqa: E402,F401  (batch_norm / native_* ATen forms, range, svd_lowrank, ...)
from . import jit  # noqa: E402,F401  (torch.jit's decorators: eager)
from . import _compat_runtime  # noqa: E402,F401  (pi / inf ..., has_*, convolution, lstm_cell, ...)
from . import accelerator, version  # noqa: E402,F401  (torch.accelerator, torch.version)
from . import profiler  # noqa: E402,F401  (op times: profile, record_function)
from . import signal  # noqa: E402,F401  (torch.signal.windows)
from . import distributed, env, comm  # noqa: E402,F401  (process groups on Gloo; OneFlow's env / comm names)
from . import futures  # noqa: E402,F401  (torch.futures.Future)
from . import func  # noqa: E402,F401  (torch.func: vmap, grad, jacrev, ...)
from . import testing  # noqa: E402,F401  (torch.testing: assert_close, make_tensor)
from . import _compat_storage  # noqa: E402,F401  (storages, share_memory_, is_sparse & co, `in`)
from . import multiprocessing  # noqa: E402,F401  (torch.multiprocessing: spawn, sharing strategies)
from .func import vmap  # noqa: E402,F401
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled  # noqa: E402,F401
from . import _dropout  # noqa: E402,F401  (nn.functional dropouts' training=/inplace=)
from . import _resample  # noqa: E402,F401  (nn.functional.interpolate's size/scale handling)
from .nn.utils.weight_norm import _weight_norm, norm_except_dim  # noqa: E402,F401
from . import _pickle_ops  # noqa: E402,F401  (deepcopy / pickle of op-table functions)
from . import _legacy as _legacy_api  # noqa: E402  (job functions, spec 003)
_legacy_api.install(__import__(__name__))
from . import _out  # noqa: E402  (out= of the Python-level functions)
_out.install(__import__(__name__))
from ._global.tensor import install_routes as _install_global_routes  # noqa: E402
_install_global_routes()  # (last: after every Python method of Tensor; Note [A global tensor is a Tensor])
from . import ao  # noqa: E402,F401  (oneflow.ao.quantization: PyTorch-style eager QAT)
