"""oneflow.backends.cudnn: cuDNN switches. The CUDA backend runs convolutions on cuDNN when the
build found it (version() is then its version); allow_tf32 lets float32 convolutions use TF32
tensor cores (on by default, as in PyTorch); benchmark times cuDNN's algorithms once per
convolution geometry and keeps the fastest; deterministic keeps only deterministic algorithms
(Note [cuDNN algorithm choice] in src/cuda/cudnn_conv.cpp)."""

import sys
import types

from .. import _oneflow_internal as _C
from ._flags import set_flags

enabled = True
benchmark_limit = 10


def is_available():
    return _C._cuda_available() and version() is not None


def version():
    """The cuDNN version (e.g. 91900), None without cuDNN (as torch)."""
    get = getattr(_C, "_cudnn_version", None)
    v = get() if get is not None else -1
    return v if v >= 0 else None


def _backend_flag(name, default):
    """A switch the CUDA backend reads at each convolution, so assignments must reach it (a plain
    attribute in builds without CUDA)."""

    def get(self):
        fn = getattr(_C, f"_cuda_cudnn_{name}", None)
        return fn() if fn is not None else self.__dict__.get(f"_{name}", default)

    def set_(self, value):
        fn = getattr(_C, f"_cuda_set_cudnn_{name}", None)
        if fn is not None:
            fn(bool(value))
        self.__dict__[f"_{name}"] = bool(value)

    return property(get, set_)


class _CudnnModule(types.ModuleType):
    allow_tf32 = _backend_flag("allow_tf32", True)
    benchmark = _backend_flag("benchmark", False)
    deterministic = _backend_flag("deterministic", False)


sys.modules[__name__].__class__ = _CudnnModule


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    return set_flags(
        sys.modules[__name__],
        enabled=enabled,
        benchmark=benchmark,
        benchmark_limit=benchmark_limit,
        deterministic=deterministic,
        allow_tf32=allow_tf32,
    )
