"""SBP rules of the matrix ops and of the shape ops that move dims (docs/global_tensors.md, "SBP
signatures"): which op follows which rule is op-table data (`sbp: batched_matrix`, `addmm`, ...;
signatures.RULES names these functions).

A rule returns (targets, output sbp, output's logical size along its split dim, pre, post) -- as
rules_nn's -- or None: the op's last signature applies, every input broadcast and the op run whole
on every rank (a split of a matrix's own dims, whose rows or columns every output element mixes,
or a partial sum fed to a nonlinear op). The inputs `gs` come in the order of the op's arguments
(the dispatcher walks them), so a rule over several tensors reads them by position and declines
(None) when one tensor is passed twice."""
from ..sbp import broadcast as B, partial_sum as P, split as S
from .runtime import arg


def _sliced(g, out_dim, out_nd):
    """An input added to an output split along out_dim (dims aligned right, as broadcasting):
    sliced along with it where it spans that dim, needed whole where it is broadcast along it."""
    d = out_dim - (out_nd - g.dim())
    return S(d) if d >= 0 and g._shape[d] != 1 else B


def _distinct(gs, n):
    return len(gs) == n and len({id(g) for g in gs}) == n


def batched_matrix(name, gs, args, kwargs):
    """Ops on each matrix of a batch (inverse, det, qr, svd, eigh, solve, matrix_power, tril, ...):
    a split on a batch dim -- any but the last two of the first input -- is kept by every input
    and every output (their batch dims lead); every input must share the first's batch dims."""
    a = gs[0]
    nb = a.dim() - 2
    split = [g._sbp[0]._dim for g in gs if g._sbp[0]._kind == "S"]
    if nb < 1 or any(g._sbp[0]._kind == "P" for g in gs) or not split or split[0] >= nb:
        return None
    d = split[0]
    if any(g.dim() <= nb or g._shape[:nb] != a._shape[:nb] for g in gs):
        return None
    return {id(g): S(d) for g in gs}, S(d), a._shape[d], None, None


def _mm(lhs, rhs, row, col):
    """The signature of lhs @ rhs (of dims `row`, inner; inner, `col` of the output, batch dims
    before them kept apart): rows split (rhs broadcast) -> split rows; columns split (lhs
    broadcast) -> split columns; the inner dim split on both -> partial sum. (kind, out dim or
    None, targets) or None."""
    sa, sb = lhs._sbp[0], rhs._sbp[0]
    inner_a, inner_b = lhs.dim() - 1, rhs.dim() - 2
    if sa == S(lhs.dim() - 2) and sb._kind != "P":
        return "S", row, {id(lhs): sa, id(rhs): B}, lhs._shape[-2]
    if sb == S(rhs.dim() - 1) and sa._kind != "P":
        return "S", col, {id(lhs): B, id(rhs): sb}, rhs._shape[-1]
    if sa == S(inner_a) and sb == S(inner_b):
        return "P", None, {}, None
    return None


def _plus(inp, mm, out_nd):
    """beta * input + alpha * (the product's signature `mm`): the input sliced with a split output,
    made a partial sum (its value on the first rank) with a partial one."""
    if mm is None:
        return None
    kind, out_dim, targets, length = mm
    if kind == "P":
        return {**targets, id(inp): P}, P, None, None, None
    return {**targets, id(inp): _sliced(inp, out_dim, out_nd)}, S(out_dim), length, None, None


def addmm(name, gs, args, kwargs):
    """addmm(input, mat1, mat2) = beta * input + alpha * mat1 @ mat2 (2-d)."""
    if not _distinct(gs, 3) or gs[1].dim() != 2 or gs[2].dim() != 2:
        return None
    return _plus(gs[0], _mm(gs[1], gs[2], 0, 1), 2)


def baddbmm(name, gs, args, kwargs):
    """baddbmm(input, batch1, batch2) = beta * input + alpha * batch1 @ batch2 (3-d): the batch
    split on both (a broadcast side sliced) is kept, else rows / columns / inner dim as addmm."""
    if not _distinct(gs, 3) or gs[1].dim() != 3 or gs[2].dim() != 3:
        return None
    inp, b1, b2 = gs
    s1, s2 = b1._sbp[0], b2._sbp[0]
    if S(0) in (s1, s2) and s1 in (S(0), B) and s2 in (S(0), B):
        return {id(inp): _sliced(inp, 0, 3), id(b1): S(0), id(b2): S(0)}, S(0), b1._shape[0], None, None
    return _plus(inp, _mm(b1, b2, 1, 2), 3)


def addbmm(name, gs, args, kwargs):
    """addbmm(input, batch1, batch2) = beta * input + alpha * sum over the batch of batch1 @ batch2:
    the batch split (a broadcast side sliced) sums to a partial sum (the input on the first rank);
    rows / columns / inner dim as addmm."""
    if not _distinct(gs, 3) or gs[1].dim() != 3 or gs[2].dim() != 3:
        return None
    inp, b1, b2 = gs
    s1, s2 = b1._sbp[0], b2._sbp[0]
    if S(0) in (s1, s2) and s1 in (S(0), B) and s2 in (S(0), B):
        return {id(inp): P, id(b1): S(0), id(b2): S(0)}, P, None, None, None
    return _plus(inp, _mm(b1, b2, 0, 1), 2)  # (the batch summed: the output's dims are the matrix's)


def addmv(name, gs, args, kwargs):
    """addmv(input, mat, vec) = beta * input + alpha * mat @ vec: the rows split (vec broadcast)
    -> split; the columns and vec split -> partial sum (the input on the first rank)."""
    if not _distinct(gs, 3) or gs[1].dim() != 2 or gs[2].dim() != 1:
        return None
    inp, mat, vec = gs
    sm, sv = mat._sbp[0], vec._sbp[0]
    if sm == S(0) and sv._kind != "P":
        return {id(inp): _sliced(inp, 0, 1), id(mat): S(0), id(vec): B}, S(0), mat._shape[0], None, None
    if sm == S(1) and sv == S(0):
        return {id(inp): P}, P, None, None, None
    return None


def mv(name, gs, args, kwargs):
    """mat @ vec: rows split -> split; the columns and vec split -> partial sum."""
    if not _distinct(gs, 2) or gs[0].dim() != 2 or gs[1].dim() != 1:
        return None
    mat, vec = gs
    sm, sv = mat._sbp[0], vec._sbp[0]
    if sm == S(0) and sv._kind != "P":
        return {id(vec): B}, S(0), mat._shape[0], None, None
    if sm == S(1) and sv == S(0):
        return {}, P, None, None, None
    return None


def dot(name, gs, args, kwargs):
    """dot of two vectors: split on either (the other sliced) -> partial sum of the slices' dots."""
    if not _distinct(gs, 2) or gs[0].dim() != 1 or gs[1].dim() != 1:
        return None
    if S(0) in (gs[0]._sbp[0], gs[1]._sbp[0]) and all(g._sbp[0] in (S(0), B) for g in gs):
        return {id(g): S(0) for g in gs}, P, None, None, None
    return None


def outer(name, gs, args, kwargs):
    """outer(a, b)[i, j] = a[i] * b[j]: a split -> rows split; b split -> columns split."""
    if not _distinct(gs, 2) or gs[0].dim() != 1 or gs[1].dim() != 1:
        return None
    a, b = gs
    if a._sbp[0] == S(0) and b._sbp[0]._kind != "P":
        return {id(b): B}, S(0), a._shape[0], None, None
    if b._sbp[0] == S(0) and a._sbp[0]._kind != "P":
        return {id(a): B}, S(1), b._shape[0], None, None
    return None


def _one_split(gs):
    """The single input's split dim, or None (a broadcast or partial input: the op runs whole)."""
    if len(gs) != 1 or gs[0]._sbp[0]._kind != "S":
        return None
    return gs[0]._sbp[0]._dim


def _kept(gs, out_dim):
    """The input's split kept, at out_dim of the output (None: needed whole)."""
    g = gs[0]
    if out_dim is None:
        return None
    return {}, S(out_dim), g._shape[g._sbp[0]._dim], None, None


def _sizes(args, kwargs, names):
    """A sizes argument given as a list or as varargs (`x.expand(2, 3)`, `x.repeat([2, 1])`)."""
    for n in names:
        if n in kwargs:
            v = kwargs[n]
            return [v] if isinstance(v, int) else list(v)
    if len(args) > 2 or (len(args) == 2 and isinstance(args[1], int)):
        return list(args[1:])
    return list(args[1]) if len(args) == 2 else None


def select(name, gs, args, kwargs):
    """select(dim, index): a split on another dim kept, moved down past the removed dim."""
    d = _one_split(gs)
    dim = arg(args, kwargs, 1, "dim")
    if d is None or not isinstance(dim, int):
        return None
    dim %= gs[0].dim()
    return _kept(gs, None if dim == d else d - (dim < d))


def diagonal(name, gs, args, kwargs):
    """diagonal(offset, dim1, dim2): a split on another dim kept (the diagonal goes last)."""
    d = _one_split(gs)
    if d is None:
        return None
    nd = gs[0].dim()
    dims = {arg(args, kwargs, 2, "dim1", 0) % nd, arg(args, kwargs, 3, "dim2", 1) % nd}
    return _kept(gs, None if d in dims else d - sum(1 for x in dims if x < d))


def movedim(name, gs, args, kwargs):
    """movedim(source, destination): the split dim goes where the permutation puts it."""
    d = _one_split(gs)
    src, dst = arg(args, kwargs, 1, "source"), arg(args, kwargs, 2, "destination")
    if d is None or src is None or dst is None:
        return None
    nd = gs[0].dim()
    src = [s % nd for s in ([src] if isinstance(src, int) else src)]
    dst = [s % nd for s in ([dst] if isinstance(dst, int) else dst)]
    order = [None] * nd
    for s, t in zip(src, dst):
        order[t] = s
    rest = iter(x for x in range(nd) if x not in src)
    order = [next(rest) if o is None else o for o in order]
    return _kept(gs, order.index(d))


def unflatten(name, gs, args, kwargs):
    """unflatten(dim, sizes): a split on another dim kept, moved past the new dims."""
    d = _one_split(gs)
    dim, sizes = arg(args, kwargs, 1, "dim"), arg(args, kwargs, 2, "sizes")
    if d is None or not isinstance(dim, int) or sizes is None:
        return None
    dim %= gs[0].dim()
    return _kept(gs, None if dim == d else d + (len(sizes) - 1) * (d > dim))


def expand(name, gs, args, kwargs):
    """expand / broadcast_to: a split on a dim the op does not expand kept, moved past the new
    leading dims."""
    d = _one_split(gs)
    sizes = _sizes(args, kwargs, ("size", "sizes", "shape"))
    g = gs[0]
    if d is None or sizes is None or len(sizes) < g.dim():
        return None
    lead = len(sizes) - g.dim()
    if sizes[lead + d] not in (-1, g._shape[d]):
        return None
    local = [-1 if i == lead + d else s for i, s in enumerate(sizes)]  # (the split dim's size is each rank's)

    def pre(a, k):
        first = a[0] if a else k["input"]
        return (first, local), {kk: v for kk, v in k.items() if kk not in ("input", "size", "sizes", "shape")}
    targets, out, length, _, _ = _kept(gs, lead + d)
    return targets, out, length, pre, None


def repeat(name, gs, args, kwargs):
    """repeat / tile: a split on a dim repeated once kept, moved past the new leading dims (tile's
    fewer repeats count from the last dim)."""
    d = _one_split(gs)
    reps = _sizes(args, kwargs, ("sizes", "repeats", "dims"))
    g = gs[0]
    if d is None or reps is None:
        return None
    reps = [1] * (g.dim() - len(reps)) + reps
    lead = len(reps) - g.dim()
    return _kept(gs, lead + d if reps[lead + d] == 1 else None)


def cdist(name, gs, args, kwargs):
    """cdist(x1, x2)[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||: x1's rows split (x2 broadcast)
    -> rows split; x2's rows split (x1 broadcast) -> columns split; a batch split of both (of one
    batch shape; a broadcast side sliced) kept."""
    if not _distinct(gs, 2) or gs[0].dim() != gs[1].dim() or gs[0].dim() < 2:
        return None
    x1, x2 = gs
    nd = x1.dim()
    s1, s2 = x1._sbp[0], x2._sbp[0]
    if s1 == S(nd - 2) and s2._kind != "P":
        return {id(x2): B}, S(nd - 2), x1._shape[-2], None, None
    if s2 == S(nd - 2) and s1._kind != "P":
        return {id(x1): B}, S(nd - 1), x2._shape[-2], None, None
    d = next((s._dim for s in (s1, s2) if s._kind == "S"), None)
    if d is not None and d < nd - 2 and s1 in (S(d), B) and s2 in (S(d), B) and x1._shape[:-2] == x2._shape[:-2]:
        return {id(x1): S(d), id(x2): S(d)}, S(d), x1._shape[d], None, None
    return None


def leading(name, gs, args, kwargs):
    """Ops that rewrite only the input's last dim (view_as_real / view_as_complex, one_hot): a split
    on any other dim kept at its place; on the last dim the op runs whole."""
    d = _one_split(gs)
    return _kept(gs, d if d is not None and d < gs[0].dim() - 1 else None)


def along_fixed(dim):
    """The rule of ops along one fixed dim (flipud / msort: 0, fliplr: 1): a split on another dim
    kept; along that dim the op runs whole."""
    def rule(name, gs, args, kwargs):
        d = _one_split(gs)
        return _kept(gs, d if d is not None and d != dim else None)
    return rule


def expand_as(name, gs, args, kwargs):
    """expand_as(x, other): x broadcast to other's shape, as pointwise ops broadcast an input: split
    along other's split dim (x sliced where it spans it, whole where it is broadcast along it), or
    along x's own split dim (other, a shape donor, split there too)."""
    if not _distinct(gs, 2) or any(g._sbp[0]._kind == "P" for g in gs):
        return None
    x, other = gs
    lead = other.dim() - x.dim()
    if other._sbp[0]._kind == "S":
        d = other._sbp[0]._dim
        return {id(x): _sliced(x, d, other.dim())}, S(d), other._shape[d], None, None
    if x._sbp[0]._kind == "S" and lead >= 0 and x._shape[x._sbp[0]._dim] != 1:
        d = x._sbp[0]._dim + lead
        return {id(other): S(d)}, S(d), other._shape[d], None, None
    return None
