"""Variables of the job-function API: ``flow.get_variable``, name scopes, ``flow.train.CheckPoint``.

A variable is a named tensor shared by every job function of the process (spec: "one variable
could be shared by multiple OneFlow functions"). It is created, with its initializer, by the first
``get_variable`` of its name, outside any trace (a job's program captures it by reference, so
later updates and loads are seen by every job).
"""
import collections.abc
import contextlib
import os

import numpy as np

from . import pending
from .initializers import InitializerConf, glorot_uniform_initializer

_variables = {}   # full name -> tensor
_specs = {}       # full name -> (initializer, regularizer, trainable)
_scopes = []      # flow.scope.namespace stack
# Note [Loaded before the first call]: OneFlow 0.x compiled every job function when its session
# started, so its variables existed before the first call and a script's `CheckPoint().load(dir)`
# (or `flow.load_variables(...)`) between defining the jobs and calling them set their values.
# Here a job makes its variables at its first call, so what a load cannot assign yet is kept: the
# snapshot directory of the last CheckPoint.load and the values load_variables had no variable
# for; a variable made later takes its value from them instead of its initializer (a snapshot
# without it is the RuntimeError load would have raised). CheckPoint.init() and
# clear_default_session() drop them.
_preset = {"dir": None, "values": {}}


@contextlib.contextmanager
def namespace(name):
    """``with flow.scope.namespace("encoder"):`` prefixes the variables (and names) created
    inside with "encoder-"."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"scope.namespace: name must be a non-empty str, got {name!r}")
    _scopes.append(name)
    try:
        yield
    finally:
        _scopes.pop()


def scoped_name(name):
    return "-".join(_scopes + [name])


@contextlib.contextmanager
def _untraced():
    """Creates tensors for real even while a job or graph is traced (initial values are not ops
    of the program; a global variable's first value is broadcast for real: the trace is out of
    the way of the global layer too, which moves nothing while one is current)."""
    from .. import _lazy_state
    from ._job_state import current_job
    job = current_job()
    tracer = job.trace.tracer if job is not None and job.trace is not None else None
    trace = _lazy_state.current()
    if tracer is not None:
        tracer.end()
        _lazy_state.set_current(None)
    try:
        yield
    finally:
        if tracer is not None:
            _lazy_state.set_current(trace)
            tracer.begin()


def _default_initializer():
    from ._job_state import current_job
    job = current_job()
    init = job.config.function_desc.get("default_initializer_conf") if job is not None else None
    if isinstance(init, dict):
        return initializer_of_message(init)
    return init or glorot_uniform_initializer()


def initializer_of_message(value):
    """0.x's InitializerConf message given as a dict (FunctionConfig.default_initializer_conf's
    form: ``{"constant_conf": {"value": 0.5}}``, one sub-message with its fields) as an
    initializer; a TypeError naming what is wrong."""
    from ..core.job.initializer_conf_pb2 import InitializerConf as Message
    if len(value) != 1 or not isinstance(next(iter(value.values())), dict):
        raise TypeError("default_initializer_conf: expected one InitializerConf sub-message as a dict, such as "
                        f"{{'constant_conf': {{'value': 0.5}}}}, got {value!r}")
    (kind, fields), = value.items()
    msg = Message()
    try:
        sub = getattr(msg, kind)
        for k, v in fields.items():
            setattr(sub, k, v)
    except AttributeError as e:
        raise TypeError(f"default_initializer_conf: {e}") from None
    sub.SetInParent()
    return msg


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                 model_name=None, random_seed=None, parallel_distribution=None, distribute=None, reuse=True):
    """Creates the variable `name` (in the current name scope) or returns the existing one."""
    from .. import float32, get_rng_state, manual_seed, set_rng_state
    from ._job_state import current_job
    if not isinstance(name, str) or not name:
        raise ValueError(f"get_variable: name must be a non-empty str, got {name!r}")
    full = scoped_name(name)
    job = current_job()
    if full in _variables:
        if not reuse:
            raise ValueError(f"get_variable: variable '{full}' already exists and reuse=False")
        var = _variables[full]
        if shape is not None and tuple(shape) != tuple(var.shape):
            raise ValueError(f"get_variable: variable '{full}' has shape {tuple(var.shape)}, asked for {tuple(shape)}")
        if job is not None:
            job.variables[full] = var
        return var
    if shape is None:
        raise ValueError(f"get_variable: the new variable '{full}' needs a shape")
    if initializer is not None and not isinstance(initializer, InitializerConf):
        raise TypeError(f"get_variable: initializer must come from flow.*_initializer, got {type(initializer).__name__}")
    if dtype is None:
        dtype = job.config.function_desc.get("default_data_type") if job is not None else None
    dtype = dtype or float32
    trainable = True if trainable is None else bool(trainable)
    init = initializer or _default_initializer()
    with _untraced():  # (a snapshot's value read in a trace would be a recorded tensor)
        preset = _preset_value(full, tuple(int(d) for d in shape), dtype)
        make = init if preset is None else _preset_init(preset)
        if random_seed is not None:
            state = get_rng_state()
            manual_seed(random_seed)
        try:
            var = make(tuple(int(d) for d in shape), dtype)
        finally:
            if random_seed is not None:
                set_rng_state(state)
        if job is not None and job.placement is not None:  # Note [Jobs over several ranks] (job.py)
            var = _global_variable(var, job.placement, distribute, full, parallel_distribution)
        var.requires_grad_(trainable and var.is_floating_point())
    _variables[full] = var
    _specs[full] = (init, regularizer, trainable)
    if job is not None:
        job.variables[full] = var
    return var


def is_variable(t):
    """Whether blob `t` is a variable itself (not a value computed from one)."""
    return any(v is t for v in _variables.values())


def _preset_value(name, shape, dtype):
    """The value a load before the variable's creation left for it, or None (Note [Loaded before
    the first call])."""
    from ..framework.serialization import _snapshot_format as snapshot
    value = _preset["values"].get(name)
    if value is None and _preset["dir"] is not None:
        d = os.path.join(_preset["dir"], *name.split("/"))
        if os.path.isfile(os.path.join(d, snapshot.DATA)):
            value = snapshot.read_variable(d, shape, dtype, f"CheckPoint.load: {name}")
        elif os.path.isfile(os.path.join(d, "out.npy")):
            value = np.load(os.path.join(d, "out.npy"))
        else:
            raise RuntimeError(f"CheckPoint.load: {_preset['dir']} has no values for ['{name}']")
    if value is not None and tuple(value.shape) != shape:
        raise ValueError(f"load_variables: '{name}' has shape {shape}, the loaded value {tuple(value.shape)}")
    return value


def _preset_init(value):
    """Makes the variable's first value from the loaded one (its initializer stays for init())."""
    from .._tensor import tensor as make_tensor
    def first(shape, dtype):
        v = value if hasattr(value, "numpy") and not isinstance(value, np.ndarray) else make_tensor(np.asarray(value))
        return v.to(dtype).clone()
    return first


def _global_variable(value, placement, distribute, name, parallel_distribution=None):
    """A new variable of a job over several ranks: the first rank's initial value, broadcast, or
    laid out as `parallel_distribution` (0.x's SBP strings or flow.distribute values, one per
    mesh axis of the placement) or `distribute` (flow.distribute.split(axis): one axis) says."""
    from .. import sbp
    from .._global.tensor import from_logical
    from .distribute import Distribute, nd_sbp
    where = f"get_variable {name}"
    if distribute is not None and not isinstance(distribute, Distribute):
        raise TypeError(f"get_variable: distribute must come from flow.distribute, got {distribute!r}")
    axes = len(placement.hierarchy)
    if parallel_distribution is not None:
        layout = nd_sbp(parallel_distribution, "get_variable")
        if len(layout) != axes:
            raise ValueError(f"get_variable: variable '{name}' has parallel_distribution {parallel_distribution!r} "
                             f"({len(layout)} axes) on a placement of hierarchy {placement.hierarchy}")
    else:
        one = distribute.sbp() if distribute is not None else None
        if one is not None and one != sbp.broadcast and axes > 1:
            raise ValueError(f"get_variable: variable '{name}': distribute is one axis, the placement has hierarchy "
                             f"{placement.hierarchy}: give parallel_distribution, one SBP per axis")
        layout = ((one or sbp.broadcast),) * axes
    for s in layout:
        if s != sbp.broadcast and s != sbp.partial_sum and s._dim >= value.ndim:
            raise ValueError(f"get_variable: variable '{name}' has {value.ndim} dims, cannot be split along {s._dim}")
    return from_logical(value, placement, layout, where).detach()


def get_all_variables():
    """{name: tensor} of every variable created so far."""
    return dict(_variables)


def trainable(name):
    return _specs[name][2]


def regularizer(name):
    return _specs[name][1]


def load_variables(value_dict, ignore_mismatch=True):
    """Assigns variables from {name: ndarray / tensor}; unknown names are skipped when
    ignore_mismatch, else a KeyError."""
    if not isinstance(value_dict, collections.abc.Mapping):
        raise TypeError(f"load_variables(): argument 'value_dict' (position 1) must be dict, not {type(value_dict).__name__}")
    from .. import no_grad, tensor as make_tensor
    pending.sync()  # after the queued job runs, as 0.x's model I/O ran after the jobs launched before it
    for name, value in value_dict.items():
        if name not in _variables:
            if ignore_mismatch:  # (kept for a variable a job makes later: Note [Loaded before the first call])
                _preset["values"][name] = value
                continue
            raise KeyError(f"load_variables: no variable named '{name}'")
        var = _variables[name]
        src = value if hasattr(value, "numpy") and not isinstance(value, np.ndarray) else make_tensor(np.asarray(value))
        if tuple(src.shape) != tuple(var.shape):
            raise ValueError(f"load_variables: '{name}' has shape {tuple(var.shape)}, the value {tuple(src.shape)}")
        with no_grad():
            var.copy_(src)


def clear():
    """Forgets every variable (flow.clear_default_session)."""
    _variables.clear()
    _specs.clear()
    _preset["dir"] = None
    _preset["values"] = {}


class CheckPoint:
    """The legacy checkpoint: ``init()`` (re)initializes every variable with its initializer,
    ``save(dir)`` writes them as OneFlow's snapshot, ``load(dir)`` reads one back."""

    def init(self):
        from .. import no_grad
        pending.sync()
        _preset["dir"] = None  # (later variables start from their initializers)
        _preset["values"] = {}
        with no_grad():
            for name, var in _variables.items():
                fresh = _specs[name][0](tuple(var.shape), var.dtype)
                var.copy_(fresh)

    def save(self, path):
        """Writes every variable as OneFlow's snapshot (framework/serialization/_snapshot_format.py): <path>/<name>/out
        and meta, then snapshot_done."""
        from ..framework.serialization import _snapshot_format as snapshot
        pending.sync()  # the values the queued job runs leave
        snapshot.write(path, _variables)

    def load(self, path):
        """Reads a snapshot (OneFlow's, or the .npy files this implementation wrote before)."""
        from ..framework.serialization import _snapshot_format as snapshot
        if not os.path.isdir(path):
            raise FileNotFoundError(f"CheckPoint.load: no checkpoint directory {path}")
        values = {}
        for name, var in _variables.items():
            d = os.path.join(path, *name.split("/"))
            if os.path.isfile(os.path.join(d, snapshot.DATA)):
                values[name] = snapshot.read_variable(d, tuple(var.shape), var.dtype, f"CheckPoint.load: {name}")
            elif os.path.isfile(os.path.join(d, "out.npy")):
                values[name] = np.load(os.path.join(d, "out.npy"))
        missing = sorted(set(_variables) - set(values))
        if missing:
            raise RuntimeError(f"CheckPoint.load: {path} has no values for {missing}")
        load_variables(values)
        _preset["dir"], _preset["values"] = path, {}  # Note [Loaded before the first call]
