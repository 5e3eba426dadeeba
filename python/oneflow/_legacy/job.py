"""Job functions (spec 003): ``@flow.global_function(type, function_config)``.

A job function is traced on its first call with a given input signature, like ``nn.Graph``
(python/oneflow/nn/graph/graph.py, on the same tracer): its placeholders become lazy tensors, the
legacy op signatures of the spec are in place while it runs (``_legacy/ops.py``: ``flow.matmul(a,
b, transpose_b=True)``...), variables come from ``flow.get_variable``. A "train" job must call
``flow.optimizer.X(...).minimize(loss)``: the program stops there for the backward pass, and each
call ends with the regularizers, the optimizer's update at the scheduler's learning rate and
cleared gradients. Calls take numpy arrays and return numpy as the return annotation says
(``oneflow.typing``). ``flow.watch`` / ``flow.watch_diff`` hand a blob's value / gradient to a
handler after each call.

With ``flow.enable_eager_execution(True)`` a job function runs its Python on every call instead
(same results; blobs have values inside, so they can be printed).
"""
import contextlib
import inspect
import typing

import numpy as np

from .. import _oneflow_internal as _C
from .. import typing as tp
from ..nn.graph.graph import _Trace, _rebuild, run_program
from . import pending
from ._job_state import _KNOBS, _eager_jobs, _tls, current_job  # noqa: F401  (tests read job._KNOBS)
from .function_config import FunctionConfig, FunctionDesc, _cudnn_switches, _indexed_slices_names

_DYNAMIC = object()  # "run the job's Python" (GlobalFunction._compiled_call)


class _Job:
    """One call (or trace) of a job function in progress."""

    def __init__(self, fn, trace, device=None, placement=None):
        self.fn, self.trace, self.device = fn, trace, device
        self.placement = placement  # a global placement (flow.placement): Note [Jobs over several ranks]
        self.config, self.type = fn.config, fn.type
        self.variables = {}   # name -> variable used
        self.minimize = []    # (legacy optimizer, loss)
        self.watchers = []    # (kind, slot or -1, tensor or None, handler)
        self.rate_sources = {}  # id(legacy optimizer) -> (slot or -1, tensor or None): CustomScheduler
        self.blob_names = {}    # 0.x's logical blob name -> the blob it names in this call (blob_names.py)


class _NoMinimize(Exception):
    """A job of global_function(func_config) ran without minimize (GlobalFunction.__call__)."""


class _JobTrace(_Trace):
    minimizing = False  # set by Optimizer.minimize around its backward (the only one a job takes)
    global_tensors = True  # the global dispatcher traces through it (Note [Compiled jobs over several ranks])

    def record_backward(self, tensors, grads):
        """The backward of minimize(loss), reached through autograd.backward (which hands a global
        loss's local components and seeds): a step of the program."""
        if not self.minimizing:
            raise RuntimeError(f"{self.owner}: call flow.optimizer.X(...).minimize(loss) in a job function, "
                               "not backward()")
        self.barrier(self.backward_action(tensors, grads))


def current_global_function_desc():
    job = current_job()
    if job is None:
        raise RuntimeError("current_global_function_desc() is only available inside a job function")
    return FunctionDesc(job.fn.name, job.type, job.config)


# ---- inputs and outputs ----

def _placeholders(fn):
    hints = typing.get_type_hints(fn) if hasattr(fn, "__annotations__") else {}
    params = list(inspect.signature(fn).parameters.values())
    out = []
    for p in params:
        ann = fn.__annotations__.get(p.name)
        if ann is None and isinstance(p.default, tp._Placeholder):  # def job(x=flow.FixedTensorDef(...))
            ann = p.default
        if not isinstance(ann, tp._Placeholder):
            raise TypeError(f"job function {fn.__name__}: annotate argument '{p.name}' with a placeholder "
                            "(oneflow.typing.Numpy.Placeholder(shape, dtype), ...)")
        out.append(ann)
    return out, hints.get("return", fn.__annotations__.get("return", inspect.Signature.empty))


def convert_oneflow_dtype_to_numpy_dtype(oneflow_dtype):
    """The numpy dtype of a oneflow dtype (bfloat16 has none)."""
    from .._tensor import _NP_TO_FLOW
    for np_dt, dt in _NP_TO_FLOW.items():
        if dt == oneflow_dtype and np_dt.itemsize == dt.itemsize:
            return np_dt
    raise TypeError(f"{oneflow_dtype} has no numpy dtype")


_np_dtype = convert_oneflow_dtype_to_numpy_dtype


def _input_tensor(name, k, ph, value):
    from .. import from_numpy
    want = _np_dtype(ph.dtype)
    if ph.kind == "Numpy":
        a = np.asarray(value)
        if a.shape != ph.shape:
            raise ValueError(f"job function {name}: argument {k} must have shape {ph.shape}, got {a.shape}")
    elif ph.kind == "ListNumpy":
        if isinstance(value, np.ndarray):  # the one device's array itself (spec 003's cast_to_static_shape)
            value = [value]
        if not isinstance(value, (list, tuple)) or len(value) != 1:
            raise ValueError(f"job function {name}: argument {k} (ListNumpy) must be a list of one ndarray "
                             "per device (one device here)")
        a = np.asarray(value[0])
        if a.ndim != len(ph.shape) or any(d > m for d, m in zip(a.shape, ph.shape)):
            raise ValueError(f"job function {name}: argument {k} has shape {a.shape}, more than the "
                             f"placeholder's {ph.shape}")
    else:  # ListListNumpy: a TensorList, arrays of at most the placeholder's shape after the first dimension
        from .._tensor_buffer import TensorList
        if not isinstance(value, (list, tuple)) or len(value) != 1 or not isinstance(value[0], (list, tuple)):
            raise ValueError(f"job function {name}: argument {k} (ListListNumpy) must be a list (one device) of "
                             "lists of ndarrays")
        items = [np.asarray(v) for v in value[0]]
        inst = ph.shape[1:]
        if len(items) > ph.shape[0]:
            raise ValueError(f"job function {name}: argument {k} has {len(items)} arrays, at most {ph.shape[0]}")
        out = TensorList()
        for a in items:
            if a.ndim == len(ph.shape) and a.shape[0] == 1:  # an instance given with its leading 1
                a = a[0]
            if a.ndim != len(inst) or any(d > m for d, m in zip(a.shape, inst)):
                raise ValueError(f"job function {name}: argument {k} has an array of shape {a.shape}, more than {inst}")
            if a.dtype != want and a.dtype.kind != want.kind:
                raise TypeError(f"job function {name}: argument {k} must be {want}, got {a.dtype}")
            out.append(from_numpy(np.ascontiguousarray(a.astype(want, copy=False))))
        return out
    if a.dtype != want:
        if a.dtype.kind != want.kind:
            raise TypeError(f"job function {name}: argument {k} must be {want}, got {a.dtype}")
        a = a.astype(want)
    return from_numpy(np.ascontiguousarray(a))


def _convert(value, ann, name):
    """A job's returned blob(s) as the return annotation says."""
    origin = typing.get_origin(ann)
    if origin in (tuple, list):
        args = typing.get_args(ann)
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"job function {name}: returns {type(value).__name__}, annotated {ann}")
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(value):
                raise TypeError(f"job function {name}: returns {len(value)} values, annotated {len(args)}")
            items = [_convert(v, a, name) for v, a in zip(value, args)]
        else:
            inner = args[0] if args else tp.Numpy
            items = [_convert(v, inner, name) for v in value]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        inner = typing.get_args(ann)[1]
        return {k: _convert(v, inner, name) for k, v in value.items()}
    from .._tensor_buffer import TensorBuffer
    if isinstance(value, TensorBuffer):
        value = list(value.elements)
    if isinstance(value, list) and ann is tp.ListListNumpy:  # a TensorList
        return [[_host_numpy(t) for t in value]]
    if not isinstance(value, _C.Tensor):
        raise TypeError(f"job function {name}: must return blobs (or containers of blobs), got {type(value).__name__}")
    if ann is tp.Numpy:
        return _host_numpy(value)
    if ann is tp.ListNumpy:
        return [_host_numpy(value)]
    if ann is tp.ListListNumpy:
        return [[_host_numpy(value)]]
    raise TypeError(f"job function {name}: unsupported return annotation {ann!r}")


class _Compiled:
    def __init__(self, program, out_spec, out_slots, out_consts, barriers, job):
        self.program, self.out_spec, self.out_slots, self.out_consts = program, out_spec, out_slots, out_consts
        self.barriers, self.job = barriers, job
        self.optimizers = []  # (legacy optimizer, flow optimizer)


class GlobalFunction:
    """The callable ``@flow.global_function`` makes."""

    def __init__(self, fn, job_type, config):
        if job_type not in ("train", "predict"):
            raise ValueError(f"global_function: type must be 'train' or 'predict', got {job_type!r}")
        self.fn, self.type, self.config, self.name = fn, job_type, config or FunctionConfig(), fn.__name__
        self.placeholders, self.ret = _placeholders(fn)
        # inputs as default values (flow.FixedTensorDef): results come back as futures (.get())
        # (and a job of neither parameters nor return annotation, as 0.x's benchmarks' TrainNet().async_get(cb))
        params = inspect.signature(fn).parameters
        self.old_style = any(fn.__annotations__.get(n) is None for n in params) or (
            not params and "return" not in fn.__annotations__)
        self._type_from_minimize = False  # global_function(func_config): "train" until a call shows no minimize
        self._compiled = {}
        self._eager_optimizers = {}
        self._device = None
        self._placement = None  # Note [Jobs over several ranks]
        self._dynamic = False  # set when tracing needed values: the job runs eagerly
        self._qat_plans = {}  # signature -> its QAT chains' plan (Note [QAT chains], qat.py), for eager calls
        self.train_step = 0
        self.__doc__, self.__name__ = fn.__doc__, fn.__name__
        from .session import default_session
        default_session()._register(self)

    def __call__(self, *args):
        """Runs the job. A job answering through a callback (``-> tp.Callback[...]``) or a future
        (no annotations: ``job(x).get()`` / ``.async_get(cb)``) is queued and returns at once,
        as OneFlow 0.x's runtime does (pending.py); the others wait for the queued jobs, run and
        return the converted result."""
        if len(args) != len(self.placeholders):
            raise TypeError(f"job function {self.name} takes {len(self.placeholders)} arguments, got {len(args)}")
        callback = isinstance(self.ret, tp._CallbackOf)
        asynchronous = callback or (self.ret is inspect.Signature.empty and self.old_style)
        if asynchronous:  # the caller may refill its arrays before the job runs
            args = tuple(_copy_arg(a) for a in args)
        # arguments are checked now: a wrong one raises at the call, not at the next sync
        tensors = [_input_tensor(self.name, k, ph, a) for k, (ph, a) in enumerate(zip(self.placeholders, args))]
        if not asynchronous:
            pending.sync()  # jobs run in the order they were called
            value = self._execute(tensors)
            if self.ret in (None, type(None)) or value is None:
                return None
            return _convert(value, self.ret, self.name)
        fut = pending.submit(f"job function {self.name}", lambda: self._execute(tensors))
        if not callback:
            return _Futures(fut)  # the old style: job(x).get().numpy()
        inner, name = self.ret.inner, self.name

        def launched(cb):
            fut.add_callback(lambda value: cb(_convert(value, inner, name) if value is not None else None))
        return launched

    def _execute(self, tensors):
        """One run of the job on `tensors` (the caller's thread or the queue's worker), under the
        cuDNN switches its FunctionConfig sets."""
        with _cudnn_switches(self.config.function_desc):
            return self._execute_on(tensors)

    def _execute_on(self, tensors):
        if self._device is not None:  # a placement scope moved the job (scope.py)
            tensors = [_to(t, self._device) for t in tensors]
        from .qat import before_run
        before_run(self)  # (its observers read the train step)
        # TensorList inputs have shapes of their own at every call: such jobs run their Python
        try:
            value = self._compiled_call(tensors)
            if value is _DYNAMIC:
                value = self._run_eager(tensors)
        except _NoMinimize:  # global_function(func_config) of a job without minimize: a predict job
            self.type, self._type_from_minimize = "predict", False
            self._compiled.clear()
            self._qat_plans.clear()
            self.__dict__.pop("_data_op_states", None)  # (its data ops start over)
            return self._execute_on(tensors)
        return value

    def _compiled_call(self, tensors):
        """The job run as a traced program, or _DYNAMIC when it must run its Python: eager mode,
        TensorList arguments (shapes of their own at every call), or a job that needs values
        while it is traced (data-dependent shapes such as where(condition) / argwhere, or reading
        values), which then always runs eagerly (the same results)."""
        if _eager_jobs[0] or self._dynamic or any(ph.kind == "ListListNumpy" for ph in self.placeholders):
            return _DYNAMIC
        if self._placement is not None:
            return self._compiled_global(tensors)
        key = _C._graph_key(*tensors)
        compiled = self._compiled.get(key)
        if compiled is None:
            try:
                compiled = self._trace(tensors)
            except _GoGlobal:
                return self._compiled_global(tensors)
            except RuntimeError as e:
                if "needs the tensor's values" not in str(e):
                    raise
                self._dynamic = True
                return _DYNAMIC
            if self._device is not None:  # a placement scope moved the job while it was traced
                tensors = [_to(t, self._device) for t in tensors]
                key = _C._graph_key(*tensors)
            self._compiled[key] = compiled
        return self._run(compiled, tensors)

    # the Python of the job, under the legacy names
    def _call_fn(self, job, args):
        from . import ops
        from .. import autocast
        prev = current_job()
        _tls.job = job
        desc = self.config.function_desc
        try:
            with ops.legacy_names(), contextlib.ExitStack() as scopes:
                if desc.get("default_placement_scope") is not None:  # checked by FunctionConfig
                    scopes.enter_context(desc["default_placement_scope"])
                if desc.get("enable_auto_mixed_precision"):
                    scopes.enter_context(autocast("cpu", dtype=_bf16()))
                out = self.fn(*args)
        finally:
            _tls.job = prev
        if self.type == "train" and not job.minimize and self._type_from_minimize:
            raise _NoMinimize()
        if self.type == "train" and not job.minimize:
            raise RuntimeError(f"job function {self.name}: a 'train' job must call "
                               "flow.optimizer.X(...).minimize(loss)")
        if out is not None and (self.ret is None or self.ret is type(None)):
            raise TypeError(f"job function {self.name}: returns a value, annotated -> None")
        if out is not None and self.ret is inspect.Signature.empty and not self.old_style:
            raise TypeError(f"job function {self.name}: annotate its return value (-> tp.Numpy, ...)")
        return out

    def _trace(self, tensors):
        from .scope import _PlacementMove, is_global
        try:
            return self._trace_on(tensors)
        except _PlacementMove as move:  # the job belongs on another device: start over there
            if is_global(move.device):  # (over several ranks: traced again on global tensors)
                self._placement = move.device
                raise _GoGlobal() from None
            self._device = move.device
            return self._trace_on([_to(t, move.device) for t in tensors])

    def _trace_on(self, tensors):
        from .. import enable_grad, no_grad
        device = _device_of(tensors, self._device)
        plan = self._qat_plan(tensors, device)
        tracer = _C._GraphTracer(device)
        lazies = [tracer.input(t) for t in tensors]
        trace = _JobTrace(tracer, f"job function {self.name}")
        job = _Job(self, trace, device)
        job.qat_plan = plan
        # grad mode is recorded per node: a train job's ops run with it on
        with trace.active(), (enable_grad() if self.type == "train" else no_grad()):
            out = self._call_fn(job, lazies)
        program, spec, slots, consts = trace.finish(out)
        compiled = _Compiled(program, spec, slots, consts, trace.barriers, job)
        for opt, _ in job.minimize:
            compiled.optimizers.append((opt, opt._make(opt._select(job))))
        return compiled

    def _qat_plan(self, tensors, device):
        """The plan of a quantization-aware job's convolution chains for a call on `tensors`,
        from a trace of its Python with nothing quantized (Note [QAT chains], qat.py); None for
        another job."""
        from .._grad_mode import enable_grad, no_grad
        from . import qat
        if not qat.enabled(self.config.function_desc):
            return None
        tracer = _C._GraphTracer(device)
        lazies = [tracer.input(t) for t in tensors]
        trace = _JobTrace(tracer, f"job function {self.name}")
        job = _Job(self, trace, device)
        job.qat_plan = qat.PLANNING
        with trace.active(), (enable_grad() if self.type == "train" else no_grad()):
            out = self._call_fn(job, lazies)
        return qat.plan(job, trace.finish(out)[0])

    def _eager_qat_plan(self, tensors, device):
        """_qat_plan for a call that runs the job's Python, once per signature; None when the
        trace needs values (the job's layers then decide alone: Note [QAT chains])."""
        if any(ph.kind == "ListListNumpy" for ph in self.placeholders):
            return None  # (tensor lists are not traced)
        key = _C._graph_key(*tensors)
        if key is None or key not in self._qat_plans:
            try:
                plan = self._qat_plan(tensors, device)
            except RuntimeError as e:
                if "needs the tensor's values" not in str(e):
                    raise
                plan = None
            if key is None:
                return plan
            self._qat_plans[key] = plan
        return self._qat_plans[key]

    def _run(self, compiled, tensors):
        from .. import enable_grad, no_grad
        job = compiled.job
        train = self.type == "train"
        for _, o in compiled.optimizers:
            o.zero_grad(set_to_none=True)
        ex = compiled.program.start(tensors)
        with (enable_grad() if train else no_grad()), self._amp():
            run_program(ex, compiled.barriers)
        outs = [ex.slot(s).detach() if s >= 0 else c for s, c in zip(compiled.out_slots, compiled.out_consts)]
        for kind, slot, var, handler in job.watchers:
            t = ex.slot(slot) if slot >= 0 else var
            _call_handler(handler, t if kind == "value" else t.grad)
        rates = {k: _rate_of(ex.slot(slot) if slot >= 0 else t) for k, (slot, t) in job.rate_sources.items()}
        del ex
        if train:
            self._update(job, [o for _, o in compiled.optimizers], [l for l, _ in compiled.optimizers], rates)
        return _rebuild(compiled.out_spec, outs)

    def _run_eager(self, tensors):
        from .. import enable_grad, no_grad
        from .scope import _PlacementMove, is_global
        if self._placement is not None:
            return self._run_global(tensors)
        try:
            device = _device_of(tensors, self._device)
            job = _Job(self, None, device)
            job.qat_plan = self._eager_qat_plan(tensors, device)
            with (enable_grad() if self.type == "train" else no_grad()):
                return self._call_fn(job, tensors)
        except _PlacementMove as move:
            if is_global(move.device):
                self._placement, self._dynamic = move.device, True
                return self._run_global(tensors)
            self._device = move.device
            return self._run_eager([_to(t, move.device) for t in tensors])

    # Note [Jobs over several ranks]
    # In a job of several processes (the launcher's), a placement scope names ranks (scope.py), and
    # a job whose Python enters one -- or whose FunctionConfig's default_placement_scope is one --
    # runs that Python on every call on global tensors over those ranks (docs/global_tensors.md):
    # its inputs become global tensors split along their first dim, its variables global tensors
    # broadcast (or split: get_variable's `distribute`, layers.dense's `model_distribute`), and
    # its ops, backward and optimizer steps those of global tensors (the gradient of a broadcast
    # variable is summed over the ranks by the boxing of the backward: data parallelism; that of a
    # split variable stays each rank's slice: model parallelism). The logical view says what the
    # processes pass and get back: in the consistent view (OneFlow's default) every process passes
    # the whole logical batch (the first rank's is taken) and gets whole results; in the mirrored
    # view (FunctionConfig.default_logical_view(flow.scope.mirrored_view()), or
    # default_distribute_strategy) each passes its own batch -- its slice of the logical one -- and
    # gets its own slice of results split along their first dim (other results whole). Every rank
    # runs every call (a rank outside the placement holds meta components: Note [Ranks outside a
    # placement]). Such a job is traced into a program as well (Note [Compiled jobs over several
    # ranks]); in eager mode, or when its trace needs values, it runs its Python at every call.
    # Note [Compiled jobs over several ranks]
    # A job over several ranks is traced as nn.Graph traces global tensors (docs/global_tensors.md,
    # "In nn.Graph"): the program's inputs are the local components of the globalized arguments,
    # the global dispatcher runs while the job's Python is traced so that the local ops it calls
    # are nodes, and what communicates (boxing, the broadcast of a variable's use) is a Python
    # step of the program that runs at every call on every rank, in the same order. The backward
    # is minimize's Python step, the optimizers step after the run on the global variables, as in
    # a one-device job. The tracer's autograd stays on (nn.Graph turns it off for global tensors):
    # the dispatcher decides by a traced component's requires_grad whether a broadcast input of a
    # split op needs BroadcastUse (the sum of its gradient over the ranks), and with autograd off
    # a traced op's output -- the transpose of a variable in layers.dense -- never requires grad,
    # so that sum would be lost (each rank would update with its own part). Every rank
    # traces and keys its program by the arguments' placements, SBPs and logical shapes. A job
    # whose trace needs values (data-dependent shapes, flow.data ops) runs its Python at every call
    # instead, as on one device, and so does a job whose placement leaves out some rank (that
    # rank's meta components, Note [Ranks outside a placement], are not traced).
    def _globalize(self, tensors):
        """A job's arguments as global tensors over its placement (Note [Jobs over several ranks])."""
        from .. import sbp
        from .._global.tensor import from_logical
        from .._tensor_buffer import TensorList
        pl = self._placement
        mirrored = self._mirrored()

        def globalize(t):  # (on a mesh: split over all its ranks, Note [Casts on a mesh] in distribute.py)
            if isinstance(t, TensorList):  # Note [Tensor lists over several ranks]: this rank's own
                return _to(t, pl.type)
            layout = (sbp.split(0) if t.ndim else sbp.broadcast,) * len(pl.hierarchy)
            if mirrored:
                return t.to_global(pl, layout)
            return from_logical(t, pl, layout, f"job function {self.name}")
        return [globalize(t.to(pl.type) if not isinstance(t, TensorList) and t.device.type != pl.type else t)
                for t in tensors]

    # Note [Tensor lists over several ranks]
    # A ListListNumpy argument was a mirrored blob in 0.x whatever the view: one list of arrays per
    # device, each device keeping its own TensorList, the tensor-list ops (tensor_list_to_tensor_buffer,
    # the image and object ops) running on each device's own list. So here: each process passes
    # its own device's list (the one-device form, [[arrays]]), which stays this rank's local
    # TensorList inside the job; the ops on it are local ops of each rank, and
    # flow.cast_to_current_logical_view (distribute.py) turns a rank's dense result into its part
    # of a global tensor split along dim 0 (the ranks' rows in rank order, their counts their own)
    # that meets the job's global variables; a local result comes back as each process's own.
    # Such jobs run their Python at every call (tensor lists do on one device too).
    def _compiled_global(self, tensors):
        """A job over several ranks run as a program (Note [Compiled jobs over several ranks]), or
        _DYNAMIC when its trace needs values."""
        from .. import env
        from ..nn.graph.graph import _flatten, _key, _signature
        if set(self._placement.ranks.reshape(-1).tolist()) != set(range(env.get_world_size())):
            self._dynamic = True  # (some rank outside the placement: every rank runs the Python)
            return _DYNAMIC
        gs = self._globalize(tensors)
        parts = []
        spec = _flatten(gs, parts)
        key = ("global", _key(spec), _signature(parts))
        compiled = self._compiled.get(key)
        if compiled is None:
            try:
                compiled = self._trace_global(spec, parts)
            except RuntimeError as e:
                if "needs the tensor's values" not in str(e):
                    raise
                self._dynamic = True
                return _DYNAMIC
            self._compiled[key] = compiled
        out = self._run(compiled, parts)
        return _mirror_results(out) if self._mirrored() else out

    def _trace_global(self, spec, parts):
        from .._grad_mode import enable_grad, no_grad
        from ..nn.graph.graph import _rebuild as rebuild
        from .scope import _PlacementMove
        pl = self._placement
        device = parts[0].device if parts else pl.type
        tracer = _C._GraphTracer(device)

        trace = _JobTrace(tracer, f"job function {self.name}")
        job = _Job(self, trace, None, pl)
        args = rebuild(spec, [tracer.input(t) for t in parts])
        try:
            with trace.active(), (enable_grad() if self.type == "train" else no_grad()):
                out = self._call_fn(job, args)
        except _PlacementMove as move:
            raise ValueError(f"job function {self.name}: runs over {pl.ranks.tolist()} and entered a placement "
                             f"over {move.device}: a job over several ranks has one placement") from None
        program, out_spec, slots, consts = trace.finish(out)
        compiled = _Compiled(program, out_spec, slots, consts, trace.barriers, job)
        for opt, _ in job.minimize:
            compiled.optimizers.append((opt, opt._make(opt._select(job))))
        return compiled

    def _mirrored(self):
        desc = self.config.function_desc
        views = [desc.get("default_logical_view"), desc.get("default_distribute_strategy")]
        return any(getattr(v, "name", None) == "mirrored_view" for v in views)

    def _run_global(self, tensors):
        from .._grad_mode import enable_grad, no_grad
        pl = self._placement
        mirrored = self._mirrored()
        gs = self._globalize(tensors)
        from .scope import _PlacementMove
        job = _Job(self, None, None, pl)
        try:
            with (enable_grad() if self.type == "train" else no_grad()):
                out = self._call_fn(job, gs)
        except _PlacementMove as move:
            raise ValueError(f"job function {self.name}: runs over {pl.ranks.tolist()} and entered a placement "
                             f"over {move.device}: a job over several ranks has one placement") from None
        return _mirror_results(out) if mirrored else out

    def _update(self, job, flow_opts, legacy_opts, rates=None):
        """OneFlow's order: variable gradients divided by the loss's element count (the loss of a
        job is the mean of its instances) and the loss scale, regularizers, clipping, update
        (at the schedule's rate, or the one `rates` has for the optimizer: CustomScheduler)."""
        rates = rates or {}
        from .variables import regularizer
        legacy = job.minimize[0][0] if job.minimize else None
        n = job.minimize[0][1].numel() if job.minimize else 1
        if legacy is not None and legacy.loss_scale_factor is not None:
            n *= legacy.loss_scale_factor
        for name, var in job.variables.items():
            if var.grad is not None and n != 1:
                var.grad.div_(n)
            reg = regularizer(name)
            if reg is not None:
                reg.apply(var)
        finite = {}  # a dynamic loss scale moves once per step (CombinedOptimizer's parts share it)
        for legacy, opt in zip(legacy_opts, flow_opts):
            policy = legacy.loss_scale_policy
            if policy is not None and id(policy) not in finite:
                finite[id(policy)] = policy.step_ok([p for lo, o in zip(legacy_opts, flow_opts)
                                                     if lo.loss_scale_policy is policy
                                                     for g in o.param_groups for p in g["params"]])
            if policy is not None and not finite[id(policy)]:
                continue  # dynamic loss scale: a step with non-finite gradients is skipped
            if legacy.grad_clipping is not None:
                legacy.grad_clipping.apply([p for g in opt.param_groups for p in g["params"]])
            legacy._set_lr(opt, self.train_step, rates.get(id(legacy)))
            with self._indexed_slices(job, legacy, opt):
                opt.step()
            opt.zero_grad(set_to_none=True)
        for var in job.variables.values():  # (those no optimizer updates too: variables= subsets)
            var.grad = None
        self.train_step += 1

    def _indexed_slices(self, job, legacy, opt):
        """0.x's indexed-slices update of the variables FunctionConfig.indexed_slices_optimizer_conf
        names (update_rules.IndexedSlices): as its rewrite pass, for SGD (naive or momentum, SGDW
        too) and Adam (AdamW too) and variables without a regularizer; else nothing."""
        from .update_rules import IndexedSlices
        from .variables import regularizer
        conf = self.config.function_desc.get("indexed_slices_optimizer_conf")
        names = _indexed_slices_names(conf) if conf else ()
        if not names or not legacy.indexed_slices:
            return contextlib.nullcontext()
        ids = {id(v) for n, v in job.variables.items() if n in names and regularizer(n) is None}
        return IndexedSlices(opt, [p for g in opt.param_groups for p in g["params"] if id(p) in ids])

    def _amp(self):
        import contextlib
        from .. import autocast
        if self.config.function_desc.get("enable_auto_mixed_precision"):
            return autocast("cpu", dtype=_bf16())
        return contextlib.nullcontext()


class _GoGlobal(Exception):
    """A traced job entered a placement over several ranks: it runs on global tensors instead."""


def _mirror_results(value):
    """A mirrored job's results on this rank: its slice of those split along their first dim."""
    if isinstance(value, (list, tuple)):
        return type(value)(_mirror_results(v) for v in value)
    if isinstance(value, dict):
        return {k: _mirror_results(v) for k, v in value.items()}
    if getattr(value, "is_global", False):
        s = value.sbp[0] if isinstance(value.sbp, tuple) else value.sbp
        if getattr(s, "_kind", None) == "S" and s._dim == 0:
            return value.to_local()
    return value


class _LocalBlob:
    """A returned blob of an old-style job (no return annotation)."""

    def __init__(self, t):
        self._t = t

    def numpy(self):
        return _host_numpy(self._t)

    ndarray = numpy

    def numpy_list(self):
        return [self.numpy()]

    def __repr__(self):
        return f"LocalBlob({self.numpy()!r})"


class _Futures:
    """``job(x).get()`` / ``.async_get(callback)`` of an old-style job (queued: pending.py):
    ``get()`` waits for the run and returns its blobs (None for a job returning nothing),
    ``async_get(cb)`` hands them to `cb` after the run, on the worker."""

    def __init__(self, future):
        self._future = future

    @staticmethod
    def _blobs(v):
        if v is None:
            return None
        if isinstance(v, (tuple, list)):
            return type(v)(_LocalBlob(t) for t in v)
        if isinstance(v, dict):
            return {k: _LocalBlob(t) for k, t in v.items()}
        return _LocalBlob(v)

    def get(self):
        return self._blobs(self._future.get())

    def async_get(self, callback):
        if not callable(callback):
            raise TypeError(f"async_get: the callback must be callable, got {type(callback).__name__}")
        self._future.add_callback(lambda v: callback(self._blobs(v)))


def _copy_arg(a):
    """An argument's arrays copied (lists of them too): a queued job reads them later."""
    if isinstance(a, (list, tuple)):
        return type(a)(_copy_arg(x) for x in a)
    return np.array(a, copy=True)


def _host_numpy(t):
    """A job's value as numpy: jobs placed on a GPU return device tensors; a bfloat16 blob (an
    AMP job's, enable_auto_mixed_precision) comes back as float32, numpy having no bfloat16."""
    t = t.detach().cpu()
    return (t.float() if t.dtype == _C.bfloat16 else t).numpy()


def _to(t, device):
    from .._tensor_buffer import TensorList
    if isinstance(t, TensorList):
        return TensorList(x.to(device) for x in t)
    return t.to(device)


def _device_of(tensors, default):
    """The device a job runs on: its placement's, else its inputs' (cpu without inputs)."""
    if default is not None:
        return default
    for t in tensors:
        t = t[0] if isinstance(t, list) and t else t
        if hasattr(t, "device"):
            return t.device
    return "cpu"


def _rate_of(blob):
    """A CustomScheduler's rate (optimizer.py): its one-value blob as a Python float."""
    return float(blob.detach().cpu().numpy().reshape(-1)[0])


def _bf16():
    from .. import bfloat16
    return bfloat16


def _trainable(name):
    from .variables import trainable
    return trainable(name)


def _call_handler(handler, t):
    """A watch handler gets the value as its annotation says (tp.Numpy by default); a string is a
    prompt to print with the value."""
    if t is None:
        raise RuntimeError("watch_diff: the watched blob has no gradient (it does not reach the loss)")
    if handler is None or isinstance(handler, str):
        print(handler or "", _host_numpy(t))
        return
    params = list(inspect.signature(handler).parameters.values())
    ann = handler.__annotations__.get(params[0].name, tp.Numpy) if params else tp.Numpy
    handler(_convert(t.detach(), ann if ann in (tp.Numpy, tp.ListNumpy, tp.ListListNumpy) else tp.Numpy, "watch"))


def global_function(type="predict", function_config=None):  # noqa: A002 - OneFlow's argument name
    """Turns a Python function into a job function (see the module's docstring)."""
    if callable(type) and function_config is None and not isinstance(type, str):
        return GlobalFunction(type, "predict", None)  # used bare: @flow.global_function

    if isinstance(type, FunctionConfig):
        # 0.x's older form global_function(func_config): the job trains when it calls minimize
        config = type

        def decorate(fn):
            job = GlobalFunction(fn, "train", config)
            job._type_from_minimize = True
            return job
        return decorate

    def decorate(fn):
        return GlobalFunction(fn, type, function_config)
    return decorate


def watch(blob_watched, handler_or_prompt=None):
    """After each call of the job, hands the blob's value to the handler."""
    _watch("value", blob_watched, handler_or_prompt)


def watch_diff(blob_watched, handler_or_prompt=None):
    """After each call of a train job, hands the blob's gradient to the handler."""
    _watch("diff", blob_watched, handler_or_prompt)


def _watch(kind, blob, handler):
    job = current_job()
    fname = "watch" if kind == "value" else "watch_diff"
    if job is None:
        raise RuntimeError(f"flow.{fname} is only available inside a job function")
    if not isinstance(blob, _C.Tensor):
        raise TypeError(f"flow.{fname}: expected a blob, got {type(blob).__name__}")
    if kind == "diff" and job.type != "train":
        raise RuntimeError("flow.watch_diff needs a 'train' job function")
    if job.trace is None:  # eager job: values now, gradients after minimize()
        if kind == "value":
            _call_handler(handler, blob)
        else:
            if not blob.is_leaf:
                blob.retain_grad()
            job.watchers.append((kind, -1, blob, handler))
        return
    slot = job.trace.tracer.slot_of(blob)
    if slot >= 0:
        job.trace.tracer.pin(slot)
        if kind == "diff":
            job.trace.barrier(lambda ex, s=slot: ex.slot(s).retain_grad())
    job.watchers.append((kind, slot, None if slot >= 0 else blob, handler))


def enable_eager_execution(val=True):
    """Tensors always run eagerly. Job functions are traced once and compiled unless this was
    called with True: then they run their Python on every call (same results; blobs have values
    inside the job). False turns that off again."""
    _eager_jobs[0] = bool(val)
    _eager_jobs[1] = True


def eager_execution_enabled():
    """True unless enable_eager_execution(False) was called (current OneFlow's default)."""
    return _eager_jobs[0] if _eager_jobs[1] else True
