"""Collectives and a DistributedDataParallel step, oneflow against torch.distributed, both on Gloo
over loopback with 2 processes (each library's own launcher; the libraries run one after the
other, alternating over 3 rounds; each row is the median of the rounds: single runs on the
shared 2-core machine drift by tens of percent). oneflow runs with and without its agreement check.

    .venv/bin/python benchmarks/bench_dist.py
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time


def child(lib):
    L = __import__(lib)
    import numpy as np
    dist = L.distributed
    L.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    res = {}

    def timeit(name, fn, reps):
        fn()
        times = []
        for _ in range(reps):
            dist.barrier()
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        res[name] = statistics.median(times) * 1e3

    for n in (1024, 1 << 20, 1 << 24):
        t = L.ones(n)
        timeit(f"all_reduce {n} f32", lambda: dist.all_reduce(t), 30 if n < 1 << 24 else 8)
    t = L.ones(1 << 20)
    outs = [L.empty(1 << 20) for _ in range(dist.get_world_size())]
    timeit("all_gather 1M f32", lambda: dist.all_gather(outs, t), 20)
    timeit("broadcast 1M f32", lambda: dist.broadcast(t, 0), 20)
    timeit("barrier", lambda: dist.barrier(), 50)
    L.manual_seed(0)
    model = L.nn.Sequential(L.nn.Linear(512, 1024), L.nn.ReLU(), L.nn.Linear(1024, 1024), L.nn.ReLU(),
                            L.nn.Linear(1024, 10))
    ddp = L.nn.parallel.DistributedDataParallel(model)
    opt = L.optim.SGD(ddp.parameters(), lr=0.01)
    x = L.tensor(np.random.default_rng(rank).standard_normal((64, 512)).astype(np.float32))
    y = L.tensor(np.random.default_rng(rank).integers(0, 10, 64))

    def step():
        opt.zero_grad()
        L.nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
    timeit("DDP step MLP 1.6M params b64", step, 20)
    if rank == 0:
        print("RESULT " + json.dumps(res), flush=True)
    dist.destroy_process_group()


def run(lib, check=True):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    launcher = "oneflow.distributed.launch" if lib == "oneflow" else "torch.distributed.run"
    cmd = [sys.executable, "-m", launcher, "--nproc_per_node", "2", "--master_port", str(port), __file__,
           "--child", lib]
    env = dict(os.environ, OMP_NUM_THREADS="1", ONEFLOW_DIST_CHECK="1" if check else "0")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"{lib} run failed:\n{out.stdout}\n{out.stderr}")


def main(rounds=3):
    """oneflow with its agreement check (the default, Note [Collective agreement]) and without
    (ONEFLOW_DIST_CHECK=0), and torch."""
    runs = {"checked": [], "unchecked": [], "torch": []}
    for _ in range(rounds):
        runs["checked"].append(run("oneflow"))
        runs["unchecked"].append(run("oneflow", check=False))
        runs["torch"].append(run("torch"))
    med = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    print(f"{'case (2 processes, Gloo, loopback)':36s} {'oneflow':>10s} {'unchecked':>10s} {'torch':>10s} "
          f"{'torch/flow':>10s} {'(unchecked)':>11s}")
    for k, v in med["checked"].items():
        u, t = med["unchecked"][k], med["torch"][k]
        print(f"{k:36s} {v:8.3f}ms {u:8.3f}ms {t:8.3f}ms {t / v:10.2f} {t / u:11.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main()
