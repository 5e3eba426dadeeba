"""Benchmarks of the nn functional ops (activations, losses, dropout, embedding, resampling):
flow against PyTorch in the same process, with benchmarks/bench.py's harness (median of
calibrated loops after a warm-up, same thread count).

    .venv/bin/python benchmarks/bench_nn_func.py [--only NAME]

The ratio column is flow throughput / torch throughput (higher is better, 1.0 = parity).
"""

import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import Row, print_table, _close, _run_pair, flow  # noqa: E402

N16M = 16 * 1024 * 1024


def _pair(lib, arr, grad=False):
    t = lib.tensor(arr)
    return t.requires_grad_(True) if grad else t


def bench_activation(name, backward):
    what = "forward+backward" if backward else "forward"
    row = Row(f"{name} {what}, 16M float32", "throughput", 4 * N16M * (4 if backward else 2), "GB/s")
    x = np.random.default_rng(0).standard_normal(N16M, dtype=np.float32) * 3
    g = np.random.default_rng(1).standard_normal(N16M, dtype=np.float32)

    def make(lib):
        F = lib.nn.functional
        f = getattr(F, name)
        xt, gt = _pair(lib, x, backward), lib.tensor(g)
        if not backward:
            return lambda: f(xt)
        return lambda: lib.autograd.grad(f(xt), xt, gt)

    def check():
        fo, to = getattr(flow.nn.functional, name)(flow.tensor(x[:4096])), getattr(
            torch.nn.functional, name)(torch.tensor(x[:4096]))
        _close(fo.numpy(), to.numpy(), 1e-5)

    return _run_pair(row, lambda: make(flow), lambda: make(torch), check=check)


def bench_cross_entropy(n=4096, c=1000):
    row = Row(f"cross_entropy fwd+bwd, {n}x{c} logits", "throughput", 4 * n * c * 2, "GB/s")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n, c), dtype=np.float32)
    y = rng.integers(0, c, size=n)

    def make(lib):
        xt, yt = _pair(lib, x, True), lib.tensor(y)
        return lambda: lib.autograd.grad(lib.nn.functional.cross_entropy(xt, yt), xt)

    def check():
        _close(flow.nn.functional.cross_entropy(flow.tensor(x), flow.tensor(y)).item(),
               torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(y)).item(), 1e-5)

    return _run_pair(row, lambda: make(flow), lambda: make(torch), check=check)


def bench_embedding(rows=50000, dim=256, n=65536):
    row = Row(f"embedding fwd+bwd, {rows}x{dim}, {n // 1024}k idx", "throughput",
              4 * dim * n * 2, "GB/s")
    rng = np.random.default_rng(3)
    w = rng.standard_normal((rows, dim), dtype=np.float32)
    idx = rng.integers(0, rows, size=n)
    g = rng.standard_normal((n, dim), dtype=np.float32)

    def make(lib):
        wt, it, gt = _pair(lib, w, True), lib.tensor(idx), lib.tensor(g)
        return lambda: lib.autograd.grad(lib.nn.functional.embedding(it, wt), wt, gt)

    def check():
        _close(flow.nn.functional.embedding(flow.tensor(idx[:100]), flow.tensor(w)).numpy(),
               torch.nn.functional.embedding(torch.tensor(idx[:100]), torch.tensor(w)).numpy(), 0)

    return _run_pair(row, lambda: make(flow), lambda: make(torch), check=check)


def bench_interpolate(backward):
    shape = (16, 64, 56, 56)
    what = "fwd+bwd" if backward else "forward"
    row = Row(f"interpolate bilinear x2 {what}, 16x64x56x56", "throughput",
              4 * int(np.prod(shape)) * 5, "GB/s")
    x = np.random.default_rng(4).standard_normal(shape, dtype=np.float32)

    def make(lib):
        xt = _pair(lib, x, backward)
        f = lambda: lib.nn.functional.interpolate(xt, scale_factor=2, mode="bilinear",  # noqa: E731
                                                  align_corners=False)
        if not backward:
            return f
        return lambda: lib.autograd.grad(f().sum(), xt)

    def check():
        a = flow.nn.functional.interpolate(flow.tensor(x[:1]), scale_factor=2, mode="bilinear")
        b = torch.nn.functional.interpolate(torch.tensor(x[:1]), scale_factor=2, mode="bilinear")
        _close(a.numpy(), b.numpy(), 1e-5)

    return _run_pair(row, lambda: make(flow), lambda: make(torch), check=check)


def bench_dropout(backward):
    what = "forward+backward" if backward else "forward"
    row = Row(f"dropout p=0.5 {what}, 16M float32", "throughput", 4 * N16M * (2 if not backward else 4),
              "GB/s")
    x = np.random.default_rng(5).standard_normal(N16M, dtype=np.float32)
    g = np.ones(N16M, dtype=np.float32)

    def make(lib):
        xt, gt = _pair(lib, x, backward), lib.tensor(g)
        f = lambda: lib.nn.functional.dropout(xt, 0.5, training=True)  # noqa: E731
        if not backward:
            return f
        return lambda: lib.autograd.grad(f(), xt, gt)

    return _run_pair(row, lambda: make(flow), lambda: make(torch))


def bench_linear_cross_entropy(chunked, n=2048, d=128, c=16000):
    """The vocabulary head of a small LM, fwd+bwd of input and weight; chunked: options with
    torch's default heuristic (Note [Chunked linear cross entropy])."""
    what = "chunked" if chunked else "reference"
    row = Row(f"linear_cross_entropy {what}, {n}x{d} -> {c}", "throughput", 2 * 3 * n * d * c, "GFLOP/s")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, d), dtype=np.float32)
    w = rng.standard_normal((c, d), dtype=np.float32) * 0.05
    y = rng.integers(0, c, size=n)

    def make(lib):
        xt, wt, yt = _pair(lib, x, True), _pair(lib, w, True), lib.tensor(y)
        opts = lib.nn.LinearCrossEntropyOptions() if chunked else None
        return lambda: lib.autograd.grad(lib.nn.functional.linear_cross_entropy(xt, wt, yt, options=opts), [xt, wt])

    def check():
        f = flow.nn.functional.linear_cross_entropy(flow.tensor(x[:64]), flow.tensor(w), flow.tensor(y[:64]))
        t = torch.nn.functional.linear_cross_entropy(torch.tensor(x[:64]), torch.tensor(w), torch.tensor(y[:64]))
        _close(f.item(), t.item(), 1e-5)

    return _run_pair(row, lambda: make(flow), lambda: make(torch), check=check)


BENCHES = {
    "gelu": [lambda: bench_activation("gelu", False), lambda: bench_activation("gelu", True)],
    "relu": [lambda: bench_activation("relu", False), lambda: bench_activation("relu", True)],
    "silu": [lambda: bench_activation("silu", False), lambda: bench_activation("silu", True)],
    "cross_entropy": [bench_cross_entropy],
    "linear_cross_entropy": [lambda: bench_linear_cross_entropy(False), lambda: bench_linear_cross_entropy(True)],
    "embedding": [bench_embedding],
    "interpolate": [lambda: bench_interpolate(False), lambda: bench_interpolate(True)],
    "dropout": [lambda: bench_dropout(False), lambda: bench_dropout(True)],
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", action="append", choices=sorted(BENCHES), help="run only these groups")
    args = p.parse_args()
    torch.set_num_threads(flow.get_num_threads())
    print_table(BENCHES, args.only, width=48)


if __name__ == "__main__":
    main()
