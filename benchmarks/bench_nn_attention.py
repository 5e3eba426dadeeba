"""Benchmarks of attention: nn.MultiheadAttention, F.scaled_dot_product_attention and
nn.TransformerEncoderLayer, flow against PyTorch in the same process with benchmarks/bench.py's
harness (median of calibrated loops after a warm-up, same thread count). Both modules hold the
same weights; each row first checks that the outputs agree.

    .venv/bin/python benchmarks/bench_nn_attention.py [--only NAME] [--threads N]

The ratio column is flow throughput / torch throughput (higher is better, 1.0 = parity).
Forward rows run under no_grad in training mode (torch's inference fast path needs eval mode,
so both libraries run the same composition); fwd+bwd rows take the gradients of the input and
of every parameter with autograd.grad.

OMP_WAIT_POLICY defaults to passive here: with both libraries in one process, the OpenMP threads
of the one that ran last spin while the other runs and, on a 2-core machine, made single rows
vary up to 10x (set OMP_WAIT_POLICY=active to measure without it).
"""

import argparse
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before torch / oneflow start OpenMP

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import Row, print_table, _close, _run_pair, flow  # noqa: E402

N, L, E, H = 8, 128, 256, 8


def _state_to_torch(fm, tm):
    tm.load_state_dict({k: torch.from_numpy(np.array(v.numpy())) for k, v in fm.state_dict().items()})


def _twins(build):
    fm, tm = build(flow), build(torch)
    _state_to_torch(fm, tm)
    return fm, tm


def _module_row(name, build, inputs, call, backward):
    """Times call(module, *inputs) (and its backward) for both libraries."""
    what = "fwd+bwd" if backward else "forward"
    row = Row(f"{name} {what}", "throughput")
    fm, tm = _twins(build)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s, dtype=np.float32) for s in inputs]

    def make(lib, m):
        xs = [lib.tensor(a, requires_grad=backward) for a in arrays]
        if not backward:
            def fwd():
                with lib.no_grad():
                    return call(m, *xs)
            return fwd
        params = list(m.parameters())
        out = call(m, *xs)
        g = lib.tensor(rng.standard_normal(tuple(out.shape), dtype=np.float32))
        return lambda: lib.autograd.grad(call(m, *xs), xs + params, g)

    def check():
        xs_f = [flow.tensor(a) for a in arrays]
        xs_t = [torch.tensor(a) for a in arrays]
        fm.eval(), tm.eval()
        with flow.no_grad(), torch.no_grad():
            _close(call(fm, *xs_f).numpy(), call(tm, *xs_t).numpy(), 1e-4)
        fm.train(), tm.train()

    return _run_pair(row, lambda: make(flow, fm), lambda: make(torch, tm), check=check)


def _mha(need_weights):
    def call(m, x):
        return m(x, x, x, need_weights=need_weights)[0]
    return call


def bench_mha(need_weights, backward):
    label = f"MHA {N}x{L}x{E} h{H}" + ("" if need_weights else " no weights")
    return _module_row(label, lambda lib: lib.nn.MultiheadAttention(E, H), [(L, N, E)], _mha(need_weights),
                       backward)


def bench_mha_batch_first(backward):
    return _module_row(f"MHA {N}x{L}x{E} h{H} batch_first", lambda lib: lib.nn.MultiheadAttention(
        E, H, batch_first=True), [(N, L, E)], _mha(True), backward)


def bench_encoder_layer(backward):
    def build(lib):
        return lib.nn.TransformerEncoderLayer(E, H, dim_feedforward=4 * E, dropout=0.1)

    return _module_row(f"TransformerEncoderLayer {N}x{L}x{E} ff{4 * E}", build, [(L, N, E)],
                       lambda m, x: m(x), backward)


def bench_sdpa(causal, backward):
    what = "fwd+bwd" if backward else "forward"
    row = Row(f"SDPA {N}x{H}x{L}x{E // H}{' causal' if causal else ''} {what}", "throughput")
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((N, H, L, E // H), dtype=np.float32) for _ in range(3)]

    def make(lib):
        xs = [lib.tensor(a, requires_grad=backward) for a in arrays]
        f = lib.nn.functional.scaled_dot_product_attention
        if not backward:
            return lambda: f(*xs, is_causal=causal)
        g = lib.tensor(rng.standard_normal((N, H, L, E // H), dtype=np.float32))
        return lambda: lib.autograd.grad(f(*xs, is_causal=causal), xs, g)

    def check():
        a = flow.nn.functional.scaled_dot_product_attention(*(flow.tensor(x) for x in arrays), is_causal=causal)
        b = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(x) for x in arrays), is_causal=causal)
        _close(a.numpy(), b.numpy(), 1e-4)

    return _run_pair(row, lambda: make(flow), lambda: make(torch), check=check)


BENCHES = {
    "mha": [lambda: bench_mha(True, False), lambda: bench_mha(True, True), lambda: bench_mha(False, False),
            lambda: bench_mha(False, True), lambda: bench_mha_batch_first(True)],
    "sdpa": [lambda: bench_sdpa(False, False), lambda: bench_sdpa(True, False), lambda: bench_sdpa(False, True),
             lambda: bench_sdpa(True, True)],
    "encoder_layer": [lambda: bench_encoder_layer(False), lambda: bench_encoder_layer(True)],
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", action="append", choices=sorted(BENCHES), help="run only these groups")
    p.add_argument("--threads", type=int, help="threads of both libraries (default: flow's)")
    args = p.parse_args()
    if args.threads:
        flow.set_num_threads(args.threads)
    torch.set_num_threads(flow.get_num_threads())
    print_table(BENCHES, args.only, width=52)


if __name__ == "__main__":
    main()
