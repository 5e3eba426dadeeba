"""oneflow.distributed: process groups and collectives over Gloo, as torch.distributed (Note
[Process groups] in src/dist/process_group.h). Start the processes with
`python -m oneflow.distributed.launch --nproc_per_node N script.py`, then
`init_process_group("gloo")` in each; `oneflow.nn.parallel.DistributedDataParallel` trains on
it. CUDA tensors go through NCCL where the build has it (Note [NCCL groups]), else through host
memory. OneFlow's own names for the same things are `oneflow.env` (ranks) and `oneflow.comm`
(collectives)."""
from ._pg import (  # noqa: F401
    Backend, FileStore, GroupMember, PrefixStore, ProcessGroup, ReduceOp, Store, TCPStore, destroy_process_group,
    get_backend, get_global_rank, get_group_rank, get_process_group_ranks, get_rank, get_world_size, group,
    init_process_group, is_available, is_gloo_available, is_initialized, is_mpi_available, is_nccl_available,
    is_torchelastic_launched, new_group,
)
from ._collectives import (  # noqa: F401
    P2POp, Work, _all_gather_base, _all_gather_v, _all_to_all_v, _reduce_scatter_base, all_gather, all_gather_into_tensor, all_gather_object,
    all_reduce, all_to_all, all_to_all_single, barrier, batch_isend_irecv, broadcast, broadcast_object_list, gather,
    gather_object, irecv, isend, monitored_barrier, recv, recv_object_list, reduce, reduce_scatter,
    reduce_scatter_tensor, scatter, scatter_object_list, send, send_object_list,
)

from . import algorithms, optim  # noqa: E402,F401  (DDP communication hooks, ZeroRedundancyOptimizer)
