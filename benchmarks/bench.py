"""Micro-benchmarks of flow against PyTorch, measured in the same process.

    .venv/bin/python benchmarks/bench.py            # real oneflow
    OF_TEST_SHIM=torch .venv/bin/python benchmarks/bench.py   # harness check: flow = torch

Both libraries run with the same thread count (torch is set to flow's).
Each number is the median over several repeats of a timed loop, after a
warm-up; loop lengths are calibrated so each repeat takes ~0.15 s.

Columns: time per call for each library, and a ratio:
  * overhead rows: flow time / torch time   (lower is better, 1.0 = parity)
  * throughput rows: flow rate / torch rate (higher is better, 1.0 = parity)
Autograd rows print "n/a" until flow supports requires_grad/backward.
The whole run takes well under a minute.
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))

if os.environ.get("OF_TEST_SHIM") == "torch":
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    import torch_shim

    flow = torch_shim.make_shim()
    FLOW_NAME = "flow(shim=torch)"
else:
    import oneflow as flow

    FLOW_NAME = "oneflow"


def _median_time(fn, target=0.15, repeats=5, min_number=1):
    """Median seconds per call of fn() over `repeats` loops of calibrated length."""
    fn()  # warm-up (allocator caches, lazy init, BLAS thread pool start)
    fn()
    number = min_number
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        if dt >= 0.02 or number >= 1 << 22:
            break
        number *= 4
    number = max(min_number, int(number * target / max(dt, 1e-9)))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def _fmt_time(s):
    if s is None:
        return "n/a"
    if s < 1e-3:
        return f"{s * 1e6:8.2f} us"
    return f"{s * 1e3:8.2f} ms"


class Row:
    def __init__(self, name, kind, unit_work=None, unit=""):
        self.name = name
        self.kind = kind  # "overhead" (lower ratio better) or "throughput" (higher better)
        self.unit_work = unit_work  # work per call, for a rate column (bytes, flops)
        self.unit = unit
        self.flow_t = None
        self.torch_t = None
        self.note = ""

    def ratio(self):
        if self.flow_t is None or self.torch_t is None:
            return None
        if self.kind == "overhead":
            return self.flow_t / self.torch_t
        return self.torch_t / self.flow_t  # = flow rate / torch rate

    def rate(self, t):
        if t is None or not self.unit_work:
            return ""
        return f"{self.unit_work / t / 1e9:7.2f} {self.unit}"


def _run_pair(row, make_flow, make_torch, check=None):
    """make_* return a zero-argument callable to time. A flow failure is
    reported as n/a (with the reason) instead of aborting the table."""
    row.torch_t = _median_time(make_torch())
    try:
        f = make_flow()
        if check is not None:
            check()
        row.flow_t = _median_time(f)
    except Exception as e:  # noqa: BLE001 - report, don't abort
        row.note = f"{type(e).__name__}: {str(e)[:60]}"
    return row


def print_table(benches, groups, width=48, extra=""):
    """Runs the row functions of `benches` (group name -> list of functions returning a Row) for
    `groups` and prints the flow / torch / ratio table the nn benchmarks share."""
    import sys
    print(f"{FLOW_NAME} vs torch {torch.__version__}; threads: flow={flow.get_num_threads()} "
          f"torch={torch.get_num_threads()}; cpus={os.cpu_count()}" + extra)
    header = f"{'benchmark':{width}s} {'flow':>12s} {'torch':>12s} {'ratio':>7s}"
    print(header)
    print("-" * len(header))
    t0 = time.perf_counter()
    for name in groups or list(benches):
        for fn in benches[name]:
            row = fn()
            r = row.ratio()
            ratio = f"{r:7.2f}" if r is not None else "    n/a"
            print(f"{row.name:{width}s} {_fmt_time(row.flow_t):>12s} {_fmt_time(row.torch_t):>12s} {ratio}"
                  + (f"  [{row.note}]" if row.note else ""))
            sys.stdout.flush()
    print(f"total {time.perf_counter() - t0:.1f} s  (ratio: flow throughput / torch throughput)")


def _close(a, b, rtol):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    # A wrong result would make the timing meaningless.
    assert np.allclose(a, b, rtol=rtol, atol=rtol), "flow and torch disagree"


def bench_eager_overhead():
    row = Row("c = a + b, 1 element (eager overhead)", "overhead")
    fa, fb = flow.ones(1), flow.ones(1)
    ta, tb = torch.ones(1), torch.ones(1)
    return _run_pair(row, lambda: (lambda: fa + fb), lambda: (lambda: ta + tb),
                     check=lambda: _close((fa + fb).numpy(), (ta + tb).numpy(), 0))


def bench_add_large(n):
    row = Row(f"add, {n / 1e6:g}M float32", "throughput", 3 * 4 * n, "GB/s")
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    fa, fb = flow.tensor(x), flow.tensor(x[::-1].copy())
    ta, tb = torch.tensor(x), torch.tensor(x[::-1].copy())
    return _run_pair(row, lambda: (lambda: fa + fb), lambda: (lambda: ta + tb),
                     check=lambda: _close((fa + fb).numpy()[:1000], (ta + tb).numpy()[:1000], 1e-6))


def bench_sum_large(n):
    row = Row(f"sum, {n / 1e6:g}M float32", "throughput", 4 * n, "GB/s")
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    fa, ta = flow.tensor(x), torch.tensor(x)
    return _run_pair(row, lambda: (lambda: fa.sum()), lambda: (lambda: ta.sum()),
                     check=lambda: _close(fa.sum().item(), ta.sum().item(), 1e-4))


def bench_matmul(n):
    row = Row(f"matmul {n}x{n}x{n} float32", "throughput", 2 * n ** 3, "GFLOP/s")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    fa, fb, ta, tb = flow.tensor(a), flow.tensor(b), torch.tensor(a), torch.tensor(b)
    return _run_pair(row, lambda: (lambda: fa @ fb), lambda: (lambda: ta @ tb),
                     check=lambda: _close((fa @ fb).numpy()[:4, :4], (ta @ tb).numpy()[:4, :4], 1e-3))


def bench_autograd_mul():
    row = Row("c = a * b, requires_grad, 1 element", "overhead")

    def make(lib):
        a = lib.ones(1, requires_grad=True)
        b = lib.ones(1, requires_grad=True)
        c = a * b
        if not getattr(c, "requires_grad", False):
            raise NotImplementedError("result does not require grad")
        return lambda: a * b

    return _run_pair(row, lambda: make(flow), lambda: make(torch))


def bench_backward_chain(n_ops=50, size=1000):
    row = Row(f"{n_ops}-op chain forward+backward, {size} float32", "overhead")

    def make(lib):
        x = lib.ones(size, requires_grad=True)

        def step():
            y = x
            for i in range(n_ops):
                # a mix of pointwise ops, as a small model's elementwise tail would be
                y = y * 1.001 if i % 3 == 0 else (y + 0.5 if i % 3 == 1 else y.sin())
            y.sum().backward()
            x.grad = None

        step()  # raises here when backward is not supported
        return step

    def check():
        fx = flow.ones(size, requires_grad=True)
        tx = torch.ones(size, requires_grad=True)
        for x in (fx, tx):
            y = x
            for i in range(n_ops):
                y = y * 1.001 if i % 3 == 0 else (y + 0.5 if i % 3 == 1 else y.sin())
            y.sum().backward()
        _close(fx.grad.numpy()[:10], tx.grad.numpy()[:10], 1e-4)

    return _run_pair(row, lambda: make(flow), lambda: make(torch), check=check)


def bench_backward_only(n_ops=50, size=16):
    row = Row(f"{n_ops}-op chain backward only, {size} float32", "overhead")

    def make(lib):
        x = lib.ones(size, requires_grad=True)
        y = x
        for i in range(n_ops):
            y = y * 1.001 if i % 3 == 0 else (y + 0.5 if i % 3 == 1 else y.sin())
        loss = y.sum()

        def step():  # the same recorded graph, kept by retain_graph
            loss.backward(retain_graph=True)

        step()
        return step

    return _run_pair(row, lambda: make(flow), lambda: make(torch))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--large", type=int, default=10_000_000, help="elements for add/sum (default 10M)")
    args = p.parse_args()

    threads = flow.get_num_threads()
    torch.set_num_threads(threads)
    print(f"{FLOW_NAME} vs torch {torch.__version__}; threads: flow={flow.get_num_threads()} "
          f"torch={torch.get_num_threads()}; cpus={os.cpu_count()}")

    t_start = time.perf_counter()
    sections = [
        ("eager", [bench_eager_overhead]),
        ("throughput", [lambda: bench_add_large(args.large), lambda: bench_sum_large(args.large),
                        lambda: bench_matmul(256), lambda: bench_matmul(1024)]),
        ("autograd", [bench_autograd_mul, bench_backward_chain, bench_backward_only]),
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
