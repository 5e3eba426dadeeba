"""Samplers: which dataset indices a DataLoader visits, in which order and batches
(torch.utils.data semantics; random orders come from _random.py)."""
import math
import os

import numpy as np

from ._random import permutation, rng


class Sampler:
    """Base class: an iterable of dataset indices (or of index lists, for batch samplers)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices (a new one on every iteration), or `num_samples`
    indices drawn uniformly with replacement. Without replacement, num_samples beyond the
    dataset's length chains several permutations."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) \
                or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        r = rng(self.generator)
        if self.replacement:
            yield from r.integers(0, n, self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from r.permutation(n).tolist()
        yield from r.permutation(n)[:self.num_samples % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a new one on every iteration)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in permutation(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights`."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = np.asarray(weights.numpy() if hasattr(weights, "numpy") else weights,
                       dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        if w.size == 0 or (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise RuntimeError("WeightedRandomSampler: weights must be finite, non-negative and "
                               "have a positive sum")
        if not replacement and num_samples > int((w > 0).sum()):
            raise RuntimeError(f"WeightedRandomSampler: cannot sample {num_samples} indices "
                               f"without replacement from {int((w > 0).sum())} non-zero weights")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        p = self.weights / self.weights.sum()
        idx = rng(self.generator).choice(len(p), self.num_samples, replace=self.replacement, p=p)
        yield from idx.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of `batch_size` (the last one shorter unless
    drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


def _world():
    """(world size, rank) of this process as the launcher sets them (1, 0 when alone)."""
    try:
        from ... import distributed as dist

        if dist.is_initialized():
            return dist.get_world_size(), dist.get_rank()
    except (ImportError, AttributeError):
        pass
    return int(os.environ.get("WORLD_SIZE", 1)), int(os.environ.get("RANK", 0))


class DistributedSampler(Sampler):
    """The rank's share of the dataset's indices: every rank sees the same (seed + epoch)
    shuffle, padded by repeating indices (or truncated with drop_last) to a multiple of
    num_replicas, then takes every num_replicas-th index from its rank."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        world, me = _world()
        num_replicas = world if num_replicas is None else num_replicas
        rank = me if rank is None else rank
        if num_replicas <= 0:
            raise ValueError(f"Invalid num_replicas {num_replicas}, it should be positive")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            # Seeded by (seed + epoch) alone: the same permutation on every rank.
            r = np.random.Generator(np.random.PCG64(self.seed + self.epoch))
            indices = r.permutation(n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, which changes the shuffle (call before each epoch)."""
        self.epoch = epoch
