"""One process of the boxing tests (tests/test_global_boxing.py starts it through the launcher):
`global_boxing_worker.py CASE`. Every SBP pair, 1-d and on a 2 x 2 mesh, and placement changes:
the components against the logical tensor (numpy), the gradients, and the bytes this process
received (oneflow.boxing.bytes_moved()) against the least it must receive."""
import itertools
import math
import os
import sys

import numpy as np

import oneflow as flow
import oneflow.distributed as dist
from oneflow._global.tensor import GlobalTensor
from oneflow._global.boxing import box_between

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
ONE_D = [S0, S1, B, PS]
E = 8  # float64's bytes


def logical(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _balanced(length, parts):
    """The slices of a balanced split (the first length % parts one element more), as OneFlow's."""
    base, extra = divmod(length, parts)
    out, lo = [], 0
    for r in range(parts):
        n = base + (r < extra)
        out.append((lo, lo + n))
        lo += n
    return out


def region(shape, sbp, hierarchy, index):
    """The box of the logical tensor held by the process at flat mesh `index` (nested splits);
    partial-sum axes hold the whole box (as addends)."""
    coords = np.unravel_index(index, hierarchy)
    box = [(0, n) for n in shape]
    for axis, s in enumerate(sbp):
        if s._kind == "S":
            lo, hi = box[s._dim]
            a, b = _balanced(hi - lo, hierarchy[axis])[coords[axis]]
            box[s._dim] = (lo + a, lo + b)
    return box


def cut(x, box):
    return x[tuple(slice(lo, hi) for lo, hi in box)]


def size(box):
    return math.prod(max(0, hi - lo) for lo, hi in box)


def overlap(a, b):
    return [(max(x[0], y[0]), min(x[1], y[1])) for x, y in zip(a, b)]


def addend(x, sbp, hierarchy, index, seed):
    """This process's component of x laid out as sbp: its box, and on partial-sum axes an addend
    (random on every coordinate but 0, which takes the rest)."""
    part = cut(x, region(x.shape, sbp, hierarchy, index)).copy()
    coords = np.unravel_index(index, hierarchy)
    for axis, s in enumerate(sbp):
        if s._kind != "P":
            continue
        n = hierarchy[axis]
        noise = [np.random.default_rng(seed + 100 * axis + k).standard_normal(part.shape) for k in range(n)]
        part = part - sum(noise[1:]) if coords[axis] == 0 else noise[coords[axis]]
    return part


def make(x, sbp, pl, seed=7, requires_grad=False):
    """(the global tensor, its local leaf) laid out as sbp on pl, made of this process's component
    (a meta one outside pl)."""
    sbp = tuple(sbp)
    index = pl._ranks.index(RANK) if RANK in pl._ranks else 0
    part = addend(x, sbp, pl.hierarchy, index, seed)
    leaf = flow.tensor(part, dtype=flow.float64) if RANK in pl._ranks else \
        flow.empty(part.shape, dtype=flow.float64, device="meta")
    leaf.requires_grad_(requires_grad)
    return GlobalTensor(leaf, pl, sbp, x.shape), leaf


def const(c, pl):
    """c broadcast on pl (a meta component outside it)."""
    local = flow.tensor(c) if RANK in pl._ranks else flow.empty(c.shape, dtype=flow.float64, device="meta")
    return GlobalTensor(local, pl, (B,) * len(pl.hierarchy), c.shape)


def check_component(y, x, sbp, pl, what):
    """y's component against x's box (its sum over the partial-sum axes' groups for P)."""
    index = pl._ranks.index(RANK)
    loc = y.to_local().numpy()
    want = cut(x, region(x.shape, sbp, pl.hierarchy, index))
    assert loc.shape == want.shape, f"{what}: component shape {loc.shape} != {want.shape}"
    if any(s._kind == "P" for s in sbp):  # the addends sum to the box: all-reduce over the P axes
        t = flow.tensor(loc)
        mesh = np.array(pl._ranks).reshape(pl.hierarchy)
        for axis, s in enumerate(sbp):
            if s._kind == "P" and pl.hierarchy[axis] > 1:
                for line in np.moveaxis(mesh, axis, -1).reshape(-1, pl.hierarchy[axis]):
                    grp = _groups[tuple(sorted(int(r) for r in line))]
                    if RANK in line:
                        dist.all_reduce(t, group=grp)
        loc = t.numpy()
    np.testing.assert_allclose(loc, want, rtol=1e-12, atol=1e-12, err_msg=what)


_groups = {}


def make_groups(pl):
    """Every line of the mesh as a process group (made by every process, in one order)."""
    mesh = np.array(pl._ranks).reshape(pl.hierarchy)
    for axis in range(len(pl.hierarchy)):
        for line in np.moveaxis(mesh, axis, -1).reshape(-1, pl.hierarchy[axis]):
            key = tuple(sorted(int(r) for r in line))
            if key not in _groups:
                _groups[key] = dist.new_group(list(key))


def least_bytes_1d(shape, src, dst, n, index):
    """The least bytes the process at `index` of n must receive to go from src to dst."""
    numel = math.prod(shape)
    if src == dst or dst._kind == "P" and src._kind != "P" or src._kind == "B":
        return 0
    if src._kind == "P":
        if dst._kind == "B":
            return 2 * (n - 1) * numel * E // n  # (an all-reduce: a ring's, the lower bound)
        return (n - 1) * size(region(shape, (dst,), (n,), index)) * E  # the others' addends of its block
    have, need = region(shape, (src,), (n,), index), region(shape, (dst,), (n,), index)
    return (size(need) - size(overlap(have, need))) * E


def box_once(x, src, dst, pl):
    """(the boxed tensor, the bytes this process received), with the logical value x."""
    g, _ = make(x, src, pl)
    flow.boxing.reset_bytes_moved()
    y = g.to_global(sbp=list(dst) if len(dst) > 1 else dst[0])
    return y, flow.boxing.bytes_moved()


def case_pairs_1d():
    """Every pair of S(0), S(1), B, P on every rank: values and least bytes, even and uneven."""
    pl = flow.placement("cpu", list(range(WORLD)))
    make_groups(pl)
    index = RANK
    for shape in [(8, 12), (7, 5), (3, 2)]:
        x = logical(shape)
        for src, dst in itertools.product(ONE_D, ONE_D):
            what = f"{src} -> {dst} of {shape} over {WORLD}"
            y, moved = box_once(x, (src,), (dst,), pl)
            assert y.sbp == (dst,), f"{what}: sbp {y.sbp}"
            want = least_bytes_1d(shape, src, dst, WORLD, index)
            assert moved == want, f"{what}: received {moved} bytes, the least is {want}"
            check_component(y, x, (dst,), pl, what)


def case_grads_1d():
    """The gradient through each boxing: the cotangent C of the logical tensor reaches the source
    component laid out as its gradient (split: the slice; broadcast / partial: the whole)."""
    pl = flow.placement("cpu", list(range(WORLD)))
    shape = (7, 5)
    x, c = logical(shape), logical(shape, 3)
    cg = const(c, pl)
    for src, dst in itertools.product(ONE_D, ONE_D):
        what = f"grad of {src} -> {dst}"
        g, leaf = make(x, (src,), pl, requires_grad=True)
        y = g.to_global(sbp=dst)
        (y * cg).sum().backward()
        want = cut(c, region(shape, (src,), (WORLD,), RANK)) if src._kind == "S" else c
        np.testing.assert_allclose(leaf.grad.numpy(), want, rtol=1e-12, atol=1e-12, err_msg=what)


def case_pairs_2d():
    """Every pair of 2-d SBPs on a 2 x 2 mesh (a 5 x 7 tensor: uneven at both levels): values;
    without partial sums, the bytes are the least (what the process's new box lacks); with them,
    the mesh's total is the least of any axis-by-axis plan."""
    pl = flow.placement("cpu", [[0, 1], [2, 3]])
    make_groups(pl)
    index = RANK
    sbps = list(itertools.product(ONE_D, ONE_D))
    shape = (5, 7)
    x = logical(shape)
    for src, dst in itertools.product(sbps, sbps):
        what = f"{src} -> {dst}"
        y, moved = box_once(x, src, dst, pl)
        assert y.sbp == dst, f"{what}: sbp {y.sbp}"
        check_component(y, x, dst, pl, what)
        if any(s._kind == "P" for s in src + dst):  # the mesh's total against the cheapest axis-by-axis plan
            total = flow.tensor([moved], dtype=flow.int64)
            dist.all_reduce(total)
            least = least_total_per_axis(shape, src, dst, (2, 2))
            assert total.item() == least, f"{what}: received {total.item()} bytes in all, the least is {least}"
            continue
        have, need = region(shape, src, (2, 2), index), region(shape, dst, (2, 2), index)
        least = (size(need) - size(overlap(have, need))) * E
        assert moved == least, f"{what}: received {moved} bytes, the least is {least}"


def least_total_per_axis(shape, src, dst, hierarchy):
    """The least bytes the whole mesh receives going from n-d src to dst by 1-d boxings of one axis
    at a time (each within its axis groups, its least bytes on the box the axis's group shares:
    the component with that axis undone, on every process), over every order and every
    intermediate layout: a shortest path. (Partial sums
    cannot be moved box by box as the partial-free layouts are.) A step on an axis is allowed when
    no inner axis splits a dim it splits or gathers (there the inner slicing would not commute)."""
    kinds = [B, PS] + [flow.sbp.split(d) for d in range(len(shape))]
    procs = math.prod(hierarchy)

    def level(cur, k, index):  # the box an axis-k collective works on at the process: axis k undone
        box = region(shape, tuple(cur[:k]) + (B,) + tuple(cur[k + 1:]), hierarchy, index)
        return tuple(hi - lo for lo, hi in box), int(np.unravel_index(index, hierarchy)[k])

    def cost(cur, k, t):
        total = 0
        for index in range(procs):
            lv, c = level(cur, k, index)
            total += least_bytes_1d(lv, cur[k], t, hierarchy[k], c)
        return total

    def allowed(cur, k, t):
        moved = {s._dim for s in (cur[k], t) if s._kind == "S"}
        return not any(cur[m]._kind == "S" and cur[m]._dim in moved for m in range(k + 1, len(cur)))

    import heapq
    best, queue, n = {tuple(src): 0}, [(0, 0, tuple(src))], 0
    while queue:
        c, _, cur = heapq.heappop(queue)
        if cur == tuple(dst):
            return c
        if c > best[cur]:
            continue
        for k in range(len(cur)):
            for t in kinds:
                if t != cur[k] and allowed(cur, k, t):
                    nxt = cur[:k] + (t,) + cur[k + 1:]
                    nc = c + cost(cur, k, t)
                    if nc < best.get(nxt, math.inf):
                        best[nxt] = nc
                        n += 1
                        heapq.heappush(queue, (nc, n, nxt))
    raise AssertionError("unreachable")


def case_grads_2d():
    """The gradient through every 2-d boxing: the cotangent's box of the source layout (partial
    and broadcast axes: the whole, as Note [Gradients of global tensors])."""
    pl = flow.placement("cpu", [[0, 1], [2, 3]])
    make_groups(pl)
    sbps = list(itertools.product(ONE_D, ONE_D))
    shape = (5, 7)
    x, c = logical(shape), logical(shape, 3)
    cg = const(c, pl)
    for src, dst in itertools.product(sbps, sbps):
        g, leaf = make(x, src, pl, requires_grad=True)
        (g.to_global(sbp=list(dst)) * cg).sum().backward()
        np.testing.assert_allclose(leaf.grad.numpy(), cut(c, region(shape, src, (2, 2), RANK)), rtol=1e-12,
                                   atol=1e-12, err_msg=f"grad of {src} -> {dst}")


def case_placements():
    """Placement changes by point-to-point transfers: every 1-d pair between two placements that
    share a rank or not; values, gradients and the least bytes."""
    if WORLD < 2:
        return
    lo, hi = list(range(WORLD // 2 or 1)), list(range(WORLD // 2, WORLD))
    pairs = [(flow.placement("cpu", lo), flow.placement("cpu", hi)),
             (flow.placement("cpu", list(range(WORLD))), flow.placement("cpu", list(reversed(range(WORLD))))),
             (flow.placement("cpu", hi), flow.placement("cpu", list(range(WORLD))))]
    shape = (7, 6)
    x, c = logical(shape), logical(shape, 5)
    for src_pl, dst_pl in pairs:
        make_groups(src_pl), make_groups(dst_pl)
        for src, dst in itertools.product(ONE_D, ONE_D):
            what = f"{src} on {src_pl.ranks} -> {dst} on {dst_pl.ranks}"
            g, leaf = make(x, (src,), src_pl, requires_grad=True)
            flow.boxing.reset_bytes_moved()
            local = box_between(g._local, (src,), src_pl, (dst,), dst_pl, shape)
            moved = flow.boxing.bytes_moved()
            y = GlobalTensor(local, dst_pl, (dst,), shape)
            if RANK in dst_pl._ranks:
                check_component(y, x, (dst,), dst_pl, what)
                if src._kind != "P" and dst._kind != "P":
                    n_src, n_dst = len(src_pl._ranks), len(dst_pl._ranks)
                    need = region(shape, (dst,), (n_dst,), dst_pl._ranks.index(RANK))
                    have = region(shape, (src,), (n_src,), src_pl._ranks.index(RANK)) if RANK in src_pl._ranks \
                        else [(0, 0)] * 2
                    least = (size(need) - size(overlap(have, need))) * E
                    assert moved == least, f"{what}: received {moved} bytes, the least is {least}"
            (y.to_global(sbp=B) * const(c, dst_pl)).sum().backward()  # the gradient comes back the same way
            if src == dst == B:  # to_global(placement=...): what a process lacks, once, from one holder
                flow.boxing.reset_bytes_moved()
                z = g.to_global(placement=dst_pl, sbp=B)
                moved = flow.boxing.bytes_moved()
                if RANK in dst_pl._ranks:
                    np.testing.assert_allclose(z.to_local().numpy(), x, rtol=1e-12, err_msg="to_global " + what)
                    least = 0 if RANK in src_pl._ranks else x.size * E
                    assert moved == least, f"to_global {what}: received {moved} bytes, the least is {least}"
            if RANK in src_pl._ranks:
                want = cut(c, region(shape, (src,), (len(src_pl._ranks),), src_pl._ranks.index(RANK))) \
                    if src._kind == "S" else c
                np.testing.assert_allclose(leaf.grad.numpy(), want, rtol=1e-12, atol=1e-12, err_msg="grad " + what)


def expect(call, text):
    """call raises a RuntimeError whose message holds text (on this process: every process checks)."""
    try:
        call()
    except RuntimeError as e:
        assert text in str(e), f"{text!r} not in {e}"
    else:
        raise AssertionError(f"no RuntimeError ({text})")


def case_mismatch():
    """Processes that disagree on a global tensor -- its components' shapes, its logical shape, its
    placement -- get the same RuntimeError on every process (never a hang, never an abort), and
    the job goes on."""
    pl = flow.placement("cpu", list(range(WORLD)))
    shapes = "the ranks' components have shapes"
    expect(lambda: flow.ones(2, 3 + RANK).to_global(pl, S0), shapes)  # (a dim the split does not sum)
    expect(lambda: flow.ones(1 + 2 * RANK, 3).to_global(pl, S0), shapes)  # (slices of 1 and 3: not balanced)
    expect(lambda: flow.ones(3 + RANK).to_global(pl, B), "different calls")  # (the first rank's value, sent)
    g = GlobalTensor(flow.ones(2, 3, dtype=flow.float64), pl, (S0,), (4 + RANK, 3))  # (logical shapes differ)
    expect(lambda: g.to_global(sbp=B), "disagree on the tensor's shape")
    other = flow.placement("cpu", [RANK])  # (each names a placement of its own)
    expect(lambda: flow.ones(2, 3).to_global(other, B), "different placements")
    other = flow.placement("cpu", [0] if RANK == 0 else list(range(WORLD)))  # (one names the whole job)
    expect(lambda: flow.ones(2, 3).to_global(other, B).to_global(sbp=S0), "different calls")
    g = flow.tensor(logical((4, 3)), placement=pl, sbp=S0)  # and the job goes on
    np.testing.assert_allclose(g.to_global(sbp=B).to_local().numpy(), logical((4, 3)))


def case_die():
    """The last process raises before a boxing; the others, in its collective, fail naming its
    error (Note [Failed processes]) instead of waiting."""
    g = flow.tensor(logical((4, 3)), placement=flow.placement("cpu", list(range(WORLD))), sbp=S0)
    if RANK == WORLD - 1:
        raise RuntimeError(f"rank {RANK} fails on purpose")
    g.to_global(sbp=B)


CASES = ["pairs_1d", "grads_1d", "pairs_2d", "grads_2d", "placements"]

if __name__ == "__main__":
    flow.env.init()
    for case in (CASES if sys.argv[1] == "all" else sys.argv[1:]):
        if case.endswith("_2d") and WORLD != 4:
            continue
        globals()["case_" + case]()
    print(f"rank {RANK}: {sys.argv[1]} ok", flush=True)
