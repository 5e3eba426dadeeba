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


@export("flow.UntypedStorage")
class UntypedStorage:
    """The bytes of a tensor's storage."""

    def __init__(self, tensor):
        self._tensor = tensor

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
    """The elements of a tensor's storage, in the tensor's dtype (PyTorch's `Tensor.storage()`)."""

    def __init__(self, tensor):
        self._tensor = tensor
        self._untyped_storage = UntypedStorage(tensor)

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


export_value(lambda self: UntypedStorage(self), "Tensor.untyped_storage")
export_value(lambda self: TypedStorage(self), "Tensor.storage")
