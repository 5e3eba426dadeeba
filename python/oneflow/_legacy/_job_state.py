"""The state of the job-function API that its modules share: the job function being traced or
run on this thread, whether job functions run eagerly, and the FunctionConfig property names.
Below job.py (which sets them) so that scope, session, variables and layers read them without
importing job.py (no import circle)."""
import threading

_tls = threading.local()
_eager_jobs = [False, False]  # [job functions run eagerly, set by the user]


def current_job():
    """The job function being traced or run on this thread (None outside one)."""
    return getattr(_tls, "job", None)


# FunctionConfig's properties (OneFlow's JobConfigProto fields a job function may set)
_KNOBS = (
    "all_reduce_fp16 all_reduce_group_min_mbyte all_reduce_group_num all_reduce_group_size_warmup "
    "all_reduce_lazy_ratio allow_cpu_return_op concurrency_width cudnn_buf_limit_mbyte "
    "cudnn_conv_enable_pseudo_half cudnn_conv_enable_true_half cudnn_conv_force_bwd_data_algo "
    "cudnn_conv_force_bwd_filter_algo cudnn_conv_force_fwd_algo cudnn_conv_heuristic_search_algo "
    "cudnn_conv_use_deterministic_algo_only default_data_type default_distribute_strategy "
    "default_initializer_conf default_logical_view default_placement_scope disable_all_reduce_sequence "
    "do_parallel_cast_before_widening_type_cast enable_all_reduce_group enable_auto_mixed_precision "
    "enable_cudnn enable_cudnn_conv_pseudo_half enable_cudnn_fused_normalization_add_relu "
    "enable_float_compute_for_half_gemm enable_fuse_add_to_output enable_fuse_cast_scale "
    "enable_fuse_model_update_ops enable_gradients_stats_aggregation enable_inplace "
    "enable_inplace_in_reduce_struct enable_keep_header_only enable_nccl enable_non_distributed_optimizer "
    "enable_qat enable_quantization_aware_training enable_reused_mem enable_true_half_config_when_conv "
    "exp_run_conf indexed_slices_optimizer_conf non_distributed_optimizer_group_size_mbyte "
    "optimizer_placement_optimization_mode optimizer_placement_optimization_threshold "
    "prune_amp_white_identity_ops prune_cast_to_static_shape_ops prune_parallel_cast_ops qat "
    "static_mem_alloc_algo_white_list static_mem_alloc_policy_white_list tensorrt train "
    "use_boxing_v2 use_nccl_inter_node_communication use_tensorrt use_xla_jit").split()
