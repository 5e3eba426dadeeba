"""The SBP rules that op signatures name (docs/global_tensors.md, "SBP signatures").

Each op's signature is data of the op table -- derived from a pointwise `kind:`, or an `sbp:` field
naming one of the rules below -- generated into the extension (tools/gen_sbp.py, through
tools/gen_ops.py) and read as sbp_table.SIGNATURES, so an op
gets its rule in one place and the dispatcher (dispatch.py) lists no op names. A rule reads its
global inputs' SBPs and logical shapes (and the op's arguments where the algebra depends on them:
a reduction's dims, softmax's dim) and returns the signature

    (targets {id(input): sbp}, output sbp, output's logical size along its split dim,
     dims of a mean made partial, pre, post, the local function or None)

-- inputs missing from targets stay as they are -- or None: none of its split / partial
signatures fits these inputs, and its last one applies: every input broadcast, the op run whole
on every rank. An op whose signature names no rule has no signature: global inputs raise.
"""
from .. import _oneflow_internal as _C
from ..sbp import broadcast as B, partial_sum as P, split as S
from . import rules_contract, rules_matrix, rules_nn, rules_reduce, rules_shape
from .runtime import arg
from .sbp_table import ARGS


def broadcast_shape(shapes):
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


def _sig(targets, out, length=None, mean_dims=None, pre=None, post=None, fn=None):
    return targets, out, length, mean_dims, pre, post, fn


def _pointwise(gs, partial=None):
    """Elementwise ops: split inputs keep a common output dim D (dims aligned right); broadcast
    inputs spanning D are sliced to it (no communication), the others (size 1 along D, or fewer
    dims) are needed whole. `partial`: "sum" -- partial-sum inputs only stay partial-sum (a sum or
    difference of addends); "scale" -- a partial-sum first input times / over broadcast ones stays
    partial-sum (Note [Partial elementwise] in src/api/global_rules.h); otherwise partial-sum
    inputs are reduced first."""
    out_shape = broadcast_shape([g._shape for g in gs])
    kinds = {g._sbp[0]._kind for g in gs}
    if kinds == {"B"}:
        return _sig({}, B)
    targets = {}
    if "P" in kinds:
        if partial is not None and _C._sbp_stays_partial(partial, [g._sbp[0] for g in gs]):
            return _sig({}, P)  # (Note [Partial elementwise])
        targets = {id(g): B for g in gs if g._sbp[0]._kind == "P"}
    nd = len(out_shape)
    splits = [nd - g.dim() + g._sbp[0]._dim for g in gs if g._sbp[0]._kind == "S" and id(g) not in targets]
    if not splits:
        return _sig({id(g): B for g in gs}, B)
    D = splits[0]
    for g in gs:
        d = D - (nd - g.dim())
        targets[id(g)] = S(d) if d >= 0 and g._shape[d] != 1 else B
    if all(t == B for t in targets.values()):
        # a split of a dim of logical size 1 (one rank holds it, the others nothing): every input
        # is needed whole there, so the output is whole too -- labelled split it would count the
        # element once per rank
        return _sig({id(g): B for g in gs}, B)
    return _sig(targets, S(D), out_shape[D])


def _constant(gs, args, kwargs):
    """Whether a sum / difference has an operand that is no global tensor (`x + 2`): added on every
    rank it would count once per addend, so a partial sum is reduced first."""
    ids = {id(g) for g in gs}
    ops = list(args) + [v for key, v in kwargs.items() if key not in ("alpha", "out")]
    return any(id(o) not in ids and (isinstance(o, (int, float, complex)) or hasattr(o, "shape")) for o in ops)


def _scales(gs, args, kwargs):
    """Whether a product / quotient is linear in its partial-sum operand: it is the first
    argument (a divisor is not), it is not also another operand (`p * p` squares the sum: the rule
    sees each global tensor once, so this is its only chance to tell), and no rounding mode
    truncates each addend's quotient."""
    first = arg(args, kwargs, 0, ("input", "self"))
    others = list(args[1:]) + [v for k, v in kwargs.items() if k not in ("input", "self")]
    return first is gs[0] and not any(o is first for o in others) and kwargs.get("rounding_mode") is None


def _scaled(product, name, gs, args, kwargs):
    """(the global inputs, the partial rule) of a product / quotient: "scale" where it is linear in
    its partial-sum operand (_scales); a product (the `pointwise_product` rule) is linear in either
    factor, so `3 * p` or `w * p` (the partial sum second: a reflected operator, flow.mul(w, p))
    stays a partial sum too -- the partial operand then goes first, where Note [Partial
    elementwise] looks for it."""
    if product and not name.endswith("_") and kwargs.get("out") is None:  # (not mul_: its output is its first)
        ps = [g for g in gs if g._sbp[0]._kind == "P"]
        ops = list(args) + list(kwargs.values())
        if len(ps) == 1 and sum(o is ps[0] for o in ops) == 1:
            return [ps[0]] + [g for g in gs if g is not ps[0]], "scale"
    return gs, "scale" if _scales(gs, args, kwargs) else None


def _c_sig(sig, gs):
    """A signature of Note [SBP rules in C++] (src/api/global_rules.h): (targets, one per input in
    `gs`'s order; out; length[; mean dims]) or None."""
    if sig is None:
        return None
    targets, out, length = sig[:3]
    return _sig({id(g): t for g, t in zip(gs, targets)}, out, length, sig[3] if len(sig) > 3 else None)


def _matmul(gs):
    """matmul / mm: the rule of src/api/global_rules.h (MatmulRule)."""
    a, b = gs[0], gs[1] if len(gs) > 1 else None
    if b is None:
        return None
    return _c_sig(_C._sbp_matmul(a._sbp[0], a._shape, b._sbp[0], b._shape), gs[:2])


def _linear(gs):
    """F.linear(x, weight, bias): the rule of src/api/global_rules.h (LinearRule)."""
    if len(gs) < 2:
        return None
    x, w = gs[0], gs[1]
    return _c_sig(_C._sbp_linear(x._sbp[0], x._shape, w._sbp[0], w._shape, len(gs) > 2), gs[:3])


def _reduce(mean, g, args, kwargs):
    """sum / mean: the rule of src/api/global_rules.h (ReduceRule), on the op's dim / keepdim."""
    dims = arg(args, kwargs, 1, ("dim", "axis"))
    keep = bool(arg(args, kwargs, 2, ("keepdim", "keepdims")) or False)
    dims = None if dims is None else [dims] if isinstance(dims, int) else list(dims)
    return _c_sig(_C._sbp_reduce(mean, g._sbp[0], g._shape, dims, keep), [g])


def _softmax(g, args, kwargs):
    """softmax / log_softmax / softmin: the rule of src/api/global_rules.h (SoftmaxRule)."""
    return _c_sig(_C._sbp_softmax(g._sbp[0], g._shape, arg(args, kwargs, 1, ("dim",))), [g])


def _moved(g, where):
    """A transpose-like op: the split dim goes to where(dim); broadcast / partial stay."""
    s = g._sbp[0]
    if s._kind != "S":
        return _sig({}, s)
    return _sig({}, S(where(s._dim)), g._shape[s._dim])


def _transpose(g, args, kwargs):
    """The rule of src/api/global_rules.h (TransposeRule)."""
    d0, d1 = arg(args, kwargs, 1, ("dim0", "axis0")), arg(args, kwargs, 2, ("dim1", "axis1"))
    return _c_sig(_C._sbp_transpose(g._sbp[0], g._shape, d0, d1), [g])


def _permute(g, args, kwargs):
    nd = g.dim()
    perm = list(args[1:]) if len(args) > 2 or (len(args) == 2 and isinstance(args[1], int)) else \
        list(arg(args, kwargs, 1, ("dims", "perm")))
    perm = [p % nd for p in perm]
    return _moved(g, perm.index)


def _t(g):
    return _moved(g, lambda d: 1 - d if g.dim() == 2 else d)


def _param(name, key, args, kwargs):
    """The op's `dim` / `keepdim` argument, found where its signature has it (sbp_table.ARGS);
    a varargs dims parameter (`flip(x, 0, 1)`) gathers the positional rest."""
    spec = (ARGS.get(name) or ARGS.get(name.rstrip("_")) or {}).get(key)
    if spec is None:
        return None
    pname, pos, default, varargs = spec
    if pname in kwargs:
        return kwargs[pname]
    if pos is None or len(args) <= pos:
        return default
    return list(args[pos:]) if varargs and len(args) > pos + 1 else args[pos]


def _dims(name, g, args, kwargs):
    """The dims op `name` works along, normalised (None: every dim -- or a default the rule cannot
    place, such as topk's or roll's None)."""
    dims = _param(name, "dim", args, kwargs)
    if dims is None:
        return None
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not dims or not all(isinstance(d, int) for d in dims):
        return None
    return [d % max(g.dim(), 1) for d in dims]


def _along_dim(name, gs, args, kwargs):
    """An op along some dims whose other dims it keeps (sort, topk, cumsum, flip, narrow, chunk,
    index_select, ...): a split elsewhere is kept; along the split dim the op needs the whole (its
    broadcast signature). Further tensor inputs (index_select's index) are needed whole."""
    g = gs[0]
    s = g._sbp[0]
    if s._kind != "S" or arg(args, kwargs, 0, ("input",)) is not g:
        return None
    dims = _dims(name, g, args, kwargs)
    if dims is None or s._dim in dims:
        return None
    return _sig({id(o): B for o in gs[1:]}, s, g._shape[s._dim])


def _reduce_dims(name, gs, args, kwargs):
    """A reduction that is no sum (amax, argmax, all, prod, var, median, ...): over dims without the
    split one the split is kept (moved down past removed dims); over the split dim it needs the
    whole (partial_max / partial_min are not supported yet: its broadcast signature)."""
    g = gs[0]
    s = g._sbp[0]
    if len(gs) != 1 or s._kind != "S":
        return None
    dims = _dims(name, g, args, kwargs)
    if dims is None or s._dim in dims:
        return None
    keep = bool(_param(name, "keepdim", args, kwargs) or False)
    out_dim = s._dim if keep else s._dim - sum(1 for d in dims if d < s._dim)
    return _sig({}, S(out_dim), g._shape[s._dim])


def _resplit(name, gs, args, kwargs):
    sig = rules_reduce.resplit(gs, _dims(name, gs[0], args, kwargs), bool(_param(name, "keepdim", args, kwargs)))
    return None if sig is None else _sig(*sig[:3])


def _index_aligned(name, gs, args, kwargs):
    """Ops along a dim whose other tensors match the input element for element off that dim:
    gather / take_along_dim / scatter's index and src, index_add / index_copy's source, diff's
    prepend / append, cross's other. Every tensor of the input's rank split along one other dim (of
    one size there; a broadcast one sliced) keeps it; the others (index_add's 1-d index, a 0-d
    value) are needed whole. A dim-less form (take_along_dim flattening, cross's default dim) or a
    partial sum: whole."""
    g = gs[0]
    dims = _dims(name, g, args, kwargs)
    same = [x for x in gs if x.dim() == g.dim()]
    split = [x._sbp[0]._dim for x in same if x._sbp[0]._kind == "S"]
    if dims is None or not split or any(x._sbp[0]._kind == "P" for x in gs):
        return None
    d = split[0]
    if d in dims or any(x._shape[d] != g._shape[d] for x in same):
        return None
    return _sig({id(x): S(d) if x.dim() == g.dim() else B for x in gs}, S(d), g._shape[d])


def _pair_reduce(name, gs, args, kwargs):
    """cosine_similarity(x1, x2, dim): two tensors of one shape split along one dim that is not the
    reduced one (a broadcast one sliced) -> split, moved down past the reduced dim."""
    if len(gs) != 2 or gs[0]._shape != gs[1]._shape:
        return None
    dims = _dims(name, gs[0], args, kwargs)
    split = [x._sbp[0]._dim for x in gs if x._sbp[0]._kind == "S"]
    if dims is None or not split or any(x._sbp[0]._kind == "P" for x in gs) or split[0] in dims:
        return None
    d = split[0]
    return _sig({id(x): S(d) for x in gs}, S(d - sum(1 for x in dims if x < d)), gs[0]._shape[d])


def _squeeze(unsqueeze, gs, args, kwargs):
    """squeeze(dims) / unsqueeze(dim): the split dim moves past the dims removed (those of
    logical size 1) or inserted; squeeze() of every size-1 dim, or of the split dim, needs the
    whole."""
    g = gs[0]
    s = g._sbp[0]
    if len(gs) != 1 or s._kind != "S":
        return None
    dim = arg(args, kwargs, 1, ("dim",))
    if unsqueeze:
        if not isinstance(dim, int):
            return None
        dim %= g.dim() + 1
        return _sig({}, S(s._dim + (dim <= s._dim)), g._shape[s._dim])
    if dim is None:
        return None
    dims = [d % max(g.dim(), 1) for d in ([dim] if isinstance(dim, int) else dim)]
    removed = [d for d in dims if g._shape[d] == 1]
    if s._dim in removed:
        return None
    n, k = g._shape[s._dim], len(g._placement._ranks)
    if s._dim in dims and (n // k == 1 or (n // k == 0 and n % k)):
        return None  # (a rank's slice of size 1 there would be squeezed where the whole is not)
    return _sig({}, S(s._dim - sum(1 for d in removed if d < s._dim)), g._shape[s._dim])


def _cat(stack, gs, args, kwargs):
    """cat / stack: rules_shape.cat_layout along the op's dim, when every tensor of the list is a
    global one (`gs` holds each once: `cat([g, g])` lists one)."""
    tensors = arg(args, kwargs, 0, ("tensors", "inputs"))
    dim = arg(args, kwargs, 1, ("dim",), 0)
    ids = {id(g) for g in gs}
    if not isinstance(tensors, (list, tuple)) or not tensors or not isinstance(dim, int) or \
            any(id(t) not in ids for t in tensors) or gs[0].dim() + stack == 0:
        return None
    sig = rules_shape.cat_layout(gs, dim % (gs[0].dim() + stack), bool(stack))
    return None if sig is None else _sig(*sig[:3])


def _bmm(gs):
    """Batched matmul: the rule of src/api/global_rules.h (BmmRule: MatmulRule's on 3-d inputs)."""
    if len(gs) != 2:
        return None
    a, b = gs
    return _c_sig(_C._sbp_bmm(a._sbp[0], a._shape, b._sbp[0], b._shape), gs)


def _copy(gs, self_):
    """copy_: self keeps its layout, the source is boxed to it."""
    if self_ is None:
        return None
    return _sig({id(g): self_._sbp[0] for g in gs}, self_._sbp[0])


def _nn(rule):
    """A rules_nn rule, (targets, out, length, pre, post[, local function]), as a signature."""
    def apply(name, gs, args, kwargs, self_):
        sig = rule(name, gs, args, kwargs)
        if sig is None:
            return None
        targets, out, length, pre, post = sig[:5]
        return _sig(targets, out, length, pre=pre, post=post, fn=sig[5] if len(sig) > 5 else None)
    return apply


class Rule:
    """A named SBP rule. per_axis: it reads only SBPs and shapes, so on a mesh it applies axis by
    axis (otherwise it runs broadcast there); same_layout: elementwise, so inputs sharing one
    layout (no partial sums) run as they are (the dispatcher's fast path); one_draw: a random op,
    whose broadcast output must be one draw (every rank under one seed). `update` (a fused
    optimizer update, each parameter in its own layout) has no function: the dispatcher runs it on
    the components before looking for global inputs (its step counters are local tensors)."""

    def __init__(self, fn, per_axis=True, same_layout=False, one_draw=False):
        self.fn, self.per_axis, self.same_layout, self.one_draw = fn, per_axis, same_layout, one_draw


RULES = {
    "pointwise": Rule(lambda n, gs, a, k, s: _pointwise(gs), same_layout=True),
    "pointwise_sum": Rule(lambda n, gs, a, k, s: _pointwise(gs, None if _constant(gs, a, k) else "sum"),
                          same_layout=True),
    "pointwise_scale": Rule(lambda n, gs, a, k, s: _pointwise(*_scaled(False, n, gs, a, k)), same_layout=True),
    "pointwise_product": Rule(lambda n, gs, a, k, s: _pointwise(*_scaled(True, n, gs, a, k)), same_layout=True),
    "random": Rule(lambda n, gs, a, k, s: _pointwise(gs), one_draw=True),
    "random_broadcast": Rule(lambda n, gs, a, k, s: None, one_draw=True),
    "broadcast": Rule(lambda n, gs, a, k, s: None),
    "metadata": Rule(lambda n, gs, a, k, s: _sig({}, gs[0]._sbp[0])),
    "copy": Rule(lambda n, gs, a, k, s: _copy(gs, s)),
    "update": Rule(None),
    "reduce_sum": Rule(lambda n, gs, a, k, s: _reduce(False, gs[0], a, k) if len(gs) == 1 else None),
    "reduce_mean": Rule(lambda n, gs, a, k, s: _reduce(True, gs[0], a, k) if len(gs) == 1 else None),
    "reduce_dims": Rule(lambda n, gs, a, k, s: _reduce_dims(n, gs, a, k)),
    # max / min reductions: over the split dim a partial max / min, all-reduced (rules_reduce.py)
    **{f"reduce_{kind}": Rule(lambda n, gs, a, k, s, r=_nn(rules_reduce.extreme(kind)): _reduce_dims(n, gs, a, k) or
                              r(n, gs, a, k, s)) for kind in ("max", "min")},
    # max / min with indices, argmax / argmin over the split dim: partial results picked from
    # (rules_reduce.indexed); kthvalue / median / mode: the input re-split along a kept dim
    **{f"reduce_{kind}_index": Rule(lambda n, gs, a, k, s, r=_nn(rules_reduce.indexed(kind)): _reduce_dims(n, gs, a, k)
                                    or r(n, gs, a, k, s) or _resplit(n, gs, a, k)) for kind in ("max", "min")},
    "reduce_select": Rule(lambda n, gs, a, k, s: _reduce_dims(n, gs, a, k) or _resplit(n, gs, a, k)),
    "along_dim": Rule(lambda n, gs, a, k, s: _along_dim(n, gs, a, k)),
    "index_aligned": Rule(lambda n, gs, a, k, s: _index_aligned(n, gs, a, k)),
    "pair_reduce": Rule(lambda n, gs, a, k, s: _pair_reduce(n, gs, a, k)),
    "squeeze": Rule(lambda n, gs, a, k, s: _squeeze(False, gs, a, k)),
    "unsqueeze": Rule(lambda n, gs, a, k, s: _squeeze(True, gs, a, k)),
    "cat": Rule(lambda n, gs, a, k, s: _cat(False, gs, a, k)),
    "stack": Rule(lambda n, gs, a, k, s: _cat(True, gs, a, k)),
    "matmul": Rule(lambda n, gs, a, k, s: _matmul(gs)),
    "bmm": Rule(lambda n, gs, a, k, s: _bmm(gs)),
    "linear": Rule(lambda n, gs, a, k, s: _linear(gs)),
    "softmax": Rule(lambda n, gs, a, k, s: _softmax(gs[0], a, k) if len(gs) == 1 else None),
    "transpose": Rule(lambda n, gs, a, k, s: _transpose(gs[0], a, k) if len(gs) == 1 else None),
    "permute": Rule(lambda n, gs, a, k, s: _permute(gs[0], a, k) if len(gs) == 1 else None),
    "t": Rule(lambda n, gs, a, k, s: _t(gs[0]) if len(gs) == 1 else None),
    # nn ops of a data-parallel step (rules_nn.py): split batch in, split batch or a loss's partial sum out
    "batchwise": Rule(_nn(rules_nn.batchwise)),
    "embedding": Rule(_nn(rules_nn.embedding)),
    "layer_norm": Rule(_nn(rules_nn.layer_norm)),
    "flatten": Rule(_nn(rules_nn.flatten)),
    "elementwise_loss": Rule(_nn(rules_nn.elementwise_loss)),  # (on a mesh: 'none' / 'sum' per axis)
    # matrix ops and dim-moving shape ops (rules_matrix.py): a batch split kept, a matrix's rows /
    # columns / inner dim as matmul's; a split off the dims the op moves kept. (Broadcast on each
    # axis of a mesh until tested there.)
    **{r: Rule(_nn(getattr(rules_matrix, r)), per_axis=False)
       for r in ("batched_matrix", "addmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "outer", "select", "diagonal",
                 "movedim", "unflatten", "expand", "repeat", "cdist", "leading", "expand_as")},
    "along_dim0": Rule(_nn(rules_matrix.along_fixed(0)), per_axis=False),  # flipud, msort
    "along_dim1": Rule(_nn(rules_matrix.along_fixed(1)), per_axis=False),  # fliplr
    # rewriting the arguments, normalising over every rank, or their own local function: broadcast
    # on each axis of a mesh
    "reshape": Rule(_nn(rules_shape.reshape), per_axis=False),
    "class_loss": Rule(_nn(rules_nn.class_loss), per_axis=False),
    "row_loss": Rule(_nn(rules_nn.row_loss), per_axis=False),
    # contractions by labels or dim lists (rules_contract.py), shape / index / row-wise ops that keep
    # a split (rules_shape.py): broadcast on each axis of a mesh until tested there
    **{r: Rule(_nn(getattr(rules_contract, r)), per_axis=False) for r in ("einsum", "tensordot", "kron")},
    **{r: Rule(_nn(getattr(rules_shape, r)), per_axis=False)
       for r in ("ravel", "like_shape", "atleast", "meshgrid", "diag_embed", "take", "index_rows",
                 "batch_aligned", "batch_all", "bias_add", "rows_first", "passthrough", "along_last")},
    **{f"stack_dim{d}": Rule(_nn(rules_shape.stack_fixed(d)), per_axis=False) for d in range(3)},
    "bias_add_random": Rule(_nn(rules_shape.bias_add), per_axis=False, one_draw=True),  # (with a dropout)
    "slice": Rule(_nn(rules_shape.slice_rule), per_axis=False),
    "searchsorted": Rule(_nn(rules_shape.lookup("sorted_sequence")), per_axis=False),
    "bucketize": Rule(_nn(rules_shape.lookup("boundaries")), per_axis=False),
    "last_dim": Rule(_nn(rules_shape.last_dims(1)), per_axis=False),
    "last_two_dims": Rule(_nn(rules_shape.last_dims(2)), per_axis=False),
    "last_three_dims": Rule(_nn(rules_shape.last_dims(3)), per_axis=False),  # (pixel_shuffle, im2col)
    "pad": Rule(_nn(rules_shape.pad), per_axis=False),
    # a fused softmax with dropout: a broadcast output is one draw
    "last_dim_random": Rule(_nn(rules_shape.last_dims(1)), per_axis=False, one_draw=True),
    "last_two_dims_random": Rule(_nn(rules_shape.last_dims(2)), per_axis=False, one_draw=True),
    "batch_norm": Rule(_nn(rules_nn.batch_norm), per_axis=False),
    # upstream's one_embedding ops: the collective shuffles and the row ops on a sharded table
    # (one_embedding/_global_rules.py; imported when used: one_embedding imports the framework)
    **{f"one_embedding_{r}": Rule(_nn(lambda n, gs, a, k, r=r: getattr(_one_embedding_rules(), r)(n, gs, a, k)),
                                  per_axis=False) for r in ("shuffle", "rows")},
}


def _one_embedding_rules():
    from ..one_embedding import _global_rules
    return _global_rules
