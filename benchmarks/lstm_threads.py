"""The op row `LSTM 256->256, batch 32, 32 steps, forward+backward` (suites/core.py) per LSTM
implementation and thread count, against PyTorch, all in one process in interleaved rounds (a
loaded machine's spikes hit every variant alike): oneflow's default path (oneDNN's LSTM with its
per-step thread split or on one thread, Note [One-thread RNN steps] in
src/kernels/dnnl/dnnl_rnn.cpp), oneflow's own kernel (ONEFLOW_RNN_IMPL=native, read per call), and torch, each at --threads
and at one thread.

    .venv/bin/python benchmarks/lstm_threads.py --rounds 15
    .venv/bin/python benchmarks/lstm_threads.py --batch 64 --hidden 512 --steps 16

Wall time per call (median over rounds) and process CPU time per call: on a busy machine the CPU
time shows the work, the wall time the waits (a barrier waiting for a descheduled thread).
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--steps", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--calls", type=int, default=5, help="calls per variant per round")
    args = p.parse_args()

    import oneflow as flow
    import torch

    x = np.random.default_rng(9).standard_normal((args.batch, args.steps, args.hidden)).astype(np.float32)
    flow.manual_seed(0)
    torch.manual_seed(0)
    f_rnn = flow.nn.LSTM(args.hidden, args.hidden, batch_first=True)
    t_rnn = torch.nn.LSTM(args.hidden, args.hidden, batch_first=True)
    t_rnn.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in f_rnn.state_dict().items()})
    fx, tx = flow.tensor(x), torch.from_numpy(x)

    def f_step():
        out, _ = f_rnn(fx)
        out.sum().backward()

    def t_step():
        out, _ = t_rnn(tx)
        out.sum().backward()

    def with_env(value, threads, fn):
        def run():
            os.environ["ONEFLOW_RNN_IMPL"] = value
            flow.set_num_threads(threads)
            try:
                fn()
            finally:
                os.environ["ONEFLOW_RNN_IMPL"] = "auto"
                flow.set_num_threads(args.threads)
        return run

    def torch_threads(threads, fn):
        def run():
            torch.set_num_threads(threads)
            try:
                fn()
            finally:
                torch.set_num_threads(args.threads)
        return run

    torch.set_num_threads(args.threads)
    flow.set_num_threads(args.threads)
    variants = {
        f"oneflow auto, {args.threads} threads": with_env("auto", args.threads, f_step),
        "oneflow auto, 1 thread": with_env("auto", 1, f_step),
        f"oneflow native, {args.threads} threads": with_env("native", args.threads, f_step),
        "oneflow native, 1 thread": with_env("native", 1, f_step),
        f"torch, {args.threads} threads": t_step,
        "torch, 1 thread": torch_threads(1, t_step),
    }
    out_f, _ = f_rnn(fx)
    out_t, _ = t_rnn(tx)
    err = np.abs(out_f.numpy() - out_t.detach().numpy()).max()
    assert err < 1e-4, f"oneflow and torch disagree: {err}"
    wall = {k: [] for k in variants}
    cpu = {k: [] for k in variants}
    for fn in variants.values():
        fn()
    for _ in range(args.rounds):
        for name, fn in variants.items():
            w, c = time.perf_counter(), time.process_time()
            for _ in range(args.calls):
                fn()
            wall[name].append((time.perf_counter() - w) / args.calls)
            cpu[name].append((time.process_time() - c) / args.calls)
    torch_name = f"torch, {args.threads} threads"
    t_wall = statistics.median(wall[torch_name])
    print(f"LSTM {args.hidden}->{args.hidden}, batch {args.batch}, {args.steps} steps, forward+backward; "
          f"{args.rounds} rounds x {args.calls} calls, one process")
    print("| variant | wall ms (median) | spread | CPU ms | wall / torch's |")
    print("|---|---|---|---|---|")
    for name in variants:
        m = statistics.median(wall[name])
        spread = (max(wall[name]) - min(wall[name])) / 2 / m
        print(f"| {name} | {m * 1e3:.2f} | ±{spread:.0%} | {statistics.median(cpu[name]) * 1e3:.2f} | "
              f"{m / t_wall:.2f}x |")


if __name__ == "__main__":
    main()
