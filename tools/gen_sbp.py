"""The SBP signature of every op that global tensors reach by name (docs/global_tensors.md, "SBP
signatures"), from one source each:

- the op table (src/ops/table/*.yaml): an op of a pointwise `kind:` (unary / binary / ternary)
  gets the pointwise signature; any op may name another with `sbp:` (a file's `defaults:` may give
  its family one, random.yaml's `random`); the other ops have none -- their entries say why in
  `no_sbp: {kind: K, why: "..."}`, K one of NO_SBP_KINDS (the build fails on an op with neither,
  or with another kind) -- and a global tensor given to them is a RuntimeError quoting the kind's
  text and the why (never a silent broadcast);
- PYTHON_SIGNATURES below: the Python-level functions and Tensor methods that reach the
  dispatcher by name without being table ops (`Tensor.float`, `F.linear`, indexing, ...).

tools/gen_ops.py writes the rows into the extension's generated bindings (ops_bind.cpp: C++
arrays, and `_oneflow_internal._sbp_table()` for Python), so the build regenerates them when an
entry changes: python/oneflow/_global/sbp_table.py reads them, the dispatcher
(python/oneflow/_global/dispatch.py) reads that. The rules a signature names are
python/oneflow/_global/signatures.py's (`signatures.RULES`).

    python tools/gen_sbp.py            # print every op's signature (what the build writes)
"""
import argparse
import ast
import os
import sys

# The names that reach the global dispatcher without being op-table entries (Python-level
# functions and Tensor methods: each global tensor's method runs through the dispatcher under its
# own name; indexing; properties), by rule. Table ops declare theirs in the table; a name declared
# in both places is an error, a name declared nowhere a RuntimeError on global tensors. (Kept in
# this file, which the build depends on, so that an edit regenerates the bindings.)
PYTHON_SIGNATURES = {
    # dtype conversions and copies: elementwise, the layout kept
    "pointwise": ["to", "float", "double", "half", "bfloat16", "int", "long", "short", "char", "byte", "bool",
                  "cfloat", "cdouble", "type_as", "cast", "detach", "fill_", "zero_", "rsub", "real", "imag"],
    # in-place random fills and dropouts of Python-level forms: per-rank draws on split tensors,
    # one draw on broadcast ones
    "random": ["dropout_", "dropout2d", "dropout3d"],
    "copy": ["copy_"],  # self laid out as it is; the source boxed to it
    "linear": ["linear"],  # nn.functional.linear (python/oneflow/nn/functional.py)
    # honest whole-tensor rules: general indexing reads / writes any element, x.T / x.mT / x.H /
    # x.mH reverse or swap dims of the whole; nbytes and _base are the logical tensor's
    "broadcast": ["getitem", "setitem_", "T", "mT", "H", "mH", "nbytes", "_base"],
    # queries of dtype or layout answered by this rank's component as it is (no boxing)
    "metadata": ["is_floating_point", "is_complex", "is_signed", "element_size", "itemsize", "layout",
                 "is_contiguous", "is_pinned", "is_shared", "is_inference", "is_neg", "is_conj", "is_meta", "is_cpu",
                 "is_determined", "is_nested", "is_quantized", "is_sparse", "is_sparse_csr", "is_mkldnn", "is_ipu",
                 "is_maia", "is_mps", "is_mtia", "is_vulkan", "is_xla", "is_xpu"],
}
# Python unary operators that are no op table `dunder:` (the binary ones are)
PYTHON_DUNDERS = {"__neg__": "neg", "__abs__": "abs", "__invert__": "bitwise_not", "__pos__": "positive"}

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optable  # noqa: E402


def signature(e):
    """The op table entry's signature name, or None (no signature: global inputs raise; the entry
    then says why in `no_sbp:`)."""
    if e.get("sbp"):
        assert not e.get("no_sbp"), f"op {e['name']}: both sbp: and no_sbp:"
        return e["sbp"]
    if e["kind"] in optable.POINTWISE_KINDS:
        return "pointwise"
    return None


# Why an op can have no SBP signature: the kinds of `no_sbp:` (key: the table's word; value: the
# text that opens the dispatcher's RuntimeError). tests/test_global_sbp_table.py checks each op
# against its kind (a factory takes no tensor, a backward kernel takes a gradient).
NO_SBP_KINDS = {
    "backward_kernel": "a backward kernel",  # autograd calls it on local components only
    "factory": "no tensor input",  # the global form is the factory's placement= / sbp=
    "one_process_data": "one process's data",  # the op's state is this process's (one_embedding)
}


def no_signature_kinds(path=None):
    """{op name: (kind, why)} (the entries' `no_sbp:`): every table op has either a signature or a
    reason of a known kind, so a new op without one is a build error, not a silent gap."""
    out, sigs = {}, signatures(path)
    for e in optable.load(path):
        if e["name"] in sigs:  # (its own, or a Python-level name's: real, imag)
            continue
        r = e.get("no_sbp")
        assert r, f"op {e['name']}: no SBP signature (`sbp:`) and no `no_sbp:` reason"
        assert isinstance(r, dict) and set(r) == {"kind", "why"} and isinstance(r["why"], str), \
            f"op {e['name']}: `no_sbp:` is {{kind: K, why: \"...\"}}, not {r!r}"
        assert r["kind"] in NO_SBP_KINDS, f"op {e['name']}: no_sbp kind {r['kind']!r} is not one of {sorted(NO_SBP_KINDS)}"
        for n in [e["name"], *(e.get("aliases") or [])]:
            out[n] = (r["kind"], r["why"])
    return out


def no_signature(path=None):
    """{op name: why it has no signature}: its kind's text, then the entry's why."""
    return {n: f"{NO_SBP_KINDS[k]}: {why}" for n, (k, why) in no_signature_kinds(path).items()}


def signatures(path=None):
    """{op name: signature name}: the table's ops and their aliases, then the Python-level ops."""
    table = {}
    for e in optable.load(path):
        sig = signature(e)
        if sig is None:
            continue
        for n in [e["name"], *(e.get("aliases") or [])]:
            table[n] = sig
    for sig, names in PYTHON_SIGNATURES.items():
        for n in names:
            assert n not in table, f"PYTHON_SIGNATURES: {n} already has a signature in the op table ({table[n]})"
            table[n] = sig
    return table


# Rules that read an op's dim / dims (and keepdim) arguments: their positions and defaults are
# taken from the op's signature, so the rule is one for every op of that algebra.
DIM_RULES = {"along_dim", "reduce_dims", "reduce_max", "reduce_min", "reduce_max_index", "reduce_min_index",
             "reduce_select", "index_aligned", "pair_reduce"}


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


def dim_args(path=None):
    """{op name: {"dim": (name, position, default, varargs), "keepdim": (...)}} of the ops whose
    rule reads them."""
    out = {}
    for e in optable.load(path):
        if e.get("sbp") not in DIM_RULES:
            continue
        found = {}
        for name, pos, default, varargs in _params(e["sig"]):
            if name in ("dim", "dims", "axis", "dimension", "keepdim"):
                found["keepdim" if name == "keepdim" else "dim"] = (name, pos, default, varargs)
        assert "dim" in found, f"op {e['name']}: sbp {e['sbp']} needs a dim / dims parameter in its signature"
        for n in [e["name"], *(e.get("aliases") or [])]:
            out[n] = found
    return out


def dunders(path=None):
    """{Python operator: the op it runs}, from the table's `dunder:` fields: `__iX__` runs the
    in-place form; reflected ones (`__rX__`) are their operator with the operands swapped."""
    out = {}
    for e in optable.load(path):
        ds = e.get("dunder") or []
        for d in ds:
            if "__" + d[3:] in ds:  # (__rsub__ of __sub__, __isub__ of __sub__; not __rshift__)
                if d.startswith("__i"):
                    out[d] = e["name"] + "_"
                continue
            out[d] = e["name"]
    for d, name in PYTHON_DUNDERS.items():
        assert d not in out, f"PYTHON_DUNDERS: {d} is already an op table `dunder:`"
        out[d] = name
    return out


def _cstr(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _c(v):
    return "nullptr" if v is None else '"' + str(v) + '"'


def cpp(path=None):
    """(the C++ arrays, their accessors of src/api/sbp_table.h, the body of the binding
    `_sbp_table()`) of ops_bind.cpp: every op's signature, its dim / keepdim parameters (name,
    position or -1: keyword-only, the default's Python literal, varargs) and the Python operators'
    ops, sorted by name (C++ looks them up by binary search)."""
    sigs, args, dun, why = signatures(path), dim_args(path), dunders(path), no_signature(path)
    kinds = no_signature_kinds(path)
    none = "{nullptr, -1, nullptr, false}"

    def arg(a):
        if a is None:
            return none
        name, pos, default, varargs = a
        return f"{{{_c(name)}, {-1 if pos is None else pos}, {_c(repr(default))}, {str(varargs).lower()}}}"
    rows = [f'  {{"{n}", "{s}", {arg(args.get(n, {}).get("dim"))}, {arg(args.get(n, {}).get("keepdim"))}}},'
            for n, s in sorted(sigs.items())]
    arrays = ["// SBP signatures (tools/gen_sbp.py): op, rule of python/oneflow/_global/signatures.py, the",
              "// dim / keepdim parameters the rule reads (name, position or -1, default's literal, varargs).",
              "const SbpSignature kSbpSignatures[] = {", *rows, "};",
              "const char* const kSbpDunders[][2] = {",
              *[f'  {{"{d}", "{n}"}},' for d, n in sorted(dun.items())], "};",
              "// the ops without a signature: the kind of reason and why (the entries' `no_sbp:`)",
              "const char* const kSbpNone[][3] = {",
              *[f'  {{"{n}", "{kinds[n][0]}", {_cstr(r)}}},' for n, r in sorted(why.items())], "};"]
    accessors = ["std::span<const SbpSignature> SbpSignatures() { return kSbpSignatures; }",
                 "std::span<const char* const[2]> SbpDunders() { return kSbpDunders; }"]
    body = ['  m.def("_sbp_table", [] {',
            "    nb::dict sigs, dunder, args, none;",
            "    for (const SbpSignature& s : kSbpSignatures) {",
            "      sigs[s.op] = s.rule;",
            "      nb::dict a;",
            '      for (const auto& [key, p] : {std::pair{"dim", &s.dim}, std::pair{"keepdim", &s.keepdim}}) {',
            "        if (p->name == nullptr) continue;",
            "        nb::object pos = p->pos < 0 ? nb::none() : nb::object(nb::int_(p->pos));",
            "        a[key] = nb::make_tuple(p->name, pos, p->default_literal, p->varargs);",
            "      }",
            "      if (nb::len(a) > 0) args[s.op] = a;",
            "    }",
            "    for (const auto& d : kSbpDunders) dunder[d[0]] = d[1];",
            "    for (const auto& d : kSbpNone) none[d[0]] = d[2];",
            "    return nb::make_tuple(sigs, dunder, args, none);",
            "  });",
            '  m.def("_sbp_no_signature_kinds", [] {  // op -> the kind of its `no_sbp:` reason',
            "    nb::dict kinds;",
            "    for (const auto& d : kSbpNone) kinds[d[0]] = d[1];",
            "    return kinds;",
            "  });"]
    return arrays, accessors, body


def main():
    for n, s in sorted(signatures().items()):
        print(f"{n}: {s}")


if __name__ == "__main__":
    main()
