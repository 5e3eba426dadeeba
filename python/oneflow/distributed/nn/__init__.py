"""oneflow.distributed.nn: collectives with gradients (functional)."""
from . import functional  # noqa: F401
