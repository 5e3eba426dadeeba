#!/usr/bin/env python3
"""Run upstream OneFlow's own Python test suite against this package, PyTorch as the comparator.

Upstream's tests (python/oneflow/test/{modules,tensor,...}) and their helpers
(python/oneflow/test_utils: the autotest decorators that run each case in oneflow and torch and
compare) are exported at run time from the read-only mirror with `git archive` into a temporary
directory; nothing of upstream is kept in this repository. `oneflow.test_utils` is made importable
by a conftest.py in that directory which appends an overlay folder to the installed package's
`oneflow.__path__` (upstream ships test_utils inside its package; ours does not).

Each test file runs in its own pytest process (a crash or hang takes down only that file), under a
wall-clock time box, with ONEFLOW_TEST_CPU_ONLY=1 so the CUDA-only cases skip themselves by their own
decorators. Results come from pytest's junit XML: per file collected / passed / failed / errors /
skipped, and the failures grouped by cause (missing name, signature mismatch, numeric mismatch,
crash or timeout, other runtime error) with the commonest messages.

  .venv/bin/python tools/upstream_suite.py --subdir modules --jobs 2 --timeout 120 \
      --json /tmp/ups.json --markdown /tmp/ups.md
  .venv/bin/python tools/upstream_suite.py --files test_abs.py test_add.py   # a few files
  .venv/bin/python tools/upstream_suite.py --report /tmp/ups.json           # re-summarise
  .venv/bin/python tools/upstream_suite.py --extras --files test_erf.py     # test-only deps first
  .venv/bin/python tools/upstream_suite.py --numpy1 --subdir tensor          # on numpy < 2

The machine is shared: keep --jobs at 1 or 2.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures as futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

MIRROR = "/work/.mirror/Oneflow-Inc+oneflow/repo"
TEST_ROOT = "python/oneflow/test"
UTILS = "python/oneflow/test_utils"
DEFAULT_SUBDIRS = ("modules", "tensor", "exceptions", "misc", "dataloader", "graph")

# conftest.py of the temporary tree. (1) upstream's tests do `from oneflow.test_utils...`: the
# overlay folder holds upstream's test_utils as a subpackage of the installed oneflow. (2) Files run
# in batches (one interpreter start, ~10 s of imports on the shared machine, serves several files):
# every test's outcome is appended to $UPS_LOG as it finishes, so a batch that crashes or times out
# still reports what ran, and the runner resumes after the file it died in. (3) A per-test alarm
# ($UPS_TEST_TIMEOUT) fails a test that runs too long instead of losing the whole batch. (4) sympy
# is imported before any alarm: torch imports it lazily, on a test's first symbolic-shape use, and
# an alarm raised inside that import left it half-imported (its submodules in sys.modules, the
# package not), so every later test of the batch failed in torch with an unrelated ImportError.
# (5) Upstream's harness, written against torch 1.x, makes a value generator of an argument's
# annotation (read with inspect.getfullargspec of the torch callable) by eval(repr(annotation)) in
# its generators module, where `tuple` names its own generator class: torch 2.x annotates with the
# builtin generic `tuple[int, int]`, which that eval cannot rebuild, so such arguments (pooling and
# convolution sizes, ...) were drawn as None and every draw failed in PyTorch ("autotest stuck in an
# endless loop"). The harness module gets a getfullargspec whose annotations spell builtin tuples
# as typing.Tuple, as torch 1.x's did; nothing else of the harness or of inspect changes.
# (6) numpy 2 removed names that upstream's tests (written against numpy 1.x) call: `np.product`
# (modules/test_expand) and `np.reshape(a, newshape=)` (gone in numpy 2.4; modules/test_activation).
# The suite's numpy gets them back as numpy 1.x had them (aliases of prod / reshape's shape); the
# environment, not our package, is what those calls test. Pinning numpy < 2 instead would break the
# extras (scipy, opencv, scikit-learn are built against numpy 2).
CONFTEST = '''\
import inspect, json, os, signal, types, typing, oneflow, pytest
try:
    import sympy  # noqa: F401  (see (4) above)
except ImportError:
    pass
import numpy as _np  # (6) above
if not hasattr(_np, "product"):
    _np.product = _np.prod
if "newshape" not in inspect.signature(_np.reshape).parameters:
    _np_reshape = _np.reshape

    def _reshape(a, *args, newshape=None, **kwargs):
        return _np_reshape(a, newshape, **kwargs) if newshape is not None else _np_reshape(a, *args, **kwargs)
    _np.reshape = _reshape
_overlay = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "overlay", "oneflow")
if _overlay not in oneflow.__path__:
    oneflow.__path__.append(_overlay)

def _typing_tuples(a):
    origin, args = typing.get_origin(a), typing.get_args(a)
    if origin is tuple and args:
        return typing.Tuple[tuple(_typing_tuples(x) for x in args)]
    if origin is typing.Union:
        return typing.Union[tuple(_typing_tuples(x) for x in args)]
    return a

def _getfullargspec(fn):
    spec = inspect.getfullargspec(fn)
    return spec._replace(annotations={k: _typing_tuples(v) for k, v in spec.annotations.items()})

try:  # (5) above
    from oneflow.test_utils.automated_test_util import torch_flow_dual_object as _dual
    _dual.inspect = types.SimpleNamespace(**{k: getattr(inspect, k) for k in dir(inspect) if not k.startswith("__")})
    _dual.inspect.getfullargspec = _getfullargspec
except ImportError:
    pass
_LOG = os.environ.get("UPS_LOG")
_LIMIT = int(os.environ.get("UPS_TEST_TIMEOUT", "0"))

def _emit(**rec):
    if _LOG:
        with open(_LOG, "a") as f:
            f.write(json.dumps(rec) + "\\n")

def _line(rep):
    crash = getattr(getattr(rep, "longrepr", None), "reprcrash", None)
    if crash is not None:
        return crash.message.splitlines()[0] if crash.message else ""
    text = str(rep.longrepr) if rep.longrepr is not None else ""
    lines = [l[1:].strip() for l in text.splitlines() if l.startswith("E ")]
    return (lines[-1] if lines else (text.strip().splitlines() or [""])[-1])[:300]

class _Timeout(BaseException):
    pass

def _alarm(signum, frame):
    raise _Timeout(f"test exceeded {_LIMIT}s")

def pytest_collectreport(report):
    if report.failed:
        _emit(event="collect_error", file=str(report.fspath), line=_line(report))

def pytest_runtest_logstart(nodeid, location):
    _emit(event="start", nodeid=nodeid)

def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        line = _line(report) if report.outcome == "failed" else ""
        if report.outcome == "failed" and "_Timeout" in line:
            line = "timeout: " + line
        _emit(event="result", nodeid=report.nodeid, when=report.when, outcome=report.outcome, line=line)

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if _LIMIT:
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(_LIMIT)
    try:
        yield
    finally:
        if _LIMIT:
            signal.alarm(0)
'''


# Test-only dependencies of upstream's files (`--extras`), installed into the interpreter that runs
# the suite: (module to import, pip requirement, the files that import it). CPU wheels from PyPI.
# setuptools < 81: the last ones with pkg_resources (`from pkg_resources import packaging`).
EXTRAS = (
    ("scipy", "scipy", "modules/test_activation, test_erf, test_erfc, test_erfinv, test_narrow"),
    ("cv2", "opencv-python-headless", "modules/test_dataset, test_image_* (via image_test_util)"),
    ("sklearn", "scikit-learn", "modules/test_roc_auc_score"),
    ("safetensors", "safetensors", "tensor/test_safetensors, misc/test_mock_scope"),
    ("diffusers", "diffusers", "misc/test_mock_diffusers"),
    ("pkg_resources", "setuptools<81", "modules/test_maxpool, test_global_maxpool"),
)
# Not installed, with why (the files stay "missing test dependency").
EXTRAS_LEFT_OUT = {
    "torchvision": "PyPI's only build for torch 2.13 (torchvision 0.28.0) is a CUDA one: its _C needs "
                   "libtorch_cuda.so / libc10_cuda.so, absent from the CPU torch, and `import torchvision` "
                   "fails registering its ops (modules/test_deform_conv2d, test_global_deform_conv2d, "
                   "test_global_roi_align, test_resnet_load_torch_weight_compatibile)",
}


def install_extras(python: str) -> dict:
    """pip-installs the EXTRAS whose module does not import yet, one at a time (one that has no
    wheel here is reported, not fatal). Returns {module: "present" | "installed" | "failed: ..."}."""
    state = {}
    for module, req, _files in EXTRAS:
        probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
        if probe.returncode == 0:
            state[module] = "present"
            continue
        proc = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", req],
                              capture_output=True, text=True)
        tail = (proc.stdout + proc.stderr).strip().splitlines()
        state[module] = "installed" if proc.returncode == 0 else "failed: " + (tail[-1][:200] if tail else "")
    for module, why in EXTRAS_LEFT_OUT.items():
        state[module] = "left out: " + why
    return state


# `--numpy1`: upstream's tests were written against numpy 1.x and some use what numpy 2 refuses
# (`a[0, 0] = np.ones(1)`: "setting an array element with a sequence", tensor/test_tensor_indexing2
# and its global twin). The suite's processes then import numpy < 2 from this folder (pip --target,
# first on PYTHONPATH); the interpreter's own numpy, and everything else of its environment, stay.
# torch, scipy, scikit-learn and opencv run on numpy 1.26 (their wheels are built for both).
NUMPY1_DIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "oneflow_upstream_suite" / "numpy1"


def install_numpy1(python: str) -> str:
    """numpy < 2 into NUMPY1_DIR (once); returns the folder to put first on PYTHONPATH."""
    if not (NUMPY1_DIR / "numpy").is_dir():
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target",
                        str(NUMPY1_DIR), "numpy<2"], check=True)
    return str(NUMPY1_DIR)


def export_tree(mirror: str, rev: str, dest: Path) -> Path:
    """git archive upstream's tests and test_utils into dest; returns the tests' root."""
    archive = subprocess.run(
        ["git", f"--git-dir={mirror}", "archive", rev, TEST_ROOT, UTILS],
        check=True, capture_output=True).stdout
    subprocess.run(["tar", "x", "-C", str(dest)], input=archive, check=True)
    overlay = dest / "overlay" / "oneflow"
    overlay.mkdir(parents=True)
    (dest / UTILS).rename(overlay / "test_utils")
    tests = dest / "tests"
    (dest / TEST_ROOT).rename(tests)
    (tests / "conftest.py").write_text(CONFTEST)
    return tests


def list_files(tests: Path, subdirs, names) -> list[Path]:
    out = []
    for sub in subdirs:
        d = tests / sub
        if not d.is_dir():
            continue
        out += sorted(p for p in d.glob("test_*.py"))
    if names:
        wanted = set(names)
        out = [p for p in out if p.name in wanted or f"{p.parent.name}/{p.name}" in wanted]
    return out


def classify(line: str) -> str:
    m = re.match(r"ModuleNotFoundError: No module named '([\w.]+)'", line)
    if m and m.group(1).split(".")[0] != "oneflow":
        return "missing test dependency"  # upstream's tests import scipy, torchvision, cv2, ...
    if line.startswith("ValueError: autotest stuck in an endless loop"):
        return "harness: PyTorch rejects the generated case"  # every draw raised in torch
    if re.search(r"\b(ModuleNotFoundError|ImportError|NameError)\b", line) or "has no attribute" in line:
        return "missing name"
    if re.search(r"incompatible function arguments|unexpected keyword|positional argument|"
                 r"required (keyword-only |positional )?argument|got multiple values|takes no arguments|"
                 r"argument '?\w+'? must be|expected .* but got|\(\) got an", line):
        return "signature mismatch"
    if line.startswith("AssertionError") or "not close" in line.lower() or "Mismatched elements" in line:
        return "numeric mismatch"
    if "pickle" in line or "deepcopy" in line:
        return "pickling / deepcopy"
    if line.startswith(("NotImplementedError", "builtins.NotImplementedError")):
        return "not implemented"
    return "other error"


def normalise(line: str) -> str:
    """Group messages that differ only by numbers, shapes or object addresses."""
    line = re.sub(r"0x[0-9a-f]+", "0x..", line)
    line = re.sub(r"\btensor\(\[.*", "tensor(...)", line)
    line = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    return line[:200]


def _new_record(rel: str) -> dict:
    return {"file": rel, "collected": 0, "passed": 0, "failed": 0, "errors": 0, "skipped": 0,
            "status": "", "seconds": 0.0, "causes": []}


def _finish(rec: dict, outcomes: dict) -> dict:
    """Counts and status of a file from its tests' outcomes (nodeid -> (outcome, kind, line))."""
    for nodeid, (outcome, kind, line) in outcomes.items():
        rec["collected"] += not nodeid.endswith("::<import>")  # an import error is no test
        rec[outcome] += 1
        if kind:
            rec["causes"].append((kind, line))
    if rec["status"] in ("crash", "timeout"):
        return rec
    if rec["collected"] == 0 and rec["errors"]:
        rec["status"] = "import error"
    elif rec["failed"] or rec["errors"]:
        rec["status"] = "fail"
    elif rec["passed"] == 0:
        rec["status"] = "all skipped" if rec["skipped"] else "empty"
    else:
        rec["status"] = "pass"
    return rec


def run_batch(py: str, tests_root: Path, paths: list, timeout: int, test_timeout: int,
              work: Path, tag: str, snapshot: str = "", numpy1: str = "") -> tuple[list, list]:
    """One pytest process over several files. Returns (records of the files it finished,
    files it never reached because the process died or ran out of time: to run again)."""
    log = work / f"{tag}.jsonl"
    # ONEFLOW_CI=1 as upstream's CI sets it (some files read it unconditionally).
    env = dict(os.environ, ONEFLOW_TEST_CPU_ONLY="1", ONEFLOW_CI="1", CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1",
               PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg", UPS_LOG=str(log),
               UPS_TEST_TIMEOUT=str(test_timeout))
    if numpy1:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [numpy1, env.get("PYTHONPATH", "")]))
    launch = ["-m", "pytest"]
    if snapshot:
        # Import oneflow from a frozen copy: an editable install's redirecting finder would
        # otherwise serve the live source tree, which may change during a long run.
        launch = ["-c", "import sys; sys.meta_path[:] = [f for f in sys.meta_path if "
                  "'editable' not in type(f).__module__]; sys.path.insert(0, sys.argv.pop(1)); "
                  "import pytest; sys.exit(pytest.main(sys.argv[1:]))", snapshot]
    cmd = [os.path.abspath(py), *launch, "-q", "-p", "no:cacheprovider", "--rootdir", str(tests_root),
           "--continue-on-collection-errors",
           *[str(p) for p in paths]]
    t0 = time.time()
    died = None
    try:
        proc = subprocess.run(cmd, cwd=tests_root, env=env, capture_output=True, text=True,
                              timeout=timeout)
        if proc.returncode < 0 or proc.returncode not in (0, 1, 2, 5):
            tail = (proc.stdout + proc.stderr).strip().splitlines()
            died = f"pytest died (exit {proc.returncode}) " + (tail[-1][:150] if tail else "")
    except subprocess.TimeoutExpired:
        died = f"timeout: batch exceeded {timeout}s"
    elapsed = round(time.time() - t0, 1)

    rel_of = {str(p): str(p.relative_to(tests_root)) for p in paths}
    recs = {rel: _new_record(rel) for rel in rel_of.values()}
    outcomes = {rel: {} for rel in recs}
    seen, last_started = set(), None

    def rel_for(nodeid: str) -> str:
        return nodeid.split("::", 1)[0]

    events = [json.loads(l) for l in log.read_text().splitlines()] if log.exists() else []
    for ev in events:
        if ev["event"] == "collect_error":
            f = ev["file"]
            rel = rel_of.get(f) or (os.path.relpath(f, tests_root) if os.path.isabs(f) else f)
            if rel in outcomes:
                seen.add(rel)
                outcomes[rel][rel + "::<import>"] = ("errors", classify(ev["line"]), ev["line"])
            continue
        rel = rel_for(ev["nodeid"])
        if rel not in outcomes:
            continue
        seen.add(rel)
        if ev["event"] == "start":
            last_started = rel
            continue
        nodeid, outcome = ev["nodeid"], ev["outcome"]
        if outcome == "failed":
            kind = "crash" if ev["line"].startswith("timeout") else classify(ev["line"])
            res = ("failed" if ev["when"] == "call" else "errors", kind, ev["line"])
        elif outcome == "skipped":
            res = ("skipped", "", "")
        else:
            res = ("passed", "", "")
        prev = outcomes[rel].get(nodeid)
        if prev is None or prev[0] == "passed":  # a teardown error overrides the call's pass
            outcomes[rel][nodeid] = res
    rerun = []
    if died:
        # The file that was running died with the process; files after it never started.
        for p in paths:
            rel = rel_of[str(p)]
            if rel == last_started:
                recs[rel]["status"] = "timeout" if died.startswith("timeout") else "crash"
                recs[rel]["causes"].append(("crash", died))
            elif rel not in seen:
                rerun.append(p)
                del recs[rel]
    done = [_finish(r, outcomes[r["file"]]) for r in recs.values()]
    for r in done:  # time of the batch, shared out; a per-file figure is only indicative
        r["seconds"] = round(elapsed / max(1, len(done)), 1)
    return done, rerun


def summarise(records: list[dict], top: int = 25, per_file: bool = True) -> str:
    by_status = collections.Counter(r["status"] for r in records)
    tot = {k: sum(r[k] for r in records) for k in ("collected", "passed", "failed", "errors", "skipped")}
    ran_files = [r for r in records if r["status"] not in ("all skipped", "empty")]
    ran_tests = tot["passed"] + tot["failed"] + tot["errors"]
    lines = ["## Totals", "",
             f"- files: {len(records)}; " + ", ".join(f"{k}: {v}" for k, v in sorted(by_status.items())),
             f"- files that pass whole, of those not entirely skipped (CUDA-only / multi-device): "
             f"{by_status['pass']} / {len(ran_files)}"
             + (f" = {100.0 * by_status['pass'] / len(ran_files):.1f}%" if ran_files else ""),
             f"- tests: collected {tot['collected']}, passed {tot['passed']}, failed {tot['failed']}, "
             f"errors {tot['errors']}, skipped {tot['skipped']}",
             f"- tests that ran (not skipped) and passed: {tot['passed']} / {ran_tests}"
             + (f" = {100.0 * tot['passed'] / ran_tests:.1f}%" if ran_tests else ""), ""]
    kinds = collections.Counter()
    msgs = collections.Counter()
    files_of = collections.defaultdict(set)
    for r in records:
        for kind, line in r["causes"]:
            kind = kind if kind == "crash" else classify(line)  # the current rules, also for old JSON
            if kind == "numeric mismatch" and r["file"].startswith("exceptions/"):
                kind = "error message wording"  # exceptions/ asserts upstream's message texts
            kinds[kind] += 1
            key = (kind, normalise(line))
            msgs[key] += 1
            files_of[key].add(r["file"])
    lines += ["## Failure causes by kind", "", "| kind | failing tests |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in kinds.most_common()]
    lines += ["", f"## Top {top} failure messages", "", "| count | files | kind | message |", "|---|---|---|---|"]
    for (kind, msg), n in msgs.most_common(top):
        lines.append(f"| {n} | {len(files_of[(kind, msg)])} | {kind} | `{msg.replace('|', '/')}` |")
    lines += ["", "## Per directory", "", "| directory | files | pass whole | all skipped | tests passed / ran |",
              "|---|---|---|---|---|"]
    by_dir = collections.defaultdict(list)
    for r in records:
        by_dir[r["file"].split("/")[0]].append(r)
    for d, rs in sorted(by_dir.items()):
        ran = sum(r["passed"] + r["failed"] + r["errors"] for r in rs)
        lines.append(f"| {d} | {len(rs)} | {sum(r['status'] == 'pass' for r in rs)} | "
                     f"{sum(r['status'] == 'all skipped' for r in rs)} | {sum(r['passed'] for r in rs)} / {ran} |")
    if not per_file:
        return "\n".join(lines) + "\n"
    lines += ["", "## Per file", "", "| file | status | collected | passed | failed | errors | skipped | s |",
              "|---|---|---|---|---|---|---|---|"]
    for r in sorted(records, key=lambda r: r["file"]):
        lines.append(f"| {r['file']} | {r['status']} | {r['collected']} | {r['passed']} | {r['failed']} "
                     f"| {r['errors']} | {r['skipped']} | {r['seconds']} |")
    return "\n".join(lines) + "\n"


def save_json(path: str, records: list) -> None:
    """Merge records into the JSON file (keyed by file: a re-run of a file replaces its record)."""
    p = Path(path)
    merged = json.loads(p.read_text()) if p.exists() else {}
    merged.update({r["file"]: r for r in records})
    p.write_text(json.dumps(merged, indent=1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", default=MIRROR)
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--subdir", nargs="*", default=list(DEFAULT_SUBDIRS))
    ap.add_argument("--files", nargs="*", default=[], help="only these file names (test_x.py or sub/test_x.py)")
    ap.add_argument("--shard", default="", help="i/n: run every n-th file starting at i (batches)")
    ap.add_argument("--jobs", type=int, default=1, help="files in parallel (shared machine: 1 or 2)")
    ap.add_argument("--batch", type=int, default=8, help="files per pytest process")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per file (a batch gets batch x this)")
    ap.add_argument("--test-timeout", type=int, default=60, help="seconds per test (SIGALRM in the test)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--snapshot", default="", help="import oneflow from this folder (a copy of "
                    "python/oneflow with the built extension) instead of the installed package")
    ap.add_argument("--numpy1", action="store_true", help="run the tests on numpy < 2 (pip-installed "
                    "once into NUMPY1_DIR, needs PyPI), as upstream's tests were written for")
    ap.add_argument("--json", help="write the per-file records here (merged with an existing file)")
    ap.add_argument("--markdown", help="write the summary here")
    ap.add_argument("--report", help="only summarise this JSON of earlier runs")
    ap.add_argument("--top", type=int, default=25, help="failure messages listed")
    ap.add_argument("--no-files", action="store_true", help="leave the per-file table out")
    ap.add_argument("--extras", action="store_true", help="first pip-install upstream's test-only "
                    "dependencies (EXTRAS: scipy, opencv, scikit-learn, safetensors, diffusers, "
                    "setuptools<81) into --python's environment; opt-in, needs PyPI")
    args = ap.parse_args()
    if args.extras:
        for module, state in install_extras(args.python).items():
            print(f"extras: {module}: {state}", flush=True)

    if args.report:
        records = list(json.loads(Path(args.report).read_text()).values())
        text = summarise(records, args.top, per_file=not args.no_files)
        Path(args.markdown).write_text(text) if args.markdown else print(text)
        return 0
    numpy1 = install_numpy1(args.python) if args.numpy1 else ""
    if args.jobs > 2:
        print("upstream_suite: --jobs above 2 overloads the shared machine", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="upstream_suite_") as tmp:
        tmp = Path(tmp)
        tests = export_tree(args.mirror, args.rev, tmp)
        files = list_files(tests, args.subdir, args.files)
        if args.shard:
            i, n = map(int, args.shard.split("/"))
            files = files[i::n]
        work = tmp / "logs"
        work.mkdir()
        queue = [files[k:k + args.batch] for k in range(0, len(files), args.batch)]
        records, counter = [], 0
        with futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            pending = set()
            while queue or pending:
                while queue and len(pending) < max(1, args.jobs):
                    counter += 1
                    batch = queue.pop(0)
                    pending.add(pool.submit(run_batch, args.python, tests, batch,
                                            args.timeout * len(batch), args.test_timeout, work,
                                            f"b{counter}", args.snapshot, numpy1))
                finished, pending = futures.wait(pending, return_when=futures.FIRST_COMPLETED)
                for job in finished:
                    done, rerun = job.result()
                    if rerun:
                        queue.append(rerun)
                    for r in done:
                        records.append(r)
                        print(f"[{len(records)}/{len(files)}] {r['file']}: {r['status']} "
                              f"{r['passed']}/{r['collected']}", flush=True)
                    if args.json:  # after every batch: an interrupted run keeps what it measured
                        save_json(args.json, done)
    text = summarise(records)
    if args.markdown:
        Path(args.markdown).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
