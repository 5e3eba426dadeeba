"""oneflow.boxing: OneFlow's switches for how its compiler merges the collective transfers between
SBPs ("boxing"). Training scripts set them before building a graph (the official ResNet-50 and
Wide&Deep set `boxing.nccl.*`). Here boxing is done eagerly, one collective per transfer
(docs/global_tensors.md), so a switch changes no result: each is accepted with OneFlow's argument
check and its value recorded in `config()`, where a script or test can read it back."""
from . import nccl  # noqa: F401
from ._config import config, _set_bool


def enable_fusion(val=True):
    """Whether boxing ops may be fused (OneFlow's default: True)."""
    _set_bool("enable_fusion", val)


def bytes_moved():
    """A debug counter: the bytes this process has received through the boxing of global tensors
    (SBP changes and placement changes, forward and backward) since the last
    `reset_bytes_moved()` (Note [Bytes moved] in oneflow/_global/boxing.py; the counter in runtime.py)."""
    from .._global.runtime import bytes_moved as count
    return count()


def gradient_bytes_moved():
    """The part of `bytes_moved()` that reduced parameters' gradients over the ranks at the end of
    backward passes: the all-reduces of data-parallel gradients, or ZeRO stage 2's reduce-scatters
    (Note [Sharded gradients] in oneflow/nn/graph/zero.py)."""
    from .._global.runtime import gradient_bytes_moved as count
    return count()


def reset_bytes_moved():
    """Sets `bytes_moved()` and `gradient_bytes_moved()` back to 0."""
    from .._global.runtime import reset_bytes_moved as reset
    reset()
