"""oneflow.utils.dlpack: zero-copy exchange with torch, numpy and any DLPack producer or
consumer (the capsule is made and read in C++: src/api/dlpack_bind.cpp)."""

from .. import _oneflow_internal as _C
from .._export import export_value, ref


def to_dlpack(tensor):
    """A DLPack capsule sharing `tensor`'s memory (consumed once by a from_dlpack)."""
    return _C._to_dlpack(tensor)


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of `ext_tensor`: an object with __dlpack__ (torch, numpy,
    ...) or a DLPack capsule."""
    if hasattr(ext_tensor, "__dlpack__"):
        dev = ext_tensor.__dlpack_device__()
        if int(dev[0]) not in (1, 3):  # kDLCPU, kDLCUDAHost
            raise RuntimeError(
                f"from_dlpack: only CPU tensors can be imported in this build "
                f"(DLPack device {tuple(int(d) for d in dev)})"
            )
        try:
            capsule = ext_tensor.__dlpack__(max_version=(1, 0))
        except TypeError:  # a producer older than DLPack 1.0
            capsule = ext_tensor.__dlpack__()
        return _C._from_dlpack(capsule)
    return _C._from_dlpack(ext_tensor)


export_value(ref("flow.utils.dlpack.to_dlpack"), "flow.to_dlpack")
