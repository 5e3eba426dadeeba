"""Time per op in one whole-model step, oneflow against PyTorch, from each library's own profiler
(oneflow.profiler / torch.profiler): which ops make a model row slower than PyTorch's (issue 43).

    .venv/bin/python benchmarks/op_profile.py lstm_lm                  # eager training step
    .venv/bin/python benchmarks/op_profile.py resnet50 --infer --rows 20
    .venv/bin/python benchmarks/op_profile.py gpt2_small --size tiny --steps 2

Each library runs in a fresh process: it builds the step of benchmarks/suites/models.py, runs it
`--warmup` times, then `--steps` times under its profiler, and prints every op's self time per
step. Names are joined across the libraries after dropping torch's `aten::` prefix and its
autograd engine's `evaluate_function:` wrapper (so `addmm` meets `addmm`, `AddmmBackward0`
meets `AddmmBackward0`); ops one library calls and the other does not keep a blank column. The
profilers add their own overhead per op (a few microseconds): compare the rows with each other
and the step times with `run.py`'s, not with those of an unprofiled run.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
LIBS = ("oneflow", "torch")


def _key(name):
    name = name.split("evaluate_function: ")[-1]
    return name[len("aten::"):] if name.startswith("aten::") else name


def child(lib_name, args):
    from measure import import_library
    import suites.models as sm

    lib = import_library(lib_name, args.threads)
    sm.SIZE["value"] = args.size
    step = (sm.infer if args.infer else sm.train)(args.model)(lib, "eager")
    for _ in range(args.warmup):
        step()
    prof_mod = lib.profiler
    with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU]) as prof:
        t0 = time.perf_counter()
        for _ in range(args.steps):
            step()
        wall = (time.perf_counter() - t0) / args.steps
    per_op = {}
    for ev in prof.key_averages():
        if getattr(ev, "is_user_annotation", False):
            continue
        k = _key(ev.key)
        count, us = per_op.get(k, (0, 0.0))
        per_op[k] = (count + ev.count, us + ev.self_cpu_time_total)
    ops = {k: {"calls": c / args.steps, "ms": us / 1000.0 / args.steps} for k, (c, us) in per_op.items()}
    print(json.dumps({"step_ms": wall * 1000.0, "ops": ops}))


def _run(lib, args, argv):
    cmd = [sys.executable, os.path.abspath(__file__), *argv, "--child", lib]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def table(res, rows):
    of, th = res["oneflow"]["ops"], res["torch"]["ops"]
    names = sorted(set(of) | set(th), key=lambda k: -max(of.get(k, {}).get("ms", 0), th.get(k, {}).get("ms", 0)))
    lines = ["| op | oneflow ms/step (calls) | torch ms/step (calls) | oneflow / torch |", "|---|---|---|---|"]

    def cell(d):
        return f"{d['ms']:.2f} ({d['calls']:g})" if d else ""

    for k in names[:rows]:
        a, b = of.get(k), th.get(k)
        ratio = f"{a['ms'] / b['ms']:.2f}" if a and b and b["ms"] > 0 else ""
        lines.append(f"| {k} | {cell(a)} | {cell(b)} | {ratio} |")
    sums = [sum(d["ms"] for d in ops.values()) for ops in (of, th)]
    lines.append(f"| (all ops, self time) | {sums[0]:.2f} | {sums[1]:.2f} | {sums[0] / sums[1]:.2f} |")
    a, b = res["oneflow"]["step_ms"], res["torch"]["step_ms"]
    lines.append(f"| (profiled step, wall) | {a:.2f} | {b:.2f} | {a / b:.2f} |")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model", help="a model of benchmarks/models (resnet50, lstm_lm, ...)")
    p.add_argument("--infer", action="store_true", help="the no-grad inference forward instead of a training step")
    p.add_argument("--size", default="full", choices=["full", "tiny"])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--rows", type=int, default=30)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--child", choices=LIBS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child, args)
        return
    res = {lib: _run(lib, args, argv) for lib in LIBS}
    what = "inference" if args.infer else "training step"
    print(f"{args.model} ({args.size}) eager {what}, {args.steps} profiled steps, {args.threads} threads\n")
    print(table(res, args.rows))


if __name__ == "__main__":
    main()
