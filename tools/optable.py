"""Reads the op table: the folder src/ops/table/, one YAML file per op family (docs/architecture.md §2).

Each file is a mapping with an optional `defaults:` mapping (fields every op of the file gets unless
it sets them itself) and an `ops:` list. The family of an op is its file's name. The fields are
documented in src/ops/table/README.md; unknown fields are an error, so a typo never silently drops
a setting. Used by the code generator (tools/gen_ops.py) and by the tests (tests/optable_util.py).
"""
import glob
import os

import yaml

FIELDS = {
    "name", "sig", "kind", "result", "dtypes", "inplace", "method", "flow", "functional", "dunder",
    "aliases", "also", "backward", "note", "test", "functor", "boxed", "autocast", "autocast_if", "check",
    "kwarg_aliases", "varargs_required", "no_single_int", "same_form", "complex", "oneflow", "sbp", "no_sbp", "traced",
}
AUTOCAST = {"lower", "fp32", "promote"}
KINDS = {"unary", "binary", "ternary", "custom"}
POINTWISE_KINDS = {"unary", "binary", "ternary"}


def default_sig(e):
    """The signature a pointwise op gets when its entry has none."""
    if e.get("kind") == "unary":
        return f"{e['name']}(Tensor input) -> Tensor"
    if e.get("kind") == "binary":
        return f"{e['name']}(TensorLike input, TensorLike other) -> Tensor"
    raise ValueError(f"op {e['name']}: a `sig:` is required for kind {e.get('kind')}")


def table_dir(root=None):
    root = root or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    return os.path.join(root, "src", "ops", "table")


def table_files(path):
    return sorted(glob.glob(os.path.join(path, "*.yaml")))


def load(path=None):
    """Every op entry of the table as a dict, defaults applied and `family` set, in file order."""
    path = path or table_dir()
    entries = []
    for fn in table_files(path):
        family = os.path.splitext(os.path.basename(fn))[0]
        with open(fn) as f:
            doc = yaml.safe_load(f) or {}
        bad = set(doc) - {"defaults", "ops"}
        assert not bad, f"{fn}: unknown top-level keys {sorted(bad)}"
        defaults = doc.get("defaults") or {}
        for raw in doc.get("ops") or []:
            e = dict(defaults)
            e.update(raw)
            unknown = set(e) - FIELDS
            assert not unknown, f"{fn}: op {e.get('name')}: unknown fields {sorted(unknown)}"
            e.setdefault("kind", "custom")
            assert e["kind"] in KINDS, f"{fn}: op {e['name']}: bad kind {e['kind']}"
            assert e.get("autocast", "lower") in AUTOCAST, f"{fn}: op {e['name']}: bad autocast {e['autocast']}"
            if "sig" not in e:
                e["sig"] = default_sig(e)
            e["family"] = family
            entries.append(e)
    names = [e["name"] for e in entries]
    dup = sorted({n for n in names if names.count(n) > 1})
    assert not dup, f"ops declared twice: {dup}"
    return entries


def families(path=None):
    return [os.path.splitext(os.path.basename(fn))[0] for fn in table_files(path or table_dir())]
