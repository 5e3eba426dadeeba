"""flow.save / flow.load of objects holding global tensors (OneFlow's global_dst_rank /
global_src_rank): saving gathers each global tensor's logical value (collective: every rank calls
save) and one rank writes it as a plain tensor; loading reads on one rank, sends the object to the
others and makes each tensor a broadcast global tensor over every rank of the job."""
from collections import OrderedDict

from .. import _oneflow_internal as _C
from .. import distributed as dist
from .tensor import is_global


def contains_global(obj):
    if is_global(obj):
        return True
    if isinstance(obj, dict):
        return any(contains_global(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(contains_global(v) for v in obj)
    return False


def _map(obj, fn):
    """obj with every tensor leaf replaced by fn(leaf) (containers rebuilt alike)."""
    if isinstance(obj, _C.Tensor):
        return fn(obj)
    if isinstance(obj, OrderedDict):
        out = OrderedDict((k, _map(v, fn)) for k, v in obj.items())
        if hasattr(obj, "_metadata"):
            out._metadata = obj._metadata
        return out
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_map(v, fn) for v in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(v, fn) for v in obj)
    return obj


def save(obj, path, global_dst_rank, save_local, **kwargs):
    if global_dst_rank is None:
        raise ValueError("flow.save: the object holds global tensors; give global_dst_rank=<the rank that "
                         "writes the file> (every rank calls save: their values are gathered to it)")
    plain = _map(obj, lambda t: t._full().detach() if is_global(t) else t)
    if dist.get_rank() == global_dst_rank:
        save_local(plain, path, **kwargs)
    dist.barrier()  # (the file exists for every rank once save returns)


def load(path, global_src_rank, load_local, **kwargs):
    from .tensor import local_to_global
    from .placement import placement
    from .runtime import world
    rank, size = world()
    holder = [load_local(path, **kwargs) if rank == global_src_rank else None]
    dist.broadcast_object_list(holder, src=global_src_rank)

    def to_global(t):
        return local_to_global(t, placement(t.device.type, list(range(size))), _broadcast(), "flow.load")
    return _map(holder[0], to_global)


def _broadcast():
    from ..sbp import broadcast
    return broadcast
