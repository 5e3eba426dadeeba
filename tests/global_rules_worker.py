"""One process of tests/test_global_rules.py: `global_rules_worker.py {two | mesh}` (worlds of 2 and
of 4 as a 2 x 2 mesh). Note [SBP rules in C++] (src/api/global_rules.h) on the fast path (Note
[Global fast path]): each op below must run without the Python dispatcher, give the layout the
dispatcher itself picks for the same call (dispatch.run, checked side by side) and the values and
gradients of PyTorch on the whole tensors; the calls it must leave to the dispatcher reach it. Also
the concatenations' rule (a list holding one tensor twice, a cat along the split dim) and the kind
test of the hand-written bindings max / min / split."""
import os
import sys

import numpy as np
import torch

import oneflow as flow
from global_kind_worker import Counting, X
from oneflow._global import dispatch

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
S0, S1, S2, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.split(2), flow.sbp.broadcast, flow.sbp.partial_sum
P = None


def close(g, want, what, sbp=None):
    """g (global) holds the logical value `want` (a torch tensor) -- laid out as `sbp` when given."""
    assert g.is_global, f"{what}: not global"
    if sbp is not None:
        assert g.sbp == sbp, f"{what}: sbp {g.sbp} != {sbp}"
    assert tuple(g.shape) == tuple(want.shape), f"{what}: shape {tuple(g.shape)} != {tuple(want.shape)}"
    np.testing.assert_allclose(g.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5, err_msg=what)


def g_of(x, sbp, grad=False):
    return flow.tensor(x, placement=P, sbp=sbp if isinstance(sbp, tuple) else (sbp,), requires_grad=grad)


def M(name):
    """Tensor method `name` as a function (the global tensor's route, or the local tensor's method)."""
    return lambda t, *a, **k: getattr(t, name)(*a, **k)


def fast_case(what, name, fn, inputs, args, kwargs, tfn, sbp):
    """fn(*globals, *args, **kwargs) runs in C++ (the dispatcher never called), lays its output out
    as the dispatcher's own dispatch.run(name, fn, ...) does -- `sbp` -- and matches
    tfn(*tensors, *args, **kwargs) on the whole tensors, forward and, for the inputs that require
    grad, backward. `inputs`: (array, sbp, grad)."""
    gs = [g_of(x, s, grad) for x, s, grad in inputs]
    ts = [torch.tensor(x, requires_grad=grad) for x, _, grad in inputs]
    with Counting() as c:
        y = fn(*gs, *args, **kwargs)
    assert c.calls == [], f"{what}: reached the dispatcher: {c.calls}"
    want = tfn(*ts, *args, **kwargs)
    close(y, want, what, sbp)
    slow = dispatch.run(name, fn, tuple(gs) + tuple(args), dict(kwargs))
    assert slow.sbp == y.sbp and tuple(slow.shape) == tuple(y.shape), f"{what}: dispatcher {slow.sbp} {y.sbp}"
    np.testing.assert_allclose(slow.to_local().numpy(), y.to_local().numpy(), rtol=1e-6, atol=1e-6, err_msg=what)
    if any(grad for _, _, grad in inputs):
        B_all = tuple(B for _ in P.hierarchy)
        (y.to_global(sbp=B_all) ** 2).sum().backward()
        (want ** 2).sum().backward()
        for i, (g, t) in enumerate(zip(gs, ts)):
            if t.grad is not None:
                close(g.grad, t.grad, f"{what}: grad {i}")


def slow_case(what, name, fn, inputs, tfn):
    """fn(*globals) reaches the dispatcher (boxing, or a broadcast input whose gradient the ranks
    sum) and still matches tfn."""
    gs = [g_of(x, s, grad) for x, s, grad in inputs]
    with Counting() as c:
        y = fn(*gs)
    assert c.calls == [name], f"{what}: {c.calls}"
    close(y, tfn(*[torch.tensor(x) for x, _, _ in inputs]), what)


def partial(x, requires_grad=False):
    """A partial-sum global tensor of logical value x -- (P, B, ...) on a mesh: the process at
    coordinate i of axis 0 holds the addend x * w_i (summing to 1), the same along the other axes."""
    n = P.hierarchy[0]
    i = P.ranks.flatten().tolist().index(RANK) // (len(P.ranks.flatten()) // n)
    w = (i + 1) / (n * (n + 1) / 2)
    addend = flow.tensor(x * w, requires_grad=requires_grad)
    return addend, addend.to_global(P, tuple(PS if k == 0 else B for k in range(len(P.hierarchy))))


def case_cat():
    """cat / stack / hstack / vstack / column_stack / dstack: a list holding one split tensor twice
    keeps the split (it became broadcast: the rule compared the list with the inputs counted once);
    along the split dim the inputs are re-split along the largest other dim."""
    a, b = X((5, 7), 0), X((5, 7), 1)
    cat, stack = lambda *t: np.concatenate(t[:-1], t[-1]), lambda *t: np.stack(t[:-1], t[-1])
    for sx, sy in ((S0, S0), (S1, S1), (S0, B), (S1, S0)):
        for dim in (0, 1, -1):
            gx, gy = g_of(a, sx, True), g_of(b, sy, True)
            tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
            for what, fn, tfn, out in [
                ("cat([x, x])", lambda: flow.cat([gx, gx], dim=dim), lambda: torch.cat([tx, tx], dim), None),
                ("cat([x, y])", lambda: flow.cat([gx, gy], dim), lambda: torch.cat([tx, ty], dim), None),
                ("concat((x, x))", lambda: flow.concat((gx, gx), dim=dim), lambda: torch.cat([tx, tx], dim), None),
                ("stack([x, x])", lambda: flow.stack([gx, gx], dim), lambda: torch.stack([tx, tx], dim), None),
            ]:
                what = f"{what} dim={dim} {sx} {sy}"
                r, t = fn(), tfn()
                d, cat_dim = sx._dim, dim % (2 + what.startswith("stack"))
                if what.startswith("stack"):
                    want = S(d + (cat_dim <= d))
                elif d != cat_dim:
                    want = S(d)
                else:
                    want = S(1 - d)  # (re-split along the other dim of these 2-d inputs)
                close(r, t, what, (want,))
                (r * r).sum().backward()
                (t * t).sum().backward()
                close(gx.grad, tx.grad, what + ": grad x")
                if ty.grad is not None:
                    close(gy.grad, ty.grad, what + ": grad y")
                gx.grad = gy.grad = tx.grad = ty.grad = None
    for name in ("hstack", "vstack", "column_stack"):
        for sx in (S0, S1):
            gx, tx = g_of(a, sx), torch.tensor(a)
            r, t = getattr(flow, name)([gx, gx]), getattr(torch, name)([tx, tx])
            cat_dim = 0 if name == "vstack" else 1
            close(r, t, f"{name} {sx}", (S(1 - cat_dim) if sx._dim == cat_dim else sx,))
    c = X((4, 5, 6), 2)
    for sx in (S0, S1, S2):
        r = flow.dstack([g_of(c, sx), g_of(c, sx)])
        close(r, torch.dstack([torch.tensor(c)] * 2), f"dstack {sx}", (sx if sx._dim != 2 else S1,))
    # partial sums reduced first
    _, p = partial(a)
    _, q = partial(b)
    for what, r, t in (("cat(P, P)", flow.cat([p, q], 1), torch.cat([torch.tensor(a), torch.tensor(b)], 1)),
                       ("stack(P, P)", flow.stack([p, p]), torch.stack([torch.tensor(a)] * 2)),
                       ("cat(P, B)", flow.cat([p, g_of(b, B)], 0), torch.cat([torch.tensor(a), torch.tensor(b)], 0))):
        close(r, t, what, (B,))
    # a 1-d tensor split along its only dim: nothing else to split, broadcast
    v = X((5,), 3)
    close(flow.cat([g_of(v, S0), g_of(v, S0)]), torch.cat([torch.tensor(v)] * 2), "cat 1-d", (B,))


def S(d):
    return flow.sbp.split(d)


def case_rules():
    """The C++ rules on their fast path (2 processes), and the calls they leave to the dispatcher."""
    F = flow.nn.functional
    x, w, bias = X((6, 4), 0), X((5, 4), 1), X((5,), 2)
    one = X((1, 4), 3)  # (one row over two ranks: the second holds none, its local mean NaN made 0)
    a3, b3, m = X((4, 3, 5), 4), X((4, 5, 2), 5), X((5, 2), 6)
    v5 = X((5,), 7)
    T = torch
    lin = lambda t, u, c=None: F.linear(t, u, c)  # noqa: E731
    tlin = lambda t, u, c=None: T.nn.functional.linear(t, u, c)  # noqa: E731
    cases = [  # (what, op name, fn, inputs (array, sbp, grad), args, kwargs, torch fn, output sbp)
        ("mean(1) S0", "mean", M("mean"), [(x, S0, True)], (1,), {}, M("mean"), S0),
        ("flow.mean(0) S0", "mean", flow.mean, [(x, S0, True)], (0,), {}, T.mean, PS),
        ("mean() S1", "mean", M("mean"), [(x, S1, True)], (), {}, M("mean"), PS),
        ("mean((0, 1), keepdim) S0", "mean", M("mean"), [(x, S0, True)], ((0, 1),), {"keepdim": True}, M("mean"), PS),
        ("mean(dim=0) S1", "mean", M("mean"), [(x, S1, True)], (), {"dim": 0}, M("mean"), S0),
        ("mean(0) of one row", "mean", M("mean"), [(one, S0, True)], (0,), {}, M("mean"), PS),
        ("mean(-1) B", "mean", M("mean"), [(x, B, True)], (-1,), {}, M("mean"), B),
        ("flow.softmax(dim=1) S0", "softmax", flow.softmax, [(x, S0, True)], (), {"dim": 1}, T.softmax, S0),
        ("log_softmax(0) S1", "log_softmax", M("log_softmax"), [(x, S1, True)], (0,), {}, M("log_softmax"), S1),
        ("F.softmax(-1) S0", "softmax", F.softmax, [(x, S0, True)], (), {"dim": -1}, T.nn.functional.softmax, S0),
        ("linear S0 x B", "linear", lin, [(x, S0, True), (w, B, False), (bias, B, False)], (), {}, tlin, S0),
        ("linear B x S0(out)", "linear", lin, [(x, B, False), (w, S0, True), (bias, S0, True)], (), {}, tlin, S1),
        ("linear S1 x S1(in)", "linear", lin, [(x, S1, True), (w, S1, True)], (), {}, tlin, PS),
        ("bmm S0 x S0", "bmm", flow.bmm, [(a3, S0, True), (b3, S0, True)], (), {}, T.bmm, S0),
        ("x.bmm B x S2", "bmm", M("bmm"), [(a3, B, False), (b3, S2, True)], (), {}, T.bmm, S2),
        ("bmm S2 x S1", "bmm", flow.bmm, [(a3, S2, True), (b3, S1, True)], (), {}, T.bmm, PS),
        ("bmm S1 x B", "bmm", flow.bmm, [(a3, S1, True), (b3, B, False)], (), {}, T.bmm, S1),
        ("3-d S0 @ 3-d S0", "matmul", M("__matmul__"), [(a3, S0, True), (b3, S0, True)], (), {}, T.matmul, S0),
        ("matmul 3-d S1 x 3-d B", "matmul", flow.matmul, [(a3, S1, True), (b3, B, False)], (), {}, T.matmul, S1),
        ("matmul 2-d B x 3-d S0", "matmul", flow.matmul, [(m.T.copy(), B, False), (b3, S0, True)], (), {}, T.matmul,
         S0),
        ("matmul 3-d B x 3-d S2", "matmul", flow.matmul, [(a3, B, False), (b3, S2, True)], (), {}, T.matmul, S2),
        ("matmul vector B x 3-d S0", "matmul", flow.matmul, [(v5, B, False), (b3, S0, True)], (), {}, T.matmul, S0),
        ("matmul 3-d S0 x vector B", "matmul", flow.matmul, [(a3, S0, True), (v5, B, False)], (), {}, T.matmul, S0),
        ("matmul 3-d S2 x 2-d S0", "matmul", flow.matmul, [(a3, S2, True), (m, S0, True)], (), {}, T.matmul, PS),
    ]
    for what, name, fn, inputs, args, kwargs, tfn, sbp in cases:
        fast_case(what, name, fn, inputs, args, kwargs, tfn, (sbp,))
    with flow.no_grad():  # (no gradient to sum: a broadcast weight needing one is no reason to leave)
        gx, gw = g_of(x, S0), g_of(w, B, True)
        with Counting() as c:
            y = F.linear(gx, gw)
        assert c.calls == [] and y.sbp == (S0,), (c.calls, y.sbp)
        close(y, torch.tensor(x) @ torch.tensor(w).T, "linear under no_grad")
    # partial sums of elementwise ops (Note [Partial elementwise])
    a, b = X((5, 7), 8), X((5, 7), 9)
    ta, tb = torch.tensor(a), torch.tensor(b)
    for what, fn, tfn, grads in [
        ("p + q", lambda p, q, c: p + q, lambda p, q, c: p + q, True),
        ("p - q", lambda p, q, c: p - q, lambda p, q, c: p - q, True),
        ("-p", lambda p, q, c: -p, lambda p, q, c: -p, True),
        ("flow.add(p, q, alpha=2)", lambda p, q, c: flow.add(p, q, alpha=2), lambda p, q, c: torch.add(p, q, alpha=2),
         True),
        ("flow.sub(p, p)", lambda p, q, c: flow.sub(p, p), lambda p, q, c: p - p, True),
        ("p.add(q)", lambda p, q, c: p.add(q), lambda p, q, c: p + q, True),
        ("p * c", lambda p, q, c: p * c, lambda p, q, c: p * c, True),
        ("p * 3", lambda p, q, c: p * 3, lambda p, q, c: p * 3, True),
        ("flow.mul(p, c)", lambda p, q, c: flow.mul(p, c), lambda p, q, c: p * c, True),
        ("p / c", lambda p, q, c: p / (c + 3), lambda p, q, c: p / (c + 3), True),
        ("flow.div(p, 2.0)", lambda p, q, c: flow.div(p, 2.0), lambda p, q, c: p / 2.0, True),
    ]:
        addend_p, p = partial(a, True)
        addend_q, q = partial(b, True)
        c = g_of(b, B)
        with Counting() as cnt:
            r = fn(p, q, c)
        assert cnt.calls == [], f"{what}: {cnt.calls}"
        tp, tq = ta.clone().requires_grad_(), tb.clone().requires_grad_()
        t = tfn(tp, tq, tb)
        close(r, t, what, (PS,))
        if grads:
            (r.to_global(sbp=B) ** 2).sum().backward()
            (t ** 2).sum().backward()
            for addend, tt in ((addend_p, tp), (addend_q, tq)):
                if tt.grad is not None:
                    np.testing.assert_allclose(addend.grad.numpy(), tt.grad.numpy(), rtol=1e-5, atol=1e-5,
                                               err_msg=f"{what}: grad")
    # in place: the tensor itself, still partial
    _, p = partial(a)
    _, q = partial(b)
    with Counting() as cnt:
        r1 = p.add_(q)
        r2 = p.mul_(0.5)
    assert cnt.calls == [] and r1 is p and r2 is p and p.sbp == (PS,), (cnt.calls, p.sbp)
    close(p, (ta + tb) * 0.5, "in place p.add_(q).mul_(0.5)")
    # the dispatcher's: a number added on every rank, a square, a broadcast first factor, a rounding
    # quotient, a partial sum beside a split, a broadcast factor needing its gradient summed
    _, p = partial(a)
    for what, name, fn, want in [
        ("p - 2", "sub", lambda: p - 2, ta - 2), ("p * p", "mul", lambda: p * p, ta * ta),
        ("c * p", "mul", lambda: g_of(b, B) * p, tb * ta),
        ("div floor", "div", lambda: flow.div(p, 2.0, rounding_mode="floor"),
         torch.div(ta, 2.0, rounding_mode="floor")),
        ("p + S0", "add", lambda: p + g_of(b, S0), ta + tb),
        ("p * c (c needs grad)", "mul", lambda: p * g_of(b, B, True), ta * tb),
    ]:
        with Counting() as cnt:
            r = fn()
        assert cnt.calls == [name], f"{what}: {cnt.calls}"
        close(r, want, what)
    slow_case("linear B x S0, x needs grad", "linear", lambda t, u: F.linear(t, u), [(x, B, True), (w, S0, False)],
              lambda t, u: t @ u.T)
    slow_case("bmm S0 x S1 (boxing)", "bmm", flow.bmm, [(a3, S0, False), (b3, S1, False)], torch.bmm)
    slow_case("softmax along the split dim", "softmax", lambda t: flow.softmax(t, dim=0), [(x, S0, False)],
              lambda t: torch.softmax(t, 0))


def case_product_partial():
    """A product is linear in either factor: `3 * p`, `c * p` (c broadcast) and flow.mul(2, p) stay
    partial sums -- the reflected operator on the fast path, the others by the dispatcher's rule --
    with the values and gradients of PyTorch; `3 / p` and `3 - p` are reduced first."""
    a, b = X((5, 7), 10), X((5, 7), 11)
    ta, tb = torch.tensor(a), torch.tensor(b)
    for what, fn, tfn, calls in [
        ("3 * p", lambda p, c: 3 * p, lambda p, c: 3 * p, []),
        ("2.5 * p", lambda p, c: 2.5 * p, lambda p, c: 2.5 * p, []),
        ("c * p", lambda p, c: c * p, lambda p, c: c * p, ["mul"]),
        ("flow.mul(2, p)", lambda p, c: flow.mul(2, p), lambda p, c: 2 * p, ["mul"]),
    ]:
        addend, p = partial(a, True)
        c = g_of(b, B)
        with Counting() as cnt:
            r = fn(p, c)
        assert cnt.calls == calls, f"{what}: {cnt.calls}"
        tp = ta.clone().requires_grad_()
        t = tfn(tp, tb)
        close(r, t, what, (PS,))
        (r.to_global(sbp=B) ** 2).sum().backward()
        (t ** 2).sum().backward()
        np.testing.assert_allclose(addend.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-5, err_msg=what)
    _, p = partial(a)
    for what, fn, want in (("3 / p", lambda: 3 / (p + p), 3 / (2 * ta)), ("3 - p", lambda: 3 - p, 3 - ta)):
        r = fn()
        close(r, want, what, (B,))


def case_inplace_boxing():
    """Note [In-place ops that box] (dispatch.py): fill_ / setitem_ of a split or partial-sum tensor
    run on the tensor boxed to broadcast and box the result back: the tensor keeps its layout, its
    value is PyTorch's and the gradient reaches the tensor it was computed from."""
    a, v = X((6, 8), 12), X((6, 3), 13)
    ta, tv = torch.tensor(a, requires_grad=True), torch.tensor(v, requires_grad=True)
    for sbp in (S0, S1, PS):
        base, gv = g_of(a, B, True), g_of(v, B, True)
        x = (base + 0).to_global(sbp=sbp)
        x[:, 2:5] = gv.to_global(sbp=S0 if sbp == S0 else B)
        assert x.sbp == (sbp,), f"setitem_ {sbp}: {x.sbp}"
        t = ta + 0
        t[:, 2:5] = tv
        close(x, t, f"setitem_ {sbp}")
        (x.to_global(sbp=B) * 2).sum().backward()
        (t * 2).sum().backward()
        close(base.grad, ta.grad, f"setitem_ {sbp}: grad of the tensor")
        close(gv.grad, tv.grad, f"setitem_ {sbp}: grad of the value")
        ta.grad = tv.grad = None
        y = g_of(a, B) + 1
        y = y.to_global(sbp=sbp)
        r = y.fill_(2.5)
        assert r is y and y.sbp == (sbp,), f"fill_ {sbp}: {y.sbp}"
        close(y, torch.full((6, 8), 2.5), f"fill_ {sbp}")
    leaf = g_of(a, PS, True)
    try:
        leaf.fill_(1.0)
    except RuntimeError as e:
        assert "leaf" in str(e) and "fill_" in str(e), e
    else:
        raise AssertionError("fill_ of a partial-sum leaf that requires grad did not raise")


def case_dim_rules():
    """Note [Dim rules on the fast path] (src/api/global_fast.cpp): ops along a dim and reductions
    that are no sum, on a tensor split along another dim (or broadcast), run in C++ with the
    dispatcher's own layout; along the split dim, or with dim=None, they are the dispatcher's."""
    x = X((6, 5, 4), 14)
    cases = [  # (what, op name, fn, sbp, args, kwargs, torch fn, output sbp)
        ("cumsum(1) S0", "cumsum", flow.cumsum, S0, (1,), {}, torch.cumsum, S0),
        ("x.cumsum(dim=0) S2", "cumsum", M("cumsum"), S2, (), {"dim": 0}, M("cumsum"), S2),
        ("amax(1) S2", "amax", flow.amax, S2, (1,), {}, torch.amax, S1),
        ("amax((0, 1), keepdim) S2", "amax", M("amax"), S2, ((0, 1),), {"keepdim": True}, M("amax"), S2),
        ("var(2) S0", "var", M("var"), S0, (2,), {}, M("var"), S0),
        ("logsumexp(0) S1", "logsumexp", flow.logsumexp, S1, (0,), {}, torch.logsumexp, S0),
        ("glu(-1) S0", "glu", flow.nn.functional.glu, S0, (), {"dim": -1}, torch.nn.functional.glu, S0),
        ("prod(-1) B", "prod", M("prod"), B, (-1,), {}, M("prod"), B),
    ]
    for what, name, fn, sbp, args, kwargs, tfn, out in cases:
        fast_case(what, name, fn, [(x, sbp, True)], args, kwargs, tfn, (out,))
    # several outputs: each laid out as the one
    gx, tx = g_of(x, S0, True), torch.tensor(x, requires_grad=True)
    for what, fn, tfn, out in [
        ("x.max(1)", lambda t: t.max(1), lambda t: t.max(1), S0),
        ("flow.min(x, dim=2, keepdim=True)", lambda t: flow.min(t, dim=2, keepdim=True),
         lambda t: torch.min(t, dim=2, keepdim=True), S0),
        ("x.sort(-1)", lambda t: t.sort(-1), lambda t: t.sort(-1), S0),
        ("flow.split(x, 2, 1)", lambda t: flow.split(t, 2, 1), lambda t: torch.split(t, 2, 1), S0),
        ("x.split([1, 3], dim=2)", lambda t: t.split([1, 3], dim=2), lambda t: t.split([1, 3], dim=2), S0),
        ("x.chunk(2, 2)", lambda t: t.chunk(2, 2), lambda t: t.chunk(2, 2), S0),
        ("x.unbind(2)", lambda t: t.unbind(2), lambda t: t.unbind(2), S0),
        ("flow.aminmax(x, dim=1)", lambda t: flow.aminmax(t, dim=1), lambda t: torch.aminmax(t, dim=1), S0),
    ]:
        with Counting() as cnt:
            r = fn(gx)
        assert cnt.calls == [], f"{what}: {cnt.calls}"
        t = tfn(tx)
        assert type(r).__name__ == type(t).__name__ or isinstance(r, (tuple, list)), (what, type(r), type(t))
        assert len(r) == len(t), what
        for i, (g, w) in enumerate(zip(r, t)):
            close(g, w, f"{what}[{i}]", (out,))
        values = r[0] if not isinstance(r[0], (tuple, list)) else r[0][0]
        if values.dtype.is_floating_point:
            (values.to_global(sbp=B) ** 2).sum().backward()
            (t[0] ** 2).sum().backward()
            close(gx.grad, tx.grad, f"{what}: grad")
            gx.grad = tx.grad = None
    # the dispatcher's: along the split dim, every dim, a partial sum
    for what, fn, want in [
        ("cumsum(0) S0", lambda: flow.cumsum(gx, 0), torch.cumsum(tx, 0)),
        ("max() S0", lambda: gx.max(), tx.max()),
        ("split along S0", lambda: flow.split(gx, 4, 0)[1], torch.split(tx, 4, 0)[1]),
    ]:
        with Counting() as cnt:
            r = fn()
        assert cnt.calls, f"{what}: never reached the dispatcher"
        close(r, want, what)


def case_reshape():
    """reshape / view by ReshapeRule (src/api/global_rules.h) on the fast path: a split kept or moved
    to the output dim its blocks fill, a partial sum kept; a split landing nowhere is the
    dispatcher's (boxed to broadcast)."""
    x = X((6, 4), 15)
    cases = [  # (what, fn, sbp, args, kwargs, output sbp)
        ("reshape(6, 2, 2) S0", M("reshape"), S0, (6, 2, 2), {}, S0),
        ("flow.reshape(x, (24,)) S0", flow.reshape, S0, ((24,),), {}, S0),
        ("view(3, 2, 4) S1", M("view"), S1, (3, 2, 4), {}, S2),
        ("view(-1) S0", M("view"), S0, (-1,), {}, S0),
        ("reshape(shape=(6, 4, 1)) S1", M("reshape"), S1, (), {"shape": (6, 4, 1)}, S1),
        ("reshape(4, 6) B", M("reshape"), B, (4, 6), {}, B),
    ]
    for what, fn, sbp, args, kwargs, out in cases:
        name = "view" if "view" in what else "reshape"
        fast_case(what, name, fn, [(x, sbp, True)], args, kwargs, M(name) if fn is not flow.reshape else torch.reshape,
                  (out,))
    addend, p = partial(x, True)
    with Counting() as cnt:
        r = p.reshape(4, -1)
    assert cnt.calls == [], cnt.calls
    tp = torch.tensor(x, requires_grad=True)
    t = tp.reshape(4, -1)
    close(r, t, "reshape of a partial sum", (PS,))
    slow = dispatch.run("reshape", M("reshape"), (p, 4, -1), {})
    assert slow.sbp == (PS,), slow.sbp
    (r.to_global(sbp=B) ** 2).sum().backward()
    (t ** 2).sum().backward()
    np.testing.assert_allclose(addend.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-5)
    slow_case("reshape(2, 3, 4) S0: the split lands nowhere", "reshape", lambda t: t.reshape(2, 3, 4),
              [(x, S0, False)], lambda t: t.reshape(2, 3, 4))


def case_losses():
    """Elementwise losses by LossRule (src/api/global_rules.h) on the fast path: input and target
    split(0) -- 'none' split, 'sum' a partial sum, 'mean' each rank's sum over the global count; a
    broadcast target (sliced: boxing) is the dispatcher's."""
    F, TF = flow.nn.functional, torch.nn.functional
    x, y = X((7, 3), 16), X((7, 3), 17)
    for what, fn, tfn in (("mse_loss", F.mse_loss, TF.mse_loss), ("l1_loss", F.l1_loss, TF.l1_loss),
                          ("smooth_l1_loss", F.smooth_l1_loss, TF.smooth_l1_loss)):
        for reduction, out in (("none", S0), ("sum", PS), ("mean", PS)):
            fast_case(f"{what} {reduction}", what, fn, [(x, S0, True), (y, S0, False)], (), {"reduction": reduction},
                      tfn, (out,))
    slow_case("mse_loss, target broadcast", "mse_loss", lambda a, b: F.mse_loss(a, b), [(x, S0, False), (y, B, False)],
              lambda a, b: TF.mse_loss(a, b))


def case_manual():
    """max / min / split (hand-written bindings): the kind test hands a global argument to the
    dispatcher as the generated bindings do; their rules keep a split off the op's dim."""
    x, y = X((6, 5), 0), X((6, 5), 1)
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y)
    gx, gy = g_of(x, S0, True), g_of(y, S0)
    with Counting() as cnt:  # (Note [Dim rules on the fast path]: not the dispatcher's)
        flow.max(gx, 1), flow.min(gx, dim=1), flow.split(gx, 2, dim=1), gx.max(1), gx.split(2, 1)
    assert cnt.calls == [], cnt.calls
    r = flow.max(gx, 1)
    close(r.values, tx.max(1).values, "max(x, 1)", (S0,))
    close(r.indices, tx.max(1).indices, "max(x, 1) indices", (S0,))
    close(flow.min(gx, dim=1, keepdim=True).values, tx.min(1, keepdim=True).values, "min(x, 1, keepdim)", (S0,))
    close(flow.max(gx, 0).values, tx.max(0).values, "max(x, 0)")
    close(flow.max(gx), tx.max(), "max(x)")
    close(flow.min(gx, gy), torch.min(tx, ty), "min(x, y)")
    parts, tparts = flow.split(gx, 2, dim=1), torch.split(tx, 2, dim=1)
    assert len(parts) == len(tparts)
    for i, (g, t) in enumerate(zip(parts, tparts)):
        close(g, t, f"split(x, 2, 1)[{i}]", (S0,))
    parts, tparts = flow.split(gx, [1, 5], dim=0), torch.split(tx, [1, 5], dim=0)
    for i, (g, t) in enumerate(zip(parts, tparts)):
        close(g, t, f"split(x, [1, 5], 0)[{i}]")
    loss = flow.max(gx, 1).values.sum() + sum((p * p).sum() for p in flow.split(gx, 2, dim=1))
    tloss = tx.max(1).values.sum() + sum((p * p).sum() for p in torch.split(tx, 2, dim=1))
    loss.backward()
    tloss.backward()
    close(gx.grad, tx.grad, "max / split: grad")


def case_mesh():
    """On a 2 x 2 mesh: each axis's signature from the 1-d rule on the shapes the axes before it
    leave, in C++ -- nested uneven splits (7 rows: 4 / 3, then 2 / 2 and 2 / 1) included."""
    F = flow.nn.functional
    x, w, m = X((7, 6), 0), X((6, 5), 1), X((5, 6), 2)
    a3, b3 = X((4, 3, 5), 3), X((4, 5, 2), 4)
    T = torch
    cases = [  # (what, op name, fn, inputs (array, sbp, grad), args, kwargs, torch fn, output sbp)
        ("matmul (S0, S0) x (B, B)", "matmul", flow.matmul, [(x, (S0, S0), True), (w, (B, B), False)], (), {},
         T.matmul, (S0, S0)),
        ("matmul (S0, B) x (B, S1)", "matmul", flow.matmul, [(x, (S0, B), False), (w, (B, S1), False)], (), {},
         T.matmul, (S0, S1)),
        ("(S1, S0) @ (S0, B)", "matmul", M("__matmul__"), [(x, (S1, S0), True), (w, (S0, B), False)], (), {},
         T.matmul, (PS, S0)),
        ("bmm (S0, S1) x (S0, B)", "bmm", flow.bmm, [(a3, (S0, S1), True), (b3, (S0, B), False)], (), {}, T.bmm,
         (S0, S1)),
        ("sum(1) (S0, S1)", "sum", M("sum"), [(x, (S0, S1), True)], (1,), {}, M("sum"), (S0, PS)),
        ("mean(0) (S0, S0)", "mean", M("mean"), [(x, (S0, S0), True)], (0,), {}, M("mean"), (PS, PS)),
        ("flow.mean(1) (S0, S1)", "mean", flow.mean, [(x, (S0, S1), True)], (1,), {}, T.mean, (S0, PS)),
        ("mean() (B, S0)", "mean", M("mean"), [(x, (B, S0), True)], (), {}, M("mean"), (B, PS)),
        ("transpose (S0, S1)", "transpose", M("transpose"), [(x, (S0, S1), True)], (0, 1), {}, M("transpose"),
         (S1, S0)),
        ("softmax(1) (S0, S0)", "softmax", flow.softmax, [(x, (S0, S0), True)], (1,), {}, T.softmax, (S0, S0)),
        ("linear (S0, B) x (B, S0)", "linear", F.linear, [(x, (S0, B), False), (m, (B, S0), False)], (), {},
         T.nn.functional.linear, (S0, S1)),
        # Note [Dim rules on the fast path]: every axis's split off the op's dims kept
        ("cumsum(1) (S0, S0)", "cumsum", flow.cumsum, [(x, (S0, S0), True)], (1,), {}, T.cumsum, (S0, S0)),
        ("amax(0) (B, S1)", "amax", M("amax"), [(x, (B, S1), True)], (0,), {}, M("amax"), (B, S0)),
    ]
    for what, name, fn, inputs, args, kwargs, tfn, sbp in cases:
        fast_case(what, name, fn, inputs, args, kwargs, tfn, sbp)
    # partial sums on one axis (Note [Partial elementwise]), the other axis as it is
    a, b = X((5, 7), 5), X((5, 7), 6)
    ta, tb = torch.tensor(a), torch.tensor(b)
    _, p = partial(a)  # (P, B)
    _, q = partial(b)
    c = g_of(b, (B, B))
    for what, fn, want in (("(P, B) + (P, B)", lambda: p + q, ta + tb), ("(P, B) * (B, B)", lambda: p * c, ta * tb),
                           ("-(P, B)", lambda: -p, -ta), ("(P, B) / 2", lambda: p / 2, ta / 2)):
        with Counting() as cnt:
            r = fn()
        assert cnt.calls == [], f"{what}: {cnt.calls}"
        close(r, want, what, (PS, B))
    ps = p.to_global(sbp=(PS, S1))
    qs = q.to_global(sbp=(PS, S1))
    with Counting() as cnt:
        r = ps - qs
    assert cnt.calls == [], cnt.calls
    close(r, ta - tb, "(P, S1) - (P, S1)", (PS, S1))
    # boxing on one axis: the dispatcher's
    slow_case("matmul (S0, S1) x (B, B)", "matmul", flow.matmul, [(x, (S0, S1), False), (w, (B, B), False)], T.matmul)
    # the cat rule per axis
    r = flow.cat([g_of(x, (S0, S1)), g_of(x, (S0, S1))], dim=1)
    close(r, torch.cat([torch.tensor(x)] * 2, 1), "cat (S0, S1) dim 1", (S0, S0))


if __name__ == "__main__":
    flow.env.init()
    if sys.argv[1] == "mesh":
        P = flow.placement("cpu", ranks=[[0, 1], [2, 3]])
        case_mesh()
    else:
        P = flow.placement("cpu", ranks=list(range(WORLD)))
        case_cat()
        case_rules()
        case_manual()
        case_product_partial()
        case_inplace_boxing()
        case_dim_rules()
        case_reshape()
        case_losses()
    print(f"rank {RANK}: {sys.argv[1]} ok", flush=True)
