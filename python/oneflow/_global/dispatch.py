"""The SBP signature of an op called on global tensors, the boxing of its inputs to it, the local
op on the components, and the global outputs (docs/architecture.md §8; docs/global_tensors.md).

The signature of an op is data of the op table (a pointwise `kind:`, or an `sbp:` field naming a
rule of signatures.py; tools/gen_sbp.py's PYTHON_SIGNATURES for the Python-level names), which
the build writes into the extension and sbp_table.py reads: this module names no op. An op
without one raises a RuntimeError on global inputs, naming the op and their SBPs -- it never
runs silently on gathered inputs. A rule with no split / partial signature for the inputs'
layouts gives its last one: every input broadcast, the op run whole on every rank.
"""
import operator

from .. import _lazy_state, _oneflow_internal as _C
from .boxing import BroadcastUse, box_nd, gather_for_partial_use
from .runtime import axes, levels, position
from .sbp_table import DUNDER, NO_SIGNATURE, SIGNATURES
from .signatures import RULES, broadcast_shape
from .tensor import GlobalTensor, is_global
from ..sbp import broadcast as B


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


def _rule(name, sig, gs):
    """The rule named by op `name`'s signature `sig`; a RuntimeError naming the op and its inputs'
    SBPs when it has none."""
    if sig is None:
        sbps = ", ".join(f"{tuple(g._sbp)}" for g in gs)
        why = NO_SIGNATURE.get(name) or NO_SIGNATURE.get(_base(name))
        why = f" ({why})" if why else ""
        raise RuntimeError(f"{name}: no SBP signature for global inputs laid out as {sbps}; the op has no `sbp:` "
                           f"in the op table{why} (src/ops/table/README.md; Python-level names: tools/gen_sbp.py). "
                           "Make the inputs local (to_local()) or declare its signature")
    return RULES[sig]


def run(name, fn, args, kwargs, self_=None):
    """Calls fn on the local components of `args` boxed to the signature of op `name`."""
    sig = SIGNATURES.get(name) or SIGNATURES.get(_base(name))  # (an in-place or operator form: its op's)
    if sig == "update":  # (before the walk: its step counters are local tensors)
        return _update(name, fn, args, kwargs)
    gs = []
    _walk((args, kwargs), gs)
    if not gs:
        return fn(*args, **kwargs)
    rule = _rule(name, sig, gs)
    trace = _lazy_state.recording()
    if trace is not None and not getattr(trace, "global_tensors", False):
        raise NotImplementedError(f"{name}: global tensors in a job function are not supported yet (nn.Graph "
                                  "traces them)")
    if rule is RULES["copy"] and self_ is not None and any(g._placement != self_._placement for g in gs):
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
        fast = _same_layout(rule, gs)
        if fast is not None:
            result = fn(*_replace(args, fast), **_replace(kwargs, fast))
            return self_ if self_ is not None else _wrap_same(result, gs[0])
    uniq = list({id(g): g for g in gs}.values())
    position(pl)  # (this process's place in it, and its groups, known on every process)
    apls = axes(pl)
    pre = post = per_output = None
    if len(apls) == 1:
        targets, out, length, mean_dims, pre, post, fn = _signature_1d(rule, name, uniq, args, kwargs, self_, fn)
        if isinstance(out, list):  # (a multi-output op's own layout per output: [(sbp, length)])
            per_output, (out, length) = out, out[0]
        targets, outs, lengths = {k: (v,) for k, v in targets.items()}, (out,), (length,)
    else:
        targets, outs, lengths, mean_dims = _signature_nd(rule, name, uniq, args, kwargs, self_, pl)
    # Note [In-place ops that box]: an in-place op whose signature needs its tensor laid out
    # otherwise (fill_ or setitem_ of a split or partial-sum tensor: broadcast) runs on the boxed
    # component and boxes the result back, so the tensor keeps its layout (OneFlow's: x.sbp is the
    # same after `x[:, :8] = y`); the tensor then holds that new component, whose autograd graph
    # runs through both boxings.
    box_back = self_ is not None and targets.get(id(self_), self_._sbp) != self_._sbp
    if box_back and self_._local.is_leaf and self_._local.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an in-place operation. "
                           "[OneFlow: a leaf Tensor that requires grad is being used in an in-place operation]")
    locals_ = {}
    for g in uniq:
        t = targets.get(id(g), g._sbp)
        if len(apls) == 1 and g._sbp[0]._kind == "S" and t[0]._kind == "B" and outs[0]._kind != "B" and \
                g._local.requires_grad and not g._local.is_meta and len(pl._ranks) > 1:
            # (gathered for a split or partial use: its gradient reduce-scattered back, not
            # all-reduced and sliced -- half the bytes)
            locals_[id(g)] = gather_for_partial_use(g._local, g._sbp[0], g._shape, pl)
            continue
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
    if shared and rule.one_draw:
        if trace is not None:  # a Python step of the graph's program: one seed per run
            result = trace.record_call(lambda *a, **k: _one_draw(shared, fn, a, k), _replace(args, locals_),
                                       _replace(kwargs, locals_), meta_fn=fn)
        else:
            result = _one_draw(shared, fn, _replace(args, locals_), _replace(kwargs, locals_))
    else:
        result = fn(*_replace(args, locals_), **_replace(kwargs, locals_))
    if post is not None:
        result = post(result, locals_)
    if mean_dims is not None:
        # the local mean of a split dim, rescaled to the share of the global mean it is
        n_local = n_global = 1
        for d in mean_dims:
            n_local *= locals_[id(uniq[0])].shape[d]
            n_global *= uniq[0]._shape[d]
        if n_local == 0 and n_global:
            # this rank holds none of the split dim (an uneven split): its local mean, of nothing,
            # is NaN; its share of the global mean is 0
            result = _C.nan_to_num(result, 0.0)
        elif n_global:  # (a mean of nothing is NaN on every rank already)
            result = result * (n_local / n_global)
    if box_back:
        self_._local = box_nd(locals_[id(self_)], targets[id(self_)], self_._sbp, self_._shape, pl)
    if self_ is not None:
        return self_
    if per_output is not None:
        return tuple(_wrap(r, pl, (o,), (ln,)) for r, (o, ln) in zip(result, per_output))
    return _wrap(result, pl, outs, lengths)


def _same_layout(rule, gs):
    """The common case of an elementwise op whose global inputs share one layout (sbp and logical
    shape, no partial sums, no random draw): {id: local component} -- the op runs on the
    components as they are and its result has that layout -- or None."""
    first = gs[0]
    if not rule.same_layout:
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
    # (a list of results, broadcast_tensors': each shaped as the inputs, split where they are)
    return _wrap(result, like._placement, like._sbp,
                 tuple(like._shape[s._dim] if s._kind == "S" else None for s in like._sbp))


def _signature_1d(rule, name, uniq, args, kwargs, self_, fn):
    """(targets {id: sbp}, output sbp, its logical size along a split dim, the dims of a mean made
    partial, pre, post, the local function) of op `name` by `rule` on a 1-d placement -- or on one
    mesh axis (uniq then holds _AxisViews, fn is None); the rule's all-broadcast signature when
    none of its others fits."""
    sig = None
    if fn is not None or rule.per_axis:
        try:
            sig = rule.fn(name, uniq, args, kwargs, self_)
        except (TypeError, IndexError, ValueError):
            sig = None  # an argument form the rule does not read: its all-broadcast signature
    if sig is None:
        return {id(g): B for g in uniq}, B, None, None, None, None, fn
    targets, out, length, mean_dims, pre, post, own = sig
    return targets, out, length, mean_dims, pre, post, own if own is not None else fn


class _AxisView:
    """A global tensor as one mesh axis sees it (the 1-d rules' input): that axis's SBP, the shape
    of its level (after the axes before it, as the signature lays them out)."""
    __slots__ = ("_sbp", "_shape", "_placement")

    def __init__(self, sbp, shape, placement):
        self._sbp, self._shape, self._placement = (sbp,), tuple(shape), placement

    def dim(self):
        return len(self._shape)


def _signature_nd(rule, name, uniq, args, kwargs, self_, pl):
    """The n-d signature on a mesh: the 1-d rule applied axis by axis (OneFlow's n-d SBP is one
    1-d signature per axis), each on the shapes the axes before it leave; a rule that is not
    per_axis (its own local function, normalisers) runs broadcast on every axis."""
    nd = len(pl._hierarchy)
    if rule is RULES["copy"] and self_ is not None:
        return {id(g): self_._sbp for g in uniq}, self_._sbp, (None,) * nd, None
    apls = axes(pl)
    targets = {id(g): [] for g in uniq}
    outs, lengths, mean_dims = [], [], None
    for k in range(nd):
        # (the first process's level shapes, so every process picks the same signature: with uneven
        # splits the levels differ, and a rule reading sizes could choose otherwise on one of them)
        views = [_AxisView(g._sbp[k], levels(g._shape, tuple(targets[id(g)]), pl, 0)[-1], apls[k]) for g in uniq]
        by_id = {id(g): v for g, v in zip(uniq, views)}  # (rules find their tensors among the arguments)
        t, o, ln, md, pre, post, _ = _signature_1d(rule, name, views, _replace(args, by_id),
                                                   _replace(kwargs, by_id), None, None)
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
    # a `_like` factory given a global tensor (flow.zeros_like(g, placement=, sbp=)) reads only its
    # logical shape and dtype: an empty local tensor of them stands in for it. Only its `input`:
    # other tensor arguments are values (flow.full(shape, global_scalar, ...) reads the scalar)
    if name.endswith("_like"):
        if args:
            args = [_logical_stand_in(args[0]), *args[1:]]
        elif "input" in kwargs:
            kwargs["input"] = _logical_stand_in(kwargs["input"])
    full = getattr(_C, name)(*args, **kwargs)
    g = from_logical(full, placement, sbp, name)
    if requires_grad:
        g._local.requires_grad_(True)
    return g


def _logical_stand_in(x):
    if not is_global(x):
        return x
    return _C.empty(x._shape, dtype=x.dtype, device=x._placement.type)


_kinds = []  # (class, handler(op function, args, kwargs)): other Python-level tensor kinds


def register_kind(cls, handler):
    """Table ops given an instance of `cls` (marked `_oneflow_global_`) go to handler(fn, args,
    kwargs) (the job-function API's micro-batch blobs: _legacy/micro.py)."""
    _kinds.append((cls, handler))
    _C._register_kind(cls)  # (Note [Kind test] in src/api/convert.h: the bindings tell it by its type)


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
    out = kwargs.get("out")
    if out is not None:
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        return _into_out(name, run(name, fn, tuple(args), kwargs), out)
    return run(name, fn, tuple(args), dict(kwargs), self_)


def _into_out(name, result, out):
    """Note [out= arguments] (src/api/out_arg.cpp) for a global op: the result computed, then copied
    into `out` (boxed to its layout) and `out` itself returned."""
    from .._grad_mode import no_grad
    results, outs = ((result,), (out,)) if not isinstance(result, (tuple, list)) else (result, out)
    if not isinstance(outs, (tuple, list)) or len(outs) != len(results):
        raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(results)} Tensors")
    for r, o in zip(results, outs):
        if not is_global(o):
            raise RuntimeError(f"{name}(): out= of a global op must be a global tensor, got a local one")
        if tuple(o.shape) != tuple(r.shape):
            raise RuntimeError(f"{name}(): out= has shape {tuple(o.shape)}, the result {tuple(r.shape)}")
        if (r.requires_grad or o.requires_grad) and _C.is_grad_enabled():
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
    with no_grad():
        for r, o in zip(results, outs):
            o.copy_(r)
    if not isinstance(result, (tuple, list)):
        return out
    return type(result)(*outs) if isinstance(result, tuple) and type(result) is not tuple else type(result)(outs)


def inplace_name(name):
    """Whether Tensor method / operator `name` is an in-place form (add_, __iadd__; not __invert__)."""
    return (name.endswith("_") and not name.endswith("__")) or (name.startswith("__i") and name != "__invert__")


def call_method(name, self_, args, kwargs):
    """A method or operator of a global tensor."""
    if name == "__getitem__":
        return run("getitem", lambda x, i: x[i], (self_, args[0]), {})
    if name == "__setitem__":
        def setitem(x, i, v):
            x[i] = v
        return run("setitem_", setitem, (self_, args[0], args[1]), {}, self_)
    inplace = inplace_name(name)
    base = DUNDER.get(name, name)

    def fn(x, *a, **k):
        return getattr(x, name)(*a, **k)
    return run(base, fn, (self_,) + tuple(args), kwargs, self_ if inplace else None)


def call_function(name, args, kwargs):
    """A reflected operator (2 + g): the operator on the local components."""
    return run(DUNDER.get(name, name), getattr(operator, name), tuple(args), kwargs)


_C._set_global_dispatcher(call_op)
