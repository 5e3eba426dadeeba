"""Flatten and Unflatten."""
from ... import _oneflow_internal as _C
from .module import Module


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one (by default all but the batch dim)."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def _unflatten(input, dim, sizes):
    """Tensor.unflatten: splits dimension `dim` into `sizes` (one entry may be -1), as a view
    when the layout allows (reshape)."""
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    ndim = max(input.ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    dim %= ndim
    shape = tuple(input.shape)
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten: only one dimension can be inferred")
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    ok = shape[dim] % known == 0 if -1 in sizes and known != 0 else known == shape[dim]
    if not ok:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
                           f"of dim {dim} ({shape[dim]}) in the input tensor")
    return _C.reshape(input, shape[:dim] + tuple(sizes) + shape[dim + 1:])


class Unflatten(Module):
    """Splits dimension `dim` into `unflattened_size` (a tuple or list of ints)."""

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_int(self, input):
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError("unflattened_size must be tuple of ints, but found element of "
                                    f"type {type(elem).__name__} at pos {idx}")
            return
        raise TypeError("unflattened_size must be a tuple of ints, but found type "
                        f"{type(input).__name__}")

    def forward(self, input):
        return _unflatten(input, self.dim, tuple(self.unflattened_size))

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
