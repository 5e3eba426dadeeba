"""One process of a distributed test (tests/test_distributed.py starts it through
`python -m oneflow.distributed.launch`): `dist_worker.py CASE`. Every process knows every rank's
inputs (seeded by rank), so each checks its own results against numpy / PyTorch locally and
exits non-zero with a traceback on a mismatch."""
import datetime
import os
import pickle
import sys
import time

import numpy as np
import torch

import oneflow as flow
import oneflow.distributed as dist

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])


def data(r, shape=(3, 4), dtype=np.float32):
    return np.random.default_rng(r).standard_normal(shape).astype(dtype)


def all_data(shape=(3, 4), dtype=np.float32):
    return [data(r, shape, dtype) for r in range(WORLD)]


def close(t, expected, what):
    got = t.numpy() if isinstance(t, flow.Tensor) else np.asarray(t)
    assert got.shape == np.shape(expected), f"{what}: shape {got.shape} != {np.shape(expected)}"
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=what)


def case_collectives():
    dist.init_process_group("gloo")
    assert dist.get_rank() == RANK and dist.get_world_size() == WORLD and dist.is_initialized()
    xs = all_data()
    # all_reduce: every op; float, int and bool; a non-contiguous view written through
    for op, ref in [(dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.PRODUCT, np.prod), (dist.ReduceOp.MIN, np.min),
                    (dist.ReduceOp.MAX, np.max), (dist.ReduceOp.AVG, np.mean)]:
        t = flow.tensor(xs[RANK])
        dist.all_reduce(t, op=op)
        close(t, ref(np.stack(xs), axis=0), f"all_reduce {op.name}")
    ints = [np.arange(6, dtype=np.int64) * (r + 1) + r for r in range(WORLD)]
    for op, ref in [(dist.ReduceOp.BAND, np.bitwise_and.reduce), (dist.ReduceOp.BXOR, np.bitwise_xor.reduce),
                    (dist.ReduceOp.SUM, np.sum)]:
        t = flow.tensor(ints[RANK])
        dist.all_reduce(t, op)
        close(t, ref(np.stack(ints), axis=0), f"all_reduce int64 {op.name}")
    b = flow.tensor([RANK == 0, False, True])
    dist.all_reduce(b, dist.ReduceOp.MAX)
    close(b, np.array([True, False, True]), "all_reduce bool")
    h = flow.tensor(xs[RANK]).to(flow.float16)
    dist.all_reduce(h)
    expect = np.sum(np.stack([x.astype(np.float16).astype(np.float32) for x in xs]), 0)
    np.testing.assert_allclose(h.float().numpy(), expect, rtol=4e-3, atol=4e-3)  # rounded at each step
    base = flow.tensor(np.stack([xs[RANK], xs[RANK]]))
    view = base[:, ::2].transpose(0, 1)
    dist.all_reduce(view)
    close(base[:, ::2], np.stack([np.sum(np.stack(xs), 0)[::2]] * 2), "all_reduce through a strided view")
    close(base[:, 1::2], np.stack([xs[RANK][1::2]] * 2), "all_reduce leaves the rest of the base")
    c = flow.complex(flow.tensor(xs[RANK]), flow.tensor(-xs[RANK]))
    dist.all_reduce(c)
    s = np.sum(np.stack(xs), 0)
    close(c, s - 1j * s, "all_reduce complex")
    z = flow.zeros(0, 3)
    dist.all_reduce(z)
    assert z.shape == (0, 3)
    # broadcast / reduce
    t = flow.tensor(xs[RANK])
    dist.broadcast(t, src=WORLD - 1)
    close(t, xs[WORLD - 1], "broadcast")
    t = flow.tensor(xs[RANK])
    dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
    close(t, np.max(np.stack(xs), 0) if RANK == 0 else xs[RANK], "reduce")
    # gathers
    outs = [flow.zeros(3, 4) for _ in range(WORLD)]
    dist.all_gather(outs, flow.tensor(xs[RANK]))
    for r in range(WORLD):
        close(outs[r], xs[r], f"all_gather[{r}]")
    whole = flow.zeros(WORLD * 3, 4)
    dist.all_gather_into_tensor(whole, flow.tensor(xs[RANK]))
    close(whole, np.concatenate(xs), "all_gather_into_tensor")
    glist = [flow.zeros(3, 4) for _ in range(WORLD)] if RANK == 1 else None
    dist.gather(flow.tensor(xs[RANK]), glist, dst=1)
    if RANK == 1:
        for r in range(WORLD):
            close(glist[r], xs[r], f"gather[{r}]")
    out = flow.zeros(3, 4)
    dist.scatter(out, [flow.tensor(x) * 10 for x in xs] if RANK == 0 else None, src=0)
    close(out, xs[RANK] * 10, "scatter")
    # reduce-scatter and all-to-all
    big = [data(100 + r, (WORLD * 2, 3)) for r in range(WORLD)]
    out = flow.zeros(2, 3)
    dist.reduce_scatter_tensor(out, flow.tensor(big[RANK]))
    close(out, np.sum(np.stack(big), 0)[2 * RANK:2 * RANK + 2], "reduce_scatter_tensor")
    out = flow.zeros(2, 3)
    dist.reduce_scatter(out, list(flow.tensor(big[RANK]).split(2)))
    close(out, np.sum(np.stack(big), 0)[2 * RANK:2 * RANK + 2], "reduce_scatter")
    out = flow.zeros(WORLD * 2, 3)
    dist.all_to_all_single(out, flow.tensor(big[RANK]))
    close(out, np.concatenate([big[r][2 * RANK:2 * RANK + 2] for r in range(WORLD)]), "all_to_all_single")
    # unequal blocks: rank r sends i + r + 1 rows to rank i
    rows = [[i + r + 1 for i in range(WORLD)] for r in range(WORLD)]
    srcs = [data(200 + r, (sum(rows[r]), 2)) for r in range(WORLD)]
    recv_rows = [rows[r][RANK] for r in range(WORLD)]
    out = flow.zeros(sum(recv_rows), 2)
    dist.all_to_all_single(out, flow.tensor(srcs[RANK]), recv_rows, rows[RANK])
    expect = [srcs[r][sum(rows[r][:RANK]):sum(rows[r][:RANK + 1])] for r in range(WORLD)]
    close(out, np.concatenate(expect), "all_to_all_single with splits")
    # autograd is untouched: a leaf that requires grad keeps it
    w = flow.tensor(xs[RANK], requires_grad=True)
    dist.all_reduce(w)
    assert w.requires_grad and w.is_leaf and w.grad is None
    dist.barrier()
    # async_op: a completed work
    t = flow.tensor(xs[RANK])
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() and work.is_completed()
    close(t, np.sum(np.stack(xs), 0), "all_reduce async_op")
    # several queued at once, then a synchronous one behind them (Note [Collective queue]);
    # AVG and a strided view finish in wait()
    ts = [flow.tensor(xs[RANK]) * (i + 1) for i in range(3)]
    strided = flow.tensor(np.stack([xs[RANK]] * 2))[:, ::2]
    works = [dist.all_reduce(u, async_op=True) for u in ts]
    works.append(dist.all_reduce(strided, op=dist.ReduceOp.AVG, async_op=True))
    sync = flow.ones(2)
    dist.all_reduce(sync)
    close(sync, np.full(2, float(WORLD)), "a synchronous all_reduce behind queued ones")
    for w in works:
        w.wait()
    for i, u in enumerate(ts):
        close(u, np.sum(np.stack(xs), 0) * (i + 1), f"queued all_reduce {i}")
    close(strided, np.stack([np.mean(np.stack(xs), 0)[::2]] * 2), "queued AVG through a strided view")
    fut = dist.all_reduce(flow.ones(3), async_op=True).get_future()
    close(fut.then(lambda f: f.value()[0] * 2).wait(), np.full(3, 2.0 * WORLD), "future of a queued all_reduce")
    # bad arguments: found before any process waits
    for fn, exc in [(lambda: dist.broadcast(t, src=WORLD), ValueError),
                    (lambda: dist.all_gather([t], t), ValueError),
                    (lambda: dist.all_reduce(flow.tensor([1.5]), op=dist.ReduceOp.BAND), TypeError),
                    (lambda: dist.all_reduce(flow.tensor([1]), op=dist.ReduceOp.AVG), TypeError),
                    (lambda: dist.all_reduce([1.0]), TypeError),
                    (lambda: dist.init_process_group("gloo"), RuntimeError)]:
        try:
            fn()
        except exc:
            pass
        else:
            raise AssertionError(f"expected {exc.__name__}")
    dist.destroy_process_group()
    assert not dist.is_initialized()


def case_p2p():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    right, left = (RANK + 1) % WORLD, (RANK - 1) % WORLD
    # a ring: every process sends first, then receives (the send completes in wait())
    out = flow.zeros(5)
    sends = dist.isend(flow.full((5,), float(RANK)), right)
    recv_work = dist.irecv(out, left)
    recv_work.wait()
    sends.wait()
    close(out, np.full(5, float(left)), "isend / irecv ring")
    if RANK == 0:
        dist.send(flow.arange(4, dtype=flow.int64).reshape(2, 2).t(), 1, tag=7)  # non-contiguous
        src = dist.recv(out, tag=5)  # from any rank
        assert src == 1, src
        close(out, np.arange(5.0) * 2, "recv from any")
    elif RANK == 1:
        got = flow.zeros(2, 2, dtype=flow.int64)
        assert dist.recv(got, 0, tag=7) == 0
        close(got, np.arange(4).reshape(2, 2).T, "send / recv")
        dist.send(flow.arange(5.0) * 2, 0, tag=5)
    ops = [dist.P2POp(dist.isend, flow.full((3,), RANK + 1.0), right), dist.P2POp(dist.irecv, flow.zeros(3), left)]
    works = dist.batch_isend_irecv(ops)
    for w in works:
        w.wait()
    close(ops[1].tensor, np.full(3, left + 1.0), "batch_isend_irecv")
    # OneFlow's comm: shape and dtype travel with the tensor
    if RANK == 0:
        flow.comm.send(flow.ones(2, 3, dtype=flow.float64) * 4, 1)
    elif RANK == 1:
        t = flow.comm.recv(0)
        assert t.dtype == flow.float64 and t.shape == (2, 3)
        close(t, np.full((2, 3), 4.0), "comm.recv")
    dist.destroy_process_group()


def case_objects():
    dist.init_process_group("gloo")
    objs = [None] * WORLD
    dist.all_gather_object(objs, {"rank": RANK, "pad": "x" * RANK * 50})
    assert objs == [{"rank": r, "pad": "x" * r * 50} for r in range(WORLD)], objs
    lst = [1, "two", (3,)] if RANK == 0 else [None, None, None]
    dist.broadcast_object_list(lst, src=0)
    assert lst == [1, "two", (3,)], lst
    # upstream's _oneflow_internal.cpu_broadcast: pickled bytes from a non-zero source
    got = flow._oneflow_internal.cpu_broadcast(pickle.dumps({"from": RANK}) if RANK == 1 else None, 1)
    assert pickle.loads(got) == {"from": 1}, got
    out = [None]
    dist.scatter_object_list(out, [f"for {r}" for r in range(WORLD)] if RANK == 1 else None, src=1)
    assert out == [f"for {RANK}"], out
    gathered = [None] * WORLD if RANK == 0 else None
    dist.gather_object(RANK * 11, gathered, dst=0)
    if RANK == 0:
        assert gathered == [r * 11 for r in range(WORLD)]
    # a sub-group of the last two ranks; the others are not members
    members = list(range(WORLD - 2, WORLD))
    g = dist.new_group(members)
    if RANK in members:
        assert dist.get_rank(g) == members.index(RANK) and dist.get_world_size(g) == 2
        t = flow.tensor([float(RANK)])
        dist.all_reduce(t, group=g)
        close(t, [float(sum(members))], "all_reduce on a sub-group")
        t = flow.tensor([float(RANK)])
        dist.broadcast(t, src=members[1], group=g)
        close(t, [float(members[1])], "broadcast with a global src on a sub-group")
        assert dist.get_global_rank(g, 0) == members[0]
    else:
        assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
    dist.barrier()
    dist.destroy_process_group()


class Net(flow.nn.Module):
    def __init__(self, unused=False):
        super().__init__()
        self.fc1, self.fc2 = flow.nn.Linear(6, 8), flow.nn.Linear(8, 3)
        self.bn = flow.nn.BatchNorm1d(8)
        self.extra = flow.nn.Linear(8, 3) if unused else None

    def forward(self, x, use_extra=False):
        h = flow.relu(self.bn(self.fc1(x)))
        return self.fc2(h) + (self.extra(h) if use_extra else 0)


def case_ddp():
    """DDP on shards of a batch gives the single-process steps on the whole batch."""
    dist.init_process_group("gloo")
    flow.manual_seed(RANK)  # different initial weights: DDP must broadcast rank 0's
    model = Net()
    flow.manual_seed(0)
    ref = Net()
    ddp = flow.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.0001)
    assert len(ddp._buckets) > 1
    opt = flow.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    x_all = flow.tensor(data(7, (4 * WORLD, 6)))
    y_all = flow.tensor(data(8, (4 * WORLD, 3)))
    # the reference starts from rank 0's initial weights
    state = [None]
    dist.broadcast_object_list(state if RANK else [{k: v.numpy() for k, v in model.state_dict().items()}], 0)
    init = state[0] if RANK else {k: v.numpy() for k, v in model.state_dict().items()}
    ref.load_state_dict({k: flow.tensor(v) for k, v in init.items()})
    for k, v in model.state_dict().items():
        close(v, init[k], f"broadcast initial {k}")
    ref_opt = flow.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    ref.train()
    for step in range(3):
        x, y = x_all[RANK * 4:(RANK + 1) * 4], y_all[RANK * 4:(RANK + 1) * 4]
        opt.zero_grad()
        flow.nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
        ref_opt.zero_grad()
        # batch norm statistics are per process: the reference runs each shard through its own copy
        loss = sum(flow.nn.functional.mse_loss(ref(x_all[r * 4:(r + 1) * 4]), y_all[r * 4:(r + 1) * 4])
                   for r in range(WORLD)) / WORLD
        loss.backward()
        ref_opt.step()
        for (n, p), q in zip(model.named_parameters(), ref.parameters()):
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-5, err_msg=f"step {step} {n}")
    # no_sync: local accumulation, then one averaged reduction of the sums
    xr, yr = x_all[RANK * 2:(RANK + 1) * 2], y_all[RANK * 2:(RANK + 1) * 2]
    ref.load_state_dict(model.state_dict())
    ref.zero_grad()
    flow.nn.functional.mse_loss(ref(xr), yr).backward()
    local = [flow.zeros_like(ref.fc2.weight) for _ in range(WORLD)]
    dist.all_gather(local, ref.fc2.weight.grad)
    opt.zero_grad()
    with ddp.no_sync():
        flow.nn.functional.mse_loss(ddp(xr), yr).backward()
    close(model.fc2.weight.grad, ref.fc2.weight.grad.numpy(), "inside no_sync: the local gradient")
    flow.nn.functional.mse_loss(ddp(xr), yr).backward()
    close(model.fc2.weight.grad, (2 * sum(local) / WORLD).numpy(), "after no_sync")
    assert ddp.state_dict().keys() == {"module." + k for k in model.state_dict()}
    dist.destroy_process_group()


def case_ddp_unused():
    dist.init_process_group("gloo")
    flow.manual_seed(0)
    model = Net(unused=True)
    ddp = flow.nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)
    x = flow.tensor(data(RANK, (4, 6)))
    ddp(x, use_extra=(RANK == 0)).sum().backward()
    # extra is used by rank 0 only: its gradient is rank 0's over the world size, everywhere
    g = flow.zeros_like(model.extra.weight)
    if RANK == 0:
        g.copy_(model.extra.weight.grad)
    dist.broadcast(g, 0)
    close(model.extra.weight.grad, g.numpy(), "unused on some ranks")
    ddp2 = flow.nn.parallel.DistributedDataParallel(Net(unused=True), find_unused_parameters=True)
    ddp2(x).sum().backward()
    assert ddp2.module.extra.weight.grad is None  # unused everywhere
    ddp3 = flow.nn.parallel.DistributedDataParallel(Net(unused=True))
    try:
        ddp3(x).sum().backward()
    except RuntimeError as e:
        assert "find_unused_parameters" in str(e) and "extra.weight" in str(e), e
    else:
        raise AssertionError("an unused parameter without find_unused_parameters must raise")
    dist.destroy_process_group()


def case_fail():
    dist.init_process_group("gloo")
    if RANK == 1:
        sys.exit(3)
    dist.barrier()  # never completes: the launcher stops this process


def case_timeout():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=2))
    if RANK == 0:
        t0 = time.time()
        try:
            dist.all_reduce(flow.ones(3))
        except RuntimeError as e:
            assert "all_reduce" in str(e), e
            assert time.time() - t0 < 30
        else:
            raise AssertionError("a collective nobody joins must time out")
    else:
        time.sleep(4)



def case_sync_bn():
    """SyncBatchNorm on the shards equals BatchNorm on the whole batch: outputs, input gradients,
    the sum of the weight gradients, running statistics (PyTorch's BatchNorm as the reference)."""
    dist.init_process_group("gloo")
    shards = [data(300 + r, (3 + r, 4, 5)) for r in range(WORLD)]  # unequal batch sizes
    coef = [data(400 + r, (3 + r, 4, 5)) for r in range(WORLD)]
    bn = flow.nn.SyncBatchNorm(4, momentum=0.3)
    with flow.no_grad():
        bn.weight.copy_(flow.tensor([1.0, 2.0, 0.5, -1.0]))
        bn.bias.copy_(flow.tensor([0.1, 0.2, 0.3, 0.4]))
    x = flow.tensor(shards[RANK], requires_grad=True)
    y = bn(x)
    (y * flow.tensor(coef[RANK])).sum().backward()
    ref = torch.nn.BatchNorm1d(4, momentum=0.3)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor([1.0, 2.0, 0.5, -1.0]))
        ref.bias.copy_(torch.tensor([0.1, 0.2, 0.3, 0.4]))
    xt = torch.tensor(np.concatenate(shards), requires_grad=True)
    yt = ref(xt)
    (yt * torch.tensor(np.concatenate(coef))).sum().backward()
    lo = sum(3 + r for r in range(RANK))
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy()[lo:lo + 3 + RANK], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy()[lo:lo + 3 + RANK], rtol=1e-4, atol=1e-5)
    gw = bn.weight.grad.clone()
    dist.all_reduce(gw)
    np.testing.assert_allclose(gw.numpy(), ref.weight.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.running_mean.numpy(), ref.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), ref.running_var.numpy(), rtol=1e-5, atol=1e-6)
    bn.eval()  # eval: the running statistics, no communication
    np.testing.assert_allclose(bn(x).detach().numpy(), ref.eval()(xt).detach().numpy()[lo:lo + 3 + RANK],
                               rtol=1e-4, atol=1e-5)
    dist.destroy_process_group()


def case_autograd_collectives():
    """distributed.nn.functional: each collective's gradient against the hand-derived one."""
    from oneflow.distributed.nn import functional as F
    dist.init_process_group("gloo")
    c = [[data(500 + 10 * r + j, (2, 3)) for j in range(WORLD)] for r in range(WORLD)]
    x = flow.tensor(data(600 + RANK, (2, 3)), requires_grad=True)
    y = F.all_reduce(x)
    close(y, sum(data(600 + r, (2, 3)) for r in range(WORLD)), "nn.functional.all_reduce")
    (y * flow.tensor(c[RANK][0])).sum().backward()
    close(x.grad, sum(c[r][0] for r in range(WORLD)), "all_reduce gradient")
    x.grad = None
    outs = F.all_gather(x)
    sum((o * flow.tensor(c[RANK][j])).sum() for j, o in enumerate(outs)).backward()
    close(x.grad, sum(c[r][RANK] for r in range(WORLD)), "all_gather gradient")
    x.grad = None
    (F.broadcast(x, 0) * flow.tensor(c[RANK][0])).sum().backward()
    close(x.grad, sum(c[r][0] for r in range(WORLD)) if RANK == 0 else np.zeros((2, 3)), "broadcast gradient")
    ins = [flow.tensor(data(700 + 10 * RANK + j, (2, 3)), requires_grad=True) for j in range(WORLD)]
    (F.reduce_scatter(flow.empty(2, 3), ins) * flow.tensor(c[RANK][0])).sum().backward()
    for j in range(WORLD):
        close(ins[j].grad, c[j][0], f"reduce_scatter gradient {j}")
    ins = [flow.tensor(data(800 + 10 * RANK + j, (j + 1, 3)), requires_grad=True) for j in range(WORLD)]
    outs = F.all_to_all([flow.empty(RANK + 1, 3) for _ in range(WORLD)], ins)
    for j in range(WORLD):
        close(outs[j], data(800 + 10 * j + RANK, (RANK + 1, 3)), f"all_to_all value {j}")
    sum((o * flow.tensor(c[RANK][j][:1].repeat(RANK + 1, 0))).sum() for j, o in enumerate(outs)).backward()
    for j in range(WORLD):
        close(ins[j].grad, c[j][RANK][:1].repeat(j + 1, 0), f"all_to_all gradient {j}")
    dist.destroy_process_group()


def case_mismatch():
    """Different calls in different processes: a RuntimeError naming each rank's call in every
    process (Note [Collective agreement]), never Gloo's abort; the group stays usable."""
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=10))
    n = 10 if RANK == 0 else 1000
    calls = [(lambda: dist.all_reduce(flow.ones(n)), "all_reduce of 10 float32"),
             (lambda: dist.broadcast(flow.ones(4), src=RANK), "broadcast of 4 float32 elements with root 0"),
             (lambda: dist.all_gather([flow.zeros(n)] * WORLD, flow.ones(n)), "all_gather of 10 float32"),
             (lambda: dist.all_reduce(flow.ones(4, dtype=flow.float64 if RANK else flow.float32)),
              "rank 1: all_reduce of 4 float64"),
             (lambda: dist.broadcast(flow.ones(4)) if RANK == 0 else dist.all_reduce(flow.ones(4)),
              "rank 1: all_reduce of 4 float32")]
    for call, words in calls:
        try:
            call()
        except RuntimeError as e:
            assert words in str(e) and "same collective" in str(e), e
        else:
            raise AssertionError(f"expected a RuntimeError naming {words!r}")
    t = flow.ones(3)
    dist.all_reduce(t)  # still usable
    close(t, np.full(3, float(WORLD)), "all_reduce after the errors")
    if RANK == 0:
        dist.send(flow.ones(10), 1)  # completes: the receiver drains it, then raises
    elif RANK == 1:
        try:
            dist.recv(flow.ones(1000), 0)
        except RuntimeError as e:
            assert "rank 0 sent 10 float32 elements" in str(e).replace("oneflow.", ""), e
        else:
            raise AssertionError("a receive of the wrong size must raise")
    dist.barrier()
    dist.destroy_process_group()


def case_ddp_hooks():
    """Communication hooks: allreduce_hook gives the default's gradients, the 16-bit compressing
    ones the same within their rounding; a custom hook sees every bucket once per backward."""
    from oneflow.distributed.algorithms.ddp_comm_hooks import default_hooks as hooks
    dist.init_process_group("gloo")
    x = flow.tensor(data(900 + RANK, (4, 6)))

    def grads(hook=None, state=None, **kw):
        flow.manual_seed(0)
        model = flow.nn.Sequential(flow.nn.Linear(6, 8), flow.nn.Tanh(), flow.nn.Linear(8, 3))
        ddp = flow.nn.parallel.DistributedDataParallel(model, **kw)
        if hook is not None:
            ddp.register_comm_hook(state, hook)
        ddp(x).square().sum().backward()
        return [p.grad.numpy() for p in model.parameters()], ddp

    base, _ = grads()
    for hook, tol in [(hooks.allreduce_hook, 0), (hooks.fp16_compress_hook, 2e-3), (hooks.bf16_compress_hook, 2e-2),
                      (hooks.fp16_compress_wrapper(hooks.allreduce_hook), 2e-3)]:
        got, _ = grads(hook)
        for a, b in zip(got, base):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max())))
    seen = []

    def recording(state, bucket):
        seen.append((bucket.index(), bucket.is_last(), [tuple(p.shape) for p in bucket.parameters()],
                     [tuple(g.shape) for g in bucket.gradients()]))
        return hooks.allreduce_hook(state, bucket)
    got, ddp = grads(recording, None, bucket_size=1)
    assert [s[0] for s in seen] == [0, 1, 2, 3] and [s[1] for s in seen] == [False, False, False, True], seen
    assert all(s[2] == s[3] for s in seen)
    for a, b in zip(got, base):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    try:
        ddp.register_comm_hook(None, hooks.allreduce_hook)
    except RuntimeError as e:
        assert "only be called once" in str(e)
    else:
        raise AssertionError("a second hook must be refused")
    try:
        grads(lambda state, bucket: bucket.buffer())
    except RuntimeError as e:
        assert "must return a Future" in str(e), e
    else:
        raise AssertionError("a hook returning a tensor must be refused")
    dist.destroy_process_group()


def case_zero():
    """ZeroRedundancyOptimizer under DDP: the parameters of plain Adam under DDP, each process
    holding the state of its share only; the consolidated state dict equals plain Adam's."""
    from oneflow.distributed.optim import ZeroRedundancyOptimizer
    dist.init_process_group("gloo")

    def make():
        flow.manual_seed(0)
        return flow.nn.Sequential(flow.nn.Linear(6, 16), flow.nn.Tanh(), flow.nn.Linear(16, 8), flow.nn.Tanh(),
                                  flow.nn.Linear(8, 3))
    a, b = make(), make()
    da, db = flow.nn.parallel.DistributedDataParallel(a), flow.nn.parallel.DistributedDataParallel(b)
    za = ZeroRedundancyOptimizer(da.parameters(), flow.optim.Adam, lr=0.01, weight_decay=0.01)
    ob = flow.optim.Adam(db.parameters(), lr=0.01, weight_decay=0.01)
    sched = flow.optim.lr_scheduler.StepLR(za, step_size=1, gamma=0.5)
    sched_b = flow.optim.lr_scheduler.StepLR(ob, step_size=1, gamma=0.5)
    owned = sum(p.numel() for g in za.optim.param_groups for p in g["params"]) if za.optim else 0
    total = sum(p.numel() for p in a.parameters())
    assert 0 < owned < total, (owned, total)  # a share, not everything
    for step in range(3):
        x, y = flow.tensor(data(1000 + 10 * step + RANK, (4, 6))), flow.tensor(data(2000 + step + RANK, (4, 3)))
        for d, o, s in ((da, za, sched), (db, ob, sched_b)):
            o.zero_grad()
            flow.nn.functional.mse_loss(d(x), y).backward()
            o.step()
            s.step()
        for (n, p), q in zip(a.named_parameters(), b.parameters()):
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6, err_msg=f"step {step} {n}")
    za.consolidate_state_dict(to=0)
    if RANK == 0:
        sa, sb = za.state_dict(), ob.state_dict()
        assert sorted(sa["state"]) == sorted(sb["state"])
        for i in sb["state"]:
            for k in ("exp_avg", "exp_avg_sq"):
                np.testing.assert_allclose(sa["state"][i][k].numpy(), sb["state"][i][k].numpy(), rtol=1e-5, atol=1e-7)
        assert sa["param_groups"][0]["lr"] == sb["param_groups"][0]["lr"]
    else:
        try:
            za.state_dict()
        except RuntimeError as e:
            assert "consolidate_state_dict" in str(e)
        else:
            raise AssertionError("state_dict() off the consolidating rank must raise")
    full = [za.state_dict() if RANK == 0 else None]
    dist.broadcast_object_list(full, 0)
    zc = ZeroRedundancyOptimizer(flow.nn.Linear(1, 1).parameters(), flow.optim.Adam, lr=0.01)
    try:
        zc.load_state_dict(full[0])
    except ValueError:
        pass  # a different model: refused as by any optimizer
    za.load_state_dict(full[0])  # every rank takes its share back
    local = {id(p) for g in za.optim.param_groups for p in g["params"]}
    assert all(id(p) in local for p in za.optim.state)
    dist.destroy_process_group()


def case_monitored_barrier():
    """monitored_barrier passes when everyone comes, and names who did not."""
    dist.init_process_group("gloo")
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=30))
    if RANK == WORLD - 1:
        time.sleep(4)  # misses the next one
    else:
        try:
            dist.monitored_barrier(timeout=datetime.timedelta(seconds=1), wait_all_ranks=True)
        except RuntimeError as e:
            expect = f"rank {WORLD - 1} failed to pass monitoredBarrier" if RANK == 0 else "was not released by rank 0"
            assert expect in str(e), e
        else:
            raise AssertionError("a missing rank must be reported")
    dist.barrier()
    dist.destroy_process_group()


def case_zero_join():
    """ZeroRedundancyOptimizer as a Joinable under DDP on uneven inputs (rank r has 2 + 2r
    batches): a process that ran out still steps its share with the averaged gradients the
    others' iteration produced and joins their broadcasts, so the model follows PyTorch's
    reference of the active processes' mean gradient (over the initial world size) each step."""
    from oneflow.distributed.algorithms import Join
    from oneflow.distributed.optim import ZeroRedundancyOptimizer
    dist.init_process_group("gloo")
    counts = [2 + 2 * r for r in range(WORLD)]
    batches = [[(data(300 * r + i, (3, 4)), data(400 * r + i, (3, 2))) for i in range(counts[r])] for r in range(WORLD)]
    flow.manual_seed(0)
    model = flow.nn.Sequential(flow.nn.Linear(4, 6), flow.nn.Tanh(), flow.nn.Linear(6, 5), flow.nn.Tanh(),
                               flow.nn.Linear(5, 2))
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 5), torch.nn.Tanh(),
                              torch.nn.Linear(5, 2))
    with torch.no_grad():
        for p, q in zip(ref.parameters(), model.parameters()):
            p.copy_(torch.tensor(q.numpy()))
    ddp = flow.nn.parallel.DistributedDataParallel(model)
    zero = ZeroRedundancyOptimizer(ddp.parameters(), flow.optim.SGD, lr=0.1, momentum=0.5)
    assert zero.optim is None or 0 < sum(p.numel() for g in zero.optim.param_groups for p in g["params"])
    with Join([ddp, zero]):
        for x, y in batches[RANK]:
            zero.zero_grad()
            ((ddp(flow.tensor(x)) - flow.tensor(y)) ** 2).mean().backward()
            zero.step()
    ropt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.5)
    for i in range(max(counts)):
        active = [r for r in range(WORLD) if i < counts[r]]
        ropt.zero_grad()
        for r in active:
            x, y = batches[r][i]
            ((ref(torch.tensor(x)) - torch.tensor(y)) ** 2).mean().backward()
        for p in ref.parameters():
            p.grad /= WORLD
        ropt.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q.detach().numpy(), "ZeRO under Join")


def case_ddp_join():
    """join() on uneven inputs (rank r has 2 + 2r batches): the joined processes shadow the others'
    reductions, gradients are averaged over the initial world size (or the processes still
    training), and every process ends with the last one's model -- PyTorch's steps, simulated."""
    dist.init_process_group("gloo")
    counts = [2 + 2 * r for r in range(WORLD)]
    batches = [[(data(100 * r + i, (3, 4)), data(200 * r + i, (3, 2))) for i in range(counts[r])] for r in range(WORLD)]
    for divide_initial in (True, False):
        flow.manual_seed(0)
        model = flow.nn.Sequential(flow.nn.Linear(4, 5), flow.nn.Tanh(), flow.nn.Linear(5, 2))
        torch.manual_seed(0)
        ref = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
        with torch.no_grad():
            for p, q in zip(ref.parameters(), model.parameters()):
                p.copy_(torch.tensor(q.numpy()))
        ddp = flow.nn.parallel.DistributedDataParallel(model)
        opt = flow.optim.SGD(ddp.parameters(), lr=0.1)
        with ddp.join(divide_by_initial_world_size=divide_initial):
            for x, y in batches[RANK]:
                loss = ((ddp(flow.tensor(x)) - flow.tensor(y)) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        for i in range(max(counts)):  # the reference: the active processes' mean gradient each step
            active = [r for r in range(WORLD) if i < counts[r]]
            ref.zero_grad()
            for r in active:
                x, y = batches[r][i]
                ((ref(torch.tensor(x)) - torch.tensor(y)) ** 2).mean().backward()
            with torch.no_grad():
                for p in ref.parameters():
                    p -= 0.1 * p.grad / (WORLD if divide_initial else len(active))
        for p, q in zip(model.parameters(), ref.parameters()):
            close(p, q.detach().numpy(), f"join (divide_by_initial_world_size={divide_initial})")
    # buffers (batch norm's statistics) come from a process still training; all end equal
    flow.manual_seed(RANK)
    ddp = flow.nn.parallel.DistributedDataParallel(flow.nn.Sequential(flow.nn.Linear(4, 5), flow.nn.BatchNorm1d(5)))
    opt = flow.optim.SGD(ddp.parameters(), lr=0.1)
    with ddp.join():
        for x, _ in batches[RANK]:
            opt.zero_grad()
            ddp(flow.tensor(x)).pow(2).mean().backward()
            opt.step()
    for t in list(ddp.module.parameters()) + list(ddp.module.buffers()):
        every = [flow.zeros_like(t) for _ in range(WORLD)]
        dist.all_gather(every, t.detach().contiguous())
        for e in every:
            close(e, every[-1].numpy(), "the final model, the same everywhere")
    # the generic Join with a joinable of our own: its shadow hook keeps the all-reduces paired
    from oneflow.distributed.algorithms import Join, JoinHook, Joinable

    class Summer(Joinable):
        def __init__(self):
            self.total, self.last, self._join_config = 0.0, None, None

        def step(self, value):
            Join.notify_join_context(self)
            self.reduce(value)

        def reduce(self, value):
            t = flow.tensor([float(value)])
            dist.all_reduce(t)
            self.total += t.item()

        def join_hook(self, **kwargs):
            owner = self

            class Hook(JoinHook):
                def main_hook(self):  # (the joinable's collectives only: Join counts)
                    owner.reduce(0)

                def post_hook(self, is_last_joiner):
                    owner.last = is_last_joiner
            return Hook()

        join_device = property(lambda self: flow.device("cpu"))
        join_process_group = property(lambda self: None)

    summer = Summer()
    with Join([summer]):
        for _ in range(counts[RANK]):
            summer.step(RANK + 1)
    assert summer.total == sum(r + 1 for i in range(max(counts)) for r in range(WORLD) if i < counts[r])
    assert summer.last == (RANK == WORLD - 1)
    # throw_on_early_termination: every process raises once one runs out
    ddp = flow.nn.parallel.DistributedDataParallel(flow.nn.Linear(4, 2))
    try:
        with ddp.join(throw_on_early_termination=True):
            for i in range(1 if RANK == 0 else 3):
                ddp(flow.tensor(data(i, (3, 4)))).sum().backward()
    except RuntimeError as e:
        assert "ran out of inputs" in str(e), e
    else:
        raise AssertionError("throw_on_early_termination")


def case_ddp_powersgd():
    """PowerSGD hooks: plain averages before start_powerSGD_iter, then rank-r approximations of the
    averaged weight gradients (exact at full rank), biases averaged as they are, error feedback
    holding what the approximation left out."""
    from oneflow.distributed.algorithms import ddp_comm_hooks as hooks
    from oneflow.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd
    dist.init_process_group("gloo")

    def make():
        flow.manual_seed(0)
        return flow.nn.Sequential(flow.nn.Linear(6, 8), flow.nn.Tanh(), flow.nn.Linear(8, 3))

    def inputs(r, i):
        return flow.tensor(data(10 * r + i, (4, 6)))

    def average(i):
        plain, total = make(), None
        for r in range(WORLD):
            plain.zero_grad()
            plain(inputs(r, i)).pow(2).sum().backward()
            g = [p.grad.numpy() for p in plain.parameters()]
            total = g if total is None else [a + b for a, b in zip(total, g)]
        return [t / WORLD for t in total]

    def run(hook, state, steps=3):
        model = make()
        ddp = flow.nn.parallel.DistributedDataParallel(model)
        ddp.register_comm_hook(state, hook)
        out = []
        for i in range(steps):
            model.zero_grad()
            ddp(inputs(RANK, i)).pow(2).sum().backward()
            out.append([p.grad.numpy().copy() for p in model.parameters()])
        return ddp, out

    # rank 1: two plain iterations, then rank-1 weight gradients
    state = psgd.PowerSGDState(None, matrix_approximation_rank=1, start_powerSGD_iter=2)
    ddp, grads = run(psgd.powerSGD_hook, state)
    for i in range(2):
        for g, a in zip(grads[i], average(i)):
            close(g, a, f"before start_powerSGD_iter ({i})")
    avg = average(2)
    for k in (0, 2):  # the weights: rank 1
        sv = np.linalg.svd(grads[2][k], compute_uv=False)
        assert sv[1] < 1e-4 * sv[0], f"weight {k}: not rank 1 ({sv})"
        assert np.abs(grads[2][k] - avg[k]).max() > 1e-6  # (an approximation, not the average)
    for k in (1, 3):  # the biases: averaged as they are
        close(grads[2][k], avg[k], "a bias through PowerSGD")
    # error feedback: this process's gradient minus what the hook gave back
    local = make()
    local(inputs(RANK, 2)).pow(2).sum().backward()
    order = ddp._buckets[0].params
    index = {id(p): k for k, p in enumerate(ddp.module.parameters())}
    mine = np.concatenate([dict(zip(map(id, local.parameters()), [p.grad.numpy() for p in local.parameters()]))[id(q)]
                           .reshape(-1) for q in [list(local.parameters())[index[id(p)]] for p in order]])
    gave = np.concatenate([grads[2][index[id(p)]].reshape(-1) for p in order])
    close(state.error_dict[0], mine - gave, "the error fed back")
    rate, before, after = state.compression_stats()
    assert rate > 1 and before > after > 0
    # full rank: the approximation is the average
    state = psgd.PowerSGDState(None, matrix_approximation_rank=8, start_powerSGD_iter=2, min_compression_rate=0)
    _, grads = run(psgd.powerSGD_hook, state)
    for g, a in zip(grads[2], average(2)):
        np.testing.assert_allclose(g, a, rtol=1e-4, atol=1e-5, err_msg="full-rank PowerSGD")
    # batched: the whole bucket as one square matrix; at full rank (a full-rank 10 x 10 in float64)
    # the average, at rank 2 through DDP the same result in every process, the error fed back
    from oneflow.nn.parallel.distributed import GradBucket
    state = psgd.PowerSGDState(None, matrix_approximation_rank=10, start_powerSGD_iter=2)
    state.iter = 2
    mine = data(RANK, (100,), np.float64)
    params = [flow.nn.Parameter(flow.zeros(100, dtype=flow.float64))]
    out = psgd.batched_powerSGD_hook(state, GradBucket(0, flow.tensor(mine), params, True)).wait()
    close(out, np.mean([data(r, (100,), np.float64) for r in range(WORLD)], 0), "full-rank batched PowerSGD")
    close(state.error_dict[0], mine - out.numpy(), "batched PowerSGD's error")
    state = psgd.PowerSGDState(None, matrix_approximation_rank=2, start_powerSGD_iter=2)
    _, grads = run(psgd.batched_powerSGD_hook, state)
    for g in grads[2]:
        every = [flow.zeros(*g.shape) for _ in range(WORLD)]
        dist.all_gather(every, flow.tensor(g))
        for e in every:
            close(e, g, "batched PowerSGD: one result in every process")
    assert state.compression_stats()[1] == 83
    # the built-in registration (plain averages for the first 1000 iterations)
    model = make()
    ddp = flow.nn.parallel.DistributedDataParallel(model)
    hooks.register_ddp_comm_hook(hooks.DDPCommHookType.POWER_SGD, ddp)
    ddp(inputs(RANK, 0)).pow(2).sum().backward()
    for p, a in zip(model.parameters(), average(0)):
        close(p.grad, a, "DDPCommHookType.POWER_SGD")
    try:
        psgd.PowerSGDState(None, start_powerSGD_iter=1)
    except ValueError as e:
        assert "start_powerSGD_iter" in str(e)
    else:
        raise AssertionError("start_powerSGD_iter=1 with error feedback")


if __name__ == "__main__":
    globals()["case_" + sys.argv[1]]()
    print(f"rank {RANK}: {sys.argv[1]} ok", flush=True)
