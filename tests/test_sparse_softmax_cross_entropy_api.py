"""nn.functional.sparse_softmax_cross_entropy(labels, logits): OneFlow's (TensorFlow's) order,
compared with PyTorch's cross_entropy(reduction='none') over the last dim."""
import numpy as np
import pytest
import torch

import oneflow as flow


@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 6)])
def test_sparse_softmax_cross_entropy_labels_first(shape):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal(shape).astype(np.float32)
    labels = rng.integers(0, shape[-1], size=shape[:-1])
    fl = flow.tensor(logits, requires_grad=True)
    tl = torch.tensor(logits, requires_grad=True)
    got = flow.nn.functional.sparse_softmax_cross_entropy(flow.tensor(labels), fl)
    want = torch.nn.functional.cross_entropy(tl.reshape(-1, shape[-1]), torch.tensor(labels).reshape(-1),
                                             reduction="none").reshape(shape[:-1])
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    w = rng.standard_normal(shape[:-1]).astype(np.float32)
    (got * flow.tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(fl.grad.numpy(), tl.grad.numpy(), rtol=1e-5, atol=1e-6)
