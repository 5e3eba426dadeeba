"""``import oneflow.compatible.single_client as flow``: the job-function API with its legacy op
signatures always in place (``flow.gather(params, indices, axis=)``, ``flow.matmul(a, b,
transpose_b=True)``...; python/oneflow/_legacy/ops.py), everything else as ``import oneflow``."""
import oneflow as _flow
from oneflow._legacy import ops as _ops

from . import typing  # noqa: F401


def __getattr__(name):
    if name in _ops.LEGACY:
        return _ops.LEGACY[name]
    return getattr(_flow, name)


def __dir__():
    return sorted(set(dir(_flow)) | set(_ops.LEGACY))
