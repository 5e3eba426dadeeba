"""Large inputs for the threaded paths of the selection / scatter / sort kernels (the OpInfo
samples are tiny): parallel radix sort of one long row, rows split over threads, chunked
top-k, two-pass mask kernels, per-thread histograms, threaded advanced indexing. Every result
is compared with torch, contiguous and non-contiguous."""

import numpy as np
import pytest
import torch

from harness import assert_close, flow, flow_to_torch

RNG = np.random.default_rng(7)
N = 300_000


def _noncontig(lib, arr):
    """arr's values as a step-2 view along dim 0 of a larger buffer."""
    return lib.tensor(np.ascontiguousarray(np.repeat(arr, 2, axis=0)))[::2]


# Distinct values: PyTorch orders ties arbitrarily unless stable=True.
floats = ((RNG.permutation(N) - N // 2) / 1024).astype(np.float32)
ints = RNG.integers(-1000, 1000, N).astype(np.int64)
rows = ((RNG.permutation(400_000) - 200_000) / 512).astype(np.float32).reshape(400, 1000)

CASES = {
    "sort-1d-float32": (lambda lib, x: lib.sort(x), floats),
    "sort-1d-descending": (lambda lib, x: lib.sort(x, descending=True), floats),
    "sort-1d-int64-stable-ties": (lambda lib, x: lib.sort(x, stable=True), ints),
    "argsort-rows": (lambda lib, x: lib.argsort(x, dim=1), rows),
    "argsort-dim0": (lambda lib, x: lib.argsort(x, dim=0), rows),
    "sort-float64": (lambda lib, x: lib.sort(x.double()), floats),
    "sort-float16-stable": (lambda lib, x: lib.sort(x.half(), stable=True), floats),
    "topk-1d": (lambda lib, x: lib.topk(x, 10), floats),
    "topk-1d-smallest": (lambda lib, x: lib.topk(x, 7, largest=False), floats),
    "topk-rows": (lambda lib, x: lib.topk(x, 5, dim=1), rows),
    "topk-large-k": (lambda lib, x: lib.topk(x, 50_000), floats),
    "kthvalue-rows": (lambda lib, x: lib.kthvalue(x, 300, 1), rows),
    "median-rows": (lambda lib, x: lib.median(x, 1), rows),
    "unique-int64": (lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True), ints),
    "unique-float": (lambda lib, x: lib.unique(x.round()), floats),
    "masked_select": (lambda lib, x: lib.masked_select(x, x > 0.3), floats),
    "nonzero": (lambda lib, x: lib.nonzero(x > 1.0), rows),
    "where": (lambda lib, x: lib.where(x > 0, x, -x), rows),
    "bincount": (lambda lib, x: lib.bincount(x + 1000), ints),
    "bincount-weights": (lambda lib, x: lib.bincount(x + 1000, weights=(x.double() / 7)), ints),
    "histc": (lambda lib, x: lib.histc(x, bins=37, min=-2, max=2), floats),
    "searchsorted": (lambda lib, x: lib.searchsorted(lib.sort(x[:1000]).values, x), floats),
}


@pytest.mark.parametrize("layout", ["contiguous", "noncontig"])
@pytest.mark.parametrize("name", list(CASES))
def test_large(name, layout):
    fn, arr = CASES[name]
    t = torch.tensor(arr)
    f = flow.tensor(arr) if layout == "contiguous" else _noncontig(flow, arr)
    want = fn(torch, t)
    got = fn(flow, f)
    tol = {"float64": (1e-9, 1e-9), "float32": (1e-5, 1e-5)} if "weights" in name else None
    assert_close(tuple(got) if isinstance(got, tuple) else got,
                 tuple(want) if isinstance(want, tuple) else want, overrides=tol, what=name)


def _idx(n, hi):
    return RNG.integers(0, hi, n).astype(np.int64)


table = RNG.standard_normal((20_000, 16)).astype(np.float32)
big_idx = _idx(200_000, 20_000)


@pytest.mark.parametrize("layout", ["contiguous", "noncontig"])
@pytest.mark.parametrize(
    "name,fn",
    [
        ("gather-dim0", lambda lib, x, i: x.gather(0, i[:, None].expand(-1, 16))),
        ("gather-dim1", lambda lib, x, i: x.gather(1, (i % 16).reshape(-1, 16)[: x.shape[0]])),
        ("index_select-rows", lambda lib, x, i: x.index_select(0, i)),
        ("index_select-cols", lambda lib, x, i: x.index_select(1, i[:40] % 16)),
        ("take", lambda lib, x, i: lib.take(x, i)),
        ("getitem-rows", lambda lib, x, i: x[i]),
        ("getitem-points", lambda lib, x, i: x[i, i % 16]),
        ("getitem-mask", lambda lib, x, i: x[x > 0.5]),
        ("scatter_add-dim0", lambda lib, x, i: lib.zeros(20_000, 16).scatter_add(
            0, i[:, None].expand(-1, 16), lib.ones(i.shape[0], 16))),
        ("scatter_add-1d", lambda lib, x, i: lib.zeros(20_000).scatter_add(0, i, lib.ones(i.shape[0]))),
        ("scatter-dim1", lambda lib, x, i: x.scatter(1, lib.zeros(x.shape[0], 1, dtype=lib.int64), 5.0)),
        ("scatter_reduce-amax", lambda lib, x, i: lib.zeros(20_000).scatter_reduce(
            0, i, lib.arange(i.shape[0], dtype=lib.float32), "amax", include_self=False)),
        ("index_add", lambda lib, x, i: lib.zeros(20_000, 16).index_add(0, i, lib.ones(i.shape[0], 16))),
        ("index_put-accumulate", lambda lib, x, i: lib.zeros(20_000).index_put((i,), lib.ones(i.shape[0]),
                                                                              accumulate=True)),
        ("setitem-rows", lambda lib, x, i: _setitem(x.clone(), i[:5000], 3.0)),
        ("masked_fill", lambda lib, x, i: x.masked_fill(x > 0, 1.5)),
    ],
)
def test_large_indexing(name, fn, layout):
    t = torch.tensor(table)
    f = flow.tensor(table) if layout == "contiguous" else _noncontig(flow, table)
    ti, fi = torch.tensor(big_idx), flow.tensor(big_idx)
    assert_close(fn(flow, f, fi), fn(torch, t, ti), what=name)


def _setitem(x, i, v):
    x[i] = v
    return x


def test_large_results_are_deterministic():
    x = flow.tensor(floats)
    a = flow_to_torch(flow.sort(x).indices)
    b = flow_to_torch(flow.sort(x).indices)
    assert torch.equal(a, b)
