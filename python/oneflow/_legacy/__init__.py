"""The job-function API of spec 000 / 001 / 003 (``@flow.global_function``, ``oneflow.typing``,
``flow.get_variable``, ``flow.layers``, ``flow.optimizer``, ``flow.math``, ``flow.train``,
``flow.watch``...), on the tracer of ``nn.Graph`` (docs/job_functions.md). ``install`` puts its
names on the oneflow module."""
import types

from . import builtin, distribute, image, initializers, job, layers, math, micro, model, ops, optimizer, runtime, scope, \
    session, tensor_buffer, variables
from . import checkpoint, config, data, normalization


def _namespace(name, doc, **names):
    m = types.ModuleType(name, doc)
    for k, v in names.items():
        setattr(m, k, v)
    return m


def install(flow):
    from .. import typing  # noqa: F401  (oneflow.typing)
    for n in ("global_function", "FunctionConfig", "current_global_function_desc", "watch", "watch_diff",
              "enable_eager_execution", "eager_execution_enabled", "convert_oneflow_dtype_to_numpy_dtype"):
        setattr(flow, n, getattr(job, n))
    flow.function_config = flow.ExecutionConfig = job.FunctionConfig
    for n in ("get_variable", "get_all_variables", "load_variables"):
        setattr(flow, n, getattr(variables, n))
    for n in initializers.INITIALIZERS:
        setattr(flow, n, getattr(initializers, n))
    # legacy-only names never replace a current one (those differ only inside jobs: ops.LEGACY)
    for k, v in ops.ALWAYS.items():
        assert not hasattr(flow, k), k
        setattr(flow, k, v)
    for k, v in layers.NN_NAMES.items():
        assert not hasattr(flow.nn, k), k
        setattr(flow.nn, k, v)
    flow.regularizers = initializers.regularizers
    flow.layers = _namespace("oneflow.layers", "Layers with their own variables (job-function API).",
                             dense=layers.dense, conv2d=layers.conv2d_layer,
                             batch_normalization=normalization.batch_normalization,
                             batch_normalization_relu=normalization.batch_normalization_relu,
                             batch_normalization_add_relu=normalization.batch_normalization_add_relu)
    flow.math = _namespace("oneflow.math", math.__doc__,
                           **{k: v for k, v in vars(math).items() if callable(v) and not k.startswith("_")})
    flow.optimizer = _namespace("oneflow.optimizer", optimizer.__doc__,
                                **{k: getattr(optimizer, k) for k in (
                                    "SGD", "Adam", "AdamW", "RMSProp", "PiecewiseConstantScheduler",
                                    "PiecewiseScalingScheduler", "CosineScheduler", "ExponentialScheduler",
                                    "warmup", "grad_clipping", "PolynomialScheduler", "loss_scale")})
    flow.train = _namespace("oneflow.train", "Checkpoints of the job-function API.", CheckPoint=variables.CheckPoint)
    flow.scope = _namespace("oneflow.scope", scope.__doc__, namespace=variables.namespace, placement=scope.placement,
                            mirrored_view=scope.mirrored_view, consistent_view=scope.consistent_view)
    flow.current_scope = scope.current_scope
    for n in ("unsorted_segment_sum", "unsorted_segment_sum_like", "unsorted_batch_segment_sum",
              "broadcast_to_compatible_with"):
        setattr(flow, n, getattr(math, n))
    flow.BuiltinOp, flow.builtin_op, flow.user_op_builder = builtin.BuiltinOp, builtin.builtin_op, builtin.user_op_builder
    for n in ("FixedTensorDef", "MirroredTensorDef", "DeprecatedFixedTensorDef", "DeprecatedMirroredTensorDef",
              "find_or_create_module", "current_machine_id", "current_resource", "inter_job_reuse_mem_strategy"):
        setattr(flow, n, getattr(runtime, n))
    flow.Model = model.Model
    for n in distribute.NAMES:
        assert not hasattr(flow, n), n
        setattr(flow, n, getattr(distribute, n))
    flow.distribute = _namespace("oneflow.distribute", "Blob distributions of the job-function API.",
                                 split=distribute.split, broadcast=distribute.broadcast, auto=distribute.auto,
                                 Distribute=distribute.Distribute)
    flow.model = _namespace("oneflow.model", model.__doc__, Model=model.Model, TrainingConfig=model.TrainingConfig,
                            ValidationConfig=model.ValidationConfig, CheckpointConfig=model.CheckpointConfig,
                            Callback=model.Callback)
    flow.tensor_buffer, flow.TensorBuffer = tensor_buffer.tensor_buffer, tensor_buffer.TensorBuffer
    for n in tensor_buffer.NAMES:
        setattr(flow, n, getattr(tensor_buffer, n))
    for n in image.NAMES:
        setattr(flow, n, getattr(image, n))
    flow.image = _namespace("oneflow.image", image.__doc__, Resize=image.image_resize, resize=image.image_resize,
                            target_resize=image.image_target_resize, random_crop=image.image_random_crop,
                            decode=image.image_decode, flip=image.image_flip, normalize=image.image_normalize,
                            batch_align=image.image_batch_align, CropMirrorNormalize=data.CropMirrorNormalize,
                            crop_mirror_normalize=data.CropMirrorNormalize)
    # OneFlow 0.x's session settings, data ops and model I/O (config.py, data.py, checkpoint.py)
    flow.config = _namespace("oneflow.config", config.__doc__, collective_boxing=config.collective_boxing,
                             **{n: getattr(config, n) for n in config.NAMES})
    for n in config.ENV_NAMES:
        assert not hasattr(flow.env, n), n
        setattr(flow.env, n, getattr(config, n))
    flow.data = _namespace("oneflow.data", data.__doc__, **data.NAMES)
    flow.checkpoint = _namespace("oneflow.checkpoint", checkpoint.__doc__, get=checkpoint.get, save=checkpoint.save)
    flow.random.CoinFlip = flow.random.coin_flip = data.CoinFlip
    from .._global.dispatch import register_kind
    register_kind(micro.MicroBatches, micro.map_op)
    flow.Session, flow.MultiClientSession = session.Session, session.MultiClientSession
    flow.ConfigProto, flow.JobConfigProto = session.ConfigProto, session.JobConfigProto
    flow.clear_default_session = clear_default_session
    flow.sync_default_session = sync_default_session


def clear_default_session():
    """Forgets every variable (job functions made before keep their compiled programs, whose
    captured variables stay alive with them); the default session closes and a new one opens."""
    variables.clear()
    session.reset_default_session()


def sync_default_session():
    """Job functions run synchronously here: every call and callback has finished already."""
