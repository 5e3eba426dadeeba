"""Fused ops (src/ops/table/fused.yaml) against their unfused compositions, in one process:
the fused op, the same computation composed of our ops, and composed of torch's ops, each
forward and forward+backward, on LiBai-like shapes (batch 4, 8 heads, sequence 256, hidden 1024).

    .venv/bin/python benchmarks/bench_fused.py [--only NAME] [--threads N]

Times are medians of timed loops after a warm-up; `vs ours` and `vs torch` are the
composition's time / the fused op's time (above 1: the fused op is faster). A fused op slower
than our composition is a bug. Dropout rows reseed both libraries before each call (the
compositions draw the same masks as the fused ops, tests/test_fused_ops.py).
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # both libraries' OpenMP pools in one process

import numpy as np
import torch

import oneflow as flow

B, H, S, D = 4, 8, 256, 1024


def timeit(f, min_time=0.25, repeats=5):
    f()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.05:
        f()
        n += 1
    n = max(1, int(n * min_time / 0.05 / repeats))
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        out.append((time.perf_counter() - t0) / n)
    return statistics.median(out)


def step(lib, fn, inputs, backward):
    """fn(*inputs), and with backward the gradients of every input needing one."""
    if not backward:
        def run():
            with lib.no_grad():
                fn(*inputs)
        return run
    wrt = [x for x in inputs if getattr(x, "requires_grad", False)]

    def run():
        y = fn(*inputs)
        lib.autograd.grad(y, wrt, lib.ones_like(y))
    return run


def cases():
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((B, H, S, S), dtype=np.float32)
    mask = rng.random((B, 1, S, S)) > 0.2
    hidden = rng.standard_normal((B, S, D), dtype=np.float32)
    bias = rng.standard_normal(D, dtype=np.float32)
    inner = rng.standard_normal((B, S, 4 * D), dtype=np.float32)
    bias4 = rng.standard_normal(4 * D, dtype=np.float32)

    def x(lib, a, grad):
        return lib.tensor(a, requires_grad=grad)

    def where(lib, m, v, fill):
        return lib.where(m, v, lib.tensor(fill, dtype=v.dtype))

    def seeded(lib, f):
        def g(*a):
            lib.manual_seed(0)
            return f(*a)
        return g

    yield ("fused_scale_mask_softmax", lambda lib, grad: [x(lib, scores, grad), lib.tensor(mask)],
           lambda a, m: flow._C.fused_scale_mask_softmax(a, m, fill_value=-10000.0, scale=0.125),
           lambda lib: lambda a, m: lib.softmax(where(lib, m, a * 0.125, -10000.0), dim=-1))
    yield ("fused_scale_mask_softmax_dropout", lambda lib, grad: [x(lib, scores, grad), lib.tensor(mask)],
           seeded(flow, lambda a, m: flow._C.fused_scale_mask_softmax_dropout(
               a, m, fill_value=-10000.0, scale=0.125, p=0.1)[0]),
           lambda lib: seeded(lib, lambda a, m: lib.nn.functional.dropout(
               lib.softmax(where(lib, m, a * 0.125, -10000.0), dim=-1), p=0.1)))
    tril = np.tril(np.ones((S, S), dtype=bool))
    yield ("fused_scale_tril_softmax_mask_scale", lambda lib, grad: [x(lib, scores, grad), lib.tensor(tril)],
           seeded(flow, lambda a, m: flow._C.fused_scale_tril_softmax_mask_scale(
               a, p=0.1, diagonal=0, tril_scale_value=0.125, tril_fill_value=-10000.0)[0]),
           lambda lib: seeded(lib, lambda a, m: lib.nn.functional.dropout(
               lib.softmax(where(lib, m, a * 0.125, -10000.0), dim=-1), p=0.1)))
    yield ("fused_bias_add_gelu", lambda lib, grad: [x(lib, inner, grad), x(lib, bias4, grad)],
           lambda a, b: flow._C.fused_bias_add_gelu(a, b, axis=2),
           lambda lib: lambda a, b: lib.nn.functional.gelu(a + b))
    yield ("fused_bias_add_dropout", lambda lib, grad: [x(lib, hidden, grad), x(lib, bias, grad)],
           seeded(flow, lambda a, b: flow._C.fused_bias_add_dropout(a, b, p=0.1, axis=2)),
           lambda lib: seeded(lib, lambda a, b: lib.nn.functional.dropout(a + b, p=0.1)))
    w = rng.standard_normal((D, D), dtype=np.float32) / 32
    w2 = rng.standard_normal((2 * D, D), dtype=np.float32) / 32
    bias2 = rng.standard_normal(2 * D, dtype=np.float32)
    yield ("fused_matmul_bias", lambda lib, grad: [x(lib, hidden, grad), x(lib, w, grad), x(lib, bias, grad)],
           lambda a, w, b: flow._C.fused_matmul_bias(a, w, b),
           lambda lib: lambda a, w, b: lib.matmul(a, w.t()) + b)
    yield ("fused_glu (gelu)", lambda lib, grad: [x(lib, hidden, grad), x(lib, w2, grad), x(lib, bias2, grad)],
           lambda a, w, b: flow._C.fused_glu(a, w, b, activation="gelu"),
           lambda lib: lambda a, w, b: (lambda h: h[0] * lib.nn.functional.gelu(h[1]))(
               (lib.matmul(a, w.t()) + b).chunk(2, dim=-1)))
    yield ("rms_norm", lambda lib, grad: [x(lib, hidden, grad), x(lib, bias, grad)],
           lambda a, w: flow._C.rms_norm(a, w, [D], 1e-6),
           lambda lib: lambda a, w: a * lib.rsqrt((a * a).mean(-1, keepdim=True) + 1e-6) * w)
    yield ("skip_rms_norm", lambda lib, grad: [x(lib, hidden, grad), x(lib, bias, grad), x(lib, inner[..., :D], grad)],
           lambda a, w, s: flow._C.skip_rms_norm(a, weight=w, skip=s, epsilon=1e-6, alpha=0.5),
           lambda lib: lambda a, w, s: (lambda h: h * lib.rsqrt((h * h).mean(-1, keepdim=True) + 1e-6) * w)(
               a + 0.5 * s))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--threads", type=int)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
        flow.set_num_threads(args.threads)
    print(f"threads: torch {torch.get_num_threads()}; shapes B={B} H={H} S={S} D={D}")
    print(f"{'op':<40}{'pass':<9}{'fused ms':>10}{'ours ms':>10}{'torch ms':>10}{'vs ours':>9}{'vs torch':>9}")
    for name, inputs, fused, compose in cases():
        if args.only and args.only not in name:
            continue
        for backward in (False, True):
            fi, oi, ti = inputs(flow, backward), inputs(flow, backward), inputs(torch, backward)
            tf = timeit(step(flow, fused, fi, backward))
            to = timeit(step(flow, compose(flow), oi, backward))
            tt = timeit(step(torch, compose(torch), ti, backward))
            print(f"{name:<40}{'fwd+bwd' if backward else 'forward':<9}{tf * 1e3:>10.3f}{to * 1e3:>10.3f}"
                  f"{tt * 1e3:>10.3f}{to / tf:>9.2f}{tt / tf:>9.2f}", flush=True)


if __name__ == "__main__":
    main()
