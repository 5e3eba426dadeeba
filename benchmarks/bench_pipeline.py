"""The 1F1B pipeline schedule of nn.Graph (Note [1F1B], python/oneflow/nn/graph/pipeline.py)
against the same two-stage graph run one micro-batch after another: 2 processes on Gloo over
loopback, a stage each (3 x Linear(512, 512) + tanh per stage, batch 256 in 8 micro-batches of 32,
SGD). Both graphs give their stages `set_stage`; the sequential one runs with
`config.set_pipeline_schedule("sequential")` (the A/B switch). Time per call: the median of interleaved rounds (the two graphs take
turns, so a loaded machine slows both alike), and process CPU time per call of each rank. The
overlap needs a core per process: on a machine shared with other jobs the gain shrinks.

    .venv/bin/python benchmarks/bench_pipeline.py
"""
import json
import statistics
import sys
import time

from measure import json_objects, launch_ranks

WIDTH, DEPTH, BATCH, MICRO = 512, 3, 256, 8


def child():
    import numpy as np
    import oneflow as flow
    flow.set_num_threads(1)
    flow.env.init()
    rank = flow.distributed.get_rank()
    pls = [flow.placement("cpu", ranks=[0]), flow.placement("cpu", ranks=[1])]

    def stage(pl):
        layers = []
        for _ in range(DEPTH):
            layers += [flow.nn.Linear(WIDTH, WIDTH), flow.nn.Tanh()]
        return flow.nn.Sequential(*layers).to_global(pl, flow.sbp.broadcast)

    class Two(flow.nn.Graph):
        def __init__(self, schedule):
            super().__init__()
            flow.manual_seed(0)
            self.s0, self.s1 = stage(pls[0]), stage(pls[1])
            self.s0.config.set_stage(0, pls[0])
            self.s1.config.set_stage(1, pls[1])
            self.config.set_pipeline_schedule(schedule)
            self.add_optimizer(flow.optim.SGD(list(self.s0.parameters()) + list(self.s1.parameters()), lr=1e-3))
            self.config.set_gradient_accumulation_steps(MICRO)

        def build(self, x, y):
            h = self.s0(x)
            out = self.s1(h)
            loss = ((out - y) ** 2).mean()
            loss.backward()
            return loss

    rng = np.random.default_rng(0)
    x = flow.tensor(rng.standard_normal((BATCH, WIDTH)).astype(np.float32), placement=pls[0], sbp=flow.sbp.broadcast)
    y = flow.tensor(rng.standard_normal((BATCH, WIDTH)).astype(np.float32), placement=pls[1], sbp=flow.sbp.broadcast)
    graphs = {"sequential": Two("sequential"), "1F1B": Two("1f1b")}
    wall = {k: [] for k in graphs}
    cpu = {k: [] for k in graphs}
    for g in graphs.values():
        g(x, y)
        g(x, y)
    for _ in range(7):
        for k, g in graphs.items():
            flow.distributed.barrier()
            t0, c0 = time.perf_counter(), time.process_time()
            g(x, y)
            flow.distributed.barrier()
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
    res = {k: (statistics.median(wall[k]), statistics.median(cpu[k])) for k in graphs}
    print(json.dumps({"rank": rank, **res}), flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        return child()
    rows = json_objects(launch_ranks(__file__, "child"))
    rows.sort(key=lambda d: d["rank"])
    print(f"two stages, {MICRO} micro-batches of {BATCH // MICRO}: ms per call (wall, median) and CPU ms per rank")
    for k in ("sequential", "1F1B"):
        print(f"{k:12s} wall {rows[0][k][0] * 1e3:8.1f}  " + "  ".join(
            f"rank {d['rank']} CPU {d[k][1] * 1e3:7.1f}" for d in rows))
    print(f"1F1B / sequential (wall): {rows[0]['1F1B'][0] / rows[0]['sequential'][0]:.2f}")


if __name__ == "__main__":
    main()
