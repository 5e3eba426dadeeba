"""0.x's quantization-aware training of a job: ``func_config.enable_qat(True)`` (also
``enable_quantization_aware_training``) with ``func_config.qat.per_channel_weight_quantization``,
``symmetric``, ``moving_min_max_momentum``, ``moving_min_max_stop_update_after_iters`` and
``target_backend``.

OneFlow 0.x did it with a pass over the job's graph (QuantAwareTraining): before the inputs of
its "int8" ops (``conv2d``, ``matmul``; with the default backend also ``batch_matmul``,
``add_n`` and the 2-d pools) and, except for the cambricon backend, after their outputs, it put
a fake quantization (quantize + dequantize, the gradient passed straight through) whose scale and
zero point come from an observer: a min-max observer of the current value for variables
(weights; per output channel with ``per_channel_weight_quantization``), a moving-average min-max
observer for activations, whose moving max / min are variables
(``<blob>-fake-quant-moving-max`` / ``-min``, initialized to zero, shared by the jobs as any
variable, saved by checkpoints) updated by train jobs while the train step is below
``moving_min_max_stop_update_after_iters`` and only read by predict jobs. A convolution's chain
``conv2d -> bias_add -> normalization -> relu`` (each link optional) was quantized at its end,
its bias with the scale input scale x weight scale and zero point 0.

Here the same happens while the job's Python runs (its trace or, eagerly, each call): the
legacy ops of those kinds (``flow.nn.conv2d``, ``flow.matmul``, ``flow.math.add_n``,
``flow.nn.max_pool2d`` / ``avg_pool2d``, ``flow.layers.conv2d`` / ``dense``) call ``inputs`` /
``output`` below, on the observers and the fake quantization of ``flow.nn`` (modules/
quantization.py). A blob that is already a fake quantization's output is not quantized again
(0.x quantized an edge once). A convolution's chain is found on the job's graph (Note [QAT
chains]). A reshape (``flow.reshape`` in the job, ``layers.dense``'s flattening) of a quantized
blob counts as quantized, as 0.x's "transparent" reshape (not for cambricon); other views
(``Tensor.reshape``, ``flatten``) are quantized again by the op after.
"""
import weakref

from ._job_state import current_job

# target_backend -> (quantization formula, int8 ops, quantize their outputs too)
_BACKENDS = {
    "": ("google", {"conv2d", "matmul", "batch_matmul", "add_n", "max_pool_2d", "avg_pool_2d"}, True),
    "tensorrt": ("google", {"conv2d", "matmul"}, True),
    "cambricon": ("cambricon", {"conv2d", "matmul"}, False),
}

# qat.<field> -> (type, default): 0.x's QatConfig message (stop_update_after_iters has no default:
# a job quantizing activations must set it)
FIELDS = {
    "per_channel_weight_quantization": (bool, False),
    "symmetric": (bool, True),
    "moving_min_max_momentum": (float, 0.95),
    "moving_min_max_stop_update_after_iters": (int, None),
    "target_backend": (str, ""),
}


def check_field(name, value):
    """A qat.<name> value of its type (found when set)."""
    if name not in FIELDS:
        raise AttributeError(f"FunctionConfig.qat has no field '{name}' (fields: {', '.join(FIELDS)})")
    kind = FIELDS[name][0]
    ok = isinstance(value, bool) if kind is bool else (
        isinstance(value, (int, float)) and not isinstance(value, bool) if kind is float else
        isinstance(value, kind) and not isinstance(value, bool))
    if not ok:
        raise TypeError(f"FunctionConfig.qat.{name}: expected {kind.__name__}, got {type(value).__name__}")
    if name == "target_backend" and value not in _BACKENDS:
        raise ValueError(f"FunctionConfig.qat.target_backend: expected '', 'tensorrt' or 'cambricon', got {value!r}")
    if name == "moving_min_max_momentum" and not 0 <= value <= 1:
        raise ValueError(f"FunctionConfig.qat.moving_min_max_momentum: must be in [0, 1], got {value}")


def check_config(value):
    """``func_config.qat({...})``: a dict of QatConfig's fields."""
    if value is None:
        return
    if not isinstance(value, dict):
        raise TypeError(f"FunctionConfig.qat: expected a dict of {', '.join(FIELDS)}, got {type(value).__name__}")
    for k, v in value.items():
        check_field(k, v)


class QatSetter:
    """``func_config.qat.<field>(value)`` (0.x's setters) and ``func_config.qat({...})``."""

    def __init__(self, setter, desc):
        self._setter, self._desc = setter, desc

    def __call__(self, value=None):
        return self._setter(value)

    def __getattr__(self, name):
        if name not in FIELDS:
            raise AttributeError(f"FunctionConfig.qat has no field '{name}' (fields: {', '.join(FIELDS)})")
        desc = self._desc

        def setter(value=True):
            check_field(name, value)
            if not isinstance(desc.get("qat"), dict):
                desc["qat"] = {}
            desc["qat"][name] = value
        return setter


class _Config:
    """The job's QatConfig with its defaults."""

    def __init__(self, given):
        given = given or {}
        for k, (_, default) in FIELDS.items():
            setattr(self, k, given.get(k, default))
        self.formula, self.int8_ops, self.after = _BACKENDS[self.target_backend]
        self.scheme = "symmetric" if self.symmetric else "affine"


class _State:
    """One call (or trace) of a quantized job: the blobs fake-quantized so far, the count of
    unnamed ops of each kind (their observers' names), and its convolutions' chains (Note [QAT
    chains]): the plan, the chains under way, or -- in the planning trace -- the ops seen."""

    def __init__(self, config, plan):
        self.config = config
        self.quantized = {}  # id -> (blob, its scale): blob kept alive, so ids stay unique
        self.counts = {}
        self.planning = plan is PLANNING
        self.plan = None if self.planning else plan  # op index -> (kind, role); None: the layers' own
        self.local = {}   # without a plan: the roles layers.conv2d gives its own ops
        self.next_op = 0  # index of the job's next chain-kind op
        self.ops = {}     # planning: op index -> (kind, slot of its input, slot of its output)
        self.chains = {}  # index of a convolution whose chain goes on -> (its name, its input scales)

    def role(self, k, kind):
        """The role of the job's k-th chain-kind op: a convolution's "end" (its output
        quantized) or "chain" (a later op's is), a link's (index of its convolution, whether it
        ends the chain), or None (a bias_add / batch normalization / relu of no chain)."""
        table = self.plan if self.plan is not None else self.local
        entry = table.get(k)
        if entry is None or entry[0] != kind:
            return "end" if kind == "conv2d" else None
        return entry[1]


_states = weakref.WeakKeyDictionary()  # job call in progress (job._Job) -> _State

PLANNING = object()  # a job's qat_plan while the planning trace runs (Note [QAT chains])


def enabled(desc):
    """Whether a job of FunctionConfig description `desc` trains quantization-aware."""
    return bool(desc.get("enable_qat") or desc.get("enable_quantization_aware_training"))


def _state():
    """The QAT state of the job running, or None when it is not quantized."""
    job = current_job()
    if job is None:
        return None
    desc = job.config.function_desc
    if not enabled(desc):
        return None
    state = _states.get(job)
    if state is None:
        dtype = desc.get("default_data_type")
        if dtype is not None and dtype != _float32():  # (0.x's pass checked it too)
            raise ValueError(f"job function {job.fn.name}: quantization-aware training needs default_data_type "
                             f"float32, got {dtype}")
        state = _states[job] = _State(_Config(desc.get("qat")), getattr(job, "qat_plan", None))
    return state


def active(kind):
    """Whether the job running quantizes ops of `kind` ("conv2d", "matmul", ...) (not while
    its chains are planned: that trace sees the job's own ops)."""
    state = _state()
    return state is not None and not state.planning and kind in state.config.int8_ops


# Note [QAT chains]
# 0.x's pass quantized a convolution's output at the end of its chain conv2d -> bias_add ->
# normalization -> relu (each link optional), a link taken when the blob before it has that
# op as its one consumer in the job's graph; the chain's bias_add got its bias quantized with the
# convolution's input scale x weight scale, the normalization's parameters stayed float, and its
# statistics are those of the chain's unquantized blob (0.x did not fold the batch
# normalization into the convolution: its pass says so). Python cannot see an op's consumers
# while the op runs, so a quantized job is traced twice on its first call with a signature
# (job.py, _qat_plan): a planning trace with nothing quantized, in which each op of those four
# kinds -- the job's k-th -- records the slots of its input and output and marks the program's
# nodes it records with the tracer scope "<qat op k>"; the consumers of a blob are then the
# owners of the nodes that read its slot in that program (a marked op, or each unmarked node
# alone) plus a pin (a returned, watched or Python-step blob). `plan` walks each convolution's
# chain on them, and the job is traced (or, eager, run) again with the plan: its k-th op of those
# kinds takes the role planned for the k-th. A job that runs its Python on every call because its trace needs values
# (flow.data ops, .numpy()), and a job over several ranks, cannot be planned: its convolutions
# quantize as their layer alone shows (layers.conv2d's own bias_add and relu activation; an
# nn.conv2d at once).
def _next(state):
    k = state.next_op
    state.next_op += 1
    return k


_MARK = "<qat op "


def _planned(state, k, kind, x, compute):
    """compute() as the planning trace's k-th chain-kind op: its nodes marked, its slots kept."""
    tracer = current_job().trace.tracer
    prev = tracer.scope
    tracer.set_scope(f"{_MARK}{k}>")
    try:
        out = compute()
    finally:
        tracer.set_scope(prev)
    state.ops[k] = (kind, tracer.slot_of(x), tracer.slot_of(out))
    return out


def plan(job, program):
    """The roles of the chain-kind ops of the planning trace `job` whose program is `program`
    (Note [QAT chains]): op index -> (kind, role)."""
    ops = _states[job].ops if job in _states else {}
    owners = {}  # slot -> the owners of the nodes reading it
    for i, ((scope, _), reads) in enumerate(zip(program.nodes(), program.reads())):
        who = int(scope[len(_MARK):-1]) if scope.startswith(_MARK) else ("node", i)
        for s in reads:
            owners.setdefault(s, set()).add(who)
    for s in program.pinned:
        owners.setdefault(s, set()).add(("pinned",))

    def sole_link(k):
        """The op of a chain kind that is the one consumer of op k's output, taking it as its
        input, else None."""
        out = ops[k][2]
        got = owners.get(out, ())
        if out < 0 or len(got) != 1:
            return None
        (j,) = got
        return j if isinstance(j, int) and j in ops and ops[j][1] == out else None

    roles = {}
    for k, (kind, _, _) in ops.items():
        if kind != "conv2d":
            continue
        chain, nxt = [], sole_link(k)
        for link in ("bias_add", "normalization", "relu"):
            if nxt is not None and ops[nxt][0] == link:
                chain.append(nxt)
                nxt = sole_link(nxt)
        roles[k] = ("conv2d", "chain" if chain else "end")
        for j in chain:
            roles[j] = (ops[j][0], (k, j == chain[-1]))
    return roles


def layer_chain(kinds):
    """layers.conv2d's ops (kinds, in order, from its conv2d) as one chain, for a job without a
    plan (Note [QAT chains]): the layer sees its own bias_add and relu activation."""
    state = _state()
    if state is None or state.planning or state.plan is not None:
        return
    k = state.next_op
    state.local[k] = ("conv2d", "chain" if len(kinds) > 1 else "end")
    for j, kind in enumerate(kinds[1:], 1):
        state.local[k + j] = (kind, (k, j == len(kinds) - 1))


def conv(name, x, w, run):
    """A convolution `run(x, w)` of the job: its input and weight fake-quantized, and its output
    or, when a chain goes on, its chain's end (Note [QAT chains])."""
    state = _state()
    if state is None:
        return run(x, w)
    k = _next(state)
    if state.planning:
        return _planned(state, k, "conv2d", x, lambda: run(x, w))
    if "conv2d" not in state.config.int8_ops:
        return run(x, w)
    name = op_name("conv2d", name)
    (x, w), scales = inputs(name, x, w)
    out = run(x, w)
    if state.role(k, "conv2d") == "chain":
        state.chains[k] = (name, scales)
        return out
    return output(name, out)


def link(kind, x, run, bias=None):
    """A bias_add / normalization / relu `run(bias)` of the job: in a convolution's chain, a
    bias_add's bias fake-quantized by the convolution's scales, the chain's end's output by its
    observer (Note [QAT chains])."""
    state = _state()
    if state is None:
        return run(bias)
    k = _next(state)
    if state.planning:
        return _planned(state, k, kind, x, lambda: run(bias))
    role = state.role(k, kind)
    if role is None or role[0] not in state.chains:
        return run(bias)
    head, end = role
    name, scales = state.chains[head]
    if kind == "bias_add" and bias is not None:
        bias = _bias(bias, *scales)
    out = run(bias)
    return output(name, out) if end else out


def op_name(kind, name):
    """The name of an op's observers: the op's `name`, else "<kind>_<k>" for the job's k-th
    unnamed op of that kind (the same in each job that calls the same ops in the same order, so
    a train and a predict job of one model share their observers)."""
    state = _state()
    if name:
        return name
    k = state.counts.get(kind, 0)
    state.counts[kind] = k + 1
    return f"{kind}_{k}"


def _scale_of(t):
    """The scale of a blob a fake quantization made (or a reshape of one), else None."""
    state = _state()
    entry = state.quantized.get(id(t)) if state is not None else None
    return entry[1] if entry is not None and entry[0] is t else None


def is_quantized(t):
    return _scale_of(t) is not None


def inputs(name, *tensors):
    """The inputs of an int8 op, each fake-quantized: a variable by the min-max of its value
    (per output channel if asked), another blob by its moving min-max; with their scales (None
    for one left alone: not float32)."""
    from .variables import is_variable
    outs, scales = [], []
    for k, t in enumerate(tensors):  # (an input already quantized keeps its scale: 0.x's scale map)
        if is_variable(t):
            q, s = _weight(t)
        else:
            q, s = activation(t, f"{name}-in_{k}")
        outs.append(q)
        scales.append(s)
    return outs, scales


def output(name, t):
    """An int8 op's output fake-quantized (not for the cambricon backend, which quantized inputs
    only)."""
    state = _state()
    if not state.config.after:
        return t
    return activation(t, f"{name}-out")[0]


def _bias(b, in_scale, w_scale):
    """A convolution's bias fake-quantized as 0.x: scale input scale x weight scale (the exponents
    added for cambricon, whose scales are powers of two), zero point 0."""
    from .. import _oneflow_internal as _C
    if in_scale is None or w_scale is None or b.dtype != _float32():
        return b
    c = _state().config
    scale = in_scale + w_scale if c.formula == "cambricon" else in_scale * w_scale
    if scale.numel() == 1 and b.numel() > 1:
        scale = scale.expand(b.shape[0])
    return _fake_quant(b, scale, _C.zeros_like(scale), "symmetric")


def _float32():
    from .. import _oneflow_internal as _C
    return _C.float32


def _weight(w):
    from ..nn.modules.quantization import MinMaxObserver
    state = _state()
    c = state.config
    if w.dtype != _float32() or is_quantized(w):
        return w, _scale_of(w)
    observer = MinMaxObserver(c.formula, 8, c.scheme, per_layer_quantization=not c.per_channel_weight_quantization)
    scale, zero_point = observer(w)
    return _remember(_fake_quant(w, scale, zero_point, c.scheme), scale), scale


def activation(t, name):
    """A blob fake-quantized by the moving min-max observer `name` (variables "<name>-fake-quant-
    moving-max" / "-min"); (blob, scale): an already quantized blob as it is, with its scale, one
    not float32 with None."""
    from ..nn.modules.quantization import MovingAverageMinMaxObserver
    from .initializers import constant_initializer
    from .variables import get_variable
    state = _state()
    c = state.config
    if t.dtype != _float32() or is_quantized(t):
        return t, _scale_of(t)
    if c.moving_min_max_stop_update_after_iters is None:
        raise ValueError(f"job function {current_job().fn.name}: quantization-aware training of activations needs "
                         "func_config.qat.moving_min_max_stop_update_after_iters(n)")
    stats = [get_variable(f"{name}-fake-quant-moving-{m}", shape=(1,), dtype=_float32(),
                          initializer=constant_initializer(0.0), trainable=False) for m in ("max", "min")]
    job = current_job()
    observer = MovingAverageMinMaxObserver(job.type == "train", c.formula, c.moving_min_max_stop_update_after_iters,
                                           8, c.scheme, c.moving_min_max_momentum)
    observer.moving_max, observer.moving_min = stats  # its statistics are the job's variables
    step = train_step(job)
    if step.device != t.device:  # (a job on a GPU: a copy the program makes at each run)
        step = step.to(t.device)
    scale, zero_point = observer(t, step)
    return _remember(_fake_quant(t, scale, zero_point, c.scheme), scale), scale


def _fake_quant(t, scale, zero_point, scheme):
    from ..nn.modules.quantization import FakeQuantization
    return FakeQuantization(_state().config.formula, 8, scheme)(t, scale, zero_point)


def _remember(t, scale):
    _state().quantized[id(t)] = (t, scale)
    return t


_steps = weakref.WeakKeyDictionary()  # job function -> its train-step tensor


def train_step(job):
    """The job function's train step as a one-element tensor that a compiled job's program reads
    at each run (set before each run: ``before_run``)."""
    from .variables import _untraced
    step = _steps.get(job.fn)
    if step is None:
        from .. import _oneflow_internal as _C
        with _untraced():
            step = _steps[job.fn] = _C.zeros(1, dtype=_C.int64)
            step.fill_(job.fn.train_step)
    return step


def before_run(fn):
    """The train step of job function `fn` as the coming run's (its observers stop updating after
    qat.moving_min_max_stop_update_after_iters steps)."""
    step = _steps.get(fn)
    if step is not None:
        step.fill_(fn.train_step)


def reshaped(src, dst):
    """`dst`, a reshape of `src`, counts as quantized when `src` is (0.x's "transparent" reshape;
    not for the cambricon backend)."""
    state = _state()
    if state is not None and state.config.target_backend != "cambricon" and is_quantized(src):
        _remember(dst, _scale_of(src))
