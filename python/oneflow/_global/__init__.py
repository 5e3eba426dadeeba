"""Global tensors: placement + SBP over the processes of a job, with boxing (docs/global_tensors.md)."""
from .placement import placement
from .tensor import GlobalTensor, local_to_global, module_to_global, tensor_to_global
from . import dispatch  # noqa: F401  (registers the dispatcher with the bindings)

__all__ = ["placement", "GlobalTensor", "local_to_global", "module_to_global", "tensor_to_global"]
