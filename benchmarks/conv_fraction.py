"""ResNet-50 training's convolutions as a fraction of the machine's float32 peak (issue 43's target:
>= 60%): the rate of the conv layers alone, which the model row's whole-step GFLOP/s understates
(batch norm, ReLU, pooling, the optimizer and Python run at no FLOP rate of note).

    .venv/bin/python benchmarks/conv_fraction.py                 # batch 8, 224², every core
    .venv/bin/python benchmarks/conv_fraction.py --threads 1 --rounds 5

The FLOPs of the convolutions (forward and backward) are counted by torch's FlopCounterMode on the
torch twin of the model, in a child process. Then, in this process, oneflow alone: each round
measures the peak (a float32 2048³ matmul, best of three, as run.py's limit but in the same
process and round, so that a loaded machine lowers both alike) and profiles `--steps` training
steps with oneflow.profiler; the conv time is the self time of the convolution ops (`conv2d`
forward, `Conv2dBackward0`: its data and weight gradients). The line printed per round and the
median give GFLOP/s and the fraction of that round's peak.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
CONV_OPS = ("conv2d", "Conv2dBackward0")


def conv_flops(size):
    """FLOPs of one training step's convolutions (forward + backward), torch's count."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    import suites.models as sm
    sm.SIZE["value"] = size
    step = sm.train("resnet50")(torch, "eager")
    counter = FlopCounterMode(display=False)
    with counter:
        step()
    return sum(v for k, v in counter.get_flop_counts()["Global"].items() if "convolution" in str(k))


def peak(lib, n=2048):
    a = lib.rand(n, n)
    lib.matmul(a, a)
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        lib.matmul(a, a)
        ts.append(time.perf_counter() - t)
    return 2 * n ** 3 / min(ts) / 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--size", default="full", choices=["full", "tiny"])
    p.add_argument("--flops-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.flops_child:
        print(json.dumps({"flops": conv_flops(args.size)}))
        return
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--flops-child", "--size", args.size],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    flops = json.loads(out.strip().splitlines()[-1])["flops"]

    from measure import import_library
    import suites.models as sm
    flow = import_library("oneflow", args.threads)
    sm.SIZE["value"] = args.size
    step = sm.train("resnet50")(flow, "eager")
    step()
    step()
    fractions = []
    print(f"resnet50 ({args.size}) training step, {args.threads} threads: convolutions "
          f"{flops / 1e9:.1f} GFLOP per step (forward + backward)")
    for r in range(args.rounds):
        top = peak(flow)
        with flow.profiler.profile(activities=[flow.profiler.ProfilerActivity.CPU]) as prof:
            t = time.perf_counter()
            for _ in range(args.steps):
                step()
            wall = (time.perf_counter() - t) / args.steps
        conv_s = sum(ev.self_cpu_time_total for ev in prof.key_averages() if ev.key in CONV_OPS) / 1e6 / args.steps
        rate = flops / conv_s / 1e9
        fractions.append(rate / top)
        print(f"round {r}: conv {conv_s * 1e3:.1f} ms of a {wall * 1e3:.1f} ms step, {rate:.1f} GFLOP/s; "
              f"peak {top:.1f} GFLOP/s; {100 * rate / top:.0f}% of it")
    print(f"median: {100 * statistics.median(fractions):.0f}% of the float32 peak in the conv layers")


if __name__ == "__main__":
    main()
