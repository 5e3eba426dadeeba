"""SBP rules of the shape, index and row-wise ops that keep a split where the algebra allows it
(docs/global_tensors.md, "SBP signatures"): reshapes that keep or move the split dim, the stacks,
slices, meshgrid, index lookups (take, gather_nd, roi_align, searchsorted), ops over a batch whose
every tensor is split with it, and ops that mix only an input's last dims (fused softmaxes, RMS
norms, row losses of logits). Which op follows which rule is op-table data (`sbp:`); a rule returns
(targets, output sbp, output's logical size along its split dim, pre, post) -- as rules_nn's -- or
None: every input broadcast, the op run whole on every rank."""

from .. import _oneflow_internal as _C
from ..sbp import broadcast as B, partial_sum as P, split as S
from .runtime import arg


def _world(g):
    return len(g._placement._ranks)


def _split_of(g):
    s = g._sbp[0]
    return s._dim if s._kind == "S" else None


def _no_partial(gs):
    return all(g._sbp[0]._kind != "P" for g in gs)


def _aligned(gs, out_dim, out_nd):
    """Inputs aligned right with an output split along out_dim: sliced where they span it, whole
    where they are broadcast along it (size 1 or fewer dims)."""
    t = {}
    for g in gs:
        d = out_dim - (out_nd - g.dim())
        t[id(g)] = S(d) if d >= 0 and g._shape[d] != 1 else B
    return t


def _reshape_to(x, new):
    """A split x reshaped to the logical shape `new` by the rule of src/api/global_rules.h
    (ReshapeRule): (the output's split dim, the logical shape, the local factor of that dim) or
    None (x not split, or the split lands nowhere)."""
    if _split_of(x) is None:
        return None
    sig = _C._sbp_reshape(x._sbp[0], list(x._shape), list(new), _world(x))
    if sig is None or sig[0]._kind != "S":
        return None
    out, full, m = sig
    return out._dim, list(full), m


def reshape(name, gs, args, kwargs):
    """reshape / view by the rule of src/api/global_rules.h (ReshapeRule): a split whose slices
    stay contiguous blocks of one output dim -> split there, each rank reshaping its block; a
    partial sum stays one."""
    x = gs[0]
    if len(gs) != 1 or x.dim() == 0:
        return None
    shape = arg(args, kwargs, 1, ("shape", "size"))
    if shape is None or (len(args) > 2):
        shape = list(args[1:]) if len(args) > 1 else None
    if shape is None:
        return None
    shape = [shape] if isinstance(shape, int) else list(shape)
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = list(shape[0])
    if x._sbp[0]._kind == "P" and all(isinstance(n, int) for n in shape):
        # (ReshapeRule: a partial sum stays one, each addend reshaped as the logical tensor)
        sig = _C._sbp_reshape(x._sbp[0], list(x._shape), shape, _world(x))
        return None if sig is None else ({}, P, None, None, None)
    found = _reshape_to(x, shape)
    if found is None:
        return None
    j, full, m = found

    def pre(a, k):
        local = list(full)
        local[j] = x._local.shape[x._sbp[0]._dim] * m
        first = a[0] if a else k.get("input", k.get("self"))
        rest = {kk: v for kk, v in k.items() if kk not in ("input", "self", "shape", "size")}
        return (first, local), rest
    return {}, S(j), full[j], pre, None


def ravel(name, gs, args, kwargs):
    """ravel / flatten of every dim: a split leading the flattened dim (every dim before it of
    size 1) whose size divides evenly over the ranks -> split(0)."""
    x = gs[0]
    if len(gs) != 1 or x.dim() == 0:
        return None
    found = _reshape_to(x, [-1])
    if found is None:
        return None
    return {}, S(0), found[1][0], None, None


def like_shape(name, gs, args, kwargs):
    """view_as / reshape_as(input, other): as reshape to other's shape, other laid out as the
    output (so its component has the shape each rank's block takes)."""
    if len(gs) != 2 or gs[0] is gs[1]:
        return None
    x, other = gs
    found = _reshape_to(x, list(other._shape))
    if found is None:
        return None
    j, full, m = found
    return {id(other): S(j)}, S(j), full[j], None, None


def atleast(name, gs, args, kwargs):
    """atleast_1d / 2d / 3d: the split kept, moved past a new leading dim (a 1-d input made 2-d
    or 3-d becomes (1, n[, 1]))."""
    x = gs[0]
    d = _split_of(x)
    if len(gs) != 1 or d is None:
        return None
    want = int(name[len("atleast_")])
    return {}, S(d + (x.dim() == 1 and want >= 2)), x._shape[d], None, None


def cat_layout(gs, cat_dim, new_dim=False):
    """The signature of a concatenation of `gs` (every global input, each once) along `cat_dim` --
    stack's: along a new dim inserted there: a split off the cat dim is kept (every input split
    there, broadcast ones sliced; stack's moved past the new dim); a split along the cat dim cannot
    be kept -- each rank's slices would interleave -- so every input is re-split along the largest
    other dim (one all-to-all: each rank receives (n - 1) / n of its new slice, where the broadcast
    signature gathers the whole). Partial sums are reduced first (nn.Graph's packing of
    micro-batch outputs stacks them and gives them back broadcast). (targets, out, length, pre,
    post), or None: broadcast."""
    kinds = {g._sbp[0]._kind for g in gs}
    splits = [g._sbp[0]._dim for g in gs if g._sbp[0]._kind == "S"]
    if "P" in kinds or not splits or any(g.dim() != gs[0].dim() for g in gs):
        return None
    d, shape = splits[0], gs[0]._shape
    if new_dim or d != cat_dim:
        if any(g._shape[d] != shape[d] for g in gs):
            return None
        return {id(g): S(d) for g in gs}, S(d + (new_dim and cat_dim <= d)), shape[d], None, None
    others = [j for j in range(len(shape)) if j != cat_dim and shape[j] > 0]
    if not others:
        return None
    j = max(others, key=lambda j: shape[j])
    return {id(g): S(j) for g in gs}, S(j), shape[j], None, None


def stack_fixed(cat_dim):
    """The rule of vstack / hstack / dstack (the table's `stack_dim0` / `1` / `2`; column_stack is
    hstack on inputs of 2 dims or more): on inputs that need no promotion (more dims than the
    fixed one), cat along the fixed dim (cat_layout)."""
    def rule(name, gs, args, kwargs):
        if not gs or any(g.dim() < max(cat_dim + 1, 2) for g in gs):
            return None
        return cat_layout(gs, cat_dim)
    return rule


def meshgrid(name, gs, args, kwargs):
    """meshgrid of 1-d tensors: output dim i spans input i ('xy' swaps the first two); the first
    split input keeps its split there in every output, the others are needed whole."""
    indexing = arg(args, kwargs, 1, "indexing", "ij")
    if not gs or any(g.dim() != 1 for g in gs) or len({id(g) for g in gs}) != len(gs) or not _no_partial(gs):
        return None
    i = next((k for k, g in enumerate(gs) if _split_of(g) == 0), None)
    if i is None:
        return None
    out = i
    if indexing == "xy" and len(gs) > 1 and i < 2:
        out = 1 - i
    return {id(g): (S(0) if k == i else B) for k, g in enumerate(gs)}, S(out), gs[i]._shape[0], None, None


def slice_rule(name, gs, args, kwargs):
    """slice / slice_update(input[, update], start, stop, step): a split on a dim the slice takes
    whole (start 0, stop past the end, step 1) is kept; the update split there with it."""
    x = gs[0]
    d = _split_of(x)
    start, stop, step = (arg(args, kwargs, p, n) for p, n in ((1, "start"), (2, "stop"), (3, "step")))
    if name == "slice_update":
        start, stop, step = (arg(args, kwargs, p, n) for p, n in ((2, "start"), (3, "stop"), (4, "step")))
    if d is None or not _no_partial(gs) or start is None or d >= len(start):
        return None
    n = x._shape[d]
    if start[d] not in (0, -n) or stop[d] < n or step[d] != 1:
        return None
    return {id(g): S(d) for g in gs}, S(d), n, None, None


def diag_embed(name, gs, args, kwargs):
    """diag_embed with the new matrix dims last (dim1, dim2 the output's last two): a split on a
    batch dim (not the input's last) kept."""
    x = gs[0]
    d = _split_of(x)
    nd = x.dim() + 1
    dims = {arg(args, kwargs, 2, "dim1", -2) % nd, arg(args, kwargs, 3, "dim2", -1) % nd}
    if len(gs) != 1 or d is None or d >= x.dim() - 1 or dims != {nd - 2, nd - 1}:
        return None
    return {}, S(d), x._shape[d], None, None


def take(name, gs, args, kwargs):
    """take(input, index): the output is shaped as the index; the input needed whole, the index's
    split kept."""
    x, idx = arg(args, kwargs, 0, "input"), arg(args, kwargs, 1, "index")
    if idx is None or not hasattr(idx, "_sbp") or x is idx or _split_of(idx) is None:
        return None
    return {id(g): B for g in gs if g is not idx}, idx._sbp[0], idx._shape[_split_of(idx)], None, None


def index_rows(name, gs, args, kwargs):
    """gather_nd(params, indices) / roi_align(x, rois): each row of the index tensor (all but its
    last dim) makes the output rows of the same place; the looked-up tensor needed whole."""
    idx = gs[-1] if len(gs) == 2 else None
    if idx is None or gs[0] is idx:
        return None
    d = _split_of(idx)
    if d is None or d >= idx.dim() - 1:
        return None
    return {id(gs[0]): B}, S(d), idx._shape[d], None, None


def lookup(table_name):
    """searchsorted(sorted_sequence, input) / bucketize(input, boundaries): a 1-d table needed
    whole, the values' split kept; an n-d table and values split on one batch dim (not the last)."""
    def rule(name, gs, args, kwargs):
        table = kwargs.get(table_name)
        values = [g for g in gs if g is not table]
        if len(values) != 1 or not _no_partial(gs):
            return None
        v = values[0]
        d = _split_of(v)
        if table is None or not hasattr(table, "_sbp") or table.dim() == 1:
            if d is None:
                return None
            return ({id(table): B} if any(g is table for g in gs) else {}), S(d), v._shape[d], None, None
        split = [_split_of(g) for g in (table, v) if _split_of(g) is not None]
        if not split or split[0] >= table.dim() - 1 or v.dim() != table.dim():
            return None
        d = split[0]
        return {id(table): S(d), id(v): S(d)}, S(d), v._shape[d], None, None
    return rule


def batch_aligned(name, gs, args, kwargs):
    """Ops over a batch whose every tensor of the first's rank and batch size is indexed with it
    (max_unpool's indices, in_top_k's targets / predictions, fused attention's query, key, value,
    sparse cross entropies' logits and labels): split(0) on all of them (broadcast ones sliced),
    lower-rank or size-1-batch tensors (a shared mask) needed whole -> split(0)."""
    first = gs[0]
    if not _no_partial(gs) or first.dim() == 0 or not any(_split_of(g) == 0 for g in gs):
        return None
    n = first._shape[0]
    # (of the first's rank, or a vector of labels beside a matrix of logits)
    batched = [g for g in gs if g.dim() >= 1 and g._shape[0] == n and n != 1 and
               (g.dim() == first.dim() or min(g.dim(), first.dim()) == 1)]
    ids = {id(g) for g in batched}  # (by identity: == on tensors compares elements)
    if id(first) not in ids or any(_split_of(g) not in (0, None) for g in batched):
        return None
    t = {id(g): (S(0) if id(g) in ids else B) for g in gs}
    return t, S(0), n, None, None


def last_dims(k):
    """Ops that mix only the last k dims of their inputs (aligned right, as broadcasting) and
    keep the others (fused scale-mask softmaxes, RMS norms, a row loss of logits): a split on
    another output dim kept, inputs spanning it sliced."""
    def rule(name, gs, args, kwargs):
        if not _no_partial(gs):
            return None
        nd = max(g.dim() for g in gs)
        splits = [nd - g.dim() + _split_of(g) for g in gs if _split_of(g) is not None]
        if not splits or splits[0] >= nd - k:
            return None
        D = splits[0]
        size = next(g._shape[D - (nd - g.dim())] for g in gs if _split_of(g) is not None)
        t = _aligned(gs, D, nd)
        if all(v == B for v in t.values()):  # (a split of a size-1 dim: whole)
            return None
        return t, S(D), size, None, None
    return rule


def bias_add(name, gs, args, kwargs):
    """bias_add / fused_bias_add_*(a, b, axis): a's split kept; the 1-d bias sliced when a is
    split along the bias's axis, needed whole otherwise."""
    a, b = arg(args, kwargs, 0, ("x", "a")), arg(args, kwargs, 1, ("bias", "b"))
    axis = arg(args, kwargs, 2, "axis", 1)
    if a is None or not hasattr(a, "_sbp") or a is b or _split_of(a) is None or not _no_partial(gs):
        return None
    d = _split_of(a)
    t = {id(g): B for g in gs if g is not a}
    if b is not None and hasattr(b, "_sbp") and d == axis % a.dim():
        t[id(b)] = S(0)
    return t, S(d), a._shape[d], None, None


def rows_first(name, gs, args, kwargs):
    """fused_matmul_bias / fused_glu / matmul_transposed: the first input's rows split (not its
    last dim, nor any dim when it is transposed), every other tensor needed whole -> rows split."""
    x = gs[0]
    d = _split_of(x)
    if d is None or d >= x.dim() - 1 or kwargs.get("transpose_a") or any(g is x for g in gs[1:]):
        return None
    add = kwargs.get("_add_to_output")  # (fused_matmul_bias: added to the output, sliced with its rows)
    return {id(g): S(d) if g is add else B for g in gs[1:]}, S(d), x._shape[d], None, None


def passthrough(name, gs, args, kwargs):
    """depend / depend_all(input, dependencies): the input as it is; the others only ordered."""
    x = arg(args, kwargs, 0, "input")
    if x is None or not hasattr(x, "_sbp"):
        return None
    d = _split_of(x)
    return {}, x._sbp[0], x._shape[d] if d is not None else None, None, None


def along_last(name, gs, args, kwargs):
    """Ops along the last dim (arg_sort): a split on another dim kept."""
    x = gs[0]
    d = _split_of(x)
    if len(gs) != 1 or d is None or d == x.dim() - 1:
        return None
    return {}, S(d), x._shape[d], None, None


def batch_all(name, gs, args, kwargs):
    """batch_gather / max_pool_gather: every tensor is indexed by the batch (dim 0): split(0) on
    all of them (broadcast ones sliced) -> split(0)."""
    n = gs[0]._shape[0] if gs[0].dim() else None
    if not _no_partial(gs) or n is None or not any(_split_of(g) == 0 for g in gs) or \
            any(g.dim() == 0 or g._shape[0] != n or _split_of(g) not in (0, None) for g in gs):
        return None
    return {id(g): S(0) for g in gs}, S(0), n, None, None


def pad(name, gs, args, kwargs):
    """pad(input, pad): the pairs of `pad` pad the last len(pad) / 2 dims; a split on a dim before
    them is kept."""
    x = gs[0]
    d = _split_of(x)
    widths = arg(args, kwargs, 1, "pad")
    if len(gs) != 1 or d is None or not isinstance(widths, (list, tuple)) or d >= x.dim() - len(widths) // 2:
        return None
    return {}, S(d), x._shape[d], None, None
