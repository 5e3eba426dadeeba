"""One process of the generated global-op test (tests/test_global_opinfo.py starts it through the
launcher): `global_opinfo_worker.py ci|all [op ...]` in a world of 2 (1-d placements),
`mesh_ci|mesh_all [op ...]` in a world of 4 (the 2 x 2 mesh, n-d SBPs: mesh_layouts).

For every OpInfo sample (tests/opinfo) and every layout of its tensor arguments below, the op on
global tensors (placement of every rank) must equal the op on the whole local tensors -- forward
(each rank's component against its part of the local result: no gathering, so a failure on one
rank cannot leave the other waiting in a collective) and backward (the gradients of sum(out * w)
for fixed w, as global tensors, against the local ones). The layouts: every tensor broadcast
(the op's broadcast signature); the first tensor split along each of its dims, the others
broadcast; every tensor split along one common dim; the first a partial sum. Whatever signature
the op's rule picks for them (a split or partial output, or its broadcast fallback), the logical
result must not change. An op without a signature must raise its RuntimeError -- and only the
ops the op table marks `no_sbp:` may.

Prints `OP name` before each op, one `FAIL` line per failing (op, sample, layout) and
`rank R: MODE ok (N checked, F failed)`; a process that raised where the other went on into a
collective ends the run (`DESYNC`, exit code 3) in the op named last.
"""
import os
import sys
import zlib

import numpy as np

import oneflow as flow
from oneflow._global.sbp_table import NO_SIGNATURE, SIGNATURES
from harness import invoke
from opinfo import OPS, Arr, materialize

RANK, WORLD = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))  # (the launcher's)
S, B, PS = flow.sbp.split, flow.sbp.broadcast, flow.sbp.partial_sum
SKIP_KINDS = {"random", "dropout", "optim"}  # (per-rank draws; fused updates of local state)


def _leaves(obj):
    if isinstance(obj, Arr):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [a for o in obj for a in _leaves(o)]
    if isinstance(obj, dict):
        return [a for o in obj.values() for a in _leaves(o)]
    return []


def _replace(obj, made):
    if isinstance(obj, Arr):
        return made[id(obj)]
    if isinstance(obj, list):
        return [_replace(o, made) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_replace(o, made) for o in obj)
    if isinstance(obj, dict):
        return {k: _replace(v, made) for k, v in obj.items()}
    return obj


def _flat(obj):
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _flat(o)]
    return [obj]


def layouts(arrs):
    """[(label, [sbp of each tensor argument])]."""
    if not arrs:
        return []
    first = arrs[0]
    out = [("B", [B] * len(arrs))]
    for d in range(first.value.ndim):
        out.append((f"first S({d})", [S(d)] + [B] * (len(arrs) - 1)))
        if len(arrs) > 1:
            out.append((f"all S({d})", [S(d) if a.value.ndim > d else B for a in arrs]))
    v = first.value
    # IEEE specials have no partial sum: the addends of -0.0 (-0.0 and 0.0) sum to +0.0, and a zero
    # addend turns x / 0, 0 * inf into NaN where the whole gives +-inf
    specials = any(a.value.dtype.kind == "f" and (np.any(~np.isfinite(a.value)) or np.any(a.value == 0))
                   for a in arrs if a is not first) or (v.dtype.kind == "f" and np.any((v == 0) & np.signbit(v)))
    if v.dtype.kind in "fc" and not specials:
        out.append(("first P", [PS] + [B] * (len(arrs) - 1)))
    return out


def mesh_layouts(arrs):
    """[(label, [n-d sbp of each tensor argument])] on the 2 x 2 mesh: each axis's SBP is read by
    the op's 1-d rule on the shapes the axes before it leave (docs/global_tensors.md, "Meshes").
    Every tensor broadcast; the first split twice along one dim (nested, uneven at both levels) and
    along two dims; all split along one dim on the second axis; the first a partial sum on an axis."""
    if not arrs:
        return []
    first, n = arrs[0], len(arrs)
    out = [("(B, B)", [(B, B)] * n)]
    nd = first.value.ndim
    for d in range(nd):
        out.append((f"first (S({d}), S({d}))", [(S(d), S(d))] + [(B, B)] * (n - 1)))
        if nd > 1:
            e = (d + 1) % nd
            out.append((f"first (S({d}), S({e}))", [(S(d), S(e))] + [(B, B)] * (n - 1)))
        if n > 1:
            out.append((f"all (B, S({d}))", [(B, S(d)) if a.value.ndim > d else (B, B) for a in arrs]))
    if any(label == "first P" for label, _ in layouts(arrs)):  # (the same IEEE-special exclusions)
        out.append(("first (P, B)", [(PS, B)] + [(B, B)] * (n - 1)))
        out.append(("first (S(0), P)" if nd else "first (B, P)", [(S(0) if nd else B, PS)] + [(B, B)] * (n - 1)))
    return out


def _part(x, sbp, n, index):
    """This rank's part of the whole local value x laid out as sbp (None for a partial sum)."""
    if sbp._kind == "B":
        return x
    if sbp._kind == "P":
        return None
    sizes = [len(a) for a in np.array_split(np.arange(x.shape[sbp._dim]), n)]
    lo = sum(sizes[:index])
    return np.take(x, range(lo, lo + sizes[index]), axis=sbp._dim)


def _np(t):
    t = t.detach()
    if t.dtype == flow.bfloat16:
        t = t.float()
    return t.numpy()


def same(got, want, what, tol, errors):
    """got (global) against want (local): structure, and each tensor's component against its part.
    Mismatches are appended to `errors`, not raised: every process goes on with the same
    collectives (a partial sum reduced to be read, the backward pass), whatever its own values."""
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            errors.append(f"{what}: structure {type(got).__name__}, local {type(want).__name__} of {len(want)}")
            return
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{what}[{i}]", tol, errors)
        return
    if not isinstance(want, flow.Tensor):
        if isinstance(got, flow.Tensor) and got.is_global:  # (a 0-d tensor where local gives a number)
            got = got.to_global(sbp=[B] * len(got.sbp)).to_local().item()
        if not (got == want or (got != got and want != want)):
            errors.append(f"{what}: {got!r} != {want!r}")
        return
    if not (isinstance(got, flow.Tensor) and got.is_global):
        errors.append(f"{what}: not a global tensor ({type(got).__name__})")
        return
    if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
        errors.append(f"{what}: {tuple(got.shape)} {got.dtype} != local {tuple(want.shape)} {want.dtype}")
        return
    sbps = tuple(B if s._kind == "P" else s for s in got.sbp)
    if sbps != tuple(got.sbp):
        got = got.to_global(sbp=list(sbps) if len(sbps) > 1 else sbps[0])
    pl = got.placement
    coords = np.unravel_index(pl.ranks.reshape(-1).tolist().index(RANK), pl.hierarchy)
    expect = _np(want)
    for sbp, c, n in zip(sbps, coords, pl.hierarchy):  # (nested balanced splits, axis by axis)
        expect = _part(expect, sbp, n, c)
    sbp = sbps if len(sbps) > 1 else sbps[0]
    loc = _np(got.to_local())
    try:
        assert loc.shape == expect.shape, f"{what}: component {loc.shape} != part {expect.shape} of {sbp}"
        if expect.dtype.kind in "fc":
            np.testing.assert_allclose(loc, expect, rtol=tol[0], atol=tol[1], equal_nan=True,
                                       err_msg=f"{what} ({sbp})")
        else:
            np.testing.assert_array_equal(loc, expect, err_msg=f"{what} ({sbp})")
    except AssertionError as e:
        errors.append(" ".join(str(e).split())[:300])


def _agree(failed):
    """Whether any process failed this check (so every process reports it alike)."""
    t = flow.tensor([int(failed)], dtype=flow.int64)
    try:
        flow.distributed.all_reduce(t)
    except RuntimeError as e:  # (one process raised where the other went on into a collective)
        print(f"DESYNC rank {RANK}: {str(e)[:300]}", flush=True)
        sys.exit(3)
    return bool(t.item())


def _global_args(s, arrs, sbps, pl, grad):
    made = {}
    for a, sbp in zip(arrs, sbps):
        g = flow.tensor(a.value, placement=pl, sbp=sbp)
        if grad and g.is_floating_point():
            g.requires_grad_(True)
        made[id(a)] = g
    return _replace(s.args, made), _replace(s.kwargs, made), [made[id(a)] for a in arrs]


def _local_args(s, arrs, grad):
    made = {}
    for a in arrs:
        t = flow.tensor(a.value)
        if grad and t.is_floating_point():
            t.requires_grad_(True)
        made[id(a)] = t
    return _replace(s.args, made), _replace(s.kwargs, made), [made[id(a)] for a in arrs]


def _form(op, s):
    for form in ("fn", "method", "op"):
        if op.has_form(form, s):
            return form
    return None


def _no_signature(e):
    return isinstance(e, RuntimeError) and "no SBP signature" in str(e)


def check_sample(op, dtype, s, k, pl, layout_filter=None):
    """Checks every layout of sample s; returns the failures (strings)."""
    form = _form(op, s)
    arrs = _leaves((s.args, s.kwargs))
    if form is None or not arrs:
        return [], 0
    tol = op.tol.get(dtype) or (1e-4, 1e-4)
    tol = (max(tol[0], 1e-4), max(tol[1], 1e-4))
    largs, lkwargs, lleaves = _local_args(s, arrs, True)
    try:
        want = invoke(op, form, flow, largs, lkwargs)
    except Exception:  # noqa: BLE001 -- a sample the local op refuses is not this test's
        return [], 0
    outs = [o for o in _flat(want) if isinstance(o, flow.Tensor)]
    rng = np.random.default_rng(zlib.crc32(f"{op.name}/{k}".encode()))
    ws = [rng.standard_normal(tuple(o.shape)).astype(np.float32) if o.requires_grad and o.is_floating_point()
          and o.dtype != flow.bfloat16 else None for o in outs]
    backward = any(w is not None for w in ws)
    if backward:
        try:
            sum((o * flow.tensor(w).to(o.dtype)).sum() for o, w in zip(outs, ws) if w is not None).backward()
        except Exception:  # noqa: BLE001
            backward = False
    failures, checked = [], 0
    for label, sbps in (mesh_layouts(arrs) if len(pl.hierarchy) > 1 else layouts(arrs)):
        if layout_filter is not None and not layout_filter(label):
            continue
        what = f"{op.name} #{k} {s.desc!r} [{form}] {label}"
        checked += 1
        try:
            gargs, gkwargs, gleaves = _global_args(s, arrs, sbps, pl, backward)
            got = invoke(op, form, flow, gargs, gkwargs)
        except Exception as e:  # noqa: BLE001
            if _no_signature(e) and op.name in NO_SIGNATURE:
                _agree(False)
                continue
            _agree(True)
            failures.append(f"{what}: {type(e).__name__}: {str(e)[:200]}")
            continue
        errors = []
        same(got, want, what, tol, errors)
        if backward:
            try:
                gouts = [o for o in _flat(got) if isinstance(o, flow.Tensor)]
                loss = None
                for o, w in zip(gouts, ws):
                    if w is not None and isinstance(o, flow.Tensor) and o.is_global:
                        term = (o * flow.tensor(w, placement=pl, sbp=[B] * len(pl.hierarchy)).to(o.dtype)).sum()
                        loss = term if loss is None else loss + term
                if loss is not None:
                    loss.backward()
            except Exception as e:  # noqa: BLE001
                errors.append(f"{what} backward: {type(e).__name__}: {str(e)[:200]}")
            else:
                for i, (g, t) in enumerate(zip(gleaves, lleaves)):
                    if t.grad is None:
                        continue
                    if g.grad is None:
                        errors.append(f"{what}: no gradient for input {i}")
                        continue
                    same(g.grad, t.grad, f"{what} grad {i}", tol, errors)
        if _agree(bool(errors)):
            failures.append(f"{what}: " + (" | ".join(errors) if errors else "failed on another rank"))
    return failures, checked


def ci_ops(ops):
    """The CI share: every op in turn would take minutes on 2 processes; a fixed subset does not
    (every tenth op in table order, plus the ops whose rules this matrix was written for), the
    first sample of each."""
    key = {"einsum", "tensordot", "kron", "reshape", "view", "flatten", "cumsum", "amax", "kl_div",
           "cross_entropy", "gather", "take", "hstack", "meshgrid", "searchsorted", "matmul", "softmax", "sum",
           "triplet_margin_loss", "pad", "any", "squeeze", "broadcast_tensors", "add", "div"}
    return [op for i, op in enumerate(ops) if i % 10 == 0 or op.name in key]


def mesh_ci_ops(ops):
    """The CI share on the mesh (four processes on this machine: a smaller one): every twentieth op
    and the ops of the per-axis rules and of the mesh's fallbacks, the first sample of each."""
    key = {"add", "mul", "exp", "where", "sum", "mean", "amax", "max", "argmax", "kthvalue", "softmax", "matmul",
           "transpose", "permute", "layer_norm", "flatten", "mse_loss", "reshape", "cross_entropy", "cumsum"}
    return [op for i, op in enumerate(ops) if i % 20 == 0 or op.name in key]


def main():
    mode, names = sys.argv[1], sys.argv[2:]
    flow.env.init()
    mesh = mode.startswith("mesh_")  # (a world of 4: the 2 x 2 mesh)
    pl = flow.placement("cpu", ranks=[[0, 1], [2, 3]] if mesh else list(range(WORLD)))
    ops = [op for op in OPS if op.kind not in SKIP_KINDS and op.values]
    if names:
        ops = [op for op in ops if op.name in names]
    elif mode.endswith("ci"):
        ops = mesh_ci_ops(ops) if mesh else ci_ops(ops)
    checked = failed = 0
    for op in ops:
        if RANK == 0:  # (the op a desync happens in: the last one named)
            print(f"OP {op.name}", flush=True)
        dtype = "float32" if "float32" in op.dtypes else op.dtypes[0]
        samples = op.sample_list(dtype)
        if mode.endswith("ci"):
            samples = samples[:1]
        for k, s in enumerate(samples):
            f, c = check_sample(op, dtype, s, k, pl)
            checked += c
            failed += len(f)
            for line in f:
                if RANK == 0:
                    print(f"FAIL {line}", flush=True)
    print(f"rank {RANK}: {mode} ok ({checked} checked, {failed} failed)", flush=True)


if __name__ == "__main__":
    main()
