"""Resident memory of a whole-model training step, phase by phase, oneflow against PyTorch: where
the peak that `run.py`'s "peak memory" column reports comes from (issue 43).

    .venv/bin/python benchmarks/memory_profile.py gpt2_small            # both libraries
    .venv/bin/python benchmarks/memory_profile.py resnet50 --steps 3 --size tiny

Each library runs in a fresh process (as `run.py --probe`): import, build the model and its
batch, then `--steps` eager training steps of benchmarks/suites/models.py split into phases
(forward + loss, backward, optimizer step). After each phase it reads the process's current
resident set (/proc/self/statm) and its peak so far (ru_maxrss), and for oneflow the bytes its
caching CPU allocator holds free (`_cached_bytes`), what it gave back to the system so far (Note
[Resident cap] in src/core/allocator.cpp) and the oneDNN weight cache's copies; for both, the
page faults and system CPU time so far (what giving pages back costs: each given-back page faults
again on its next use). The table gives, per phase, both libraries' current and peak MB; a phase
whose peak column grows is where the peak is made.
"""
import argparse
import json
import os
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
LIBS = ("oneflow", "torch")


def _rss_mb():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(lib_name, model_name, size, steps, threads):
    """One library in this process: prints one JSON list of phase rows."""
    import numpy as np

    from measure import import_library, peak_rss_mb
    import suites.models as sm
    from models import MODELS

    rows = []
    lib = None

    def mark(phase):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        row = {"phase": phase, "rss_mb": _rss_mb(), "peak_mb": peak_rss_mb(), "cached_mb": 0.0,
               "dnnl_weights_mb": 0.0, "given_back_mb": 0.0, "minflt": usage.ru_minflt, "sys_s": usage.ru_stime}
        if lib_name == "oneflow" and lib is not None:
            internal = lib._oneflow_internal
            row["cached_mb"] = internal._cached_bytes() / 2**20
            alloc = getattr(internal, "_cpu_allocator_stats", None)  # Note [Resident cap] (older builds: none)
            if alloc:
                stats = alloc()
                row["given_back_mb"] = stats["given_back"] / 2**20
                row["live_large_mb"] = stats["live_large"] / 2**20
                row["peak_live_large_mb"] = stats["peak_live_large"] / 2**20
                row["free_resident_mb"] = stats["free_resident"] / 2**20
            stats = getattr(internal, "_dnnl_weight_cache_stats", None)  # (older builds: none)
            row["dnnl_weights_mb"] = stats()["bytes"] / 2**20 if stats else 0.0
        rows.append(row)

    mark("start")
    lib = import_library(lib_name, threads)
    mark("import")
    module = MODELS[model_name]
    cfg = module.SIZES[size]
    lib.manual_seed(0)
    model = module.build(lib, cfg)
    inputs, target = module.batch(lib, cfg, np.random.default_rng(0))
    opt = sm._optimizer(lib, model_name, model)
    mark("model + batch")
    for s in range(steps):
        opt.zero_grad()
        loss = module.loss(lib, model(*inputs), target)
        mark(f"step {s + 1} forward")
        loss.backward()
        del loss
        mark(f"step {s + 1} backward")
        opt.step()
        mark(f"step {s + 1} optimizer")
    print(json.dumps(rows))


def _run(lib, args):
    cmd = [sys.executable, os.path.abspath(__file__), args.model, "--child", lib, "--size", args.size,
           "--steps", str(args.steps), "--threads", str(args.threads)]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def table(results):
    of, th = results["oneflow"], results["torch"]
    lines = ["| phase | oneflow MB (peak) | torch MB (peak) | peak ratio | oneflow allocator cache MB | "
             "given back MB (so far) | oneDNN weight copies MB | page faults (oneflow / torch) | "
             "system CPU s (oneflow / torch) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for a, b in zip(of, th):
        ratio = a["peak_mb"] / b["peak_mb"] if b["peak_mb"] else float("nan")
        lines.append(f"| {a['phase']} | {a['rss_mb']:.0f} ({a['peak_mb']:.0f}) | {b['rss_mb']:.0f} ({b['peak_mb']:.0f}) "
                     f"| {ratio:.2f} | {a['cached_mb']:.0f} | {a.get('given_back_mb', 0):.0f} "
                     f"| {a['dnnl_weights_mb']:.0f} | {a.get('minflt', 0)} / {b.get('minflt', 0)} "
                     f"| {a.get('sys_s', 0):.2f} / {b.get('sys_s', 0):.2f} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model", help="a model of benchmarks/models (resnet50, gpt2_small, ...)")
    p.add_argument("--size", default="full", choices=["full", "tiny"])
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--child", choices=LIBS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child, args.model, args.size, args.steps, args.threads)
        return
    results = {lib: _run(lib, args) for lib in LIBS}
    print(f"{args.model} ({args.size}), {args.steps} eager training steps, {args.threads} threads\n")
    print(table(results))


if __name__ == "__main__":
    main()
