"""flow.testing.make_tensor: PyTorch's torch.testing.make_tensor (random test inputs)."""

import math
import operator
import warnings
from collections import abc

import oneflow as flow

__all__ = ["make_tensor"]

_INT_NAMES = ("uint8", "int8", "int16", "int32", "int64")
_FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
_COMPLEX_PARTS = {"complex64": "float32", "complex128": "float64"}


def _category(dtype):
    name = getattr(dtype, "name", None) if isinstance(dtype, flow.dtype) else None
    if name == "bool":
        return "bool"
    if name in _INT_NAMES:
        return "int"
    if name in _FLOAT_NAMES:
        return "float"
    if name in _COMPLEX_PARTS:
        return "complex"
    raise TypeError(f"The requested dtype '{dtype}' is not supported by oneflow.testing.make_tensor().")


def _parse_shape(shape):
    # make_tensor(2, 3) and make_tensor((2, 3)) (or a list / flow.Size) are the same request.
    if len(shape) == 1 and isinstance(shape[0], abc.Sequence):
        shape = tuple(shape[0])
    dims = []
    for i, d in enumerate(shape):
        if isinstance(d, bool):  # an int to Python, but never a size
            raise TypeError(f"make_tensor(): the size must be a tuple of ints, but got {type(d).__name__} at pos {i}")
        try:
            dims.append(operator.index(d))
        except TypeError:
            raise TypeError(
                f"make_tensor(): the size must be a tuple of ints, but got {type(d).__name__} at pos {i}"
            ) from None
    negative = [d for d in dims if d < 0]
    if negative:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {dims}")
    return tuple(dims)


def _bounds(dtype, category):
    """(default low, default high, lowest allowed, highest allowed (exclusive))."""
    if category == "bool":
        return 0, 2, 0, 2
    if category == "int":
        info = flow.iinfo(dtype)
        return (0 if dtype.name == "uint8" else -9), 10, info.min, info.max + 1
    part = getattr(flow, _COMPLEX_PARTS.get(dtype.name, dtype.name))
    info = flow.finfo(part)
    return -9, 9, info.min, info.max


def _resolve_range(low, high, dtype, category):
    default_low, default_high, lowest, highest = _bounds(dtype, category)
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, flow.Tensor) for v in (low, high)):
        low, high = (v.item() if isinstance(v, flow.Tensor) else v for v in (low, high))
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    exact = category in ("bool", "int")
    if low == high and not exact:
        warnings.warn(
            "Passing `low==high` to `oneflow.testing.make_tensor` for floating or complex types is "
            "deprecated (as in PyTorch since 2.1): use `oneflow.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    # An interval that misses the dtype's range entirely is an error; one that overlaps it is
    # clamped to it (PyTorch's rule).
    if high <= lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
            f"supports [{lowest}, {highest})"
        )
    low, high = max(low, lowest), min(high, highest)
    if exact:
        # Integer draws take integer bounds: both are rounded up (so [3.5, 4.5) draws 4).
        low, high = math.ceil(low), math.ceil(high)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return low, high


def _uniform(shape, dtype, device, low, high):
    if low == high:
        return flow.full(shape, low, dtype=dtype, device=device)
    t = flow.empty(shape, dtype=dtype, device=device)
    if high - low >= flow.finfo(dtype).max:
        # The width of the interval overflows the dtype (e.g. [finfo.min, finfo.max]): draw
        # from the half-width interval and double, which is exact in binary floating point.
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def _draw(shape, dtype, device, low, high, category):
    if category == "bool":
        return flow.randint(low, high, shape, dtype=flow.bool, device=device)
    if category == "int":
        # randint takes an int64 `high`, so int64's exclusive 2**63 becomes 2**63 - 1 (the
        # largest int64 can then not be drawn; PyTorch can draw it).
        return flow.randint(low, min(high, 2**63 - 1), shape, dtype=dtype, device=device)
    if category == "float":
        return _uniform(shape, dtype, device, low, high)
    part = getattr(flow, _COMPLEX_PARTS[dtype.name])
    real = _uniform(shape, part, device, low, high)
    imag = _uniform(shape, part, device, low, high)
    return flow.complex(real, imag)


def _replace_zeros(t, category, dtype):
    if category in ("bool", "int"):
        value = 1 if category == "int" else True
    elif category == "float":
        value = flow.finfo(dtype).tiny
    else:
        # PyTorch 2.x replaces a zero complex value by (tiny + 0j) (its docs say both parts).
        value = complex(flow.finfo(getattr(flow, _COMPLEX_PARTS[dtype.name])).tiny, 0)
    return flow.where(t == 0, flow.full((), value, dtype=dtype, device=t.device), t)


def make_tensor(
    *shape,
    dtype,
    device,
    low=None,
    high=None,
    requires_grad=False,
    noncontiguous=False,
    exclude_zero=False,
    memory_format=None,
):
    """A tensor of `shape` with values drawn uniformly from [low, high), as
    torch.testing.make_tensor.

    Defaults: floats and complex parts in [-9, 9), signed integers in [-9, 10), uint8 in
    [0, 10), bool in [0, 2). Bounds outside the dtype's range are clamped to it; integer bounds
    are rounded up. `noncontiguous=True` returns a strided view (every other element of the
    last dimension) when the tensor has two or more elements; `exclude_zero=True` replaces
    zeros by 1 (integers, bool: True) or the dtype's smallest normal number.
    """
    category = _category(dtype)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
            f"noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    if requires_grad and category in ("bool", "int"):
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
            f"dtype={dtype}"
        )
    low, high = _resolve_range(low, high, dtype, category)
    shape = _parse_shape(shape)  # checked last, where PyTorch's factory call would check it

    numel = math.prod(shape)
    split = noncontiguous and numel > 1
    # A noncontiguous result is every other element of a tensor twice as long in the last
    # dimension; the values are drawn (and zeros replaced) in that tensor, then viewed.
    draw_shape = shape[:-1] + (2 * shape[-1],) if split else shape
    with flow.no_grad():
        t = _draw(draw_shape, dtype, device, low, high, category)
        if exclude_zero:
            t = _replace_zeros(t, category, dtype)
        if split:
            t = t[..., 1::2]
        elif memory_format is not None:
            t = t.clone(memory_format=memory_format)
    if requires_grad:
        t.requires_grad_(True)
    return t
