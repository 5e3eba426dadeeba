"""One process of tests/test_global_kind.py (started through the launcher in worlds of 1 and 2):
Note [Global fast path] (src/api/global.h) -- elementwise ops on global inputs of one layout run
in C++ without the Python dispatcher -- checked against PyTorch on the whole tensors, forward and
backward, and the cases it must leave to the dispatcher checked to reach it."""
import os

import numpy as np
import torch

import oneflow as flow
from oneflow import _global_hooks
from oneflow._global import dispatch

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum


def X(shape=(5, 7), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


class Counting:
    """Counts the calls that reach the Python dispatcher (dispatch.run, and its global hook, through
    which Python-level functions such as F.linear call it) while active."""

    def __enter__(self):
        self.calls, self._run = [], dispatch.run

        def run(name, *args, **kwargs):
            self.calls.append(name)
            return self._run(name, *args, **kwargs)
        dispatch.run = _global_hooks._HOOKS["run"] = run
        return self

    def __exit__(self, *exc):
        dispatch.run = _global_hooks._HOOKS["run"] = self._run


def same(g, want, sbp, what):
    assert g.is_global and g.sbp == (sbp,), f"{what}: {type(g).__name__} {getattr(g, 'sbp', None)}"
    assert tuple(g.shape) == tuple(want.shape), f"{what}: shape {tuple(g.shape)} != {tuple(want.shape)}"
    np.testing.assert_allclose(g.numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6, err_msg=what)


def main():
    flow.env.init()
    P = flow.placement("cpu", ranks=list(range(WORLD)))
    a, b = X((5, 7), 0), X((5, 7), 1)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    for sbp in (S0, S1, B):
        ga = flow.tensor(a, placement=P, sbp=sbp, requires_grad=True)
        gb = flow.tensor(b, placement=P, sbp=sbp, requires_grad=True)
        with Counting() as c:  # every one of these runs in C++: the dispatcher sees none
            cases = [
                ("x + y", ga + gb, ta + tb), ("x * y", ga * gb, ta * tb), ("x - 2", ga - 2, ta - 2),
                ("flow.add", flow.add(ga, gb), torch.add(ta, tb)),
                ("flow.add alpha", flow.add(ga, gb, alpha=2.0), torch.add(ta, tb, alpha=2.0)),
                ("flow.mul number", flow.mul(ga, 3), torch.mul(ta, 3)), ("relu", flow.relu(ga), torch.relu(ta)),
                ("x.exp()", ga.exp(), ta.exp()), ("-x", -ga, -ta), ("x.clamp(min=)", ga.clamp(min=0.1), ta.clamp(min=0.1)),
                ("where", flow.where(ga > 0, ga, gb), torch.where(ta > 0, ta, tb)),
            ]
            assert c.calls == [], f"{sbp}: reached the dispatcher: {c.calls}"
        for what, g, t in cases:
            same(g, t, sbp, f"{what} {sbp}")
        loss_g, loss_t = (cases[0][1] * cases[0][1]).sum(), (cases[0][2] * cases[0][2]).sum()
        for _, g, t in cases[1:]:
            loss_g, loss_t = loss_g + (g * g).sum(), loss_t + (t * t).sum()
        loss_g.backward()
        loss_t.backward()
        same(ga.grad, ta.grad, sbp, f"grad x {sbp}")
        same(gb.grad, tb.grad, sbp, f"grad y {sbp}")
        ta.grad = tb.grad = None

        # in place: the tensor itself comes back, laid out as it was
        gc = flow.tensor(a, placement=P, sbp=sbp)
        tc = torch.tensor(a)
        with Counting() as c:
            r1, r2 = gc.add_(gc), gc.mul_(0.5)
            gc += 1.0
            assert c.calls == [], c.calls
        assert r1 is gc and r2 is gc
        same(gc, (tc + tc) * 0.5 + 1.0, sbp, f"in place {sbp}")
        # ~x is a new tensor (it was the input itself: `__invert__` taken for an in-place operator)
        m = flow.tensor(a > 0, placement=P, sbp=sbp)
        n = ~m
        assert n is not m
        same(n, torch.tensor(~(a > 0)), sbp, f"~x {sbp}")
        same(m, torch.tensor(a > 0), sbp, f"~x leaves x {sbp}")

    # what the dispatcher decides: layouts that differ, a local tensor among global ones; and what
    # the C++ rules take now (Note [SBP rules in C++]: a sum of partial sums, a mean)
    gs0, gb_ = flow.tensor(a, placement=P, sbp=S0), flow.tensor(b, placement=P, sbp=B)
    with Counting() as c:
        same(gs0 + gb_, torch.tensor(a + b), S0, "S0 + B")
    assert c.calls == ["add"], c.calls
    p = flow.tensor(a, placement=P, sbp=B).to_global(sbp=PS)
    with Counting() as c:
        r = p + p
    assert c.calls == [] and r.sbp == (PS,), (c.calls, r.sbp)
    same(r.to_global(sbp=B), torch.tensor(2 * a), B, "P + P")
    with Counting() as c:
        same(gs0.mean(), torch.tensor(a).mean(), PS, "mean")
    assert c.calls == [], c.calls
    for bad in (lambda: gs0 + flow.tensor(a), lambda: flow.add(gs0, flow.tensor(a))):
        try:
            bad()
        except RuntimeError as e:
            assert "expected all tensors to be global" in str(e), e
        else:
            raise AssertionError("a local tensor among global ones was taken")
    # the kind test
    gp = flow.nn.Parameter(gs0)
    assert flow._C._is_global(gs0) and flow._C._is_global(gp) and not flow._C._is_global(flow.tensor(a))
    with Counting() as c:
        same(gp * 2, torch.tensor(a * 2), S0, "parameter * 2")
    assert c.calls == [], c.calls
    rules(P)
    print(f"rank {RANK}: all ok", flush=True)


def rules(P):
    """Note [SBP rules in C++] (src/api/global_rules.h): matmul, sum and transpose run in C++ when
    their signature boxes nothing -- checked against PyTorch, forward and backward -- and reach
    the dispatcher otherwise."""
    a, w = X((6, 4), 2), X((4, 5), 3)
    S1_ = flow.sbp.split(1)
    fast = [  # (what, x sbp, w sbp, function, torch function, output sbp)
        ("matmul S0 x B", S0, B, lambda x, y: flow.matmul(x, y), torch.matmul, S0),
        ("x @ w, B x S1", B, S1_, lambda x, y: x @ y, torch.matmul, S1_),
        ("mm S1 x S0", S1_, S0, lambda x, y: flow.mm(x, y), torch.mm, PS),
        ("sum(1) S0", S0, None, lambda x, y: x.sum(1), lambda x, y: x.sum(1), S0),
        ("flow.sum(dim=1, keepdim) S0", S0, None, lambda x, y: flow.sum(x, dim=1, keepdim=True),
         lambda x, y: x.sum(1, keepdim=True), S0),
        ("sum(0) S0", S0, None, lambda x, y: x.sum(0), lambda x, y: x.sum(0), PS),
        ("sum() S1", S1_, None, lambda x, y: x.sum(), lambda x, y: x.sum(), PS),
        ("sum((0, 1)) B", B, None, lambda x, y: x.sum((0, 1)), lambda x, y: x.sum((0, 1)), B),
        ("sum(-1) S0", S0, None, lambda x, y: x.sum(-1), lambda x, y: x.sum(-1), S0),
        ("transpose S0", S0, None, lambda x, y: x.transpose(0, 1), lambda x, y: x.transpose(0, 1), S1_),
        ("flow.transpose S1", S1_, None, lambda x, y: flow.transpose(x, 1, 0), lambda x, y: x.transpose(1, 0), S0),
        ("swapaxes B", B, None, lambda x, y: x.swapaxes(0, -1), lambda x, y: x.swapaxes(0, -1), B),
    ]
    for what, sx, sw, fn, tfn, out in fast:
        grad = not (sx == B and out != B)  # (a broadcast input needing its gradient summed: the dispatcher's)
        gx = flow.tensor(a, placement=P, sbp=sx, requires_grad=grad)
        gw = flow.tensor(w, placement=P, sbp=sw) if sw is not None else None
        tx = torch.tensor(a, requires_grad=grad)
        with Counting() as c:
            y = fn(gx, gw)
        assert c.calls == [], f"{what}: reached the dispatcher: {c.calls}"
        ty = tfn(tx, torch.tensor(w))
        assert y.sbp == (out,), f"{what}: {y.sbp} != {out}"
        same(y.to_global(sbp=B), ty, B, what)
        if grad:
            (y * y).sum().backward()
            (ty * ty).sum().backward()
            same(gx.grad.to_global(sbp=B), tx.grad, B, f"{what}: grad")
    # boxing, or a broadcast weight that needs its gradient summed over the ranks: the dispatcher's
    for what, sx, sw, wgrad in (("S0 x S0", S0, S0, False), ("S0 x B, w needs grad", S0, B, True),
                                ("S1 x B", S1_, B, False)):
        gx = flow.tensor(a, placement=P, sbp=sx, requires_grad=True)
        gw = flow.tensor(w, placement=P, sbp=sw, requires_grad=wgrad)
        tx, tw = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
        with Counting() as c:
            y = flow.matmul(gx, gw)
        assert c.calls == ["matmul"], f"{what}: {c.calls}"
        ty = tx @ tw
        same(y.to_global(sbp=B), ty, B, what)
        (y * y).sum().backward()
        (ty * ty).sum().backward()
        same(gx.grad.to_global(sbp=B), tx.grad, B, f"{what}: grad x")
        if wgrad:
            same(gw.grad.to_global(sbp=B), tw.grad, B, f"{what}: grad w")
    p = flow.tensor(a, placement=P, sbp=B).to_global(sbp=PS)
    with Counting() as c:  # a sum of a partial sum stays one
        r = p.sum(0)
    assert c.calls == [] and r.sbp == (PS,), (c.calls, r.sbp)
    same(r.to_global(sbp=B), torch.tensor(a).sum(0), B, "sum(0) P")
    # a product of a partial sum with itself squares the sum (it was taken as linear: each
    # addend squared), forward and backward; the addends differ on every rank
    c = WORLD * (WORLD + 1) / 2
    addend = flow.tensor(a * (RANK + 1), requires_grad=True)
    p = addend.to_global(P, PS)
    for what, y in (("p * p", p * p), ("flow.mul(p, p)", flow.mul(p, p)), ("square", flow.square(p))):
        assert y.sbp == (B,), (what, y.sbp)
        same(y, torch.tensor((a * c) ** 2), B, what)
        addend.grad = None
        y.sum().backward()
        np.testing.assert_allclose(addend.grad.numpy(), 2 * a * c, rtol=1e-5, err_msg=f"{what}: grad")
    # out= of a global op: out itself comes back, holding the result in its own layout
    gx = flow.tensor(a, placement=P, sbp=S0)
    for sbp in (S0, B):
        o = flow.zeros(*a.shape, placement=P, sbp=sbp)
        r = flow.add(gx, gx, out=o)
        assert r is o and o.sbp == (sbp,), (r is o, o.sbp)
        same(o, torch.tensor(2 * a), sbp, f"add out= {sbp}")
    # a global tensor inside a list: the conversion's GlobalArgument (Note [Kind test])
    gx = flow.tensor(a, placement=P, sbp=S0)
    r = flow.cat([gx, gx], dim=1)
    same(r.to_global(sbp=B), torch.tensor(np.concatenate([a, a], 1)), B, "cat of a list")
    # a factory's placement= / sbp= (the kind test's other half)
    same(flow.zeros(4, 3, placement=P, sbp=S0), torch.zeros(4, 3), S0, "zeros(placement=)")


if __name__ == "__main__":
    main()
