"""oneflow.nn.parallel: DistributedDataParallel (over oneflow.distributed) and DataParallel."""
from ..modules.data_parallel import DataParallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel"]
