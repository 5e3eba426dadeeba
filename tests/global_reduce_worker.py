"""One process of tests/test_global_reduce.py (started through the launcher, worlds of 2 and 3):
index-returning reductions over the split dim of a global tensor -- max / min with indices,
argmax / argmin (Note [Partial max with indices] in python/oneflow/_global/rules_reduce.py) and
kthvalue / median / mode (re-split along a kept dim) -- against PyTorch on the whole tensor:
values, indices, gradients, ties across ranks, NaN, uneven splits with an empty slice; and that
the input was not gathered (no boxing bytes for the partial results; one all-to-all's for a re-split)."""
import os
import sys

import numpy as np
import torch

import oneflow as flow

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
S, B = flow.sbp.split, flow.sbp.broadcast


def component(g):
    """This rank's component, gathered: the logical value as numpy."""
    return g.to_global(sbp=B).to_local().detach().numpy() if g.is_global else g


def same(got, want, what):
    g = component(got)
    np.testing.assert_array_equal(g, want.detach().numpy() if isinstance(want, torch.Tensor) else want, err_msg=what)


def inputs():
    rng = np.random.default_rng(0)
    ties = rng.integers(0, 3, (5, 7)).astype(np.float32)  # (many ties, across ranks too)
    nan = rng.standard_normal((5, 7)).astype(np.float32)
    nan[1, 6] = nan[3, 0] = np.nan
    return {"ties": ties, "nan": nan, "normal": rng.standard_normal((4, 3, 6)).astype(np.float32),
            "short": rng.standard_normal((2, 3)).astype(np.float32)}  # (3 ranks: one holds no row)


def case_max_min():
    pl = flow.placement("cpu", list(range(WORLD)))
    for name, x in inputs().items():
        for d in range(x.ndim):
            for keep in (False, True):
                for op in ("max", "min"):
                    what = f"{op}({name}, dim={d}, keepdim={keep}) split({d})"
                    g = flow.tensor(x, placement=pl, sbp=S(d), requires_grad=True)
                    t = torch.tensor(x, requires_grad=True)
                    flow.boxing.reset_bytes_moved()
                    got = getattr(g, op)(d, keep)
                    assert flow.boxing.bytes_moved() == 0, f"{what}: the input was boxed"
                    want = getattr(t, op)(d, keep)
                    assert got.values.sbp == (B,) and got.indices.sbp == (B,), what
                    same(got.values, want.values, what + " values")
                    same(got.indices, want.indices, what + " indices")
                    w = np.random.default_rng(1).standard_normal(tuple(want.values.shape)).astype(np.float32)
                    (got.values * flow.tensor(w, placement=pl, sbp=B)).sum().backward()
                    (want.values * torch.tensor(w)).sum().backward()
                    same(g.grad, t.grad, what + " grad")
                    for arg in ("argmax", "argmin") if op == "max" else ():
                        flow.boxing.reset_bytes_moved()
                        got = getattr(g, arg)(d, keep)
                        assert flow.boxing.bytes_moved() == 0, f"{arg}: the input was boxed"
                        same(got, getattr(t, arg)(d, keep), f"{arg}({name}, {d}, {keep}) split({d})")
            for arg in ("argmax", "argmin"):  # over every element: indices of the flattened whole
                g = flow.tensor(x, placement=pl, sbp=S(d))
                same(getattr(g, arg)(), getattr(torch.tensor(x), arg)(), f"{arg}({name}) split({d})")
                same(getattr(g, arg)(keepdim=True), getattr(torch.tensor(x), arg)(keepdim=True),
                     f"{arg}({name}, keepdim) split({d})")
            for op in ("max", "min"):  # max(x): every element (gradient shared by the ties)
                g = flow.tensor(x, placement=pl, sbp=S(d), requires_grad=True)
                t = torch.tensor(x, requires_grad=True)
                got, want = getattr(g, op)(), getattr(t, op)()
                same(got, want, f"{op}({name}) split({d})")
                got.backward()
                want.backward()
                np.testing.assert_allclose(component(g.grad), t.grad.numpy(), rtol=1e-6, err_msg=f"{op}({name}) grad")
    x = np.arange(12, dtype=np.int64).reshape(3, 4) % 5  # an integer tensor
    g = flow.tensor(x, placement=pl, sbp=S(1))
    r, t = g.max(1), torch.tensor(x).max(1)
    same(r.values, t.values, "int max values")
    same(r.indices, t.indices, "int max indices")


def case_select():
    """kthvalue / median / mode over the split dim: the input re-split along the largest kept dim
    (one all-to-all), each rank reducing its slice."""
    pl = flow.placement("cpu", list(range(WORLD)))
    x = inputs()["normal"]  # (4, 3, 6)
    ties = np.random.default_rng(2).integers(0, 3, (6, 5)).astype(np.float32)
    calls = [("kthvalue", x, (2, 2), 2, S(0)), ("median", x, (2,), 2, S(0)), ("mode", ties, (1,), 1, S(0)),
             ("kthvalue", x, (3, 0), 0, S(1)), ("median", x, (0, True), 0, S(2))]
    for op, v, args, d, out in calls:
        what = f"{op}{args} split({d})"
        g = flow.tensor(v, placement=pl, sbp=S(d), requires_grad=True)
        t = torch.tensor(v, requires_grad=True)
        flow.boxing.reset_bytes_moved()
        got, want = getattr(g, op)(*args), getattr(t, op)(*args)
        moved = flow.boxing.bytes_moved()
        assert got.values.sbp == (out,), f"{what}: {got.values.sbp}"
        assert 0 < moved < v.size * 4 * (WORLD - 1) / WORLD, f"{what}: {moved} bytes moved: the input was gathered"
        same(got.values, want.values, what + " values")
        same(got.indices, want.indices, what + " indices")
        (got.values * 1.5).sum().backward()
        (want.values * 1.5).sum().backward()
        same(g.grad, t.grad, what + " grad")


CASES = ["max_min", "select"]

if __name__ == "__main__":
    flow.env.init()
    for case in (CASES if sys.argv[1] == "all" else sys.argv[1:]):
        globals()["case_" + case]()
    print(f"rank {RANK}: ok", flush=True)
