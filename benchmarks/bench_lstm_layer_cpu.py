"""CPU time (process_time, so that a loaded machine counts less) of one LSTM-LM training step
(forward, loss, backward; benchmarks/models/lstm_lm.py, batch 32, seq 64, hidden 256) and one
inference forward: oneflow with the lstm_layer table op ("table"), oneflow with the older
autograd.Function layers of _lstm_scan.py ("function"), and PyTorch; interleaved rounds.
Run single-threaded: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python
benchmarks/bench_lstm_layer_cpu.py [rounds] [steps per round]."""
import os
import statistics
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))
import numpy as np
import torch
import oneflow as flow
from oneflow.nn.modules import _rnn_impl

import lstm_lm

cfg = lstm_lm.SIZES["full"]
torch.set_num_threads(1)
rng = np.random.default_rng(0)
mf, mt = lstm_lm.build(flow, cfg), lstm_lm.build(torch, cfg)
(xf,), yf = lstm_lm.batch(flow, cfg, rng)
rng = np.random.default_rng(0)
(xt,), yt = lstm_lm.batch(torch, cfg, rng)
orig = _rnn_impl._table_layer_fits


def step(lib, m, x, y):
    def run():
        m.zero_grad()
        lstm_lm.loss(lib, m(x), y).backward()
    return run


def infer(lib, m, x):
    def run():
        with lib.no_grad():
            m(x)
    return run


def timed(fn, n):
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t0) / n


cases = {"train": (step(flow, mf, xf, yf), step(torch, mt, xt, yt)),
         "infer": (infer(flow, mf, xf), infer(torch, mt, xt))}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
for name, (ff, ft) in cases.items():
    res = {"table": [], "function": [], "torch": []}
    for fits in (orig, lambda w: False):
        _rnn_impl._table_layer_fits = fits
        ff()
    ft()
    for r in range(rounds):
        _rnn_impl._table_layer_fits = orig
        res["table"].append(timed(ff, n))
        _rnn_impl._table_layer_fits = lambda w: False
        res["function"].append(timed(ff, n))
        res["torch"].append(timed(ft, n))
    _rnn_impl._table_layer_fits = orig
    med = {k: statistics.median(v) * 1e3 for k, v in res.items()}
    print(f"{name}: CPU ms/step median of {rounds} rounds x {n}: table {med['table']:.1f} "
          f"(rounds {[round(v * 1e3, 1) for v in res['table']]}), function {med['function']:.1f} "
          f"({[round(v * 1e3, 1) for v in res['function']]}), torch {med['torch']:.1f} "
          f"({[round(v * 1e3, 1) for v in res['torch']]}); table/function "
          f"{med['table'] / med['function']:.2f}x, table/torch {med['table'] / med['torch']:.2f}x, "
          f"function/torch {med['function'] / med['torch']:.2f}x", flush=True)
