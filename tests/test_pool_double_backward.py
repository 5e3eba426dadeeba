"""Double backward of the pools against PyTorch: `autograd.grad(dx, [x, dy], ...)` where dx is a
pool's input gradient (upstream's test_higher_derivative_pool.py). The gradient ops take the
pool's input (src/ops/table/pool.yaml), so x is part of dx's graph and its gradient is zeros, as
PyTorch's; dy's is the pool of the outer gradient."""
import numpy as np
import pytest
import torch

import oneflow as flow

CASES = [
    ("max_pool1d", (2, 3, 11), dict(kernel_size=4, stride=2, padding=1, dilation=2, ceil_mode=True)),
    ("max_pool2d", (2, 2, 10, 9), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool3d", (1, 2, 6, 7, 6), dict(kernel_size=2, stride=1, padding=1, ceil_mode=True)),
    ("avg_pool1d", (2, 3, 11), dict(kernel_size=4, stride=2, padding=2, ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d", (2, 2, 10, 9), dict(kernel_size=3, stride=2, padding=1, divisor_override=2)),
    ("avg_pool3d", (1, 2, 6, 7, 6), dict(kernel_size=3, stride=2, padding=1, count_include_pad=True)),
    ("adaptive_avg_pool1d", (2, 3, 11), dict(output_size=4)),
    ("adaptive_avg_pool2d", (2, 2, 10, 9), dict(output_size=(3, 4))),
    ("adaptive_avg_pool3d", (1, 2, 6, 7, 5), dict(output_size=(2, 3, 2))),
    ("adaptive_max_pool1d", (2, 3, 11), dict(output_size=4)),
    ("adaptive_max_pool2d", (2, 2, 10, 9), dict(output_size=(3, 4))),
    ("adaptive_max_pool3d", (1, 2, 6, 7, 5), dict(output_size=(2, 3, 2))),
    ("max_pool2d", (3, 8, 8), dict(kernel_size=2)),  # unbatched
]


def _grads(lib, name, xn, dyn, dxn, kw):
    x = lib.tensor(xn, requires_grad=True)
    y = getattr(lib.nn.functional, name)(x, **kw)
    dy = lib.tensor(dyn(tuple(y.shape)), requires_grad=True)
    (dx,) = lib.autograd.grad(y, x, dy, create_graph=True)
    ddx, ddy = lib.autograd.grad(dx, [x, dy], lib.tensor(dxn), create_graph=True)
    return y, dx, ddx, ddy


@pytest.mark.parametrize("name,shape,kw", CASES, ids=[f"{c[0]}-{len(c[1])}d" for c in CASES])
def test_pool_grad_of_input_grad_matches_torch(name, shape, kw):
    rng = np.random.default_rng(1)
    xn = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float64) / 7  # distinct maxima
    dxn = rng.standard_normal(shape)
    dy_cache = {}

    def dyn(s):
        if s not in dy_cache:
            dy_cache[s] = rng.standard_normal(s)
        return dy_cache[s]

    got = _grads(flow, name, xn, dyn, dxn, kw)
    want = _grads(torch, name, xn, dyn, dxn, kw)
    for g, w, what in zip(got, want, ("y", "dx", "ddx", "ddy")):
        assert tuple(g.shape) == tuple(w.shape), what
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=what)
    assert not got[2].detach().numpy().any()  # x's gradient: zeros


def test_pool_grad_ops_check_their_input():
    dy = flow.randn(1, 1, 2, 2)
    idx = flow.zeros(1, 1, 2, 2, dtype=flow.int64)
    with pytest.raises(RuntimeError, match="max_pool_grad.*spatial_dims=2 does not fit input"):
        flow._C.max_pool_grad(dy, idx, flow.randn(4, 4), 2)
    with pytest.raises(RuntimeError, match="adaptive_avg_pool_grad.*spatial_dims=4"):
        flow._C.adaptive_avg_pool_grad(dy, flow.randn(1, 1, 4, 4), 4)
    with pytest.raises(RuntimeError, match="avg_pool_grad takes one parameter per spatial dim"):
        flow._C.avg_pool_grad(dy, flow.randn(1, 1, 4, 4), [2, 2], [2], [0, 0], False, True)
