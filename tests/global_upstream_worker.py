"""One process of tests/test_global_upstream_fixes.py (a world of 2): what upstream OneFlow's own
global tests (docs/upstream_suite.md) found, each against PyTorch or OneFlow's documented
behaviour on the whole tensors."""
import os

import numpy as np
import torch

import oneflow as flow

RANK = int(os.environ["RANK"])
P = flow.placement("cpu", ranks=[0, 1])
P2 = flow.placement("cpu", ranks=[[0, 1]])
S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum


def X(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def case_type_as():
    """OneFlow's Tensor.type_as across kinds: a global target lays the result out as it (a local
    input is this process's component), a local target gives the component in its dtype."""
    g = flow.tensor(X((4, 3), 0), placement=P, sbp=S0).to(flow.float64)
    loc = flow.ones(2, 3)
    r = loc.type_as(g)
    assert r.is_global and r.placement == P and r.sbp == (S0,) and r.dtype == flow.float64, (r.sbp, r.dtype)
    assert tuple(r.shape) == (4, 3), r.shape
    r = flow.type_as(loc, g)
    assert r.is_global and r.sbp == (S0,), r.sbp
    h = flow.tensor(X((4, 3), 1), placement=P, sbp=B)
    r = h.type_as(g)
    assert r.is_global and r.sbp == (S0,) and r.dtype == flow.float64, (r.sbp, r.dtype)
    np.testing.assert_allclose(r.numpy(), X((4, 3), 1), rtol=1e-6)
    r = h.type_as(flow.zeros(1, dtype=flow.int32))
    assert not r.is_global and r.dtype == flow.int32 and tuple(r.shape) == (4, 3), (r.dtype, r.shape)


def case_module_global_weight():
    """Module.to_global moves a parameter that is global already (a module built with a global
    weight) to the module's new placement and layout."""
    w = flow.tensor(X((6, 4), 2), placement=P, sbp=B)
    emb = flow.nn.Embedding(6, 4, _weight=w).to_global(P2, (B, S0))
    assert emb.weight.placement == P2 and emb.weight.sbp == (B, S0), (emb.weight.placement, emb.weight.sbp)
    assert isinstance(emb.weight, flow.nn.Parameter)
    idx = flow.tensor([[1, 5], [0, 3]], placement=P2, sbp=(B, B))
    out = emb(idx)
    want = torch.nn.functional.embedding(torch.tensor([[1, 5], [0, 3]]), torch.tensor(X((6, 4), 2)))
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6)
    same = emb.weight
    emb.to_global(P2, (B, S0))
    assert emb.weight is same  # (already laid out so: kept)


def case_like_factories():
    """flow.zeros_like(g, placement=, sbp=) reads g's logical shape and dtype."""
    g = flow.tensor(X((5, 4), 3), placement=P, sbp=S0)
    for sbp in (B, S1, S0):
        z = flow.zeros_like(g, placement=P, sbp=sbp)
        assert z.sbp == (sbp,) and tuple(z.shape) == (5, 4) and z.dtype == flow.float32, (z.sbp, z.shape)
        np.testing.assert_array_equal(z.numpy(), np.zeros((5, 4), np.float32))
    z = flow.ones_like(g, dtype=flow.int32, placement=P2, sbp=(B, S1))
    assert z.placement == P2 and z.dtype == flow.int32
    np.testing.assert_array_equal(z.numpy(), np.ones((5, 4), np.int32))


def case_new():
    """Tensor.new of a global tensor: its placement and SBP (a split past the new dims broadcast)."""
    g = flow.tensor(X((8,), 4), placement=P, sbp=S0)
    for args, shape in (((), (0,)), ((2, 3), (2, 3)), (([1.0, 2.0, 3.0],), (3,))):
        y = g.new(*args)
        assert y.is_global and y.placement == P and y.sbp == (S0,) and tuple(y.shape) == shape, (args, y.sbp)
        assert y.dtype == g.dtype
    np.testing.assert_array_equal(g.new([1.0, 2.0, 3.0]).numpy(), [1.0, 2.0, 3.0])
    s = flow.tensor(X((4, 4), 5), placement=P, sbp=S1)
    assert s.new(3).sbp == (B,)


def case_where_condition_alone():
    """flow.where(cond) of a global condition: one global index tensor per dim (nonzero's
    as_tuple form unbinds the global result)."""
    c = X((4, 5), 6) > 0
    g = flow.tensor(c, placement=P, sbp=S0)
    r, t = flow.where(g), torch.where(torch.tensor(c))
    assert len(r) == len(t) == 2
    for a, b in zip(r, t):
        assert a.is_global
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    r = flow.nonzero(g, as_tuple=True)
    for a, b in zip(r, t):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def case_inplace_on_boxed():
    """An in-place op on a boxing's output keeps the gradient path (the output is no view of the
    receive buffer): `y = x.to_global(sbp=B); y[:, 1] = 0`."""
    a = X((6, 4), 7)
    for src, dst in ((S0, B), (B, S0), (PS, B), (S0, S1)):
        base = flow.tensor(a, placement=P, sbp=B, requires_grad=True)
        y = (base * 1).to_global(sbp=src).to_global(sbp=dst)
        y[:, 1] = 0.0
        y.mul_(3)
        (y.to_global(sbp=B) * flow.tensor(a, placement=P, sbp=B)).sum().backward()
        t = torch.tensor(a, requires_grad=True)
        ty = (t * 1).clone()
        ty[:, 1] = 0.0
        (ty * 3 * torch.tensor(a)).sum().backward()
        np.testing.assert_allclose(base.grad.numpy(), t.grad.numpy(), rtol=1e-5, err_msg=f"{src} -> {dst}")


def case_coin_flip():
    """A global CoinFlip: one draw (the first rank's), laid out as its sbp."""
    b = flow.nn.CoinFlip(10, 1, 0.5, placement=P, sbp=B)()
    s = flow.nn.CoinFlip(10, 1, 0.5, placement=P, sbp=S0)()
    assert b.sbp == (B,) and s.sbp == (S0,) and b.dtype == flow.int8 and tuple(s.shape) == (10,)
    whole = b.to_local().numpy()
    gathered = [flow.zeros(10, dtype=flow.int8) for _ in range(2)]
    flow.distributed.all_gather(gathered, b.to_local())
    np.testing.assert_array_equal(gathered[0].numpy(), gathered[1].numpy())  # (one draw)
    assert set(whole.tolist()) <= {0, 1}
    np.testing.assert_array_equal(s.numpy(), whole)  # (the same seed: the same flags, split)
    assert tuple(s.to_local().shape) == (5,)


def _global_copy(module, weight_sbp):
    """A copy of `module` with every parameter global on P (`weight_sbp` for the matrices, broadcast
    for the vectors), as upstream's tests lay out a module's weights one by one."""
    import copy
    g = copy.deepcopy(module)
    for name, p in list(g.named_parameters()):
        sbp = weight_sbp if p.dim() > 1 else B
        setattr(g, name, flow.nn.Parameter(p.detach().to_global(placement=P, sbp=B).to_global(sbp=sbp)))
    return g


def _check_against_local(local_module, global_module, inputs, run):
    """run(module, *inputs) on the local module with the whole inputs and on the global one with the
    inputs global (each `(array, sbp)`): the same outputs and the same gradients of the inputs and
    the parameters, forward and backward."""
    loc = [flow.tensor(a, requires_grad=True) for a, _ in inputs]
    glo = [flow.tensor(a).to_global(placement=P, sbp=B).to_global(sbp=s).detach().requires_grad_()
           for a, s in inputs]
    out_l, out_g = run(local_module, *loc), run(global_module, *glo)
    w = flow.tensor(X(tuple(out_l.shape), 9))
    (out_l * w).sum().backward()
    (out_g * w.to_global(placement=P, sbp=B)).sum().backward()
    np.testing.assert_allclose(out_g.numpy(), out_l.detach().numpy(), rtol=1e-5, atol=1e-5)
    for a, b in zip(glo, loc):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (name, a), b in zip(global_module.named_parameters(), local_module.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


def case_recurrent_layers():
    """nn.LSTM / nn.GRU / nn.RNN (their lstm_layer / gru_layer table ops: the broadcast signature)
    and the LSTM / GRU cells (their zero states and GRU's gate scales made beside the input:
    placed_like) with global weights and a global input split along the batch: the local module's
    results on the whole input (upstream's test_global_rnn, gru_cell, lstm_cell)."""
    for make in (lambda: flow.nn.LSTM(6, 5, num_layers=2), lambda: flow.nn.GRU(6, 5, bidirectional=True),
                 lambda: flow.nn.RNN(6, 5)):
        for weight_sbp in (B, S0, S1):
            flow.manual_seed(0)
            m = make()
            _check_against_local(m, _global_copy(m, weight_sbp), [(X((3, 4, 6), 1), S1)],
                                 lambda mod, x: mod(x)[0])
    for cell in (flow.nn.GRUCell, flow.nn.LSTMCell):
        flow.manual_seed(0)
        m = cell(6, 5)

        def steps(mod, x):
            h = None
            for t in range(x.shape[0]):
                h = mod(x[t], h)
            return h if cell is flow.nn.GRUCell else h[0]
        _check_against_local(m, _global_copy(m, S1), [(X((3, 4, 6), 2), S1)], steps)


def case_affine_grid():
    """F.affine_grid of a global theta (its base grid made beside theta: placed_like): the grid of
    the whole theta, forward and backward (upstream's test_global_affine_grid)."""
    class Grid(flow.nn.Module):
        def __init__(self, size):
            super().__init__()
            self.size = size

        def forward(self, theta):
            return flow.nn.functional.affine_grid(theta, self.size, align_corners=False)
    for size, theta in (((4, 3, 5, 6), X((4, 2, 3), 3)), ((2, 1, 3, 4, 5), X((2, 3, 4), 4))):
        for sbp in (S0, B):
            _check_against_local(Grid(size), Grid(size), [(theta, sbp)], lambda mod, t: mod(t))


if __name__ == "__main__":
    flow.env.init()
    case_type_as()
    case_module_global_weight()
    case_like_factories()
    case_new()
    case_where_condition_alone()
    case_inplace_on_boxed()
    case_coin_flip()
    case_recurrent_layers()
    case_affine_grid()
    print(f"rank {RANK}: ok", flush=True)
