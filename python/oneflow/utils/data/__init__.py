"""oneflow.utils.data: datasets, samplers and the DataLoader (torch.utils.data's API)."""
from . import _utils  # noqa: F401  (upstream's module path, reached by attribute)
from ._collate import default_collate, default_convert  # noqa: F401
from ._worker import WorkerInfo, get_worker_info  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
from .dataset import (  # noqa: F401
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split,
)
from .sampler import (  # noqa: F401
    BatchSampler, DistributedSampler, RandomSampler, Sampler, SequentialSampler,
    SubsetRandomSampler, WeightedRandomSampler,
)
