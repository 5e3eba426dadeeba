"""CPU time (process_time: a loaded machine counts less) of one nn.LSTM / nn.GRU layer alone,
256 -> 256, batch 32, 32 steps, float32: forward+backward (input and every parameter) and
inference (no_grad). Variants, interleaved per round: the table op with its default kernel
("auto": oneDNN where it fits), the table op on our kernel (ONEFLOW_RNN_IMPL=native), the older
autograd.Function layers ("function": _lstm_scan.py / _gru_scan.py), and PyTorch.
Run single-threaded: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python
benchmarks/bench_rnn_layer_cpu.py [LSTM|GRU] [rounds] [calls per round]."""
import os
import statistics
import sys
import time

import numpy as np
import torch
import oneflow as flow
from oneflow.nn.modules import _rnn_impl

MODE = sys.argv[1] if len(sys.argv) > 1 else "LSTM"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
CALLS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
T, B, IN, H = 32, 32, 256, 256
torch.set_num_threads(1)
flow.set_num_threads(1)
mf = getattr(flow.nn, MODE)(IN, H)
mt = getattr(torch.nn, MODE)(IN, H)
mt.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mf.state_dict().items()})
x = np.random.default_rng(0).standard_normal((T, B, IN)).astype(np.float32)
xf, xt = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
fits = _rnn_impl._table_layer_fits


def train(lib, m, xx):
    def run():
        m.zero_grad()
        xx.grad = None
        out, _ = m(xx)
        out.sum().backward()
    return run


def infer(lib, m, xx):
    def run():
        with lib.no_grad():
            m(xx)
    return run


def variant(name):
    """Sets the process up for a flow variant."""
    os.environ["ONEFLOW_RNN_IMPL"] = "native" if name == "native" else "auto"
    _rnn_impl._table_layer_fits = (lambda w: False) if name == "function" else fits


def timed(fn, n):
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t0) / n


for case, make in (("train", train), ("infer", infer)):
    ff, ft = make(flow, mf, xf), make(torch, mt, xt)
    names = ("auto", "native", "function")
    res = {k: [] for k in names + ("torch",)}
    for k in names:
        variant(k)
        ff()
    ft()
    for _ in range(ROUNDS):
        for k in names:
            variant(k)
            res[k].append(timed(ff, CALLS))
        res["torch"].append(timed(ft, CALLS))
    variant("auto")
    med = {k: statistics.median(v) * 1e3 for k, v in res.items()}
    print(f"{MODE} {case}: CPU ms/call, median of {ROUNDS} rounds x {CALLS} (loaded machine): "
          + ", ".join(f"{k} {v:.2f}" for k, v in med.items()) + "; vs torch: "
          + ", ".join(f"{k} {med[k] / med['torch']:.2f}x" for k in names), flush=True)
