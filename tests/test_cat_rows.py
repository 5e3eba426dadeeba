"""cat / stack of contiguous CPU inputs of the output's dtype: one memcpy per (row, input)
(Note [Cat of contiguous rows] in src/ops/shape_ops.cpp), against PyTorch in every dim, dtype
and size edge, and the general path's cases next to it (promotion, strided inputs)."""
import numpy as np
import pytest
import torch

from harness import flow


def _pair(a):
    return flow.tensor(a), torch.tensor(a)


def _same(f, t):
    assert f.dtype == getattr(flow, str(t.dtype).split(".")[1])
    assert np.array_equal(f.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "bool", "complex64"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cat_matches_torch(dtype, dim):
    rng = np.random.default_rng(0)
    shapes = [(3, 4, 5), (3, 4, 5), (3, 4, 5)]
    parts = []
    for k, s in enumerate(shapes):
        s = list(s)
        s[dim] = k + 1  # different lengths along dim
        parts.append((rng.standard_normal(s) * 4).astype(dtype))
    f, t = zip(*map(_pair, parts))
    _same(flow.cat(list(f), dim), torch.cat(list(t), dim))


def test_stack_of_many_rows():
    rng = np.random.default_rng(1)
    parts = [rng.standard_normal((64, 8)).astype("float32") for _ in range(27)]
    f, t = zip(*map(_pair, parts))
    for dim in (0, 1, 2):
        _same(flow.stack(list(f), dim), torch.stack(list(t), dim))


def test_edges():
    a = np.arange(24, dtype="float32").reshape(2, 3, 4)
    fa, ta = _pair(a)
    # zero-size inputs, a zero-size result, legacy 1-D empties skipped
    _same(flow.cat([fa, flow.zeros(2, 0, 4), fa], 1), torch.cat([ta, torch.zeros(2, 0, 4), ta], 1))
    _same(flow.cat([flow.zeros(0, 3, 4), flow.zeros(0, 3, 4)], 0), torch.cat([torch.zeros(0, 3, 4)] * 2, 0))
    _same(flow.cat([fa, flow.tensor([]), fa], 0), torch.cat([ta, torch.tensor([]), ta], 0))
    # contiguous views with a storage offset; strided and promoted inputs (the general path)
    _same(flow.cat([fa[1:], fa[:1]], 0), torch.cat([ta[1:], ta[:1]], 0))
    _same(flow.cat([fa.transpose(0, 2), fa.transpose(0, 2)], 1), torch.cat([ta.transpose(0, 2)] * 2, 1))
    _same(flow.cat([fa, fa.double()], 2), torch.cat([ta, ta.double()], 2))


def test_gradient():
    a = np.random.default_rng(2).standard_normal((3, 4)).astype("float32")
    (fx, tx) = (flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True))
    g = np.random.default_rng(3).standard_normal((3, 12)).astype("float32")
    (flow.cat([fx, fx * 2, fx], 1) * flow.tensor(g)).sum().backward()
    (torch.cat([tx, tx * 2, tx], 1) * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)
