"""oneflow.utils.tensor: tensors exchanged with PyTorch, sharing memory where possible."""
from .from_or_to_torch_tensor import from_torch, to_torch  # noqa: F401

__all__ = ["from_torch", "to_torch"]
