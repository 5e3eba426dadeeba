"""oneflow.boxing.nccl: OneFlow's NCCL fusion switches, under OneFlow's names. Accepted and
recorded (oneflow.boxing.config()); collectives here are issued one per transfer, so none of them
changes a result (oneflow/boxing/__init__.py)."""
from .._config import _set_bool, _set_int


def set_fusion_threshold_mbytes(threshold_mb=16):
    _set_int("nccl_fusion_threshold_mb", threshold_mb)


def set_fusion_max_ops_num(max_ops_num=64):
    _set_int("nccl_fusion_max_ops", max_ops_num, minimum=1)


def allow_fuse_all_reduce(val=True):
    _set_bool("nccl_fusion_all_reduce", val)


def allow_fuse_reduce_scatter(val=True):
    _set_bool("nccl_fusion_reduce_scatter", val)


def allow_fuse_all_gather(val=True):
    _set_bool("nccl_fusion_all_gather", val)


def allow_fuse_reduce(val=True):
    _set_bool("nccl_fusion_reduce", val)


def allow_fuse_broadcast(val=True):
    _set_bool("nccl_fusion_broadcast", val)


def allow_fuse_mixed_ops(val=True):
    _set_bool("nccl_enable_mixed_fusion", val)


def enable_use_buffer_to_fuse_all_reduce(val=True):
    _set_bool("nccl_fusion_all_reduce_use_buffer", val)


def set_stream_num(num=1):
    _set_int("nccl_num_streams", num, minimum=1)


def enable_all_to_all(val=True):
    _set_bool("nccl_enable_all_to_all", val)


def enable_use_compute_stream(val=True):
    _set_bool("nccl_use_compute_stream", val)


def disable_group_boxing_by_dst_parallel(val=True):
    _set_bool("disable_group_boxing_by_dst_parallel", val)
