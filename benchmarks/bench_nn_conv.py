"""Convolution, pooling and normalisation: flow against PyTorch in the same process.

    .venv/bin/python benchmarks/bench_nn_conv.py                 # the table of the issue
    .venv/bin/python benchmarks/bench_nn_conv.py --only conv     # rows whose name contains "conv"
    .venv/bin/python benchmarks/bench_nn_conv.py --compare-impls # conv rows per implementation
                                                                 # (ONEFLOW_CONV_IMPL, docs/env.md)

Same thread count for both (torch is set to flow's). The machines are shared, so the two
libraries are timed in alternation, several rounds, and each keeps its median: a load spike
then hits both. Ratio = flow throughput / torch throughput (higher is better, 1.0 = parity).
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import FLOW_NAME, _fmt_time, flow  # noqa: E402

F = flow.nn.functional
TF = torch.nn.functional


def _calibrate(fn, target):
    fn()
    fn()
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    return max(1, int(target / max(dt, 1e-9)))


def _interleaved(f_flow, f_torch, rounds, target=0.25):
    """Median seconds per call of each, timed in alternating loops."""
    nf, nt = _calibrate(f_flow, target), _calibrate(f_torch, target)
    tf, tt = [], []
    for _ in range(rounds):
        for fn, n, out in ((f_torch, nt, tt), (f_flow, nf, tf)):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            out.append((time.perf_counter() - t0) / n)
    return statistics.median(tf), statistics.median(tt)


def _check(a, b, tol, what):
    a = a.numpy() if hasattr(a, "numpy") and not isinstance(a, torch.Tensor) else a
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
    err = np.max(np.abs(np.asarray(a, np.complex128) - np.asarray(b, np.complex128)) / (1 + np.abs(b)))
    # A wrong result would make the timing meaningless.
    assert err < tol, f"{what}: flow and torch disagree (max rel err {err:.2e})"


class Case:
    """One benchmark: `setup(lib)` returns a zero-argument step; `check` compares one run."""

    def __init__(self, name, setup, flops=0.0):
        self.name, self.setup, self.flops = name, setup, flops


def _data(shape, seed, scale=1.0, complex_=False):
    rng = np.random.default_rng(seed)
    if complex_:
        return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * scale).astype(np.complex64)
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def conv_case(name, n, c, hw, o, k, groups=1, stride=1, backward=False, complex_=False):
    pad = k // 2
    x, w = _data((n, c, hw, hw), 1, complex_=complex_), _data((o, c // groups, k, k), 2, 0.1, complex_)
    b = _data((o,), 3, complex_=complex_)
    out_hw = (hw + 2 * pad - k) // stride + 1
    # (a complex multiply-add is four real ones)
    flops = 2.0 * n * o * out_hw * out_hw * (c // groups) * k * k * (3 if backward else 1) * (4 if complex_ else 1)

    def setup(lib):
        fn = F if lib is flow else TF
        xt, wt, bt = (lib.tensor(a, requires_grad=backward) for a in (x, w, b))
        if not backward:
            return lambda: fn.conv2d(xt, wt, bt, stride, pad, 1, groups), lambda: fn.conv2d(xt, wt, bt, stride, pad, 1, groups)
        g = lib.tensor(_data((n, o, out_hw, out_hw), 4, complex_=complex_))

        def step():
            xt.grad = wt.grad = bt.grad = None
            fn.conv2d(xt, wt, bt, stride, pad, 1, groups).backward(g)
            return xt.grad

        return step, step

    return Case(name, setup, flops)


def pool_case(name, backward=False):
    x = _data((16, 64, 112, 112), 5)

    def setup(lib):
        fn = F if lib is flow else TF
        xt = lib.tensor(x, requires_grad=backward)
        if not backward:
            f = lambda: fn.max_pool2d(xt, 3, 2, 1)  # noqa: E731
            return f, f
        g = lib.tensor(_data((16, 64, 56, 56), 6))

        def step():
            xt.grad = None
            fn.max_pool2d(xt, 3, 2, 1).backward(g)
            return xt.grad

        return step, step

    return Case(name, setup)


def batch_norm_case(name):
    x = _data((16, 64, 56, 56), 7)

    def setup(lib):
        fn = F if lib is flow else TF
        xt = lib.tensor(x, requires_grad=True)
        w, b = lib.ones(64, requires_grad=True), lib.zeros(64, requires_grad=True)
        rm, rv = lib.zeros(64), lib.ones(64)
        g = lib.tensor(_data((16, 64, 56, 56), 8))

        def step():
            xt.grad = w.grad = b.grad = None
            fn.batch_norm(xt, rm, rv, w, b, True).backward(g)
            return xt.grad

        return step, step

    return Case(name, setup)


def layer_norm_case(name):
    x = _data((16, 512, 768), 9)

    def setup(lib):
        fn = F if lib is flow else TF
        xt = lib.tensor(x, requires_grad=True)
        w, b = lib.ones(768, requires_grad=True), lib.zeros(768, requires_grad=True)
        g = lib.tensor(_data((16, 512, 768), 10))

        def step():
            xt.grad = w.grad = b.grad = None
            fn.layer_norm(xt, (768,), w, b).backward(g)
            return xt.grad

        return step, step

    return Case(name, setup)


CASES = [
    conv_case("conv2d 3x3 64->64, 16x64x56x56, fwd", 16, 64, 56, 64, 3),
    conv_case("conv2d 3x3 64->64, 16x64x56x56, fwd+bwd", 16, 64, 56, 64, 3, backward=True),
    conv_case("conv2d 1x1 64->256, 16x64x56x56, fwd", 16, 64, 56, 256, 1),
    conv_case("conv2d 1x1 64->256, 16x64x56x56, fwd+bwd", 16, 64, 56, 256, 1, backward=True),
    conv_case("conv2d depthwise 3x3, 16x64x56x56, fwd", 16, 64, 56, 64, 3, groups=64),
    conv_case("conv2d depthwise 3x3, 16x64x56x56, fwd+bwd", 16, 64, 56, 64, 3, groups=64, backward=True),
    conv_case("conv2d 3x3 complex64 32->32, 8x32x32x32, fwd", 8, 32, 32, 32, 3, complex_=True),
    conv_case("conv2d 3x3 complex64 32->32, 8x32x32x32, fwd+bwd", 8, 32, 32, 32, 3, backward=True, complex_=True),
    pool_case("max_pool2d 3x3/2 pad 1, 16x64x112x112, fwd"),
    pool_case("max_pool2d 3x3/2 pad 1, 16x64x112x112, fwd+bwd", backward=True),
    batch_norm_case("batch_norm train, 16x64x56x56, fwd+bwd"),
    layer_norm_case("layer_norm 16x512x768, fwd+bwd"),
]


def run(cases, rounds):
    header = f"{'benchmark':48s} {'flow':>11s} {'torch':>11s} {'ratio':>6s} {'flow GFLOP/s':>13s}"
    print(header)
    print("-" * len(header))
    for case in cases:
        f_step, f_out = case.setup(flow)
        t_step, t_out = case.setup(torch)
        _check(f_out(), t_out(), 1e-3, case.name)
        tf, tt = _interleaved(f_step, t_step, rounds)
        rate = f"{case.flops / tf / 1e9:10.1f}" if case.flops else ""
        print(f"{case.name:48s} {_fmt_time(tf):>11s} {_fmt_time(tt):>11s} {tt / tf:6.2f} {rate:>13s}")
        sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default="", help="run the rows whose name contains this text")
    p.add_argument("--rounds", type=int, default=5, help="alternating timing rounds (default 5)")
    p.add_argument("--compare-impls", action="store_true",
                   help="run the conv rows once per ONEFLOW_CONV_IMPL (dnnl, dnnl_plain, gemm)")
    args = p.parse_args()
    if args.compare_impls:
        for impl in ("dnnl", "dnnl_plain", "gemm"):
            print(f"== ONEFLOW_CONV_IMPL={impl}")
            sys.stdout.flush()
            env = dict(os.environ, ONEFLOW_CONV_IMPL=impl)
            subprocess.run([sys.executable, __file__, "--only", args.only or "conv2d", "--rounds", str(args.rounds)],
                           env=env, check=True)
        return
    torch.set_num_threads(flow.get_num_threads())
    print(f"{FLOW_NAME} vs torch {torch.__version__}; threads: flow={flow.get_num_threads()} "
          f"torch={torch.get_num_threads()}; ONEFLOW_CONV_IMPL={os.environ.get('ONEFLOW_CONV_IMPL', 'auto')}")
    t0 = time.perf_counter()
    run([c for c in CASES if args.only in c.name], args.rounds)
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
