"""Selection / scatter / sort benchmarks: flow against PyTorch in the same process.

    .venv/bin/python benchmarks/bench_index.py

Same method as bench.py (median of calibrated loops after a warm-up, the same thread count for
both, results checked equal before timing). The ratio is flow's rate / torch's rate: higher is
better, 1.0 = parity.
"""

import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench import Row, _run_pair, flow, print_table  # noqa: E402

N = 1_000_000


def _eq(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5, atol=1e-5), \
        "flow and torch disagree"


def _case(name, make_args, call, check=lambda f, t: _eq(f.numpy(), t.numpy()), unit_work=None):
    """make_args(lib) -> args; call(lib, *args) -> result."""
    row = Row(name, "throughput", unit_work, "Gelem/s" if unit_work else "")
    fa, ta = make_args(flow), make_args(torch)

    def verify():
        check(call(flow, *fa), call(torch, *ta))

    return _run_pair(row, lambda: (lambda: call(flow, *fa)), lambda: (lambda: call(torch, *ta)), check=verify)


def _values(lib, x):
    return lib.tensor(x)


RNG = np.random.default_rng(0)
F32 = RNG.standard_normal(N).astype(np.float32)
I64 = RNG.integers(0, 100_000, N).astype(np.int64)
IDX = RNG.integers(0, N, N).astype(np.int64)
ROWS = RNG.standard_normal((1000, 1000)).astype(np.float32)
TABLE = RNG.standard_normal((N, 4)).astype(np.float32)


def _sort_check(f, t):
    _eq(f.values.numpy(), t.values.numpy())


def _topk_check(f, t):
    _eq(f.values.numpy(), t.values.numpy())
    _eq(f.indices.numpy(), t.indices.numpy())


CASES = [
    lambda: _case("sort, 1M float32", lambda lib: (lib.tensor(F32),), lambda lib, x: lib.sort(x), _sort_check, N),
    lambda: _case("sort, 1M float32, stable", lambda lib: (lib.tensor(F32),),
                  lambda lib, x: lib.sort(x, stable=True), lambda f, t: _eq(f.indices.numpy(), t.indices.numpy()), N),
    lambda: _case("argsort, 1000 rows x 1000 float32", lambda lib: (lib.tensor(ROWS),),
                  lambda lib, x: lib.argsort(x, dim=1),
                  # rows hold a few equal values, whose order an unstable sort leaves open:
                  # compare the values the indices pick
                  lambda f, t: _eq(np.take_along_axis(ROWS, f.numpy(), 1), np.take_along_axis(ROWS, t.numpy(), 1)),
                  N),
    lambda: _case("topk k=10, 1M float32", lambda lib: (lib.tensor(F32),), lambda lib, x: lib.topk(x, 10),
                  _topk_check, N),
    lambda: _case("topk k=10, 1000 rows x 1000", lambda lib: (lib.tensor(ROWS),), lambda lib, x: lib.topk(x, 10),
                  _topk_check, N),
    lambda: _case("gather, 1M float32 (dim 0)", lambda lib: (lib.tensor(F32), lib.tensor(IDX)),
                  lambda lib, x, i: lib.gather(x, 0, i), unit_work=N),
    lambda: _case("gather, 1000x1000 (dim 1)", lambda lib: (lib.tensor(ROWS), lib.tensor(IDX % 1000).reshape(1000, 1000)),
                  lambda lib, x, i: lib.gather(x, 1, i), unit_work=N),
    lambda: _case("index_select, 1M rows of [1M, 4]", lambda lib: (lib.tensor(TABLE), lib.tensor(IDX)),
                  lambda lib, x, i: lib.index_select(x, 0, i), unit_work=N),
    lambda: _case("x[idx], 1M rows of [1M, 4]", lambda lib: (lib.tensor(TABLE), lib.tensor(IDX)),
                  lambda lib, x, i: x[i], unit_work=N),
    lambda: _case("unique, 1M int64", lambda lib: (lib.tensor(I64),), lambda lib, x: lib.unique(x), unit_work=N),
    lambda: _case("unique + inverse + counts, 1M int64", lambda lib: (lib.tensor(I64),),
                  lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True)[0], unit_work=N),
    lambda: _case("scatter_add, 1M into 100k", lambda lib: (lib.zeros(100_000), lib.tensor(I64), lib.tensor(F32)),
                  lambda lib, z, i, s: z.scatter_add(0, i, s),
                  lambda f, t: np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-4, atol=1e-4), N),
    lambda: _case("index_put accumulate, 1M into 100k", lambda lib: (lib.zeros(100_000), lib.tensor(I64), lib.tensor(F32)),
                  lambda lib, z, i, s: z.index_put((i,), s, accumulate=True),
                  lambda f, t: np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-4, atol=1e-4), N),
    lambda: _case("masked_select, 1M float32", lambda lib: (lib.tensor(F32),),
                  lambda lib, x: lib.masked_select(x, x > 0), unit_work=N),
    lambda: _case("nonzero, 1000x1000", lambda lib: (lib.tensor(ROWS > 0),), lambda lib, x: lib.nonzero(x), unit_work=N),
]


def main():
    torch.set_num_threads(flow.get_num_threads())
    print_table({"index": CASES}, None, width=42)


if __name__ == "__main__":
    main()
