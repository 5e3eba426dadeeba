"""oneflow: a OneFlow-compatible deep-learning framework with a C++ core.

The extension module `_oneflow_internal` (also `flow._C`) holds the core and every op declared in
the op table (src/ops/table/); this package adds the thin Python layer: tensor construction from
Python data, printing, indexing, nn, optim, ... The public names are put in place by the export
registry at the end of this file (docs/architecture.md §6): the modules imported here only define
things and record where they are exposed, so the order of these imports does not matter.
"""
from . import _oneflow_internal as _C
from ._oneflow_internal import (  # noqa: F401
    Tensor, device, dtype, from_numpy, get_default_dtype, set_default_dtype,
    set_num_threads, get_num_threads, promote_types,
    bool, int8, uint8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128,
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
short = int16

from . import _tensor  # noqa: E402,F401  (the Python-level Tensor methods)
from . import cuda  # noqa: E402,F401
from . import autograd  # noqa: E402,F401
from . import _grad_mode  # noqa: E402,F401  (no_grad, enable_grad, set_grad_enabled, inference_mode)
from . import nn  # noqa: E402,F401
from . import linalg  # noqa: E402,F401  (and its Python definitions: einsum, tensordot, multi_dot, lu, eig, cond, ...)
from . import special  # noqa: E402,F401  (and its Python definitions: the orthogonal polynomials)
from . import fft  # noqa: E402,F401
from ._oneflow_internal import return_types  # noqa: E402,F401
from . import _index  # noqa: E402,F401  (overloaded call forms of table ops)
from . import _math  # noqa: E402,F401  (allclose/equal, isin, trapezoid, gradient, ...)
from . import _shape  # noqa: E402,F401  (shape-op glue: meshgrid, tensor_split, slice, ...)
from . import _complex  # noqa: E402,F401  (is_conj, resolve_conj: conj is eager)
from . import _spectral  # noqa: E402,F401  (windows, stft, istft)
from .version import __version__  # noqa: E402

from . import _random  # noqa: E402,F401  (seeding, the randint / random_ overloads)
from . import random  # noqa: E402,F401
from . import _types  # noqa: E402,F401  (finfo / iinfo, result_type, tensor types, layout)
from . import amp, backends, cpu, func, utils  # noqa: E402,F401
from .utils.dlpack import from_dlpack  # noqa: E402,F401
from . import distributions, mock_torch  # noqa: E402,F401
from . import optim  # noqa: E402,F401  (training: optimizers, LR schedulers)
from .framework.serialization import load, save  # noqa: E402,F401
from . import hub  # noqa: E402,F401  (models from a hubconf.py repository, load_state_dict_from_url)
from . import one_embedding  # noqa: E402,F401  (OneFlow's embedding tables for recommender models)
from . import _activation  # noqa: E402,F401  (nn.functional activations' inplace=)
from . import _loss  # noqa: E402,F401  (nn.functional losses' legacy arguments)
from . import _embedding  # noqa: E402,F401  (nn.functional.embedding's argument handling)
from . import _creation  # noqa: E402,F401  (tril_indices, logspace, range, frombuffer, asarray, ...)
from . import _stats  # noqa: E402,F401  (var / std, cov, quantile, histogram, histogramdd)
from . import sbp  # noqa: E402,F401  (global tensors: split / broadcast / partial_sum)
from ._global import placement  # noqa: E402,F401  (global tensors: docs/global_tensors.md)
from . import _nn_ops  # noqa: E402,F401  (torch.batch_norm / native_* ATen forms, convolution, lstm_cell, ...)
from . import _control_flow  # noqa: E402,F401  (cond, while_loop)
from . import jit  # noqa: E402,F401  (torch.jit's decorators: eager)
from . import _runtime  # noqa: E402,F401  (pi / inf ..., has_*, determinism / threads / matmul precision switches)
from . import accelerator, version  # noqa: E402,F401  (torch.accelerator, torch.version)
from . import profiler  # noqa: E402,F401  (op times: profile, record_function)
from .autograd import profiler as _autograd_profiler  # noqa: E402,F401  (flow.autograd.profiler: the legacy form)
from .nn import parallel as _nn_parallel  # noqa: E402,F401  (flow.nn.parallel: DistributedDataParallel, above nn)
from . import signal  # noqa: E402,F401  (torch.signal.windows)
from . import distributed, env, comm  # noqa: E402,F401  (process groups on Gloo; OneFlow's env / comm names)
from . import futures  # noqa: E402,F401  (torch.futures.Future)
from . import func  # noqa: E402,F401  (torch.func: vmap, grad, jacrev, ...)
from . import testing  # noqa: E402,F401  (torch.testing: assert_close, make_tensor)
from . import _storage  # noqa: E402,F401  (storages, share_memory_)
from . import multiprocessing  # noqa: E402,F401  (torch.multiprocessing: spawn, sharing strategies)
from .func import vmap  # noqa: E402,F401
from . import _dropout  # noqa: E402,F401  (nn.functional dropouts' training=/inplace=)
from . import _resample  # noqa: E402,F401  (nn.functional.interpolate's size/scale handling)
from .nn.utils.weight_norm import _weight_norm, norm_except_dim  # noqa: E402,F401
from . import _pickle_ops  # noqa: E402,F401  (deepcopy / pickle of op-table functions)
from . import _legacy  # noqa: E402,F401  (job functions, spec 003)
from ._export import export_value as _export_value, ref as _ref  # noqa: E402


def _not_global(name):
    def f(self, *args, **kwargs):
        # (upstream's text in brackets: code written for it matches on it)
        raise RuntimeError(f"{name}: this is a local tensor; only a global tensor (.to_global(placement, sbp)) has it "
                           f"(Expected global tensor for {name} but got local tensor!)")
    return f


# A plain Tensor is a local one; the global forms are in _global (docs/global_tensors.md).
_export_value(_ref("flow._global.tensor_to_global"), "Tensor.to_global", "Tensor.to_consistent",
              "Tensor.local_to_global")
_export_value(_not_global("global_to_global"), "Tensor.global_to_global")
_export_value(_not_global("to_local"), "Tensor.to_local")
_export_value(property(lambda self: False), "Tensor.is_global", "Tensor.is_consistent")
_export_value(property(lambda self: True), "Tensor.is_local")
_export_value(property(_not_global("placement")), "Tensor.placement")
_export_value(property(_not_global("sbp")), "Tensor.sbp")
# Upstream OneFlow's module tree (issue 37): each name defined in its own module at upstream's path.
from . import ao  # noqa: E402,F401  (oneflow.ao.quantization: PyTorch-style eager QAT)
from . import framework, unittest, boxing  # noqa: E402,F401  (framework.tensor / dtype / args_tree; skip_unless_*; boxing.nccl.*)
from . import sysconfig  # noqa: E402,F401  (with_cuda / get_cuda_version ...; _oneflow_internal.flags)
from . import asyncs  # noqa: E402,F401  (asyncs.thread; _oneflow_internal.eager.Sync / AsyncThread)
from .utils import global_view as _global_view  # noqa: E402,F401  (flow.utils.global_view, flow.to_global / to_local)
from . import _export  # noqa: E402
from ._global import routes as _global_routes  # noqa: E402  (GlobalTensor's routes; Module.to_global: parameter.py)

# The public surface: the op table's names and every @export of the modules imported above
# (docs/architecture.md §6). Nothing before this line sets a name on another module or on Tensor,
# so the order of the imports above does not matter.
_export.apply()
_global_routes.install_routes(Tensor)  # GlobalTensor mirrors the finished Tensor (Note [A global tensor is a Tensor])
del _export, _global_routes, _export_value, _ref, _not_global, _autograd_profiler, _nn_parallel
