"""nn.functional.interpolate / upsample / upsample_nearest / upsample_bilinear: PyTorch's Python
argument handling (an int size or float scale_factor stands for every spatial dim) over the op
table's interpolate (src/ops/table/resample.yaml), which validates and computes everything else."""
import numbers
import warnings

from . import _oneflow_internal as _C
from ._export import export
from ._argcheck import check_tensor


def _per_dim(v, dims, cast):
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return [cast(x) for x in v]
    if isinstance(v, _C.Tensor):
        v = v.item()
    if not isinstance(v, numbers.Number):
        raise TypeError(f"expected an int, float or a sequence of them, got {type(v).__name__}")
    return [cast(v)] * max(dims, 0)


@export("flow.nn.functional.interpolate")
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    check_tensor(input, "interpolate", "input", 1)
    # PyTorch checks these before it reads size / scale_factor (the op checks them again for
    # flow._C.interpolate's callers)
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate(): only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("interpolate(): either size or scale_factor should be defined")
    dims = input.dim() - 2
    return _C.interpolate(input, _per_dim(size, dims, int), _per_dim(scale_factor, dims, float), mode,
                          align_corners, recompute_scale_factor, antialias)


@export("flow.nn.functional.upsample")
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


@export("flow.nn.functional.upsample_nearest")
def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


@export("flow.nn.functional.upsample_bilinear")
def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
