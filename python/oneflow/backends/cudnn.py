"""oneflow.backends.cudnn: cuDNN switches. The CUDA backend runs convolutions on cuDNN when the
build found it (version() is then its version); allow_tf32 lets float32 convolutions use TF32
tensor cores (on by default, as in PyTorch)."""

import sys
import types

from .. import _oneflow_internal as _C
from ._flags import set_flags

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False


def is_available():
    return _C._cuda_available() and version() is not None


def version():
    """The cuDNN version (e.g. 91900), None without cuDNN (as torch)."""
    get = getattr(_C, "_cudnn_version", None)
    v = get() if get is not None else -1
    return v if v >= 0 else None


class _CudnnModule(types.ModuleType):
    # allow_tf32 is read by the backend at each convolution, so assignments must reach it.
    @property
    def allow_tf32(self):
        get = getattr(_C, "_cuda_cudnn_allow_tf32", None)
        return get() if get is not None else self.__dict__.get("_allow_tf32", True)

    @allow_tf32.setter
    def allow_tf32(self, value):
        set_ = getattr(_C, "_cuda_set_cudnn_allow_tf32", None)
        if set_ is not None:
            set_(bool(value))
        self.__dict__["_allow_tf32"] = bool(value)


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
