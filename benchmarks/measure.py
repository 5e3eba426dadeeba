"""The measuring half of benchmarks/run.py: cases, the calibrated timer, and the worker process.

A *case* builds, for one library, a zero-argument step to time (`make(lib) -> step`). Each library
runs in its own long-lived worker process (`run.py --worker oneflow|torch`), so neither library's
threads, allocator or import state touch the other's numbers; the coordinator (run.py) drives both
workers over stdin/stdout with one JSON object a line, interleaving the libraries round by round.
"""
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time


class Case:
    """One row. `kind` is "time" (lower is better) or "rate" (work / time, higher is better);
    `work` is the work of one step in `unit` (bytes for GB/s, flops for GFLOP/s, items for items/s);
    `limit` names the machine limit the rate is a fraction of ("flops", "bandwidth") or None.
    `check(lib, step_result)` returns a few floats the coordinator compares across the libraries."""

    def __init__(self, suite, name, make, kind="time", work=None, unit="", limit=None, check=None,
                 modes=("eager",), quick=False, info=None):
        self.suite, self.name, self.make = suite, name, make
        self.kind, self.work, self.unit, self.limit = kind, work, unit, limit
        self.check, self.modes, self.quick = check, modes, quick
        self.info = info  # optional (lib, mode, step) -> {name: number}, measured once at setup

    def key(self):
        return f"{self.suite}/{self.name}"


def calibrate(step, target):
    """Loop length so that one sample of `number` calls takes about `target` seconds."""
    t0 = time.perf_counter()
    step()
    dt = time.perf_counter() - t0
    number = 1
    while dt < 0.02 and number < 1 << 22:
        number *= 4
        t0 = time.perf_counter()
        for _ in range(number):
            step()
        dt = time.perf_counter() - t0
    return max(1, int(number * target / max(dt, 1e-9)))


def sample(step, number):
    t0 = time.perf_counter()
    for _ in range(number):
        step()
    return (time.perf_counter() - t0) / number


def summarize(samples):
    """Median and spread (half the range between the fastest and slowest sample, as a fraction
    of the median)."""
    med = statistics.median(samples)
    return med, (max(samples) - min(samples)) / 2 / med if med else 0.0


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def import_library(name, threads):
    if name == "oneflow":
        import oneflow as lib
    else:
        import torch as lib
    if threads:
        lib.set_num_threads(threads)
    return lib


def _live_key(cmd):
    return cmd["case"] + ":" + cmd.get("mode", "eager")


def worker(lib_name, threads, registry):
    """The loop of a worker process: setup / time / check / drop / quit commands from stdin.
    `registry()` returns {case key: Case} (imported lazily: the suites import their models)."""
    lib = import_library(lib_name, threads)
    cases = registry()
    live = {}  # key -> (step, number)
    out = sys.stdout
    for line in sys.stdin:
        cmd = json.loads(line)
        reply = {}
        try:
            op = cmd["op"]
            if op == "setup":
                case = cases[cmd["case"]]
                t0 = time.perf_counter()
                mode = cmd.get("mode", "eager")
                step = case.make(lib, mode)
                first = step()  # the first call: graph tracing / torch.compile happen here
                reply["first_s"] = time.perf_counter() - t0
                if case.check is not None:
                    reply["check"] = [float(v) for v in case.check(lib, first)]
                if case.info is not None:
                    reply["info"] = case.info(lib, mode, step)
                live[_live_key(cmd)] = (step, calibrate(step, cmd.get("target", 0.2)))
                reply["number"] = live[_live_key(cmd)][1]
            elif op == "time":
                step, number = live[_live_key(cmd)]
                time.sleep(0.05)  # let the other worker's OpenMP threads stop spinning
                reply["t"] = sample(step, number)
            elif op == "drop":
                live.pop(_live_key(cmd), None)
                import gc
                gc.collect()
            elif op == "quit":
                break
            reply["rss_mb"] = peak_rss_mb()
        except Exception as e:  # noqa: BLE001 - a failing case is a row note, not a dead worker
            reply = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


def launch_ranks(script, mode, nproc=2):
    """The stdout of `script mode` run in `nproc` processes by oneflow's launcher, one thread each
    (the multi-process benchmarks: bench_global.py, bench_pipeline.py); exits with the output of a
    failed run."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", str(nproc), "--master_port",
           str(port), os.path.abspath(script), mode]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if r.returncode:
        sys.exit(r.stdout + r.stderr)
    return r.stdout


def json_objects(text):
    """The JSON objects printed in `text`, in order: the ranks of launch_ranks share one stdout, so
    one rank's line can arrive glued to another's."""
    dec, out, i = json.JSONDecoder(), [], text.find("{")
    while i >= 0:
        obj, end = dec.raw_decode(text, i)
        out.append(obj)
        i = text.find("{", end)
    return out
