"""Global tensors against DistributedDataParallel: the same data-parallel MLP step (784-512-10,
batch 256, SGD) in 2 processes on Gloo over loopback, one with DDP on local tensors, one with the
module made global (broadcast parameters, the batch split(0)), eagerly and as an nn.Graph; plus
one small pointwise op on a
split tensor against the same op on its local component (the dispatcher's cost per op). Medians
of 20 steps after 3 warm-up steps; the shared 2-core machine drifts by tens of percent.

`boxing`: the bandwidth of each boxing of a 100 MB float32 tensor (5120 x 5120) in 2 processes,
against torch.distributed (Gloo) doing the same collective on the same components (its packing
and unpacking included where the layout needs them); bandwidth = the bytes a process receives
(oneflow.boxing.bytes_moved()) / the median time of 3 runs after a warm-up; and the median CPU
time of the receiving process (every thread: the figure to quote from a loaded machine).

`ops`: the per-op cost of global ops needing no communication (pointwise, a split batch times a
broadcast weight, a sum, mean, softmax and transpose keeping the split, linear, bmm, sums and
products of partial sums, max / min with indices, split, cumsum, sort and amax off the split dim,
reshapes keeping the split or a partial sum, an elementwise loss)
against the local op on the component.

`cnn`: the data-parallel training step of the example's CNN (examples/train_fashion_mnist.py's
Net, a global batch of 64 Fashion-MNIST-shaped images, AdamW) in 2 processes: the module made global
(eagerly and as examples/global_fashion_mnist.py's nn.Graph) against PyTorch's
DistributedDataParallel and ours on local tensors, all in the same run; and one process alone on the
whole batch (the other waiting), for the scaling efficiency: the speed-up of 2 processes over one,
halved (one process's step time / (2 x the 2-process step's)). Medians of 15 steps after 3 warm-up
steps.

    .venv/bin/python benchmarks/bench_global.py [boxing | ops | cnn]
"""
import json
import os
import statistics
import sys
import time

from measure import launch_ranks


def child():
    import numpy as np
    import oneflow as flow
    dist = flow.distributed
    flow.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    P = flow.placement("cpu", ranks=list(range(world)))
    rng = np.random.default_rng(0)
    x_all = rng.standard_normal((256, 784)).astype(np.float32)
    y_all = rng.integers(0, 10, 256)
    res = {}

    def model():
        flow.manual_seed(0)
        return flow.nn.Sequential(flow.nn.Linear(784, 512), flow.nn.ReLU(), flow.nn.Linear(512, 10))

    def timeit(name, step, reps=20):
        for _ in range(3):
            step()
        times = []
        for _ in range(reps):
            dist.barrier()
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        res[name] = statistics.median(times) * 1e3

    lo, hi = rank * 256 // world, (rank + 1) * 256 // world
    xl, yl = flow.tensor(x_all[lo:hi]), flow.tensor(y_all[lo:hi])
    ddp = flow.nn.parallel.DistributedDataParallel(model())
    opt = flow.optim.SGD(ddp.parameters(), lr=0.1)

    def ddp_step():
        loss = flow.nn.functional.cross_entropy(ddp(xl), yl)
        opt.zero_grad()
        loss.backward()
        opt.step()
    timeit("MLP step, DDP (local tensors)", ddp_step)

    gm = model().to_global(P, flow.sbp.broadcast)
    gopt = flow.optim.SGD(gm.parameters(), lr=0.1)
    xg, yg = flow.tensor(x_all, placement=P, sbp=flow.sbp.split(0)), flow.tensor(y_all, placement=P, sbp=flow.sbp.split(0))

    def global_step():
        loss = flow.nn.functional.cross_entropy(gm(xg), yg)
        gopt.zero_grad()
        loss.backward()
        gopt.step()
    timeit("MLP step, global tensors", global_step)

    class Step(flow.nn.Graph):
        def __init__(self, m, o):
            super().__init__()
            self.m = m
            self.add_optimizer(o)

        def build(self, x, y):
            loss = flow.nn.functional.cross_entropy(self.m(x), y)
            loss.backward()
            return loss
    gm2 = model().to_global(P, flow.sbp.broadcast)
    graph = Step(gm2, flow.optim.SGD(gm2.parameters(), lr=0.1))
    timeit("MLP step, global tensors in nn.Graph", lambda: graph(xg, yg))

    small = flow.randn(64, 64, placement=P, sbp=flow.sbp.split(0))
    local = small.to_local()
    timeit("x + x, 32x64 local component", lambda: local + local, 200)
    timeit("x + x, 64x64 global split(0)", lambda: small + small, 200)
    if rank == 0:
        print(json.dumps(res))


def child_ops():
    """The per-op cost of global ops that need no communication against the same op on the local
    components (each: the median of 20 runs of 200 calls, in us per call)."""
    import oneflow as flow
    dist = flow.distributed
    flow.set_num_threads(1)
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    P = flow.placement("cpu", ranks=list(range(world)))
    S0, B = flow.sbp.split(0), flow.sbp.broadcast
    g = flow.randn(64, 64, placement=P, sbp=S0)
    g2 = flow.randn(64, 64, placement=P, sbp=S0)
    w = flow.randn(64, 64, placement=P, sbp=B)
    bias = flow.randn(64, placement=P, sbp=B)
    a3, b3 = flow.randn(8, 16, 16, placement=P, sbp=S0), flow.randn(8, 16, 16, placement=P, sbp=S0)
    p = flow.randn(64, 64, placement=P, sbp=B).to_global(sbp=flow.sbp.partial_sum)
    res = {}

    def timeit(name, fn, reps=20, calls=200):
        for _ in range(calls):
            fn()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            times.append((time.perf_counter() - t0) / calls)
        res[name] = statistics.median(times) * 1e6

    F = flow.nn.functional
    cases = [("flow.add(x, x)", lambda t: flow.add(t, t), (g,)), ("flow.relu(x)", flow.relu, (g,)),
             ("x + x", lambda t: t + t, (g,)), ("flow.matmul(x S(0), w B)", flow.matmul, (g, w)),
             ("x.sum(1)", lambda t: t.sum(1), (g,)), ("x.transpose(0, 1)", lambda t: t.transpose(0, 1), (g,)),
             ("x.mean(1)", lambda t: t.mean(1), (g,)), ("x.mean() (P out)", lambda t: t.mean(), (g,)),
             ("flow.softmax(x, 1)", lambda t: flow.softmax(t, dim=1), (g,)),
             ("x.log_softmax(1)", lambda t: t.log_softmax(1), (g,)),
             ("F.linear(x S(0), w B, b B)", F.linear, (g, w, bias)),
             ("flow.bmm(S(0) 8x16x16, S(0))", flow.bmm, (a3, b3)),
             ("3-d S(0) @ 2-d B", lambda t, m: t @ m, (a3, flow.randn(16, 16, placement=P, sbp=B))),
             ("p + p (P)", lambda t: t + t, (p,)), ("p - p (P)", lambda t: t - t, (p,)),
             ("p * w (P x B)", lambda t, m: t * m, (p, w)), ("flow.mul(p, 2.0) (P)", lambda t: flow.mul(t, 2.0), (p,)),
             ("3 * p (P)", lambda t: 3 * t, (p,)),
             ("flow.max(x, 1)", lambda t: flow.max(t, 1), (g,)), ("x.min(1)", lambda t: t.min(1), (g,)),
             ("flow.split(x, 16, 1)", lambda t: flow.split(t, 16, 1), (g,)),
             ("x.cumsum(1)", lambda t: t.cumsum(1), (g,)), ("x.sort(1)", lambda t: t.sort(1), (g,)),
             ("x.amax(1)", lambda t: t.amax(1), (g,)),
             ("x.reshape(-1, 8, 8)", lambda t: t.reshape(-1, 8, 8), (g,)), ("x.view(-1)", lambda t: t.view(-1), (g,)),
             ("p.reshape(4096) (P)", lambda t: t.reshape(4096), (p,)),
             ("F.mse_loss(x, y) mean", lambda t, u: F.mse_loss(t, u), (g, g2))]
    for name, fn, gs in cases:
        ls = tuple(t.to_local() for t in gs)
        timeit(name + " local", lambda: fn(*ls))
        timeit(name + " global", lambda: fn(*gs))
    dist.barrier()
    if dist.get_rank() == 0:
        print(json.dumps(res))


def _with_torch():
    """(rank, world) of this process, one thread each, in oneflow's process group and in
    torch.distributed's (Gloo, the next port): the runs that set one against the other."""
    import torch
    import torch.distributed as tdist
    import oneflow as flow
    dist = flow.distributed
    flow.set_num_threads(1)
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{int(os.environ['MASTER_PORT']) + 1}",
                             rank=rank, world_size=world)
    return rank, world


def child_cnn():
    import numpy as np
    import torch
    import torch.distributed as tdist
    import oneflow as flow
    from bench_train import train_step
    dist = flow.distributed
    rank, world = _with_torch()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    from train_fashion_mnist import Net
    from global_fashion_mnist import TrainGraph
    P = flow.placement("cpu", ranks=list(range(world)))
    batch = 64
    rng = np.random.default_rng(0)
    x_all = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y_all = rng.integers(0, 10, batch)
    lo, hi = rank * batch // world, (rank + 1) * batch // world
    res = {}

    def timeit(name, step, sync, reps=15):
        for _ in range(3):
            step()
        times = []
        for _ in range(reps):
            sync()
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        res[name] = statistics.median(times) * 1e3

    def flow_step(model, x, y):
        opt = flow.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
        return train_step(flow, model, opt, flow.nn.CrossEntropyLoss(), x, y)

    def torch_net():  # the same layers as Net, in PyTorch
        nn = torch.nn
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))

    tddp = torch.nn.parallel.DistributedDataParallel(torch_net())
    topt = torch.optim.AdamW(tddp.parameters(), lr=2e-3, weight_decay=1e-4)
    torch_step = train_step(torch, tddp, topt, torch.nn.CrossEntropyLoss(), torch.tensor(x_all[lo:hi]),
                            torch.tensor(y_all[lo:hi]))
    timeit("CNN step, PyTorch DDP", torch_step, tdist.barrier)
    flow.manual_seed(0)
    ddp = flow.nn.parallel.DistributedDataParallel(Net())
    timeit("CNN step, oneflow DDP (local tensors)", flow_step(ddp, flow.tensor(x_all[lo:hi]), flow.tensor(y_all[lo:hi])),
           dist.barrier)
    xg = flow.tensor(x_all, placement=P, sbp=flow.sbp.split(0))
    yg = flow.tensor(y_all, placement=P, sbp=flow.sbp.split(0))
    flow.manual_seed(0)
    timeit("CNN step, global tensors", flow_step(Net().to_global(P, flow.sbp.broadcast), xg, yg), dist.barrier)
    flow.manual_seed(0)
    gm = Net().to_global(P, flow.sbp.broadcast)
    graph = TrainGraph(gm, flow.optim.AdamW(gm.parameters(), lr=2e-3, weight_decay=1e-4), flow.nn.CrossEntropyLoss())
    timeit("CNN step, global tensors in nn.Graph", lambda: graph(xg, yg), dist.barrier)
    # one process alone on the whole batch (the other waits at the barrier)
    dist.barrier()
    if rank == 0:
        flow.manual_seed(0)
        timeit("CNN step, 1 process (whole batch)", flow_step(Net(), flow.tensor(x_all), flow.tensor(y_all)),
               lambda: None)
        tnet = torch_net()
        topt1 = torch.optim.AdamW(tnet.parameters(), lr=2e-3, weight_decay=1e-4)
        timeit("CNN step, 1 process PyTorch (whole batch)",
               train_step(torch, tnet, topt1, torch.nn.CrossEntropyLoss(), torch.tensor(x_all), torch.tensor(y_all)),
               lambda: None)
    dist.barrier()
    if rank == 0:
        print(json.dumps(res))


def child_boxing():
    import numpy as np
    import torch
    import torch.distributed as tdist
    import oneflow as flow
    from oneflow._global.tensor import GlobalTensor
    dist = flow.distributed
    rank, world = _with_torch()
    n = 5120  # 100 MB of float32
    P = flow.placement("cpu", list(range(world)))
    S0, S1, B, PS = flow.sbp.split(0), flow.sbp.split(1), flow.sbp.broadcast, flow.sbp.partial_sum
    rows = n // world
    part = np.random.default_rng(rank).standard_normal((rows, n)).astype(np.float32)
    whole = np.random.default_rng(9).standard_normal((n, n)).astype(np.float32)
    res = {}

    def timeit(step, sync, reps=3):
        """(median wall seconds, median CPU seconds of this process: every thread, Gloo's I/O ones
        included; on a loaded machine the CPU time is the steadier of the two)."""
        step()
        walls, cpus = [], []
        for _ in range(reps):
            sync()
            t0, c0 = time.perf_counter(), time.process_time()
            step()
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        return statistics.median(walls), statistics.median(cpus)

    def pair(name, g, dst, torch_step, placement=None):
        flow.boxing.reset_bytes_moved()
        g.to_global(placement=placement, sbp=dst)
        nbytes = flow.boxing.bytes_moved()
        t_flow = timeit(lambda: g.to_global(placement=placement, sbp=dst), dist.barrier)
        t_torch = timeit(torch_step, tdist.barrier)
        res[name] = (nbytes, *t_flow, *t_torch)

    split0 = GlobalTensor(flow.tensor(part), P, (S0,), (n, n))
    partial = GlobalTensor(flow.tensor(whole), P, (PS,), (n, n))
    broad = GlobalTensor(flow.tensor(whole), P, (B,), (n, n))
    tpart, twhole = torch.tensor(part), torch.tensor(whole)
    tout = torch.empty(n, n)

    pair("S(0) -> B (all-gather)", split0, B, lambda: tdist.all_gather_into_tensor(tout, tpart))

    def t_s0_s1():  # the blocks of the columns each process gets, then its columns put together
        send = torch.cat([c.contiguous().reshape(-1) for c in tpart.chunk(world, 1)])
        recv = torch.empty_like(send)
        tdist.all_to_all_single(recv, send)
        torch.cat(list(recv.view(world, rows, n // world)), 0)
    pair("S(0) -> S(1) (all-to-all)", split0, S1, t_s0_s1)
    pair("P -> B (all-reduce)", partial, B, lambda: tdist.all_reduce(twhole.clone()))
    tblock = torch.empty(rows, n)

    def t_p_s0():
        try:
            tdist.reduce_scatter_tensor(tblock, twhole)
        except (RuntimeError, NotImplementedError, ValueError):  # (Gloo's has none: all-reduce, slice)
            t = twhole.clone()
            tdist.all_reduce(t)
            t[rank * rows:(rank + 1) * rows].clone()
    pair("P -> S(0) (reduce-scatter)", partial, S0, t_p_s0)
    pair("B -> S(1) (local slice)", broad, S1, lambda: twhole[:, rank * (n // world):(rank + 1) * (n // world)].clone())
    first, second = flow.placement("cpu", [0]), flow.placement("cpu", [1])
    on_first = GlobalTensor(flow.tensor(whole) if rank == 0 else flow.empty(n, n, device="meta"), first, (B,), (n, n))

    def t_move():
        if rank == 0:
            tdist.send(twhole, 1)
        else:
            tdist.recv(tout, 0)
    pair("B on [0] -> B on [1] (send / recv)", on_first, B, t_move, placement=second)
    if rank == 1:  # (the receiving side of the move)
        print(json.dumps(res))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        return child()
    if len(sys.argv) > 1 and sys.argv[1] == "child_boxing":
        return child_boxing()
    if len(sys.argv) > 1 and sys.argv[1] == "child_ops":
        return child_ops()
    if len(sys.argv) > 1 and sys.argv[1] == "boxing":
        return main_boxing()
    if len(sys.argv) > 1 and sys.argv[1] == "ops":
        return main_ops()
    if len(sys.argv) > 1 and sys.argv[1] == "child_cnn":
        return child_cnn()
    if len(sys.argv) > 1 and sys.argv[1] == "cnn":
        return main_cnn()
    res = _launch("child")
    print(f"{'case':40s} {'ms':>9s}")
    for k, v in res.items():
        print(f"{k:40s} {v:9.3f}")


def main_ops():
    res = _launch("child_ops")
    print(f"{'op on a 64x64 tensor, 2 processes':34s} {'local us':>9s} {'global us':>10s} {'overhead us':>12s}")
    for k in [k[:-len(" local")] for k in res if k.endswith(" local")]:
        lo, gl = res[k + " local"], res[k + " global"]
        print(f"{k:34s} {lo:9.1f} {gl:10.1f} {gl - lo:12.1f}")


def main_cnn():
    res = _launch("child_cnn")
    print(f"{'CNN training step, global batch 64':44s} {'ms':>8s}")
    for k, v in res.items():
        print(f"{k:44s} {v:8.1f}")
    one, tone = res["CNN step, 1 process (whole batch)"], res["CNN step, 1 process PyTorch (whole batch)"]
    for k in ("CNN step, global tensors", "CNN step, global tensors in nn.Graph", "CNN step, oneflow DDP (local tensors)"):
        print(f"{k}: {res[k] / res['CNN step, PyTorch DDP']:.2f}x PyTorch DDP's time, "
              f"scaling efficiency {one / (2 * res[k]):.2f}")
    print(f"PyTorch DDP: scaling efficiency {tone / (2 * res['CNN step, PyTorch DDP']):.2f}")


def _launch(mode):
    return json.loads(launch_ranks(__file__, mode).strip().splitlines()[-1])


def main_boxing():
    res = _launch("child_boxing")
    print(f"{'boxing of 100 MB, 2 processes':36s} {'MB in':>7s} {'oneflow ms':>10s} {'torch ms':>9s} "
          f"{'oneflow GB/s':>12s} {'torch GB/s':>10s} {'ratio':>6s} {'oneflow CPU ms':>14s} {'torch CPU ms':>12s}")
    for k, (nbytes, tf, cf, tt, ct) in res.items():
        bw = [nbytes / t / 1e9 if nbytes else float("nan") for t in (tf, tt)]
        print(f"{k:36s} {nbytes / 1e6:7.1f} {tf * 1e3:10.1f} {tt * 1e3:9.1f} {bw[0]:12.2f} {bw[1]:10.2f} "
              f"{tt / tf:6.2f} {cf * 1e3:14.1f} {ct * 1e3:12.1f}")


if __name__ == "__main__":
    main()
