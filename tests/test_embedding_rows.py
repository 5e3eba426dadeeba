"""The embedding lookup's row copy with prefetching ahead (src/kernels/embedding.cpp): lookups of
more rows than it looks ahead, rows shorter and longer than the prefetched bytes, repeated and
padding indices and a threaded split, against PyTorch, forward and backward."""
import numpy as np
import pytest
import torch

from harness import flow


@pytest.mark.parametrize("dim", [1, 64, 300])
@pytest.mark.parametrize("count", [1, 9, 517])
def test_lookup_matches_torch(dim, count):
    rng = np.random.default_rng(dim + count)
    w = rng.standard_normal((1000, dim)).astype("float32")
    idx = rng.integers(0, 1000, (count,))
    idx[: count // 2] = idx[0]  # repeated rows
    fw, tw = flow.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    fo = flow.nn.functional.embedding(flow.tensor(idx), fw, padding_idx=int(idx[-1]))
    to = torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx=int(idx[-1]))
    np.testing.assert_array_equal(fo.detach().numpy(), to.detach().numpy())
    g = rng.standard_normal((count, dim)).astype("float32")
    fo.backward(flow.tensor(g))
    to.backward(torch.tensor(g))
    np.testing.assert_allclose(fw.grad.numpy(), tw.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_lookup_over_threads():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((100_000, 64)).astype("float32")
    idx = rng.integers(0, 100_000, (4096, 3))
    old = flow.get_num_threads()
    flow.set_num_threads(2)
    try:
        out = flow.nn.Embedding.from_pretrained(flow.tensor(w))(flow.tensor(idx))
    finally:
        flow.set_num_threads(old)
    np.testing.assert_array_equal(out.numpy(), w[idx])
