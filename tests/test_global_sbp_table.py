"""SBP signatures as op-table data (docs/global_tensors.md, "SBP signatures"): the extension's
generated table is the op table's, every op whose algebra the table knows has a signature naming
a real rule, an op without one raises on global inputs (never a silent broadcast), and a new
pointwise op needs no Python name list (docs/adding_ops.md: table entry + functor + OpInfo
sample). The ops' results on global tensors against PyTorch: tests/global_worker.py and the other
workers (test_global_tensor.py)."""
import ast
import glob
import os
import re
import subprocess
import sys

import optable_path  # noqa: F401  (tools/ on sys.path)
import gen_sbp  # noqa: E402
import optable  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PACKAGE = os.path.join(ROOT, "python", "oneflow")


def _signatures():
    from oneflow._global.sbp_table import SIGNATURES
    return SIGNATURES


def test_the_extension_holds_the_tables_signatures():
    """The build wrote the op table's signatures into the extension (ops_bind.cpp) and the
    dispatcher's tables are read from it (fails on a build older than the table)."""
    from oneflow import _oneflow_internal as _C
    from oneflow._global import sbp_table
    sigs, dunder, _, none = _C._sbp_table()
    assert sigs == gen_sbp.signatures() and dunder == gen_sbp.dunders() and none == gen_sbp.no_signature()
    assert sbp_table.SIGNATURES == sigs and sbp_table.DUNDER == dunder and sbp_table.NO_SIGNATURE == none
    assert sbp_table.ARGS == gen_sbp.dim_args()
    assert sbp_table.ARGS["flip"]["dim"] == ("dims", 1, None, True)  # (flip(x, 0, 1): varargs dims)
    assert sbp_table.ARGS["kthvalue"] == {"dim": ("dim", 2, -1, False), "keepdim": ("keepdim", 3, False, False)}


def test_every_signature_names_a_rule():
    from oneflow._global.signatures import RULES
    bad = {n: s for n, s in _signatures().items() if s not in RULES}
    assert not bad, bad


def test_ops_of_sbp_relevant_kinds_have_signatures():
    """Pointwise kinds get theirs from `kind:`; the random, dropout and fused-update families
    (whose layout rule is the family's) and every op with an `sbp:` field have one; the aliases of
    an op share its signature."""
    sigs = _signatures()
    entries = optable.load()
    missing = []
    for e in entries:
        relevant = e["kind"] in optable.POINTWISE_KINDS or e["family"] in ("random", "dropout", "optim") or "sbp" in e
        for n in [e["name"], *(e.get("aliases") or [])]:
            if relevant and n not in sigs:
                missing.append(n)
            if n in sigs and e.get("sbp"):
                assert sigs[n] == e["sbp"], (n, sigs[n], e["sbp"])
    assert not missing, missing
    pointwise = [e for e in entries if e["kind"] in optable.POINTWISE_KINDS and "sbp" not in e]
    assert pointwise and all(sigs[e["name"]] == "pointwise" for e in pointwise)
    # the family's rule: random fills draw per rank on split tensors (one draw on broadcast ones)
    assert sigs["normal_"] == sigs["uniform_"] == "random" and sigs["sgd_update"] == "update"


def test_every_table_op_has_a_signature_or_says_why_not():
    """Issue 41 point 1: every op of the table declares its SBP signature (a pointwise kind, an
    `sbp:` naming a rule) or, where none can apply, says why in `no_sbp:` -- a backward kernel
    (autograd runs on the local components), a factory without tensor inputs (placement= / sbp=).
    An op with neither fails the build (gen_sbp.no_signature asserts)."""
    sigs, why, kinds = _signatures(), gen_sbp.no_signature(), gen_sbp.no_signature_kinds()
    for e in optable.load():
        assert (e["name"] in sigs) != (e["name"] in why), e["name"]
        if e["name"] not in why:
            continue
        kind = kinds[e["name"]][0]
        assert kind in gen_sbp.NO_SBP_KINDS and why[e["name"]].startswith(gen_sbp.NO_SBP_KINDS[kind] + ": ")
        params = e["sig"].split("(", 1)[1].rsplit(")", 1)[0]
        tensors = re.findall(r"\bTensor\b[?\[\]]*\s+(\w+)", params)
        # each kind says something checkable of the op's signature
        if kind == "factory":
            assert not tensors, (e["name"], "a factory takes no tensor", tensors)
        elif kind == "backward_kernel":
            assert any("grad" in t or t in ("dy", "dz") for t in tensors), (e["name"], "a backward kernel takes a gradient")
        else:
            assert tensors, (e["name"], kind, "an op of data takes tensors")
    # the kinds are generated into the op info of the extension, as the table says
    from oneflow import _oneflow_internal as _C
    assert _C._sbp_no_signature_kinds() == {n: k for n, (k, _) in kinds.items()}
    assert sigs["einsum"] == "einsum" and sigs["kl_div"] == "row_loss" and sigs["hstack"] == "stack_dim1"


def test_undeclared_op_raises_on_global_inputs():
    """A table op without a signature, and a name the dispatcher has never heard of, raise a
    RuntimeError naming the op, the inputs' SBPs and (for the table op) why it has none (a world
    of one process, in a child so that this process joins no job)."""
    # a table op without a signature, of (tensor, tensor, dim) (picked from the table: none is named here)
    op = next(e["name"] for e in optable.load()
              if e.get("no_sbp") and e["sig"].startswith(f"{e['name']}(Tensor grad_output, Tensor output, int dim)"))
    code = f"""
import oneflow as flow
from oneflow._global.dispatch import run
x = flow.arange(12.0).reshape(4, 3).to_global(flow.placement("cpu", [0]), flow.sbp.split(0))
for call in (lambda: getattr(flow._C, {op!r})(x, x, 1), lambda: run("no_such_op", lambda t: t, (x,), {{}})):
    try:
        call()
    except RuntimeError as e:
        print("raised:", e)
    else:
        print("no error")
y = x.exp() + x  # a declared op still runs, keeping the split
print("declared:", y.sbp, y.to_local().shape)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    raised = [ln for ln in lines if ln.startswith("raised:")]
    assert len(raised) == 2, r.stdout
    for name, ln in zip((op, "no_such_op"), raised):
        assert f"{name}: no SBP signature" in ln and "split(dim=0)" in ln, ln
    assert "a backward kernel" in raised[0], raised[0]
    assert "declared: (oneflow.sbp.split(dim=0),) oneflow.Size([4, 3])" in r.stdout, r.stdout


# Literals of upstream's API names, not registries of ops: a new pointwise op is not added to them
# (unless upstream has that name there too).
_API_NAME_LISTS = {
    "_activation.py": "the in-place activations nn.functional exposes (upstream's list)",
    "_legacy/math.py": "the legacy flow.math names",
    "_legacy/initializers.py": "the nonlinearities of calculate_gain",
    "_tensor.py": "the in-place comparisons PyTorch's Tensor has",
    "_math.py": "the top-level in-place functions PyTorch has",
}


def test_a_pointwise_op_is_listed_by_no_python_module():
    """Issue 38 point 4: a new pointwise op takes a table entry, a functor and an OpInfo sample.
    Every mechanism that treats ops by kind (the global dispatcher's signatures, operators) reads
    the table's generated outputs through the extension; so no module of the package holds a
    literal naming three or more pointwise ops -- such a list would be a fourth place to edit."""
    pointwise = set()
    for e in optable.load():
        if e["kind"] in optable.POINTWISE_KINDS:
            pointwise.update([e["name"], *(e.get("aliases") or [])])
    found = []
    for path in glob.glob(os.path.join(PACKAGE, "**", "*.py"), recursive=True):
        rel = os.path.relpath(path, PACKAGE)
        if rel in _API_NAME_LISTS:
            continue
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
                elts = node.elts
            elif isinstance(node, ast.Dict):
                elts = [k for k in node.keys if k is not None] + node.values
            else:
                continue
            names = {x.value.rstrip("_") for x in elts if isinstance(x, ast.Constant) and isinstance(x.value, str)}
            hits = names & pointwise
            if len(hits) >= 3:
                found.append(f"{rel}:{node.lineno}: {sorted(hits)}")
    assert not found, found
    missing = [p for p in _API_NAME_LISTS if not os.path.exists(os.path.join(PACKAGE, p))]
    assert not missing, f"moved or removed: update _API_NAME_LISTS ({missing})"
