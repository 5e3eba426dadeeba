"""Randomness of the data utilities.

Every random choice (shuffles, splits, samplers, worker seeds) starts from a 62-bit seed drawn
from oneflow's random generator: the global one (so `flow.manual_seed` makes data order
reproducible) or the `generator` passed by the user. A numpy PCG64 stream seeded with it then
does the sampling (fast permutations and weighted draws in one call). Sequences therefore differ
from PyTorch's for the same seed; their distribution and the sampler semantics are the same.
"""
import numpy as np

from ... import _oneflow_internal as _C

_SEED_HIGH = 1 << 62


def draw_seed(generator=None):
    """A fresh seed from oneflow's generator (advances it, as a torch draw would)."""
    if generator is None:
        return int(_C.randint(0, _SEED_HIGH, (1,)).item())
    if isinstance(generator, np.random.Generator):
        return int(generator.integers(0, _SEED_HIGH))
    return int(_C.randint(0, _SEED_HIGH, (1,), generator=generator).item())


def rng(generator=None):
    return np.random.Generator(np.random.PCG64(draw_seed(generator)))


def permutation(n, generator=None):
    """A random permutation of range(n) as a list of ints."""
    return rng(generator).permutation(n).tolist()
