"""Tensor storages as PyTorch shows them (`Tensor.untyped_storage()`, `Tensor.storage()`,
`flow.UntypedStorage` / `TypedStorage`, is_storage) and shared memory (`share_memory_` /
`is_shared`: Note [Shared memory] in src/api/storage_bind.cpp). Tested against PyTorch in
tests/test_compat_storage.py.

A storage object here is a view of the memory under one tensor (it keeps that memory alive);
two storage objects of tensors that share memory have the same data_ptr(), which is how PyTorch
code tests for aliasing.
"""
import oneflow as flow
import numpy as np

from ._export import export, export_value


# Note [Storage constructors]: the public constructors are PyTorch's: `UntypedStorage()`,
# `UntypedStorage(nbytes)`, `UntypedStorage([ints])`, `TypedStorage(size, dtype=)`,
# `TypedStorage([values], dtype=)`; each makes new memory (a fresh tensor under it). A storage
# of an existing tensor (`Tensor.untyped_storage()`, `Tensor.storage()`) is built by `_of`,
# which the public constructor never reaches: `UntypedStorage(tensor)` is PyTorch's refusal,
# not a view of that tensor (issue 39's comparison found the tensor taken as is).
_NOTHING = object()  # no positional argument (None is an argument: refused, as PyTorch)


def _size_or_sequence(cls_name, args, kwargs, allowed, too_many):
    for k in kwargs:
        if k not in allowed:
            raise TypeError(f"{cls_name}(): got an unexpected keyword argument '{k}'")
    if len(args) > 1:  # PyTorch: a TypeError for UntypedStorage, a RuntimeError for TypedStorage
        raise too_many(f"{cls_name}(): takes at most 1 positional argument but {len(args)} were given")
    return args[0] if args else _NOTHING


def _new_storage_tensor(cls_name, arg, dtype, device, byte_elements):
    if arg is _NOTHING:
        return flow.empty(0, dtype=dtype, device=device)
    if isinstance(arg, int) and not (byte_elements and isinstance(arg, bool)):  # PyTorch: TypedStorage(True) has 1 element
        if arg < 0:
            raise RuntimeError(f"{cls_name}(): a storage size must not be negative, got {arg}")
        return flow.zeros(int(arg), dtype=dtype, device=device)
    if byte_elements:  # PyTorch: a sequence of ints, each byte taken modulo 256
        if flow.is_tensor(arg) or isinstance(arg, bool) or not hasattr(arg, "__len__") or not hasattr(arg, "__getitem__"):
            raise RuntimeError(f"{cls_name}(): Expected a sequence type, but got {type(arg).__name__}")
        items = list(arg)
        for x in items:
            if not isinstance(x, int):
                raise RuntimeError(f"{cls_name}(): tried to construct a storage from a sequence "
                                   f"({type(arg).__name__}), but one of the items was of type "
                                   f"{type(x).__name__} instead of int")
        return flow.tensor([x & 0xFF for x in items], dtype=flow.uint8, device=device)
    if flow.is_tensor(arg) or isinstance(arg, (str, bytes, float, complex)) or not isinstance(arg, (list, tuple)):
        raise TypeError(f"{cls_name}(): expected a size (int) or a sequence of numbers, got {type(arg).__name__}")
    return flow.tensor(arg, dtype=dtype, device=device).flatten()


@export("flow.UntypedStorage")
class UntypedStorage:
    """The bytes of a tensor's storage (Note [Storage constructors])."""

    def __init__(self, *args, **kwargs):
        arg = _size_or_sequence("UntypedStorage", args, kwargs, ("device",), TypeError)
        self._tensor = _new_storage_tensor("UntypedStorage", arg, flow.uint8, kwargs.get("device"), True)

    @classmethod
    def _of(cls, tensor):
        s = cls.__new__(cls)
        s._tensor = tensor
        return s

    def data_ptr(self):
        return self._tensor._storage_ptr()

    def nbytes(self):
        return self._tensor._storage_nbytes()

    def size(self):
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    @property
    def device(self):
        return self._tensor.device

    @property
    def dtype(self):
        return flow.uint8

    @property
    def is_cuda(self):
        return self._tensor.is_cuda

    def is_shared(self):
        return self._tensor.is_shared()

    def share_memory_(self):
        self._tensor.share_memory_()
        return self

    def is_pinned(self):
        return self._tensor.is_pinned()

    def _elements(self):
        """A flat tensor over the whole storage, in the tensor's dtype."""
        t = self._tensor
        return flow.as_strided(t.detach(), (self.nbytes() // t.element_size(),), (1,), 0)

    def _bytes(self):
        return self._elements().cpu().numpy().view(np.uint8)

    def tolist(self):
        return self._bytes().tolist()

    def __getitem__(self, idx):
        return self._bytes()[idx].tolist()

    def __repr__(self):
        return f"{self.tolist()}\n[{type(self).__module__}.UntypedStorage(device={self.device}) of size {len(self)}]"


@export("flow.TypedStorage")
class TypedStorage:
    """The elements of a tensor's storage, in the tensor's dtype (PyTorch's `Tensor.storage()`;
    Note [Storage constructors])."""

    def __init__(self, *args, **kwargs):
        arg = _size_or_sequence("TypedStorage", args, kwargs, ("device", "dtype"), RuntimeError)
        dtype = kwargs.get("dtype")
        if dtype is not None and not isinstance(dtype, flow.dtype):
            raise TypeError(f"TypedStorage(): argument 'dtype' must be oneflow.dtype, not {type(dtype).__name__}")
        dtype = dtype or flow.get_default_dtype()
        self._set(_new_storage_tensor("TypedStorage", arg, dtype, kwargs.get("device"), False))

    def _set(self, tensor):
        self._tensor = tensor
        self._untyped_storage = UntypedStorage._of(tensor)

    @classmethod
    def _of(cls, tensor):
        s = cls.__new__(cls)
        s._set(tensor)
        return s

    @property
    def dtype(self):
        return self._tensor.dtype

    @property
    def device(self):
        return self._tensor.device

    @property
    def is_cuda(self):
        return self._tensor.is_cuda

    def untyped(self):
        return self._untyped_storage

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def element_size(self):
        return self._tensor.element_size()

    def size(self):
        return self.nbytes() // self.element_size()

    def __len__(self):
        return self.size()

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    def is_pinned(self):
        return self._untyped_storage.is_pinned()

    def tolist(self):
        return self._untyped_storage._elements().tolist()

    def __getitem__(self, idx):
        return self._untyped_storage._elements()[idx].tolist()

    def __setitem__(self, idx, value):
        with flow.no_grad():
            self._untyped_storage._elements()[idx] = value

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        return f"{self.tolist()}\n[{type(self).__module__}.TypedStorage(dtype={self.dtype}, device={self.device}) of size {len(self)}]"


@export("flow.is_storage")
def is_storage(obj):
    return isinstance(obj, (UntypedStorage, TypedStorage))


export_value(lambda self: UntypedStorage._of(self), "Tensor.untyped_storage")
export_value(lambda self: TypedStorage._of(self), "Tensor.storage")
