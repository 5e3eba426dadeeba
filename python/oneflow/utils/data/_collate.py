"""default_collate / default_convert: how the DataLoader turns samples into batches
(torch.utils.data semantics: tensors stack along a new first dim, numbers become tensors,
containers are collated element-wise and keep their type)."""
import collections
import copy
import re

import numpy as np

from ... import _oneflow_internal as _C

Tensor = _C.Tensor
_NP_STR_OBJ = re.compile(r"[SaUO]")
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _as_tensor(a):
    from ..._tensor import as_tensor

    return as_tensor(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else as_tensor(a)


def default_convert(data):
    """Converts numpy arrays (recursively inside containers) to tensors, without batching."""
    t = type(data)
    if isinstance(data, Tensor):
        return data
    if t.__module__ == "numpy" and t.__name__ not in ("str_", "string_"):
        if t.__name__ in ("ndarray", "memmap") and _NP_STR_OBJ.search(data.dtype.str) is not None:
            return data
        return _as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return t({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return t(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return t([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Collates a list of samples into a batch."""
    elem = batch[0]
    t = type(elem)
    if isinstance(elem, Tensor):
        return _C.stack(list(batch), 0)
    if t.__module__ == "numpy" and t.__name__ not in ("str_", "string_"):
        if t.__name__ in ("ndarray", "memmap"):
            if _NP_STR_OBJ.search(elem.dtype.str) is not None:
                raise TypeError(_ERR.format(elem.dtype))
            return default_collate([_as_tensor(b) for b in batch])
        if elem.shape == ():
            return _as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return _as_tensor(np.array(batch, dtype=np.bool_))
    if isinstance(elem, float):
        return _as_tensor(np.array(batch, dtype=np.float64))
    if isinstance(elem, int):
        return _as_tensor(np.array(batch, dtype=np.int64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: default_collate([d[k] for d in batch]) for k in elem})
                return clone
            return t({k: default_collate([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return t(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        n = len(elem)
        if not all(len(e) == n for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))  # tuples, as torch (strings come back as one)
        if isinstance(elem, tuple):
            return [default_collate(s) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone[i] = default_collate(s)
                return clone
            return t([default_collate(s) for s in transposed])
        except TypeError:
            return [default_collate(s) for s in transposed]
    raise TypeError(_ERR.format(t))
