"""SBP rules of the contractions named by labels or dim lists: einsum, tensordot, kron
(docs/global_tensors.md, "SBP signatures"; op-table data names them: `sbp: einsum`, ...). A rule
returns (targets, output sbp, output's logical size along its split dim, pre, post) or None (every
input broadcast, the op run whole).

einsum's algebra: pick the label L of a split operand's split dim. Every operand holding L (of
its full size) is split along it -- a broadcast one sliced, no communication -- and the others are
needed whole; each rank then computes the einsum of its slices. If L is an output label the
output is split along it; if L is summed out, each rank's result is the sum over its part of L: a
partial sum. A label repeated inside one operand (a diagonal) cannot be split that way."""
from ..sbp import broadcast as B, partial_sum as P, split as S
from .runtime import arg


def _split_of(g):
    s = g._sbp[0]
    return s._dim if s._kind == "S" else None


def _parse(equation, ops):
    """(labels of each operand, output labels) with an ellipsis expanded into fresh labels aligned
    right (as broadcasting aligns them); None for a form this rule does not read."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ops):
        return None
    used = set(c for c in eq if c.isalpha())
    fresh = [chr(c) for c in range(0x100, 0x200) if chr(c) not in used]
    n_ell = 0
    for t, g in zip(terms, ops):
        if "..." in t:
            n_ell = max(n_ell, g.dim() - (len(t) - 3))
    ell = fresh[:n_ell]
    labels = []
    for t, g in zip(terms, ops):
        if "..." in t:
            k = g.dim() - (len(t) - 3)
            head, _, tail = t.partition("...")
            lab = list(head) + ell[n_ell - k:] + list(tail)
        else:
            lab = list(t)
        if len(lab) != g.dim() or not all(c.isalpha() for c in lab):
            return None
        labels.append(lab)
    if arrow:
        if "..." in rhs:
            head, _, tail = rhs.partition("...")
            out = list(head) + ell + list(tail)
        else:
            out = list(rhs)
    else:
        counts = {}
        for lab in labels:
            for c in lab:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c in counts if counts[c] == 1 and c not in ell)
    return labels, out


def einsum(name, gs, args, kwargs):
    equation = arg(args, kwargs, 0, "equation")
    ops = arg(args, kwargs, 1, "operands")
    if not isinstance(equation, str) or not isinstance(ops, (list, tuple)) or len(ops) != len(gs) or \
            len({id(g) for g in ops}) != len(ops):
        return None
    kinds = [g._sbp[0]._kind for g in ops]
    if "P" in kinds:
        # multilinear: one partial-sum operand times whole others stays a partial sum
        if kinds.count("P") == 1 and set(kinds) <= {"P", "B"}:
            return {}, P, None, None, None
        return None
    parsed = _parse(equation, ops)
    if parsed is None:
        return None
    labels, out = parsed
    first = next((i for i, g in enumerate(ops) if _split_of(g) is not None), None)
    if first is None:
        return None
    L = labels[first][_split_of(ops[first])]
    if any(lab.count(L) > 1 for lab in labels) or out.count(L) > 1:
        return None
    # L's logical size: an operand of size 1 along it is broadcast there (needed whole)
    size = max(g._shape[lab.index(L)] for g, lab in zip(ops, labels) if L in lab)
    targets = {}
    for g, lab in zip(ops, labels):
        targets[id(g)] = S(lab.index(L)) if L in lab and g._shape[lab.index(L)] == size and size != 1 else B
    if L in out:
        return targets, S(out.index(L)), size, None, None
    return targets, P, None, None, None


def tensordot(name, gs, args, kwargs):
    """tensordot(a, b, dims_self, dims_other): a split on a free dim of a (b whole) -> the output
    split at its place; on a free dim of b (a whole) -> after a's free dims; a split on a
    contracted pair (the other side sliced with it) -> partial sum."""
    a, b = arg(args, kwargs, 0, "input"), arg(args, kwargs, 1, "other")
    da, db = arg(args, kwargs, 2, "dims_self"), arg(args, kwargs, 3, "dims_other")
    if len(gs) != 2 or a is b or da is None or db is None or any(g._sbp[0]._kind == "P" for g in gs):
        return None
    da = [d % max(a.dim(), 1) for d in da]
    db = [d % max(b.dim(), 1) for d in db]
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    sa, sb = _split_of(a), _split_of(b)
    if sa is not None:
        if sa in free_a:
            return {id(b): B}, S(free_a.index(sa)), a._shape[sa], None, None
        pair = db[da.index(sa)]
        if b._shape[pair] != a._shape[sa] or sb not in (None, pair):
            return None
        return {id(b): S(pair)}, P, None, None, None
    if sb is not None:
        if sb in free_b:
            return {id(a): B}, S(len(free_a) + free_b.index(sb)), b._shape[sb], None, None
        pair = da[db.index(sb)]
        if a._shape[pair] != b._shape[sb]:
            return None
        return {id(a): S(pair)}, P, None, None, None
    return None


def kron(name, gs, args, kwargs):
    """kron(a, b): a split along a dim whose size divides evenly over the ranks (b whole) -> the
    output split there: each rank's block of a makes a contiguous block of that dim of the output
    (of the balanced size). A split of b interleaves: whole."""
    a, b = arg(args, kwargs, 0, "input"), arg(args, kwargs, 1, "other")
    if len(gs) != 2 or a is b or _split_of(a) is None or b._sbp[0]._kind == "P":
        return None
    nd = max(a.dim(), b.dim())
    d = _split_of(a)
    if a._shape[d] % len(a._placement._ranks):
        return None
    od = d + nd - a.dim()
    bd = od - (nd - b.dim())
    return {id(b): B}, S(od), a._shape[d] * (b._shape[bd] if bd >= 0 else 1), None, None
