"""The process-group side of global tensors: this process's index in a placement and the group
of its ranks, on which boxing runs oneflow.distributed's collectives (Gloo for CPU tensors, NCCL for
CUDA tensors where the build has it).

Note [Ranks outside a placement]: every process runs every global op (the same script), but a
placement may name only some of them. On the others the component is a *meta* tensor shaped as the
first rank's: ops on it infer shapes and dtypes and compute nothing, collectives on it move nothing
(distributed/_traced.py), autograd runs through it, so every process walks the same graph and
meets the collectives it is part of -- a placement move's backward, for one, where a process that
only sends forward receives the gradient. `to_local()` there is an empty tensor, as OneFlow's."""
import atexit

from .. import distributed as dist


def world():
    """(rank, world size), joining the launcher's job first if needed (flow.env.init)."""
    if not dist.is_initialized():
        from .. import env
        env.init()
    return dist.get_rank(), dist.get_world_size()


_cache = {}  # placement / ranks -> (the world it was made in, this process's index / its group)
atexit.register(_cache.clear)  # (its group references would outlive the interpreter's teardown)


def _cached(key, make):
    from ..distributed._pg import _State
    hit = _cache.get(key)
    if hit is not None and hit[0] is _State.world and _State.world is not None:
        return hit[1]
    value = make()
    _cache[key] = (_State.world, value)
    return value


def position(placement):
    """This process's index among the placement's ranks (its order), or -1 outside it: there a
    global tensor's component is a meta tensor (shape and dtype, no data; Note [Ranks outside a
    placement]). Asked once per op: cached per placement and world."""
    def make():
        rank, size = world()
        if max(placement._ranks) >= size:
            raise ValueError(f"{placement!r}: the job has {size} processes (ranks 0 .. {size - 1})")
        group(placement._ranks)  # (made here, where every process passes for every placement)
        if len(placement._hierarchy) > 1:  # and its mesh axes' groups, in one order everywhere
            for axis in range(len(placement._hierarchy)):
                for ranks in axis_groups(placement, axis):
                    group(ranks)
        return placement._ranks.index(rank) if rank in placement._ranks else -1
    return _cached(placement, make)


def axis_groups(placement, axis):
    """The rank lists along mesh axis `axis` (ordered by that coordinate), one per setting of the
    other coordinates."""
    import numpy as np
    mesh = np.array(placement._ranks).reshape(placement._hierarchy)
    lines = np.moveaxis(mesh, axis, -1).reshape(-1, placement._hierarchy[axis])
    return [tuple(int(r) for r in line) for line in lines]


def axis_placement(placement, axis):
    """The 1-d placement of this process's ranks along mesh axis `axis` (for a process outside
    the placement: the first rank's), on which boxing along that axis runs."""
    from .placement import placement as make
    rank = placement._ranks[shape_index(placement)]
    for ranks in axis_groups(placement, axis):
        if rank in ranks:
            return make(placement._type, list(ranks))
    raise AssertionError("unreachable")


def axes(placement):
    """The 1-d placement of each mesh axis (one for a 1-d placement: itself)."""
    if len(placement._hierarchy) == 1:
        return [placement]
    return _cached(("axes", placement, position(placement)),
                   lambda: [axis_placement(placement, k) for k in range(len(placement._hierarchy))])


def group(ranks):
    """The process group of these world ranks (None: the world's own). Every process makes it (a
    new group is a collective of the whole world, in one order: global ops run alike on every rank)."""
    ranks = tuple(sorted(ranks))

    def make():
        from .. import distributed as dist
        if ranks == tuple(range(world()[1])):
            return None
        _agree_on(ranks)
        return dist.new_group(list(ranks))
    return _cached(("group", ranks), make)


def _agree_on(ranks):
    """Raises the same RuntimeError in every process unless all are making the group of these
    ranks (processes that disagree on a placement would otherwise wait for each other in the
    group's rendezvous until the timeout). One small all-gather over the job, once per group."""
    import zlib
    from .. import _lazy_state, distributed as dist, tensor
    from .._oneflow_internal import int64
    size = world()[1]
    with _lazy_state.paused():
        mine = tensor([len(ranks), zlib.crc32(repr(list(ranks)).encode())], dtype=int64)
        every = [mine.new_empty((2,)) for _ in range(size)]
        dist.all_gather(every, mine)
        if any(e.tolist() != every[0].tolist() for e in every):
            named = [None] * size
            dist.all_gather_object(named, list(ranks))
            listing = "; ".join(f"rank {r}: {named[r]}" for r in range(size))
            raise RuntimeError(f"placement: the processes run a global op on different placements ({listing}); "
                               "every process must name the same placement")


def shape_index(placement):
    """The index whose component's shape a rank outside the placement takes (the first)."""
    return max(position(placement), 0)


def split_sizes(length, parts):
    """OneFlow's balanced split of `length` elements over `parts` ranks: the first length % parts
    ranks hold one element more."""
    base, extra = divmod(length, parts)
    return [base + (1 if r < extra else 0) for r in range(parts)]


def split_range(length, parts, index):
    sizes = split_sizes(length, parts)
    start = sum(sizes[:index])
    return start, start + sizes[index]


def levels(shape, sbp, pl, index=None):
    """The shapes a tensor of logical `shape` laid out as n-d `sbp` on `pl` has at each mesh level
    on this process (or on the one at placement index `index`): [logical, after axis 0's split,
    ..., the component] (nested balanced splits, as OneFlow's)."""
    coords = None
    if index is not None:  # (its mesh coordinates: the placement lists the mesh row-major)
        coords = []
        for n in reversed(pl._hierarchy):
            index, c = divmod(index, n)
            coords.insert(0, c)
    out, cur = [tuple(shape)], list(shape)
    for k, (s, apl) in enumerate(zip(sbp, axes(pl))):
        if s._kind == "S":
            lo, hi = split_range(cur[s._dim], len(apl._ranks), shape_index(apl) if coords is None else coords[k])
            cur[s._dim] = hi - lo
        out.append(tuple(cur))
    return out


_moved = [0]  # the counter of Note [Bytes moved] (boxing.py)


def bytes_moved():
    """The bytes this process has received through boxing since the last reset (Note [Bytes moved])."""
    return _moved[0]


_grad_moved = [0]  # the part of _moved that reduced parameters' gradients (boxing._finish_leaves)


def gradient_bytes_moved():
    """The bytes this process has received reducing parameters' gradients at the end of backward
    passes (all-reduces, or ZeRO's reduce-scatters) since the last reset_bytes_moved()."""
    return _grad_moved[0]


def reset_bytes_moved():
    _moved[0] = 0
    _grad_moved[0] = 0


def _received(pl, nbytes):
    if position(pl) >= 0:
        _moved[0] += int(nbytes)


def arg(args, kwargs, pos, names, default=None):
    """An op's argument as a rule reads it: by keyword (any of `names`) or at position `pos`."""
    for n in ((names,) if isinstance(names, str) else names):
        if n in kwargs:
            return kwargs[n]
    return args[pos] if len(args) > pos else default


def _owned(t):
    """A boxing's output as a tensor of its own, not a view (of the receive buffer, of the sliced
    input): an in-place op on a view rebases its history onto the view's base -- here a buffer
    outside autograd -- and the gradient would stop there (`y = x.to_global(sbp=B); y[0] = 1`, the
    dispatcher's in-place boxing). detach() shares the storage and drops the view link: no copy."""
    return t.detach() if t._base is not None else t
