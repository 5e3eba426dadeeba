"""Global tensors against DistributedDataParallel: the same data-parallel MLP step (784-512-10,
batch 256, SGD) in 2 processes on Gloo over loopback, one with DDP on local tensors, one with the
module made global (broadcast parameters, the batch split(0)), eagerly and as an nn.Graph; plus
one small pointwise op on a
split tensor against the same op on its local component (the dispatcher's cost per op). Medians
of 20 steps after 3 warm-up steps; the shared 2-core machine drifts by tens of percent.

    .venv/bin/python benchmarks/bench_global.py
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time


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


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        return child()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", "2", "--master_port", str(port),
           os.path.abspath(__file__), "child"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if r.returncode:
        sys.exit(r.stdout + r.stderr)
    res = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"{'case':40s} {'ms':>9s}")
    for k, v in res.items():
        print(f"{k:40s} {v:9.3f}")


if __name__ == "__main__":
    main()
