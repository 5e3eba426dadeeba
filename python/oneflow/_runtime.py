"""The process's runtime, as torch.* names it: the math constants (e, pi, inf, nan, newaxis),
the build flags (has_lapack, has_openmp, ...), get_device_module, the determinism, inter-op
thread and float32 matmul precision switches, set_warn_always, the default device, and compile
(returns the model: eager). Tested against PyTorch in tests/test_compat_runtime.py and
tests/test_torch_names.py."""
import builtins
import math

import oneflow as flow  # the assembled namespace, looked up at call time

from . import _oneflow_internal as _C
from ._argcheck import check_bool
from ._export import export, export_value


@export("flow.get_device_module")
def get_device_module(device=None):
    """oneflow.cuda or oneflow.cpu for a device (or its type string); the default device's
    module without an argument."""
    if device is None:
        device = flow.get_default_device()
    kind = device if isinstance(device, str) else flow.device(device).type
    kind = kind.split(":")[0]
    if kind == "cuda":
        return flow.cuda
    if kind == "cpu":
        return flow.cpu
    raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as 'oneflow.{kind}'.")


export_value(math.e, "flow.e")
export_value(math.pi, "flow.pi")
export_value(math.inf, "flow.inf")
export_value(math.nan, "flow.nan")
export_value(None, "flow.newaxis")
# Build facts PyTorch code checks: LAPACK (OpenBLAS's), OpenMP and the FFTs are in; no MKL.
export_value(True, "flow.has_lapack")
export_value(True, "flow.has_openmp")
export_value(True, "flow.has_spectral")
export_value(False, "flow.has_mkl")
export_value(lambda: True, "flow.compiled_with_cxx11_abi")
_deterministic = {"mode": False, "warn_only": False}


@export("flow.use_deterministic_algorithms")
def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded for scripts that query it: every CPU kernel here is deterministic already (the
    random ops are counter-based, so they do not depend on the thread count either)."""
    if not isinstance(mode, builtins.bool):
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'mode' must be bool, not "
            f"{type(mode).__name__}"
        )
    _deterministic["mode"] = mode
    _deterministic["warn_only"] = builtins.bool(warn_only)


@export("flow.are_deterministic_algorithms_enabled")
def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


@export("flow.is_deterministic_algorithms_warn_only_enabled")
def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


@export("flow.set_deterministic_debug_mode")
def set_deterministic_debug_mode(debug_mode):
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, "
                f"`error`, but got {debug_mode}"
            )
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


@export("flow.get_deterministic_debug_mode")
def get_deterministic_debug_mode():
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


_interop_threads = {"n": None}


@export("flow.get_num_interop_threads")
def get_num_interop_threads():
    """Ops run on the calling thread (docs/architecture.md §3): there is no inter-op pool; this reports the
    value set (default: the intra-op thread count, as PyTorch's default)."""
    return _interop_threads["n"] or _C.get_num_threads()


@export("flow.set_num_interop_threads")
def set_num_interop_threads(n):
    if not isinstance(n, builtins.int) or n <= 0:
        raise RuntimeError("Expected positive number of threads")
    _interop_threads["n"] = n


_MATMUL_PRECISION = ["highest"]


@export("flow.set_float32_matmul_precision")
def set_float32_matmul_precision(precision):
    """'highest' (float32 matmuls in full precision), 'high' or 'medium' (TF32 allowed on CUDA):
    flow.backends.cuda.matmul.allow_tf32 follows it, as in PyTorch."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision!r}; expected 'highest', 'high' or 'medium'")
    _MATMUL_PRECISION[0] = precision
    flow.backends.cuda.matmul.allow_tf32 = precision != "highest"


@export("flow.get_float32_matmul_precision")
def get_float32_matmul_precision():
    return _MATMUL_PRECISION[0]


@export("flow.compile")
def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile's signature: returns the model (or function) itself, which runs eagerly
    (the same results; oneflow's graph compilation is nn.Graph). Usable as a decorator."""
    if model is None:
        return lambda m: m
    return model


_WARN_ALWAYS = [False]


@export("flow.set_warn_always")
def set_warn_always(b):
    _WARN_ALWAYS[0] = check_bool(b, "set_warn_always", "b")


@export("flow.is_warn_always_enabled")
def is_warn_always_enabled():
    return _WARN_ALWAYS[0]


@export("flow.set_default_device")
def set_default_device(device):
    """The device factories (zeros, rand, arange, flow.tensor, module parameters, ...) use when
    none is named; None restores cpu. `with flow.device(...)` sets it for a block."""
    _C._set_default_device(flow.device("cpu" if device is None else device))


export_value(_C._get_default_device, "flow.get_default_device")
