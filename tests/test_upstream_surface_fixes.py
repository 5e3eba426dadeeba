"""Behaviours that upstream OneFlow's test suite exercises (tools/upstream_suite.py,
docs/upstream_suite.md), each compared with PyTorch 2.13: the second round of fixes."""
import numpy as np
import pytest
import torch

import oneflow as flow


def _pair(shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


@pytest.mark.parametrize("dims", [([1, 2, 0], [2, 1, 0]), ([0], [0]), ([0, 3], [0, 3])])
def test_tensordot_contracts_a_size_one_dim_against_any_size(dims):
    # x's dim 0 has size 1, y's size 4: PyTorch sums y over that dim (broadcast), so does ours.
    a, ta = _pair((1, 3, 2, 5), 0)
    b, tb = _pair((4, 2, 3, 5), 1)
    z, tz = flow.tensordot(a, b, dims=dims), torch.tensordot(ta, tb, dims=dims)
    assert tuple(z.shape) == tuple(tz.shape)
    np.testing.assert_allclose(z.numpy(), tz.detach().numpy(), rtol=1e-5, atol=1e-5)
    w = np.random.default_rng(2).standard_normal(tuple(tz.shape)).astype(np.float32)
    (z * flow.tensor(w)).sum().backward()
    (tz * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_tensordot_mismatched_sizes_still_raise():
    with pytest.raises(RuntimeError, match=r"tensordot\(\): contracted dimensions need to match"):
        flow.tensordot(flow.ones(2, 3), flow.ones(3, 3), dims=([0], [0]))
