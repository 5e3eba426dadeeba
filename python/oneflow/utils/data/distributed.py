"""oneflow.utils.data.distributed (the module path PyTorch code imports DistributedSampler
from)."""
from .sampler import DistributedSampler  # noqa: F401
