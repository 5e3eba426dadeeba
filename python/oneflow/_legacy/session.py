"""Sessions of the job-function API (spec INVENTORY C.10): the process's default session owns the
job functions defined since the last ``flow.clear_default_session()``, their interface ops and
watchers, the variables (``var_name2var_blob``) and a per-job stash; ``LazyRun`` /
``LaunchUserJob`` run a job, fed by the values ``AsyncPush`` callbacks write and read by
``AsyncPull`` callbacks, as OneFlow's runtime does. ``ConfigProto`` / ``JobConfigProto`` are the
session's and a job's configuration messages (field checks as protobuf's: an unknown field is an
AttributeError); a job's is built from its FunctionConfig (``FunctionDesc.job_config_proto``)."""
import enum
import itertools

_ids = itertools.count(1)


class _Message:
    """A configuration message: the fields of `_FIELDS` with their defaults, nothing else."""

    _FIELDS = {}

    def __init__(self, **fields):
        for k, v in self._FIELDS.items():
            object.__setattr__(self, k, v() if callable(v) else v)
        for k, v in fields.items():
            setattr(self, k, v)

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise AttributeError(f"{type(self).__name__} has no field '{name}'")
        object.__setattr__(self, name, value)

    def HasField(self, name):  # noqa: N802 - protobuf's name
        if name not in self._FIELDS:
            raise ValueError(f"{type(self).__name__} has no field '{name}'")
        default = self._FIELDS[name]
        return getattr(self, name) != (default() if callable(default) else default)

    def CopyFrom(self, other):  # noqa: N802
        if type(other) is not type(self):
            raise TypeError(f"CopyFrom: expected {type(self).__name__}, got {type(other).__name__}")
        for k in self._FIELDS:
            object.__setattr__(self, k, getattr(other, k))

    def __eq__(self, other):
        return type(other) is type(self) and all(getattr(self, k) == getattr(other, k) for k in self._FIELDS)

    def __repr__(self):
        set_fields = [f"{k}: {getattr(self, k)!r}" for k in self._FIELDS if self.HasField(k)]
        return f"{type(self).__name__}({', '.join(set_fields)})"


class ConfigProto(_Message):
    """A session's configuration: the libraries it loads, the profiler's settings, its resource
    (machines and devices: ``flow.current_resource()``) and its id."""

    _FIELDS = {"load_lib_path": list, "profiler_conf": dict, "resource": None, "session_id": 0}


class JobConfigProto(_Message):
    """A job's configuration, as a job function's FunctionConfig fills it."""

    class FlagName2flagValueEntry(_Message):
        _FIELDS = {"key": "", "value": None}

    _FIELDS = {
        "job_name": "", "train_conf": None, "predict_conf": None, "signature": None, "default_data_type": None,
        "default_initializer_conf": None, "default_initialize_with_snapshot_path": "",
        "num_gradient_accumulation_steps": 1, "concurrency_width": 128, "cudnn_buf_limit_mbyte": 1024,
        "cudnn_conv_enable_pseudo_half": False, "cudnn_conv_force_bwd_data_algo": -1,
        "cudnn_conv_force_bwd_filter_algo": -1, "cudnn_conv_force_fwd_algo": -1,
        "cudnn_conv_heuristic_search_algo": True, "cudnn_conv_use_deterministic_algo_only": False,
        "do_parallel_cast_before_widening_type_cast": True, "enable_auto_mixed_precision": False,
        "enable_cudnn": True, "enable_cudnn_fused_normalization_add_relu": False, "enable_fuse_add_to_output": False,
        "enable_fuse_cast_scale": False, "enable_fuse_model_update_ops": False,
        "enable_gradients_stats_aggregation": True, "enable_inplace": True, "enable_inplace_in_reduce_struct": True,
        "enable_quantization_aware_training": False, "enable_reuse_mem": True, "flag_name2flag_value": dict,
        "indexed_slices_optimizer_conf": None, "logical_object_id": 0, "memory_allocation_algorithm_conf": None,
        "optimizer_placement_optimization_mode": "", "optimizer_placement_optimization_threshold": 1024,
        "prune_amp_white_identity_ops": False, "prune_cast_to_static_shape_ops": True,
        "prune_parallel_cast_ops": True, "qat_config": None, "xrt_config": None,
    }
    # FunctionConfig properties whose field has another name
    _RENAMED = {"enable_reused_mem": "enable_reuse_mem", "enable_qat": "enable_quantization_aware_training",
                "qat": "qat_config", "train": "train_conf"}

    @classmethod
    def of_job(cls, name, job_type, knobs):
        """The message of job `name` ("train" / "predict") configured by FunctionConfig `knobs`:
        each property with a field sets it; the others (xla / tensorrt switches, all-reduce
        grouping, ...) go to flag_name2flag_value."""
        from .. import float32
        conf = cls(job_name=name, default_data_type=float32)
        if job_type == "train":
            conf.train_conf = {}
        else:
            conf.predict_conf = {}
        for k, v in knobs.items():
            field = cls._RENAMED.get(k, k)
            if field in cls._FIELDS:
                setattr(conf, field, v)
            else:
                conf.flag_name2flag_value[k] = cls.FlagName2flagValueEntry(key=k, value=v)
        if job_type == "train" and conf.train_conf is None:
            conf.train_conf = {}
        return conf


class SessionStatus(enum.Enum):
    OPEN = 1
    RUNNING = 2
    CLOSED = 3


class _PushedBlob:
    """What an AsyncPush callback fills: ``CopyFromNdarray(array)``."""

    def __init__(self):
        self.value = None

    def CopyFromNdarray(self, array):  # noqa: N802 - OneFlow's name
        self.value = array


class _InterUserJobInfo:
    """Which job feeds each input op and which one each output op is pulled from."""

    def __init__(self, session):
        self.input_or_var_op_name2push_job_name = {}
        self.output_or_var_op_name2pull_job_name = {}
        for job in session._jobs.values():
            for op in _inputs(job):
                self.input_or_var_op_name2push_job_name[op] = job.name
            self.output_or_var_op_name2pull_job_name[_output(job)] = job.name
        self.global_model_init_job_name = self.global_model_load_job_name = self.global_model_save_job_name = ""


def _inputs(job):
    import inspect
    return [f"{job.name}.{p}" for p in inspect.signature(job.fn).parameters]


def _output(job):
    return f"{job.name}.return"


class _SnapshotManager:
    """The session's snapshots of its variables: ``save(path)`` / ``load(path)`` (CheckPoint's
    layout), ``latest`` the last path saved or loaded."""

    def __init__(self):
        self.latest = None

    def save(self, path):
        from .variables import CheckPoint
        CheckPoint().save(path)
        self.latest = path

    def load(self, path):
        from .variables import CheckPoint
        CheckPoint().load(path)
        self.latest = path


class Session:
    """A session of the job-function API. The default one (``default_session()``) registers every
    job function made while it is open; ``flow.clear_default_session()`` closes it and opens a new
    one."""

    def __init__(self, sess_id=None):
        from .runtime import current_resource
        self._id = next(_ids) if sess_id is None else int(sess_id)
        self._status = SessionStatus.OPEN
        self._config = ConfigProto(session_id=self._id, resource=current_resource())
        self._jobs = {}            # job name -> GlobalFunction
        self._interface = {}       # interface op name -> op attribute
        self._pushes, self._pulls = {}, {}  # op name -> callback waiting for the next run
        self._lazy_blobs = {}
        self._job_stash, self._var_stash = {}, {}
        self._backward_blobs = {}

    # ---- properties ----
    @property
    def id(self):
        return self._id

    @property
    def status(self):
        return self._status

    @property
    def is_running(self):
        return self._status is SessionStatus.RUNNING

    @property
    def config_proto(self):
        return self._config

    @property
    def resource(self):
        return self._config.resource

    @property
    def function_flag_name2default_val(self):
        """Each FunctionConfig property and its value when a job does not set it (the fields of
        JobConfigProto's defaults; None where the runtime decides)."""
        from ._job_state import _KNOBS
        defaults = JobConfigProto()
        return {k: getattr(defaults, JobConfigProto._RENAMED.get(k, k), None) for k in _KNOBS}

    @property
    def scope_attr_name2default_val(self):
        return {"device_tag": "cpu", "machine_device_ids": ["0:0"], "is_mirrored": False, "name_scopes": []}

    @property
    def var_name2var_blob(self):
        from .variables import _variables
        return dict(_variables)

    @property
    def interface_ops(self):
        ops = set(self._interface)
        for job in self._jobs.values():
            ops.update(_inputs(job))
            ops.add(_output(job))
        return ops

    @property
    def inter_user_job_info(self):
        return _InterUserJobInfo(self)

    @property
    def job_name2name_scope_stack(self):
        from ._job_state import current_job
        from .variables import _scopes
        job = current_job()
        return {job.fn.name: list(_scopes)} if job is not None else {}

    @property
    def uuid2watch_handler(self):
        """The handlers of flow.watch / watch_diff in the session's jobs, by a key per watch."""
        out = {}
        for job in self._jobs.values():
            for c, compiled in enumerate(job._compiled.values()):
                for k, (_, _, _, handler) in enumerate(compiled.job.watchers):
                    out[f"{job.name}/{c}/watch_{k}"] = handler
        return out

    @property
    def snapshot_mgr(self):
        if not hasattr(self, "_snapshots"):
            self._snapshots = _SnapshotManager()
        return self._snapshots

    @property
    def backward_blob_register(self):
        return self._backward_blobs

    # ---- jobs ----
    def _register(self, job):
        self._jobs[job.name] = job

    def _check_open(self, what):
        if self._status is SessionStatus.CLOSED:
            raise RuntimeError(f"Session.{what}: session {self._id} is closed")

    def AddInfo4InterfaceOpName(self, interface_op_name, op_attribute):  # noqa: N802
        self._interface[interface_op_name] = op_attribute

    def AsyncPush(self, op_name, push_data_cb):  # noqa: N802
        """The next run of the job whose input `op_name` is ("<job>.<parameter>") takes that
        input from push_data_cb(blob), which writes it with blob.CopyFromNdarray(array)."""
        if op_name not in self.interface_ops:
            raise KeyError(f"Session.AsyncPush: no input op named {op_name!r}")
        self._pushes[op_name] = push_data_cb

    def AsyncPull(self, op_name, pull_data_cb):  # noqa: N802
        """The next run of the job whose output is `op_name` ("<job>.return") calls
        pull_data_cb(result)."""
        if op_name not in self.interface_ops:
            raise KeyError(f"Session.AsyncPull: no output op named {op_name!r}")
        self._pulls[op_name] = pull_data_cb

    def LazyRun(self, job_func, *arg):  # noqa: N802
        """Runs job function `job_func` (compiled): with `arg`, or with the inputs its pending
        AsyncPush callbacks write; a pending AsyncPull callback receives the result."""
        self._check_open("LazyRun")
        name = getattr(job_func, "name", None)
        if self._jobs.get(name) is not job_func:
            raise ValueError(f"Session.LazyRun: {job_func!r} is not a job function of session {self._id}")
        if not arg:
            ops = _inputs(job_func)
            missing = [op for op in ops if op not in self._pushes]
            if missing and ops:
                raise RuntimeError(f"Session.LazyRun: job {name} needs its inputs: pass them or AsyncPush {missing}")
            values = []
            for op in ops:
                blob = _PushedBlob()
                self._pushes.pop(op)(blob)
                values.append(blob.value)
            arg = tuple(values)
        self._status = SessionStatus.RUNNING
        result = job_func(*arg)
        pull = self._pulls.pop(_output(job_func), None)
        if pull is not None:
            _hand_over(job_func, result, pull)
        return result

    LaunchUserJob = LazyRun

    def EagerRun(self, function_desc, *arg):  # noqa: N802
        """Runs the job that `function_desc` (current_global_function_desc() or its job name)
        describes eagerly: its Python on every op, blobs with values."""
        from . import _job_state as job_state
        name = getattr(function_desc, "job_name", function_desc)
        if name not in self._jobs:
            raise KeyError(f"Session.EagerRun: no job function {name!r} in session {self._id}")
        saved = list(job_state._eager_jobs)
        job_state._eager_jobs[0] = True
        try:
            return self.LazyRun(self._jobs[name], *arg)
        finally:
            job_state._eager_jobs[:] = saved

    def FindOrCreateLazyBlob(self, op_name, Create):  # noqa: N802,N803 - OneFlow's names
        if op_name not in self._lazy_blobs:
            self._lazy_blobs[op_name] = Create()
        return self._lazy_blobs[op_name]

    def StashJob(self, job_name=None, key=None):  # noqa: N802
        """Keeps job `job_name` (the one being defined when None) under `key` (its name)."""
        from ._job_state import current_job
        if job_name is None:
            job = current_job()
            if job is None:
                raise RuntimeError("Session.StashJob: no job is being defined; give job_name")
            job_name = job.fn.name
        if job_name not in self._jobs:
            raise KeyError(f"Session.StashJob: no job function {job_name!r}")
        self._job_stash[key if key is not None else job_name] = self._jobs[job_name]

    def StashVariableBlob4Job(self, job_name, var_name, var_blob):  # noqa: N802
        self._var_stash.setdefault(job_name, {})[var_name] = var_blob

    def TryGetVariableBlobOfJobFromStash(self, job_name, var_name):  # noqa: N802
        """(the stashed variable blob, True), or (None, False)."""
        blobs = self._var_stash.get(job_name, {})
        return (blobs[var_name], True) if var_name in blobs else (None, False)

    def _close(self):
        self._status = SessionStatus.CLOSED
        self._jobs.clear()
        self._pushes.clear()
        self._pulls.clear()

    def __repr__(self):
        return f"Session(id={self._id}, status={self._status.name}, jobs={sorted(self._jobs)})"


def _hand_over(job, result, pull):
    """A pending AsyncPull callback gets the job's result: at once from a synchronous job, after
    the run from a queued one (a tp.Callback job's launcher, an old-style job's future)."""
    from .. import typing as tp
    if isinstance(job.ret, tp._CallbackOf):
        result(pull)
    elif hasattr(result, "async_get"):
        result.async_get(pull)
    else:
        pull(result)


_default = [None]


def default_session():
    if _default[0] is None:
        _default[0] = Session()
    return _default[0]


def reset_default_session():
    """flow.clear_default_session(): the open session closes, a new one opens."""
    if _default[0] is not None:
        _default[0]._close()
    _default[0] = Session()


class MultiClientSession:
    """The session of a multi-process (multi-client) job: every process holds one, initialized
    when made and closed by TryClose()."""

    class Status(enum.Enum):
        CREATED = 1
        INITED = 2
        CLOSED = 3

    def __init__(self, sess_id=None):
        from .runtime import current_resource
        self._id = next(_ids) if sess_id is None else int(sess_id)
        self._config = ConfigProto(session_id=self._id, resource=current_resource())
        self._status = MultiClientSession.Status.INITED

    id = property(lambda self: self._id)
    status = property(lambda self: self._status)
    config_proto = property(lambda self: self._config)
    resource = property(lambda self: self._config.resource)
    is_running = property(lambda self: self._status is MultiClientSession.Status.INITED)
    function_flag_name2default_val = Session.function_flag_name2default_val
    scope_attr_name2default_val = Session.scope_attr_name2default_val

    def TryClose(self):  # noqa: N802
        self._status = MultiClientSession.Status.CLOSED

    def __repr__(self):
        return f"MultiClientSession(id={self._id}, status={self._status.name})"
