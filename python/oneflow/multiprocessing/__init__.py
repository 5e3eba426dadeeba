"""oneflow.multiprocessing: Python's multiprocessing under PyTorch's name (`torch.multiprocessing`),
with `spawn` / `start_processes` and the sharing-strategy calls.

Tensors cross process boundaries by pickling, that is by value. What is shared is memory a
process inherits: a tensor moved to shared memory with `share_memory_()` (or a module's
`share_memory()`) before the children are forked is the same memory in every one of them
(Note [Shared memory]); that is the Hogwild pattern. PyTorch also sends shared tensors through
queues as views of the same memory (a file descriptor each); here they arrive as copies.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403 - the same names as torch.multiprocessing

from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes  # noqa: F401

__all__ = list(multiprocessing.__all__) + ["spawn", "start_processes", "ProcessContext",
                                           "ProcessRaisedException", "ProcessExitedException",
                                           "get_sharing_strategy", "set_sharing_strategy",
                                           "get_all_sharing_strategies"]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def get_all_sharing_strategies():
    return set(_STRATEGIES)


def get_sharing_strategy():
    return _strategy


def set_sharing_strategy(new_strategy):
    """Accepted for PyTorch compatibility: shared tensors are inherited, not sent (see above)."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"set_sharing_strategy(): unknown strategy {new_strategy!r}; "
                         f"one of {sorted(_STRATEGIES)}")
    _strategy = new_strategy
