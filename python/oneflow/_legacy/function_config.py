"""A job function's configuration (spec 003): ``flow.function_config()`` (``FunctionConfig``, one
setter per OneFlow 0.x property, each checked when set), the ``config.train`` sub-setters and what
``flow.current_global_function_desc()`` returns. What each property does here:
docs/job_functions.md ("FunctionConfig")."""
import contextlib

from ._job_state import _KNOBS


class FunctionConfig:
    """A job's configuration: ``config.default_data_type(flow.float)``, ... (each of OneFlow's 58
    properties is a setter). What they mean here: ``default_data_type`` is the dtype of variables
    created without one, ``default_initializer_conf`` their initializer,
    ``enable_auto_mixed_precision(True)`` runs the job under ``flow.autocast``,
    ``default_placement_scope`` is entered around the job's Python, and the cuDNN properties
    ``cudnn_conv_use_deterministic_algo_only`` / ``cudnn_conv_heuristic_search_algo`` set
    ``flow.backends.cudnn``'s switches while the job runs, ``train.primary_lr`` /
    ``train.model_update_conf`` configure ``flow.losses.add_loss`` (train_conf.py) and
    ``indexed_slices_optimizer_conf`` gives the variables it names 0.x's indexed-slices update
    (update_rules.IndexedSlices), ``enable_qat`` with ``qat.*`` fake-quantizes the job's
    convolutions and matmuls (qat.py). The others tune
    parts of OneFlow's runtime a one-device job here does not have (fusion passes, cuDNN
    algorithm choice, memory reuse, collective grouping); they are kept in
    ``current_global_function_desc()``, and docs/job_functions.md gives each one's reason."""

    def __init__(self):
        object.__setattr__(self, "function_desc", {})

    def __getattr__(self, name):
        if name not in _KNOBS:
            raise AttributeError(f"FunctionConfig has no property '{name}'")
        desc = self.function_desc

        def setter(value=True):
            _check_knob(name, value)
            desc[name] = value
            return self
        if name == "train":
            return _TrainSetter(setter, desc)
        if name == "qat":
            from .qat import QatSetter
            return QatSetter(setter, desc)
        return setter

    def __setattr__(self, name, value):
        if name not in _KNOBS:
            raise AttributeError(f"FunctionConfig has no property '{name}'")
        _check_knob(name, value)
        self.function_desc[name] = value


def _indexed_slices_names(value):
    """The variable names of indexed_slices_optimizer_conf's value (0.x's message as a dict:
    ``{"include_op_names": {"op_name": ["embedding"]}}``, ``"enable": False`` turns it off)."""
    if not isinstance(value, dict) or set(value) - {"enable", "include_op_names"}:
        raise TypeError("FunctionConfig.indexed_slices_optimizer_conf: expected a dict such as "
                        f"{{'include_op_names': {{'op_name': ['embedding']}}}}, got {value!r}")
    if not value.get("enable", True):
        return set()
    names = value.get("include_op_names", {})
    if not isinstance(names, dict) or set(names) - {"op_name"} or not isinstance(names.get("op_name", []), (list, tuple)) \
            or not all(isinstance(n, str) for n in names.get("op_name", [])):
        raise TypeError("FunctionConfig.indexed_slices_optimizer_conf: include_op_names must be "
                        f"{{'op_name': [variable names]}}, got {names!r}")
    return set(names.get("op_name", []))


def _check_knob(name, value):
    """The properties that act here take values of their kind (found when set, not at the run)."""
    if name == "indexed_slices_optimizer_conf":
        _indexed_slices_names(value)
    if name == "qat":
        from .qat import check_config
        check_config(value)
    if name == "default_initializer_conf" and value is not None:
        from .initializers import InitializerConf
        from .variables import initializer_of_message
        if isinstance(value, dict):
            initializer_of_message(value)
        elif not isinstance(value, InitializerConf):
            raise TypeError("FunctionConfig.default_initializer_conf: expected an InitializerConf message as a "
                            f"dict (0.x's form) or an initializer, got {type(value).__name__}")
    if name == "default_placement_scope" and value is not None:
        from .scope import placement
        if not isinstance(value, placement):
            raise TypeError("FunctionConfig.default_placement_scope: expected flow.scope.placement(tag, ids), "
                            f"got {type(value).__name__}")
    if name in _CUDNN_SWITCHES and not isinstance(value, (bool, int)):
        raise TypeError(f"FunctionConfig.{name}: expected a bool, got {type(value).__name__}")


# FunctionConfig's cuDNN properties that flow.backends.cudnn has (read by the CUDA convolutions at
# each call; plain flags on a build without CUDA): property -> (flag, the flag's value for value v)
_CUDNN_SWITCHES = {
    "cudnn_conv_use_deterministic_algo_only": ("deterministic", lambda v: bool(v)),
    # OneFlow's heuristic search is cuDNN's "get" of an algorithm; without it OneFlow timed them
    "cudnn_conv_heuristic_search_algo": ("benchmark", lambda v: not v),
}


@contextlib.contextmanager
def _cudnn_switches(desc):
    """flow.backends.cudnn as the job's configuration says while it runs, restored after."""
    from ..backends import cudnn
    given = [(flag, to(desc[k])) for k, (flag, to) in _CUDNN_SWITCHES.items() if k in desc]
    saved = [(flag, getattr(cudnn, flag)) for flag, _ in given]
    try:
        for flag, v in given:
            setattr(cudnn, flag, v)
        yield
    finally:
        for flag, v in saved:
            setattr(cudnn, flag, v)


class _TrainSetter:
    """``config.train(...)`` records; of 0.x's training-message sub-setters, ``primary_lr``,
    ``model_update_conf`` and ``loss_scale_factor`` configure the optimizer of
    ``flow.losses.add_loss`` (train_conf.py); the others (``train.weight_l2``...) are refused
    with the hint to flow.optimizer / flow.regularizers, which replaced them."""

    def __init__(self, setter, desc):
        self._setter, self._desc = setter, desc

    def __call__(self, value=True):
        return self._setter(value)

    def __getattr__(self, name):
        if name not in _TRAIN_SETTERS:
            raise NotImplementedError(f"FunctionConfig.train.{name}: not supported; use "
                                      "flow.optimizer.X(scheduler, ...).minimize(loss) and flow.regularizers")
        desc = self._desc

        def setter(value):  # (checked by add_loss, when the job is traced: train_conf.py)
            if not isinstance(desc.get("train"), dict):
                desc["train"] = {}
            desc["train"][name] = value
        return setter


_TRAIN_SETTERS = ("primary_lr", "model_update_conf", "loss_scale_factor")


class FunctionDesc:
    """What ``flow.current_global_function_desc()`` returns inside a job."""

    def __init__(self, name, job_type, config):
        self.job_name, self.type, self.job_config = name, job_type, dict(config.function_desc)

    def IsTrainable(self):  # noqa: N802 - OneFlow's name
        return self.type == "train"

    @property
    def job_config_proto(self):
        """The job's configuration message (session.JobConfigProto)."""
        from .session import JobConfigProto
        return JobConfigProto.of_job(self.job_name, self.type, self.job_config)

    def __getattr__(self, name):
        if name in _KNOBS:
            return self.job_config.get(name)
        raise AttributeError(name)
