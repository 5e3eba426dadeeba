"""oneflow.comm: OneFlow's collectives on local tensors, over the default process group of
oneflow.distributed, which the first call joins from the launcher's environment (oneflow.env.init).
Each works on its arguments in place, as OneFlow's."""
import functools
import os
import types

import oneflow as flow

from . import distributed as _dist
from .asyncs import sync as _sync
from ._export import export, export_value
from .distributed._agree import DTYPES
from .env import init as _init


def _joining(fn):
    """The call joins the launcher's job first (oneflow.env.init), as OneFlow's."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        _init()
        return fn(*args, **kwargs)
    return call


@_joining
def all_reduce(tensor):
    """tensor becomes the sum of every process's tensor."""
    _dist.all_reduce(tensor)


@_joining
def all_gather(tensor_list, tensor):
    _dist.all_gather(tensor_list, tensor)


@_joining
def broadcast(tensor, src):
    _dist.broadcast(tensor, src)


@_joining
def reduce(tensor, dst):
    _dist.reduce(tensor, dst)


@_joining
def scatter(tensor, scatter_list=None, src=0):
    _dist.scatter(tensor, scatter_list, src)


@_joining
def gather(tensor, gather_list=None, dst=0):
    _dist.gather(tensor, gather_list, dst)


@_joining
def reduce_scatter(output, input_list):
    _dist.reduce_scatter(output, input_list)


@_joining
def all_to_all(output_tensor_list, input_tensor_list):
    _dist.all_to_all(output_tensor_list, input_tensor_list)


@_joining
def barrier():
    _dist.barrier()


@_joining
def send(tensor, dst, send_meta=True):
    """Sends tensor to process dst; with send_meta, its shape and dtype go first, so that recv
    needs only the source."""
    if send_meta:
        meta = [tensor.dim(), DTYPES.index(tensor.dtype)] + list(tensor.shape)
        _dist.send(flow.tensor([len(meta)], dtype=flow.int64), dst)
        _dist.send(flow.tensor(meta, dtype=flow.int64), dst)
    _dist.send(tensor, dst)


@_joining
def recv(src, shape=None, dtype=None, device=None, out=None):
    """Receives a tensor from src: the shape and dtype sent with it (send_meta=True), or those given
    here (or out's); returns it (out, when given)."""
    if out is None and (shape is None or dtype is None):
        n = flow.zeros(1, dtype=flow.int64)
        _dist.recv(n, src)
        meta = flow.zeros(int(n.item()), dtype=flow.int64)
        _dist.recv(meta, src)
        meta = meta.tolist()
        shape, dtype = meta[2:2 + meta[0]], DTYPES[meta[1]]
    if out is None:
        out = flow.empty(tuple(shape), dtype=dtype, device=device or "cpu")
    _dist.recv(out, src)
    return out



@export("flow._oneflow_internal.cpu_broadcast")
def cpu_broadcast(data, src):
    """Upstream's `_oneflow_internal.cpu_broadcast(bytes, src)`: every process gets process src's
    bytes (others pass None); its test utilities, checkpoint and global_view code broadcast pickles
    with it. Alone (no job launched) the process is src and gets its own bytes back."""
    world = _dist.get_world_size() if _dist.is_initialized() else int(os.environ.get("WORLD_SIZE", 1))
    if world == 1:
        if src != 0:
            raise ValueError(f"cpu_broadcast: src {src} is no rank of a single-process job")
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"cpu_broadcast: the source process passes bytes, got {type(data).__name__}")
        return bytes(data)
    _init()
    if _dist.get_rank() == src and not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"cpu_broadcast: the source process passes bytes, got {type(data).__name__}")
    box = [bytes(data) if _dist.get_rank() == src else None]
    _dist.broadcast_object_list(box, src)
    return box[0]


def _cluster_sync():
    """Every process of the launched job has finished what it issued (upstream's
    `vm::ClusterSync`): each waits for its own work, then a barrier. A process outside a job has
    no one to wait for."""
    _sync()
    if _dist.is_initialized() and _dist.get_world_size() > 1:
        _dist.barrier()


# upstream's `eager` submodule of its extension: tests and scripts call `eager.Sync()` before
# reading results or before fork
eager = types.ModuleType("oneflow._oneflow_internal.eager", "Synchronisation with the eager runtime.")
eager.Sync, eager.ClusterSync = _sync, _cluster_sync
export_value(eager, "flow._oneflow_internal.eager")

