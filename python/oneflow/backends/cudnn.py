"""oneflow.backends.cudnn: cuDNN switches (no cuDNN in this build: is_available() is False)."""

import sys

from .. import _oneflow_internal as _C
from ._flags import set_flags

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    return _C._cuda_available()


def version():
    """The cuDNN version, None without cuDNN (as torch)."""
    return None


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    return set_flags(
        sys.modules[__name__],
        enabled=enabled,
        benchmark=benchmark,
        benchmark_limit=benchmark_limit,
        deterministic=deterministic,
        allow_tf32=allow_tf32,
    )
