"""Legacy keyword forms of ops whose names current OneFlow keeps with other signatures (decision
2 of shared/spec/README.md: in place while a job function runs, ``ops.legacy_names()``):
``flow.ones(shape=(2, 3))`` / ``flow.zeros(shape=...)``, ``ones_like(like=...)`` /
``zeros_like(like=...)``, ``expand_dims(input=, axis=)``, ``slice_update(x=, update=,
slice_tup_list=)`` (a new blob, the input unchanged, as a 0.x op), ``argwhere(condition,
dtype=int32)`` (0.x's int32 indices)."""
from .. import _oneflow_internal as _C


def _size(shape, what):
    if isinstance(shape, int):
        return (shape,)
    if not isinstance(shape, (list, tuple)) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ValueError(f"{what}: shape must be a list or tuple of non-negative ints, got {shape!r}")
    return tuple(shape)


def ones(*size, shape=None, dtype=None, name=None, **kwargs):
    """A blob of ones of `shape` (dtype default float32); the current form flow.ones(*size, ...)
    still works (the job's own Python and the library's code call it)."""
    if shape is None:
        return _C.ones(*size, dtype=dtype, **kwargs)
    if size:
        raise TypeError("ones: give the shape positionally or as shape=, not both")
    return _C.ones(_size(shape, "ones"), dtype=dtype or _C.float32, **kwargs)


def zeros(*size, shape=None, dtype=None, name=None, **kwargs):
    """A blob of zeros of `shape` (dtype default float32); flow.zeros(*size, ...) as ones."""
    if shape is None:
        return _C.zeros(*size, dtype=dtype, **kwargs)
    if size:
        raise TypeError("zeros: give the shape positionally or as shape=, not both")
    return _C.zeros(_size(shape, "zeros"), dtype=dtype or _C.float32, **kwargs)


def _like(fn, what, input, like, dtype, kwargs):  # noqa: A002
    if (input is None) == (like is None):
        raise TypeError(f"{what}: give one blob, positionally or as like=")
    src = like if like is not None else input
    return fn(src, dtype=dtype or src.dtype, **kwargs)


def ones_like(input=None, like=None, dtype=None, name=None, **kwargs):  # noqa: A002
    """Ones of like's shape, in dtype (default like's)."""
    return _like(_C.ones_like, "ones_like", input, like, dtype, kwargs)


def zeros_like(input=None, like=None, dtype=None, name=None, **kwargs):  # noqa: A002
    """Zeros of like's shape, in dtype (default like's)."""
    return _like(_C.zeros_like, "zeros_like", input, like, dtype, kwargs)


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002 - the legacy argument name
    """`input` with a dimension of size 1 inserted at `axis` (or dim=, the current name;
    negative: from the end, the new dimension counted)."""
    if (axis is None) == (dim is None):
        raise TypeError("expand_dims: give axis (or dim)")
    axis = dim if axis is None else axis
    if not isinstance(axis, int) or not -input.ndim - 1 <= axis <= input.ndim:
        raise IndexError(f"expand_dims: axis {axis!r} is out of range for {input.ndim} dimensions")
    return _C.unsqueeze(input, axis)


def slice_update(x=None, update=None, slice_tup_list=None, name=None, input=None):  # noqa: A002
    """A copy of x with x[start:stop:step] (one (start, stop, step) per dimension) replaced by
    update; x itself is unchanged, as a 0.x op's input."""
    from .._shape import slice_update as update_in_place
    x = input if x is None else x
    if x is None or update is None or slice_tup_list is None:
        raise TypeError("slice_update: needs x, update and slice_tup_list")
    return update_in_place(x.clone(), update, slice_tup_list)


def argwhere(condition=None, dtype=None, name=None, input=None):  # noqa: A002
    """(n, ndim) indices of the non-zero elements of condition, int32 unless dtype says (0.x's
    default)."""
    condition = input if condition is None else condition
    return _C.argwhere(condition).to(dtype or _C.int32)


LEGACY = {"ones": ones, "zeros": zeros, "ones_like": ones_like, "zeros_like": zeros_like,
          "expand_dims": expand_dims, "slice_update": slice_update, "argwhere": argwhere}
