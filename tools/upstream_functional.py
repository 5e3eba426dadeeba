"""Upstream OneFlow's functional API (flow._C) against ours: which of its functions exist here and
accept upstream's signatures (Note [OneFlow's signatures], src/api/arg_fits.h).

    upstream_functional.py snapshot [MIRROR]   read upstream's functional_api.yaml from the mirror
                                               (a bare git repository) and write the derived list
                                               tools/upstream_functional_api.txt (names and
                                               signatures of its user-facing functions)
    upstream_functional.py doc                 compare the list with flow._C and the op table and
                                               write docs/functional_api.md
    upstream_functional.py check               exit 1 when docs/functional_api.md is out of date

The snapshot is checked in so that the doc and the tests need no mirror. User-facing means bound
to Python upstream (`bind_python: true`) and not a gradient (`*_grad`, `*_backward`).

A signature of upstream is accepted by one of ours when a call written against upstream's binds
to ours: the parameters upstream declares before `*` are ours at the same positions with
compatible types, the keyword-only ones ours too by name, every default of upstream's has one
here, every parameter of ours without a default is upstream's too, and the results are both one
tensor or both several. Ours are the table op's own signature, its `oneflow:` forms, and for
hand-written bindings the parameter names nanobind reports (their types unknown: not compared).
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
SNAPSHOT = os.path.join(HERE, "upstream_functional_api.txt")
DOC = os.path.join(ROOT, "docs", "functional_api.md")
MIRROR = "/work/.mirror/Oneflow-Inc+oneflow/repo"
YAML = "oneflow/core/functional/functional_api.yaml"


# ---- upstream's yaml -> the snapshot ------------------------------------------------------------


def grad_only(name):
    return name.endswith(("_grad", "_backward")) or "_grad_" in name or name.startswith("grad_")


def split_top(text):
    out, depth, cur = [], 0, ""
    for c in text:
        depth += 1 if c in "[(" else -1 if c in "])" else 0
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    return [x for x in out + [cur.strip()] if x]


def parse_upstream_sig(text):
    """`Tensor (Tensor x, *, Int64 dim=0) => Func` -> (ret, [(type, name, default or None, kw_only)])."""
    text = " ".join(text.split())
    m = re.match(r"^(.*?)\s*\((.*)\)\s*=+>\s*\w+$", text)
    assert m, f"unparsed upstream signature: {text}"
    params, kw = [], False
    for p in split_top(m.group(2)):
        if p == "*":
            kw = True
            continue
        pm = re.match(r"^([\w\[\]]+)\s+(\w+)(?:\s*=\s*(.+))?$", p)
        assert pm, f"unparsed upstream parameter: {p!r} in {text}"
        params.append((pm.group(1), pm.group(2), pm.group(3), kw))
    return m.group(1).strip(), params


def format_sig(name, ret, params):
    parts, kw = [], False
    for t, n, d, k in params:
        if k and not kw:
            parts.append("*")
            kw = True
        parts.append(f"{t} {n}" + (f"={d}" if d is not None else ""))
    return f"{name}({', '.join(parts)}) -> {ret}"


def snapshot(mirror):
    import yaml
    git = ["git", f"--git-dir={mirror}"]
    commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    text = subprocess.run(git + ["show", f"HEAD:{YAML}"], capture_output=True, text=True, check=True).stdout
    lines = [f"# User-facing functions of upstream OneFlow's flow._C (its {YAML} at",
             f"# {commit}): `bind_python: true`, gradients left out, one line per signature in",
             "# upstream's own type names. Written by tools/upstream_functional.py snapshot; do not edit."]
    for e in yaml.safe_load(text):
        if not e.get("bind_python") or grad_only(e["name"]):
            continue
        sigs = e["signature"] if isinstance(e["signature"], list) else [e["signature"]]
        for s in sigs:
            ret, params = parse_upstream_sig(s)
            lines.append(format_sig(e["name"], ret, params))
    with open(SNAPSHOT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{SNAPSHOT}: {len(lines) - 3} signatures")


def load_snapshot():
    """[(name, ret, [(type, name, default, kw_only)])] of the checked-in snapshot."""
    out = []
    for line in open(SNAPSHOT):
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"^(\w+)\((.*)\) -> (.+)$", line.strip())
        params, kw = [], False
        for p in split_top(m.group(2)):
            if p == "*":
                kw = True
                continue
            pm = re.match(r"^([\w\[\]]+) (\w+)(?:=(.+))?$", p)
            params.append((pm.group(1), pm.group(2), pm.group(3), kw))
        out.append((m.group(1), m.group(3), params))
    return out


# ---- ours ---------------------------------------------------------------------------------------

# Upstream's type -> the types of ours that accept its values.
COMPATIBLE = {
    "Tensor": {"Tensor", "TensorLike"},
    "Scalar": {"Scalar", "float", "int", "TensorLike"},
    "Int": {"int", "Scalar", "float", "int[]", "TensorLike"},
    "Float": {"float", "Scalar", "TensorLike"},
    "Bool": {"bool", "Scalar", "TensorLike"},
    "IntList": {"int[]"},
    "FloatList": {"float[]"},
    "DataType": {"DType"},
    "Device": {"Device"},
    "String": {"str", "Device"},  # a device as a string: "cuda:0"
    "TensorTuple": {"Tensor[]"},
    "Generator": {"Generator"},
}


def upstream_kind(t):
    t = re.sub(r"\[\d*\]$", "", t)
    if t in ("Int32", "Int64"):
        return "Int"
    if t == "Double":
        return "Float"
    if t in ("Int32List", "Int64List", "Shape"):
        return "IntList"
    if t in ("DoubleList", "ScalarList"):
        return "FloatList"
    return t


class OurSig:
    """One signature of ours: params [(type or None, name, has_default, kw_only)], ret, origin."""

    def __init__(self, params, ret, origin):
        self.params, self.ret, self.origin = params, ret, origin


def table_sigs():
    """name -> [OurSig] from the op table: the ops' own signatures and their `oneflow:` forms."""
    sys.path.insert(0, HERE)
    import gen_ops
    import oneflow_forms
    import optable
    ops = [gen_ops.Op(e) for e in optable.load()]
    out = {}

    def conv(params):
        return [(p.type + ("[]" if p.varargs and not p.type.endswith("]") else ""), p.name,
                 p.default is not None, p.kw_only) for p in params]

    for op in ops:
        if not op.manual:
            params = conv(op.params)
            # A factory also takes placement= / sbp= (Note [Global arguments], src/api/convert.h)
            # and layout= (Note [layout= of factories], src/api/layout_arg.h).
            if gen_ops.takes_placement(op.name, op.params):
                params += [("Any", "placement", True, True), ("Any", "sbp", True, True), ("Any", "layout", True, True)]
            out.setdefault(op.name, []).append(OurSig(params, op.ret, "ours"))
    for f in oneflow_forms.forms_of(ops):
        out.setdefault(f.name, []).append(OurSig(conv(f.params), f.ret, f"form:{f.target.name}"))
    return out


def doc_sigs(fn):
    """OurSigs of a hand-written binding from nanobind's signature lines (names and defaults)."""
    out = []
    for line in (fn.__doc__ or "").splitlines():
        m = re.match(r"^\w+\((.*)\)(?: -> (.*))?$", line.strip())
        if not m:
            continue
        params, kw = [], False
        for p in split_top(m.group(1)):
            if p == "*":
                kw = True
                continue
            if p.startswith("*"):  # *args / **kwargs: anything
                return [OurSig(None, "?", "hand-written")]
            pm = re.match(r"^(\w+)(?::\s*[^=]+)?(\s*=.*)?$", p)
            if pm:
                params.append((None, pm.group(1), bool(pm.group(2)), kw))
        out.append(OurSig(params, "?", "hand-written"))
    return out


def accepts(upstream, ours):
    """(accepted, [upstream's parameters that ours names otherwise]) of upstream's (ret, params)
    by OurSig `ours`."""
    ret, ups = upstream
    if ours.params is None:
        return True, []
    if ours.ret != "?" and (ret == "Tensor") != (ours.ret == "Tensor"):
        return False, []
    pos = [p for p in ours.params if not p[3]]
    by_name = {p[1]: p for p in ours.params}
    used, renamed = set(), []
    for i, (t, n, d, kw) in enumerate(ups):
        if not kw:
            if i >= len(pos):
                return False, []
            o = pos[i]
        else:
            o = by_name.get(n)
            if o is None:
                return False, []
        kind = upstream_kind(t)
        if o[0] is not None and kind in COMPATIBLE and o[0] not in COMPATIBLE[kind] and o[0] != "Any":
            return False, []
        if d is not None and not o[2]:
            return False, []
        if o[1] != n and n != "in":  # `in` is a Python keyword: never passed by name
            renamed.append(f"{n} (ours: {o[1]})")
        used.add(o[1])
    if any(not p[2] and p[1] not in used for p in ours.params):
        return False, []
    return True, renamed


# Upstream functions deliberately left out or different here, and why.
DIFFERENT = {
    "dropout": "PyTorch's dropout(input, p, train, inplace) (nn.functional.dropout); no addend=",
}


def different_reason(name, params, sigs):
    if name in DIFFERENT:
        return DIFFERENT[name]
    ours = {p[1] for s in sigs if s.params for p in s.params}
    names = {p[1] for p in params}
    layout = sorted(names & {"data_format", "channel_pos"} - ours)
    if layout:
        return f"no `{layout[0]}=`: channels-first (NCHW) layouts only"
    # Otherwise our signatures, for the reader to compare.
    shown = []
    for s in sigs:
        if s.params is None:
            continue
        parts, kw = [], False
        for t, n, d, k in s.params:
            if k and not kw:
                parts.append("*")
                kw = True
            parts.append(n + ("=..." if d else ""))
        shown.append(f"`({', '.join(parts)})`")
    return "ours: " + " / ".join(shown) if shown else ""


def missing_reason(name):
    if name.startswith(("fused_", "fuse_")) or name in ("skip_layer_norm", "skip_rms_norm"):
        return "a fused op (issue 37 point 3)"
    if name.startswith(("global_", "to_global", "local_")) or "sbp" in name or "consistent" in name:
        return "global-tensor plumbing (python/oneflow/_global)"
    if name.startswith(("nccl", "ccl", "eager_", "send", "recv", "comm_")):
        return "collective communication"
    return ""


def classify():
    import oneflow as flow
    C = flow._C
    table = table_sigs()
    rows = []
    for name, ret, params in load_snapshot():
        fn = getattr(C, name, None)
        if fn is None:
            rows.append((name, ret, params, "missing", missing_reason(name)))
            continue
        sigs = table.get(name) or doc_sigs(fn)
        best = None
        for s in sigs:
            ok, renamed = accepts((ret, params), s)
            if ok:
                state = ("same" if s.origin in ("ours", "hand-written") else "adapted") if not renamed else "positional"
                note = "" if s.origin in ("ours", "hand-written") else f"on `{s.origin[5:]}`"
                if state == "positional":
                    note = "by position; " + ", ".join(renamed)
                rank = {"same": 0, "adapted": 1, "positional": 2}[state]
                if best is None or rank < best[0]:
                    best = (rank, state, note)
        if best:
            rows.append((name, ret, params, best[1], best[2]))
        else:
            rows.append((name, ret, params, "different", different_reason(name, params, sigs)))
    return rows


STATES = ("same", "adapted", "positional", "different", "missing")


def render(rows):
    counts = {s: sum(r[3] == s for r in rows) for s in STATES}
    out = ["# flow._C against upstream OneFlow's functional API", "",
           "Generated by `tools/upstream_functional.py doc` from `tools/upstream_functional_api.txt` (the",
           "user-facing functions of upstream's `functional_api.yaml`, gradients left out) and this",
           "build's `flow._C`; do not edit. One row per upstream signature:", "",
           "- **same**: `flow._C.<name>` accepts upstream's call, by position and by keyword;",
           "- **adapted**: upstream's form is a further overload of the name (an `oneflow:` form of the",
           "  op table, src/ops/table/README.md) running the op named in the note;",
           "- **positional**: accepted by position; some argument names are PyTorch's;",
           "- **different**: the name exists with another signature (the note says why where it is",
           "  deliberate);",
           "- **missing**: no such function here.", "",
           "| state | count |", "|---|---|"] + [f"| {s} | {counts[s]} |" for s in STATES] + [
           "", "| function | upstream signature | state | note |", "|---|---|---|---|"]
    for name, ret, params, state, note in rows:
        sig = format_sig(name, ret, params).replace("|", "\\|")
        out.append(f"| `{name}` | `{sig}` | {state} | {note} |")
    return "\n".join(out) + "\n"


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else "doc"
    if cmd == "snapshot":
        snapshot(sys.argv[2] if len(sys.argv) > 2 else MIRROR)
    elif cmd == "doc":
        with open(DOC, "w") as f:
            f.write(render(classify()))
        print(DOC)
    elif cmd == "check":
        want = render(classify())
        have = open(DOC).read() if os.path.exists(DOC) else ""
        if want != have:
            print(f"{DOC} is out of date: run python tools/upstream_functional.py doc")
            sys.exit(1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
