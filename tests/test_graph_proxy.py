"""OneFlow's proxies of a graph's attributes (python/oneflow/nn/graph/block.py): outside build(), a
block's parameter or buffer is a ProxyTensor -- `to(flow.Tensor)` the tensor, `to(GraphTensor)`
its kind -- and inside build() the tensor itself (upstream's test_graph_non_contiguous_tensors)."""
import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow.nn.graph import GraphTensor, Proxy


class _M(flow.nn.Module):
    def __init__(self, contiguous):
        super().__init__()
        w = flow.ones(4, 3) * flow.arange(3.0) if contiguous else (flow.ones(3, 4) * flow.arange(3.0)[:, None]).t()
        self.weight = flow.nn.Parameter(w)
        self.register_buffer("count", flow.zeros(()))

    def forward(self, x):
        return flow.matmul(x, self.weight)


class _G(flow.nn.Graph):
    def __init__(self, m, bias):
        super().__init__()
        self.model, self.bias = m, bias
        self.seen = []

    def build(self, x):
        self.seen.append(type(self.model.weight))
        return self.model(x) + self.bias


@pytest.mark.parametrize("contiguous", [True, False])
def test_proxy_tensors_outside_build(contiguous):
    m = _M(contiguous)
    bias = flow.tensor([[1.0, 2.0, 3.0], [3, 4, 5], [7, 7, 7]])
    if not contiguous:
        bias = bias.transpose(0, 1).contiguous().transpose(0, 1)
    g = _G(m, bias)
    w = g.model.weight
    assert isinstance(w, Proxy) and isinstance(g.model, Proxy)
    assert w.to(flow.Tensor) is m.weight and w.to(flow.Tensor).is_contiguous() == contiguous
    assert w.to(GraphTensor).type == "PARAMETER" and g.model.count.to(GraphTensor).type == "BUFFER"
    assert w.shape == (4, 3) and np.array_equal(w.numpy(), m.weight.numpy())  # (the tensor's attributes)
    x = np.array([[1, 2, 3], [4, 5, 6], [3, 3, 3], [7, 8, 8]], np.float32).T
    out = g(flow.tensor(x.T).transpose(0, 1) if not contiguous else flow.tensor(x))
    assert g.seen and all(issubclass(t, flow.Tensor) for t in g.seen)  # (inside build(): the tensor)
    want = torch.tensor(x) @ torch.tensor(m.weight.numpy()) + torch.tensor(bias.numpy())
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6)
