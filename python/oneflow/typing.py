"""oneflow.typing: the annotations of job functions (``@flow.global_function``, spec 003).

Arguments are annotated with placeholders, which give the shape and dtype of the numpy data a call
passes; the return annotation says how the job's blobs come back:

* ``Numpy.Placeholder(shape, dtype=flow.float32)``: one ndarray of exactly that shape;
* ``ListNumpy.Placeholder(shape, dtype)``: a list of ndarrays (one per device; here one device),
  each at most ``shape`` in every dimension (a dynamic, "mirrored" input);
* ``ListListNumpy.Placeholder(shape, dtype)``: a list (per device) of lists of ndarrays (a
  TensorList input);
* returns: ``Numpy`` (an ndarray), ``ListNumpy`` (a list of ndarrays, one per device),
  ``ListListNumpy``, containers of those (``Tuple[Numpy, Numpy]``, ``List[Numpy]``,
  ``Dict[str, Numpy]``), ``None``, and ``Callback[T]``: the call returns at once and the result
  goes to the callback given to what the call returned (``job(x)(callback)``).
"""
__all__ = ["Numpy", "ListNumpy", "ListListNumpy", "Callback"]


class _Placeholder:
    kind = None

    def __init__(self, shape, dtype=None):
        from . import float32
        if isinstance(shape, int):
            shape = (shape,)
        shape = tuple(shape)
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ValueError(f"{self.kind}.Placeholder: shape must be non-negative ints, got {shape}")
        self.shape = shape
        self.dtype = float32 if dtype is None else dtype

    def __repr__(self):
        return f"{self.kind}.Placeholder(shape={self.shape}, dtype={self.dtype})"


class Numpy:
    """An ndarray argument (``Numpy.Placeholder``) or return value."""

    class Placeholder(_Placeholder):
        kind = "Numpy"


class ListNumpy:
    """A list of ndarrays, one per device (mirrored view)."""

    class Placeholder(_Placeholder):
        kind = "ListNumpy"


class ListListNumpy:
    """A list (per device) of lists of ndarrays (TensorList)."""

    class Placeholder(_Placeholder):
        kind = "ListListNumpy"


class _CallbackMeta(type):
    def __getitem__(cls, inner):
        return _CallbackOf(inner)


class _CallbackOf:
    def __init__(self, inner):
        self.inner = inner

    def __repr__(self):
        return f"Callback[{self.inner!r}]"


class Callback(metaclass=_CallbackMeta):
    """``-> Callback[Numpy]``: an asynchronous return (see the module's docstring)."""
