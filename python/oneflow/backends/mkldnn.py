"""oneflow.backends.mkldnn: oneDNN switches. The CPU kernels here use OpenBLAS, not oneDNN."""

import sys

from ._flags import set_flags

enabled = True
deterministic = False


def is_available():
    return False


def flags(enabled=False, deterministic=False):
    return set_flags(sys.modules[__name__], enabled=enabled, deterministic=deterministic)
