"""One process of a global-tensor test (tests/test_global_tensor.py starts it through the
launcher): `global_worker.py CASE`. Every process knows the logical inputs (fixed seeds), so each
checks the global results -- their values, SBP and this rank's component -- against numpy /
PyTorch on the whole tensors."""
import os
import sys

import numpy as np
import torch

import oneflow as flow
import oneflow.distributed as dist

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
P = None
S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
S = flow.sbp.split
SBPS = {"S0": S0, "S1": S1, "B": B, "P": PS}
CASES = ["boxing", "ops", "autograd", "inplace_and_errors", "train", "nn_rules", "save_load", "tensor_protocols",
         "functions_and_hooks", "parameters", "leaf_hook", "dim_rules"]


def X(shape=(5, 7), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def part(x, dim):
    """This rank's slice along dim (the first size % WORLD ranks one element more)."""
    base, extra = divmod(x.shape[dim], WORLD)
    sizes = [base + (r < extra) for r in range(WORLD)]
    lo = sum(sizes[:RANK])
    return np.take(x, range(lo, lo + sizes[RANK]), axis=dim)


def check(g, expected, sbp, what, rtol=1e-5, atol=1e-5):
    assert isinstance(g, flow.Tensor) and g.is_global, f"{what}: not global ({type(g).__name__})"
    assert g.sbp == (sbp,), f"{what}: sbp {g.sbp} != {sbp}"
    assert tuple(g.shape) == expected.shape, f"{what}: shape {tuple(g.shape)} != {expected.shape}"
    np.testing.assert_allclose(g.numpy(), expected, rtol=rtol, atol=atol, err_msg=what)
    if RANK not in g.placement.ranks.tolist():  # (a process outside the placement holds no component)
        assert g.to_local().numel() == 0, f"{what}: a component outside the placement"
        return
    loc = g.to_local().detach().numpy()
    index = g.placement.ranks.tolist().index(RANK)
    if sbp._kind == "S":
        sizes = [len(a) for a in np.array_split(np.arange(expected.shape[sbp._dim]), len(g.placement.ranks))]
        lo = sum(sizes[:index])
        np.testing.assert_allclose(loc, np.take(expected, range(lo, lo + sizes[index]), axis=sbp._dim), rtol=rtol,
                                   atol=atol, err_msg=what + " (local)")
    elif sbp._kind == "B":
        np.testing.assert_allclose(loc, expected, rtol=rtol, atol=atol, err_msg=what + " (local)")


def expect_errors(cases):
    """Each (call, exception type, text of its message): the call raises it."""
    for bad, exc, msg in cases:
        try:
            bad()
        except exc as e:
            assert msg in str(e), f"{msg!r} not in {e}"
        else:
            raise AssertionError(f"no {exc.__name__} for {msg}")


def torch_mse(model, x, y):
    """The reference's loss: PyTorch's mean squared error of model(x) against y (numpy arrays)."""
    return ((model(torch.tensor(x)) - torch.tensor(y)) ** 2).mean()


def torch_step(opt, loss):
    """One PyTorch step on `loss` (the reference); the loss's value."""
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach().numpy()


def g_of(x, sbp, requires_grad=False):
    return flow.tensor(x, placement=P, sbp=sbp, requires_grad=requires_grad)


def case_boxing():
    x = X()
    for a, sa in SBPS.items():
        for b, sb in SBPS.items():
            g = g_of(x, sa)
            check(g, x, sa, f"tensor({a})")
            check(g.to_global(sbp=sb), x, sb, f"{a} -> {b}")
    # a local component per rank becomes a split tensor (uneven sizes: 5 rows over the ranks)
    g = flow.tensor(part(x, 0)).to_global(P, S0)
    check(g, x, S0, "local slices to_global")
    # OneFlow's names: local_to_global (check_meta=False: equal components, no size exchange),
    # global_to_global
    same = flow.tensor([0.0, 1.0]).local_to_global(P, S0, check_meta=False)
    check(same, np.tile([0.0, 1.0], WORLD).astype(np.float32), S0, "local_to_global(check_meta=False)")
    check(same.global_to_global(sbp=B), np.tile([0.0, 1.0], WORLD).astype(np.float32), B, "global_to_global")
    for bad, exc in [(lambda: same.local_to_global(P, B), RuntimeError), (lambda: flow.ones(2).global_to_global(),
                                                                           RuntimeError),
                     (lambda: same.global_to_global(), ValueError)]:
        try:
            bad()
        except exc:
            pass
        else:
            raise AssertionError(f"no {exc.__name__}")
    mine = flow.tensor(X((2, 3), 100 + RANK))  # different on each rank: broadcast takes the first's
    g = mine.to_global(P, B)
    np.testing.assert_array_equal(mine.numpy(), X((2, 3), 100 + RANK))  # the caller's tensor untouched
    check(g, X((2, 3), 100), B, "local -> broadcast: the first rank's value")
    flow.manual_seed(RANK)  # each rank's own random stream: random ops on broadcast tensors still agree
    w = g_of(X((3, 4), 7), B)
    flow.nn.init.normal_(w)
    d = flow.nn.functional.dropout(g_of(X((8, 8), 8), B, True), 0.5)
    for t in (w, d):
        every = [flow.zeros(*t.shape) for _ in range(WORLD)]
        dist.all_gather(every, t.to_local().detach())
        assert all(np.array_equal(e.numpy(), every[0].numpy()) for e in every), "one draw on every rank"
    r = flow.randn(6, 4, placement=P, sbp=S1)  # one logical tensor: the same on every rank
    every = [flow.zeros(6, 4) for _ in range(WORLD)]
    dist.all_gather(every, r.to_global(sbp=B).to_local())
    for e in every:
        np.testing.assert_array_equal(e.numpy(), every[0].numpy())


def case_ops():
    x, y, w = X(), X((5, 7), 1), X((7, 3), 2)
    tx, ty, tw = torch.tensor(x), torch.tensor(y), torch.tensor(w)
    gx, gy = g_of(x, S0), g_of(y, S0)
    check(gx * 2 + gy, (tx * 2 + ty).numpy(), S0, "pointwise S0")
    bias = g_of(x[:1], B)                                  # a (1, 7) row broadcast over the rows
    check(flow.relu(gx - bias), torch.relu(tx - tx[:1]).numpy(), S0, "broadcast row")
    col = g_of(x[:, :1], B)                                # a (5, 1) column: sliced along with the rows
    check(gx / (col.abs() + 1), (tx / (tx[:, :1].abs() + 1)).numpy(), S0, "broadcast column")
    check(gx + g_of(y, S1), (tx + ty).numpy(), S0, "S0 + S1 (the second boxed)")
    check(g_of(x, PS) + g_of(y, PS), (tx + ty).numpy(), PS, "P + P")
    check(g_of(x, PS) * 3, (tx * 3).numpy(), PS, "P * 3")
    check(g_of(x, PS).exp(), tx.exp().numpy(), B, "exp(P): reduced first")
    gw = g_of(w, B)
    check(flow.matmul(gx, gw), (tx @ tw).numpy(), S0, "S0 x B")
    check(g_of(x, B) @ g_of(w, S1), (tx @ tw).numpy(), S1, "B x S1")
    check(flow.matmul(g_of(x, S1), g_of(w, S0)), (tx @ tw).numpy(), PS, "S1 x S0")
    lin_w, lin_b = X((3, 7), 3), X((3,), 4)
    out = flow.nn.functional.linear(gx, g_of(lin_w, B), g_of(lin_b, B))
    check(out, torch.nn.functional.linear(tx, torch.tensor(lin_w), torch.tensor(lin_b)).numpy(), S0, "linear")
    out = flow.nn.functional.linear(g_of(x, B), g_of(lin_w, S0), g_of(lin_b, S0))
    check(out, torch.nn.functional.linear(tx, torch.tensor(lin_w), torch.tensor(lin_b)).numpy(), S1,
          "linear, output features split")
    out = flow.nn.functional.linear(g_of(x, S1), g_of(lin_w, S1), g_of(lin_b, B))
    check(out, torch.nn.functional.linear(tx, torch.tensor(lin_w), torch.tensor(lin_b)).numpy(), PS,
          "linear, input features split (the bias once)", atol=1e-4)
    check(gx.sum(dim=1), tx.sum(1).numpy(), S0, "sum over another dim")
    check(gx.sum(dim=0), tx.sum(0).numpy(), PS, "sum over the split dim")
    check(gx.mean(), tx.mean().numpy(), PS, "mean of everything")
    check(gx.mean(dim=0, keepdim=True), tx.mean(0, keepdim=True).numpy(), PS, "mean over the split dim")
    check(g_of(x, S1).sum(dim=0), tx.sum(0).numpy(), S0, "split dim moves after the reduction")
    check(gx.softmax(dim=1), tx.softmax(1).numpy(), S0, "softmax along another dim")
    check(gx.softmax(dim=0), tx.softmax(0).numpy(), B, "softmax along the split dim: broadcast")
    check(gx.t(), tx.t().numpy(), S1, "t()")
    check(gx.permute(1, 0), tx.permute(1, 0).numpy(), S1, "permute")
    check(gx.cumsum(dim=0), tx.cumsum(0).numpy(), B, "a scan along the split dim: broadcast")
    check(gx[1:3], tx[1:3].numpy(), B, "indexing")
    assert gx.shape == (5, 7) and gx.dim() == 2 and gx.numel() == 35 and gx.dtype == flow.float32
    assert gx.is_global and not flow.ones(2).is_global
    check(flow.hierarchical_parallel_cast(gx, ["B"]), x, B, "legacy hierarchical_parallel_cast")
    check(flow.parallel_cast(g_of(x, B), distribute=flow.distribute.split(1)), x, S1, "legacy parallel_cast")
    check(flow.eager_nccl_all_reduce(g_of(x, PS), "0:0-1"), x, B, "legacy eager_nccl_all_reduce")
    assert float(g_of(x, S0).sum().item()) == np.float32(x.sum()) or abs(float(gx.sum().item()) - x.sum()) < 1e-4


def case_autograd():
    x, w, b = X((6, 5)), X((5, 4), 1), X((4,), 2)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    loss_t = (torch.relu(tx @ tw + tb) ** 2).mean()
    loss_t.backward()
    # data parallel: a split batch, broadcast parameters (their gradients summed over the ranks)
    gx, gw, gb = g_of(x, S0, True), g_of(w, B, True), g_of(b, B, True)
    loss = (flow.relu(gx @ gw + gb) ** 2).mean()
    check(loss, loss_t.detach().numpy(), PS, "loss")
    loss.backward()
    check(gw.grad, tw.grad.numpy(), B, "weight grad (data parallel)")
    check(gb.grad, tb.grad.numpy(), B, "bias grad (data parallel)")
    check(gx.grad, tx.grad.numpy(), S0, "input grad")
    # a parameter used by a split op and by a broadcast one (a regulariser), two backward passes
    # accumulating: the end-of-pass reduction adds only the other ranks' parts of the split use
    tw2 = torch.tensor(w, requires_grad=True)
    for k in range(2):
        ((tx.detach() @ tw2).relu().mean() + (tw2 * tw2).sum() * 0.1 * (k + 1)).backward()
    gw2 = g_of(w, B, True)
    for k in range(2):
        ((gx.detach() @ gw2).relu().mean() + (gw2 * gw2).sum() * 0.1 * (k + 1)).backward()
    check(gw2.grad, tw2.grad.numpy(), B, "mixed uses, accumulated over two passes")
    # model parallel: weight split by output features, then the inner dim (a partial sum)
    w2 = X((4, 3), 3)
    tx2, tw_a, tw_b = (torch.tensor(a, requires_grad=True) for a in (x, w, w2))
    (torch.tanh(tx2 @ tw_a) @ tw_b).sum().backward()
    gx2, ga, gb2 = g_of(x, B, True), g_of(w, S1, True), g_of(w2, S0, True)
    h = flow.tanh(gx2 @ ga)
    assert h.sbp == (S1,)
    out = h @ gb2
    assert out.sbp == (PS,)
    out.sum().backward()
    check(ga.grad, tw_a.grad.numpy(), S1, "column-split weight grad")
    check(gb2.grad, tw_b.grad.numpy(), S0, "row-split weight grad")
    check(gx2.grad, tx2.grad.numpy(), B, "broadcast input grad (summed)")
    # activation checkpointing over global tensors: the same gradients, recomputed
    from oneflow.utils.checkpoint import checkpoint
    for reentrant in (False, True):
        gx3, ga3, gb3 = g_of(x, B, True), g_of(w, S1, True), g_of(w2, S0, True)
        out = checkpoint(lambda a, b: flow.tanh(gx3 @ a) @ b, ga3, gb3, use_reentrant=reentrant)
        assert out.sbp == (PS,)
        out.sum().backward()
        check(ga3.grad, tw_a.grad.numpy(), S1, f"checkpointed column-split weight grad ({reentrant})")
        check(gx3.grad, tx2.grad.numpy(), B, f"checkpointed broadcast input grad ({reentrant})")


def case_inplace_and_errors():
    x = X()
    g = g_of(x, S0)
    g.add_(1)
    check(g, x + 1, S0, "add_")
    g.mul_(g_of(x[:1], B))
    check(g, (x + 1) * x[:1], S0, "mul_ by a broadcast row")
    # Note [In-place ops that box] (dispatch.py): the broadcast tensor is added to on the split
    # layout the signature picks, then boxed back: it stays broadcast
    h = g_of(x, B)
    assert h.add_(g_of(x, S0)) is h
    check(h, x + x, B, "broadcast add_ of a split tensor")
    expect_errors([
        (lambda: g + flow.ones(5, 7), RuntimeError, "expected all tensors to be global"),
        (lambda: g.to_global(sbp=flow.sbp.split(2)), IndexError, "split"),
        (lambda: flow.ones(5).to_global(P, [S0, S1]), ValueError, "one per mesh axis"),
        (lambda: flow.ones(2).to_local(), RuntimeError, "local tensor"),
        (lambda: flow.randn(3, placement=P), TypeError, "both placement and sbp"),
    ])
    try:
        flow.ones(2).to_global(flow.placement("cpu", ranks=[WORLD]), B)
    except ValueError as e:
        assert "processes" in str(e)
    else:
        raise AssertionError("a placement naming a rank the job does not have")


def case_train():
    """A module made global and trained: data parallel (broadcast parameters, a split batch) with
    SGD, and the first layer split by output features (model parallel) with Adam; the losses and
    parameters follow PyTorch training on the whole batch."""
    for opt_name, kw, first_sbp in [("SGD", dict(lr=0.1, momentum=0.9), B), ("Adam", dict(lr=0.01), S0)]:
        torch.manual_seed(0)
        tm = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
        fm = flow.nn.Sequential(flow.nn.Linear(5, 8), flow.nn.Tanh(), flow.nn.Linear(8, 3))
        fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
        fm[0].to_global(P, first_sbp)
        fm[2].to_global(P, B)
        assert all(p.is_global for p in fm.parameters()) and fm[0].weight.sbp == (first_sbp,)
        opt, topt = getattr(flow.optim, opt_name)(fm.parameters(), **kw), getattr(torch.optim, opt_name)(tm.parameters(), **kw)
        for step in range(3):
            x, y = X((7, 5), 10 + step), X((7, 3), 20 + step)
            loss = ((fm(g_of(x, S0)) - g_of(y, S0)) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            check(loss, torch_step(topt, torch_mse(tm, x, y)), PS, f"{opt_name} loss {step}")
        for (n, p), (_, tp) in zip(fm.named_parameters(), tm.named_parameters()):
            check(p, tp.detach().numpy(), p.sbp[0], f"{opt_name} {n}")


def case_nn_rules():
    """A CNN step on a split batch keeps the batch split through conv / pool / flatten / linear and
    ends in a partial-sum loss; layer_norm, embedding, reshape and the losses' reductions."""
    F, tF = flow.nn.functional, torch.nn.functional
    x, cw, lw = X((5, 2, 6, 6)), X((3, 2, 3, 3), 1), X((4, 27), 2)
    tgt = np.array([0, 3, 1, 2, 3])
    tx, tcw, tlw = (torch.tensor(a, requires_grad=True) for a in (x, cw, lw))
    gx, gcw, glw = g_of(x, S0, True), g_of(cw, B, True), g_of(lw, B, True)
    h = F.max_pool2d(F.relu(F.conv2d(gx, gcw)), 2)
    assert h.sbp == (S0,) and tuple(h.shape) == (5, 3, 2, 2)
    th = tF.max_pool2d(tF.relu(tF.conv2d(tx, tcw)), 2)
    flat = h.flatten(1)
    assert flat.sbp == (S0,)
    logits = F.linear(F.pad(flat, (0, 15)), glw)
    tlogits = tF.linear(tF.pad(th.flatten(1), (0, 15)), tlw)
    check(logits, tlogits.detach().numpy(), S0, "conv-pool-linear logits")
    loss = F.cross_entropy(logits, g_of(tgt, S0))
    tloss = tF.cross_entropy(tlogits, torch.tensor(tgt))
    check(loss, tloss.detach().numpy(), PS, "cross_entropy mean")
    loss.backward()
    tloss.backward()
    check(gcw.grad, tcw.grad.numpy(), B, "conv weight grad")
    check(glw.grad, tlw.grad.numpy(), B, "linear weight grad")
    check(gx.grad, tx.grad.numpy(), S0, "input grad")
    # class weights and ignored targets: the mean divides by the weights of every rank's targets
    cls_w, tgt2 = X((4,), 3) ** 2, np.array([0, -100, 1, 3, -100])
    got = F.nll_loss(F.log_softmax(logits, dim=1), g_of(tgt2, S0), weight=g_of(cls_w, B), ignore_index=-100)
    want = tF.nll_loss(tF.log_softmax(tlogits, 1), torch.tensor(tgt2), weight=torch.tensor(cls_w))
    check(got, want.detach().numpy(), PS, "weighted nll_loss with ignored targets")
    # batch norm on a split batch: the whole batch's statistics (running ones updated alike)
    bn, tbn = flow.nn.BatchNorm2d(2), torch.nn.BatchNorm2d(2)
    bn.to_global(P, B)
    tx3 = torch.tensor(x, requires_grad=True)
    gx3 = g_of(x, S0, True)
    out = bn(gx3)
    tout = tbn(tx3)
    check(out, tout.detach().numpy(), S0, "batch_norm (training)")
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    check(bn.weight.grad, tbn.weight.grad.numpy(), B, "batch_norm weight grad")
    check(gx3.grad, tx3.grad.numpy(), S0, "batch_norm input grad")
    check(bn.running_var, tbn.running_var.numpy(), B, "running_var")
    bn.eval()
    tbn.eval()
    check(bn(gx3), tbn(tx3).detach().numpy(), S0, "batch_norm (eval)")
    y = X((5, 4), 4)
    for red, sbp in [("mean", PS), ("sum", PS), ("none", S0)]:
        check(F.mse_loss(logits, g_of(y, S0), reduction=red),
              tF.mse_loss(tlogits, torch.tensor(y), reduction=red).detach().numpy(), sbp, "mse " + red)
    # more elementwise losses (the table's `sbp: elementwise_loss`): mean over every element
    a, b, t = X((6,), 8), X((6,), 9), np.sign(X((6,), 10)).astype(np.float32)
    for red, sbp in [("mean", PS), ("sum", PS), ("none", S0)]:
        check(F.margin_ranking_loss(g_of(a, S0), g_of(b, S0), g_of(t, S0), margin=0.1, reduction=red),
              tF.margin_ranking_loss(torch.tensor(a), torch.tensor(b), torch.tensor(t), margin=0.1,
                                     reduction=red).numpy(), sbp, "margin_ranking_loss " + red)
        check(F.hinge_embedding_loss(logits, g_of(np.sign(y), S0), reduction=red),
              tF.hinge_embedding_loss(tlogits, torch.tensor(np.sign(y)), reduction=red).detach().numpy(), sbp,
              "hinge_embedding_loss " + red)
        check(F.poisson_nll_loss(logits, g_of(np.abs(y), S0), reduction=red),
              tF.poisson_nll_loss(tlogits, torch.tensor(np.abs(y)), reduction=red).detach().numpy(), sbp,
              "poisson_nll_loss " + red, rtol=1e-4, atol=1e-4)
    ln_w = X((4,), 5)
    check(F.layer_norm(logits, (4,), g_of(ln_w, B)), tF.layer_norm(tlogits, (4,), torch.tensor(ln_w)).detach().numpy(),
          S0, "layer_norm")
    emb = X((10, 3), 6)
    ids = np.array([[1, 2], [0, 9], [4, 4], [7, 3], [2, 8]])
    check(F.embedding(g_of(ids, S0), g_of(emb, B)), tF.embedding(torch.tensor(ids), torch.tensor(emb)).numpy(), S0,
          "embedding")
    z = g_of(X((5, 12), 7), S0)
    tz = torch.tensor(X((5, 12), 7))
    check(z.view(5, 3, 4), tz.view(5, 3, 4).numpy(), S0, "view keeping the rows")
    check(z.reshape(-1, 2, 6), tz.reshape(-1, 2, 6).numpy(), S0, "reshape -1 rows")
    # merging the split rows with the rest: each rank's rows a contiguous block when the ranks
    # divide the 5 rows (the balanced split of 60 is then theirs), whole otherwise
    check(flow.reshape(z, (60,)), tz.reshape(60).numpy(), S0 if 5 % WORLD == 0 else B, "reshape across rows")


def case_save_load():
    """flow.save gathers a global module's state to one rank, which writes it; flow.load reads it on
    one rank and gives every rank broadcast global tensors, which a global module loads."""
    import tempfile
    path = os.path.join(tempfile.gettempdir(), f"global_ckpt_{os.environ['MASTER_PORT']}")
    m = flow.nn.Linear(5, 4)
    m.to_global(P, B)
    m2 = flow.nn.Linear(5, 4).to_global(P, S0)  # a split weight: loads by slicing
    try:
        flow.save(m.state_dict(), path)
    except ValueError as e:
        assert "global_dst_rank" in str(e)
    flow.save(m.state_dict(), path, global_dst_rank=WORLD - 1)
    sd = flow.load(path, global_src_rank=WORLD - 1)
    assert sd["weight"].is_global and sd["weight"].sbp == (B,)
    m2.load_state_dict(sd)
    check(m2.weight, m.weight.numpy(), S0, "loaded into a split weight")
    check(m2.bias, m.bias.numpy(), S0, "loaded bias")
    # a global model and its Adam state saved, loaded into fresh ones: the next steps agree
    def make():
        flow.manual_seed(1)
        net = flow.nn.Linear(5, 4).to_global(P, S0)
        return net, flow.optim.Adam(net.parameters(), lr=0.1)

    def step(net, opt, seed):
        loss = (net(g_of(X((6, 5), seed), S0)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    a, oa = make()
    for k in range(2):
        step(a, oa, 30 + k)
    flow.save({"model": a.state_dict(), "opt": oa.state_dict()}, path + "_adam", global_dst_rank=0)
    ck = flow.load(path + "_adam", global_src_rank=0)
    b, ob = make()
    b.load_state_dict(ck["model"])
    ob.load_state_dict(ck["opt"])
    assert ob.state[b.weight]["exp_avg"].sbp == (S0,) and not ob.state[b.weight]["step"].is_global
    step(a, oa, 40)
    step(b, ob, 40)
    check(b.weight, a.weight.numpy(), S0, "resumed Adam step")
    plain = flow.load(path) if RANK == WORLD - 1 else None
    if plain is not None:
        np.testing.assert_array_equal(plain["weight"].numpy(), m.weight.numpy())


def case_tensor_protocols():
    """Note [A global tensor is a Tensor]: isinstance holds; Python's number, sequence and array
    protocols and the remaining operators act on the logical value."""
    import copy
    import operator
    import pickle
    x = X((5, 3))
    g = g_of(x, S0)
    assert isinstance(g, flow.Tensor) and flow.is_tensor(g) and g.is_global and type(g) is not flow.Tensor
    np.testing.assert_allclose(float(g.sum()), x.sum(), rtol=1e-5)
    n = g_of(np.array([7, -3, 12, 5, 9], dtype=np.int64), S0)
    assert int(n[2]) == 12 and operator.index(n[0]) == 7 and list(range(10))[n[0]] == 7
    rows = list(g)
    assert len(rows) == 5 and all(isinstance(r, flow.Tensor) and r.is_global for r in rows)
    np.testing.assert_allclose(np.stack([r.numpy() for r in rows]), x)
    np.testing.assert_allclose(np.stack([r.numpy() for r in reversed(g)]), x[::-1])
    assert float(x[3, 1]) in g and 1e6 not in g
    np.testing.assert_allclose(np.asarray(g), x)
    assert np.asarray(g, dtype=np.float64).dtype == np.float64
    a = n.numpy()
    for got, want, what in [(n << 2, a << 2, "<<"), (n >> 1, a >> 1, ">>"), (n // 2, a // 2, "//"), (n % 4, a % 4, "%"),
                            (3 & n, 3 & a, "reflected &"), (1 | n, 1 | a, "reflected |"), (6 ^ n, 6 ^ a, "reflected ^"),
                            (100 // n, 100 // a, "reflected //"), (50 % n, 50 % a, "reflected %"), (1 << n, 1 << a, "reflected <<")]:
        np.testing.assert_array_equal(got.numpy(), want, err_msg=what)
    m = g_of(a, S0)
    m //= 2
    m <<= 1
    m |= 1
    assert m.sbp == (S0,), "in-place operators keep the split"
    np.testing.assert_array_equal(m.numpy(), ((a // 2) << 1) | 1)
    leaf = g_of(x, B, requires_grad=True)
    twin = copy.deepcopy(leaf)
    assert twin.is_global and twin.sbp == leaf.sbp and twin.requires_grad and twin.to_local() is not leaf.to_local()
    np.testing.assert_allclose(twin.numpy(), x)
    expect_errors([(lambda: pickle.dumps(g), RuntimeError, "global_dst_rank"),
                   (lambda: g.__dlpack__(), RuntimeError, "to_local"),
                   (lambda: operator.index(g), TypeError, "single element"),
                   (lambda: iter(g.sum()), TypeError, "0-d"),
                   (lambda: flow.autograd.grad(g.sum(), [g]), RuntimeError, "does not require grad")])


def case_functions_and_hooks():
    """Note [Functions on global tensors]: a custom autograd.Function and a module's full backward
    hook over global tensors."""
    class SquareThenMatmul(flow.autograd.Function):
        @staticmethod
        def forward(ctx, a, w):
            ctx.save_for_backward(a, w)
            return (a * a) @ w

        @staticmethod
        def backward(ctx, g):
            a, w = ctx.saved_tensors
            assert a.is_global and w.is_global and g.is_global and g.sbp == (S0,)
            return 2 * a * (g @ w.T), (a * a).T @ g  # (the weight's: a partial sum, reduced to broadcast)

    x, w = X((6, 5)), X((5, 4), 1)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    torch.tanh((tx * tx) @ tw).sum().backward()
    gx, gw = g_of(x, S0, True), g_of(w, B, True)
    out = SquareThenMatmul.apply(gx, gw)
    assert out.is_global and out.sbp == (S0,) and out.requires_grad
    check(out, ((tx * tx) @ tw).detach().numpy(), S0, "Function forward")
    flow.tanh(out).sum().backward()
    check(gx.grad, tx.grad.numpy(), S0, "Function: split input grad")
    check(gw.grad, tw.grad.numpy(), B, "Function: broadcast weight grad")
    # autograd.grad / autograd.backward(inputs=) over global tensors: global gradients
    gx, gw = g_of(x, S0, True), g_of(w, B, True)
    dx, dw = flow.autograd.grad(flow.tanh(SquareThenMatmul.apply(gx, gw)).sum(), [gx, gw])
    check(dx, tx.grad.numpy(), S0, "autograd.grad: split input")
    check(dw, tw.grad.numpy(), B, "autograd.grad: broadcast weight")
    assert gx.grad is None and gw.grad is None
    flow.tanh((gx * gx) @ gw).sum().backward(inputs=[gw])
    check(gw.grad, tw.grad.numpy(), B, "backward(inputs=) into a broadcast weight")
    assert gx.grad is None
    lin = flow.nn.Linear(5, 4).to_global(P, B)
    seen = []
    lin.register_full_backward_hook(lambda m, gin, gout: seen.append((gin[0].sbp, gout[0].sbp)))
    gx = g_of(x, S0, True)
    lin(gx).sum().backward()
    assert seen == [((S0,), (S0,))], seen
    assert gx.grad is not None and gx.grad.sbp == (S0,)


def case_parameters():
    """nn.Parameter(global tensor) is a global parameter: registered by a module, an nn.Parameter
    (as Module.to_global's parameters are), trained as the reference."""
    import copy

    class Scale(flow.nn.Module):
        def __init__(self, w):
            super().__init__()
            self.w = flow.nn.Parameter(w)
            self.extra = flow.nn.ParameterList([flow.ones(3, placement=P, sbp=B)])

        def forward(self, x):
            return (x @ self.w) * self.extra[0]

    x, w = X((6, 4)), X((4, 3), 1)
    tw, te = torch.nn.Parameter(torch.tensor(w)), torch.nn.Parameter(torch.ones(3))
    topt = torch.optim.SGD([tw, te], lr=0.1, momentum=0.9)
    m = Scale(g_of(w, S1))
    assert isinstance(m.w, flow.nn.Parameter) and m.w.is_global and m.w.is_leaf and m.w.sbp == (S1,)
    assert [n for n, _ in m.named_parameters()] == ["w", "extra.0"]
    assert isinstance(m.extra[0], flow.nn.Parameter) and m.extra[0].is_global
    assert repr(m.w).startswith("Parameter containing:\ntensor(")
    opt = flow.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        torch_step(topt, ((torch.tensor(x) @ tw * te) ** 2).mean())
        loss = (m(g_of(x, S0)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    check(m.w, tw.detach().numpy(), S1, "a global nn.Parameter trained")
    check(m.extra[0], te.detach().numpy(), B, "a global parameter of a ParameterList trained")
    twin = copy.deepcopy(m)
    assert isinstance(twin.w, flow.nn.Parameter) and twin.w.is_global and twin.w.to_local() is not m.w.to_local()
    lin = flow.nn.Linear(4, 3).to_global(P, B)
    assert all(isinstance(p, flow.nn.Parameter) and p.is_global for p in lin.parameters())


def case_leaf_hook():
    """A hook on a broadcast leaf used by a split op sees the whole gradient: the sum over ranks
    that a backward pass otherwise defers to its end is done when the hook runs."""
    x, w = X((6, 5)), X((5, 4), 1)
    wb, got = flow.nn.Parameter(g_of(w, B)), []
    wb.register_hook(lambda g: got.append((g.sbp, g.numpy().copy())))  # (as it is then)
    (g_of(x, S0) @ wb).sum().backward()
    tw = torch.tensor(w, requires_grad=True)
    (torch.tensor(x) @ tw).sum().backward()
    assert len(got) == 1 and got[0][0] == (B,)
    np.testing.assert_allclose(got[0][1], tw.grad.numpy(), rtol=1e-5, atol=1e-5)
    check(wb.grad, tw.grad.numpy(), B, "a hooked broadcast leaf's grad")


def case_dim_rules():
    """Ops along dims (the table's `sbp: along_dim` / `reduce_dims`, their dim / keepdim read where
    each op's signature has them): a split elsewhere is kept (moved down past removed dims), along
    the split dim the op runs whole; gradients through them as PyTorch's."""
    x = X((5, 7))
    tx = torch.tensor(x)
    gx, g1 = g_of(x, S0), g_of(x, S1)
    check(gx.cumsum(dim=1), tx.cumsum(1).numpy(), S0, "cumsum along another dim")
    check(g1.cumsum(0), tx.cumsum(0).numpy(), S1, "cumsum of S1 along 0")
    v, i = gx.sort(dim=1, descending=True)
    tv, ti = tx.sort(dim=1, descending=True)
    check(v, tv.numpy(), S0, "sort values")
    check(i, ti.numpy(), S0, "sort indices")
    check(gx.sort()[0], tx.sort()[0].numpy(), S0, "sort's default dim (-1)")
    check(g1.sort(1)[0], tx.sort(1)[0].numpy(), B, "sort along the split dim: whole")
    check(gx.flip(1), tx.flip(1).numpy(), S0, "flip along another dim")
    check(g1.flip(1, 0), tx.flip(1, 0).numpy(), B, "flip along the split dim (varargs dims)")
    check(gx.topk(2, dim=1)[0], tx.topk(2, dim=1)[0].numpy(), S0, "topk along another dim")
    check(gx.topk(2)[0], tx.topk(2)[0].numpy(), B, "topk's default dim: whole")
    check(gx.amax(dim=1), tx.amax(1).numpy(), S0, "amax over another dim")
    check(g1.amax(dim=0), tx.amax(0).numpy(), S0, "amax: the split dim moves down")
    check(g1.amax(dim=0, keepdim=True), tx.amax(0, keepdim=True).numpy(), S1, "amax keepdim")
    check(gx.amax(dim=0), tx.amax(0).numpy(), B, "amax over the split dim: whole")
    check(gx.argmax(dim=1), tx.argmax(1).numpy(), S0, "argmax over another dim")
    v, i = gx.max(dim=1)
    check(v, tx.max(1)[0].numpy(), S0, "max(dim) values")
    check(i, tx.max(1)[1].numpy(), S0, "max(dim) indices")
    check(gx.max(), tx.max().numpy(), B, "max of everything")
    check(g1.var(dim=0, keepdim=True), tx.var(0, keepdim=True).numpy(), S1, "var, keepdim at its position")
    check(gx.logsumexp(1), tx.logsumexp(1).numpy(), S0, "logsumexp")
    check(flow.nn.functional.softmin(gx, dim=1), torch.nn.functional.softmin(tx, 1).numpy(), S0,
          "softmin along another dim")
    gr = g_of(x, S0, requires_grad=True)
    tr = torch.tensor(x, requires_grad=True)
    w = X((5, 7), 1)
    ((gr.cumsum(1) * g_of(w, S0)).sum() + gr.amax(dim=1).sum() + gr.sort(1)[0][:, :2].sum()).backward()
    ((tr.cumsum(1) * torch.tensor(w)).sum() + tr.amax(1).sum() + tr.sort(1)[0][:, :2].sum()).backward()
    check(gr.grad, tr.grad.numpy(), S0, "gradients through cumsum, amax, sort")
    # narrow / chunk / index_select along another dim, unbind moving the split, squeeze / unsqueeze
    check(gx.narrow(1, 2, 3), tx.narrow(1, 2, 3).numpy(), S0, "narrow along another dim")
    for k, (a, b) in enumerate(zip(gx.chunk(3, dim=1), flow.tensor(x).chunk(3, dim=1))):  # (OneFlow's sizes)
        check(a, b.numpy(), S0, f"chunk {k}")
    idx = g_of(np.array([6, 0, 2]), B)
    check(gx.index_select(1, idx), tx.index_select(1, torch.tensor([6, 0, 2])).numpy(), S0, "index_select")
    check(g1.index_select(1, idx), tx.index_select(1, torch.tensor([6, 0, 2])).numpy(), B,
          "index_select along the split dim: whole")
    for k, (a, b) in enumerate(zip(g1.unbind(0), tx.unbind(0))):
        check(a, b.numpy(), S0, f"unbind {k}: the split moves down")
    g3 = g_of(x.reshape(5, 1, 7), S(2))
    check(g3.squeeze(1), tx.unsqueeze(1).squeeze(1).numpy(), S1, "squeeze a dim before the split")
    check(g3.squeeze(2), x.reshape(5, 1, 7), S(2), "squeeze of a dim not of size 1: nothing")
    check(gx.unsqueeze(0), tx.unsqueeze(0).numpy(), S1, "unsqueeze before the split")
    check(g1.unsqueeze(-1), tx.unsqueeze(-1).numpy(), S1, "unsqueeze after the split")
    # cat / stack along another dim: broadcast inputs sliced; along the split dim: re-split along
    # the largest other dim (an all-to-all, not a gather of the whole)
    y = X((5, 3), 1)
    ty = torch.tensor(y)
    check(flow.cat([gx, g_of(y, B)], dim=1), torch.cat([tx, ty], 1).numpy(), S0, "cat along another dim")
    check(flow.cat([gx, gx], dim=0), torch.cat([tx, tx], 0).numpy(), S1, "cat along the split dim: re-split")
    check(flow.stack([gx, g_of(x, B)], dim=0), torch.stack([tx, tx], 0).numpy(), S1, "stack: the split moves")
    check(flow.stack([g1, g1 + 1], dim=2), torch.stack([tx, tx + 1], 2).numpy(), S1, "stack after the split")
    # declared whole-tensor ops (`sbp: broadcast`): their output's shape depends on every element
    check(flow.masked_select(gx, gx > 0), torch.masked_select(tx, tx > 0).numpy(), B, "masked_select: whole")
    check(flow.nonzero(g1 > 0), torch.nonzero(tx > 0).numpy(), B, "nonzero: whole")
    # bmm: batch split (a broadcast side sliced), the columns split, the inner dim split -> partial
    a3, b3 = X((4, 5, 3), 2), X((4, 3, 6), 3)
    ta3, tb3 = torch.tensor(a3), torch.tensor(b3)
    want = torch.bmm(ta3, tb3).numpy()
    check(flow.bmm(g_of(a3, S0), g_of(b3, B)), want, S0, "bmm S0 x B", atol=1e-4)
    check(flow.bmm(g_of(a3, B), g_of(b3, S(2))), want, S(2), "bmm B x S2", atol=1e-4)
    check(flow.bmm(g_of(a3, S(2)), g_of(b3, S1)), want, PS, "bmm S2 x S1", atol=1e-4)


def run_worker(namespace, cases):
    """A worker's entry (this file's and those built on it): the world's placement as `P` here,
    then the case named on the command line ("all": every one of `cases`) from `namespace`."""
    global P
    flow.env.init()
    P = flow.placement("cpu", ranks=list(range(WORLD)))
    for case in (cases if sys.argv[1] == "all" else [sys.argv[1]]):
        namespace["case_" + case]()
    print(f"rank {RANK}: {sys.argv[1]} ok", flush=True)


if __name__ == "__main__":
    run_worker(globals(), CASES)
