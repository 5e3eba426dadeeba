"""oneflow.func: functional_call (as torch.func.functional_call)."""
from ..nn.utils.stateless import functional_call  # noqa: F401

__all__ = ["functional_call"]
