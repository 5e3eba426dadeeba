"""Generates the differentiable op entries (namespace oneflow::functional) from the `backward:`
field of the op table src/ops/table/ (docs/architecture.md §2, §3: recording happens in the op entry).

For an op with formulas, this writes a Node subclass `<Op>Backward0` that saves what its formulas
use, and an entry that records the node when grad mode is on and a differentiable input requires
grad, then calls the kernel entry (namespace oneflow). Ops with `backward: none` are re-exported
unchanged; `backward: not_implemented` records a node that raises when reached.

Formula language: a C++ expression in namespace oneflow::functional, so table ops are called by
their entry names (Mul, Sum, ...) and are themselves differentiable (higher-order gradients).
Names available: grad (the (first) output's gradient), grads (all outputs' gradients, multi-output
ops), result (the output; for ops returning named outputs `(Tensor values, Tensor indices)`, each
output by its name), every parameter of the op, and <param>_sizes / <param>_dtype of tensors.
A formula given as a plain string (not a mapping) is the gradient of the op's first tensor input.
`backward: manual` = the differentiable entry is hand-written (src/autograd/manual_functional.cpp);
`backward: composite` = likewise hand-written, as a composition of differentiable table ops in the
family's src/ops/<family>_ops.cpp (its gradient comes from theirs).
"""
import re

import op_decls

TENSOR_TYPES = ("Tensor", "TensorLike")
IDENT = re.compile(r"\b([A-Za-z_]\w*)\b")


# Unqualified calls inside namespace oneflow::functional would also find the kernel entry of the
# same name in namespace oneflow by argument-dependent lookup (Tensor lives there), so formulas
# are rewritten to call functional::X explicitly.
MANUAL_FUNCTIONAL = ["SplitWithSizes", "SplitBySize", "MaxAll", "MinAll", "MaxDim", "MinDim", "SliceView",
                     "SelectView", "IndexGather", "Unbind"]


def qualify(expr, ops):
    names = {o.cpp for o in ops if not o.manual} | {o.cpp + "_" for o in ops if o.inplace} | set(MANUAL_FUNCTIONAL)
    pat = re.compile(r"(?<![\w:])(" + "|".join(sorted(names, key=len, reverse=True)) + r")\(")
    return pat.sub(r"functional::\1(", expr)


def value_type(p):
    """C++ type for storing a non-tensor parameter in a node."""
    return p.cpp_type().replace("const ", "").replace("&", "").strip()


# Names a generated backward node's Apply declares or calls besides the parameters it unpacks:
# the formulas' vocabulary (grads, grad, grad_input_mask, needs) and the generator's locals, which
# end in `_`. The entry functions' locals end in `_` too (node_, result_, outs_); parameters never
# do, so those cannot clash.
APPLY_NAMES = frozenset({"grads", "grad", "grad_input_mask", "needs", "in_grads", "joint", "parts", "slot"})


class Formulas:
    def __init__(self, op):
        self.op = op
        bw = op.e.get("backward")
        assert bw is not None, f"op {op.name}: add a `backward:` field (formulas, none or not_implemented)"
        if bw == "composite":
            bw = "manual"  # generated the same way: the entry functional::X is hand-written
        if isinstance(bw, str) and bw not in ("none", "not_implemented", "manual"):
            bw = {op.tensor_params[0].name: bw}
        self.kind = bw if isinstance(bw, str) else "formulas"
        assert self.kind in ("none", "not_implemented", "formulas", "manual"), f"op {op.name}: bad backward {bw!r}"
        raw = bw if isinstance(bw, dict) else {}
        # A key naming several inputs ("input, weight, bias: F(...)") is one joint formula: F runs
        # once and returns their gradients in that order (a tuple or vector); it may read
        # `grad_input_mask` (which of them are needed), as PyTorch's output_mask.
        self.formulas, self.joint = {}, {}
        for k, v in raw.items():
            names = tuple(n.strip() for n in k.split(","))
            for n in names:
                self.formulas[n] = v
                if len(names) > 1:
                    self.joint[n] = names
        pnames = [p.name for p in op.params]
        for k in self.formulas:
            assert k in pnames, f"op {op.name}: backward for unknown input {k}"
        if self.kind == "not_implemented":
            # Every floating tensor input gets an edge; reaching the node raises.
            self.formulas = {p.name: None for p in op.params if p.type in TENSOR_TYPES}
        # Differentiable inputs in signature order: each is one edge (Tensor[] is one per element).
        self.inputs = [p for p in op.params if p.name in self.formulas]
        self.list_input = next((p for p in self.inputs if p.type == "Tensor[]"), None)
        assert not self.list_input or len(self.inputs) == 1, f"op {op.name}: Tensor[] must be the only input"
        self.multi_out = op.ret == "Tensor[]"
        self.named_out = op.ret_names
        self.uses = {k: set(IDENT.findall(v or "")) for k, v in self.formulas.items()}
        if self.kind == "formulas":
            # A node's Apply unpacks each saved parameter into a local of the parameter's name,
            # next to these names of its own (members are `<name>_`): a parameter or output named
            # like one would silently rebind it or fail to compile in generated code.
            assert not any(n.endswith("_") for n in pnames), f"op {op.name}: parameter names must not end in `_`"
            taken = [n for n in pnames + list(self.named_out or []) if n in APPLY_NAMES]
            assert not taken, f"op {op.name}: {taken} are reserved in backward nodes (tools/gen_autograd.py APPLY_NAMES)"

    @property
    def node(self):
        return f"{self.op.cpp}Backward0"

    def used(self, name):
        return [k for k, u in self.uses.items() if name in u]


def tensor_of(p):
    """A tensor parameter as a C++ Tensor expression (`TensorLike?` is std::optional<Tensor>;
    None is the undefined tensor, which never requires grad)."""
    if p.optional and p.type == "TensorLike":
        return f"({p.name} ? *{p.name} : Tensor())"
    return p.name


def saved_members(f, inplace=False):
    """(declaration, save statement (may use `node_`), release statement) per saved value.
    inplace: the entry overwrites its first input, so a formula reading it gets a copy (`<name>_orig_`)."""
    op, out = f.op, []
    for p in op.params:
        users = f.used(p.name)
        if p.type in TENSOR_TYPES and users:
            idx = [f.inputs.index(next(q for q in f.inputs if q.name == u)) for u in users]
            cond = " || ".join(f"node_->needs({i})" for i in idx)
            src = f"{p.name}_orig_" if inplace and p is op.params[0] else tensor_of(p)
            out.append((f"SavedVariable {p.name}_;", f"if ({cond}) node_->{p.name}_ = SavedVariable({src}, false);",
                        f"{p.name}_.Reset();"))
        elif p.type == "Tensor[]" and users and p not in f.inputs:
            # A non-differentiable tensor list a formula reads (index_put's indices): saved with
            # version checks like any saved tensor.
            out.append((f"std::vector<SavedVariable> {p.name}_;",
                        f"for (const Tensor& t_ : {p.name}) node_->{p.name}_.emplace_back(t_, false);",
                        f"for (SavedVariable& s : {p.name}_) s.Reset();"))
        elif p.type not in TENSOR_TYPES + ("Tensor[]",) and users:
            out.append((f"{value_type(p)} {p.name}_;", f"node_->{p.name}_ = {p.name};", ""))
        for suffix, typ, expr in (("sizes", "DimVector", "{}.sizes()"), ("dtype", "DType", "{}.dtype()")):
            if not f.used(f"{p.name}_{suffix}"):
                continue
            if p.type == "Tensor[]":
                out.append((f"std::vector<{typ}> {p.name}_{suffix}_;",
                            f"for (const Tensor& t_ : {p.name}) node_->{p.name}_{suffix}_.push_back({expr.format('t_')});",
                            ""))
            else:
                out.append((f"{typ} {p.name}_{suffix}_;", f"node_->{p.name}_{suffix}_ = {expr.format(p.name)};", ""))
    return out


def out_names(f):
    """Output names a formula may use: `result` or the op's named outputs."""
    return f.named_out or ["result"]


def used_outputs(f):
    return [n for n in out_names(f) if any(n in u for u in f.uses.values())]


def gen_node(f, ops):
    op = f.op
    members = saved_members(f)
    outs = used_outputs(f)
    lines = [f"struct {f.node} final : Node {{",
             f'  const char* name() const override {{ return "{f.node}"; }}']
    lines += [f"  {m[0]}" for m in members]
    lines += [f"  SavedVariable {n}_;" for n in outs]
    lines.append("  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override {")
    lines.append("    std::vector<Tensor> in_grads_(next_.size());")
    lines.append("    const Tensor& grad = grads[0];")
    lines.append("    (void)grad;")
    if f.kind == "not_implemented":
        lines.append(f'    OF_THROW(kNotImplemented) << "the derivative for \'{op.name}\' is not implemented";')
    else:
        done = set()
        for i, p in enumerate(f.inputs):
            if p.name in done:
                continue
            expr = qualify(f.formulas[p.name], ops)
            unpack = []
            for q in op.params:
                if q.name in f.uses[p.name]:
                    if q.type in TENSOR_TYPES:
                        unpack.append(f"Tensor {q.name} = {q.name}_.Unpack(this);")
                    elif q.type == "Tensor[]" and q not in f.inputs:
                        unpack.append(f"std::vector<Tensor> {q.name}; "
                                      f"for (const SavedVariable& s : {q.name}_) {q.name}.push_back(s.Unpack(this));")
                    elif q.type != "Tensor[]":
                        unpack.append(f"const auto& {q.name} = {q.name}_;")
                for suffix in ("sizes", "dtype"):
                    if f"{q.name}_{suffix}" in f.uses[p.name]:
                        unpack.append(f"const auto& {q.name}_{suffix} = {q.name}_{suffix}_;")
            for n in outs:
                if n in f.uses[p.name]:
                    unpack.append(f"Tensor {n} = {n}_.Unpack(this);")
            body = " ".join(unpack)
            if p.name in f.joint:
                group = f.joint[p.name]
                idx = [next(k for k, q in enumerate(f.inputs) if q.name == n) for n in group]
                done.update(group)
                mask = ", ".join(f"needs({k})" for k in idx)
                lines.append(f"    if ({' || '.join(f'needs({k})' for k in idx)}) {{")
                lines.append(f"      {body}")
                lines.append(f"      const std::array<bool, {len(idx)}> grad_input_mask{{{mask}}};")
                lines.append("      (void)grad_input_mask;")
                lines.append(f"      auto joint_ = {expr};")
                for j, k in enumerate(idx):
                    lines.append(f"      if (needs({k})) in_grads_[{k}] = JointGrad<{j}>(joint_);")
                lines.append("    }")
            elif p.type == "Tensor[]":
                lines.append("    {")
                lines.append(f"      {body}")
                lines.append(f"      std::vector<Tensor> parts_ = {expr};")
                lines.append("      for (size_t slot_ = 0; slot_ < in_grads_.size(); ++slot_) if (needs(slot_)) in_grads_[slot_] = parts_[slot_];")
                lines.append("    }")
            else:
                lines.append(f"    if (needs({i})) {{ {body} in_grads_[{i}] = {expr}; }}")
    lines.append("    return in_grads_;")
    lines.append("  }")
    rel = [m[2] for m in members if m[2]] + [f"{n}_.Reset();" for n in outs]
    if rel:
        lines.append(f"  void ReleaseSaved() override {{ {' '.join(rel)} }}")
    lines.append("};")
    return lines, members, outs


def requires_grad_expr(f):
    if f.list_input:
        return f"AnyRequiresGrad({f.list_input.name})"
    return " || ".join(f"RequiresGrad({tensor_of(p)})" for p in f.inputs)


def edges_stmt(f):
    if f.list_input:
        return [f"for (const Tensor& t_ : {f.list_input.name}) node_->next_.push_back(GradEdge(t_));"]
    return [f"node_->next_.push_back(GradEdge({tensor_of(p)}));" for p in f.inputs]


AUTOCAST_POLICY = {"lower": "kLower", "fp32": "kFp32", "promote": "kPromote"}


def autocast_block(op):
    """The entry's autocast check (src/autograd/autocast.h) for ops with `autocast:`: cast the
    floating inputs and call the entry again with autocast excluded."""
    policy = op.e.get("autocast")
    if not policy:
        return []
    tensors = [p for p in op.params if p.type in TENSOR_TYPES + ("Tensor[]",)]
    assert tensors, f"op {op.name}: autocast needs tensor inputs"
    args = ", ".join(f"autocast::Cast({p.name}, *dt)" if p in tensors else p.name for p in op.params)
    names = ", ".join(p.name for p in tensors)
    # `autocast_if:` a C++ condition over the parameters, for an op that is on the list in some
    # modes only (pad: PyTorch lists reflection_pad1d/2d and replication_pad*, not constant pads).
    cond = op.e.get("autocast_if")
    return [f"  if (autocast::IsActive(){f' && ({cond})' if cond else ''}) [[unlikely]] {{",
            f"    if (auto dt = autocast::TargetOf(autocast::Policy::{AUTOCAST_POLICY[policy]}, {names})) {{",
            "      autocast::ExcludeGuard guard;",
            f"      return functional::{op.cpp}({args});",
            "    }",
            "  }"]


# Parameters a host fallback moves (Note [Host fallback], src/ops/host_fallback.h).
FALLBACK_TYPES = ("Tensor", "TensorLike", "Tensor[]", "Device")


def kernel_call(op, inplace):
    """The call of the kernel entry, through OF_KERNEL_CALL (the host fallback of CUDA builds).
    While a graph traces on this thread the op is recorded instead, below the entry's autograd
    recording (Note [Backward nodes], src/graph/lazy.h): one flag test on the eager path."""
    args = ", ".join(f"OF_H({p.name})" if p.type in FALLBACK_TYPES else p.name for p in op.params)
    vals = ", ".join(f"lazy::V({p.name})" for p in op.params)
    traced = op.e.get("boxed") is not False
    if inplace:
        name = op.cpp if op.inplace_only else op.cpp + "_"
        label = op.name if op.inplace_only else op.name + "_"
        call = f'OF_KERNEL_CALL_INPLACE("{label}", {op.params[0].name}, ::oneflow::{name}({args}))'
        if not traced:
            return call
        return f'(lazy::Active() ? lazy::RecordEntryInplace({op.params[0].name}, "{label}", {{{vals}}}) : {call})'
    call = f'OF_KERNEL_CALL("{op.name}", ::oneflow::{op.cpp}({args}))'
    if not traced:
        return call
    return f'(lazy::Active() ? lazy::RecordEntry<{op.ret_cpp()}>("{op.name}", {{{vals}}}) : {call})'


def gen_autocast_only_entry(op):
    """A non-differentiable op with `autocast:`: the check, then the kernel entry."""
    head = f"{op.ret_cpp()} {op.cpp}({', '.join(f'{p.cpp_type()} {p.name}' for p in op.params)})"
    return [head + " {"] + autocast_block(op) + [f"  return {kernel_call(op, False)};", "}"]


def gen_plain_entries(op, out_of_place=True):
    """A non-differentiable op's functional entries: the kernel entry through the host fallback
    (CUDA builds) and the lazy test (formulas call these ops on lazy tensors too)."""
    out = []
    if out_of_place and not op.inplace_only:
        head = f"{op.ret_cpp()} {op.cpp}({', '.join(f'{p.cpp_type()} {p.name}' for p in op.params)})"
        out += [head + " {", f"  return {kernel_call(op, False)};", "}"]
    if op.inplace or op.inplace_only:
        first = op.params[0]
        rest = ", ".join(f"{p.cpp_type()} {p.name}" for p in op.params[1:])
        name = op.cpp if op.inplace_only else op.cpp + "_"
        out += [f"Tensor& {name}(Tensor& {first.name}{', ' + rest if rest else ''}) {{",
                f"  return {kernel_call(op, True)};", "}"]
    return out


def gen_entry(f, members, outs, inplace):
    op = f.op
    raw = kernel_call(op, inplace)
    if inplace:
        first = op.params[0]
        rest = ", ".join(f"{p.cpp_type()} {p.name}" for p in op.params[1:])
        name = op.cpp if op.inplace_only else op.cpp + "_"
        head = f"Tensor& {name}(Tensor& {first.name}{', ' + rest if rest else ''})"
    else:
        head = f"{op.ret_cpp()} {op.cpp}({', '.join(f'{p.cpp_type()} {p.name}' for p in op.params)})"
    lines = [head + " {"] + ([] if inplace else autocast_block(op)) + [
             f"  if (!GradMode::is_enabled() || !({requires_grad_expr(f)})) return {raw};"]
    if inplace:
        lines.append(f'  CheckInplace({op.params[0].name}, "{op.name.rstrip("_")}_");')
    lines.append(f"  IntrusivePtr<{f.node}> node_(new {f.node}());")
    lines += ["  " + s for s in edges_stmt(f)]
    saves = saved_members(f, inplace)
    orig = [m[1] for m in saves if f"{op.params[0].name}_orig_" in m[1]]
    if inplace and orig:
        # The formula needs self's value from before the write: keep a (differentiable) copy.
        cond = re.match(r"if \((.*)\) node_->", orig[0]).group(1)
        lines.append(f"  Tensor {op.params[0].name}_orig_ = ({cond}) ? functional::Clone({op.params[0].name}) : Tensor();")
    lines += ["  " + m[1] for m in saves]
    if inplace:
        self_ = op.params[0].name
        lines.append(f"  {raw};")
        lines.append(f"  if (IsDifferentiableType({self_}.dtype())) {{")
        lines.append(f"    RebaseHistory({self_}, node_.get());")
        if outs:
            lines.append(f"    node_->result_ = SavedVariable({self_}, true);")
        lines.append("  }")
        lines.append(f"  return {self_};")
    elif f.multi_out:
        lines.append(f"  std::vector<Tensor> outs_ = {raw};")
        lines.append("  for (const Tensor& o_ : outs_) if (IsDifferentiableType(o_.dtype())) SetHistory(o_, node_.get());")
        lines.append("  return outs_;")
    elif f.named_out:
        # Every output keeps its slot (output k = grads[k]); only floating ones get a history.
        lines.append(f"  auto outs_ = {raw};")
        for k, n in enumerate(f.named_out):
            lines.append(f"  const Tensor& {n} = std::get<{k}>(outs_);")
            lines.append(f"  if (IsDifferentiableType({n}.dtype())) SetHistory({n}, node_.get()); else node_->AddOutput({n});")
            if n in outs:
                lines.append(f"  node_->{n}_ = SavedVariable({n}, IsDifferentiableType({n}.dtype()));")
        lines.append("  return outs_;")
    else:
        tensors = [p for p in op.params if p.type in TENSOR_TYPES]
        # `TensorLike?` parameters are std::optional<Tensor>.
        same = "".join(f" && !({t.name} && result_.is_same(*{t.name}))" if t.optional and t.type == "TensorLike"
                       else f" && !result_.is_same({t.name})" for t in tensors)
        lines.append(f"  Tensor result_ = {raw};")
        lines.append(f"  if (IsDifferentiableType(result_.dtype()){same}) {{")
        lines.append("    SetHistory(result_, node_.get());")
        if outs:
            lines.append("    node_->result_ = SavedVariable(result_, true);")
        lines.append("  }")
        lines.append("  return result_;")
    lines.append("}")
    return lines


def gen_functional(ops, family, names):
    lines = ["namespace oneflow::functional {", ""]
    for op in ops:
        if op.manual or op.family != family:
            continue
        f = Formulas(op)
        assert not (f.kind == "manual" and op.e.get("autocast")), f"op {op.name}: autocast of a manual entry"
        if f.kind == "none" and op.e.get("autocast"):
            lines += gen_autocast_only_entry(op) + [""]
            if op.inplace:
                lines += gen_plain_entries(op, out_of_place=False) + [""]
            continue
        if f.kind == "none":
            lines += gen_plain_entries(op) + [""]
            continue
        if f.kind == "manual":
            continue
        node, members, outs = gen_node(f, ops)
        lines += node + [""]
        lines += gen_entry(f, members, outs, op.inplace_only) + [""]
        if op.inplace:
            lines += gen_entry(f, members, outs, True) + [""]
    lines += ["}  // namespace oneflow::functional", ""]
    body = "\n".join(lines)
    head = ["// Generated by tools/gen_autograd.py from src/ops/table. Do not edit.",
            '#include "autograd/formulas.h"', '#include "autograd/grad_mode.h"', '#include "autograd/node.h"',
            '#include "autograd/autocast.h"', '#include "core/error.h"', '#include "graph/lazy.h"',
            '#include "ops/host_fallback.h"'] + op_decls.includes_for(body, names)
    return "\n".join(head + ["", body])


def functional_decl_lines(op):
    """The op's differentiable entries (namespace oneflow::functional) as declarations. Every op
    has entries of its own (non-differentiable ones too: the host fallback of CUDA builds and the
    lazy test, Note [Backward nodes])."""
    return op.decl()
