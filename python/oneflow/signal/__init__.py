"""oneflow.signal: PyTorch's torch.signal; so far its `windows` submodule (window functions)."""
from . import windows  # noqa: F401

__all__ = ["windows"]
