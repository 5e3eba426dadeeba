"""autograd.graph.GradientEdge / get_gradient_edge against PyTorch: gradients into a node's
output without its tensor, and a backward started from an edge (the split backward of pipeline
schedules), with the errors."""

import numpy as np
import pytest
import torch

import oneflow as flow


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)


def _both(fn):
    x0 = np.random.default_rng(0).standard_normal((3, 4))
    out = []
    for lib in (flow, torch):
        x = lib.tensor(x0, requires_grad=True)
        out.append(fn(lib, x))
    return out


def test_grad_into_an_edge_is_the_grad_of_its_tensor():
    def f(lib, x):
        y = x * 2 + 1
        edge = lib.autograd.graph.get_gradient_edge(y)
        assert isinstance(edge, lib.autograd.graph.GradientEdge) and edge.output_nr == 0
        assert edge.node is not None and edge.node.name() == y.grad_fn.name()
        z = (y.exp() * y).sum()
        (g_edge,) = lib.autograd.grad(z, edge, retain_graph=True)
        (g_tensor,) = lib.autograd.grad(z, y)
        _close(g_edge, g_tensor)
        return g_edge

    _close(*_both(f))


def test_leaf_edge_is_its_accumulator():
    def f(lib, x):
        edge = lib.autograd.graph.get_gradient_edge(x)
        assert edge.node.name() == "torch::autograd::AccumulateGrad" or "AccumulateGrad" in edge.node.name()
        (g,) = lib.autograd.grad((x ** 3).sum(), edge)
        return g

    _close(*_both(f))


def test_split_backward_from_an_edge():
    """grad(z, edge_y) then grad(edge_y, x, grad_outputs=that): the backward of z in two halves,
    the second one after y's tensor is gone."""
    def f(lib, x):
        y = x.sin() * x
        edge = lib.autograd.graph.get_gradient_edge(y)
        z = (y * y).sum()
        (gy,) = lib.autograd.grad(z, edge, retain_graph=True)
        del y, z
        (gx,) = lib.autograd.grad(edge, x, grad_outputs=gy)
        return gx

    got, want = _both(f)
    _close(got, want)
    x0 = np.random.default_rng(0).standard_normal((3, 4))
    x = torch.tensor(x0, requires_grad=True)
    ((x.sin() * x) ** 2).sum().backward()
    _close(got, x.grad)


def test_multi_output_node_edges():
    def f(lib, x):
        a, b = lib.split(x.exp(), 2, dim=1) if lib is torch else lib.split(x.exp(), 2, dim=1)
        ea, eb = (lib.autograd.graph.get_gradient_edge(t) for t in (a, b))
        z = (a * 2).sum() + (b ** 2).sum()
        ga, gb, gx = lib.autograd.grad(z, [ea, eb, x], retain_graph=True)
        _close(ga, lib.full_like(a, 2.0))
        _close(gb, 2 * b)
        return gx

    _close(*_both(f))


def test_mixed_tensor_and_edge_outputs_and_unused():
    def f(lib, x):
        y = x * 3
        w = x.cos()
        ey = lib.autograd.graph.get_gradient_edge(y)
        gy = lib.ones_like(y)
        gx, gw = lib.autograd.grad([ey, w.sum()], [x, w], grad_outputs=[gy, None], allow_unused=True)
        unused = lib.autograd.graph.get_gradient_edge(x * 5)
        (none,) = lib.autograd.grad(y.sum(), unused, allow_unused=True)
        assert none is None
        return gx

    _close(*_both(f))


def test_errors():
    x = flow.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        flow.autograd.graph.get_gradient_edge(flow.randn(3))
    y = x * 2
    edge = flow.autograd.graph.get_gradient_edge(y)
    with pytest.raises(RuntimeError, match="grad_outputs"):
        flow.autograd.grad(edge, x)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        flow.autograd.grad(edge, x, grad_outputs=flow.ones(4))
    with pytest.raises(IndexError, match="output_nr"):
        flow.autograd.grad(y.sum(), flow.autograd.graph.GradientEdge(edge.node, 3))
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        flow.autograd.grad(y.sum(), flow.autograd.graph.get_gradient_edge(x * 5))
