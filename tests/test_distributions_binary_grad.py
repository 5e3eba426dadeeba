"""Gradients of the two-outcome families at logits = 0 (probs = 0.5), where the old
relu(x) + log1p(exp(-|x|)) form of softplus had gradient 0 (issue 39): against torch."""
import numpy as np
import pytest
import torch

import oneflow as flow

P = [0.2, 0.5, 0.9, 0.05]
V = [1.0, 0.0, 1.0, 0.0]


def _grad(lib, family, fn, **kw):
    p = lib.tensor(P, requires_grad=True)
    d = getattr(lib.distributions, family)(probs=p, **kw)
    fn(lib, d).sum().backward()
    return p.grad.numpy() if lib is torch else p.grad.numpy()


@pytest.mark.parametrize("family, kw, fn", [
    ("Bernoulli", {}, lambda lib, d: d.log_prob(lib.tensor(V))),
    ("Bernoulli", {}, lambda lib, d: d.entropy()),
    ("Binomial", {"total_count": 3}, lambda lib, d: d.log_prob(lib.tensor([1.0, 2.0, 3.0, 0.0]))),
    ("Geometric", {}, lambda lib, d: d.log_prob(lib.tensor([1.0, 2.0, 0.0, 4.0]))),
])
def test_grad_at_half_matches_torch(family, kw, fn):
    got, want = _grad(flow, family, fn, **kw), _grad(torch, family, fn, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_bernoulli_values_from_the_issue():
    p = flow.tensor(P, requires_grad=True)
    flow.distributions.Bernoulli(probs=p).log_prob(flow.tensor(V)).sum().backward()
    assert abs(p.grad[1].item() - -2.0) < 1e-5
    p = flow.tensor(P, requires_grad=True)
    flow.distributions.Bernoulli(probs=p).entropy().sum().backward()
    assert abs(p.grad[1].item()) < 1e-6
