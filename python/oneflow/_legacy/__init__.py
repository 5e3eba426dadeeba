"""The job-function API of spec 000 / 001 / 003 (``@flow.global_function``, ``oneflow.typing``,
``flow.get_variable``, ``flow.layers``, ``flow.optimizer``, ``flow.math``, ``flow.train``,
``flow.watch``...), on the tracer of ``nn.Graph`` (docs/job_functions.md). Its names are exported
to the oneflow module here (docs/architecture.md §6)."""
import types

from . import blob_names, builtin, distribute, pending, initializers, job, layers, math, micro, model, ops, optimizer, runtime, scope, \
    session, variables
from .. import _image as image  # the image ops over TensorBuffers (flow.image below)
from .. import typing  # noqa: F401  (oneflow.typing)
from .._export import export, export_value
from .._global.dispatch import register_kind
from . import checkpoint, config, data, function_config, normalization, train_conf


def _namespace(name, doc, **names):
    m = types.ModuleType(name, doc)
    for k, v in names.items():
        setattr(m, k, v)
    return m


for n in ("global_function", "current_global_function_desc", "watch", "watch_diff",
          "enable_eager_execution", "eager_execution_enabled", "convert_oneflow_dtype_to_numpy_dtype"):
    export_value(getattr(job, n), "flow." + n)
export_value(function_config.FunctionConfig, "flow.FunctionConfig")
export_value(function_config.FunctionConfig, "flow.function_config")
export_value(function_config.FunctionConfig, "flow.ExecutionConfig")
for n in ("get_variable", "get_all_variables", "load_variables"):
    export_value(getattr(variables, n), "flow." + n)
for n in initializers.INITIALIZERS:
    export_value(getattr(initializers, n), "flow." + n)
# legacy-only names never replace a current one (those differ only inside jobs: ops.LEGACY)
for k, v in ops.ALWAYS.items():
    export_value(v, "flow." + k)
for k, v in layers.NN_NAMES.items():
    export_value(v, "flow.nn." + k)
export_value(initializers.regularizers, "flow.regularizers")
export_value(_namespace("oneflow.layers", "Layers with their own variables (job-function API).",
                         dense=layers.dense, conv2d=layers.conv2d_layer,
                         batch_normalization=normalization.batch_normalization,
                         batch_normalization_relu=normalization.batch_normalization_relu,
                         batch_normalization_add_relu=normalization.batch_normalization_add_relu), "flow.layers")
export_value(_namespace("oneflow.math", math.__doc__,
                       **{k: v for k, v in vars(math).items() if callable(v) and not k.startswith("_")}), "flow.math")
export_value(_namespace("oneflow.optimizer", optimizer.__doc__,
                            **{k: getattr(optimizer, k) for k in (
                                "SGD", "Adam", "AdamW", "RMSProp", "PiecewiseConstantScheduler",
                                "PiecewiseScalingScheduler", "CosineScheduler", "ExponentialScheduler",
                                "warmup", "grad_clipping", "PolynomialScheduler", "loss_scale", "PolynomialSchduler",
                                "InverseTimeScheduler", "NaturalExpScheduler", "LinearCosineScheduler", "SGDW",
                                "LARS", "LazyAdam", "LAMB", "CombinedOptimizer", "CustomScheduler")}), "flow.optimizer")
export_value(_namespace("oneflow.losses", "The loss of a train job configured by FunctionConfig.train (0.1-0.2).",
                        add_loss=train_conf.add_loss), "flow.losses")
export_value(_namespace("oneflow.train", "Checkpoints of the job-function API.", CheckPoint=variables.CheckPoint), "flow.train")
export_value(_namespace("oneflow.scope", scope.__doc__, namespace=variables.namespace, placement=scope.placement,
                        mirrored_view=scope.mirrored_view, consistent_view=scope.consistent_view), "flow.scope")
export_value(scope.current_scope, "flow.current_scope")
for n in ("unsorted_segment_sum", "unsorted_segment_sum_like", "unsorted_batch_segment_sum",
          "broadcast_to_compatible_with"):
    export_value(getattr(math, n), "flow." + n)
export_value(builtin.BuiltinOp, "flow.BuiltinOp")
export_value(builtin.builtin_op, "flow.builtin_op")
export_value(builtin.user_op_builder, "flow.user_op_builder")
for n in ("FixedTensorDef", "MirroredTensorDef", "DeprecatedFixedTensorDef", "DeprecatedMirroredTensorDef",
          "find_or_create_module", "current_machine_id", "current_resource", "inter_job_reuse_mem_strategy"):
    export_value(getattr(runtime, n), "flow." + n)
export_value(model.Model, "flow.Model")
for n in distribute.NAMES:
    export_value(getattr(distribute, n), "flow." + n)
export_value(_namespace("oneflow.distribute", "Blob distributions of the job-function API.",
                             split=distribute.split, broadcast=distribute.broadcast, auto=distribute.auto,
                             Distribute=distribute.Distribute), "flow.distribute")
export_value(_namespace("oneflow.model", model.__doc__, Model=model.Model, TrainingConfig=model.TrainingConfig,
                        ValidationConfig=model.ValidationConfig, CheckpointConfig=model.CheckpointConfig,
                        Callback=model.Callback), "flow.model")
export_value(_namespace("oneflow.image", image.__doc__, Resize=image.image_resize, resize=image.image_resize,
                        target_resize=image.image_target_resize, random_crop=image.image_random_crop,
                        decode=image.image_decode, flip=image.image_flip, normalize=image.image_normalize,
                        batch_align=image.image_batch_align, CropMirrorNormalize=data.CropMirrorNormalize,
                        crop_mirror_normalize=data.CropMirrorNormalize), "flow.image")
register_kind(micro.MicroBatches, micro.map_op)  # micro-batch lists run ops per element
export_value(session.Session, "flow.Session")
export_value(session.MultiClientSession, "flow.MultiClientSession")
export_value(session.ConfigProto, "flow.ConfigProto")
export_value(session.JobConfigProto, "flow.JobConfigProto")
# OneFlow 0.x's session settings, data ops and model I/O (config.py, data.py, checkpoint.py)
export_value(_namespace("oneflow.config", config.__doc__, collective_boxing=config.collective_boxing,
                        **{n: getattr(config, n) for n in config.NAMES}), "flow.config")
for n in config.ENV_NAMES:
    export_value(getattr(config, n), "flow.env." + n)
export_value(_namespace("oneflow.data", data.__doc__, **data.NAMES), "flow.data")
export_value(_namespace("oneflow.checkpoint", checkpoint.__doc__, get=checkpoint.get, save=checkpoint.save),
             "flow.checkpoint")
export_value(data.CoinFlip, "flow.random.CoinFlip", "flow.random.coin_flip")
del n, k, v


@export("flow.clear_default_session")
def clear_default_session():
    """Forgets every variable (job functions made before keep their compiled programs, whose
    captured variables stay alive with them); the default session closes and a new one opens.
    Its queued job runs finish first (their errors raise here, after the reset)."""
    try:
        pending.sync()
    finally:
        variables.clear()
        session.reset_default_session()


@export("flow.sync_default_session")
def sync_default_session():
    """Waits for the queued job runs and their callbacks (tp.Callback jobs, futures of jobs
    without annotations); raises the first error among them not reported yet."""
    pending.sync()
