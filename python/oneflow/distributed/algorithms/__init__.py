"""oneflow.distributed.algorithms (PyTorch's module path): DDP communication hooks."""
from . import ddp_comm_hooks  # noqa: F401
