"""FFT throughput of flow (FFTW, src/kernels/fft.cpp) against PyTorch, measured in one process.

    .venv/bin/python benchmarks/bench_fft.py
    ONEFLOW_FFTW_PLANNER=measure .venv/bin/python benchmarks/bench_fft.py

Rows: a 1-D complex64 fft of 2^20 points, 2-D rfft2 and fft2 of 1024x1024 (float32 /
complex64), and a batched 1-D rfft. The ratio is flow rate / torch rate (higher is better, 1.0 =
parity); rates count 5 N log2 N flops per complex transform (2.5 for real ones), the usual FFT
convention. Each row checks flow's result against torch's first. The two libraries are timed
alternately (median of 11 calls after a warm-up, which also builds flow's cached FFTW plan),
with the same thread count.
"""

import math
import os
import statistics
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench import FLOW_NAME, Row, _fmt_time, flow  # noqa: E402

REPEATS = 11


def _pair(row, f_fn, t_fn, check):
    try:
        check()
    except Exception as e:  # noqa: BLE001 - report, don't abort
        row.note = f"{type(e).__name__}: {str(e)[:60]}"
        f_fn = None
    for fn in (f_fn, t_fn):
        if fn is not None:
            fn()
    f_times, t_times = [], []
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


def _close(f, t):
    a, b = f.numpy(), t.numpy()
    scale = np.abs(b).max()
    err = np.abs(a - b).max() / scale
    assert err < 1e-5, f"flow and torch disagree (max relative error {err:.2e})"


def _row(name, flops, f_call, t_call):
    row = Row(name, "throughput", flops, "GFLOP/s")
    return _pair(row, f_call, t_call, lambda: _close(f_call(), t_call()))


def bench_fft_1d(n=1 << 20):
    a = (np.random.default_rng(0).standard_normal(n) + 1j * np.random.default_rng(1).standard_normal(n)).astype(np.complex64)
    f, t = flow.tensor(a), torch.tensor(a)
    return _row(f"fft, 2^{int(math.log2(n))} complex64", 5 * n * math.log2(n),
                lambda: flow.fft.fft(f), lambda: torch.fft.fft(t))


def bench_rfft2(n=1024):
    a = np.random.default_rng(2).standard_normal((n, n)).astype(np.float32)
    f, t = flow.tensor(a), torch.tensor(a)
    return _row(f"rfft2, {n}x{n} float32", 2.5 * n * n * math.log2(n * n),
                lambda: flow.fft.rfft2(f), lambda: torch.fft.rfft2(t))


def bench_fft2(n=1024):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64)
    f, t = flow.tensor(a), torch.tensor(a)
    return _row(f"fft2, {n}x{n} complex64", 5 * n * n * math.log2(n * n),
                lambda: flow.fft.fft2(f), lambda: torch.fft.fft2(t))


def bench_rfft_batched(batch=256, n=4096):
    a = np.random.default_rng(4).standard_normal((batch, n)).astype(np.float32)
    f, t = flow.tensor(a), torch.tensor(a)
    return _row(f"rfft, {batch}x{n} float32 (batched)", 2.5 * batch * n * math.log2(n),
                lambda: flow.fft.rfft(f), lambda: torch.fft.rfft(t))


def main():
    threads = flow.get_num_threads()
    torch.set_num_threads(threads)
    print(f"{FLOW_NAME} vs torch {torch.__version__}; threads: flow={flow.get_num_threads()} "
          f"torch={torch.get_num_threads()}; cpus={os.cpu_count()}; "
          f"planner={os.environ.get('ONEFLOW_FFTW_PLANNER', 'auto')}")  # src/kernels/fft.cpp's default
    header = (f"{'benchmark':40s} {'flow':>12s} {'torch':>12s} {'ratio':>7s}  "
              f"{'flow rate':>16s} {'torch rate':>16s}")
    print(header)
    print("-" * len(header))
    for fn in (bench_fft_1d, bench_rfft2, bench_fft2, bench_rfft_batched):
        row = fn()
        r = row.ratio()
        ratio = f"{r:7.2f}" if r is not None else "    n/a"
        print(f"{row.name:40s} {_fmt_time(row.flow_t):>12s} {_fmt_time(row.torch_t):>12s} {ratio}  "
              f"{row.rate(row.flow_t):>16s} {row.rate(row.torch_t):>16s}"
              + (f"  [{row.note}]" if row.note else ""))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
