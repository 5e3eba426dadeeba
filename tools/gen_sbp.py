"""Writes python/oneflow/_global/sbp_table.py: the SBP signature of every op that global tensors
reach, by name (docs/global_tensors.md, "SBP signatures"), from one source each:

- the op table (src/ops/table/*.yaml): an op of a pointwise `kind:` (unary / binary / ternary)
  gets the pointwise signature; any op may name another with `sbp:` (a file's `defaults:` may give
  its family one, random.yaml's `random`); the other ops have none, and a global tensor given to
  them is a RuntimeError (never a silent broadcast);
- src/ops/sbp_python.yaml: the Python-level functions and Tensor methods that reach the
  dispatcher by name without being table ops (`Tensor.float`, `F.linear`, indexing, ...).

The dispatcher (python/oneflow/_global/dispatch.py) reads only the generated module; the rules a
signature names are python/oneflow/_global/signatures.py's (`signatures.RULES`).

    python tools/gen_sbp.py            # rewrite the module
    python tools/gen_sbp.py --check    # exit 1 when it is stale (tests/test_global_sbp_table.py)
"""
import argparse
import ast
import os
import sys

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "python", "oneflow", "_global", "sbp_table.py")
PYTHON_OPS = os.path.join(ROOT, "src", "ops", "sbp_python.yaml")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optable  # noqa: E402


def signature(e):
    """The op table entry's signature name, or None (no signature: global inputs raise)."""
    if e.get("sbp"):
        return e["sbp"]
    if e["kind"] in optable.POINTWISE_KINDS:
        return "pointwise"
    return None


def signatures():
    """{op name: signature name}: the table's ops and their aliases, then the Python-level ops."""
    table = {}
    for e in optable.load():
        sig = signature(e)
        if sig is None:
            continue
        for n in [e["name"], *(e.get("aliases") or [])]:
            table[n] = sig
    with open(PYTHON_OPS) as f:
        doc = yaml.safe_load(f) or {}
    for sig, names in (doc.get("signatures") or {}).items():
        for n in names:
            assert n not in table, f"{PYTHON_OPS}: {n} already has a signature in the op table ({table[n]})"
            table[n] = sig
    return table


# Rules that read an op's dim / dims (and keepdim) arguments: their positions and defaults are
# taken from the op's signature, so the rule is one for every op of that algebra.
DIM_RULES = {"along_dim", "reduce_dims"}


def _params(sig):
    """[(name, position or None for keyword-only, default literal or None, varargs)] of a signature."""
    inner = sig[sig.index("(") + 1:sig.rindex(") ->")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "[(" and 1 or ch in "])" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    out, pos, kw_only = [], 0, False
    for p in parts:
        if p == "*":
            kw_only = True
            continue
        decl, _, default = p.partition("=")
        typ, name = decl.rsplit(None, 1)
        default = ast.literal_eval(default.strip()) if default.strip() else None
        out.append((name, None if kw_only else pos, default, typ.endswith("...")))
        pos += not kw_only
    return out


def dim_args():
    """{op name: {"dim": (name, position, default, varargs), "keepdim": (...)}} of the ops whose
    rule reads them."""
    out = {}
    for e in optable.load():
        if e.get("sbp") not in DIM_RULES:
            continue
        found = {}
        for name, pos, default, varargs in _params(e["sig"]):
            if name in ("dim", "dims", "keepdim"):
                found["keepdim" if name == "keepdim" else "dim"] = (name, pos, default, varargs)
        assert "dim" in found, f"op {e['name']}: sbp {e['sbp']} needs a dim / dims parameter in its signature"
        for n in [e["name"], *(e.get("aliases") or [])]:
            out[n] = found
    return out


def dunders():
    """{Python operator: the op it runs}, from the table's `dunder:` fields: `__iX__` runs the
    in-place form; reflected ones (`__rX__`) are their operator with the operands swapped."""
    out = {}
    for e in optable.load():
        ds = e.get("dunder") or []
        for d in ds:
            if "__" + d[3:] in ds:  # (__rsub__ of __sub__, __isub__ of __sub__; not __rshift__)
                if d.startswith("__i"):
                    out[d] = e["name"] + "_"
                continue
            out[d] = e["name"]
    with open(PYTHON_OPS) as f:
        doc = yaml.safe_load(f) or {}
    for d, name in (doc.get("dunder") or {}).items():
        assert d not in out, f"{PYTHON_OPS}: {d} is already an op table `dunder:`"
        out[d] = name
    return out


def render():
    sigs, dun = signatures(), dunders()
    lines = ['"""The SBP signature of every op global tensors reach by name, and the op each Python operator',
             "runs. Generated by `python tools/gen_sbp.py` from the op table (src/ops/table/*.yaml: `kind:`,",
             "`sbp:`, `dunder:`) and src/ops/sbp_python.yaml -- edit those, not this file",
             '(tests/test_global_sbp_table.py fails while it is stale)."""', "",
             "# op name -> the name of its rule in _global/signatures.py (RULES)",
             "SIGNATURES = {"]
    lines += [f"    {n!r}: {s!r}," for n, s in sorted(sigs.items())]
    lines += ["}", "", "# Python operator -> op", "DUNDER = {"]
    lines += [f"    {d!r}: {n!r}," for d, n in sorted(dun.items())]
    lines += ["}", "", "# op -> {'dim' / 'keepdim': (parameter name, position or None: keyword-only, default, varargs)}",
              "# of the ops whose rule reads them (their signatures' parameters)", "ARGS = {"]
    lines += [f"    {n!r}: {a!r}," for n, a in sorted(dim_args().items())]
    lines += ["}", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = render()
    if args.check:
        with open(OUT) as f:
            if f.read() != text:
                print(f"{OUT} is stale: run python tools/gen_sbp.py", file=sys.stderr)
                sys.exit(1)
        return
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
