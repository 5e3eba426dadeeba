"""Benchmarks of the recurrent layers (nn.LSTM, nn.GRU): flow against PyTorch in the same
process, same thread count. Shapes: batch 64, input 256, hidden 256, float32; "forward" runs
under no_grad, "fwd+bwd" takes the gradients of the input and every parameter.

    .venv/bin/python benchmarks/bench_nn_rnn.py [--only NAME] [--rounds N] [--threads N]

Timing: loops of calibrated length (~0.1 s) after a warm-up, flow and torch alternating for
`rounds` rounds, the best round of each kept: on a shared machine whose load changes, both
sides then see the same conditions. The ratio column is flow throughput / torch throughput
(higher is better, 1.0 = parity).
"""

import argparse
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import Row, print_table, _close, flow  # noqa: E402

BATCH, INPUT, HIDDEN = 64, 256, 256
ROUNDS = [7]


def _calibrate(fn, target=0.1):
    fn()  # warm-up (allocator caches, BLAS thread pool start)
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        if dt >= 0.02:
            return max(1, int(number * target / dt))
        number *= 4


def _loop(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def _run_pair(row, make_flow, make_torch, check=None):
    """Best-of-rounds seconds per call of each side, the sides alternating. A flow failure is
    reported as n/a (with the reason) instead of aborting the table."""
    t = make_torch()
    try:
        f = make_flow()
        if check is not None:
            check()
    except Exception as e:  # noqa: BLE001 - report, don't abort
        row.note = f"{type(e).__name__}: {str(e)[:60]}"
        f = None
    nt = _calibrate(t)
    nf = _calibrate(f) if f is not None else 0
    best_t = best_f = float("inf")
    for _ in range(ROUNDS[0]):
        best_t = min(best_t, _loop(t, nt))
        if f is not None:
            best_f = min(best_f, _loop(f, nf))
    row.torch_t = best_t
    row.flow_t = best_f if f is not None else None
    return row


def _twins(kind):
    """The same layer in both libraries (flow's weights copied into torch)."""
    flow.manual_seed(0)
    fm = getattr(flow.nn, kind)(INPUT, HIDDEN)
    tm = getattr(torch.nn, kind)(INPUT, HIDDEN)
    tm.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in fm.state_dict().items()})
    return fm, tm


def _first(out):
    return out[0]


def bench_rnn(kind, seq, backward=False, state=False):
    what = "fwd+bwd" if backward else "forward"
    init = ", given (h0, c0)" if state else ""
    row = Row(f"{kind} seq {seq} {what}{init}", "throughput")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((seq, BATCH, INPUT), dtype=np.float32)
    h0 = rng.standard_normal((1, BATCH, HIDDEN), dtype=np.float32)
    c0 = rng.standard_normal((1, BATCH, HIDDEN), dtype=np.float32)
    fm, tm = _twins(kind)

    def make(lib, m):
        xt = lib.tensor(x).requires_grad_(backward)
        hx = None
        if state:
            hx = (lib.tensor(h0), lib.tensor(c0)) if kind == "LSTM" else lib.tensor(h0)
        args = (xt,) if hx is None else (xt, hx)
        if not backward:
            def fwd():
                with lib.no_grad():
                    return m(*args)
            return fwd
        params = list(m.parameters())

        def fwd_bwd():
            out = _first(m(*args))
            return lib.autograd.grad(out.sum(), [xt] + params)
        return fwd_bwd

    def check():
        def run(lib, m):
            args = (lib.tensor(x),)
            if state:
                h = lib.tensor(h0)
                args += ((h, lib.tensor(c0)) if kind == "LSTM" else h,)
            return _first(m(*args)).detach().numpy()
        _close(run(flow, fm), run(torch, tm), 1e-4)

    return _run_pair(row, lambda: make(flow, fm), lambda: make(torch, tm), check=check)


BENCHES = {
    "lstm_step": [lambda: bench_rnn("LSTM", 1), lambda: bench_rnn("LSTM", 1, state=True)],
    "lstm_seq": [lambda: bench_rnn("LSTM", 32), lambda: bench_rnn("LSTM", 32, backward=True)],
    "gru_seq": [lambda: bench_rnn("GRU", 32), lambda: bench_rnn("GRU", 32, backward=True)],
}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", action="append", choices=sorted(BENCHES), help="run only these groups")
    p.add_argument("--rounds", type=int, default=7, help="alternating timing rounds per row")
    p.add_argument("--threads", type=int, help="intra-op threads of both (default: flow's)")
    args = p.parse_args()
    ROUNDS[0] = args.rounds
    if args.threads:
        flow.set_num_threads(args.threads)
    torch.set_num_threads(flow.get_num_threads())
    print_table(BENCHES, args.only, width=48, extra=f"; batch {BATCH}, input {INPUT}, hidden {HIDDEN}, float32")


if __name__ == "__main__":
    main()
