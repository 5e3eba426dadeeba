"""Rows timed with each library alone in its own process, run one after the other.

    .venv/bin/python benchmarks/bench_separate.py            # every case
    .venv/bin/python benchmarks/bench_separate.py mha fft    # cases whose name contains these

The other benchmarks time flow and torch alternately in one process. That is fair for most
kernels. But both libraries run OpenMP thread pools (torch ships its own libgomp), and after a
call a pool's threads spin for a while: on the 2-core machines they take CPU from the other
library's next call. Multi-threaded FFTW plans and attention backward passes show this as noise
of +-20% (docs/decisions.md). Here each library runs in a long-lived process of its own; the
parent asks them in turn for a few timed calls (a pause between turns lets the idle pool sleep),
over many rounds, so both see the same drift of a shared machine's speed. The ratio is the median
of the rounds' torch time / flow time (higher is better, 1.0 = parity).
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
    "reduce sum 10M float32": (
        "x = L.tensor(np.random.default_rng(0).standard_normal(10_000_000).astype(np.float32))",
        "x.sum()"),
    "reduce sum(dim=0) 1000x1000 float32": (
        "x = L.tensor(np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32))",
        "x.sum(dim=0)"),
    "reduce sum(dim=1) 1000x1000 float32": (
        "x = L.tensor(np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32))",
        "x.sum(dim=1)"),
    "reduce mean(dim=(0, 2)) 64x256x64 float32": (
        "x = L.tensor(np.random.default_rng(0).standard_normal((64, 256, 64)).astype(np.float32))",
        "x.mean(dim=(0, 2))"),
    "reduce amax(dim=0) 1000x1000 float32": (
        "x = L.tensor(np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32))",
        "x.amax(dim=0)"),
    "reduce prod(dim=1) 1000x1000 float32": (
        "x = L.tensor(np.random.default_rng(0).uniform(0.99, 1.01, (1000, 1000)).astype(np.float32))",
        "x.prod(dim=1)"),
    "reduce prod(dim=0) 1000x1000 float32": (
        "x = L.tensor(np.random.default_rng(0).uniform(0.99, 1.01, (1000, 1000)).astype(np.float32))",
        "x.prod(dim=0)"),
    "matmul 256x256x256 float32": (
        "a = L.tensor(np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32))",
        "a @ a"),
    "lstm seq 32 b64 256->256 forward": (
        "L.manual_seed(0); m = L.nn.LSTM(256, 256)\n"
        "x = L.tensor(np.random.default_rng(0).standard_normal((32, 64, 256)).astype(np.float32))",
        "m(x)"),
    "reduce argmax(dim=1) 1000x1000 float32": (
        "x = L.tensor(np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32))",
        "x.argmax(dim=1)"),
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
print("ready", flush=True)
for line in sys.stdin:  # one round per line: run the op n times, answer the median time
    times = []
    for _ in range(int(line)):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    print(statistics.median(times), flush=True)
"""

ROUNDS = 24  # rounds per case
CALLS = 5  # calls per library per round
PAUSE = 0.02  # seconds between hand-overs: an idle OpenMP pool stops spinning well before this


class Worker:
    """One library in a process of its own, timing the case when asked."""

    def __init__(self, lib, setup, stmt):
        self.lib = lib
        code = CHILD.format(setup=setup, stmt=stmt)
        self.p = subprocess.Popen([sys.executable, "-c", code, lib], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._read()

    def _read(self):
        line = self.p.stdout.readline()
        if not line:
            err = self.p.stderr.read().strip().splitlines()
            raise RuntimeError(f"{self.lib}: {err[-1] if err else 'failed'}")
        return line

    def time(self, n):
        self.p.stdin.write(f"{n}\n")
        self.p.stdin.flush()
        return float(self._read())

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def measure(setup, stmt):
    """Median flow and torch times and the median of the per-round ratios (torch / flow).

    The machines we run on are shared: their speed drifts by up to 2x over seconds. Timing each
    library for a few calls in turn, many times, lets both see the same drift; the per-round
    ratio cancels it, and its median discards the rounds a burst hit one side of."""
    workers = [Worker("flow", setup, stmt), Worker("torch", setup, stmt)]
    tf, tt, ratios = [], [], []
    try:
        for r in range(ROUNDS):
            got = {}
            for w in (workers if r % 2 == 0 else workers[::-1]):
                time.sleep(PAUSE)
                got[w.lib] = w.time(CALLS)
            tf.append(got["flow"])
            tt.append(got["torch"])
            ratios.append(got["torch"] / got["flow"])
    finally:
        for w in workers:
            w.close()
    return statistics.median(tf), statistics.median(tt), statistics.median(ratios)


def main():
    wanted = sys.argv[1:]
    print(f"{'benchmark':34s} {'flow':>10s} {'torch':>10s} {'ratio':>7s}  (own processes, interleaved; 2 threads)")
    t0 = time.perf_counter()
    for name, (setup, stmt) in CASES.items():
        if wanted and not any(w in name for w in wanted):
            continue
        tf, tt, ratio = measure(setup, stmt)
        print(f"{name:34s} {tf * 1e3:8.2f}ms {tt * 1e3:8.2f}ms {ratio:7.2f}")
        sys.stdout.flush()
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
