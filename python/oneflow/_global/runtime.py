"""The process-group side of global tensors: this process's rank in a placement, and the
collectives boxing uses (oneflow.distributed on the default group: Gloo for CPU tensors, NCCL for
CUDA tensors where the build has it)."""
import atexit

from .. import distributed as dist


def world():
    """(rank, world size), joining the launcher's job first if needed (flow.env.init)."""
    if not dist.is_initialized():
        from .. import env
        env.init()
    return dist.get_rank(), dist.get_world_size()


_positions = {}  # placement -> (the default group it was checked against, this process's index)
atexit.register(_positions.clear)  # (its group references would outlive the interpreter's teardown)


def position(placement):
    """This process's index among the placement's ranks. The first slice of global tensors uses the
    default group, so a placement must name every rank of the job, in order. (Cached per placement
    and default group: it is asked once per op.)"""
    from ..distributed._pg import _State
    hit = _positions.get(placement)
    if hit is not None and hit[0] is _State.world and _State.world is not None:
        return hit[1]
    rank, size = world()
    if list(placement._ranks) != list(range(size)):
        raise NotImplementedError(f"{placement!r}: a placement over some of the job's {size} processes, or in "
                                  f"another order, is not supported yet (use ranks={list(range(size))})")
    _positions[placement] = (_State.world, rank)
    return rank


def split_sizes(length, parts):
    """OneFlow's balanced split of `length` elements over `parts` ranks: the first length % parts
    ranks hold one element more."""
    base, extra = divmod(length, parts)
    return [base + (1 if r < extra else 0) for r in range(parts)]


def split_range(length, parts, index):
    sizes = split_sizes(length, parts)
    start = sum(sizes[:index])
    return start, start + sizes[index]


def arg(args, kwargs, pos, names, default=None):
    """An op's argument as a rule reads it: by keyword (any of `names`) or at position `pos`."""
    for n in ((names,) if isinstance(names, str) else names):
        if n in kwargs:
            return kwargs[n]
    return args[pos] if len(args) > pos else default
