"""The export registry (python/oneflow/_export.py, docs/architecture.md §6): every public name has one
definition, the generated index docs/names.md lists each with where it is defined, and the surface
does not depend on the order in which the package's modules are imported."""
import ast
import os
import re
import subprocess
import sys

import pytest

import oneflow as flow
from oneflow import _export

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gen_names  # noqa: E402


def _index_rows():
    with open(gen_names.INDEX) as f:
        return re.findall(r"^\| `([^`]+)` \| ([^|]+) \| ([^|]+) \|$", f.read(), re.M)


def test_every_listed_name_exists():
    rows = _index_rows()
    assert len(rows) > 2000
    gone = []
    for full, _, _ in rows:
        label, _, name = full.rpartition(".")
        path = dict(gen_names.NAMESPACES)[label]
        if not hasattr(gen_names._namespace(flow, path), name):
            gone.append(full)
    assert gone == [], f"names listed in docs/names.md that oneflow no longer has: {gone}"


def test_names_index_is_current():
    # Fails when a public name appears, disappears or moves: run `python tools/gen_names.py`.
    # In a fresh interpreter: a submodule another test imported (oneflow.nn.common_types) becomes
    # an attribute of its package in this one, which `import oneflow` alone does not give.
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_names.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_index_names_the_defining_module():
    rows = {full: (kind.strip(), place.strip()) for full, kind, place in _index_rows()}
    assert rows["flow.quantile"] == ("python", "oneflow._stats")
    assert rows["flow.nn.functional.mish"] == ("python", "oneflow._activation")
    assert rows["flow.sin"][0] == "op table" and rows["flow.sin"][1].startswith("src/ops/table/")
    assert rows["Tensor.T"] == ("python", "oneflow._shape")


def test_python_exports_are_recorded_at_their_definition():
    rec = _export.records()
    assert rec["flow.quantile"] == (True, "oneflow._stats")
    assert rec["flow.Tensor.quantile"] == (True, "oneflow._stats")
    # out= wraps the function names only: PyTorch's Tensor methods take no out=
    assert "out" in __import__("inspect").signature(flow.quantile, follow_wrapped=False).parameters
    assert "out" not in __import__("inspect").signature(flow.Tensor.quantile).parameters


def test_exporting_a_name_twice_raises():
    with pytest.raises(ValueError, match="flow.quantile is defined twice"):
        _export.export_value(lambda x: x, "flow.quantile")
    with pytest.raises(ValueError, match="flow.nn.functional.mish is defined twice"):
        _export.export("flow.nn.functional.mish")(lambda x: x)


def test_a_name_of_the_op_table_cannot_be_exported_from_python():
    table = _export.table_exports()
    assert table["flow.sin"] is flow._C.sin
    with pytest.raises(ValueError, match=r"by the op table and in Python.*flow\.sin"):
        _export.check_against_table(table, {"flow.sin": (len, False, "test")})


def test_setting_a_name_outside_the_registry_is_refused():
    class Owner:
        patched = property(lambda self: 1)

    with pytest.raises(ValueError, match="was set before the registry was applied"):
        _export._check_unset(Owner, "patched", property(lambda self: 2), "flow.Owner.patched")
    module = type(sys)("m")
    module.f = len
    with pytest.raises(ValueError, match="defined twice"):
        _export._check_unset(module, "f", abs, "flow.m.f")


def test_targets_are_dotted_from_flow():
    with pytest.raises(ValueError, match="not dotted from flow"):
        _export.export_value(len, "torch.len")


def test_no_install_functions_or_flow_helpers_remain():
    pkg = os.path.dirname(flow.__file__)
    found = []
    for base, _, files in os.walk(pkg):
        for fn in files:
            if fn.endswith(".py"):
                path = os.path.join(base, fn)
                with open(path) as f:
                    text = f.read()
                for pat in (r"^def _?install\(", r"^def _flow\(\)", r"^\s*(Tensor|_C\.Tensor)\.\w+\s*=[^=]",
                            r"setattr\((_F|Tensor|_C\.Tensor|flow|oneflow), ",
                            r"^\s*(flow|oneflow|_F|F|linalg|special|fft|functional|modules|_C\.[A-Z]\w*)\.\w+\s*=[^=]"):
                    found += [f"{os.path.relpath(path, pkg)}: {m}" for m in re.findall(pat, text, re.M)]
    # _legacy/ops.py swaps the legacy signatures in while a job function runs (not at import)
    found = [f for f in found if not f.startswith(os.path.join("_legacy", "ops.py"))]
    assert found == []


def _import_time_statements(body):
    """The statements that run when a module is imported: its body and the bodies of its if / for /
    with / try statements; not function bodies (they run when called) nor class bodies (they set
    the class's own names)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            yield from _import_time_statements(getattr(node, field, None) or [])


def _root(expr):
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def foreign_namespace_writes(source, name="<module>"):
    """Where a module, while it is imported, sets or deletes an attribute of something it imported
    (another module, Tensor, a class of another module): `X.attr = v`, `setattr(X, ...)`,
    `delattr(X, ...)` at import time, with X bound by an import. Only the registry's apply() may
    put names on other namespaces (docs/architecture.md §6)."""
    tree = ast.parse(source)
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported |= {a.asname or a.name for a in node.names}
    found = []
    for stmt in _import_time_statements(tree.body):
        targets = []
        if isinstance(stmt, ast.Assign):
            targets = [t for target in stmt.targets
                       for t in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])]
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            targets = [stmt.target]
        elif isinstance(stmt, ast.Delete):
            targets = stmt.targets
        for t in targets:
            # a module's own object through sys.modules[__name__] (backends/cudnn.py's module class)
            if isinstance(t, ast.Attribute) and _root(t) in imported and "sys.modules[__name__]" not in ast.unparse(t):
                found.append(f"{name}:{stmt.lineno}: {ast.unparse(t)}")
        if isinstance(stmt, (ast.Expr, ast.Assign)):
            for node in ast.walk(stmt.value):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id in ("setattr", "delattr") and node.args and _root(node.args[0]) in imported):
                    found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_namespace_scan_finds_writes_to_imported_objects():
    src = ("import oneflow as flow\nfrom .._tensor import Tensor\nfrom . import _C\nimport sys\n"
           "Tensor.mT = property(len)\nsetattr(flow, 'x', 1)\nif True:\n    for n in 'ab':\n"
           "        setattr(_C.Tensor, n, None)\ndel flow.y\nsys.modules[__name__].__class__ = object\n"
           "def f():\n    setattr(flow, 'z', 1)\nclass C:\n    x = 1\nC.y = 2\n")
    assert [f.split(": ", 1)[1] for f in foreign_namespace_writes(src)] == [
        "Tensor.mT", "setattr(flow, 'x', 1)", "setattr(_C.Tensor, n, None)", "flow.y"]


def test_no_module_sets_names_on_another_namespace_at_import():
    """Issue 38: `import oneflow` assembles its namespace from the registry alone."""
    pkg = os.path.dirname(flow.__file__)
    found = []
    for base, _, files in os.walk(pkg):
        for fn in sorted(files):
            if fn.endswith(".py"):
                path = os.path.join(base, fn)
                with open(path) as f:
                    found += foreign_namespace_writes(f.read(), os.path.relpath(path, pkg))
    assert found == []


def _surface(first_imports):
    code = ("import sys\n" + "".join(f"import {m}\n" for m in first_imports) +
            f"sys.path.insert(0, {os.path.join(ROOT, 'tools')!r})\nimport gen_names, oneflow\n"
            "for full, kind, place, ident in gen_names.rows(oneflow):\n    print(full, ident)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_the_surface_does_not_depend_on_import_order():
    plain = _surface([])
    assert plain.count("\n") > 2000
    assert _surface(["oneflow.nn.functional", "oneflow.linalg", "oneflow.fft", "oneflow.special"]) == plain
    assert _surface(["oneflow._stats", "oneflow._activation", "oneflow.distributions"]) == plain


def test_functions_exported_with_out_pickle_by_their_public_name():
    import pickle

    for f in (flow.linalg.multi_dot, flow.quantile, flow.special.chebyshev_polynomial_t, flow.where):
        assert pickle.loads(pickle.dumps(f)) is f
    # the index still names the definition, not the out= wrapper
    assert flow.quantile.__wrapped__.__module__ == "oneflow._stats"
