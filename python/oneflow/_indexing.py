"""Tensor.__getitem__ / __setitem__ with PyTorch's semantics.

Basic indices (ints, slices, None, Ellipsis) become views through flow._C._select/_slice; integer
tensors, lists and bool masks become advanced indices handled by flow._C._index/_index_put. As in
PyTorch (unlike NumPy), integers are applied as views first, so they don't count as advanced
indices when placing the result dims.
"""
import numpy as np

from . import _oneflow_internal as _C


def _to_index_tensor(obj):
    if isinstance(obj, _C.Tensor):
        return obj
    arr = np.asarray(obj)
    if arr.dtype == np.bool_:
        return _C.from_numpy(np.require(arr, requirements="C")).clone()
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        raise IndexError(
            "tensors used as indices must be long, int, byte or bool tensors")
    return _C.from_numpy(np.require(arr.astype(np.int64), requirements="C"))


def _expand_index(self, idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    items = []
    for i in idx:
        if isinstance(i, (list, np.ndarray)) or (
                isinstance(i, _C.Tensor) and (i.ndim > 0 or i.dtype == _C.bool)):
            items.append(_to_index_tensor(i))
        elif isinstance(i, _C.Tensor):  # 0-d integer tensor: a plain int
            if i.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            items.append(int(i.item()))
        else:
            items.append(i)
    consumed = 0
    for i in items:
        if i is None or i is Ellipsis or isinstance(i, bool):
            continue
        consumed += i.ndim if isinstance(i, _C.Tensor) and i.dtype == _C.bool else 1
    if consumed > self.ndim:
        raise IndexError(
            f"too many indices for tensor of dimension {self.ndim} (got {consumed})")
    out = []
    seen_ellipsis = False
    for i in items:
        if i is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            out.extend([slice(None)] * (self.ndim - consumed))
        else:
            out.append(i)
    return out


def _apply_basic(self, idx):
    """Returns (view, advanced) where advanced[d] is an index tensor or None for dim d of view."""
    view = self
    dim = 0
    adv = []
    has_adv = False
    for i in _expand_index(self, idx):
        if i is None:
            view = _C.unsqueeze(view, dim)
            adv.append(None)
            dim += 1
        elif isinstance(i, bool):
            view = _C.unsqueeze(view, dim)
            if not i:
                view = _C._slice(view, dim, 0, 0, 1)
            adv.append(None)
            dim += 1
        elif isinstance(i, int) or hasattr(i, "__index__") and not isinstance(i, (slice, _C.Tensor)):
            view = _C._select(view, dim, int(i))
        elif isinstance(i, slice):
            step = 1 if i.step is None else int(i.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = 0 if i.start is None else int(i.start)
            stop = (1 << 62) if i.stop is None else int(i.stop)
            view = _C._slice(view, dim, start, stop, step)
            adv.append(None)
            dim += 1
        elif isinstance(i, _C.Tensor):
            if i.dtype == _C.bool:
                if i.ndim == 0:
                    # As PyTorch: a 0-d mask indexes a new dim of size 1 (kept when True,
                    # emptied when False), an advanced index like any other mask.
                    view = _C.unsqueeze(view, dim)
                    i = _C.reshape(i, [1])
                for d in range(i.ndim):
                    if i.shape[d] != view.shape[dim + d]:
                        raise IndexError(
                            f"The shape of the mask {list(i.shape)} at index {d} does not match "
                            f"the shape of the indexed tensor {list(view.shape)} at index {dim + d}")
                nz = _C.nonzero(i)
                for d in range(i.ndim):
                    adv.append(_C._select(nz, 1, d))
                dim += i.ndim
            else:
                adv.append(i)
                dim += 1
            has_adv = True
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(i).__name__})")
    return view, (adv if has_adv else None)


def getitem(self, idx):
    view, adv = _apply_basic(self, idx)
    if adv is None:
        return view
    return _C._index(view, adv)


def setitem(self, idx, value):
    view, adv = _apply_basic(self, idx)
    if not isinstance(value, (_C.Tensor, int, float, bool)):
        value = _C.from_numpy(np.require(np.asarray(value), requirements="C"))
    if adv is None:
        view.copy_(value)
    else:
        _C._index_put(view, adv, value)
