"""``oneflow.nn.Graph``: a model's step traced once and run many times (docs/architecture.md §8).

The first call with a given input signature traces ``build()``: its inputs are lazy tensors (shape,
dtype, no data), every op it calls is recorded as a node of a program (src/graph/lazy.h, Note [Lazy
interception]) after the op's own meta inference, so a shape error is raised at trace time with the
eager message. Later calls with the same signature run the program on the real inputs without the
Python of ``build()``, its modules and hooks. A graph with an optimizer (``add_optimizer``) is a
training graph: ``loss.backward()`` inside ``build()`` marks where the program stops to run the
backward pass, and each call ends with the optimizers' steps, their LR schedulers' steps and cleared
gradients, as OneFlow's graph does its update inside the graph.

What is traced is what OneFlow's graph compiles: Python control flow and values read while tracing
(``x.shape``, ``self.training``) are fixed in the program; a new input shape or dtype, or another
non-tensor argument, traces again. Tensor values cannot be read inside ``build()`` (``item()``,
``numpy()`` raise): return the tensor instead.
"""
import contextlib
import copy
import inspect
import itertools

from ... import _lazy_state
from ... import _oneflow_internal as _C
from ..modules.module import Module
from .config import GraphConfig

_counter = itertools.count()


def _flatten(obj, tensors):
    """obj's structure with each tensor replaced by ("T", its index in `tensors`) (appended), each
    global tensor by ("G", (the index of its local component, placement, sbp, logical shape)) and
    every other leaf kept as ("C", leaf)."""
    if getattr(type(obj), "_oneflow_global_", False):  # (docs/global_tensors.md: global tensors in graphs)
        tensors.append(obj._local)
        return ("G", (len(tensors) - 1, obj._placement, obj._sbp, obj._shape))
    if isinstance(obj, _C.Tensor):
        tensors.append(obj)
        return ("T", len(tensors) - 1)
    if isinstance(obj, (list, tuple)):
        items = tuple(_flatten(o, tensors) for o in obj)
        if type(obj) in (list, tuple):
            return (type(obj).__name__, items)
        return ("seq", (type(obj), items))  # flow.Size, namedtuples: rebuilt as their type
    if isinstance(obj, dict):
        return ("dict", tuple((k, _flatten(v, tensors)) for k, v in obj.items()))
    return ("C", obj)


def _key(spec):
    """A hashable form of a structure from _flatten (the non-tensor arguments select a program)."""
    kind, val = spec
    if kind in ("T", "G"):
        return spec
    if kind in ("list", "tuple"):
        return (kind, tuple(_key(s) for s in val))
    if kind == "seq":
        return (kind, val[0], tuple(_key(s) for s in val[1]))
    if kind == "dict":
        return (kind, tuple((k, _key(s)) for k, s in val))
    try:
        hash(val)
        return (kind, type(val).__name__, val)
    except TypeError:
        return (kind, type(val).__name__, repr(val))


def _rebuild(spec, tensors, packed=False):
    """The structure of `spec` with its tensors from `tensors` (local components of its global
    tensors, wrapped again -- or, `packed`, the global tensors themselves)."""
    kind, val = spec
    if kind == "T":
        return tensors[val]
    if kind == "G":
        from ..._global.tensor import GlobalTensor
        index, placement, sbp, shape = val
        return tensors[index] if packed else GlobalTensor(tensors[index], placement, sbp, shape)
    if kind in ("list", "tuple"):
        items = [_rebuild(s, tensors, packed) for s in val]
        return items if kind == "list" else tuple(items)
    if kind == "seq":
        cls, items = val[0], [_rebuild(s, tensors, packed) for s in val[1]]
        return cls(*items) if hasattr(cls, "_fields") else cls(items)
    if kind == "dict":
        return {k: _rebuild(s, tensors, packed) for k, s in val}
    return val


def _globals(spec):
    """The ("G", ...) entries of a structure: (index, placement, sbp, logical shape) each."""
    kind, val = spec
    if kind == "G":
        return [val]
    if kind in ("list", "tuple"):
        return [g for s in val for g in _globals(s)]
    if kind == "seq":
        return [g for s in val[1] for g in _globals(s)]
    if kind == "dict":
        return [g for _, s in val for g in _globals(s)]
    return []


def _locals(spec, tensors):
    """The local tensors of a structure (not components of global ones)."""
    glob = {v[0] for v in _globals(spec)}
    return [t for k, t in enumerate(tensors) if k not in glob]


def _micro_batch(obj, i, n):
    """Micro-batch i of n of every tensor in obj: rows along dim 0 (of a global tensor's logical
    value, laid out again as it was)."""
    if getattr(type(obj), "_oneflow_global_", False):
        m = obj.shape[0] // n
        return obj[i * m:(i + 1) * m].to_global(sbp=obj.sbp)
    if isinstance(obj, _C.Tensor):
        m = obj.shape[0] // n
        return obj[i * m:(i + 1) * m]
    if isinstance(obj, (list, tuple)):
        items = [_micro_batch(o, i, n) for o in obj]
        if type(obj) in (list, tuple):
            return type(obj)(items)
        return type(obj)(*items) if hasattr(type(obj), "_fields") else type(obj)(items)
    if isinstance(obj, dict):
        return {k: _micro_batch(v, i, n) for k, v in obj.items()}
    return obj


def _signature(tensors):
    return tuple((tuple(t.shape), str(t.dtype), str(t.device), t.requires_grad) for t in tensors)


def _state(graph):
    """The graph's state (Note [Writes to free tensors], src/graph/free_writes.h): its modules'
    parameters and buffers, the tensors set as its attributes, its optimizers' parameters and
    state -- the tensors its program writes in place (global ones: their local components)."""
    found = []

    def add(t):
        if isinstance(t, _C.Tensor) or getattr(type(t), "_oneflow_global_", False):
            found.append(getattr(t, "_local", t))
    for m in graph._modules.values():
        for t in m.parameters():
            add(t)
        for t in m.buffers():
            add(t)
    for v in graph.__dict__.values():
        add(v)
    for opt, _ in graph._optimizers:
        for group in opt.param_groups:
            for t in group["params"]:
                add(t)
        for st in opt.state.values():
            for t in (st.values() if isinstance(st, dict) else ()):
                add(t)
    return found


def run_program(ex, barriers):
    """Runs an execution to its end, doing each barrier's Python step on the way."""
    while True:
        b = ex.run()
        if b < 0:
            return
        barriers[b](ex)


class _Compiled:
    """One traced program with the structure of its outputs and its barriers' actions."""

    def __init__(self, program, out_spec, out_slots, out_consts, barriers, pass_stats=None):
        self.program = program
        self.pass_stats = pass_stats or {}  # what each pass did: {"folded": 2, ...}
        self.out_spec = out_spec      # output structure: ("T", k) -> k-th output
        self.out_slots = out_slots    # per output: slot, or -1 for a captured tensor
        self.out_consts = out_consts  # per output: the captured tensor (or None)
        self.barriers = barriers      # barrier id -> action(execution) run there
        self.loss_scale = None        # the traced backward's seed factor (set before each run)
        self.backward_steps = []      # why a backward() stayed a Python step (Note [Backward nodes])
        self.inputs_original = None   # the tracing call's inputs (enable_save_runtime_state_dict)
        self.updates = []             # the optimizers' updates recorded as nodes (update_nodes.py)

    def stale(self):
        """An optimizer whose update is nodes here changed shape since the trace."""
        return any(u.stale() for u in self.updates)


class _Trace:
    """A program being traced: turns steps that are not ops (backward, watching a gradient) into
    barriers whose actions run in Python when the program reaches them."""

    def __init__(self, tracer, owner):
        self.tracer, self.owner = tracer, owner
        self.barriers = {}
        self.backward_calls = 0

    @contextlib.contextmanager
    def active(self):
        """Installs this trace (the C++ tracer on this thread, the Python state autograd reads)."""
        if _lazy_state.current() is not None:
            raise RuntimeError(f"{self.owner}: cannot be called while another graph or job function is traced")
        _lazy_state.set_current(self)
        self.tracer.begin()
        try:
            yield
        finally:
            self.tracer.end()
            _lazy_state.set_current(None)

    def finish(self, out):
        """(program, output structure, output slots, captured outputs) for `out`."""
        outs = []
        spec = _flatten(out, outs)
        slots = [self.tracer.slot_of(t) for t in outs]
        for s in slots:
            if s >= 0:
                self.tracer.output(s)
        return self.tracer.finish(), spec, slots, [t if s < 0 else None for t, s in zip(outs, slots)]

    def slot(self, t, what):
        s = self.tracer.slot_of(t)
        if s < 0:
            raise RuntimeError(f"{self.owner}: {what} is not computed by the traced function")
        self.tracer.pin(s)
        return s

    def barrier(self, action):
        self.barriers[self.tracer.barrier()] = action

    def backward_action(self, tensors, grads, scale=None):
        """The action of loss.backward() (one loss, an optional gradient computed in the trace)."""
        from ... import autograd
        if len(tensors) != 1:
            raise RuntimeError(f"{self.owner}: backward() takes one loss tensor")
        loss, grad = tensors[0], grads[0]
        slot = self.slot(loss, "the loss given to backward()")
        gslot = self.slot(grad, "backward()'s gradient") if grad is not None else -1
        if grad is None and loss.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        self.backward_calls += 1

        def run_backward(ex):
            value = ex.slot(slot)
            if scale is not None:
                value = scale(value)
            autograd.backward(value, ex.slot(gslot) if gslot >= 0 else None)
        run_backward.label = f"backward(%{slot})"
        run_backward.is_backward = True  # (where a pipeline schedule pauses a micro-batch: Note [1F1B])
        return run_backward


    def record_function(self, cls, args, kwargs):
        """An autograd.Function applied to lazy tensors: a Python step of the program that calls
        cls.apply on the real tensors (its forward and backward stay the user's Python)."""
        return self.record_call(cls.apply, args, kwargs)

    def _sources(self, args, kwargs):
        """(structure, slot per tensor or -1, the captured tensors) of a Python step's arguments."""
        tensors = []
        spec = _flatten((args, kwargs), tensors)
        slots = [self.tracer.slot_of(t) for t in tensors]
        return spec, slots, [None if s >= 0 else t for t, s in zip(tensors, slots)], tensors

    def record_call(self, fn, args, kwargs, meta_fn=None):
        """fn(*args, **kwargs) as a Python step of the program: when the program reaches it, fn
        runs on the real tensors (with the grad mode of the trace), building whatever autograd
        graph it builds. Its outputs' shapes come from `meta_fn` (default fn) applied now to meta
        copies of the arguments, with recording paused."""
        from ... import is_grad_enabled, no_grad, set_grad_enabled
        tracer = self.tracer
        spec, slots, consts, tensors = self._sources(args, kwargs)
        meta_args, meta_kwargs = _rebuild(spec, [t if s >= 0 else _C._to_meta(t) for t, s in zip(tensors, slots)])
        tracer.end()
        try:
            with no_grad():
                out = (meta_fn or fn)(*meta_args, **meta_kwargs)
        finally:
            tracer.begin()
        outs = []  # the output's tensors (global ones: their components), each a new slot
        _flatten(out, outs)
        grad_mode = is_grad_enabled()
        # (the meta outputs say whether the real ones will require grad: code after the step reads it)
        if grad_mode and any(t.requires_grad for t in tensors):
            for o in outs:
                if o.is_floating_point() or o.is_complex():
                    o.requires_grad_(True)
        out_slots = [tracer.add_slot(o) if o.is_meta and tracer.slot_of(o) < 0 else -1 for o in outs]

        def run_call(ex):
            real_args, real_kwargs = _rebuild(spec, [ex.slot(s) if s >= 0 else c for s, c in zip(slots, consts)])
            with set_grad_enabled(grad_mode and is_grad_enabled()):
                res = fn(*real_args, **real_kwargs)
            got = []
            _flatten(res, got)
            for s, o in zip(out_slots, got):
                if s >= 0:
                    ex.set_slot(s, o)
        run_call.label = getattr(fn, "__qualname__", type(fn).__name__)  # (the program's text names the step)
        self.barriers[tracer.barrier([s for s in slots if s >= 0], [s for s in out_slots if s >= 0])] = run_call
        return out

    def record_collective(self, fn, args, kwargs):
        """A collective (oneflow.distributed) called in build(): a step of the program that calls
        fn on the real tensors each run, writing them in place as the collective does (every rank
        traces the same program, so the ranks meet in the same collectives in the same order)."""
        spec, slots, consts, _ = self._sources(args, kwargs)

        def run_collective(ex):
            real_args, real_kwargs = _rebuild(spec, [ex.slot(s) if s >= 0 else c for s, c in zip(slots, consts)])
            fn(*real_args, **real_kwargs)
        run_collective.label = getattr(fn, "__name__", "collective")
        self.barriers[self.tracer.barrier([s for s in slots if s >= 0], [])] = run_collective


class _GraphTrace(_Trace):
    """An nn.Graph's trace: answers loss.backward() inside build() (autograd.backward)."""

    global_tensors = True  # (the global dispatcher traces through a graph's trace only)

    def __init__(self, graph, tracer, loss_scale):
        super().__init__(tracer, f"nn.Graph {graph.name}")
        self.graph = graph
        self.loss_scale = loss_scale  # the seed's factor (a captured tensor, set by each run)
        self.device = loss_scale.device  # the program's device (_lazy_state.device_type)
        self.traced_backward = 0      # backward() calls that became nodes of the program
        self.backward_steps = []      # why the others stayed Python steps

    def record_backward(self, tensors, grads):
        if not self.graph._optimizers:
            raise RuntimeError(f"nn.Graph {self.graph.name}: backward() in build() needs an optimizer "
                               "(add_optimizer) to make this a training graph")
        graph = self.graph
        if len(tensors) != 1:
            raise RuntimeError(f"{self.owner}: backward() takes one loss tensor")
        loss, grad = tensors[0], grads[0]
        if grad is None and loss.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if not getattr(loss, "is_global", False) and (grad is None or not getattr(grad, "is_global", False)):
            # Note [Backward nodes] (src/graph/lazy.h): the backward as nodes of the program,
            # seeded in the program with the loss scale the graph sets before each run.
            try:
                seed = (_C.ones_like(loss) if grad is None else grad) * self.loss_scale
                why = self.tracer.backward(loss, seed)
            except RuntimeError as e:  # a loss the trace cannot seed (a pipeline stage's Python step)
                why = str(e)
            if why is None:
                self.backward_calls += 1
                self.traced_backward += 1
                return
            self.backward_steps.append(why)

        def scale(loss):  # read at run time: the graph's accumulation and loss scaling then
            if graph._micro_batches > 1:
                loss = loss * (1.0 / graph._micro_batches)
            if graph._grad_scaler is not None:
                loss = graph._grad_scaler.scale(loss)
            return loss
        self.barrier(self.backward_action(tensors, grads, scale))


class Graph:
    """Base class of static graphs: define ``build(self, *args)`` and call the graph instance
    like a module."""

    def __init__(self):
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_optimizers", [])  # [(optimizer, lr_scheduler or None)]
        object.__setattr__(self, "_grad_scaler", None)
        object.__setattr__(self, "_micro_batches", 1)  # while a call runs its micro-batches
        object.__setattr__(self, "_compiled", {})  # call signature -> _Compiled
        object.__setattr__(self, "_debug", 0)
        object.__setattr__(self, "config", GraphConfig())
        self.config._on_change = self._compiled.clear
        object.__setattr__(self, "_name", f"{type(self).__name__}_{next(_counter)}")
        # (runtime_state.py: saving, loading and sharing compiled programs)
        object.__setattr__(self, "_save_runtime", False)
        object.__setattr__(self, "_shareable", False)
        object.__setattr__(self, "_shared_base", None)
        # (sparse.py: add_optimizer(is_sparse=True))
        object.__setattr__(self, "_sparse_optimizers", set())  # id of each sparse optimizer
        object.__setattr__(self, "_sparse_rows", {})  # this call's embedding ids per weight

    # ---- definition ----
    def build(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define build()")

    def __setattr__(self, name, value):
        if not hasattr(self, "_modules"):
            raise AttributeError("nn.Graph: call super().__init__() before assigning attributes")
        if self._compiled:
            self._compiled.clear()  # a new module changes what build() does
        if isinstance(value, Module):  # (reached as a Block: Note [Block configs])
            self._modules[name] = value
            self.__dict__.pop(name, None)
            return
        self._modules.pop(name, None)
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        modules = self.__dict__.get("_modules")
        if modules is not None and name in modules:
            from .block import Block
            return Block(modules[name])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def add_optimizer(self, optim, *, lr_sch=None, is_sparse=False):
        """Makes this a training graph: each call ends with ``optim.step()``, a step of the
        learning-rate schedule (when ``lr_sch`` is given) and cleared gradients.
        ``is_sparse=True`` (OneFlow's indexed-slices update): the embedding tables it updates move
        only in the rows the call looked up, and only those rows' optimizer state changes (sparse.py).

        Note [The graph's own schedule]: as OneFlow compiles the schedule into its job, the graph
        steps a copy of ``lr_sch`` (on the same optimizer, from the same position; saved by
        ``state_dict``) and leaves the object given to the caller. LiBai's trainer steps that one
        after every graph call to log the rate; stepping one object twice decayed the rate twice
        as fast. Both set the optimizer's rate, to the same value where the schedule is a closed
        form of the step (OneFlow's schedulers: WarmupLR, CosineDecayLR, ...); a schedule in
        PyTorch's chainable form (StepLR scales the rate it reads) stepped by the caller too
        compounds with the graph's, where OneFlow keeps the optimizer's rate out of the graph."""
        if not isinstance(is_sparse, bool):
            raise TypeError(f"add_optimizer: is_sparse must be a bool, got {type(is_sparse).__name__}")
        if lr_sch is not None and getattr(lr_sch, "optimizer", optim) is not optim:
            raise ValueError("add_optimizer: lr_sch schedules a different optimizer")
        if lr_sch is not None:
            lr_sch = copy.deepcopy(lr_sch, {id(optim): optim})
        self._optimizers.append((optim, lr_sch))
        if is_sparse:
            self._sparse_optimizers.add(id(optim))
        self._compiled.clear()

    def set_grad_scaler(self, grad_scaler=None):
        """Loss scaling for mixed-precision training (``flow.amp.GradScaler``)."""
        object.__setattr__(self, "_grad_scaler", grad_scaler)
        self._compiled.clear()  # (the update steps through the scaler: not as nodes, update_nodes.py)

    @property
    def name(self):
        return self._name

    @property
    def training(self):
        return bool(self._optimizers)

    def debug(self, v_level=0, *, ranks=None, max_py_stack_depth=2):
        """v_level >= 1 prints each traced program."""
        object.__setattr__(self, "_debug", int(v_level))

    def state_dict(self, destination=None):
        """{module name: its state_dict} and, for training graphs, {"_optimizers": [state_dict of
        each optimizer], "_lr_schedulers": [...]}: what resumes the graph's training."""
        out = {} if destination is None else destination
        for n, m in self._modules.items():
            out[n] = m.state_dict()
        if self._optimizers:
            out["_optimizers"] = [o.state_dict() for o, _ in self._optimizers]
            out["_lr_schedulers"] = [s.state_dict() if s is not None else None for _, s in self._optimizers]
        return out

    def load_state_dict(self, state_dict, strict=True):
        for n, m in self._modules.items():
            if n in state_dict:
                m.load_state_dict(state_dict[n], strict=strict)
            elif strict:
                raise RuntimeError(f"nn.Graph {self.name}: load_state_dict has no state for module '{n}'")
        for (o, sch), os_, ss in zip(self._optimizers, state_dict.get("_optimizers", []),
                                     state_dict.get("_lr_schedulers", [])):
            o.load_state_dict(os_)
            if sch is not None and ss is not None:
                sch.load_state_dict(ss)

    @property
    def is_compiled(self):
        """Whether a program has been traced (or loaded, or shared) for this graph."""
        return bool(self._compiled)

    # ---- compiled programs saved, loaded and shared (runtime_state.py) ----
    def enable_save_runtime_state_dict(self, mode=True):
        """Before the first call: keep what runtime_state_dict() saves (the tracing calls' inputs,
        OneFlow's warm-up inputs)."""
        if not isinstance(mode, bool):
            raise TypeError(f"enable_save_runtime_state_dict: mode must be a bool, got {type(mode).__name__}")
        if mode and self._compiled:
            raise RuntimeError(f"nn.Graph {self.name}: enable_save_runtime_state_dict() must be called before "
                               "the graph's first call")
        object.__setattr__(self, "_save_runtime", mode)

    def runtime_state_dict(self, destination=None, with_eager=False):
        """The compiled programs, loadable into a fresh graph of this class without tracing."""
        from .runtime_state import runtime_state_dict
        return runtime_state_dict(self, destination, with_eager)

    def load_runtime_state_dict(self, state_dict, *, warmup_with_run=None):
        """Programs saved by runtime_state_dict() become this graph's (no trace); warmup_with_run
        (default: inference graphs) runs each once on its saved inputs."""
        from .runtime_state import load_runtime_state_dict
        load_runtime_state_dict(self, state_dict, warmup_with_run, _Compiled, type(self) is Graph)

    def enable_shared(self, mode=True):
        """Before the first call: lets other graphs share_from() this one."""
        from .runtime_state import enable_shared
        enable_shared(self, mode)

    def share_from(self, shared_graph):
        """Runs `shared_graph`'s programs (its parameters, its cache of compiled signatures)."""
        from .runtime_state import share_from
        share_from(self, shared_graph, Graph)

    @staticmethod
    def trace(func):
        """OneFlow's quick graph of a function: ``@flow.nn.Graph.trace`` turns `func` into an
        inference nn.Graph whose build() is `func` (an instance of a new class
        ``<func name>_graph``), called as the function was."""
        if not inspect.isfunction(func):
            raise TypeError(f"nn.Graph.trace takes a function, got {type(func).__name__}")

        def build(self, *args, **kwargs):
            return func(*args, **kwargs)
        cls = type(func.__name__ + "_graph", (Graph,), {"build": build, "__doc__": func.__doc__})
        return cls()

    def _programs(self):
        """The traced programs' text (one per input signature)."""
        from .printing import label_steps
        return [label_steps(c.program.describe(), c.barriers) for c in self._compiled.values()]

    def __repr__(self):
        """The modules; after a call, as OneFlow prints a compiled graph: the module tree with each
        module's operators (the nodes its forward recorded, after the passes) and the graph's."""
        from .printing import graph_repr
        return graph_repr(self)

    # ---- running ----
    def _device(self, tensors):
        return tensors[0].device if tensors else "cpu"

    def _amp_region(self, device):
        import contextlib
        if self.config._amp is None:
            return contextlib.nullcontext()
        from ...amp import autocast
        dev = str(device).split(":")[0]
        dtype = self.config._amp[1]
        if dtype is None:
            from ... import bfloat16, float16
            dtype = float16 if dev == "cuda" else bfloat16
        return autocast(dev, dtype=dtype)

    def __call__(self, *args, **kwargs):
        if self.training and self.config._acc_steps > 1:
            return self._call_accumulating(args, kwargs)
        if not kwargs:  # all-tensor arguments: a key made in C++
            key = _C._graph_key(*args)
            if key is not None:
                compiled = self._compiled.get(key)
                if compiled is None or compiled.stale():
                    compiled = self._trace(_flatten((args, {}), []), list(args))
                    self._compiled[key] = compiled
                return self._run(compiled, args)
        tensors = []
        spec = _flatten((args, kwargs), tensors)
        key = (_key(spec), _signature(tensors))
        compiled = self._compiled.get(key)
        if compiled is None or compiled.stale():
            compiled = self._trace(spec, tensors)
            self._compiled[key] = compiled
        return self._run(compiled, tensors)

    def _trace(self, spec, tensors):
        if self._shared_base is not None:  # (share_from: the base traces, into the shared cache)
            return self._shared_base._trace(spec, tensors)
        compiled = self._trace_program(spec, tensors)
        if self._save_runtime:
            compiled.inputs_original = [t.detach().clone() for t in tensors]
        return compiled

    def _trace_program(self, spec, tensors):
        from .zero import shard_parameters
        shard_parameters(self)  # (ZeRO stage 3: parameters split before they are traced)
        device = self._device(tensors)
        tracer = _C._GraphTracer(device)
        if list(_globals(spec)) or any(getattr(t, "is_global", False) for t in tensors) or \
                any(getattr(p, "is_global", False) for m in self._modules.values()
                    for p in getattr(getattr(m, "origin", m), "parameters", lambda: ())()):
            tracer.set_autograd(False)  # (global tensors: backward stays a Python step, Note [Backward nodes])
        lazies = [tracer.input(t) for t in tensors]
        args, kwargs = _rebuild(spec, lazies)
        trace = _GraphTrace(self, tracer, _C.ones((), device=device))
        from .printing import module_scopes
        from .sparse import note_embedding_rows
        with trace.active(), self._amp_region(device), module_scopes(self, tracer), note_embedding_rows(self):
            out = self.build(*args, **kwargs)
            updates = self._record_updates(trace)
        if self.training and not trace.backward_calls:
            raise RuntimeError(f"nn.Graph {self.name}: a graph with an optimizer must call backward() "
                               "on its loss in build()")
        program, out_spec, slots, consts = trace.finish(out)
        # Note [Writes to free tensors] (src/graph/free_writes.h): an in-place op on a tensor that is
        # not the graph's state, or on an input, writes a per-call copy; returned, it is that copy.
        copies = program.copy_free_writes(_state(self), consts, self.training)
        slots = [c if c >= 0 else s for s, c in zip(slots, copies)]
        consts = [None if c >= 0 else t for t, c in zip(consts, copies)]
        # Backward only as nodes: the program builds no autograd graph when it runs.
        program.run_grad = not trace.traced_backward or bool(trace.backward_steps)
        traced = program.num_nodes
        with self._amp_region(device):  # (constant folding computes as the program will run)
            passes = {k: v for k, v in self.config._passes.items() if k not in ("arena", "update_nodes")}
            # (a training program whose backward is nodes runs every node without grad: its
            # pointwise chains, forward and backward, fuse and its values go in the arena)
            grad = self.training and program.run_grad
            stats = dict(program.optimize(**passes, grad=grad))
        if self.config._passes["arena"] and not grad:  # (with grad, autograd keeps values)
            program.place_in_arena()
        compiled = _Compiled(program, out_spec, slots, consts, trace.barriers, stats)
        compiled.loss_scale = trace.loss_scale if trace.traced_backward else None
        compiled.backward_steps = trace.backward_steps
        compiled.updates = updates
        if self._debug >= 1:
            from .printing import label_steps
            print(f"(GRAPH:{self.name}) traced {traced} nodes, {program.num_nodes} after the passes {stats}:\n"
                  f"{label_steps(program.describe(), trace.barriers)}")
        return compiled

    def _record_updates(self, trace):
        """The optimizers' updates as nodes at the end of the program (update_nodes.py), where the
        backward is nodes and each optimizer has a node form; the others step in Python. Not
        with a Python step in the program: the gradients it gives (a checkpointed block's or an
        autograd.Function's parameters get theirs from the eager backward run into its history)
        or changes (a collective on a .grad) are in .grad only, not in the slots the nodes read."""
        if not self.training or trace.traced_backward != 1 or trace.backward_steps or self._grad_scaler is not None \
                or self.config._acc_steps != 1 or not self.config._passes["update_nodes"] or trace.barriers:
            return []
        from .update_nodes import record_updates
        return record_updates(trace, [opt for opt, _ in self._optimizers])

    def _call_accumulating(self, args, kwargs):
        """One call of a graph with gradient accumulation (GraphConfig.set_gradient_accumulation_steps)."""
        from ... import cat, stack
        n = self.config._acc_steps
        whole = []
        spec = _flatten((args, kwargs), whole)
        shapes = [tuple(v[3]) for v in _globals(spec)] + [tuple(t.shape) for t in _locals(spec, whole)]
        for k, shape in enumerate(shapes):
            if not shape or shape[0] % n:
                raise ValueError(f"nn.Graph {self.name}: gradient accumulation splits each input along dim 0 "
                                 f"into {n} micro-batches; input {k} has shape {shape}")
        micro = []  # per micro-batch: (structure, flat local tensors)
        for i in range(n):
            tensors = []
            micro.append((_flatten(_micro_batch((args, kwargs), i, n), tensors), tensors))
        spec0, tensors0 = micro[0]
        key = ("micro", n, _key(spec0), _signature(tensors0))
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._trace(spec0, tensors0)
            self._compiled[key] = compiled
        self._sparse_rows.clear()
        for opt, _ in self._optimizers:
            opt.zero_grad(set_to_none=True)
        object.__setattr__(self, "_micro_batches", n)
        from .pipeline import run_micro_batches
        from .zero import sharded_gradients
        try:
            with sharded_gradients(self):
                outs = run_micro_batches(self, compiled, [m for _, m in micro])
        finally:
            object.__setattr__(self, "_micro_batches", 1)
        self._step()
        # global outputs are packed as global tensors (the micro-batches' rows in order), laid out
        # as traced (a partial sum comes back broadcast)
        wrap = {v[0]: v[1:] for v in _globals(compiled.out_spec)}
        packed = []
        for k, col in enumerate(zip(*outs)):
            if k in wrap:
                from ..._global.tensor import GlobalTensor
                pl, sbp, shape = wrap[k]
                col = [GlobalTensor(t, pl, sbp, shape) for t in col]
            one = stack(col) if col[0].dim() == 0 else cat(col)
            if k in wrap and all(s._kind != "P" for s in wrap[k][1]):
                one = one.to_global(sbp=wrap[k][1])
            packed.append(one)
        return _rebuild(compiled.out_spec, packed, packed=True)

    def _execute(self, compiled, tensors):
        """The program run once on `tensors`: its output tensors (flat)."""
        from ..._grad_mode import enable_grad, no_grad
        ex = self._start(compiled, tensors)
        with (enable_grad() if self.training else no_grad()), self._amp_region(self._device(tensors)):
            run_program(ex, compiled.barriers)
            return self._outputs(compiled, ex)

    def _start(self, compiled, tensors):
        """An execution of the program on `tensors`, its scalar inputs set."""
        from ..._grad_mode import no_grad
        if compiled.loss_scale is not None:  # (the traced backward's seed factor, Note [Backward nodes])
            with no_grad():
                if self._grad_scaler is not None:
                    compiled.loss_scale.copy_(self._grad_scaler.scale(compiled.loss_scale.new_full((), 1.0 / self._micro_batches)))
                else:
                    compiled.loss_scale.fill_(1.0 / self._micro_batches)
        for u in compiled.updates:  # (their scalar inputs: Note [Scalar inputs])
            u.set_inputs()
        return compiled.program.start(tensors)

    @staticmethod
    def _outputs(compiled, ex):
        return [ex.slot(s).detach() if s >= 0 else c for s, c in zip(compiled.out_slots, compiled.out_consts)]

    def _execute_in_steps(self, compiled, tensors):
        """_execute as a generator that pauses before each backward() step of the program (its
        forward done), so that a pipeline schedule interleaves micro-batches (Note [1F1B]); its
        return value is the outputs. The grad and autocast modes are entered for each part alone
        (another micro-batch runs between the parts)."""
        from ..._grad_mode import enable_grad, no_grad
        ex = self._start(compiled, tensors)
        device = self._device(tensors)

        @contextlib.contextmanager
        def modes():
            with (enable_grad() if self.training else no_grad()), self._amp_region(device):
                yield
        while True:
            with modes():
                b = ex.run()
                while b >= 0 and not getattr(compiled.barriers[b], "is_backward", False):
                    compiled.barriers[b](ex)
                    b = ex.run()
            if b < 0:
                return self._outputs(compiled, ex)
            yield
            with modes():
                compiled.barriers[b](ex)

    def _run(self, compiled, tensors):
        self._sparse_rows.clear()
        if self.training:
            for opt, _ in self._optimizers:
                opt.zero_grad(set_to_none=True)
            from .zero import sharded_gradients
            with sharded_gradients(self):
                outs = self._execute(compiled, tensors)
            self._step(compiled.updates)
        else:
            outs = self._execute(compiled, tensors)
        return _rebuild(compiled.out_spec, outs)

    def _step(self, updates=()):
        """The optimizers' steps (those whose update ran as nodes of the program: not again), the
        gradients cleared, the LR schedulers' steps."""
        from .sparse import sparse_update
        from .update_nodes import lr_scaled
        from .zero import zero_update
        scaler = self._grad_scaler
        for opt, sch in self._optimizers:
            if not any(opt is u.opt for u in updates):
                with sparse_update(self, opt), zero_update(self, opt), lr_scaled(opt):
                    if scaler is not None:
                        scaler.step(opt)
                    else:
                        opt.step()
            opt.zero_grad(set_to_none=True)
            if sch is not None:
                sch.step()
        if scaler is not None:
            scaler.update()
        self._sparse_rows.clear()
