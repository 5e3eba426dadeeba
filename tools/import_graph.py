"""Measures the import graph of python/oneflow: import circles and arrows that run back up.

    python tools/import_graph.py              # the numbers, the circles and the back arrows
    python tools/import_graph.py --json       # the same as JSON (tests/test_import_graph.py)

Nodes are the package's modules (one per .py file; a package is its __init__.py) plus the
extension `oneflow._oneflow_internal` (= `flow._C`). An arrow A -> B is an import statement in A
that names B: `from . import x` names the submodule x when there is one, else the package;
`from .m import f` names m. Two graphs are measured separately:

* module level: the imports that run while A is imported (also those in class bodies and under
  `if`/`try`). A circle (strongly connected component of more than one module) here means the
  modules' import order matters;
* in function: imports inside a def or lambda, which run at call time. They cannot break an
  import, but they are dependencies all the same, and a circle through them means two subjects
  each need the other.

`import oneflow` / `import oneflow as flow` (and `from oneflow import name` of a non-module)
binds the public namespace that `oneflow/__init__.py` assembles from the export registry; the
names are looked up at call time. Such references are not arrows of the graph (every module would
otherwise sit in one circle with the package root, which imports every subject): they are counted
apart, as `root_refs`.

Layers, bottom to top (LAYERS below): a module belongs to the layer of the longest prefix that
matches it. An arrow from a module to one in a higher layer is a back arrow: the lower subject
depends on a higher one. Arrows within a layer and down are the design. tests/test_import_graph.py
holds the measured numbers as a ratchet: they may only go down.
"""
import argparse
import ast
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PKG_DIR = os.path.join(ROOT, "python", "oneflow")
EXTENSION = "oneflow._oneflow_internal"

# (layer name, module prefixes), bottom first. A prefix matches the module itself and the modules
# under it; the longest matching prefix decides. `oneflow` (the package root) matches only itself,
# so that a new module has to be given its layer here (tests/test_import_graph.py).
LAYERS = [
    # the C++ core's bindings and what every Python definition uses to declare itself; the grad
    # mode switches (_grad_mode: no_grad, inference_mode, ...) are state of the C++ autograd that
    # every op entry reads, wrapped in Python with nothing but the extension below them
    ("core", ["oneflow._oneflow_internal", "oneflow._export", "oneflow._argcheck", "oneflow._size",
              "oneflow.version", "oneflow._lazy_state", "oneflow._grad_mode", "oneflow._no_derivative",
              # what the layers below the global one ask of global tensors (Note [Global hooks])
              "oneflow._global_hooks"]),
    # tensors and the ops on them: construction, printing, indexing, the math / shape / linalg /
    # random / spectral families and their Python compositions
    ("tensor", ["oneflow._tensor", "oneflow._tensor_str", "oneflow._indexing", "oneflow._index",
                "oneflow._math", "oneflow._shape", "oneflow._complex", "oneflow._spectral", "oneflow._random",
                "oneflow.random", "oneflow._boxed", "oneflow._pickle_ops", "oneflow.linalg", "oneflow.special",
                "oneflow.fft", "oneflow.signal", "oneflow._types", "oneflow._creation", "oneflow._stats",
                "oneflow._storage", "oneflow._control_flow", "oneflow._padding", "oneflow._tensor_buffer", "oneflow._utils",
                "oneflow.framework.tensor_tuple_util",  # (TensorTuple: nn's module hooks build them)
                "oneflow._image"]),
    # gradients: the autograd API (backward, grad, Function, functional, graph hooks), autocast
    ("autograd", ["oneflow.autograd", "oneflow.amp"]),
    # devices and the process's runtime switches
    # (autograd.profiler is torch's legacy path of the profiler: its subject is the profiler's)
    ("device", ["oneflow._runtime", "oneflow.asyncs", "oneflow.cuda", "oneflow.cpu", "oneflow.backends", "oneflow.accelerator", "oneflow.jit",
                "oneflow.profiler", "oneflow.autograd.profiler", "oneflow.futures", "oneflow.multiprocessing"]),
    # the module system, and nn.functional's Python argument glue (the modules that set
    # flow.nn.functional.X and the torch.X forms of nn ops)
    ("nn", ["oneflow.nn", "oneflow.ao", "oneflow._activation", "oneflow._loss", "oneflow._dropout",
            "oneflow._embedding", "oneflow._resample", "oneflow._nn_ops"]),
    # what trains and feeds models
    # (torch.func transforms models: functional_call over nn.Modules, grad / vmap over autograd)
    ("train", ["oneflow.optim", "oneflow.nn.optimizer", "oneflow.utils", "oneflow.distributions", "oneflow.framework",
               "oneflow.hub", "oneflow.testing", "oneflow.func"]),
    # several processes and traced programs: global tensors, collectives, nn.Graph
    ("graph_global", ["oneflow._global", "oneflow.sbp", "oneflow.distributed", "oneflow.env", "oneflow.comm",
                      "oneflow.boxing", "oneflow.nn.graph", "oneflow.nn.parallel", "oneflow.utils.global_view",
                      "oneflow.one_embedding", "oneflow.nn.modules._sync_bn"]),
    # compatibility with other APIs' module trees, and the package root that assembles everything
    ("compat", ["oneflow", "oneflow.mock_torch", "oneflow._legacy", "oneflow.compatible", "oneflow.core",
                "oneflow.unittest", "oneflow.typing", "oneflow.support", "oneflow.sysconfig"]),
]
LAYER_INDEX = {name: i for i, (name, _) in enumerate(LAYERS)}


def layer_of(module):
    best, best_len = None, -1
    for name, prefixes in LAYERS:
        for p in prefixes:
            under = p != "oneflow" and module.startswith(p + ".")
            if (module == p or under) and len(p) > best_len:
                best, best_len = name, len(p)
    return best


def modules():
    """{module name: path} of every .py file of the package."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(PKG_DIR):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        rel = os.path.relpath(dirpath, os.path.dirname(PKG_DIR)).replace(os.sep, ".")
        for f in sorted(filenames):
            if f.endswith(".py"):
                name = rel if f == "__init__.py" else f"{rel}.{f[:-3]}"
                out[name] = os.path.join(dirpath, f)
    return out


class _Imports(ast.NodeVisitor):
    """(dotted target, imported names or None, in_function, line) of each import statement."""

    def __init__(self):
        self.found = []
        self.depth = 0

    def _nested(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _nested

    def visit_Import(self, node):
        for a in node.names:
            self.found.append((a.name, 0, None, self.depth > 0, node.lineno))

    def visit_ImportFrom(self, node):
        self.found.append((node.module or "", node.level, [a.name for a in node.names], self.depth > 0,
                           node.lineno))


def _resolve(importer, is_pkg, module, level, known):
    """Absolute dotted name of an import's module part."""
    if level == 0:
        return module
    base = importer.split(".") if is_pkg else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _target(name, known):
    """The node an absolute name refers to: itself, the extension for `_C`, or None outside the
    package (or when it is the package root: a namespace reference)."""
    if name in ("oneflow._C", EXTENSION) or name.startswith("oneflow._C.") or name.startswith(EXTENSION + "."):
        return EXTENSION
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def edges():
    """[(importer, imported, in_function, line)] and the root references [(importer, line)]."""
    known = modules()
    arrows, root_refs = [], []
    for mod, path in known.items():
        is_pkg = path.endswith("__init__.py")
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        v = _Imports()
        v.visit(tree)
        for module, level, names, in_fn, line in v.found:
            base = _resolve(mod, is_pkg, module, level, known)
            if not (base == "oneflow" or base.startswith("oneflow.")):
                continue
            targets = []
            if names is None:
                targets.append(_target(base, known))
            else:
                for n in names:
                    sub = f"{base}.{n}"
                    targets.append(_target(sub, known) if sub in known or sub in ("oneflow._C", EXTENSION) else _target(base, known))
            for t in targets:
                if t is None or t == mod:
                    continue
                if t == "oneflow" and mod != "oneflow":
                    root_refs.append((mod, line))
                    continue
                arrows.append((mod, t, in_fn, line))
    return arrows, root_refs


def sccs(nodes, pairs):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    succ = {n: sorted({b for a, b in pairs if a == n}) for n in nodes}
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter[0]
                counter[0] += 1
                stack.append(node)
                on_stack.add(node)
            nexts = succ.get(node, [])
            if i < len(nexts):
                work.append((node, i + 1))
                w = nexts[i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[node] = min(low[node], index[w])
                continue
            for w in nexts:
                if w in on_stack:
                    low[node] = min(low[node], low[w])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def measure():
    known = modules()
    nodes = set(known) | {EXTENSION}
    arrows, root_refs = edges()
    unlayered = sorted(n for n in nodes if layer_of(n) is None)
    result = {"modules": len(nodes), "unlayered": unlayered, "root_refs": len(root_refs),
              "root_ref_modules": sorted({m for m, _ in root_refs})}
    for kind, in_fn in (("module_level", False), ("in_function", True)):
        pairs = sorted({(a, b) for a, b, f, _ in arrows if f == in_fn})
        back = [(a, b) for a, b in pairs
                if layer_of(a) and layer_of(b) and LAYER_INDEX[layer_of(b)] > LAYER_INDEX[layer_of(a)]]
        result[kind] = {"arrows": len(pairs), "back_arrows": len(back), "back": [list(p) for p in back],
                        "circles": sccs(nodes, pairs)}
    # the circles of both graphs together: subjects that need each other, at any time
    all_pairs = sorted({(a, b) for a, b, _, _ in arrows})
    result["combined_circles"] = sccs(nodes, all_pairs)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = measure()
    if args.json:
        json.dump(r, sys.stdout, indent=1)
        print()
        return
    print(f"{r['modules']} modules; {r['root_refs']} references to the root namespace "
          f"(`import oneflow`) from {len(r['root_ref_modules'])} modules")
    if r["unlayered"]:
        print("modules in no layer:", ", ".join(r["unlayered"]))
    for kind in ("module_level", "in_function"):
        k = r[kind]
        print(f"\n{kind}: {k['arrows']} arrows, {k['back_arrows']} back up, {len(k['circles'])} circles")
        for c in k["circles"]:
            print(f"  circle of {len(c)}: {' '.join(c)}")
        for a, b in k["back"]:
            print(f"  back: {a} ({layer_of(a)}) -> {b} ({layer_of(b)})")
    print(f"\ncombined: {len(r['combined_circles'])} circles")
    for c in r["combined_circles"]:
        print(f"  circle of {len(c)}: {' '.join(c)}")


if __name__ == "__main__":
    main()
