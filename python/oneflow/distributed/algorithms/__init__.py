"""oneflow.distributed.algorithms (PyTorch's module path): DDP communication hooks, Join."""
from . import ddp_comm_hooks  # noqa: F401
from .join import Join, JoinHook, Joinable  # noqa: F401
