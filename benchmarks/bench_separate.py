"""Rows timed with each library alone in its own process, run one after the other.

    .venv/bin/python benchmarks/bench_separate.py            # every case
    .venv/bin/python benchmarks/bench_separate.py mha fft    # cases whose name contains these

The other benchmarks time flow and torch alternately in one process. That is fair for most
kernels. But both libraries run OpenMP thread pools (torch ships its own libgomp), and after a
call a pool's threads spin for a while: on the 2-core machines they take CPU from the other
library's next call. Multi-threaded FFTW plans and attention backward passes show this as noise
of +-20% (docs/decisions.md). Here each library runs in a process of its own and keeps the median
of its calls; the ratio is torch time / flow time (higher is better, 1.0 = parity).
"""

import statistics
import subprocess
import sys
import time

CASES = {
    # name: (setup code with `L` the library, the timed statement)
    "mha 8x128x256 h8 forward": (
        "L.manual_seed(0); m = L.nn.MultiheadAttention(256, 8)\n"
        "x = L.tensor(np.random.default_rng(0).standard_normal((128, 8, 256)).astype(np.float32), requires_grad=True)",
        "m(x, x, x)"),
    "mha 8x128x256 h8 fwd+bwd": (
        "L.manual_seed(0); m = L.nn.MultiheadAttention(256, 8)\n"
        "x = L.tensor(np.random.default_rng(0).standard_normal((128, 8, 256)).astype(np.float32), requires_grad=True)",
        "m(x, x, x)[0].sum().backward()"),
    "fft 2^20 complex64": (
        "rng = np.random.default_rng(0)\n"
        "x = L.tensor((rng.standard_normal(1 << 20) + 1j * rng.standard_normal(1 << 20)).astype(np.complex64))",
        "L.fft.fft(x)"),
    "fft rfft2 1024x1024 float32": (
        "x = L.tensor(np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32))",
        "L.fft.rfft2(x)"),
    "fft fft2 1024x1024 complex64": (
        "rng = np.random.default_rng(0)\n"
        "x = L.tensor((rng.standard_normal((1024, 1024)) + 1j * rng.standard_normal((1024, 1024))).astype(np.complex64))",
        "L.fft.fft2(x)"),
    "fft rfft 256x4096 float32": (
        "x = L.tensor(np.random.default_rng(0).standard_normal((256, 4096)).astype(np.float32))",
        "L.fft.rfft(x)"),
}

CHILD = """
import statistics, sys, time
import numpy as np
if sys.argv[1] == "flow":
    import oneflow as L
else:
    import torch as L
L.set_num_threads(2)
{setup}
f = lambda: {stmt}
for _ in range(5):
    f()
times = []
for _ in range(31):
    t0 = time.perf_counter()
    f()
    times.append(time.perf_counter() - t0)
print(statistics.median(times))
"""


def run(lib, setup, stmt):
    code = CHILD.format(setup=setup, stmt=stmt)
    r = subprocess.run([sys.executable, "-c", code, lib], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"{lib}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'failed'}")
    return float(r.stdout.strip().splitlines()[-1])


def main():
    wanted = sys.argv[1:]
    print(f"{'benchmark':34s} {'flow':>10s} {'torch':>10s} {'ratio':>7s}  (each alone in its process, 2 threads)")
    t0 = time.perf_counter()
    for name, (setup, stmt) in CASES.items():
        if wanted and not any(w in name for w in wanted):
            continue
        # Two processes each, alternating; the mean of their medians counts.
        tf, tt = [], []
        for _ in range(2):
            tf.append(run("flow", setup, stmt))
            tt.append(run("torch", setup, stmt))
        tf, tt = statistics.mean(tf), statistics.mean(tt)
        print(f"{name:34s} {tf * 1e3:8.2f}ms {tt * 1e3:8.2f}ms {tt / tf:7.2f}")
        sys.stdout.flush()
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
