"""Writes docs/ops.md: the coverage report of the eager op library, generated from the op table.

    .venv/bin/python tools/gen_coverage.py            # rewrite docs/ops.md
    .venv/bin/python tools/gen_coverage.py --check    # exit 1 if docs/ops.md is out of date

Three parts: every item of INVENTORY groups A and B (the spec's Tensor class and eager ops), the
op-library issue's everyday ops (tools/coverage_items.yaml), and every op of the table with its
public names, dtypes (those its OpInfo tests), differentiability and test status. An item is `ok`
when every public name it lists resolves in the built package; items that belong to later parts of
the project are listed with the reason (DEFERRED below), never silently dropped.
"""
import os
import re
import sys

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests"))


def _find_inventory():
    """shared/spec/INVENTORY.md beside the checkout (or beside a parent folder: worktrees)."""
    d = ROOT
    while True:
        p = os.path.join(d, "shared", "spec", "INVENTORY.md")
        if os.path.exists(p) or os.path.dirname(d) == d:
            return p
        d = os.path.dirname(d)


INVENTORY = _find_inventory()
OUT = os.path.join(ROOT, "docs", "ops.md")

import optable  # noqa: E402

# Items of groups A/B that belong to later parts of the project (global tensors, lazy mode, CUDA).
DEFERRED = {}
# Probes for items whose text is not a plain name.
OVERRIDES = {
    "Tensor - scalar": ["Tensor.__sub__", "Tensor.__mul__"],
    "requires_grad=True": ["tensor", "Tensor.requires_grad"],
    'Tensor(...).to("cuda")': ["Tensor.to", "Tensor.cuda"],
    # Scraped as a Tensor method; stacking is the top-level flow.stack(inputs, dim) (torch too).
    "stack(dim=0)": ["stack"],
}


def probes_of(item, section):
    """Public names (flow-relative, `Tensor.X` for methods) that an inventory bullet names."""
    head = item.split(" — ")[0]
    for k, v in OVERRIDES.items():
        if head.startswith(f"`{k}"):
            return v
    names = []
    for g in re.findall(r"`([^`]+)`", head):
        g = g.replace("class ", "").strip()
        g = re.split(r"[(\s]", g)[0].rstrip(".")
        if not g:
            continue
        if g.startswith("oneflow."):
            g = g[len("oneflow."):]
        if g.startswith("flow."):
            names.append(g[len("flow."):])
        elif "." in g and g.split(".")[0] in ("Tensor", "Size", "dtype", "device"):
            names.append(g)
        elif section.startswith("A"):
            names.append("Tensor." + g)
        else:
            names.append(g)
    return names


def inventory_items():
    """[(section title, bullet text, probes)] of groups A and B."""
    out, section, group = [], None, None
    with open(INVENTORY) as f:
        for line in f:
            if line.startswith("## "):
                group = line[3]
            elif line.startswith("### "):
                section = line[4:].strip()
            elif line.startswith("- `") and group in ("A", "B") and not section.startswith("A.6"):
                out.append((section, line[2:].strip(), probes_of(line[2:], section)))
    return out


def resolve(flow, name):
    samples = {"Tensor": flow.Tensor, "Size": flow.Size([2, 3]), "dtype": flow.float32,
               "device": flow.device("cpu")}
    parts = name.split(".")
    obj = samples.get(parts[0]) if len(parts) > 1 else None
    if obj is None:
        obj = flow
    else:
        parts = parts[1:]
    for p in parts:
        if not hasattr(obj, p):
            return False
        obj = getattr(obj, p)
    return True


def table_index(ops):
    """public name -> table entry (flow.X, Tensor.X, aliases, also)."""
    idx = {}
    for e in ops:
        names = [e["name"]] + list(e.get("aliases") or []) + list(e.get("also") or [])
        for n in names:
            idx.setdefault(n, e)
            idx.setdefault("Tensor." + n, e)
            if e.get("inplace"):
                idx.setdefault("Tensor." + n + "_", e)
    return idx


def differentiable(e):
    bw = e.get("backward")
    return {"none": "no", "not_implemented": "no (raises, as torch)"}.get(bw, "yes") if isinstance(bw, str) else "yes"


def tested_dtypes(name):
    from opinfo import OP_BY_NAME

    op = OP_BY_NAME.get(name)
    return ", ".join(op.dtypes) if op else ""


def public_names(e):
    n = e["name"]
    out = []
    if e.get("flow", True):
        out.append(f"flow.{n}")
    if e.get("method", True):
        out.append(f"Tensor.{n}")
    if e.get("inplace"):
        out.append(f"{n}_")
    if e.get("functional"):
        out.append(f"F.{n}")
    out += [f"flow.{a}" for a in e.get("also") or []]
    out += [f"{a}" for a in e.get("aliases") or []]
    return ", ".join(out)


def render(flow):
    ops = optable.load()
    idx = table_index(ops)
    from opinfo import OP_BY_NAME

    lines = ["# Op coverage", "",
             "Generated by `tools/gen_coverage.py` from the op table (`src/ops/table/`), the OpInfo",
             "samples (`tests/opinfo/`) and the built package; do not edit by hand. `ok` = every",
             "public name of the item resolves; `deferred` = belongs to a later part of the project",
             "(the reason is given); `missing` = not there yet.", ""]
    # 1. INVENTORY A/B
    items = inventory_items()
    n_ok = n_def = 0
    body = []
    for section, text, probes in items:
        key = probes[0].split(".")[-1] if probes else ""
        if key in DEFERRED:
            status = f"deferred: {DEFERRED[key]}"
            n_def += 1
        elif probes and all(resolve(flow, p) for p in probes):
            status = "ok"
            n_ok += 1
        else:
            status = "missing: " + ", ".join(p for p in probes if not resolve(flow, p))
        e = next((idx[p] for p in probes if p in idx), None)
        extra = f"{e['family']} / grad: {differentiable(e)}" if e else ""
        label = text.split(" — ")[0].replace("|", "\\|")
        body.append(f"| {section.split(' ')[0]} | {label} | {', '.join(probes)} | {extra} | {status} |")
    lines += [f"## Spec items (INVENTORY groups A and B): {n_ok} ok, {n_def} deferred, "
              f"{len(items) - n_ok - n_def} missing of {len(items)}", "",
              "| § | item | public names checked | table family / differentiable | status |",
              "|---|---|---|---|---|"] + body + [""]
    # 2. The everyday ops
    with open(os.path.join(ROOT, "tools", "coverage_items.yaml")) as f:
        groups = yaml.safe_load(f)
    lines += ["## Everyday ops beyond the spec (the op-library issue's list)", "",
              "| group | name | table family | differentiable | dtypes tested | status |",
              "|---|---|---|---|---|---|"]
    for group, names in groups.items():
        for n in names:
            e = idx.get(n) or idx.get(n.split(".")[-1] if n.startswith(("linalg.", "nn.functional.")) else "")
            ok = resolve(flow, n)
            fam = e["family"] if e else ("Python" if ok else "")
            lines.append(f"| {group} | {n} | {fam} | {differentiable(e) if e else ''} | "
                         f"{tested_dtypes(e['name']) if e else ''} | {'ok' if ok else 'missing'} |")
    lines.append("")
    # 3. Every table op
    lines += [f"## The op table: {len(ops)} ops", "",
              "| op | family | public names | differentiable | dtypes tested (OpInfo) |",
              "|---|---|---|---|---|"]
    for e in sorted(ops, key=lambda e: (e["family"], e["name"])):
        tested = tested_dtypes(e["name"]) or ("(tested elsewhere)" if e.get("test") == "none" else "")
        if e["name"] not in OP_BY_NAME and not tested:
            tested = "(see tests of its family)"
        lines.append(f"| {e['name']} | {e['family']} | {public_names(e)} | {differentiable(e)} | {tested} |")
    lines.append("")
    return "\n".join(lines)


def main():
    import oneflow as flow

    text = render(flow)
    if "--check" in sys.argv:
        old = open(OUT).read() if os.path.exists(OUT) else ""
        if old != text:
            print("docs/ops.md is out of date: run .venv/bin/python tools/gen_coverage.py", file=sys.stderr)
            sys.exit(1)
        return
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
