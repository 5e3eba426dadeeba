"""nn.Graph against eager oneflow and eager PyTorch, in the same process.

    .venv/bin/python benchmarks/bench_graph.py

Rows (time per call; ratios are flow-graph / other, lower is better):
  * infer/<model>: a forward pass under no_grad (eval graph);
  * train/<model>: forward, loss, backward and an SGD-momentum step (training graph; the eager
    loops call zero_grad / backward / step themselves).
Models: `tiny` (an MLP 32-64-64-10 on a batch of 16: launch-bound, where removing the Python of
build() matters most), `mlp32` (784-512-256-10, batch 32: overhead-bound), `mlp` (the same,
batch 128), `cnn` (the example's CNN, batch 64), `encoder` (a Transformer encoder layer, d 64,
batch 8 of 16 tokens, mean-pooled into a classifier: residual adds after Linears).
Columns: the graph with its passes (src/graph/passes.h: fusion and the arena included, the
default), the same graph with every pass off (`nopass`), eager oneflow, eager PyTorch. Each number is the median of 5 timed repeats
(about 0.2 s each) after a warm-up; `python benchmarks/bench_graph.py mlp32 cnn` runs some models;
`compile`: the time to trace and optimize a 5,000-node program; `allocs`: allocator calls and
process CPU time per inference step (one thread), passes against none; `pointwise`: the same for
a chain of pointwise ops on 16 MiB values (pointwise fusion against none); `trainalloc`: the same
per training step (SGD momentum) of mlp32 and cnn, graph with passes / without / eager, each on
its own copy of the model, in interleaved rounds (a loaded machine slows all three alike);
`trainupdate`: the optimizer's update as nodes of the program against its step() in Python (and
eager), SGD momentum and Adam, mlp32 and cnn, the same way; `passab`: each pass of
`graph.config.passes` on against off, the others at their defaults, training and inference of
tiny, mlp32, cnn and encoder, the same way, with the program's nodes and whether the numbers are the
default's (`passab-tiny`: the tiny model only, one short round: a harness check;
`run.py --suites passes` runs `passab` into RESULTS.md).
"""
import sys

import numpy as np
import torch

import oneflow as flow
from bench_train import median_time  # noqa: E402  (benchmarks/ is the script's folder)
from oneflow.nn.graph.config import _PASS_SWITCHES, _PASSES  # (pass -> its switch; the defaults)


def make(lib, name):
    nn = lib.nn
    if name == "tiny":
        return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)), (16, 32)
    if name in ("mlp", "mlp32"):
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                             nn.Linear(256, 10)), (128 if name == "mlp" else 32, 1, 28, 28)
    if name == "encoder":
        return _encoder(lib), (8, 16, 64)
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10)), (64, 1, 28, 28)


def _encoder(lib):
    """A Transformer encoder layer (d 64, 4 heads, no dropout: its residual adds follow a Linear,
    the case of allow_fuse_add_to_output) mean-pooled into a 10-way classifier."""
    nn = lib.nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0, batch_first=True)
            self.head = nn.Linear(64, 10)

        def forward(self, x):
            return self.head(self.layer(x).mean(dim=1))
    return Encoder()


def _no_passes(graph):
    for switch in _PASS_SWITCHES.values():
        getattr(graph.config, switch)(False)
    return graph


class Infer(flow.nn.Graph):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def build(self, x):
        return self.m(x)


class Train(flow.nn.Graph):
    def __init__(self, m, opt):
        super().__init__()
        self.m = m
        self.add_optimizer(opt)

    def build(self, x, y):
        loss = flow.nn.functional.cross_entropy(self.m(x), y)
        loss.backward()
        return loss


def timed(fn):
    return median_time(fn, target=0.2)


def row(label, graph, nopass, eager, torch_t):
    print(f"{label:12s} graph {graph * 1e3:8.3f} ms  nopass {nopass * 1e3:8.3f} ms  eager {eager * 1e3:8.3f} ms  "
          f"torch {torch_t * 1e3:8.3f} ms  graph/eager {graph / eager:5.2f}  graph/torch {graph / torch_t:5.2f}",
          flush=True)


def compile_rows(n_ops=5000):
    """Trace + passes time of a graph of n_ops pointwise nodes (the first call minus a later one)."""
    import time

    class Chain(flow.nn.Graph):
        def build(self, x):
            for _ in range(n_ops // 2):
                x = x * 1.0001 + 0.5
            return x
    x = flow.randn(16)
    for label, g in (("passes", Chain()), ("nopass", _no_passes(Chain()))):
        t0 = time.perf_counter()
        g(x)
        first = time.perf_counter() - t0
        run = timed(lambda: g(x))
        print(f"compile/{n_ops} ops ({label}): {(first - run) * 1e3:8.1f} ms  (a run {run * 1e3:.2f} ms)", flush=True)


def alloc_rows(names=("tiny", "mlp32", "mlp", "cnn"), steps=20):
    """Per inference step: CPU allocator calls and process CPU time on one thread (numbers a
    loaded machine still gives), the graph with its passes (fusion, the arena) against every pass
    off, and which nodes the program has."""
    import time
    threads = flow.get_num_threads()
    flow.set_num_threads(1)
    try:
        for name in names:
            fm, shape = make(flow, name)
            fm.eval()
            fx = flow.tensor(np.random.RandomState(0).randn(*shape).astype(np.float32))
            for label, g in (("passes", Infer(fm)), ("nopass", _no_passes(Infer(fm)))):
                g(fx)
                n0, t0 = flow._C._cpu_alloc_calls(), time.process_time()
                for _ in range(steps):
                    g(fx)
                calls, cpu = (flow._C._cpu_alloc_calls() - n0) / steps, (time.process_time() - t0) / steps
                (c,) = g._compiled.values()
                print(f"allocs/{name:6s} {label:6s} {calls:6.1f} allocations/step  {cpu * 1e3:8.3f} ms CPU/step  "
                      f"{c.program.num_nodes} nodes, arena {c.program.arena_bytes / 1024:.0f} KiB")
    finally:
        flow.set_num_threads(threads)


def pointwise_rows(shape=(1024, 4096), steps=10):
    """A chain of pointwise ops on a tensor larger than the caches (16 MiB a value): process CPU
    time per step on one thread, the graph with pointwise fusion (one pass over memory) against
    every pass off (one pass per op), and the allocator calls."""
    import time

    class Chain(flow.nn.Graph):
        def build(self, x, b):
            return flow.nn.functional.gelu(x * 1.5 + b) * flow.sigmoid(x) - x
    threads = flow.get_num_threads()
    flow.set_num_threads(1)
    try:
        rs = np.random.RandomState(0)
        x, b = flow.tensor(rs.randn(*shape).astype(np.float32)), flow.tensor(rs.randn(shape[-1]).astype(np.float32))
        for label, g in (("passes", Chain()), ("nopass", _no_passes(Chain()))):
            g(x, b)
            n0, t0 = flow._C._cpu_alloc_calls(), time.process_time()
            for _ in range(steps):
                g(x, b)
            calls, cpu = (flow._C._cpu_alloc_calls() - n0) / steps, (time.process_time() - t0) / steps
            (c,) = g._compiled.values()
            print(f"pointwise {label:6s} {calls:6.1f} allocations/step  {cpu * 1e3:8.2f} ms CPU/step  "
                  f"{c.program.num_nodes} nodes")
    finally:
        flow.set_num_threads(threads)


def _train_variants(name, make_opt, configure, steps, rounds, phase="train", last=None):
    """{label: (per-step CPU seconds, per-step allocator calls), one per round} of training steps
    (`phase` "infer": inference steps) of model `name` on one thread: a graph per label of
    `configure` ({label: fn(graph)}) and eager, each on its own copy of the model (the same
    start), taking turns `rounds` times, so an order effect or a burst of load elsewhere falls on
    all of them. `last` (a dict) receives each label's result of its last step and, for graphs,
    the graph."""
    import copy
    import time
    fm, shape = make(flow, name)
    fm.train(phase == "train")
    rs = np.random.RandomState(0)
    fx = flow.tensor(rs.randn(*shape).astype(np.float32))
    fy = flow.tensor(rs.randint(0, 10, size=shape[0]).astype(np.int64))
    runs, graphs = {}, {}
    for label in list(configure) + ["eager"]:
        m = copy.deepcopy(fm)
        if phase == "infer":
            if label == "eager":
                def step(m=m):
                    with flow.no_grad():
                        return m(fx)
                runs[label] = step
            else:
                graphs[label] = g = Infer(m)
                configure[label](g)
                runs[label] = lambda g=g: g(fx)
        elif label == "eager":
            opt = make_opt(m.parameters())

            def step(m=m, opt=opt):
                opt.zero_grad()
                loss = flow.nn.functional.cross_entropy(m(fx), fy)
                loss.backward()
                opt.step()
                return loss
            runs[label] = step
        else:
            graphs[label] = g = Train(m, make_opt(m.parameters()))
            configure[label](g)
            runs[label] = lambda g=g: g(fx, fy)
        runs[label]()
    out = {k: ([], []) for k in runs}
    threads = flow.get_num_threads()
    flow.set_num_threads(1)
    try:
        labels = list(runs)
        for r in range(rounds):
            # (each round starts with the next label: the first loop of a round runs on colder caches)
            for label in labels[r % len(labels):] + labels[:r % len(labels)]:
                fn = runs[label]
                n0, t0 = flow._C._cpu_alloc_calls(), time.process_time()
                for _ in range(steps):
                    res = fn()
                out[label][0].append((time.process_time() - t0) / steps)
                out[label][1].append((flow._C._cpu_alloc_calls() - n0) / steps)
                if last is not None:
                    last[label] = (res.detach().numpy(), graphs.get(label))
    finally:
        flow.set_num_threads(threads)
    return out


def _sgd_momentum(ps):
    return flow.optim.SGD(ps, lr=0.01, momentum=0.9)


def train_alloc_rows(names=("mlp32", "cnn"), steps=10, rounds=3):
    """Per training step (SGD momentum): CPU allocator calls and process CPU time on one thread,
    the graph with its passes (fusion, the arena, the update as nodes) against every pass off and
    eager (_train_variants)."""
    for name in names:
        r = _train_variants(name, _sgd_momentum, {"passes": lambda g: None, "nopass": _no_passes}, steps, rounds)
        out = "  ".join(f"{k} {min(cpu) * 1e3:8.3f} ms CPU {min(calls):6.1f} allocs" for k, (cpu, calls) in r.items())
        print(f"trainalloc/{name:6s} {out}  graph/eager {min(r['passes'][0]) / min(r['eager'][0]):5.2f}", flush=True)


def train_update_rows(names=("tiny", "mlp32", "cnn"), steps=10, rounds=5):
    """The optimizer's update as nodes of the program (allow_fuse_model_update_ops) against its
    step() in Python after the program, and eager, per training step (_train_variants): process
    CPU time (min and median of the rounds) and allocator calls, SGD momentum and Adam."""
    import statistics
    optims = {"sgdm": _sgd_momentum, "adam": lambda ps: flow.optim.Adam(ps, lr=1e-3)}
    configure = {"nodes": lambda g: g.config.allow_fuse_model_update_ops(True),
                 "python": lambda g: g.config.allow_fuse_model_update_ops(False)}
    for name in names:
        for oname, make_opt in optims.items():
            r = _train_variants(name, make_opt, configure, steps, rounds)
            out = "  ".join(f"{k} {min(cpu) * 1e3:7.3f} / {statistics.median(cpu) * 1e3:7.3f} ms "
                            f"{min(calls):5.1f} allocs" for k, (cpu, calls) in r.items())
            print(f"trainupdate/{name}/{oname:4s} (CPU min / median) {out}  nodes/python "
                  f"{min(r['nodes'][0]) / min(r['python'][0]):5.2f}", flush=True)


def _flip(pass_name):
    """configure(graph): the graph's defaults with one pass switched the other way."""
    switch, on = _PASS_SWITCHES[pass_name], not _PASSES[pass_name]
    return lambda g: getattr(g.config, switch)(on)


# Passes that act on training programs only (with an optimizer): not varied in inference rows.
_TRAIN_ONLY_PASSES = ("update_nodes", "drop_grad_writes")


def pass_ab_rows(names=("tiny", "mlp32", "cnn", "encoder"), steps=10, rounds=3):
    """Each pass of graph.config.passes against the defaults (all on but allow_fuse_add_to_output,
    off as in OneFlow): per model and phase (a training step with SGD momentum, an inference
    step), the default graph and, per pass, the graph with that one pass flipped ("-cse": off,
    "+add_to_output": on), each on its own model copy in interleaved rounds (_train_variants):
    process CPU time per step on one thread (min of the rounds; the ratio to the default's: above
    1 means the pass gains), allocator calls per step, the program's nodes, and whether the last
    step's result equals the default's bit for bit (else the largest relative difference). A pass
    that finds no work in a model shows the default's nodes and time."""
    for name in names:
        for phase in ("train", "infer"):
            configure = {"default": lambda g: None}
            for p in _PASSES:
                if phase == "train" or p not in _TRAIN_ONLY_PASSES:
                    configure[("-" if _PASSES[p] else "+") + p] = _flip(p)
            last = {}
            r = _train_variants(name, _sgd_momentum, configure, steps, rounds, phase, last)
            base_cpu, (base_out, _) = min(r["default"][0]), last["default"]
            for label, (cpu, calls) in r.items():
                out, g = last[label]
                diff = float(np.max(np.abs(out - base_out) / np.maximum(np.abs(base_out), 1e-30)))
                nodes = "" if g is None else f"{next(iter(g._compiled.values())).program.num_nodes:4d} nodes"
                print(f"passab/{phase}/{name:5s} {label:17s} {min(cpu) * 1e3:8.3f} ms CPU  x{min(cpu) / base_cpu:5.2f}"
                      f"  {min(calls):6.1f} allocs  {nodes:10s}  "
                      f"{'same' if diff == 0 else f'rel diff {diff:.1e}'}", flush=True)


def main():
    torch.set_num_threads(flow.get_num_threads())
    rs = np.random.RandomState(0)
    names = sys.argv[1:] or ("tiny", "mlp32", "mlp", "cnn", "compile", "allocs", "pointwise", "trainalloc")
    if "passab" in names:
        pass_ab_rows()
    if "passab-tiny" in names:  # (a harness check: the rows of the tiny model, one short round)
        pass_ab_rows(("tiny",), steps=2, rounds=1)
    if "compile" in names:
        compile_rows()
    if "allocs" in names:
        alloc_rows()
    if "pointwise" in names:
        pointwise_rows()
    if "trainalloc" in names:
        train_alloc_rows()
    if "trainupdate" in names:
        train_update_rows()
    special = ("compile", "allocs", "pointwise", "trainalloc", "trainupdate", "passab", "passab-tiny")
    for name in [n for n in names if n not in special]:
        fm, shape = make(flow, name)
        tm, _ = make(torch, name)
        x = rs.randn(*shape).astype(np.float32)
        y = rs.randint(0, 10, size=shape[0]).astype(np.int64)
        fx, fy, tx, ty = flow.tensor(x), flow.tensor(y), torch.from_numpy(x), torch.from_numpy(y)

        fm.eval()
        tm.eval()
        g, g0 = Infer(fm), _no_passes(Infer(fm))

        def eager_infer():
            with flow.no_grad():
                fm(fx)

        def torch_infer():
            with torch.no_grad():
                tm(tx)

        row(f"infer/{name}", timed(lambda: g(fx)), timed(lambda: g0(fx)), timed(eager_infer), timed(torch_infer))

        fm.train()
        tm.train()
        opt = flow.optim.SGD(fm.parameters(), lr=0.01, momentum=0.9)
        gt = Train(fm, opt)
        gt0 = _no_passes(Train(fm, flow.optim.SGD(fm.parameters(), lr=0.01, momentum=0.9)))
        opt_e = flow.optim.SGD(fm.parameters(), lr=0.01, momentum=0.9)
        topt = torch.optim.SGD(tm.parameters(), lr=0.01, momentum=0.9)

        def eager_step():
            opt_e.zero_grad()
            flow.nn.functional.cross_entropy(fm(fx), fy).backward()
            opt_e.step()

        def torch_step():
            topt.zero_grad()
            torch.nn.functional.cross_entropy(tm(tx), ty).backward()
            topt.step()

        row(f"train/{name}", timed(lambda: gt(fx, fy)), timed(lambda: gt0(fx, fy)), timed(eager_step),
            timed(torch_step))


if __name__ == "__main__":
    main()
