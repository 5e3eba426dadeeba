"""The SBP signature of an op called on global tensors, the boxing of its inputs to it, the local
op on the components, and the global outputs (docs/architecture.md §8; docs/global_tensors.md).

Rules, by op family (the families are the op table's files: tests/test_global_tensor.py checks
these lists against src/ops/table):
 - pointwise (unary, binary, compare, ternary, elementwise activations, casts): the inputs are
   aligned to the output's dims; split inputs keep a common output dim D and broadcast inputs that
   span D are sliced to it (no communication), so the output is split along D. Sums and
   differences of partial-sum tensors (and a partial-sum tensor times or divided by broadcast ones
   or numbers) stay partial-sum; otherwise partial-sum inputs are reduced first;
 - matmul / mm / linear: split rows x broadcast -> split rows, broadcast x split columns -> split
   columns, split columns x split rows -> partial-sum (linear: the bias added on one rank);
   anything else is made broadcast;
 - sum / mean: reducing a split dim gives a partial sum; other dims keep the split;
 - softmax / log_softmax / transpose / permute / t: a split dim moves with the op, or must not be
   the op's dim;
 - nn ops of a data-parallel step (rules_nn.py): split batch in, split batch (or a loss's
   partial sum) out;
 - every other op: its global inputs are made broadcast and it runs whole on every rank.
"""
import operator

from .. import _lazy_state, _oneflow_internal as _C
from ..sbp import broadcast as B, partial_sum as P, split as S
from . import rules_nn
from .boxing import BroadcastUse, box_nd, levels
from .runtime import arg, axes, position
from .tensor import GlobalTensor, is_global

UNARY = {"exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos",
         "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "reciprocal",
         "abs", "neg", "sign", "square", "ceil", "floor", "trunc", "relu", "logical_not", "isnan", "isinf",
         "isfinite", "bitwise_not", "leaky_relu", "relu6", "hardtanh", "elu", "selu", "celu", "hardsigmoid",
         "hardswish", "hardshrink", "softshrink", "tanhshrink", "softsign", "softplus", "mish", "logsigmoid",
         "threshold", "silu", "gelu", "clamp", "clip", "erfinv", "lgamma", "digamma", "i0", "ndtr", "ndtri",
         "log_ndtr", "entr", "round", "to", "float", "double", "half", "int", "long", "bool", "type_as",
         "dropout", "nan_to_num", "positive", "negative", "exp2", "frac", "sgn", "logit",
         "zeros_like", "ones_like", "empty_like", "full_like", "clone", "contiguous", "detach", "fill_", "zero_"}
# Random ops: a broadcast result must be one draw (its mask, for dropout: the gradients too), so
# every rank draws under one seed the first rank picks; split results draw per rank.
RANDOM = {"normal_", "uniform_", "bernoulli_", "exponential_", "geometric_", "cauchy_", "log_normal_", "random_",
          "rand_like", "randn_like", "randint_like", "bernoulli", "multinomial", "normal", "poisson", "dropout",
          "dropout_", "feature_alpha_dropout", "alpha_dropout", "dropout2d", "dropout3d", "rrelu"}
COPIES = {"copy_"}  # self laid out as it is, the source boxed to it (load_state_dict into global modules)
BINARY = {"add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "maximum", "minimum", "atan2",
          "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor", "eq", "ne",
          "lt", "le", "gt", "ge", "lerp", "where", "masked_fill", "true_divide", "subtract", "multiply", "divide",
          "hypot", "xlogy", "fmax", "fmin", "copysign", "addcmul", "addcdiv", "rsub", "bitwise_left_shift",
          "bitwise_right_shift"}
DUNDER = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div", "__floordiv__": "floor_divide",
          "__mod__": "remainder", "__pow__": "pow", "__and__": "bitwise_and", "__or__": "bitwise_or",
          "__xor__": "bitwise_xor", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__eq__": "eq",
          "__ne__": "ne", "__neg__": "neg", "__abs__": "abs", "__invert__": "bitwise_not", "__pos__": "positive",
          "__matmul__": "matmul", "__lshift__": "bitwise_left_shift", "__rshift__": "bitwise_right_shift",
          "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
          "__ifloordiv__": "floor_divide_", "__imod__": "remainder_", "__ipow__": "pow_", "__iand__": "bitwise_and_",
          "__ior__": "bitwise_or_", "__ixor__": "bitwise_xor_", "__ilshift__": "bitwise_left_shift_",
          "__irshift__": "bitwise_right_shift_"}
OPERATOR = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
            "pow": operator.pow, "matmul": operator.matmul}
LINEAR_SUMS = {"add", "sub", "neg", "positive", "subtract", "negative"}   # partial-sum in, partial-sum out
LINEAR_SCALES = {"mul", "div", "multiply", "divide", "true_divide"}    # partial-sum times broadcast


def _base(name):
    name = DUNDER.get(name, name)
    return name[:-1] if name.endswith("_") and not name.endswith("__") else name


def _walk(obj, found):
    if is_global(obj):
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _walk(o, found)
    elif isinstance(obj, dict):
        for o in obj.values():
            _walk(o, found)
    elif isinstance(obj, _C.Tensor) and (not obj.is_meta or _C._is_lazy(obj)):
        raise RuntimeError("expected all tensors to be global, got a local tensor among the arguments of a "
                           "global op (use .to_global(placement, sbp) on it)")


def _replace(obj, locals_):
    if is_global(obj):
        return locals_[id(obj)]
    if isinstance(obj, list):
        return [_replace(o, locals_) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_replace(o, locals_) for o in obj)
    if isinstance(obj, dict):
        return {k: _replace(v, locals_) for k, v in obj.items()}
    return obj


def _broadcast_shape(shapes):
    """The broadcast of logical shapes (tuples of ints; ValueError when they do not broadcast)."""
    nd = max(len(s) for s in shapes)
    out = [1] * nd
    for s in shapes:
        for i, d in enumerate(s, nd - len(s)):
            if d != 1:
                if out[i] not in (1, d):
                    raise ValueError(f"shapes {shapes} do not broadcast")
                out[i] = d
    return tuple(out)


# ---- signatures: {id(global input): target sbp}, output sbp, output's logical size along its split dim ----

def _pointwise(name, gs, out_shape):
    kinds = {g._sbp[0]._kind for g in gs}
    if kinds == {"B"}:
        return {}, B, None
    targets = {}
    if "P" in kinds:
        if kinds == {"P"} and name in LINEAR_SUMS:
            return {}, P, None
        if name in LINEAR_SCALES and gs[0]._sbp[0]._kind == "P" and all(g._sbp[0]._kind == "B" for g in gs[1:]):
            return {}, P, None
        targets = {id(g): B for g in gs if g._sbp[0]._kind == "P"}
    # Split inputs decide the output's split dim D (the first one's, dims aligned right); every
    # input spanning D follows it (a broadcast one is sliced: no communication), the others (size
    # 1 along D, or fewer dims) are needed whole on every rank.
    nd = len(out_shape)
    splits = [nd - g.dim() + g._sbp[0]._dim for g in gs if g._sbp[0]._kind == "S" and id(g) not in targets]
    if not splits:
        return {id(g): B for g in gs}, B, None
    D = splits[0]
    for g in gs:
        d = D - (nd - g.dim())
        targets[id(g)] = S(d) if d >= 0 and g._shape[d] != 1 else B
    return targets, S(D), out_shape[D]


def _matmul(gs):
    a, b = gs[0], gs[1] if len(gs) > 1 else None
    if b is None or a.dim() < 1 or b.dim() != 2:
        return None
    sa, sb = a._sbp[0], b._sbp[0]
    row_dims = range(a.dim() - 1)
    if sa._kind == "S" and sa._dim in row_dims and sb._kind == "B":
        return {}, S(sa._dim), a._shape[sa._dim]
    if sa._kind == "B" and sb == S(1):
        return {}, S(a.dim() - 1), b._shape[1]
    if sa == S(a.dim() - 1) and sb == S(0):
        return {}, P, None
    if sa._kind == "P" and sb._kind == "B":
        return {}, P, None
    if sa._kind == "B" and sb._kind == "P":
        return {}, P, None
    if sa._kind == "S" and sa._dim in row_dims:
        return {id(b): B}, S(sa._dim), a._shape[sa._dim]
    return {id(a): B, id(b): B}, B, None


def _linear(gs):
    """F.linear(x, weight, bias): y = x weight^T + bias."""
    x, w = gs[0], gs[1]
    sx, sw = x._sbp[0], w._sbp[0]
    rows = range(x.dim() - 1)
    if sx._kind == "S" and sx._dim in rows:
        t = {id(w): B}
        t.update({id(g): B for g in gs[2:]})
        return t, S(sx._dim), x._shape[sx._dim]
    if sx._kind == "B" and sw == S(0):                       # output features split
        return {id(g): S(0) for g in gs[2:]}, S(x.dim() - 1), w._shape[0]
    if sx == S(x.dim() - 1) and sw == S(1):  # input features split: partial sums (the bias on one rank)
        return {id(g): P for g in gs[2:]}, P, None
    return {id(g): B for g in gs}, B, None


def _reduce(name, g, args, kwargs):
    s = g._sbp[0]
    dims = arg(args, kwargs, 1, ("dim", "axis"))
    keep = bool(arg(args, kwargs, 2, ("keepdim", "keepdims")) or False)
    if s._kind == "B":
        return {}, B, None, None
    if dims is None:
        dims = list(range(g.dim()))
    dims = [dims] if isinstance(dims, int) else list(dims)
    dims = [d % max(g.dim(), 1) for d in dims]
    if s._kind == "P":
        return ({}, P, None, None) if name == "sum" else ({id(g): B}, B, None, None)
    if s._dim in dims:
        return {}, P, None, dims
    out_dim = s._dim if keep else s._dim - sum(1 for d in dims if d < s._dim)
    return {}, S(out_dim), g._shape[s._dim], None


def _moves(name, g, args, kwargs):
    """transpose / permute / t: where the split dim goes (None: it cannot move)."""
    s = g._sbp[0]
    if s._kind != "S":
        return s._kind
    nd = g.dim()
    if name == "t":
        return S(1 - s._dim) if nd == 2 else s
    if name in ("transpose", "swapaxes", "swapdims"):
        d0 = arg(args, kwargs, 1, ("dim0", "axis0")) % nd
        d1 = arg(args, kwargs, 2, ("dim1", "axis1")) % nd
        return S(d1 if s._dim == d0 else d0 if s._dim == d1 else s._dim)
    perm = list(args[1:]) if len(args) > 2 or (len(args) == 2 and isinstance(args[1], int)) else \
        list(arg(args, kwargs, 1, ("dims", "perm")))
    perm = [p % nd for p in perm]
    return S(perm.index(s._dim))


def run(name, fn, args, kwargs, self_=None):
    """Calls fn on the local components of `args` boxed to the signature of op `name`."""
    gs = []
    if name.endswith("_update"):
        return _update(name, fn, args, kwargs)
    _walk((args, kwargs), gs)
    if not gs:
        return fn(*args, **kwargs)
    trace = _lazy_state.recording()
    if trace is not None and not getattr(trace, "global_tensors", False):
        raise NotImplementedError(f"{name}: global tensors in a job function are not supported yet (nn.Graph "
                                  "traces them)")
    if name in COPIES and self_ is not None and any(g._placement != self_._placement for g in gs):
        # (a state loaded on every process copied into a tensor on some: moved to its placement)
        args = tuple(a.to_global(placement=self_._placement) if is_global(a) and a is not self_ else a
                     for a in args)
        gs = []
        _walk((args, kwargs), gs)
    pl = gs[0]._placement
    for g in gs[1:]:
        if g._placement != pl:
            raise RuntimeError(f"{name}: global tensors on different placements, {pl!r} and {g._placement!r}")
    if trace is None:
        fast = _same_layout(name, gs)
        if fast is not None:
            result = fn(*_replace(args, fast), **_replace(kwargs, fast))
            return self_ if self_ is not None else _wrap_same(result, gs[0])
    uniq = list({id(g): g for g in gs}.values())
    base = _base(name)
    position(pl)  # (this process's place in it, and its groups, known on every process)
    apls = axes(pl)
    pre = post = None
    if len(apls) == 1:
        targets, out, length, mean_dims, pre, post, fn = _signature_1d(name, base, uniq, args, kwargs, self_, fn)
        targets, outs, lengths = {k: (v,) for k, v in targets.items()}, (out,), (length,)
    else:
        targets, outs, lengths, mean_dims = _signature_nd(name, base, uniq, args, kwargs, self_, pl)
    if self_ is not None and targets.get(id(self_), self_._sbp) != self_._sbp:
        raise RuntimeError(f"{name}: an in-place op on a global tensor laid out as {self_._sbp!r} would need it "
                           f"as {targets[id(self_)]!r}; use the out-of-place op")
    locals_ = {}
    for g in uniq:
        t = targets.get(id(g), g._sbp)
        loc = box_nd(g._local, g._sbp, t, g._shape, pl)
        if trace is not None and loc.is_meta and not _C._is_lazy(loc):
            # a component of a process outside the placement (a parameter's, here) enters the
            # program as a step giving it: the ops on it are then recorded like the others'
            loc = trace.record_call(lambda m=loc: m, (), {})
        for tk, ok, apl in zip(t, outs, apls):
            if tk._kind == "B" and ok._kind != "B" and loc.requires_grad:
                loc = BroadcastUse.apply(loc, apl)
        locals_[id(g)] = loc
    if pre is not None:
        args, kwargs = pre(args, kwargs)
    shared = [apl for ok, apl in zip(outs, apls) if ok._kind == "B" and len(apl._ranks) > 1]
    if shared and (name in RANDOM or base in RANDOM):
        if trace is not None:  # a Python step of the graph's program: one seed per run
            result = trace.record_call(lambda *a, **k: _one_draw(shared, fn, a, k), _replace(args, locals_),
                                       _replace(kwargs, locals_), meta_fn=fn)
        else:
            result = _one_draw(shared, fn, _replace(args, locals_), _replace(kwargs, locals_))
    else:
        result = fn(*_replace(args, locals_), **_replace(kwargs, locals_))
    if post is not None:
        result = post(result, locals_)
    if mean_dims is not None and base == "mean":
        # the local mean of a split dim, rescaled to the share of the global mean it is
        n_local = n_global = 1
        for d in mean_dims:
            n_local *= locals_[id(uniq[0])].shape[d]
            n_global *= uniq[0]._shape[d]
        result = result * (n_local / n_global)
    if self_ is not None:
        return self_
    return _wrap(result, pl, outs, lengths)


def _same_layout(name, gs):
    """The common case of a pointwise op whose global inputs share one layout (sbp and logical
    shape, no partial sums, no random draw): {id: local component} -- the op runs on the
    components as they are and its result has that layout -- or None."""
    first = gs[0]
    base = _base(name)
    if not (base in UNARY or base in BINARY) or name in RANDOM or base in RANDOM:
        return None
    sbp, shape = first._sbp, first._shape
    for g in gs[1:]:
        if g._sbp != sbp or g._shape != shape:
            return None
    for s in sbp:
        if s._kind == "P":
            return None
    return {id(g): g._local for g in gs}


def _wrap_same(result, like):
    if not is_global(result) and isinstance(result, _C.Tensor) and \
            tuple(result.shape) == tuple(like._local.shape):
        return GlobalTensor(result, like._placement, like._sbp, like._shape)
    return _wrap(result, like._placement, like._sbp, (None,) * len(like._sbp))


def _signature_1d(name, base, uniq, args, kwargs, self_, fn):
    """(targets {id: sbp}, output sbp, its logical size along a split dim, the dims of a mean made
    partial, pre, post, the local function) of op `name` on a 1-d placement -- or on one mesh
    axis (uniq then holds _AxisViews); the broadcast fallback when no rule applies."""
    targets, out, length, mean_dims, pre, post = None, None, None, None, None, None
    try:
        if name in COPIES and self_ is not None:
            targets, out, length = {id(g): self_._sbp[0] for g in uniq}, self_._sbp[0], None
        elif base in UNARY or base in BINARY:
            targets, out, length = _pointwise(base, uniq, _broadcast_shape([g._shape for g in uniq]))
        elif base in ("matmul", "mm"):
            sig = _matmul(uniq)
            if sig is not None:
                targets, out, length = sig
        elif base == "linear":
            targets, out, length = _linear(uniq)
        elif base in ("sum", "mean") and len(uniq) == 1:
            targets, out, length, mean_dims = _reduce(base, uniq[0], args, kwargs)
        elif base in ("softmax", "log_softmax") and len(uniq) == 1:
            g = uniq[0]
            dim = arg(args, kwargs, 1, ("dim",))
            if g._sbp[0]._kind == "S" and dim is not None and dim % g.dim() != g._sbp[0]._dim:
                targets, out, length = {}, g._sbp[0], g._shape[g._sbp[0]._dim]
        elif base in rules_nn.RULES and (fn is not None or base in rules_nn.PER_AXIS):
            sig = rules_nn.RULES[base](base, uniq, args, kwargs)
            if sig is not None:
                targets, out, length, pre, post = sig[:5]
                fn = sig[5] if len(sig) > 5 else fn  # a rule's own local implementation
        elif base in ("transpose", "permute", "t", "swapaxes", "swapdims") and len(uniq) == 1:
            moved = _moves(base, uniq[0], args, kwargs)
            if moved in ("B", "P"):
                targets, out = {}, uniq[0]._sbp[0]
            else:
                targets, out, length = {}, moved, uniq[0]._shape[uniq[0]._sbp[0]._dim]
    except (TypeError, IndexError, ValueError):
        targets = None  # an argument form the rules do not read: the broadcast fallback
    if targets is None:
        targets, out, length, mean_dims, pre, post = {id(g): B for g in uniq}, B, None, None, None, None
    return targets, out, length, mean_dims, pre, post, fn


class _AxisView:
    """A global tensor as one mesh axis sees it (the 1-d rules' input): that axis's SBP, the shape
    of its level (after the axes before it, as the signature lays them out)."""
    __slots__ = ("_sbp", "_shape", "_placement")

    def __init__(self, sbp, shape, placement):
        self._sbp, self._shape, self._placement = (sbp,), tuple(shape), placement

    def dim(self):
        return len(self._shape)


def _signature_nd(name, base, uniq, args, kwargs, self_, pl):
    """The n-d signature on a mesh: the 1-d rules applied axis by axis (OneFlow's n-d SBP is one
    1-d signature per axis), each on the shapes the axes before it leave; the nn rules outside
    rules_nn.PER_AXIS (their own local functions, normalisers) run broadcast on every axis."""
    nd = len(pl._hierarchy)
    if name in COPIES and self_ is not None:
        return {id(g): self_._sbp for g in uniq}, self_._sbp, (None,) * nd, None
    apls = axes(pl)
    targets = {id(g): [] for g in uniq}
    outs, lengths, mean_dims = [], [], None
    for k in range(nd):
        views = [_AxisView(g._sbp[k], levels(g._shape, tuple(targets[id(g)]), pl)[-1], apls[k]) for g in uniq]
        by_id = {id(g): v for g, v in zip(uniq, views)}  # (rules find their tensors among the arguments)
        t, o, ln, md, pre, post, _ = _signature_1d(name, base, views, _replace(args, by_id), _replace(kwargs, by_id),
                                                   None, None)
        if pre is not None or post is not None:
            t, o, ln, md = {id(v): B for v in views}, B, None, None
        for v, g in zip(views, uniq):
            targets[id(g)].append(t.get(id(v), g._sbp[k]))
        outs.append(o)
        lengths.append(ln)
        mean_dims = mean_dims if md is None else md
    return {key: tuple(v) for key, v in targets.items()}, tuple(outs), tuple(lengths), mean_dims


def _one_draw(shared, fn, args, kwargs):
    """fn under one seed on the ranks of each placement of `shared` (the mesh axes whose output is
    broadcast): drawn by their first rank and sent to the others (each rank's own generator state
    is left as it was)."""
    from .. import distributed as dist, int64, random, randint, manual_seed
    from .runtime import group
    seed = randint(0, 2 ** 62, (1,), dtype=int64)
    for pl in shared:
        dist.broadcast(seed, src=pl._ranks[0], group=group(pl._ranks))
    with random.fork_rng():
        manual_seed(int(seed.item()))
        return fn(*args, **kwargs)


def _update(name, fn, args, kwargs):
    """A fused optimizer update (sgd_update, adam_update, ...): per parameter, its gradient and
    state share its layout (Note [Gradients of global tensors]; state made by zeros_like), so each
    rank updates its components in place; step counters are local."""
    def local(obj):
        if is_global(obj):
            return obj._local
        if isinstance(obj, (list, tuple)):
            return type(obj)(local(o) for o in obj)
        return obj
    lists = [v for v in list(args) + list(kwargs.values()) if isinstance(v, (list, tuple)) and v]
    params = lists[0] if lists else []
    for lst in lists[1:]:
        for p, t in zip(params, lst):
            if is_global(p) and is_global(t) and \
                    (t._placement, t._sbp, t._shape) != (p._placement, p._sbp, p._shape):
                raise RuntimeError(f"{name}: a parameter laid out as {p._sbp} has state or a gradient laid out as "
                                   f"{t._sbp}")
    # parameters on placements without this process (Note [Ranks outside a placement]) have
    # nothing to update here: their entries leave every per-parameter list
    keep = [i for i, p in enumerate(params) if not (is_global(p) and p._local.is_meta)]
    if len(keep) < len(params):
        if not keep:
            return params

        def only(v):
            if isinstance(v, (list, tuple)) and len(v) == len(params):
                return type(v)(v[i] for i in keep)
            return v
        args, kwargs = tuple(only(a) for a in args), {k: only(v) for k, v in kwargs.items()}
    fn(*local(tuple(args)), **{k: local(v) for k, v in kwargs.items()})
    return params


def _wrap(result, pl, outs, lengths):
    """Global tensors of the local results laid out as `outs` (one sbp per mesh axis); their
    logical sizes along split dims from `lengths` (the outermost split of a dim decides)."""
    if is_global(result):
        raise RuntimeError("a global op's function returned a global tensor for its local components "
                           "(a method of flow.Tensor that makes global tensors has no global form)")
    if isinstance(result, _C.Tensor):
        shape = list(result.shape)
        for out, length in reversed(list(zip(outs, lengths))):
            if out._kind == "S" and length is not None:
                shape[out._dim] = length
        return GlobalTensor(result, pl, tuple(outs), shape)
    if isinstance(result, tuple) and type(result) is not tuple:  # namedtuples (max's values, indices)
        return type(result)(*[_wrap(r, pl, outs, lengths) for r in result])
    if isinstance(result, (list, tuple)):
        return type(result)(_wrap(r, pl, outs, lengths) for r in result)
    return result


def _factory(name, args, kwargs):
    """flow.<factory>(..., placement=, sbp=): the logical tensor made on every rank (taken as a
    broadcast one, so random ones are the first rank's draw: one logical tensor), then laid out as
    `sbp`."""
    from .tensor import from_logical
    placement, sbp = kwargs.pop("placement", None), kwargs.pop("sbp", None)
    if placement is None or sbp is None:
        raise TypeError(f"{name}(): a global tensor needs both placement and sbp")
    if kwargs.get("device") is not None:
        raise TypeError(f"{name}(): give either device (a local tensor) or placement (a global one), not both")
    requires_grad = bool(kwargs.pop("requires_grad", False))
    kwargs["device"] = placement.type
    full = getattr(_C, name)(*args, **kwargs)
    g = from_logical(full, placement, sbp, name)
    if requires_grad:
        g._local.requires_grad_(True)
    return g


_kinds = []  # (class, handler(op function, args, kwargs)): other Python-level tensor kinds


def register_kind(cls, handler):
    """Table ops given an instance of `cls` (marked `_oneflow_global_`) go to handler(fn, args,
    kwargs) (the job-function API's micro-batch blobs: _legacy/micro.py)."""
    _kinds.append((cls, handler))


def _kind_of(obj):
    for cls, handler in _kinds:
        if isinstance(obj, cls):
            return handler
        if isinstance(obj, (list, tuple)):
            for o in obj:
                h = _kind_of(o)
                if h is not None:
                    return h
    return None


def call_op(name, inplace, args, kwargs):
    """From the bindings (Note [Global arguments]): flow._C.<name>(*args, **kwargs)."""
    if _kinds:
        handler = _kind_of(list(args) + list(kwargs.values()))
        if handler is not None:
            return handler(getattr(_C, name), args, kwargs)
    if kwargs.get("placement") is not None or kwargs.get("sbp") is not None:
        return _factory(name, list(args), dict(kwargs))
    if "placement" in kwargs:  # (a factory's binding passes its placement= / sbp= on: None here)
        kwargs = {k: v for k, v in kwargs.items() if k not in ("placement", "sbp")}
    fn = getattr(_C, name)
    self_ = None
    if inplace:
        first = args[0] if args else next(iter(kwargs.values()))
        self_ = first if is_global(first) else None
    return run(name, fn, tuple(args), dict(kwargs), self_)


def call_method(name, self_, args, kwargs):
    """A method or operator of a global tensor."""
    if name == "__getitem__":
        return run("getitem", lambda x, i: x[i], (self_, args[0]), {})
    if name == "__setitem__":
        def setitem(x, i, v):
            x[i] = v
        return run("setitem_", setitem, (self_, args[0], args[1]), {}, self_)
    inplace = (name.endswith("_") and not name.endswith("__")) or name.startswith("__i")
    base = DUNDER.get(name, name)

    def fn(x, *a, **k):
        return getattr(x, name)(*a, **k)
    return run(base, fn, (self_,) + tuple(args), kwargs, self_ if inplace else None)


def call_function(name, args, kwargs):
    """A reflected operator (2 + g): the operator on the local components."""
    base = DUNDER.get(name, name)
    op = OPERATOR.get(base) or getattr(operator, name)
    return run(base, op, tuple(args), kwargs)


_C._set_global_dispatcher(call_op)
