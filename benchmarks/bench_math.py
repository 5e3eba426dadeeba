"""Benchmarks of the math family (scans, softmax, statistics, special functions): flow against
PyTorch in the same process, same thread count. Same conventions as bench.py: median of
calibrated loops; the ratio is flow's throughput / torch's (higher is better, 1.0 = parity).

    .venv/bin/python benchmarks/bench_math.py [--large N] [--side S]
"""

import argparse
import os
import sys
import time

# Before torch / oneflow start OpenMP: with both libraries in one process, the threads of the
# one that ran last spin while the other runs (see bench_nn_attention.py); on 2 cores that made
# the rows read ~8 ms for millisecond work.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import FLOW_NAME, Row, _close, _fmt_time, _run_pair, flow  # noqa: E402


def _pair(x):
    return flow.tensor(x), torch.tensor(x)


def _unary(name, fn, x, rtol, bytes_per_call):
    row = Row(name, "throughput", bytes_per_call, "GB/s")
    fa, ta = _pair(x)
    return _run_pair(row, lambda: (lambda: fn(flow, fa)), lambda: (lambda: fn(torch, ta)),
                     check=lambda: _close(fn(flow, fa).numpy().ravel()[:4096],
                                          fn(torch, ta).numpy().ravel()[:4096], rtol))


def bench_cumsum(n):
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    return _unary(f"cumsum, {n / 1e6:g}M float32", lambda lib, t: lib.cumsum(t, 0), x, 1e-4, 8 * n)


def _square(side, seed=1):
    return np.random.default_rng(seed).standard_normal((side, side), dtype=np.float32)


def bench_softmax(side):
    x = _square(side)
    return _unary(f"softmax {side}x{side} float32, dim=-1", lambda lib, t: lib.softmax(t, -1), x, 1e-5,
                  8 * side * side)


def bench_softmax_short_rows(rows, n):
    # many short rows (attention scores, vocabulary-free classifiers): per-row overheads dominate
    x = np.random.default_rng(10).standard_normal((rows, n), dtype=np.float32)
    return _unary(f"softmax {rows}x{n} float32, dim=-1", lambda lib, t: lib.softmax(t, -1), x, 1e-5,
                  8 * rows * n)


def bench_softmax_backward(side):
    row = Row(f"softmax {side}x{side} forward+backward", "throughput", 4 * 4 * side * side, "GB/s")
    x, g = _square(side, 2), _square(side, 3)

    def make(lib):
        xt = lib.tensor(x, requires_grad=True)
        gt = lib.tensor(g)

        def step():
            y = lib.softmax(xt, -1)
            y.backward(gt)
            xt.grad = None

        step()
        return step

    def check():
        grads = []
        for lib in (flow, torch):
            xt = lib.tensor(x, requires_grad=True)
            lib.softmax(xt, -1).backward(lib.tensor(g))
            grads.append(xt.grad.numpy().ravel()[:4096])
        _close(grads[0], grads[1], 1e-5)

    return _run_pair(row, lambda: make(flow), lambda: make(torch), check=check)


def bench_log_softmax(side):
    x = _square(side, 4)
    return _unary(f"log_softmax {side}x{side} float32, dim=-1", lambda lib, t: lib.log_softmax(t, -1), x,
                  1e-5, 8 * side * side)


def bench_logsumexp(side):
    x = _square(side, 5)
    return _unary(f"logsumexp {side}x{side} float32, dim=-1", lambda lib, t: lib.logsumexp(t, -1), x, 1e-5,
                  4 * side * side)


def bench_var_full(n):
    x = np.random.default_rng(6).standard_normal(n, dtype=np.float32) + 3
    return _unary(f"var, {n / 1e6:g}M float32", lambda lib, t: lib.var(t).reshape(1), x, 1e-5, 4 * n)


def bench_var_rows(side):
    x = _square(side, 7)
    return _unary(f"var {side}x{side} float32, dim=1", lambda lib, t: lib.var(t, 1), x, 1e-5, 4 * side * side)


def bench_erfinv(n):
    x = np.random.default_rng(8).uniform(-0.999, 0.999, n).astype(np.float32)
    return _unary(f"erfinv, {n / 1e6:g}M float32", lambda lib, t: lib.erfinv(t), x, 2e-6, 8 * n)


def bench_lgamma(n):
    x = np.random.default_rng(9).uniform(0.1, 20, n).astype(np.float32)
    return _unary(f"lgamma, {n / 1e6:g}M float32", lambda lib, t: lib.lgamma(t), x, 1e-5, 8 * n)


# Transcendental functions on SLEEF (Note [SLEEF blocks], src/kernels/sleef_map.h): name, range.
_SLEEF_ROWS = [("sin", -10, 10), ("cos", -10, 10), ("tan", -1.5, 1.5), ("atan", -10, 10), ("sinh", -5, 5),
               ("erf", -3, 3), ("erfc", -3, 3), ("log", 0.01, 100), ("log1p", -0.5, 100), ("expm1", -5, 5)]


def bench_sleef(name, lo, hi, n):
    x = np.random.default_rng(10).uniform(lo, hi, n).astype(np.float32)
    return _unary(f"{name}, {n / 1e6:g}M float32", lambda lib, t: getattr(lib, name)(t), x, 2e-6, 8 * n)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--large", type=int, default=10_000_000, help="elements of the 1-d cases (default 10M)")
    p.add_argument("--side", type=int, default=4096, help="side of the square cases (default 4096)")
    args = p.parse_args()
    torch.set_num_threads(flow.get_num_threads())
    print(f"{FLOW_NAME} vs torch {torch.__version__}; threads: flow={flow.get_num_threads()} "
          f"torch={torch.get_num_threads()}; cpus={os.cpu_count()}")
    n, s = args.large, args.side
    benches = [
        lambda: bench_cumsum(n), lambda: bench_softmax(s), lambda: bench_softmax_short_rows(8192, 128),
        lambda: bench_softmax_backward(s),
        lambda: bench_log_softmax(s), lambda: bench_logsumexp(s), lambda: bench_var_full(n),
        lambda: bench_var_rows(s), lambda: bench_erfinv(n), lambda: bench_lgamma(n),
    ] + [lambda r=r: bench_sleef(*r, n) for r in _SLEEF_ROWS]
    header = (f"{'benchmark':44s} {'flow':>12s} {'torch':>12s} {'ratio':>7s}  "
              f"{'flow rate':>14s} {'torch rate':>14s}")
    print(header)
    print("-" * len(header))
    t0 = time.perf_counter()
    for b in benches:
        row = b()
        r = row.ratio()
        ratio = f"{r:7.2f}" if r is not None else "    n/a"
        print(f"{row.name:44s} {_fmt_time(row.flow_t):>12s} {_fmt_time(row.torch_t):>12s} {ratio}  "
              f"{row.rate(row.flow_t):>14s} {row.rate(row.torch_t):>14s}  (higher is better)"
              + (f"  [{row.note}]" if row.note else ""))
        sys.stdout.flush()
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
