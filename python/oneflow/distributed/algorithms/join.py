"""Training on uneven inputs (PyTorch's torch.distributed.algorithms.join): `Join` around a loop
whose processes may run out of inputs at different iterations, with `Joinable`s (DDP,
ZeroRedundancyOptimizer) that
shadow, in a process that ran out, the collectives the others still make (Note [DDP join]).

Each iteration, the first joinable calls `Join.notify_join_context(self)` before its collectives:
one all-reduce counts the processes still training. A process leaving the loop goes on counting
(with 0) at the context's exit and runs every joinable's `JoinHook.main_hook()` (one shadowed
iteration) while the count is not zero, then each `post_hook(is_last_joiner)`."""
import abc

import oneflow as flow

from .._collectives import all_reduce
from .._pg import get_world_size


class JoinHook:
    """What a joinable does in a process that ran out of inputs."""

    def main_hook(self):
        """Shadows one iteration of the processes still training."""

    def post_hook(self, is_last_joiner):
        """Runs once every process has run out (is_last_joiner: this one was among the last)."""


class Joinable(abc.ABC):
    """A class whose per-iteration collectives Join can shadow."""

    @abc.abstractmethod
    def join_hook(self, **kwargs):
        """The JoinHook of this joinable (kwargs: the ones given to Join)."""

    @property
    @abc.abstractmethod
    def join_device(self):
        """The device of the count's all-reduce."""

    @property
    @abc.abstractmethod
    def join_process_group(self):
        """The process group of the count's all-reduce."""


class _JoinConfig:
    __slots__ = ("enable", "throw_on_early_termination", "is_first_joinable", "joined")

    def __init__(self, enable, throw_on_early_termination, is_first_joinable):
        self.enable, self.throw_on_early_termination = enable, throw_on_early_termination
        self.is_first_joinable = is_first_joinable
        self.joined = False  # the process ran out: main hooks run, the count is Join's own


def _count(joinable, value):
    t = flow.tensor([float(value)], device=joinable.join_device)
    all_reduce(t, group=joinable.join_process_group)
    return int(t.item())


def _world(joinable):
    return get_world_size(joinable.join_process_group)


class Join:
    """``with Join([ddp_model]): for batch in my_batches: ...`` -- the processes may have
    different numbers of batches."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        joinables = list(joinables)
        if not joinables:
            raise ValueError("Join: the joinables must be a non-empty list")
        for j in joinables:
            if not isinstance(j, Joinable):
                raise TypeError(f"Join: {type(j).__name__} is not a Joinable")
        groups = {id(j.join_process_group) for j in joinables}
        if len(groups) > 1:
            raise ValueError("Join: every joinable must use the same process group")
        self._joinables, self._enable = joinables, enable
        self._throw = throw_on_early_termination
        self._hooks = [j.join_hook(**kwargs) for j in joinables]
        for k, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, k == 0)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if self._enable and exc_type is None:
                first, last = self._joinables[0], True
                for j in self._joinables:
                    j._join_config.joined = True
                while True:
                    n = _count(first, 0)
                    if n == 0:
                        break
                    if self._throw:
                        raise RuntimeError(f"Join: {_world(first) - n} of {_world(first)} processes ran out of inputs "
                                           "(throw_on_early_termination=True)")
                    for hook in self._hooks:
                        hook.main_hook()
                    last = False
                for hook in self._hooks:
                    hook.post_hook(last)
        finally:
            for j in self._joinables:
                j._join_config = None
        return False

    @staticmethod
    def notify_join_context(joinable):
        """Called by a joinable each iteration before its collectives: the first joinable of an
        enabled Join counts the processes still training (the count, else None)."""
        config = getattr(joinable, "_join_config", None)
        if config is None or not config.enable or not config.is_first_joinable or config.joined:
            return None
        n = _count(joinable, 1)
        if config.throw_on_early_termination and n < _world(joinable):
            raise RuntimeError(f"Join: {_world(joinable) - n} of {_world(joinable)} processes ran out of inputs "
                               "(throw_on_early_termination=True)")
        return n
