"""Random generation throughput of flow against PyTorch, measured in the same process.

    .venv/bin/python benchmarks/bench_random.py            # 16M float32 elements
    .venv/bin/python benchmarks/bench_random.py --n 1000000

flow draws from Philox4x32-10 in parallel chunks (src/kernels/random_fill.cpp); PyTorch's CPU
generator is mt19937 (sequential draws). Both libraries run with the same thread count. The
ratio is flow rate / torch rate (higher is better, 1.0 = parity); each row also checks that the
result has the distribution's mean and standard deviation, since a fast wrong fill is no
result. The two libraries are timed alternately, median of 11 calls each.
"""

import argparse
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import statistics  # noqa: E402

from bench import FLOW_NAME, Row, _fmt_time, flow  # noqa: E402

REPEATS = 11


def _run_pair(row, make_flow, make_torch, check=None):
    """Times flow and torch alternately (one call each per round, REPEATS rounds after a
    warm-up) and keeps each side's median: on a shared machine the load drifts, and alternating
    exposes both libraries to the same drift. A flow failure is reported as n/a."""
    t_fn = make_torch()
    try:
        f_fn = make_flow()
        if check is not None:
            check()
    except Exception as e:  # noqa: BLE001 - report, don't abort
        row.note = f"{type(e).__name__}: {str(e)[:60]}"
        f_fn = None
    f_times, t_times = [], []
    for fn in (f_fn, t_fn):
        if fn is not None:
            fn()
    for _ in range(REPEATS):
        for fn, times in ((f_fn, f_times), (t_fn, t_times)):
            if fn is None:
                continue
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    row.torch_t = statistics.median(t_times)
    row.flow_t = statistics.median(f_times) if f_times else None
    return row


def _check_moments(t, mean, std):
    a = np.asarray(t.float().numpy() if hasattr(t, "float") else t, dtype=np.float64)[:1_000_000]
    assert abs(a.mean() - mean) < 0.01 * max(std, 1) and abs(a.std() - std) < 0.01 * max(std, 1), (
        f"moments {a.mean():.4f}, {a.std():.4f}; expected {mean}, {std}"
    )


def _row(name, n, flow_fn, torch_fn, mean, std):
    row = Row(f"{name}, {n / 1e6:g}M float32", "throughput", 4 * n, "GB/s")
    return _run_pair(
        row, lambda: flow_fn, lambda: torch_fn, check=lambda: _check_moments(flow_fn(), mean, std)
    )


def bench_rand(n):
    return _row("rand", n, lambda: flow.rand(n), lambda: torch.rand(n), 0.5, (1 / 12) ** 0.5)


def bench_randn(n):
    return _row("randn", n, lambda: flow.randn(n), lambda: torch.randn(n), 0.0, 1.0)


def bench_uniform_(n):
    fx, tx = flow.empty(n), torch.empty(n)
    return _row(
        "uniform_(-1, 1)",
        n,
        lambda: fx.uniform_(-1, 1),
        lambda: tx.uniform_(-1, 1),
        0.0,
        (4 / 12) ** 0.5,
    )


def bench_normal_(n):
    fx, tx = flow.empty(n), torch.empty(n)
    return _row("normal_(0, 2)", n, lambda: fx.normal_(0, 2), lambda: tx.normal_(0, 2), 0.0, 2.0)


def bench_bernoulli_(n):
    fx, tx = flow.empty(n), torch.empty(n)
    return _row(
        "bernoulli_(0.3)",
        n,
        lambda: fx.bernoulli_(0.3),
        lambda: tx.bernoulli_(0.3),
        0.3,
        (0.21) ** 0.5,
    )


def bench_bernoulli(n):
    fp, tp = flow.full((n,), 0.3), torch.full((n,), 0.3)
    return _row(
        "bernoulli(p tensor)",
        n,
        lambda: flow.bernoulli(fp),
        lambda: torch.bernoulli(tp),
        0.3,
        (0.21) ** 0.5,
    )


def bench_randint(n):
    return _row(
        "randint(0, 100)",
        n,
        lambda: flow.randint(0, 100, (n,), dtype=flow.float32),
        lambda: torch.randint(0, 100, (n,), dtype=torch.float32),
        49.5,
        (9999 / 12) ** 0.5,
    )


def bench_standard_gamma(n):
    """Gamma(2.5, 1) draws (Marsaglia-Tsang in both), a sixteenth of n: the rejection loop costs
    far more per element than the fills above."""
    m = n // 16
    fa, ta = flow.full((m,), 2.5), torch.full((m,), 2.5)
    return _row("_standard_gamma(2.5)", m, lambda: flow._standard_gamma(fa), lambda: torch._standard_gamma(ta),
                2.5, 2.5 ** 0.5)


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--n", type=int, default=16 * 1024 * 1024, help="elements (default 16M)")
    args = p.parse_args()
    threads = flow.get_num_threads()
    torch.set_num_threads(threads)
    print(
        f"{FLOW_NAME} vs torch {torch.__version__}; threads: flow={flow.get_num_threads()} "
        f"torch={torch.get_num_threads()}; cpus={os.cpu_count()}"
    )
    header = (
        f"{'benchmark':44s} {'flow':>12s} {'torch':>12s} {'ratio':>7s}  "
        f"{'flow rate':>14s} {'torch rate':>14s}"
    )
    print(header)
    print("-" * len(header))
    t_start = time.perf_counter()
    for fn in (
        bench_rand,
        bench_randn,
        bench_uniform_,
        bench_normal_,
        bench_bernoulli_,
        bench_bernoulli,
        bench_randint,
        bench_standard_gamma,
    ):
        row = fn(args.n)
        r = row.ratio()
        ratio = f"{r:7.2f}" if r is not None else "    n/a"
        print(
            f"{row.name:44s} {_fmt_time(row.flow_t):>12s} {_fmt_time(row.torch_t):>12s} {ratio}  "
            f"{row.rate(row.flow_t):>14s} {row.rate(row.torch_t):>14s}  (higher is better)"
            + (f"  [{row.note}]" if row.note else "")
        )
        sys.stdout.flush()
    print(f"total {time.perf_counter() - t_start:.1f} s")


if __name__ == "__main__":
    main()
