"""oneflow.cuda: device queries. This build has no CUDA backend yet."""
from . import _oneflow_internal as _C


def is_available():
    return _C._cuda_available()


def device_count():
    return _C._cuda_device_count()
