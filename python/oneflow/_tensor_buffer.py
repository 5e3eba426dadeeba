"""TensorBuffer and TensorList (spec 001, INVENTORY G): containers of tensors of their own shapes.

* ``TensorBuffer``: a grid (its ``shape``) whose elements are tensors, each with its own shape
  (dtype ``flow.tensor_buffer``) - images of different sizes, boxes per image.
* ``TensorList``: a list of tensors (one job argument annotated ``tp.ListListNumpy``), returned
  as ``[[ndarray, ...]]`` (one list per device).

They are Python containers of ordinary tensors, so the ops on them are compositions of table ops
on each element (their gradients too). Conversions to and from dense tensors, and the
synthesising op, live here; the image and object-detection ops are in ``_image.py``.
"""
import math

import numpy as np

from ._export import export, export_value


class _TensorBufferDType:
    """``flow.tensor_buffer``: the dtype of TensorBuffer."""
    name = "tensor_buffer"

    def __repr__(self):
        return "oneflow.tensor_buffer"


tensor_buffer = export_value(_TensorBufferDType(), "flow.tensor_buffer")


@export("flow.TensorBuffer")
class TensorBuffer:
    """A grid of tensors. ``buf[i]`` (1-d grids) / ``buf.element(i, j, ...)`` give elements."""

    dtype = tensor_buffer

    def __init__(self, elements, shape=None):
        from . import Size
        elements = list(elements)
        shape = (len(elements),) if shape is None else tuple(int(d) for d in shape)
        if math.prod(shape) != len(elements):
            raise ValueError(f"TensorBuffer: {len(elements)} elements for shape {shape}")
        self.elements, self.shape = elements, Size(shape)

    @property
    def ndim(self):
        return len(self.shape)

    def numel(self):
        return len(self.elements)

    def __len__(self):
        return self.shape[0] if self.shape else 1

    def __getitem__(self, i):
        if self.ndim != 1:
            raise IndexError("TensorBuffer: index a multi-dimensional buffer with element(i, j, ...)")
        return self.elements[i]

    def element(self, *index):
        return self.elements[int(np.ravel_multi_index(index, tuple(self.shape)))]

    def map(self, fn):
        """A buffer of the same shape holding fn(element)."""
        return TensorBuffer([fn(e) for e in self.elements], self.shape)

    def __repr__(self):
        shapes = [tuple(e.shape) for e in self.elements[:4]]
        more = ", ..." if len(self.elements) > 4 else ""
        return f"TensorBuffer(shape={tuple(self.shape)}, element shapes={shapes}{more})"


class TensorList(list):
    """The tensors of a ``tp.ListListNumpy`` argument (a list with a name)."""

    def __repr__(self):
        return f"TensorList({[tuple(t.shape) for t in self]})"


def _check_buffer(x, what):
    if not isinstance(x, TensorBuffer):
        raise TypeError(f"{what}: expected a TensorBuffer, got {type(x).__name__}")


@export("flow.tensor_to_tensor_buffer")
def tensor_to_tensor_buffer(x, instance_dims, name=None):
    """The last `instance_dims` dimensions of x become the elements (each a view of x)."""
    if not 0 < instance_dims <= x.ndim:
        raise ValueError(f"tensor_to_tensor_buffer: instance_dims must be in [1, {x.ndim}], got {instance_dims}")
    grid = tuple(x.shape[:x.ndim - instance_dims])
    flat = x.reshape((-1,) + tuple(x.shape[x.ndim - instance_dims:]))
    return TensorBuffer([flat[i] for i in range(flat.shape[0])], grid)


@export("flow.tensor_buffer_to_tensor")
def tensor_buffer_to_tensor(x, dtype, instance_shape, name=None):
    """The elements, each of instance_shape, stacked into a dense tensor of shape
    buffer.shape + instance_shape, in dtype."""
    from . import stack
    _check_buffer(x, "tensor_buffer_to_tensor")
    instance_shape = tuple(instance_shape)
    for e in x.elements:
        if tuple(e.shape) != instance_shape:
            raise RuntimeError(f"tensor_buffer_to_tensor: an element has shape {tuple(e.shape)}, "
                               f"instance_shape is {instance_shape}")
    if not x.elements:
        from . import empty
        return empty(tuple(x.shape) + instance_shape, dtype=dtype)
    return stack([e.to(dtype) for e in x.elements]).reshape(tuple(x.shape) + instance_shape)


@export("flow.tensor_buffer_to_list_of_tensors")
def tensor_buffer_to_list_of_tensors(x, out_shape, out_dtype, dynamic_out=False, name=None):
    """The elements as a list of tensors in out_dtype: each of exactly out_shape, or (dynamic_out)
    of at most out_shape in every dimension."""
    _check_buffer(x, "tensor_buffer_to_list_of_tensors")
    out_shape = tuple(out_shape)
    out = []
    for e in x.elements:
        s = tuple(e.shape)
        ok = (len(s) == len(out_shape) and all(a <= b for a, b in zip(s, out_shape))) if dynamic_out else s == out_shape
        if not ok:
            raise RuntimeError(f"tensor_buffer_to_list_of_tensors: an element has shape {s}, out_shape is {out_shape}"
                               + (" (at most)" if dynamic_out else ""))
        out.append(e.to(out_dtype))
    return out


@export("flow.gen_tensor_buffer")
def gen_tensor_buffer(shape, shape_list, value_list, data_type=None, dynamic_out=False, name=None):
    """A buffer of `shape` whose i-th element is a tensor of shape_list[i] filled with
    value_list[i]."""
    from . import float32, full
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):  # the spec's example passes [(2,)]
        shape = tuple(shape[0])
    n = math.prod(shape)
    if len(shape_list) != n or len(value_list) != n:
        raise ValueError(f"gen_tensor_buffer: shape {tuple(shape)} needs {n} shapes and values, got "
                         f"{len(shape_list)} and {len(value_list)}")
    dt = data_type or float32
    return TensorBuffer([full(tuple(s), v, dtype=dt) for s, v in zip(shape_list, value_list)], shape)


@export("flow.tensor_list_to_tensor_buffer")
def tensor_list_to_tensor_buffer(input, name=None):  # noqa: A002
    """A TensorList (a tp.ListListNumpy argument) as a 1-d TensorBuffer."""
    if not isinstance(input, (list, tuple)):
        raise TypeError(f"tensor_list_to_tensor_buffer: expected a TensorList, got {type(input).__name__}")
    return TensorBuffer(list(input))


@export("flow.tensor_buffer_to_tensor_list")
def tensor_buffer_to_tensor_list(input, shape, dtype, name=None):  # noqa: A002
    """The elements of a 1-d buffer as a TensorList in dtype; each must fit in `shape` (the
    elements' maximum shape)."""
    _check_buffer(input, "tensor_buffer_to_tensor_list")
    inst = tuple(shape)
    out = TensorList()
    for e in input.elements:
        s = tuple(e.shape)
        if inst and (len(s) != len(inst) or any(a > b for a, b in zip(s, inst))):
            raise RuntimeError(f"tensor_buffer_to_tensor_list: an element has shape {s}, more than {inst}")
        out.append(e.to(dtype))
    return out
