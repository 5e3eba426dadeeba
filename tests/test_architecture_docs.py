"""The design documents a reader of the repository has (issue 38, point 4): docs/architecture.md
(the parts, the interception point, dispatch), docs/layout.md (one page walking the folders in
the order an eager op flows through them) and docs/adding_ops.md. Checked on the sources: the
citations point into the repository, and the layout names every folder a newcomer can meet."""
import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DOCS = os.path.join(ROOT, "docs")
# The folders whose text cites documents; build outputs and the virtual environment are not ours.
CITING = ("src", "python", "tools", "tests", "docs", "benchmarks", "examples", "scripts")
TEXT = (".py", ".h", ".cpp", ".cu", ".cuh", ".md", ".yaml", ".txt", ".sh", ".cmake")


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _sources():
    yield os.path.join(ROOT, "CMakeLists.txt")
    yield os.path.join(ROOT, "README.md")
    for top in CITING:
        for base, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for fn in files:
                if fn.endswith(TEXT):
                    yield os.path.join(base, fn)


def test_no_file_cites_a_design_document_outside_the_repository():
    # "DESIGN §N" / "DESIGN.md" named a document of the sessions that wrote the code, which a reader
    # of the repository does not have; the design is docs/architecture.md.
    pattern = re.compile(r"DESIGN(\.md)?\s*(§|section)", re.I)
    this = os.path.abspath(__file__)
    found = [f"{os.path.relpath(p, ROOT)}:{text[:m.start()].count(chr(10)) + 1}"
             for p in _sources() if p != this for text in [_read(p)] for m in pattern.finditer(text)]
    assert found == []


def test_cited_sections_of_the_architecture_exist():
    sections = set(re.findall(r"^## (\d+)\. ", _read(os.path.join(DOCS, "architecture.md")), re.M))
    assert len(sections) >= 8
    bad = []
    for p in _sources():
        for n in re.findall(r"architecture\.md[,)]? §(\d+)", _read(p)):
            if n not in sections:
                bad.append(f"{os.path.relpath(p, ROOT)}: §{n}")
    assert bad == []


def _expand_braces(text):
    # `_{activation,loss}.py` names _activation.py and _loss.py
    return re.sub(r"(\w*)\{([\w,]+)\}([\w.]*)",
                  lambda m: " ".join(f"{m.group(1)}{x}{m.group(3)}" for x in m.group(2).split(",")), text)


def test_layout_names_every_top_level_folder_and_module():
    layout = _expand_braces(_read(os.path.join(DOCS, "layout.md")))
    missing = [f"src/{d}/" for d in sorted(os.listdir(os.path.join(ROOT, "src")))
               if os.path.isdir(os.path.join(ROOT, "src", d)) and f"src/{d}/" not in layout]
    pkg = os.path.join(ROOT, "python", "oneflow")
    for name in sorted(os.listdir(pkg)):
        if name == "__pycache__" or name.endswith(".so"):
            continue
        shown = name + "/" if os.path.isdir(os.path.join(pkg, name)) else name
        if not re.search(rf"(?<![\w/])`?{re.escape(shown)}", layout):
            missing.append(f"python/oneflow/{shown}")
    assert missing == [], "docs/layout.md does not say what these hold"


def test_layout_walks_the_folders_in_the_order_an_op_flows():
    # docs/architecture.md §3 gives the path of one eager op; the numbered steps of docs/layout.md
    # take its folders in that order (the Python API first, the core last).
    arch = _read(os.path.join(DOCS, "architecture.md"))
    chain = arch[arch.index("## 3."):arch.index("## 4.")]
    flow_order = list(dict.fromkeys(re.findall(r"\((src/\w+)", chain)))
    assert flow_order[:4] == ["src/api", "src/autograd", "src/ops", "src/kernels"], flow_order
    steps = re.findall(r"^\d+\. `([\w/]+?)/?`", _read(os.path.join(DOCS, "layout.md")), re.M)
    assert steps[0] == "python/oneflow"
    firsts = [next(i for i, s in enumerate(steps) if s.startswith(f)) for f in flow_order + ["src/core"]]
    assert firsts == sorted(firsts), steps


# Hand-written C++ that names pointwise ops on purpose, and why it is no place a new op must go.
_CPP_OP_LISTS = {
    "src/graph/fusion.cpp": "the ops nn.Graph's fuser fuses: an optimisation an op may opt into",
}


def test_no_hand_written_cpp_file_lists_pointwise_ops():
    """docs/adding_ops.md: a pointwise op is three places (table entry, functor, OpInfo sample);
    tests/test_global_sbp_table.py keeps Python modules from listing them, this the C++ sources:
    a line naming three or more pointwise ops as string literals would be a fourth place."""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import optable

    pointwise = set()
    for e in optable.load():
        if e["kind"] in optable.POINTWISE_KINDS:
            pointwise.update([e["name"], *(e.get("aliases") or [])])
    assert len(pointwise) > 100
    found = []
    for base, _, files in os.walk(os.path.join(ROOT, "src")):
        for fn in sorted(files):
            path = os.path.join(base, fn)
            rel = os.path.relpath(path, ROOT)
            if not fn.endswith((".h", ".cpp", ".cu", ".cuh")) or rel in _CPP_OP_LISTS:
                continue
            for n, line in enumerate(_read(path).splitlines(), 1):
                hits = {s.rstrip("_") for s in re.findall(r'"(\w+)"', line)} & pointwise
                if len(hits) >= 3:
                    found.append(f"{rel}:{n}: {sorted(hits)}")
    assert found == []
    assert all(os.path.exists(os.path.join(ROOT, p)) for p in _CPP_OP_LISTS), "moved: update _CPP_OP_LISTS"
