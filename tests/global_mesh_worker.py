"""One process of the n-d SBP tests (tests/test_global_tensor.py runs it in a world of 4): global
tensors on a 2 x 2 mesh of processes, one SBP per mesh axis -- boxing between n-d SBPs, the ops'
per-axis signatures, and hybrid (data x tensor) parallel training against PyTorch."""
import sys

import numpy as np
import torch

import oneflow as flow
from global_graph_worker import TrainGraph
from global_worker import RANK, WORLD, X, torch_mse, torch_step

S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
MESH = None
CASES = ["boxing", "ops", "hybrid_training", "hybrid_graph", "moves_and_fallback"]


def component(x, sbp, placement):
    """This rank's component of x (nested balanced splits over the mesh; None for partial sums)."""
    flat = np.array(placement.ranks).reshape(-1).tolist()
    coords = np.unravel_index(flat.index(RANK), placement.hierarchy)
    for s, c, n in zip(sbp, coords, placement.hierarchy):
        if s._kind == "P":
            return None
        if s._kind == "S":
            x = np.array_split(x, n, axis=s._dim)[c]
    return x


def check(g, expected, sbp, what, rtol=1e-5, atol=1e-5):
    assert g.sbp == tuple(sbp), f"{what}: sbp {g.sbp} != {sbp}"
    assert tuple(g.shape) == expected.shape, f"{what}: shape {tuple(g.shape)} != {expected.shape}"
    np.testing.assert_allclose(g.numpy(), expected, rtol=rtol, atol=atol, err_msg=what)
    want = component(expected, sbp, g.placement)
    if want is not None:
        np.testing.assert_allclose(g.to_local().detach().numpy(), want, rtol=rtol, atol=atol, err_msg=what + " (local)")


def g_of(x, sbp, requires_grad=False):
    return flow.tensor(x, placement=MESH, sbp=sbp, requires_grad=requires_grad)


LAYOUTS = [(S0, S1), (S0, S0), (B, S1), (PS, B), (S1, PS), (B, B), (PS, PS), (S1, S0)]


def case_boxing():
    x = X((5, 7))  # 5 rows / 7 columns: uneven at both levels
    for src in LAYOUTS:
        g = g_of(x, src)
        check(g, x, src, f"made as {src}")
        for dst in LAYOUTS:
            check(g.to_global(sbp=dst), x, dst, f"{src} -> {dst}")
    loc = flow.tensor(component(x, (S0, S1), MESH))
    check(loc.to_global(MESH, (S0, S1)), x, (S0, S1), "local components -> (S0, S1)")
    r = flow.randn(6, 4, placement=MESH, sbp=(S0, S1))
    full = r.numpy()
    check(r, full, (S0, S1), "a random factory's one draw")


def case_ops():
    x, y, w = X((6, 4)), X((6, 4), 1), X((4, 5), 2)
    gx, gy = g_of(x, (S0, S1)), g_of(y, (S0, B))
    check(flow.exp(gx) * gy + 1, np.exp(x) * y + 1, (S0, S1), "pointwise on (S0, S1) x (S0, B)")
    check(gx.sum(), x.sum(), (PS, PS), "sum of (S0, S1)", atol=1e-4)
    check(gx.sum(0), x.sum(0), (PS, S0), "sum over rows", atol=1e-4)
    check(gx.mean(1), x.mean(1), (S0, PS), "mean over columns")
    check(gx.mean(), x.mean(), (PS, PS), "mean of all", atol=1e-5)
    check(flow.softmax(gy, dim=1), torch.softmax(torch.tensor(y), 1).numpy(), (S0, B), "softmax across rows")
    check(gx.t(), x.T, (S1, S0), "transpose moves both splits")
    data_by_model = g_of(x, (S0, B)) @ g_of(w, (B, S1))
    check(data_by_model, x @ w, (S0, S1), "matmul (S0, B) x (B, S1)")
    check(g_of(x, (S0, S1)) @ g_of(w, (B, S0)), x @ w, (S0, PS), "matmul contracting a split dim", atol=1e-4)


def _hybrid_model():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    fm = flow.nn.Sequential(flow.nn.Linear(5, 8), flow.nn.Tanh(), flow.nn.Linear(8, 3))
    fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    fm[0].to_global(MESH, (B, S0))  # column parallel: output features split along axis 1
    fm[2].to_global(MESH, (B, B))
    # row parallel: the second layer's input features split along axis 1 (partial sums)
    fm[2]._parameters["weight"] = fm[2].weight.to_global(sbp=(B, S1)).detach().requires_grad_()
    return fm, tm


def case_hybrid_graph():
    """The hybrid-parallel step as one nn.Graph (Adam), against PyTorch."""
    fm, tm = _hybrid_model()
    graph = TrainGraph(fm, flow.optim.Adam(fm.parameters(), lr=0.01), lambda out, y: ((out - y) ** 2).mean())
    topt = torch.optim.Adam(tm.parameters(), lr=0.01)
    for step in range(3):
        x, y = X((6, 5), 30 + step), X((6, 3), 40 + step)
        loss = graph(g_of(x, (S0, B)), g_of(y, (S0, B)))
        want = torch_step(topt, torch_mse(tm, x, y))
        np.testing.assert_allclose(loss.numpy(), want, rtol=1e-5, err_msg=f"hybrid graph loss {step}")
    assert len(graph._compiled) == 1
    for (n, p), tp in zip(fm.named_parameters(), tm.parameters()):
        check(p, tp.detach().numpy(), p.sbp, f"hybrid graph {n}")


def case_hybrid_training():
    """Data parallel along mesh axis 0 (the batch split), tensor parallel along axis 1 (the first
    layer's output features split, the second's input features): the steps follow PyTorch."""
    fm, tm = _hybrid_model()
    opt = flow.optim.SGD(fm.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        x, y = X((6, 5), 10 + step), X((6, 3), 20 + step)
        out = fm(g_of(x, (S0, B)))
        hidden = fm[1](fm[0](g_of(x, (S0, B))))
        assert hidden.sbp == (S0, S1) and fm[2](hidden).sbp == (S0, PS)
        loss = ((out - g_of(y, (S0, B))) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        want = torch_step(topt, torch_mse(tm, x, y))
        np.testing.assert_allclose(loss.numpy(), want, rtol=1e-5, err_msg=f"hybrid loss {step}")
    for (n, p), tp in zip(fm.named_parameters(), tm.parameters()):
        check(p, tp.detach().numpy(), p.sbp, f"hybrid {n}")


def case_moves_and_fallback():
    x = X((4, 2, 5, 5))
    g = g_of(x, (S0, S1))
    line = flow.placement("cpu", ranks=list(range(WORLD)))
    check(g.to_global(placement=line, sbp=S0), x, (S0,), "mesh -> line")
    back = g.to_global(placement=line, sbp=S0).to_global(placement=MESH, sbp=(B, S0))
    check(back, x, (B, S0), "line -> mesh")
    w = X((3, 2, 3, 3), 5)
    tconv = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w))
    conv = flow.nn.functional.conv2d(g_of(x, (S0, S0)), g_of(w, (B, B)))  # the batch split on both axes
    check(conv, tconv.numpy(), (S0, S0), "conv2d on a batch split twice", atol=1e-4)
    conv = flow.nn.functional.conv2d(g, g_of(w, (B, B)))  # channels split on axis 1: gathered there
    check(conv, tconv.numpy(), (S0, B), "conv2d with its channels split on one axis", atol=1e-4)
    emb, ids = X((10, 3), 6), np.array([[1, 2], [0, 9], [4, 4], [7, 3], [2, 8]])
    check(flow.nn.functional.embedding(g_of(ids, (S0, S0)), g_of(emb, (B, B))),
          torch.nn.functional.embedding(torch.tensor(ids), torch.tensor(emb)).numpy(), (S0, S0), "embedding")
    a, b = X((4, 6), 7), X((4, 6), 8)
    for red, sbp in [("sum", (PS, B)), ("none", (S0, B)), ("mean", (B, B))]:  # (the batch rule: rows only)
        got = flow.nn.functional.mse_loss(g_of(a, (S0, S1)), g_of(b, (S0, S1)), reduction=red)
        check(got, torch.nn.functional.mse_loss(torch.tensor(a), torch.tensor(b), reduction=red).numpy(), sbp,
              f"mse_loss {red}", atol=1e-5)
    labels = np.array([0, 2, 1, 2])
    ce = flow.nn.functional.cross_entropy(conv.flatten(1)[:, :3], g_of(labels, (S0, B)))  # (no n-d rule)
    want = torch.nn.functional.cross_entropy(tconv.flatten(1)[:, :3], torch.tensor(labels))
    check(ce, want.numpy(), (B, B), "cross_entropy (the broadcast fallback)", atol=1e-5)
    try:
        g.to_global(sbp=S0)
    except ValueError as e:
        assert "one per mesh axis" in str(e)
    else:
        raise AssertionError("a 1-d sbp on a mesh")


if __name__ == "__main__":
    flow.env.init()
    assert WORLD == 4, "the mesh tests run in a world of 4"
    MESH = flow.placement("cpu", ranks=[[0, 1], [2, 3]])
    for case in (CASES if sys.argv[1] == "all" else [sys.argv[1]]):
        globals()["case_" + case]()
    print(f"rank {RANK}: {sys.argv[1]} ok", flush=True)
