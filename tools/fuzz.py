"""Fuzzes the public API with hostile arguments (issue 39): every call must answer, fast, with a
result or a typed exception -- never a signal, a hang, `std::` text or an untyped exception.

The catalogue is generated, never written by hand: every public callable of oneflow,
oneflow.nn.functional, oneflow.linalg, oneflow.fft, oneflow.special and every Tensor method, each
with the hostile calls of `calls_for` (no arguments, wrong types, None, strings, negative / huge
sizes and dims, 2**31 / 2**62, 0-size / 0-d / non-contiguous / NaN tensors, int for float and the
reverse, bool, complex, mismatched shapes and dtypes, requires_grad inputs then backward()). The
op table (tools/optable.py) types the parameters of its ops, so that each parameter in turn gets
hostile values while the ones before it are valid. A new op is fuzzed without writing anything.

Calls run in batches in a child process (tools/fuzz.py --child) with a time limit per call: a
child that dies (a signal) or does not answer in time is killed, the call is recorded as a crash
or a hang, and the batch goes on in a new child. Each call is classified:
  ok       returned
  typed    raised TypeError / ValueError / IndexError / RuntimeError / NotImplementedError /
           OverflowError / OSError / BufferError (and their subclasses) with a readable message
  untyped  another exception (KeyError, AttributeError, ...), or a message carrying C++ text
           (std::, bad_cast, basic_string) or none at all
  crash    the child died of a signal
  hang     no answer within the time limit

  python tools/fuzz.py                       the whole catalogue: a summary table, findings file
  python tools/fuzz.py --sample N --seed S   a deterministic sample of N calls
  python tools/fuzz.py --list                the catalogue's size per namespace
  python tools/fuzz.py --write-doc           the whole run's counts into docs/errors.md
"""
import argparse
import collections
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

NAMESPACES = ["oneflow", "oneflow.nn.functional", "oneflow.linalg", "oneflow.fft", "oneflow.special"]
# OSError: the file functions' FileNotFoundError / IsADirectoryError, as PyTorch's.
# BufferError: the buffer protocol's own refusal, PyTorch's for a DLPack export of a tensor that
# requires grad
TYPED = ("TypeError", "ValueError", "IndexError", "RuntimeError", "NotImplementedError", "OverflowError", "OSError",
         "BufferError")
# Exceptions outside TYPED that PyTorch raises for the same callable by design, and ours with it:
# GradScaler's factor checks are `assert`s there (Note [GradScaler's two positional orders]).
AS_PYTORCH = {"oneflow.GradScaler": ("AssertionError",)}
# Text that betrays an unconverted C++ exception or a message no user can act on; also an op named
# twice ("pool(): pool(): ...": a message that writes the name its OpScope already puts in front).
UNREADABLE = re.compile(r"std::|bad_cast|basic_string|vector::_M|bad_alloc|bad_function_call|"
                        r"unordered_map::at|map::at|nanobind|nb::|(?:^|\s)([\w.]+)\(\): \1\(\): ")
# Callables that change the process itself rather than compute (fork servers, the interpreter's
# exit, interactive debuggers, blocking on other processes): not ops, and harmful to the batch.
SKIP = {
    "oneflow.set_num_threads", "oneflow.set_num_interop_threads",  # thread pools of 2**62 threads
    "oneflow.env.init", "oneflow.boxing", "oneflow.compile",
}
SKIP_RE = re.compile(r"(^|\.)(_|wait|barrier|spawn|launch|init_process_group|breakpoint|exit)")

# ---- the hostile values: name -> expression built in the child (fresh per call)

TENSORS = {
    "T": "flow.randn(2, 3)",
    "T0d": "flow.randn(())",
    "T0size": "flow.randn(0, 3)",
    "Tnc": "flow.randn(3, 2).t()",
    "Tint": "flow.arange(6).reshape(2, 3)",
    "Tbool": "flow.tensor([[True, False, True], [False, True, False]])",
    "Tc": "flow.randn(2, 3, dtype=flow.complex64)",
    "Tnan": "flow.tensor([[float('nan'), float('inf'), -float('inf')], [0.0, -0.0, 1e38]])",
    "T64": "flow.randn(2, 3, dtype=flow.float64)",
    "T4d": "flow.randn(1, 4, 2, 2)",
    "Tmis": "flow.randn(3, 2)",
    "Tg": "flow.randn(2, 3, requires_grad=True)",
}
SCALARS = {
    "None": "None", "str": "'abc'", "0": "0", "1": "1", "-1": "-1", "-3": "-3", "2": "2",
    "2**31": "2**31", "2**62": "2**62", "-2**62": "-2**62", "1.5": "1.5", "nan": "float('nan')",
    "inf": "float('inf')", "True": "True", "cplx": "1+2j", "[]": "[]", "[huge,-1]": "[2**62, -1]",
    "(2,3)": "(2, 3)", "[-1]": "[-1]", "dict": "{'a': 1}", "obj": "object()", "[str]": "['x']",
}
VALUES = {**TENSORS, **SCALARS}
HOSTILE = list(VALUES)
# A shorter list for the positions after a valid prefix and for the odd receivers.
FEW = ["None", "str", "-1", "2**62", "1.5", "True", "T0size", "Tbool", "Tc", "Tmis", "[huge,-1]", "obj"]
RECEIVERS = ["T0d", "T0size", "Tnc", "Tint", "Tbool", "Tc", "Tnan", "Tg"]
# A valid value per table parameter type (the prefix before the hostile position).
GOOD = {"Tensor": "T", "TensorLike": "T", "Tensor[]": "[T]", "Scalar": "1", "int": "1", "float": "1.5",
        "bool": "True", "int[]": "[1]", "float[]": "[1.5]", "str": None, "DType": None, "Device": None,
        "Generator": None, "Any": "1"}


def _table_params():
    """Public name -> parameter types, from the op table's signatures (`also` / `aliases` too)."""
    try:
        import optable
        from gen_ops import Param, split_params
    except Exception:  # the table's reader needs yaml: without it every callable is fuzzed untyped
        return {}
    out = {}
    for e in optable.load():
        m = re.match(r"^\w+\((.*)\)\s*->", e["sig"])
        if not m:
            continue
        params, kw = [], False
        for text in split_params(m.group(1)):
            text = text.strip()
            if not text:
                continue
            if text == "*":
                kw = True
                continue
            try:
                params.append(Param(text, kw))
            except (ValueError, AssertionError):
                params = None
                break
        if params is None:
            continue
        # (type, name, may be left out, keyword-only, None is its default)
        types = [(p.type, p.name, p.default is not None or p.optional, p.kw_only, p.default == "None")
                 for p in params]
        for name in [e["name"]] + list(e.get("also") or []) + list(e.get("aliases") or []):
            out.setdefault(name, types)
    return out


def targets():
    """Every public callable: (qualified name, how to reach it in the child), sorted."""
    import types as pytypes

    import oneflow as flow

    out = []
    for ns in NAMESPACES:
        mod = eval(ns.replace("oneflow", "flow", 1), {"flow": flow})
        for name in sorted(dir(mod)):
            if name.startswith("_"):
                continue
            obj = getattr(mod, name, None)
            if obj is None or not callable(obj) or isinstance(obj, pytypes.ModuleType):
                continue
            q = f"{ns}.{name}"
            if q in SKIP or SKIP_RE.search(name):
                continue
            out.append((q, "fn"))
    for name in sorted(dir(flow.Tensor)):
        if name.startswith("_") or SKIP_RE.search(name):
            continue
        if callable(getattr(flow.Tensor, name, None)):
            out.append((f"Tensor.{name}", "method"))
    return out


def calls_for(qname, kind, table):
    """The hostile calls of one callable: (qname, receiver or None, [args], {kwargs}, backward?)."""
    calls = []
    if kind == "method":
        meth = qname.split(".", 1)[1]
        calls.append((qname, "T", [], {}, False))
        for r in RECEIVERS:
            calls.append((qname, r, [], {}, r == "Tg"))
            for h in ("2**62", "str"):
                calls.append((qname, r, [h], {}, False))
        for h in HOSTILE:
            calls.append((qname, "T", [h], {}, False))
        for h in FEW:
            calls.append((qname, "T", ["T", h], {}, False))
        calls.append((qname, "Tg", ["Tg"], {}, True))
        calls.append((qname, "Tg", ["1"], {}, True))
        params = table.get(meth)
        first = 1
    else:
        calls.append((qname, None, [], {}, False))
        for h in HOSTILE:
            calls.append((qname, None, [h], {}, False))
            calls.append((qname, None, ["T", h], {}, False))
        for h in FEW:
            calls.append((qname, None, ["T", "T", h], {}, False))
        for a, b in (("T", "Tmis"), ("T", "T64"), ("Tint", "T"), ("T0size", "T0size"), ("Tc", "T"),
                     ("T4d", "2**62"), ("T4d", "2**31"), ("T", "[huge,-1]")):
            calls.append((qname, None, [a, b], {}, False))
        for args in (["Tg"], ["Tg", "Tg"], ["Tg", "1"], ["Tg", "T"]):
            calls.append((qname, None, args, {}, True))
        params = table.get(qname.split(".")[-1]) or table.get(qname.replace("oneflow.", "", 1))
        first = 0
    # Typed positions: the parameters before position i valid, hostile values at i (positionally
    # and by keyword).
    if params:
        prefix = []
        for i, (ptype, pname, optional, kw_only, _) in enumerate(params[first:]):
            good = GOOD.get(ptype)
            recv = "T" if kind == "method" else None
            for h in FEW + ["2**31", "-2**62", "[]", "nan"]:
                if not kw_only:
                    calls.append((qname, recv, prefix + [h], {}, False))
            for h in ("None", "str", "2**62", "Tc"):
                calls.append((qname, recv, list(prefix), {pname: h}, False))
            if good is None or kw_only:
                break
            prefix.append(good)
    # The same call can come from two rules: keep the first.
    seen, unique = set(), []
    for c in calls:
        key = json.dumps(c)
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique


def catalogue():
    table = _table_params()
    out = []
    for qname, kind in targets():
        out.extend(calls_for(qname, kind, table))
    return out


def describe(call):
    qname, recv, args, kwargs, backward = call
    a = ", ".join(args + [f"{k}={v}" for k, v in kwargs.items()])
    head = f"{recv}.{qname.split('.', 1)[1]}" if recv else qname
    return f"{head}({a})" + (" + backward()" if backward else "")


# ---- the child: runs the calls it is sent, answers one line per call


def _child():
    # The protocol runs on a private copy of stdout; what the calls print goes nowhere.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    import warnings

    import oneflow as flow

    warnings.simplefilter("ignore")
    proto.write("ready\n")
    dflt = flow.get_default_dtype()
    for line in sys.stdin:
        i, call = json.loads(line)
        kind, etype, msg = _run(flow, call)
        flow.set_default_dtype(dflt)  # a call may have changed the process's state
        flow.set_grad_enabled(True)
        flow.set_default_device(None)
        flow.set_autocast_enabled("cpu", False)
        flow.set_anomaly_enabled(False)
        proto.write(json.dumps([i, kind, etype, msg]) + "\n")


class _Probes:
    """Calls of known outcome, for the test of the classification (tests/test_fuzz.py)."""
    segv = staticmethod(lambda: os.kill(os.getpid(), signal.SIGSEGV))
    sleep = staticmethod(lambda: time.sleep(3600))
    keyerror = staticmethod(lambda: {}["0"])
    stdtext = staticmethod(lambda: (_ for _ in ()).throw(RuntimeError("std::bad_cast")))
    twice = staticmethod(lambda: (_ for _ in ()).throw(RuntimeError("pool(): pool(): Expected 3D or 4D tensor")))
    typeerror = staticmethod(lambda: (_ for _ in ()).throw(TypeError("probe(): expected a Tensor, got str")))
    ok = staticmethod(lambda: 1)


def classify_probe(timeout=3.0):
    calls = [(f"fuzzprobe.{n}", None, [], {}, False) for n in ("segv", "sleep", "keyerror", "typeerror", "stdtext", "twice", "ok")]
    res = run(list(range(len(calls))), calls, timeout)
    return {calls[i][0].split(".")[1]: k for i, (k, _, _) in res.items()}


def _build(flow, name):
    return eval(VALUES[name], {"flow": flow}) if name in VALUES else eval(name, {"flow": flow})


def _run(flow, call):
    qname, recv, args, kwargs, backward = call
    try:
        vals = [_build(flow, "[flow.randn(2, 3)]" if a == "[T]" else a) for a in args]
        kw = {k: _build(flow, v) for k, v in kwargs.items()}
        if recv is not None:
            fn = getattr(_build(flow, recv), qname.split(".", 1)[1])
        elif qname.startswith("fuzzprobe."):
            fn = getattr(_Probes, qname.split(".", 1)[1])
        else:
            ns, name = qname.rsplit(".", 1)
            fn = getattr(eval(ns.replace("oneflow", "flow", 1), {"flow": flow}), name)
    except Exception as e:  # building the arguments is not the call under test
        return "setup", type(e).__name__, str(e)[:300]
    try:
        r = fn(*vals, **kw)
        if backward:
            outs = r if isinstance(r, (tuple, list)) else [r]
            for o in outs:
                if isinstance(o, flow.Tensor) and o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex):
                    o.abs().sum().backward()
                    break
        del r
    except BaseException as e:  # noqa: BLE001 -- classifying every exception is the point
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            return "untyped", type(e).__name__, str(e)[:300]
        msg = str(e)
        typed = any(c.__name__ in TYPED for c in type(e).__mro__) or type(e).__name__ in AS_PYTORCH.get(qname, ())
        if not typed or UNREADABLE.search(msg) or not msg.strip():
            return "untyped", type(e).__name__, msg[:300]
        return "typed", type(e).__name__, msg[:300]
    return "ok", "", ""


# ---- the parent: batches, time limits, attribution


def _limit_memory():
    import resource

    # A call asking for 2**31 floats fails to allocate instead of taking the machine's memory.
    lim = int(os.environ.get("FUZZ_MEMORY_LIMIT", 3 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    os.setsid()


class Child:
    def __init__(self, workdir, argv=None):
        env = dict(os.environ, OMP_NUM_THREADS="1", ONEFLOW_NUM_THREADS="1", PYTHONWARNINGS="ignore",
                   ONEFLOW_LEAK_WARNINGS="0")
        self.p = subprocess.Popen([sys.executable] + (argv or [os.path.abspath(__file__), "--child"]), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=workdir, env=env,
                                  text=True, bufsize=1, preexec_fn=_limit_memory)
        line = self._read(120)
        if line != "ready":
            self.kill()
            raise RuntimeError("the fuzz child did not start")

    def _read(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return None
        return self.p.stdout.readline().strip()

    def call(self, i, call, timeout):
        """(kind, exception type, message) of call i; crash / hang when the child is lost."""
        try:
            self.p.stdin.write(json.dumps([i, call]) + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            return self._lost()
        line = self._read(timeout)
        if line is None:
            self.kill()
            return "hang", "", f"no answer in {timeout} s"
        if not line:
            return self._lost()
        j, kind, etype, msg = json.loads(line)
        assert j == i
        return kind, etype, msg

    def _lost(self):
        rc = self.p.wait()
        sig = -rc if rc < 0 else None
        return "crash", (signal.Signals(sig).name if sig else f"exit {rc}"), ""

    def kill(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()


poisoners = []  # calls after which the next call's values no longer built (run() restarts the child)


def run(indices, cat, timeout=10.0, progress=False):
    results = {}
    workdir = tempfile.mkdtemp(prefix="oneflow-fuzz-")  # calls that write files (save('abc')) land here
    child = None
    t0 = time.time()
    prev = None
    for n, i in enumerate(indices):
        if child is None:
            child = Child(workdir)
        kind, etype, msg = child.call(i, cat[i], timeout)
        if kind == "setup":
            # An earlier call changed the process so that the values no longer build (it replaced
            # a module attribute, say): the call is retried in a fresh child, and the poisoner noted.
            poisoners.append(describe(cat[prev]) if prev is not None else "?")
            child.kill()
            child = Child(workdir)
            kind, etype, msg = child.call(i, cat[i], timeout)
        if kind == "hang":
            # Asked once more, alone in a fresh child: on a machine shared with builds, a legacy
            # constructor filling 2 GiB (`CharTensor(2**31)`) has passed the limit once in a
            # whole run. A hang is a call that does not answer twice.
            child.kill()
            child = Child(workdir)
            kind, etype, msg = child.call(i, cat[i], timeout)
        if kind in ("crash", "hang"):
            child.kill()
            child = None
        results[i] = (kind, etype, msg)
        prev = i
        if progress and n % 1000 == 999:
            print(f"  {n + 1}/{len(indices)} calls, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    if child is not None:
        child.p.stdin.close()
        child.kill()
    return results


def summarize(results, cat):
    by_kind = collections.Counter(k for k, _, _ in results.values())
    by_ns = collections.defaultdict(collections.Counter)
    for i, (k, _, _) in results.items():
        q = cat[i][0]
        ns = "Tensor" if q.startswith("Tensor.") else q.rsplit(".", 1)[0]
        by_ns[ns][k] += 1
    kinds = ["ok", "typed", "untyped", "crash", "hang", "setup"]
    lines = ["| namespace | calls | " + " | ".join(kinds) + " |", "|---" * (len(kinds) + 2) + "|"]
    for ns in sorted(by_ns):
        c = by_ns[ns]
        lines.append(f"| {ns} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in kinds) + " |")
    lines.append(f"| all | {len(results)} | " + " | ".join(str(by_kind[k]) for k in kinds) + " |")
    return "\n".join(lines), by_kind


def findings(results, cat):
    """The calls that are not ok / typed, one line each (worst kinds first)."""
    order = {"crash": 0, "hang": 1, "untyped": 2}
    bad = [(order[k], describe(cat[i]), k, e, m) for i, (k, e, m) in results.items() if k in order]
    return [f"{k}\t{d}\t{e}\t{m}".replace("\n", " ") for _, d, k, e, m in sorted(bad)]


def sample_indices(cat, n, seed, indices=None):
    """A deterministic sample of n of `indices` (default: the whole catalogue), sorted in the
    catalogue's order, that holds every callable once n reaches their number: one call of each
    callable first (drawn with the seed), the rest drawn from the other calls. A plain random
    draw of the CI sample's size missed some callables in every run."""
    pool = list(range(len(cat))) if indices is None else list(indices)
    rng = random.Random(seed)
    by_callable = collections.defaultdict(list)
    for i in pool:
        by_callable[cat[i][0]].append(i)
    first = [rng.choice(by_callable[q]) for q in sorted(by_callable)]
    if n <= len(first):
        return sorted(rng.sample(first, n))
    taken = set(first)
    rest = [i for i in pool if i not in taken]
    return sorted(first + rng.sample(rest, min(n - len(first), len(rest))))


KNOWN = os.path.join(HERE, "fuzz_known.txt")


def known_untyped():
    """Callables whose untyped errors are known and not fixed yet (tools/fuzz_known.txt)."""
    if not os.path.exists(KNOWN):
        return set()
    with open(KNOWN) as f:
        return {ln.split("#")[0].strip() for ln in f if ln.split("#")[0].strip()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sample", type=int, help="run N calls drawn from the catalogue")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", help="only the callables whose name contains this text (or one of these, comma-separated)")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds a call may take (a hang past it)")
    ap.add_argument("--findings", default="fuzz_findings.txt", help="where the findings are written")
    ap.add_argument("--list", action="store_true", help="print the catalogue's size and exit")
    ap.add_argument("--write-doc", action="store_true", help="the counts into docs/errors.md (whole runs)")
    a = ap.parse_args(argv)
    if a.child:
        return _child()
    import warnings

    warnings.simplefilter("ignore")
    cat = catalogue()
    indices = list(range(len(cat)))
    if a.only:
        only = a.only.split(",")  # several names at once: --only fill_,norm
        indices = [i for i in indices if any(o in cat[i][0] for o in only)]
    if a.list:
        print(f"{len(cat)} calls over {len({c[0] for c in cat})} callables")
        return 0
    if a.sample is not None:  # without --only, the same sample as tests/test_fuzz.py's
        indices = sample_indices(cat, a.sample, a.seed, indices)
    t0 = time.time()
    results = run(indices, cat, a.timeout, progress=True)
    table, by_kind = summarize(results, cat)
    print(table)
    found = findings(results, cat)
    with open(a.findings, "w") as f:
        f.write("\n".join(found) + ("\n" if found else ""))
    if poisoners:
        found += [f"poisoned\t{p}\t\tthe next call's values no longer built" for p in poisoners]
    with open(a.findings, "w") as f:
        f.write("\n".join(found) + ("\n" if found else ""))
    print(f"{len(results)} calls in {time.time() - t0:.0f} s; {len(found)} findings -> {a.findings}")
    if a.write_doc:
        assert not a.only and a.sample is None, "--write-doc records whole runs only"
        write_doc(table, len(results), len({c[0] for c in cat}), time.time() - t0, len(found))
    return 1 if found else 0


DOC_BEGIN, DOC_END = "<!-- fuzz-result:begin -->", "<!-- fuzz-result:end -->"


def write_doc(table, n, ncallables, seconds, nfound, path=os.path.join(os.path.dirname(HERE), "docs", "errors.md")):
    """Replaces the text between the fuzz-result markers of docs/errors.md with this run's."""
    lines = [f"Last whole run: {n} calls over {ncallables} callables, {seconds:.0f} s, {nfound} findings "
             f"(written by `python tools/fuzz.py --write-doc`).", "", table]
    with open(path) as f:
        text = f.read()
    head, rest = text.split(DOC_BEGIN, 1)
    with open(path, "w") as f:
        f.write(head + DOC_BEGIN + "\n" + "\n".join(lines) + "\n" + DOC_END + rest.split(DOC_END, 1)[1])


if __name__ == "__main__":
    sys.exit(main())
