"""One command for every benchmark: oneflow against PyTorch in the same run, written to
benchmarks/RESULTS.md.

    .venv/bin/python benchmarks/run.py            # everything (long: whole models, torch.compile)
    .venv/bin/python benchmarks/run.py --quick    # a few minutes: op rows + the small models, eager
    .venv/bin/python benchmarks/run.py --suites models --models resnet50,gpt2_small

How it measures (measure.py): each library runs in its own long-lived worker process; for each
row both workers build the case, then take turns, several rounds, each round one calibrated timed
loop per library (the order alternates), and the row reports the median and the spread. Peak
memory and "import to end of first step" come from fresh processes (one per library and model:
`run.py --probe`). Rates are also given as a fraction of this machine's measured limits: GFLOP/s
of the fastest large single-precision matmul here (numpy's, torch's or oneflow's BLAS), GB/s
of a 1 GiB array copy (STREAM-like).
The older per-subject scripts (suites.SCRIPTS) still time both libraries in one process; their
output is copied in as it is.
"""
import time

_T0 = time.perf_counter()  # before any library import: the start of "import to first step"

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
LIBS = ("oneflow", "torch")


def _args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="op rows marked quick and the small models, eager only")
    p.add_argument("--suites", default="core,models,scripts",
                   help="comma list of core, models, scripts, passes (nn.Graph: each pass on / off, not in the default)")
    p.add_argument("--models", default="", help="comma list of model names (default: all, or the quick ones)")
    p.add_argument("--size", default="full", choices=["full", "tiny"], help="model sizes (tiny: harness check)")
    p.add_argument("--rounds", type=int, default=0, help="timed rounds per row (default 5, quick 3)")
    p.add_argument("--target", type=float, default=0.0, help="seconds per timed loop (default 0.3, quick 0.15)")
    p.add_argument("--no-compiled", action="store_true", help="skip the nn.Graph / torch.compile columns")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"))
    p.add_argument("--worker", choices=LIBS, help=argparse.SUPPRESS)
    p.add_argument("--probe", nargs=2, metavar=("LIB", "MODEL"), help=argparse.SUPPRESS)
    return p.parse_args(argv)


# ---------------------------------------------------------------------------------------------
# Child processes


def probe(lib_name, model_name, size, threads):
    """Fresh process: import the library, build the model, run eager training steps; prints the
    time from process start to the end of the first step and the peak resident memory."""
    from measure import import_library, peak_rss_mb
    import suites.models as sm

    lib = import_library(lib_name, threads)
    sm.SIZE["value"] = size
    step = sm.train(model_name)(lib, "eager")
    step()
    first = time.perf_counter() - _T0
    for _ in range(2):
        step()
    print(json.dumps({"first_step_s": first, "peak_rss_mb": peak_rss_mb()}))


class Worker:
    def __init__(self, lib, args):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", lib, "--size", args.size,
               "--threads", str(args.threads)]
        self.lib = lib
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def ask(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.lib} worker died (exit code {self.proc.wait()})")
        return json.loads(line)

    def close(self):
        try:
            self.ask(op="quit")
        except (RuntimeError, BrokenPipeError, ValueError):
            pass
        self.proc.wait()


# ---------------------------------------------------------------------------------------------
# The coordinator


def machine_limits(threads):
    """This machine's limits, measured: GFLOP/s of a large float32 matmul (2048³, best of five) as
    the fastest of numpy's, torch's and oneflow's BLAS, each in its own process (numpy's bundled
    BLAS alone reads half the peak on some machines), and GB/s of a 1 GiB array copy with numpy
    (bytes read + written: larger than the last-level cache, so DRAM; rows whose data fits in
    cache can read above it)."""
    gemm = r"""
import json, sys, time
name, threads = sys.argv[1], int(sys.argv[2])
import numpy as np
a = np.random.rand(2048, 2048).astype(np.float32)
if name == "numpy":
    mm = lambda: a @ a
else:
    lib = __import__(name)
    lib.set_num_threads(threads)
    t = lib.tensor(a)
    mm = lambda: lib.matmul(t, t)
mm()
ts = []
for _ in range(5):
    t0 = time.perf_counter(); mm(); ts.append(time.perf_counter() - t0)
print(2 * 2048 ** 3 / min(ts) / 1e9)
"""
    copy = r"""
import time, numpy as np
x = np.ones(256 << 20, np.float32); y = np.empty_like(x); np.copyto(y, x)
cs = []
for _ in range(5):
    t = time.perf_counter(); np.copyto(y, x); cs.append(time.perf_counter() - t)
print(2 * x.nbytes / min(cs) / 1e9)
"""
    run = lambda code, *argv: float(subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,  # noqa: E731
                                                   text=True, check=True).stdout.strip())
    peaks = {name: run(gemm, name, str(threads)) for name in ("numpy", "torch", "oneflow")}
    best = max(peaks, key=peaks.get)
    return {"gflops": peaks[best], "gflops_by": best, "gbs": run(copy)}


def _close(a, b, rtol=1e-3):
    return len(a) == len(b) and all(abs(x - y) <= rtol * max(1.0, abs(x), abs(y)) for x, y in zip(a, b))


def measure(case, mode, workers, rounds, target):
    from measure import summarize

    row = {"key": case.key(), "mode": mode, "case": case}
    setups = {}
    for w in workers:
        setups[w.lib] = w.ask(op="setup", case=case.key(), mode=mode, target=target)
    errors = {lib: r["error"] for lib, r in setups.items() if "error" in r}
    if errors:
        row["note"] = "; ".join(f"{lib}: {e}" for lib, e in errors.items())
    else:
        checks = [setups[lib].get("check") for lib in LIBS]
        if checks[0] is not None and not _close(*checks):
            row["note"] = f"RESULTS DIFFER: {checks[0]} vs {checks[1]}"
        samples = {lib: [] for lib in LIBS}
        for r in range(rounds):
            for w in (workers if r % 2 == 0 else workers[::-1]):
                samples[w.lib].append(w.ask(op="time", case=case.key(), mode=mode)["t"])
        for lib in LIBS:
            row[lib] = summarize(samples[lib])
            row[lib + "_first"] = setups[lib]["first_s"]
            row.update({k: v for k, v in setups[lib].get("info", {}).items()})
    for w in workers:
        w.ask(op="drop", case=case.key(), mode=mode)
    return row


def run_cases(selected, args, rounds, target):
    workers = [Worker(lib, args) for lib in LIBS]
    rows = []
    try:
        for case in selected:
            for mode in case.modes:
                if mode != "eager" and (args.no_compiled or args.quick):
                    continue
                t = time.perf_counter()
                row = measure(case, mode, workers, rounds, target)
                rows.append(row)
                ratio = row["oneflow"][0] / row["torch"][0] if "oneflow" in row else float("nan")
                print(f"{case.key():58s} {mode:6s} ratio {ratio:6.2f}  ({time.perf_counter() - t:5.1f} s)"
                      + (f"  [{row['note']}]" if "note" in row else ""), flush=True)
    finally:
        for w in workers:
            w.close()
    return rows


def run_probes(names, args):
    out = {}
    for name in names:
        for lib in LIBS:
            cmd = [sys.executable, os.path.abspath(__file__), "--probe", lib, name, "--size", args.size,
                   "--threads", str(args.threads)]
            res = subprocess.run(cmd, capture_output=True, text=True)
            try:
                out[(name, lib)] = json.loads(res.stdout.strip().splitlines()[-1])
            except (IndexError, ValueError):
                out[(name, lib)] = {"error": (res.stderr.strip().splitlines() or ["no output"])[-1][:160]}
        print(f"probe {name}: {out[(name, 'oneflow')]} / {out[(name, 'torch')]}", flush=True)
    return out


def run_scripts(names):
    """{name: its output} of each script; a name may carry arguments ("bench_graph passab")."""
    out = {}
    for name in names:
        t = time.perf_counter()
        script, *extra = name.split()
        res = subprocess.run([sys.executable, os.path.join(HERE, script + ".py"), *extra], capture_output=True,
                             text=True, cwd=os.path.dirname(HERE), timeout=1800)
        out[name] = (res.stdout + (f"\n[exit {res.returncode}] {res.stderr[-400:]}" if res.returncode else "")).strip()
        print(f"script {name}: {time.perf_counter() - t:.0f} s", flush=True)
    return out


def main(argv=None):
    args = _args(argv)
    if args.worker:
        import measure
        import suites
        import suites.models as sm

        sm.SIZE["value"] = args.size
        return measure.worker(args.worker, args.threads, suites.registry)
    if args.probe:
        return probe(args.probe[0], args.probe[1], args.size, args.threads)

    import results
    import suites
    import suites.models as sm

    sm.SIZE["value"] = args.size
    rounds = args.rounds or (3 if args.quick else 5)
    target = args.target or (0.15 if args.quick else 0.3)
    wanted = set(args.suites.split(","))
    models = [m for m in args.models.split(",") if m] or [m for m in sm.MODELS if not args.quick or m in sm.QUICK]
    selected = [c for c in suites.registry().values()
                if (c.suite == "core" and "core" in wanted and (c.quick or not args.quick))
                or (c.suite == "models" and "models" in wanted and c.name.split("/")[0] in models)]
    started = datetime.datetime.now(datetime.timezone.utc)
    limits = machine_limits(args.threads)
    print(f"machine: {limits['gflops']:.1f} GFLOP/s float32 matmul ({limits['gflops_by']}), "
          f"{limits['gbs']:.1f} GB/s copy", flush=True)
    rows = run_cases(selected, args, rounds, target)
    probes = run_probes(models, args) if "models" in wanted else {}
    scripts = run_scripts(suites.SCRIPTS) if "scripts" in wanted and not args.quick else {}
    if "passes" in wanted:  # (bench_graph.py pass_ab_rows: each nn.Graph pass on against off)
        scripts.update(run_scripts(["bench_graph passab" + ("-tiny" if args.size == "tiny" else "")]))
    command = "python benchmarks/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = results.render(rows, probes, scripts, limits, dict(
        started=started, command=command.strip(), rounds=rounds, threads=args.threads, size=args.size))
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
