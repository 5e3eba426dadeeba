"""Generates C++ from the op table src/ops/table/*.yaml (docs/architecture.md §2).

    gen_ops.py <table dir> <out dir>     write the generated files (only those that changed)
    gen_ops.py <table dir> --list        print the names of the .cpp files it writes (for CMake)
    gen_ops.py <table dir> --list-cuda   the same for the .cu files of the CUDA build
    gen_ops.py <table dir> --list-empty  the pointwise buckets no op hashes to (CMake compiles them
                                         without the precompiled header, docs/build.md)

Outputs (into the build tree, never committed):
  decl/<op>.h                one op's kernel and differentiable entries (tools/op_decls.py)
  pointwise_<family>_<k>.cpp entries of `kind: unary|binary|ternary` ops: functor + dtype rules + engine
  pointwise_<family>_<k>_cuda.cu  the CUDA kernels of those ops (ONEFLOW_CUDA builds only)
  cuda_register.cu           fills the CUDA slots of every family's pointwise ops
  functional_<family>.cpp    differentiable entries and backward nodes (tools/gen_autograd.py)
  boxed_<family>.cpp         the boxed form of every op (docs/architecture.md §8; tools/gen_boxed.py)
  bind_<family>.cpp          nanobind bindings: flow._C.X, Tensor.X, operators
  ops_bind.cpp               calls the families' bindings; the exposure list
Every generated file includes the decl headers of just the ops it calls (docs/build.md).
"""
import glob
import os
import re
import sys
import zlib

import gen_autograd
import gen_boxed
import gen_sbp
import oneflow_forms
import op_decls
import optable


def camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


# type -> (C++ parameter type, Python->C++ converter)
TYPES = {
    "Tensor": ("const Tensor&", "ToTensor"),
    "TensorLike": ("const Tensor&", "ToTensorLike"),
    "Scalar": ("const Scalar&", "ToScalar"),
    "int": ("int64_t", "ToInt"),
    "float": ("double", "ToDouble"),
    "bool": ("bool", "ToBool"),
    "int[]": ("const DimVector&", "ToIntList"),
    "float[]": ("const std::vector<double>&", "ToDoubleList"),
    "DType": ("DType", "ToDType"),
    "Device": ("Device", "ToDevice"),
    "Tensor[]": ("const std::vector<Tensor>&", "ToTensorList"),
    "str": ("const std::string&", "ToString"),
    # A flow.Generator; only as `Generator? generator=None` (null = the device's default).
    "Generator": ("const GeneratorPtr&", "ToGenerator"),
}
TENSOR_TYPES = ("Tensor", "TensorLike")


class Param:
    def __init__(self, text, kw_only):
        m = re.match(r"^([\w\[\]\.]+)(\?)?\s+(\w+)(?:=(.*))?$", text.strip())
        if not m:
            raise ValueError(f"bad parameter: {text}")
        self.type, self.optional, self.name, self.default = m.group(1), bool(m.group(2)), m.group(3), m.group(4)
        self.varargs = self.type.endswith("...")
        self.type = self.type.rstrip(".")
        self.kw_only = kw_only
        self.strict = False  # `no_single_int:` (Op below): an int[] that refuses one int
        assert self.type in TYPES or self.type == "Any", f"unknown parameter type {self.type}"

    @property
    def is_tensor(self):
        return self.type in TENSOR_TYPES

    # C++ type of the op entry's parameter. `Tensor?` stays `const Tensor&` (undefined = None);
    # `TensorLike?` is std::optional<Tensor>.
    def cpp_type(self):
        base = TYPES[self.type][0]
        if self.optional and self.type not in ("Tensor", "Generator"):
            inner = base.replace("const ", "").replace("&", "")
            return f"std::optional<{inner}>"
        return base

    # Expression converting the binding's Python handle `h` into the entry's argument. With a
    # `position` (from 1; a method's counts after self), the conversion first names the argument
    # for its TypeError (Note [Argument names], src/core/error.h): "argument 'other' (position 2)".
    def convert(self, h, position=None):
        conv = "ToIntListStrict" if self.strict else TYPES[self.type][1]
        if self.type == "Generator":
            expr = f"{conv}({h})"  # None -> null pointer
        elif self.optional:
            expr = f"OptTensor({h})" if self.type == "Tensor" else f"Optional({h}, {conv})"
        else:
            expr = f"{conv}({h})"
        return expr if position is None else f'(BindingArg({position}, "{self.name}"), {expr})'

    def position(self, k, as_method):
        """PyTorch's number of parameter k in messages: from 1, after self for a method; 0 for a
        keyword-only one (PyTorch's message then gives no position)."""
        return 0 if self.kw_only else k if as_method else k + 1

    def py_default(self):
        d = self.default
        if d is None:
            return None
        if self.type == "str" and d != "None":
            return f'nb::str("{d.strip(chr(39)).strip(chr(34))}")'  # 'mean' in the table
        if d.startswith("["):  # an int list default: rot90(..., int[] dims=[0, 1])
            return f"nb::cast(std::vector<int64_t>{{{d.strip('[]')}}})"
        return {"None": "nb::none()", "True": "nb::bool_(true)", "False": "nb::bool_(false)"}.get(
            d, f"nb::cast({d})")


def split_params(text):
    """Splits a parameter list at the commas outside brackets (`int[] dims=[0, 1]` is one)."""
    out, depth, cur = [], 0, ""
    for c in text:
        depth += c in "[(" and 1 or c in "])" and -1 or 0
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    return out + [cur]


class Op:
    def __init__(self, e):
        self.e = e
        self.name = e["name"]
        self.family = e["family"]
        self.kind = e.get("kind", "custom")
        m = re.match(r"^(\w+)\((.*)\)\s*->\s*(.+)$", e["sig"])
        assert m and m.group(1) == self.name, f"signature name must match: {e['sig']}"
        self.ret = m.group(3).strip()
        # `(Tensor values, Tensor indices)`: a tuple of named outputs (a namedtuple in Python).
        self.ret_names = []
        if self.ret.startswith("("):
            self.ret_names = [x.split()[1] for x in self.ret.strip("()").split(",")]
            assert all(x.split()[0] == "Tensor" for x in self.ret.strip("()").split(",")), self.ret
        self.params = []
        kw = False
        for p in [p for p in split_params(m.group(2)) if p.strip()]:
            if p.strip() == "*":
                kw = True
                continue
            self.params.append(Param(p, kw))
        # `Any` parameters are parsed by hand-written bindings (src/api/manual_bind.cpp).
        self.manual = "Any" in e["sig"]
        # A name ending in `_` (uniform_, normal_) is an in-place-only op: its entry modifies its
        # first tensor and returns it; there is no out-of-place form.
        self.inplace_only = self.name.endswith("_")
        self.cpp = camel(self.name.rstrip("_")) + ("_" if self.inplace_only else "")
        self.inplace = e.get("inplace", False)
        assert not (self.inplace_only and self.inplace), f"{self.name}: in-place-only ops take no `inplace:`"
        self.method = e.get("method", True)
        self.flow = e.get("flow", True)
        self.functional = e.get("functional", False)
        self.aliases = e.get("aliases") or []
        self.also = e.get("also") or []
        self.dunder = e.get("dunder") or []
        self.varargs = any(p.varargs for p in self.params)
        # `no_single_int: [stride]`: int lists that take a sequence only, where PyTorch's schema and
        # upstream's signature have no `[1]` (as_strided's stride: `x.as_strided([1], 2)` is a
        # TypeError there, not the list [2]).
        for n in e.get("no_single_int") or []:
            p = next((p for p in self.params if p.name == n), None)
            assert p and p.type == "int[]" and not p.varargs and not p.optional, \
                f"op {self.name}: no_single_int names a plain int[] parameter, not {n}"
            p.strict = True
        # `same_form: [source, destination]`: two int[] parameters given both as one int or both
        # as lists (PyTorch's and upstream's two overloads, movedim(int, int) / (int[], int[]));
        # one of each is their TypeError rather than a one-element list (CheckSameIntForm).
        self.same_form = e.get("same_form") or []
        if self.same_form:
            assert len(self.same_form) == 2 and all(
                any(p.name == n and p.type == "int[]" and not p.varargs for p in self.params) for n in self.same_form), \
                f"op {self.name}: same_form names two plain int[] parameters"
        self.strict_lists = any(p.strict for p in self.params) or bool(self.same_form)
        assert self.varargs or not e.get("kwarg_aliases"), f"op {self.name}: kwarg_aliases needs an `int[]...` parameter"
        self.functor = e.get("functor", self.cpp + "Functor")

    @property
    def tensor_params(self):
        return [p for p in self.params if p.is_tensor]

    @property
    def attr_params(self):
        return [p for p in self.params if not p.is_tensor]

    def ret_cpp(self):
        if self.ret_names:
            return "std::tuple<" + ", ".join("Tensor" for _ in self.ret_names) + ">"
        return {"Tensor": "Tensor", "Tensor[]": "std::vector<Tensor>"}[self.ret]

    def decl(self):
        args = ", ".join(f"{p.cpp_type()} {p.name}" for p in self.params)
        if self.inplace_only:
            rest = ", ".join(f"{p.cpp_type()} {p.name}" for p in self.params[1:])
            return [f"Tensor& {self.cpp}(Tensor& {self.params[0].name}{', ' + rest if rest else ''});"]
        out = [f"{self.ret_cpp()} {self.cpp}({args});"]
        if self.inplace:
            rest = ", ".join(f"{p.cpp_type()} {p.name}" for p in self.params[1:])
            out.append(f"Tensor& {self.cpp}_(Tensor& {self.params[0].name}{', ' + rest if rest else ''});")
        return out


RESULT = {"same": "ResultKind::kSame", "float": "ResultKind::kFloat", "bool": "ResultKind::kBool"}
DTYPES = {"all": "DTypeSet::kAll", "number": "DTypeSet::kNumber", "integral": "DTypeSet::kIntegral",
          "float": "DTypeSet::kFloat"}
ARITY = {"unary": 1, "binary": 2, "ternary": 3}
BODY = {1: "Unary", 2: "Binary", 3: "Ternary"}


# A family's pointwise entries are spread over POINTWISE_BUCKETS files by a hash of the op name:
# instantiating the engine for every dtype costs ~1.3 s of compile time per op, so one file per
# family took 46 s (math) and was rebuilt whole for any new op. A bucket is chosen by the name
# alone so that adding an op changes one bucket's text.
POINTWISE_BUCKETS = 4


def bucket(name):
    return zlib.crc32(name.encode()) % POINTWISE_BUCKETS


def gen_pointwise(ops, family, src_root, k):
    mine = pointwise_ops(ops, family, k)
    head = ['// Generated by tools/gen_ops.py from src/ops/table. Do not edit.']
    if not mine:
        return "\n".join(head + ["// (no op of this family hashes to this bucket)", ""])
    # A family's own functors live in src/kernels/functors/<family>.h (the shared ones in
    # src/kernels/functors.h, included by pointwise.h).
    own = os.path.exists(os.path.join(src_root, "kernels", "functors", f"{family}.h"))
    lines = []
    # `check: F`: a hand-written F(<the op's parameters>) runs first (argument checks the generic
    # pointwise body can't express, e.g. addcdiv refusing integer division).
    for op in mine:
        if op.e.get("check"):
            sig = ", ".join(f"{p.cpp_type()} {p.name}" for p in op.params)
            lines.append(f"void {op.e['check']}({sig});")
    lines.append("")
    for op in mine:
        n = ARITY[op.kind]
        ins, attrs = op.params[:n], op.params[n:]
        assert all(p.is_tensor for p in ins) and not any(p.is_tensor for p in attrs), op.name
        # The functor gets the op's attributes, in signature order (aggregate initialisation).
        functor = f"{op.functor}{{{', '.join(p.name for p in attrs)}}}"
        tmpl = f"{op.functor}, {RESULT[op.e['result']]}, {DTYPES[op.e['dtypes']]}"
        sig = ", ".join(f"{p.cpp_type()} {p.name}" for p in op.params)
        names = ", ".join(p.name for p in ins)
        check = [f"  {op.e['check']}({', '.join(p.name for p in op.params)});"] if op.e.get("check") else []
        # `complex: true` in the table and the functor's opt-in (Note [Complex functors]) agree.
        cplx = "" if op.e.get("complex") else "!"
        lines.append(f'static_assert({cplx}(kComplexKind<{op.functor}> != 0), '
                     f'"{op.name}: the table\'s complex field and the functor disagree");')
        lines += [f"Tensor {op.cpp}({sig}) {{", f'  OpScope scope("{op.name}");'] + check + [
                  f"  return {BODY[n]}Op<{tmpl}>({names}, {functor});", "}"]
        if op.inplace:
            rest = ", ".join(f"{p.cpp_type()} {p.name}" for p in op.params[1:])
            head_ = f"Tensor& {op.cpp}_(Tensor& {op.params[0].name}{', ' + rest if rest else ''})"
            lines += [head_ + " {", f'  OpScope scope("{op.name}_");'] + check + [
                      f"  return {BODY[n]}OpInplace<{tmpl}>({names}, {functor});", "}"]
    includes = ['#include "ops/pointwise.h"'] + ([f'#include "kernels/functors/{family}.h"'] if own else [])
    includes += [f'#include "decl/{op.name}.h"' for op in mine]
    return "\n".join(head + includes + ["", "namespace oneflow {", ""] + lines +
                     ["", "}  // namespace oneflow", ""])


def pointwise_ops(ops, family, k):
    return [op for op in ops if op.kind in ARITY and op.family == family and bucket(op.name) == k]


def gen_pointwise_cuda(ops, family, src_root, k):
    """The CUDA kernels of a bucket's ops: fills their slots (Note [CUDA pointwise kernels])."""
    mine = pointwise_ops(ops, family, k)
    own = os.path.exists(os.path.join(src_root, "kernels", "functors", f"{family}.h"))
    lines = ['// Generated by tools/gen_ops.py from src/ops/table. Do not edit.',
             '#include "cuda/pointwise.cuh"']
    if own and mine:
        lines.append(f'#include "kernels/functors/{family}.h"')
    lines += ["", "namespace oneflow::cuda {", "", f"void RegisterPointwise_{family}_{k}() {{"]
    seen = set()
    for op in mine:
        key = (op.functor, op.e["result"], op.e["dtypes"], ARITY[op.kind])
        if key in seen:
            continue
        seen.add(key)
        lines.append(f"  RegisterPointwise<{op.functor}, {RESULT[op.e['result']]}, "
                     f"{DTYPES[op.e['dtypes']]}, {ARITY[op.kind]}>();")
    lines += ["}", "", "}  // namespace oneflow::cuda", ""]
    return "\n".join(lines)


# Hand-written entries that call the pointwise bodies with a concrete functor
# (`BinaryOp<AddFunctor, ResultKind::kSame, DTypeSet::kAll>(...)` in src/ops/*.cpp): their CUDA
# slots are filled like the table ops' (Note [CUDA pointwise kernels]). Calls through a template
# parameter (`BinaryOp<F, ...>`) are registered by hand in src/cuda/pointwise_extra.cu.
MANUAL_USE = re.compile(r"\b(Unary|Binary|Ternary)Op(?:Inplace)?<\s*(\w+Functor)\s*,\s*(ResultKind::k\w+)\s*,"
                        r"\s*(DTypeSet::k\w+)\s*>")


def manual_pointwise_uses(src_root):
    uses = set()
    for fn in sorted(glob.glob(os.path.join(src_root, "ops", "*.cpp"))):
        for m in MANUAL_USE.finditer(open(fn).read()):
            uses.add((m.group(2), m.group(3), m.group(4), {"Unary": 1, "Binary": 2, "Ternary": 3}[m.group(1)]))
    return sorted(uses)


def functor_headers(src_root, functors):
    """The headers (relative to src/) that define these functors."""
    heads = glob.glob(os.path.join(src_root, "kernels", "functors.h")) + sorted(
        glob.glob(os.path.join(src_root, "kernels", "functors", "*.h")))
    out = []
    for h in heads:
        text = open(h).read()
        if any(re.search(r"\bstruct\s+" + f + r"\b", text) for f in functors):
            out.append(os.path.relpath(h, src_root))
    return out


def gen_pointwise_manual_cuda(src_root):
    uses = manual_pointwise_uses(src_root)
    lines = ['// Generated by tools/gen_ops.py from the pointwise calls of src/ops/*.cpp. Do not edit.',
             '#include "cuda/pointwise.cuh"']
    lines += [f'#include "{h}"' for h in functor_headers(src_root, {u[0] for u in uses})]
    lines += ["", "namespace oneflow::cuda {", "", "void RegisterPointwiseManual() {"]
    lines += [f"  RegisterPointwise<{f}, {rk}, {ds}, {n}>();" for f, rk, ds, n in uses]
    lines += ["}", "", "}  // namespace oneflow::cuda", ""]
    return "\n".join(lines)


def gen_cuda_register(families):
    lines = ['// Generated by tools/gen_ops.py from src/ops/table. Do not edit.',
             "namespace oneflow::cuda {", ""]
    names = [f"RegisterPointwise_{fam}_{k}" for fam in families for k in range(POINTWISE_BUCKETS)]
    names += ["RegisterPointwiseManual", "RegisterPointwiseExtra"]
    lines += [f"void {n}();" for n in names]
    lines += ["", "// Every table op's CUDA pointwise kernels (called once, when the module loads).",
              "void RegisterTablePointwise() {"] + [f"  {n}();" for n in names] + ["}", "",
              "}  // namespace oneflow::cuda", ""]
    return "\n".join(lines)


def wrap_result(op, call):
    if op.ret_names:
        fields = ", ".join(f'"{n}"' for n in op.ret_names)
        return f'WrapNamed("{op.name}", {{{fields}}}, {call})'
    return f"Wrap({call})"


def lazy_trace(name, tracked):
    return f'lazy::RecordOp(tr, "{name}", std::move(lv_){", true" if tracked else ""})'


def backward_kind(op):
    """How autograd sees the op: "entry" (its functional entry records the backward node: a
    generated one, or a hand-written one made of table entries, `traced: compose`), "none" (no
    gradient), "manual" (another hand-written entry: recorded as one node)."""
    bw = op.e.get("backward")
    if bw == "none":
        return "none"
    if bw in ("manual", "composite"):
        return "entry" if op.e.get("traced") == "compose" else "manual"
    return "entry"


def lazy_hook(op, inplace, values, self_handle):
    """Records the call instead of running it while nn.Graph traces (Note [Lazy interception],
    src/graph/lazy.h); the boxed entry of `add_` is the in-place form. An op whose generated
    functional entry records a backward node goes on to that entry when an argument needs
    autograd: the entry records the op below its autograd node (Note [Backward nodes])."""
    name = op.name + ("_" if inplace and not op.inplace_only else "")
    kind = backward_kind(op)
    if inplace and op.e.get("backward") in ("manual", "composite"):
        kind = "manual"  # (`traced: compose` is about the out-of-place entry)
    if not inplace and op.e.get("traced") == "local":
        # its formula reads values: recorded as one local-autograd node (Note [Local autograd
        # nodes], src/graph/lazy.cpp), its backward the op's eager one
        kind = "manual"
    trace = lazy_trace(name, kind == "none")
    vals = ", ".join(f"lazy::V({v})" for v in values)
    if inplace:
        done = f"{{ {trace}; return nb::borrow({self_handle}); }}"
    else:
        if op.ret_names:
            fields = ", ".join(f'"{n}"' for n in op.ret_names)
            res = f'WrapNamed("{op.name}", {{{fields}}}, {trace})'
        elif op.ret == "Tensor[]":
            res = f"WrapList({trace})"
        else:
            res = f"Wrap({trace}[0])"
        done = f"return {res};"
    cond = "if (!lazy::NeedsAutograd(lv_)) " if kind == "entry" else ""
    return (f"if (auto* tr = lazy::Active()) [[unlikely]] {{ std::vector<::oneflow::Value> lv_{{{vals}}}; "
            f"{cond}{done} }}")


def takes_placement(name, params):
    """Note [Global arguments]: a factory (a device parameter, no tensor one) also takes
    placement= / sbp= and then makes a global tensor; so does a `_like` factory, whose one tensor is
    the template of the shape (upstream OneFlow's `flow.randn_like(local, placement=, sbp=)`: the
    dispatcher's _factory calls it with device= the placement's type, then lays the result out)."""
    if not any(p.name == "device" for p in params):
        return False
    # (a TensorLike parameter -- normal's mean / std -- is usually a number: still a factory)
    tensors = [p for p in params if p.type in ("Tensor", "Tensor[]")]
    return not tensors or (name.endswith("_like") and len(tensors) == 1 and tensors[0].type == "Tensor")


def global_route(params, call, factory=False, varargs=False):
    """Note [Kind test] (src/api/convert.h): the test that sends a call with a global (or other
    Python-level) tensor among its tensor arguments to `call` (GlobalCall / GlobalCallVar) before
    any conversion -- a type comparison, no C++ exception -- and the try block around the body:
    only a binding taking a Tensor[] still catches GlobalArgument, thrown by the conversion that
    meets a global tensor inside the list. Returns (test, opening, closing)."""
    if varargs:
        test = f"if (AnyKindVar(args, kwargs)) [[unlikely]] return {call}; "
    else:
        conds = [f"AnyKind({{{', '.join(p.name for p in params if p.is_tensor)}}})"] if any(
            p.is_tensor for p in params) else []
        if factory:  # placement= / sbp= make a global tensor (Note [Global arguments])
            conds.append("!placement.is_none() || !sbp.is_none()")
        test = f"if ({' || '.join(conds)}) [[unlikely]] return {call}; " if conds else ""
    if any(p.type == "Tensor[]" for p in params):
        return test, "try {", f" }} catch (const GlobalArgument&) {{ return {call}; }} }}"
    return test, "{", " } }"


def binding_lambda(op, inplace=False, as_method=False):
    """A lambda taking Python handles, converting them, calling the entry, wrapping the result."""
    fn = "functional::" + op.cpp + ("_" if inplace and not op.inplace_only else "")
    bound = op.name + ("_" if inplace and not op.inplace_only else "")
    params = op.params
    if op.varargs:
        # (*args, **kwargs): the varargs list may also come as one sequence or by keyword.
        conv, i = [], 0
        for k, p in enumerate(params):
            pos = p.position(k, as_method)
            if p.varargs:
                conv.append(f'(BindingArg({pos}, "{p.name}"), VarargsIntList(args, {i}, kwargs, "{p.name}"))')
            elif not p.kw_only and i == 0 and p.type == "Tensor":
                conv.append(p.convert("self_", None if as_method else pos))  # `self_`: args[0] after the arity check below
                i = 1
            else:
                dflt = p.py_default() or "nb::none()"
                conv.append(p.convert(f'KwArg(kwargs, "{p.name}", {dflt})', pos))
        factory = not as_method and not inplace and takes_placement(op.name, params)
        names = ", ".join(f'"{p.name}"' for p in params)
        call = f"{fn}({', '.join(conv)})"
        head = "[](nb::args args, nb::kwargs kwargs) {"
        chk = f"CheckKwargs(kwargs, {{{names}}}, \"{op.name}\");"
        if factory:  # Note [layout= of factories] (src/api/layout_arg.h)
            chk = 'CheckLayout(PopKwarg(kwargs, "layout")); ' + chk
        # `kwarg_aliases: {reps: dims}`: another keyword for a parameter (OneFlow's and PyTorch's
        # names differ: repeat(sizes=) / repeat(repeats=)); renamed before the usual checks.
        for alias, target in (op.e.get("kwarg_aliases") or {}).items():
            assert target in [p.name for p in params], f"op {op.name}: kwarg alias of unknown {target}"
            chk = (f'if (PyObject* v = PyDict_GetItemString(kwargs.ptr(), "{alias}")) {{ '
                   f'nb::object keep = nb::borrow(v); PyDict_DelItemString(kwargs.ptr(), "{alias}"); '
                   f'PyDict_SetItemString(kwargs.ptr(), "{target}", keep.ptr()); }} ') + chk
        # `varargs_required: [flow, method]`: the forms in which the int list may not be left out
        # (`flow.flip(x)` is PyTorch's and OneFlow's TypeError; `x.reshape()` is OneFlow's 0-d
        # shape). Checked after the keyword renames: `tile(x, reps=...)` gives it.
        req = op.e.get("varargs_required") or []
        assert set(req) <= {"flow", "method"}, f"op {op.name}: varargs_required takes flow / method"
        if ("method" if as_method else "flow") in req:
            k = next(j for j, p in enumerate(params) if p.varargs)
            chk += f' PosArg(args, {k}, kwargs, "{params[k].name}");'
        hook = lazy_hook(op, inplace, conv, "self_")
        # Arity before any conversion: nb::args' [] does not check bounds (flow.expand() read past
        # an empty tuple). The tensor may also come by keyword (expand(input=x, sizes=...)).
        # The BindingScope names the op in the conversions' errors ("expand(): expected a Tensor").
        test, open_, catch = global_route(params, f'GlobalCallVar("{bound}", {str(inplace).lower()}, args, kwargs)',
                                          varargs=True)
        head = (f'[](nb::args args, nb::kwargs kwargs) -> nb::object {{ {test}{open_} BindingScope scope_("{bound}"); '
                'ArgFrame args_;')
        if i:
            head += f' nb::handle self_ = PosArg(args, 0, kwargs, "{params[0].name}");'
        if inplace:
            return head + f" {chk} {hook} {call}; return nb::borrow(self_);" + catch, []
        if not as_method:  # Note [out= arguments] (src/api/out_arg.cpp)
            head += ' nb::object out = PopKwarg(kwargs, "out");'
            return head + (f" {chk} nb::object r_ = [&]() -> nb::object {{ {hook} return {wrap_result(op, call)}; }}(); "
                           f'if (!out.is_none()) [[unlikely]] return WithOut("{bound}", std::move(r_), out); return r_;'
                           ) + catch, []
        return head + f" {chk} {hook} return {wrap_result(op, call)};" + catch, []
    # A factory (a device parameter, no tensor one) also takes placement= / sbp=: given, the call
    # makes a global tensor (Note [Global arguments]).
    factory = not as_method and not inplace and takes_placement(op.name, params)
    # (layout=: Note [layout= of factories], src/api/layout_arg.h)
    handles_of = [p.name for p in params] + (["placement", "sbp", "layout"] if factory else [])
    sig = ", ".join(f"nb::handle {h}" for h in handles_of)
    convs = [f"ToTensorMut({p.name})" if inplace and k == 0 else
             p.convert(p.name, None if as_method and k == 0 else p.position(k, as_method))
             for k, p in enumerate(params)]
    conv = ", ".join(convs)
    hook = lazy_hook(op, inplace, convs, params[0].name if params else None)
    # Note [Global arguments] (src/api/convert.h): a global tensor among the arguments sends the
    # call to the Python dispatcher by name (global_route).
    with_out = handles_of + (["out"] if not as_method and not inplace else [])
    names = ", ".join(f'"{h}"' for h in with_out)
    handles = ", ".join(with_out)
    scope = f'BindingScope scope_("{bound}"); ArgFrame args_;'  # names the op in the conversions' errors
    if op.same_form:
        a, b = op.same_form
        scope += f' CheckSameIntForm("{a}", {a}, "{b}", {b});'
    if factory:
        scope += " CheckLayout(layout);"
    test, open_, catch = global_route(params, f'GlobalCall("{bound}", {str(inplace).lower()}, {{{names}}}, {{{handles}}})',
                                      factory=factory)
    if inplace:
        body = f"[]({sig}) -> nb::object {{ {test}{open_} {scope} {hook} {fn}({conv}); return nb::borrow({params[0].name});" + catch
    elif not as_method:  # Note [out= arguments] (src/api/out_arg.cpp): computed, then copied into `out`
        sig += (", " if sig else "") + "nb::handle out"
        body = (f"[]({sig}) -> nb::object {{ {test}{open_} {scope} nb::object r_ = [&]() -> nb::object {{ {hook} "
                f"return {wrap_result(op, f'{fn}({conv})')}; }}(); "
                f'if (!out.is_none()) [[unlikely]] return WithOut("{bound}", std::move(r_), out); return r_;' + catch)
    else:
        body = f"[]({sig}) -> nb::object {{ {test}{open_} {scope} {hook} return {wrap_result(op, f'{fn}({conv})')};" + catch
    annots = []
    for k, p in enumerate(params):
        if as_method and k == 0:
            continue
        if p.kw_only and "nb::kw_only()" not in annots:
            annots.append("nb::kw_only()")
        # Every handle takes None (`.none()` before a default, nanobind's order): the conversion
        # then refuses it naming the argument (`atan2(): argument 'other' (position 2) must be
        # Tensor, not NoneType`), where nanobind's own refusal named none.
        d = p.py_default()
        annots.append(f'"{p.name}"_a.none()' + (f" = {d}" if d else ""))
    if factory:
        if "nb::kw_only()" not in annots:
            annots.append("nb::kw_only()")
        annots += ['"placement"_a = nb::none()', '"sbp"_a = nb::none()', '"layout"_a = nb::none()']
    if not as_method and not inplace:
        if "nb::kw_only()" not in annots:
            annots.append("nb::kw_only()")
        annots.append('"out"_a = nb::none()')
    return body, annots


def gen_bind(ops, family, names):
    """bind_<family>.cpp: the family's flow._C functions, Tensor methods and operators."""
    out = [f"void BindOps_{family}(nb::module_& m, nb::class_<PyTensor>& cls) {{"]
    forms = oneflow_forms.forms_of(ops)
    for op in ops:
        if op.manual or op.family != family:
            continue
        # Upstream OneFlow's forms of the name: our binding checks its arguments' kinds first and
        # hands a call that does not fit to the next overload (Note [OneFlow's signatures]).
        overloaded = any(f.name == op.name for f in forms)
        assert not (overloaded and op.varargs), f"op {op.name}: oneflow forms of a varargs op"
        for inplace in ([False, True] if op.inplace else [op.inplace_only]):
            name = op.name + ("_" if inplace and not op.inplace_only else "")
            # flow._C.X and flow._C.X_ (nn.functional.X_ uses the latter).
            lam, annots = binding_lambda(op, inplace)
            if overloaded and not inplace:
                assert "-> nb::object { " in lam, f"op {op.name}: no place for the argument-kind checks"
                lam = lam.replace("-> nb::object { ", "-> nb::object { " + oneflow_forms.guard(op.params), 1)
            a = "".join(", " + x for x in annots)
            out.append(f'  m.def("{name}", {lam}{a});')
            if op.method and (op.params and op.params[0].type in TENSOR_TYPES):
                lam, annots = binding_lambda(op, inplace, as_method=True)
                a = "".join(", " + x for x in annots)
                out.append(f'  cls.def("{name}", {lam}{a});')
        out += [oneflow_forms.form_binding(f) for f in forms if f.op is op]
        if overloaded and not op.inplace_only:
            # Last overload: the op's own binding without the kind checks, reached only when no
            # form fits, so that the failing conversion names its argument (Note [Argument
            # names]) instead of nanobind's list of the forms.
            lam, annots = binding_lambda(op)
            a = "".join(", " + x for x in annots)
            out.append(f'  m.def("{op.name}", {lam}{a});')
        for d in op.dunder:
            # Operators pass the defaults of any further parameters (add's alpha=1).
            extra = "".join(", std::nullopt" if p.default == "None" else
                            f", Scalar({p.default})" if p.type == "Scalar" else f", {p.default}"
                            for p in op.params[2:])
            head = (f'  cls.def("{d}", [](nb::handle self, nb::handle o) -> nb::object {{ Tensor b; '
                    f'if (!TryTensorLike(o, &b)) return nb::borrow(Py_NotImplemented); ')
            extras = [x.strip() for x in extra.split(", ") if x.strip()]
            # The operand may be None (`t == None` is False, `t != None` True, `t < None` a
            # TypeError): NotImplemented hands it to Python's rules, as for any non-tensor.
            tail = ', nb::arg("other").none());'
            if d.startswith("__i"):
                hook = lazy_hook(op, True, ["ToTensorMut(self)", "b"] + extras, "self")
                out.append(head + hook + f' functional::{op.cpp}_(ToTensorMut(self), b{extra}); return nb::borrow(self); }}' + tail)
            elif d.startswith("__r") and d not in ("__rshift__",):
                hook = lazy_hook(op, False, ["b", "ToTensor(self)"] + extras, "self")
                out.append(head + hook + f' return Wrap(functional::{op.cpp}(b, ToTensor(self){extra})); }}' + tail)
            else:
                hook = lazy_hook(op, False, ["ToTensor(self)", "b"] + extras, "self")
                out.append(head + hook + f' return Wrap(functional::{op.cpp}(ToTensor(self), b{extra})); }}' + tail)
    out.append("}")
    head = ['// Generated by tools/gen_ops.py from src/ops/table. Do not edit.', '#include "api/arg_fits.h"',
            '#include "api/arg_names.h"',
            '#include "api/convert.h"', '#include "autograd/functional.h"', '#include "graph/lazy.h"'] + op_decls.includes_for("\n".join(out), names)
    if any(op.strict_lists and op.family == family and not op.manual for op in ops):
        head.append('#include "api/int_list_strict.h"')
    if any("CheckLayout(" in line for line in out):
        head.append('#include "api/layout_arg.h"')
    return "\n".join(head + ["", "namespace oneflow {", ""] + out + ["", "}  // namespace oneflow", ""])


def gen_bind_all(ops, families, table=None):
    """ops_bind.cpp: every family's bindings, in table order (Python overloads bind in that order),
    and the exposure list read by python/oneflow/__init__.py."""
    sbp_arrays, sbp_accessors, sbp_binding = gen_sbp.cpp(table)
    out = ['// Generated by tools/gen_ops.py from src/ops/table. Do not edit.', '#include "api/convert.h"',
           '#include "api/sbp_table.h"', "", "#include <utility>", "", "namespace oneflow {", "", "namespace {",
           ""] + sbp_arrays + ["", "}  // namespace", ""] + sbp_accessors + [""]
    out += [f"void BindOps_{f}(nb::module_& m, nb::class_<PyTensor>& cls);" for f in families]
    out += ["", "void BindGeneratedOps(nb::module_& m, nb::class_<PyTensor>& cls) {"]
    out += [f"  BindOps_{f}(m, cls);" for f in families]
    out += sbp_binding
    out += ["}", ""]
    out.append("std::vector<OpExposure> GeneratedOpTable() {")
    out.append("  return {")
    for op in ops:
        al = ", ".join(f'"{a}"' for a in op.aliases)
        also = ", ".join(f'"{a}"' for a in op.also)
        out.append(f'    {{"{op.name}", {str(op.flow).lower()}, {str(op.method).lower()}, '
                   f'{str(op.functional).lower()}, {str(op.inplace).lower()}, {{{al}}}, {{{also}}}}},')
    out.append("  };")
    out.append("}")
    out += ["", "}  // namespace oneflow", ""]
    return "\n".join(out)


def outputs(ops, families, src_root):
    """file name -> generator of its text. The .cpp files depend only on the families (CMake
    lists them when it configures); the headers under decl/ follow the ops."""
    names = op_decls.declared(ops)
    files = {"ops_bind.cpp": lambda: gen_bind_all(ops, families, os.path.join(src_root, "ops", "table")),
             "cuda_register.cu": lambda: gen_cuda_register(families),
             "pointwise_manual_cuda.cu": lambda: gen_pointwise_manual_cuda(src_root),
             "boxed_all.cpp": lambda: gen_boxed.gen_registry(families)}
    for op in ops:
        if not op.manual:
            files[f"decl/{op.name}.h"] = lambda op=op: op_decls.decl_header(op)
    for fam in families:
        # Every family has its buckets, empty or not, so that a family's first pointwise op needs
        # no CMake re-run (CMake lists the files when it configures, not when the table changes).
        for k in range(POINTWISE_BUCKETS):
            files[f"pointwise_{fam}_{k}.cpp"] = lambda fam=fam, k=k: gen_pointwise(ops, fam, src_root, k)
            files[f"pointwise_{fam}_{k}_cuda.cu"] = lambda fam=fam, k=k: gen_pointwise_cuda(ops, fam, src_root, k)
        files[f"functional_{fam}.cpp"] = lambda fam=fam: gen_autograd.gen_functional(ops, fam, names)
        files[f"boxed_{fam}.cpp"] = lambda fam=fam: gen_boxed.gen_boxed(ops, fam, names)
        files[f"bind_{fam}.cpp"] = lambda fam=fam: gen_bind(ops, fam, names)
    return files


def main():
    table, outdir = sys.argv[1], sys.argv[2]
    ops = [Op(e) for e in optable.load(table)]
    src_root = os.path.normpath(os.path.join(table, "..", ".."))
    files = outputs(ops, optable.families(table), src_root)
    if outdir == "--list-empty":
        # Loading the precompiled header costs ~0.2 s, more than compiling an empty bucket. A
        # bucket that gains its first op before CMake re-runs still builds (without it).
        print(";".join(f"pointwise_{fam}_{k}.cpp" for fam in optable.families(table)
                       for k in range(POINTWISE_BUCKETS) if not pointwise_ops(ops, fam, k)))
        return
    if outdir in ("--list", "--list-cuda"):
        # --list: the C++ files of every build; --list-cuda: those of the CUDA build (ONEFLOW_CUDA).
        ext = ".cpp" if outdir == "--list" else ".cu"
        print(";".join(sorted(f for f in files if f.endswith(ext))))
        return
    os.makedirs(os.path.join(outdir, "decl"), exist_ok=True)
    for fn, make in files.items():
        text = make()
        path = os.path.join(outdir, fn)
        # Only rewrite changed files so that ninja rebuilds just what the table change touched.
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            with open(path, "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
