"""oneflow.env: OneFlow's names for where this process stands in a distributed job. They answer
from the process group when one is initialized, otherwise from the launcher's environment
(RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE): a script run without the launcher is rank 0 of 1."""
import os

from . import distributed as _dist


def get_rank():
    if _dist.is_initialized():
        return _dist.get_rank()
    return int(os.environ.get("RANK", 0))


def get_world_size():
    if _dist.is_initialized():
        return _dist.get_world_size()
    return int(os.environ.get("WORLD_SIZE", 1))


def get_local_rank():
    return int(os.environ.get("LOCAL_RANK", 0))


def get_local_size():
    """The processes on each node (machine): the launcher's --nproc_per_node."""
    return int(os.environ.get("LOCAL_WORLD_SIZE", 0)) or get_world_size()


def get_node_size():
    """The number of nodes (machines) of the job."""
    return max(1, get_world_size() // get_local_size())


def get_node_rank():
    """This process's node (machine id): the launcher's --node_rank (GROUP_RANK), else the rank's
    node under the launcher's numbering (rank = node * local size + local rank)."""
    if "GROUP_RANK" in os.environ:
        return int(os.environ["GROUP_RANK"])
    return get_rank() // get_local_size()


def is_multi_client():
    return True  # every process runs its own script (OneFlow's multi-client mode)


def init():
    """Joins the job's default group from the launcher's environment (done by the first
    oneflow.comm call as well); a script run alone becomes rank 0 of 1."""
    if _dist.is_initialized():
        return
    if all(k in os.environ for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")):
        _dist.init_process_group()  # (the build's default backend: Gloo, and NCCL for CUDA tensors)
    else:
        _dist.init_process_group(store=_dist.TCPStore("127.0.0.1", 0, 1, is_master=True), rank=0, world_size=1)
