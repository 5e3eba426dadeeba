"""Runs the hostile catalogue of tools/fuzz.py on PyTorch as well, call by call (issue 39): every
call whose callable has a twin of the same name in torch / torch.nn.functional / torch.linalg /
torch.fft / torch.special / torch.Tensor runs on both libraries with the same argument values
(tensors built from the same NumPy arrays), and is classified:

  same-error    both raise, and the exceptions are of the same family (TypeError, ValueError,
                IndexError, RuntimeError -- NotImplementedError and LinAlgError are RuntimeErrors --,
                OverflowError, OSError)
  other-error   both raise, the families differ
  same-result   both return, the results agree (structure, shapes, dtypes, and values where the
                op is deterministic)
  other-result  both return, the results differ (the first difference is recorded)
  silent        we return where PyTorch raises, and no documented OneFlow difference says why: a
                meaningless result, a bug to fix
  silent-doc    we return where PyTorch raises as a documented OneFlow difference does: one of
                the rules of the list in docs/oneflow_differences.md ("Silent results the
                fuzzer accepts"), the only place the fuzzer learns of them
  gap           we raise where PyTorch returns
  lost          one side crashed or did not answer in time (tools/fuzz.py covers ours; PyTorch's
                own hangs -- its polynomials loop n times -- are not ours to judge)

  python tools/fuzz_torch.py                 the whole catalogue's twins: counts, findings file
  python tools/fuzz_torch.py --sample N      a deterministic sample of the twin calls
  python tools/fuzz_torch.py --only TEXT     the callables whose name contains TEXT
  --write-known [--known-out PATH]           the undocumented silent callables (the known list)
  --write-doc                                the whole run's counts into docs/errors.md
"""
import argparse
import collections
import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fuzz  # noqa: E402

# oneflow namespace -> torch namespace of the twin.
TWIN_NS = {"oneflow": "torch", "oneflow.nn.functional": "torch.nn.functional", "oneflow.linalg": "torch.linalg",
           "oneflow.fft": "torch.fft", "oneflow.special": "torch.special", "Tensor": "torch.Tensor"}
# Ops whose values are drawn at random (or left uninitialised): only structure, shapes and dtypes
# are compared.
RANDOM = re.compile(r"rand|normal|bernoulli|dropout|multinomial|poisson|empty|uniform|exponential|geometric|"
                    r"cauchy|random|shuffle|perm|xavier|kaiming|orthogonal|sparse_|trunc_|seed|rrelu|"
                    r"gumbel|fractional|data_ptr|storage|__|id$|hash|get_rng|set_rng|tensor_split_ptr")
FAMILIES = ("IndexError", "TypeError", "ValueError", "OverflowError", "OSError", "RuntimeError")
KINDS = ["same-error", "other-error", "same-result", "other-result", "silent-doc", "silent", "gap", "lost"]
ROOT = os.path.dirname(HERE)
DIFFERENCES = os.path.join(ROOT, "docs", "oneflow_differences.md")
ERRORS_DOC = os.path.join(ROOT, "docs", "errors.md")


def _arrays():
    import numpy as np

    g = np.random.default_rng(39)
    a23 = g.standard_normal((2, 3)).astype(np.float32)
    return {
        "T": a23, "T0d": np.array(g.standard_normal(), dtype=np.float32),
        "T0size": np.zeros((0, 3), np.float32), "Tnc": g.standard_normal((3, 2)).astype(np.float32),
        "Tint": np.arange(6, dtype=np.int64).reshape(2, 3),
        "Tbool": np.array([[True, False, True], [False, True, False]]),
        "Tc": (g.standard_normal((2, 3)) + 1j * g.standard_normal((2, 3))).astype(np.complex64),
        "Tnan": np.array([[np.nan, np.inf, -np.inf], [0.0, -0.0, 1e38]], np.float32),
        "T64": g.standard_normal((2, 3)), "T4d": g.standard_normal((1, 4, 2, 2)).astype(np.float32),
        "Tmis": g.standard_normal((3, 2)).astype(np.float32), "Tg": a23.copy(),
    }


def _tensor(lib, name, arrays):
    """Tensor `name` of fuzz.TENSORS built in `lib` from the shared arrays (fresh per call)."""
    t = lib.tensor(arrays[name].copy())
    if name == "Tnc":
        t = t.t()  # non-contiguous, as fuzz.TENSORS'
    if name == "Tg":
        t.requires_grad_(True)
    return t


def _value(lib, name, arrays):
    if name == "[T]":
        return [_tensor(lib, "T", arrays)]
    if name in fuzz.TENSORS:
        return _tensor(lib, name, arrays)
    return eval(fuzz.SCALARS.get(name, name), {})


def twin(qname):
    """The torch name of qname's twin, or None."""
    ns, name = ("Tensor", qname.split(".", 1)[1]) if qname.startswith("Tensor.") else qname.rsplit(".", 1)
    tns = TWIN_NS.get(ns)
    return f"{tns}.{name}" if tns else None


def _resolve(lib, dotted, root):
    obj = lib
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _summary(lib, r, depth=0):
    """A comparable picture of a result: tensors as (shape, dtype, values), sequences itemwise."""
    import numpy as np

    if isinstance(r, lib.Tensor):
        dt = str(r.dtype).split(".")[-1]
        try:
            v = r.detach().cpu()
            v = v.float().numpy() if dt in ("bfloat16", "float16") else v.numpy()
        except Exception:  # noqa: BLE001 -- a tensor NumPy cannot hold is compared by shape only
            v = None
        return ("tensor", tuple(r.shape), dt, v)
    if isinstance(r, (tuple, list)) and depth < 3:
        return ("seq", [_summary(lib, x, depth + 1) for x in r])
    if isinstance(r, (bool, int, float, complex, np.generic)):
        return ("num", complex(r) if isinstance(r, complex) else float(r))
    if r is None or isinstance(r, str):
        return ("atom", r)
    return ("other", None)


def _differ(a, b, values):
    """The first difference between two summaries, or None."""
    import numpy as np

    if a[0] != b[0]:
        return f"{a[0]} vs {b[0]}"
    if a[0] == "seq":
        if len(a[1]) != len(b[1]):
            return f"{len(a[1])} items vs {len(b[1])}"
        for x, y in zip(a[1], b[1]):
            d = _differ(x, y, values)
            if d:
                return d
        return None
    if a[0] == "tensor":
        if a[1] != b[1]:
            return f"shape {a[1]} vs {b[1]}"
        if a[2] != b[2]:
            return f"dtype {a[2]} vs {b[2]}"
        if values and a[3] is not None and b[3] is not None and a[3].size:
            x, y = a[3], b[3]
            if x.dtype.kind in "fc" or y.dtype.kind in "fc":
                ok = np.allclose(x.astype(np.complex128), y.astype(np.complex128), rtol=1e-3, atol=1e-4, equal_nan=True)
            else:
                ok = np.array_equal(x, y)
            if not ok:
                return "values"
        return None
    if a[0] == "num" and values:
        x, y = a[1], b[1]
        if not (x == y or (x != x and y != y) or abs(x - y) <= 1e-4 + 1e-3 * abs(y)):
            return f"value {x} vs {y}"
    if a[0] == "atom" and a[1] != b[1]:
        return f"{a[1]!r} vs {b[1]!r}"
    return None


def _family(e):
    names = [c.__name__ for c in type(e).__mro__]
    return next((f for f in FAMILIES if f in names), type(e).__name__)


def _call(lib, fn_name, root, call, arrays):
    """(error family or None, message or result summary) of one call in one library."""
    qname, recv, args, kwargs, backward = call
    vals = [_value(lib, a, arrays) for a in args]
    kw = {k: _value(lib, v, arrays) for k, v in kwargs.items()}
    try:
        if recv is not None:
            fn = getattr(_tensor(lib, recv, arrays), fn_name.rsplit(".", 1)[1])
        else:
            fn = _resolve(lib, fn_name, root)
        r = fn(*vals, **kw)
        if backward:
            outs = r if isinstance(r, (tuple, list)) else [r]
            for o in outs:
                if isinstance(o, lib.Tensor) and o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex):
                    o.abs().sum().backward()
                    break
        return None, _summary(lib, r)
    except BaseException as e:  # noqa: BLE001 -- comparing every exception is the point
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            return "SystemExit", str(e)[:200]
        return _family(e), f"{type(e).__name__}: {str(e)[:200]}"


def compare(call, flow_out, torch_out):
    """(kind, detail) of one call from the two libraries' outcomes."""
    (fe, fr), (te, tr) = flow_out, torch_out
    if fe and te:
        return ("same-error" if fe == te else "other-error"), f"{fr} | torch {tr}"
    if te:
        return "silent", f"torch {tr}"
    if fe:
        return "gap", fr
    d = _differ(fr, tr, not RANDOM.search(call[0].rsplit(".", 1)[1]))
    return ("other-result", d) if d else ("same-result", "")


# ---- the documented OneFlow differences (docs/oneflow_differences.md) that make a silent result
# expected: one list, read here; the rest of the silent results are bugs (or not examined yet).

BEGIN, END = "<!-- fuzz-accepts:begin -->", "<!-- fuzz-accepts:end -->"


class Rule:
    """One row of the list: rule | callables | call | PyTorch said | why.

    callables  a regex matched against the whole qualified name (`oneflow.sum`, `Tensor.unique`)
    call       a regex searched in the call's description (`oneflow.sum(T, [1], -1)`), or
               `TYPES<-VALUES`: an argument that the op table types as one of TYPES (a comma
               list: `bool`, `TensorLike,Scalar`; `?`: any parameter whose default is None) is
               given one of VALUES (`int`: a Python int; `number`: an int, float, bool or
               complex; `None`), by position or keyword (the table's
               signatures, tools/fuzz.py's); or `upstream`: the call fits a signature of the
               same name in upstream OneFlow's functional API (tools/upstream_functional_api.txt,
               `upstream_fits`); empty: any call
    said       a regex searched in PyTorch's exception (`TypeError: ...`); empty: any"""

    def __init__(self, name, callables, call, said, why):
        self.name, self.why = name, why
        self.callables = re.compile(callables)
        m = re.fullmatch(r"([\w\[\],?]+)<-(int|number|None)", call)
        self.typed = (set(m.group(1).split(",")), VALUE_CLASSES[m.group(2)]) if m else None
        self.upstream = call == "upstream"
        self.call = None if m or self.upstream or not call else re.compile(call)
        self.said = re.compile(said) if said else None

    def matches(self, call, detail, table):
        if not self.callables.fullmatch(call[0]):
            return False
        if self.said is not None and not self.said.search(detail):
            return False
        if self.typed:
            return _typed_given(call, table, *self.typed)
        if self.upstream:
            return upstream_fits(call)
        return self.call is None or bool(self.call.search(fuzz.describe(call)))


INTS = {"0", "1", "-1", "-3", "2", "2**31", "2**62", "-2**62"}
VALUE_CLASSES = {"int": INTS, "number": INTS | {"1.5", "nan", "inf", "True", "cplx"}, "None": {"None"}}


def _typed_given(call, table, types, values):
    """Whether an argument of call that the op table types as one of `types` is one of `values`."""
    qname, recv, args, kwargs, _ = call
    params = table.get(qname.split(".")[-1]) or table.get(qname.replace("oneflow.", "", 1))
    if not params:
        return False
    params = params[1:] if recv is not None else params
    named = {p[1]: p for p in params}

    def typed(p):  # `?`: any parameter whose default is None
        return p is not None and (p[0] in types or ("?" in types and p[4]))

    return any(typed(p) and a in values for p, a in zip(params, args)) or \
        any(typed(named.get(k)) and v in values for k, v in kwargs.items())


# ---- upstream OneFlow's signatures (tools/upstream_functional_api.txt): does a call fit one?

UPSTREAM = os.path.join(HERE, "upstream_functional_api.txt")
_upstream = None


def _upstream_sigs():
    """name -> [[(type, name, has_default, default, kw_only)]], from the snapshot of upstream's
    functional_api.yaml."""
    global _upstream
    if _upstream is None:
        import gen_ops

        _upstream = collections.defaultdict(list)
        with open(UPSTREAM) as f:
            for line in f:
                m = re.match(r"^(\w+)\((.*)\)\s*->", line)
                if not m:
                    continue
                params, kw = [], False
                for text in gen_ops.split_params(m.group(2)):
                    text = text.strip()
                    if text == "*":
                        kw = True
                    elif text:
                        pm = re.match(r"^([\w\[\]]+)\s+(\w+)(?:=(.*))?$", text)
                        if not pm:
                            params = None
                            break
                        params.append((pm.group(1), pm.group(2), pm.group(3) is not None, pm.group(3), kw))
                if params is not None:
                    _upstream[m.group(1)].append(params)
    return _upstream


def _kind(v):
    """The kind of one of the fuzzer's values (tools/fuzz.py VALUES)."""
    if v in fuzz.TENSORS:
        return "tensor"
    if v in INTS:
        return "int"
    return {"True": "bool", "1.5": "float", "nan": "float", "inf": "float", "cplx": "complex", "None": "none",
            "str": "str", "[]": "emptylist", "[huge,-1]": "intlist", "(2,3)": "intlist", "[-1]": "intlist",
            "[1]": "intlist", "[1.5]": "floatlist", "[T]": "tensorlist"}.get(v, "other")


# upstream type -> the kinds its parser (python_arg.cpp) takes. Bool takes an int (kBOOL reads a
# PyLong); an `Int32List[n]` / `Shape` a single int as well as a list; Scalar a Python number.
_FITS = {"Tensor": {"tensor"}, "Scalar": {"int", "float", "bool"}, "Int32": {"int"}, "Int64": {"int"},
         "Bool": {"bool", "int"}, "Float": {"int", "float"}, "Double": {"int", "float"},
         "String": {"str"}, "TensorTuple": {"tensorlist"}, "FloatList": {"floatlist", "intlist"},
         "Int32List": {"intlist"}, "Int64List": {"intlist"}, "Shape": {"intlist"}}


def _fits(ptype, default, kind):
    if kind == "none":
        return default == "None"
    base = re.sub(r"\[\d+\]$", "", ptype)
    if kind == "emptylist":  # an empty list is a list of any element type (broadcast_tensors([]))
        return "intlist" in _FITS.get(base, set()) or "tensorlist" in _FITS.get(base, set())
    ok = _FITS.get(base, set())
    if base != ptype or base == "Shape":  # Int32List[1] x=1
        ok = ok | {"int"}
    return kind in ok


def upstream_fits(call):
    """Whether a call fits one of upstream OneFlow's signatures of the callable's name (so that
    OneFlow's functional API takes it: the difference is OneFlow's signature, not a bug)."""
    qname, recv, args, kwargs, _ = call
    if not (qname.startswith("Tensor.") or qname.count(".") == 1 or qname.startswith("oneflow.nn.functional.")):
        return False
    values = ([recv] if recv is not None else []) + list(args)
    name = qname.rsplit(".", 1)[1]
    sigs = _upstream_sigs()
    # an in-place variant without its own signature takes its out-of-place form's (logical_and_)
    if name not in sigs and name.endswith("_"):
        name = name[:-1]
    for params in sigs.get(name, []):
        positional = [p for p in params if not p[4]]
        if len(values) > len(positional):
            continue
        by_name = {p[1]: p for p in params}
        given = {p[1] for p in positional[:len(values)]}
        if set(kwargs) - set(by_name) or set(kwargs) & given:
            continue
        if not all(_fits(p[0], p[3], _kind(v)) for p, v in zip(positional, values)):
            continue
        if not all(_fits(by_name[k][0], by_name[k][3], _kind(v)) for k, v in kwargs.items()):
            continue
        if all(p[2] or p[1] in given or p[1] in kwargs for p in params):
            return True
    return False


def _cell(text):
    text = text.strip().replace("\\|", "|")  # a regex's | is written \| in a Markdown table
    return text[1:-1] if text.startswith("`") and text.endswith("`") else text


def documented_rules(path=DIFFERENCES):
    """The rules of the list between the fuzz-accepts markers of docs/oneflow_differences.md."""
    with open(path) as f:
        text = f.read()
    body = text.split(BEGIN, 1)[1].split(END, 1)[0]
    rules = []
    for line in body.splitlines():
        line = line.strip()
        if not line.startswith("|") or line.startswith("|---") or line.startswith("| rule |"):
            continue
        cells = [c for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 5, f"docs/oneflow_differences.md: a fuzz-accepts row needs 5 cells: {line}"
        rules.append(Rule(*[_cell(c) for c in cells]))
    return rules


def documented(call, detail, rules, table):
    """The name of the first rule that accepts this silent result, or None."""
    return next((r.name for r in rules if r.matches(call, detail, table)), None)


def classify_documented(results, cat, rules=None, table=None):
    """silent -> silent-doc where a documented difference accepts it (the detail gets the rule)."""
    rules = documented_rules() if rules is None else rules
    table = fuzz._table_params() if table is None else table
    for i, (k, d) in list(results.items()):
        if k == "silent":
            name = documented(cat[i], d, rules, table)
            if name:
                results[i] = ("silent-doc", f"[{name}] {d}")
    return results


def _child():
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    import warnings

    import torch

    import oneflow as flow

    warnings.simplefilter("ignore")
    arrays = _arrays()
    proto.write("ready\n")
    for line in sys.stdin:
        i, call = json.loads(line)
        # ours first, answered before torch runs: a torch call that hangs or dies is then torch's
        out = _call(flow, "flow." + call[0].split(".", 1)[1] if not call[0].startswith("Tensor.") else call[0],
                    flow, call, arrays)
        _reset(flow)
        proto.write(json.dumps([i, "flow", _jsonable(out)]) + "\n")
        tout = _call(torch, twin(call[0]), torch, call, arrays)
        _reset(torch)
        kind, detail = compare(call, out, tout)
        proto.write(json.dumps([i, kind, detail]) + "\n")


def _reset(lib):
    """The process state a call may have changed (set_default_dtype, set_autocast_enabled, ...),
    back to the defaults: each call is compared from the same start."""
    lib.set_default_dtype(lib.float32)
    lib.set_grad_enabled(True)
    lib.set_default_device(None)
    # `set_anomaly_enabled(True)` left on made a later backward's NaN PyTorch's RuntimeError
    # ("returned nan values"): a silent result of whatever call came next
    lib.set_anomaly_enabled(False)
    for dev, dt in (("cpu", lib.bfloat16), ("cuda", lib.float16)):
        lib.set_autocast_enabled(dev, False)
        lib.set_autocast_dtype(dev, dt)


def _jsonable(out):
    return [out[0], out[1] if isinstance(out[1], str) else ""]


def twin_calls(cat):
    """Indices of the catalogue's calls whose callable has a torch twin (resolved in this process)."""
    import torch

    have = {}
    out = []
    for i, c in enumerate(cat):
        q = c[0]
        if q not in have:
            t = twin(q)
            try:
                obj = _resolve(torch, t, torch) if t else None
            except AttributeError:
                obj = None
            have[q] = obj is not None and callable(obj) and not isinstance(obj, type(torch))
        if have[q]:
            out.append(i)
    return out


def run(indices, cat, timeout=10.0, torch_timeout=5.0, progress=False, classify=True):
    """{index: (kind, detail)}. A callable whose torch twin hangs twice is not asked again. With
    `classify`, the silent results a documented difference accepts are silent-doc."""
    env_limit = os.environ.get("FUZZ_MEMORY_LIMIT")
    os.environ["FUZZ_MEMORY_LIMIT"] = env_limit or str(4 << 30)  # two libraries: 1 GiB mapped before any call
    results = {}
    workdir = tempfile.mkdtemp(prefix="oneflow-fuzz-torch-")
    torch_hangs = collections.Counter()
    child = None
    t0 = time.time()
    try:
        for n, i in enumerate(indices):
            call = cat[i]
            if torch_hangs[call[0]] >= 2:
                results[i] = ("lost", "torch hangs on this callable")
                continue
            if child is None:
                child = _start(workdir)
            results[i] = _one(child, i, call, timeout, torch_timeout, torch_hangs)
            if results[i] == ("lost", "oneflow: no answer"):
                # our side asked once more, alone in a fresh child, as tools/fuzz.py does: a
                # 2 GiB fill (`BoolTensor(2**31)`) passed the limit once on the loaded machine
                child.kill()
                child = _start(workdir)
                results[i] = _one(child, i, call, timeout, torch_timeout, torch_hangs)
            if results[i][0] == "lost":
                child.kill()
                child = None
            if progress and n % 1000 == 999:
                print(f"  {n + 1}/{len(indices)} calls, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    finally:
        if child is not None:
            child.kill()
        if env_limit is None:
            del os.environ["FUZZ_MEMORY_LIMIT"]
    return classify_documented(results, cat) if classify else results


def _start(workdir):
    """A new child; one retry (a rebuilt library being copied in place can fail one import)."""
    try:
        return fuzz.Child(workdir, [os.path.abspath(__file__), "--child"])
    except RuntimeError:
        time.sleep(10)
        return fuzz.Child(workdir, [os.path.abspath(__file__), "--child"])


def _readline(child, timeout):
    """The child's next line, None after `timeout` s, "" when it died. Two lines answer one call, so
    the pipe is read raw: a buffered reader would take both and leave select() nothing to see."""
    import select

    buf = child.__dict__.setdefault("buf", b"")
    fd = child.p.stdout.fileno()
    end = time.time() + timeout
    while b"\n" not in buf:
        r, _, _ = select.select([fd], [], [], max(0.0, end - time.time()))
        if not r:
            child.buf = buf
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            child.buf = buf
            return ""
        buf += chunk
    line, child.buf = buf.split(b"\n", 1)
    return line.decode().strip() or ""


def _one(child, i, call, timeout, torch_timeout, torch_hangs):
    try:
        child.p.stdin.write(json.dumps([i, call]) + "\n")
        child.p.stdin.flush()
    except BrokenPipeError:
        return "lost", "child gone"
    line = _readline(child, timeout)
    if not line:
        return "lost", "oneflow: " + ("no answer" if line is None else "died")
    line = _readline(child, torch_timeout)
    if not line:
        if line is None:
            torch_hangs[call[0]] += 1
        return "lost", "torch: " + ("no answer" if line is None else "died")
    j, kind, detail = json.loads(line)
    assert j == i
    return kind, detail


KNOWN = os.path.join(HERE, "fuzz_torch_known.txt")


def known_silent():
    """Callables whose undocumented silent results (we return, PyTorch raises, no documented
    difference says why) are listed, not fixed yet: tools/fuzz_torch_known.txt, one callable a
    line (then its count and an example)."""
    if not os.path.exists(KNOWN):
        return set()
    with open(KNOWN) as f:
        return {ln.split("\t")[0].strip() for ln in f if ln.strip() and not ln.startswith("#")}


def category(detail):
    """What PyTorch said, in a few classes (docs/errors.md's table of silent results)."""
    for pat, name in ((r"must be Tensor, not", "a number or list where PyTorch takes only a Tensor"),
                      (r"must be bool, not", "a non-bool for a bool"),
                      (r"must be int, not|must be tuple of ints", "a non-int for an int"),
                      (r"missing \d+ required|missing required", "an argument PyTorch requires left out"),
                      (r"invalid combination|incompatible function", "an argument combination PyTorch has no overload for"),
                      (r"not implemented for|NotImplementedError", "a dtype PyTorch has no kernel for"),
                      (r"TypeError", "another TypeError"),
                      (r"RuntimeError|ValueError|IndexError", "a value / shape PyTorch refuses")):
        if re.search(pat, detail):
            return name
    return "other"


def summarize(results, cat):
    by_ns = collections.defaultdict(collections.Counter)
    for i, (k, _) in results.items():
        q = cat[i][0]
        by_ns["Tensor" if q.startswith("Tensor.") else q.rsplit(".", 1)[0]][k] += 1
    total = collections.Counter(k for k, _ in results.values())
    lines = ["| namespace | calls | " + " | ".join(KINDS) + " |", "|---" * (len(KINDS) + 2) + "|"]
    for ns in sorted(by_ns):
        c = by_ns[ns]
        lines.append(f"| {ns} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in KINDS) + " |")
    lines.append(f"| all | {len(results)} | " + " | ".join(str(total[k]) for k in KINDS) + " |")
    return "\n".join(lines), total


def by_callable(results, cat, kind):
    """[(callable, count)] of one kind, most first."""
    c = collections.Counter(cat[i][0] for i, (k, _) in results.items() if k == kind)
    return c.most_common()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sample", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", help="the callables whose name contains this text (or one of these, comma-separated)")
    ap.add_argument("--calls-from", help="only the calls of this findings file (of --calls-kind): a fix's re-check")
    ap.add_argument("--calls-kind", default="silent", help="the kind of findings --calls-from takes")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--findings", default="fuzz_torch_findings.txt")
    ap.add_argument("--from-raw", help="classify a saved run (FINDINGS.raw.json of this catalogue) instead of running")
    ap.add_argument("--write-known", action="store_true",
                    help="rewrite tools/fuzz_torch_known.txt: whole runs; a partial one (--only, --calls-from, "
                         "--from-raw of one) updates the rows of the callables it ran and keeps the others")
    ap.add_argument("--known-out", default=KNOWN, help="where --write-known writes (default: the known list)")
    ap.add_argument("--write-doc", action="store_true", help="the counts into docs/errors.md (whole runs)")
    a = ap.parse_args(argv)
    if a.child:
        return _child()
    import warnings

    warnings.simplefilter("ignore")
    cat = fuzz.catalogue()
    indices = twin_calls(cat)
    if a.only:
        only = a.only.split(",")  # several names at once: --only fill_,norm
        indices = [i for i in indices if any(o in cat[i][0] for o in only)]
    if a.calls_from:
        with open(a.calls_from) as f:
            wanted = {ln.split("\t")[1] for ln in f if ln.split("\t")[0] == a.calls_kind}
        indices = [i for i in indices if fuzz.describe(cat[i]) in wanted]
    if a.sample is not None:  # every callable first, as tests/test_fuzz.py's sample
        indices = fuzz.sample_indices(cat, a.sample, a.seed, indices)
    t0 = time.time()
    if a.from_raw:  # a saved run re-read: after a change of the documented differences, or to --write-known
        with open(a.from_raw) as f:
            raw = json.load(f)
        assert raw["ncat"] == len(cat), f"{a.from_raw}: another catalogue ({raw['ncat']} calls, now {len(cat)})"
        wanted = set(indices)
        results = {int(i): tuple(r) for i, r in raw["results"].items() if int(i) in wanted}
        partial = len(results) < len(twin_calls(cat))
    else:
        partial = bool(a.only or a.calls_from or a.sample is not None)
        results = run(indices, cat, a.timeout, progress=True, classify=False)
        # the raw results first: a long run is never lost to a list that does not read
        with open(a.findings + ".raw.json", "w") as f:
            json.dump({"seconds": time.time() - t0, "ncat": len(cat), "results": {str(i): r for i, r in results.items()}}, f)
    classify_documented(results, cat)
    table, total = summarize(results, cat)
    print(table)
    with open(a.findings, "w") as f:
        for kind in ("silent", "silent-doc", "other-error", "gap", "other-result", "lost"):
            for i, (k, d) in sorted(results.items()):
                if k == kind:
                    f.write(f"{kind}\t{fuzz.describe(cat[i])}\t{d}".replace("\n", " ") + "\n")
    cats = collections.Counter(category(d) for k, d in results.values() if k == "silent")
    print("undocumented silent results by what PyTorch said:", "; ".join(f"{c} {n}" for c, n in cats.most_common()))
    rules = collections.Counter(d[1:].split("]", 1)[0] for k, d in results.values() if k == "silent-doc")
    print("documented silent results by rule:", "; ".join(f"{c} {n}" for c, n in rules.most_common()))
    if a.write_doc:
        assert not a.only and a.sample is None and not a.calls_from, "--write-doc records whole runs only"
        write_doc(table, cats, rules, len(results), len(cat), time.time() - t0)
    if a.write_known:
        per = collections.defaultdict(list)
        for i, (k, d) in sorted(results.items()):
            if k == "silent":
                per[cat[i][0]].append(f"{fuzz.describe(cat[i])} :: {d[:120]}")
        if partial:
            # A partial run answers for the callables it ran: their rows are replaced (dropped when
            # fixed); the others are kept. The list only shrinks: a callable newly found silent is
            # reported, not added (a whole run adds it).
            ran = {cat[i][0] for i in results}
            old = {}
            with open(KNOWN) as f:
                for ln in f:
                    if not ln.startswith("#") and ln.strip():
                        q, n, ex = ln.rstrip("\n").split("\t", 2)
                        old[q] = (int(n), ex)
            for q in sorted(set(per) - set(old)):
                print(f"NEW silent callable (not added): {q} {len(per[q])}: {per[q][0]}")
            per = {q: v for q, v in per.items() if q in old}
            kept = {q: v for q, v in old.items() if q not in ran}
        with open(a.known_out, "w") as f:
            f.write("# Callables with silent results (we return where PyTorch raises) that no documented OneFlow\n"
                    "# difference accepts (docs/oneflow_differences.md), not fixed yet, from the whole catalogue\n"
                    "# (python tools/fuzz_torch.py --write-known): tests/test_fuzz.py fails on such a silent result\n"
                    "# of a callable not listed. The list only shrinks (docs/errors.md).\n")
            rows = {q: (len(v), v[0]) for q, v in per.items()}
            if partial:
                rows.update(kept)
            for q in sorted(rows):
                f.write(f"{q}\t{rows[q][0]}\t{rows[q][1]}".replace("\n", " ") + "\n")
    print("silent results by callable:", ", ".join(f"{q} {n}" for q, n in by_callable(results, cat, "silent")[:40]))
    print(f"{len(results)} twin calls of {len(cat)} in {time.time() - t0:.0f} s -> {a.findings}")
    return 0


DOC_BEGIN, DOC_END = "<!-- fuzz-torch-result:begin -->", "<!-- fuzz-torch-result:end -->"


def write_doc(table, cats, rules, n, ncat, seconds, path=ERRORS_DOC):
    """Replaces the text between the fuzz-torch-result markers of docs/errors.md with this run's."""
    lines = [f"Last whole run: {n} twin calls of the {ncat}-call catalogue, {seconds / 60:.0f} minutes "
             f"(written by `python tools/fuzz_torch.py --write-doc`).", "", table, "",
             "Undocumented silent results by what PyTorch said: " +
             ("; ".join(f"{c} {k}" for c, k in cats.most_common()) or "none") + ".", "",
             "Documented silent results by rule (docs/oneflow_differences.md): " +
             ("; ".join(f"`{c}` {k}" for c, k in rules.most_common()) or "none") + "."]
    with open(path) as f:
        text = f.read()
    head, rest = text.split(DOC_BEGIN, 1)
    tail = rest.split(DOC_END, 1)[1]
    with open(path, "w") as f:
        f.write(head + DOC_BEGIN + "\n" + "\n".join(lines) + "\n" + DOC_END + tail)


if __name__ == "__main__":
    sys.exit(main())
