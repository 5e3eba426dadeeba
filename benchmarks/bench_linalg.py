"""Benchmarks of the shape, matmul and linalg families: flow against PyTorch in the same process
(same thread count), with the harness of bench.py (median of calibrated loops, ratios).

    .venv/bin/python benchmarks/bench_linalg.py

Throughput rows: ratio = flow rate / torch rate (higher is better, 1.0 = parity). Each row checks
that both libraries agree on the result before timing it.
"""

import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import FLOW_NAME, Row, _close, _fmt_time, _run_pair, flow  # noqa: E402

RNG = np.random.default_rng(0)


def _pair(a):
    return flow.tensor(a), torch.tensor(a)


def bench_einsum_bmm(batch=32, n=256):
    row = Row(f"einsum bij,bjk->bik ({batch}x{n}^3)", "throughput", 2 * batch * n ** 3, "GFLOP/s")
    a = RNG.standard_normal((batch, n, n), dtype=np.float32)
    b = RNG.standard_normal((batch, n, n), dtype=np.float32)
    (fa, ta), (fb, tb) = _pair(a), _pair(b)
    return _run_pair(row, lambda: (lambda: flow.einsum("bij,bjk->bik", fa, fb)),
                     lambda: (lambda: torch.einsum("bij,bjk->bik", ta, tb)),
                     check=lambda: _close(flow.einsum("bij,bjk->bik", fa, fb).numpy()[0, :4, :4],
                                          torch.bmm(ta, tb).numpy()[0, :4, :4], 1e-3))


def bench_bmm(batch=32, n=256):
    row = Row(f"bmm ({batch}x{n}^3), for reference", "throughput", 2 * batch * n ** 3, "GFLOP/s")
    a = RNG.standard_normal((batch, n, n), dtype=np.float32)
    (fa, ta) = _pair(a)
    return _run_pair(row, lambda: (lambda: flow.bmm(fa, fa)), lambda: (lambda: torch.bmm(ta, ta)))


def bench_addmm(n=1024):
    row = Row(f"addmm {n}^3 (beta=0.5, alpha=2)", "throughput", 2 * n ** 3, "GFLOP/s")
    a, b, c = (RNG.standard_normal((n, n), dtype=np.float32) for _ in range(3))
    (fa, ta), (fb, tb), (fc, tc) = _pair(a), _pair(b), _pair(c)
    return _run_pair(row, lambda: (lambda: flow.addmm(fc, fa, fb, beta=0.5, alpha=2.0)),
                     lambda: (lambda: torch.addmm(tc, ta, tb, beta=0.5, alpha=2.0)),
                     check=lambda: _close(flow.addmm(fc, fa, fb, beta=0.5, alpha=2.0).numpy()[:4, :4],
                                          torch.addmm(tc, ta, tb, beta=0.5, alpha=2.0).numpy()[:4, :4], 1e-3))


def _copy_row(name, fn, shape=(4096, 4096), out_factor=1):
    """A copying shape op on 16M float32: rate = bytes read + written."""
    x = RNG.standard_normal(shape, dtype=np.float32)
    n = x.size
    row = Row(f"{name}, {n / 2**20:g}M float32", "throughput", 4 * n * (1 + out_factor), "GB/s")
    fx, tx = _pair(x)
    return _run_pair(row, lambda: (lambda: fn(flow, fx)), lambda: (lambda: fn(torch, tx)),
                     check=lambda: _close(fn(flow, fx).numpy()[-3:, -3:], fn(torch, tx).numpy()[-3:, -3:], 0))


def bench_inv(batch=16, n=256):
    row = Row(f"linalg.inv {batch}x{n}x{n}", "throughput", batch * 2 * n ** 3, "GFLOP/s")
    a = RNG.standard_normal((batch, n, n)) + n * np.eye(n)
    (fa, ta) = _pair(a.astype(np.float32))
    return _run_pair(row, lambda: (lambda: flow.linalg.inv(fa)), lambda: (lambda: torch.linalg.inv(ta)),
                     check=lambda: _close(flow.linalg.inv(fa).numpy()[0, :4, :4],
                                          torch.linalg.inv(ta).numpy()[0, :4, :4], 1e-4))


def bench_svd(batch=16, n=256):
    row = Row(f"linalg.svd {batch}x{n}x{n}", "throughput", batch * 4 * n ** 3, "GFLOP/s")
    a = RNG.standard_normal((batch, n, n), dtype=np.float32)
    (fa, ta) = _pair(a)
    return _run_pair(row, lambda: (lambda: flow.linalg.svd(fa)), lambda: (lambda: torch.linalg.svd(ta)),
                     check=lambda: _close(flow.linalg.svd(fa).S.numpy()[0, :8], torch.linalg.svd(ta).S.numpy()[0, :8],
                                          1e-3))


def bench_complex(name, fn, n=256, batch=8, flops=0):
    """A complex128 decomposition (LAPACK's z routines; MKL's in torch)."""
    row = Row(f"{name} complex128 {batch}x{n}x{n}", "throughput", flops, "GFLOP/s")
    a = RNG.standard_normal((batch, n, n)) + 1j * RNG.standard_normal((batch, n, n)) + n * np.eye(n)
    (fa, ta) = _pair(a)
    return _run_pair(row, lambda: (lambda: fn(flow, fa)), lambda: (lambda: fn(torch, ta)))


def bench_householder(n=128):
    """The first n columns of Q from geqrf's reflectors: one rank-1 update per reflector (flow, a
    differentiable composite) against LAPACK's orgqr (torch)."""
    row = Row(f"linalg.householder_product {n}x{n}", "throughput", 4 * n ** 3 / 3, "GFLOP/s")
    a = RNG.standard_normal((n, n))
    fa, tau = flow.geqrf(flow.tensor(a))
    ta, ttau = torch.tensor(fa.numpy()), torch.tensor(tau.numpy())
    return _run_pair(row, lambda: (lambda: flow.linalg.householder_product(fa, tau)),
                     lambda: (lambda: torch.linalg.householder_product(ta, ttau)),
                     check=lambda: _close(flow.linalg.householder_product(fa, tau).numpy()[:4, :4],
                                          torch.linalg.householder_product(ta, ttau).numpy()[:4, :4], 1e-8))


def bench_small(name, fn, shape):
    """Eager overhead of a small call: lower ratio is better."""
    row = Row(f"{name} {shape} (eager overhead)", "overhead")
    x = RNG.standard_normal(shape, dtype=np.float32)
    fx, tx = _pair(x)
    return _run_pair(row, lambda: (lambda: fn(flow, fx)), lambda: (lambda: fn(torch, tx)))


def main():
    threads = flow.get_num_threads()
    # Only when it differs: on this machine a torch.set_num_threads call (even to the current
    # count) leaves torch's batched MKL LU returning invalid pivots (linalg.inv then raises).
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    print(f"{FLOW_NAME} vs torch {torch.__version__}; threads: flow={flow.get_num_threads()} "
          f"torch={torch.get_num_threads()}; cpus={os.cpu_count()}")
    t_start = time.perf_counter()
    sections = [
        ("products", [bench_einsum_bmm, bench_bmm, bench_addmm]),
        ("copying shape ops", [
            lambda: _copy_row("flip dim 0", lambda lib, x: lib.flip(x, [0])),
            lambda: _copy_row("flip dim 1 (reversed rows)", lambda lib, x: lib.flip(x, [1])),
            lambda: _copy_row("roll (100, -7) dims (0, 1)", lambda lib, x: lib.roll(x, (100, -7), (0, 1))),
            lambda: _copy_row("repeat (2, 2) of 2048^2", lambda lib, x: x.repeat(2, 2), (2048, 2048), 4),
            lambda: _copy_row("tril", lambda lib, x: lib.tril(x)),
            lambda: _copy_row("stack of 4 x 4M", lambda lib, x: lib.stack([x[i::4] for i in range(4)], 1)),
        ]),
        ("linalg", [bench_inv, bench_svd, bench_householder,
                    lambda: bench_complex("linalg.inv", lambda lib, x: lib.linalg.inv(x), flops=8 * 8 * 256 ** 3),
                    lambda: bench_complex("linalg.svd", lambda lib, x: lib.linalg.svd(x), flops=8 * 16 * 256 ** 3),
                    lambda: bench_complex("linalg.eigh", lambda lib, x: lib.linalg.eigh(x),
                                          flops=8 * 16 * 256 ** 3)]),
        ("eager overhead", [
            lambda: bench_small("einsum ij,jk->ik", lambda lib, x: lib.einsum("ij,jk->ik", x, x), (8, 8)),
            lambda: bench_small("flip", lambda lib, x: lib.flip(x, [0]), (8, 8)),
            lambda: bench_small("linalg.inv", lambda lib, x: lib.linalg.inv(x + 8 * lib.eye(8)), (8, 8)),
        ]),
    ]
    header = (f"{'benchmark':44s} {'flow':>12s} {'torch':>12s} {'ratio':>7s}  "
              f"{'flow rate':>14s} {'torch rate':>14s}")
    print(header)
    print("-" * len(header))
    for title, fns in sections:
        print(f"[{title}]")
        for fn in fns:
            row = fn()
            r = row.ratio()
            arrow = "(lower is better)" if row.kind == "overhead" else "(higher is better)"
            ratio = f"{r:7.2f}" if r is not None else "    n/a"
            print(f"{row.name:44s} {_fmt_time(row.flow_t):>12s} {_fmt_time(row.torch_t):>12s} {ratio}  "
                  f"{row.rate(row.flow_t):>14s} {row.rate(row.torch_t):>14s}  {arrow}"
                  + (f"  [{row.note}]" if row.note else ""))
            sys.stdout.flush()
    print(f"total {time.perf_counter() - t_start:.1f} s")


if __name__ == "__main__":
    main()
