"""Upstream OneFlow's signatures of flow._C functions (`oneflow:` in the op table; Note [OneFlow's
signatures] in src/api/arg_fits.h).

An op entry may list forms of upstream OneFlow's functional API that run on it or on another
table op:

    - name: gather
      sig: gather(Tensor input, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
      oneflow:
      - sig: gather(Tensor x, Tensor indices, int axis) -> Tensor
        call: gather_axis(x, indices, axis)
      - sig: binary_cross_entropy_with_logits_loss(Tensor input, ...) -> Tensor   # no call: this op

Each form is bound as `flow._C.<its name>`, a further nanobind overload when the name is already
bound. `call` names the table op that runs and its arguments in order: each a parameter of the
form or a literal (`None`, `True`, `1e-05`); a trailing parameter left out takes its default.
Without `call`, the form's parameters go to the entry's op in order. The arguments are converted
by the called op's own converters, so the form's types only pick the overload (the generated
fit tests) and document upstream's signature. The call is one table op, so nn.Graph records it
(Note [Lazy interception]) and a global argument goes to the dispatcher under that op's name.
"""
import re


class Form:
    def __init__(self, op, raw, ops_by_name):
        import gen_ops  # deferred: gen_ops imports this module
        self.op = op
        self.sig = raw["sig"]
        m = re.match(r"^(\w+)\((.*)\)\s*->\s*(.+)$", self.sig)
        assert m, f"op {op.name}: bad oneflow signature {self.sig}"
        self.name, self.ret = m.group(1), m.group(3).strip()
        self.params, kw = [], False
        for p in [p for p in gen_ops.split_params(m.group(2)) if p.strip()]:
            if p.strip() == "*":
                kw = True
                continue
            self.params.append(gen_ops.Param(p, kw))
        assert not any(p.varargs for p in self.params), f"{self.sig}: no `...` in a oneflow form"
        # `bool inplace=False`: upstream's in-place switch, here the op's in-place entry X_.
        self.inplace = next((p for p in self.params if p.name == "inplace"), None)
        call = raw.get("call") or f"{op.name}({', '.join(p.name for p in self.params if p is not self.inplace)})"
        m = re.match(r"^(\w+)\((.*)\)$", call.strip())
        assert m, f"op {op.name}: bad oneflow call {call}"
        assert m.group(1) in ops_by_name, f"op {op.name}: oneflow call of unknown op {m.group(1)}"
        self.target = ops_by_name[m.group(1)]
        assert not self.target.manual, f"{call}: an `Any` op has a hand-written binding"
        self.args = [a.strip() for a in gen_ops.split_params(m.group(2)) if a.strip()]
        assert len(self.args) <= len(self.target.params), f"{call}: too many arguments"
        names = {p.name for p in self.params} | {"placement", "sbp"}
        for a, tp in zip(self.args, self.target.params):
            assert a in names or not re.match(r"^[a-z_]\w*$", a), f"{call}: unknown parameter {a}"
        for tp in self.target.params[len(self.args):]:
            assert tp.default is not None, f"{call}: {tp.name} has no default"
        assert not self.inplace or (self.target.inplace and self.args and self.args[0] in names), \
            f"{self.sig}: `inplace` needs an op with an in-place form (`inplace: true`) called on a parameter"


def forms_of(ops):
    """Every op's upstream forms, checked: a form named like a table op is declared on that op (so
    that the op's own binding is the first overload)."""
    by_name = {op.name: op for op in ops}
    out = []
    for op in ops:
        for raw in op.e.get("oneflow") or []:
            f = Form(op, raw, by_name)
            assert f.name not in by_name or f.name == op.name, \
                f"oneflow form {f.name} must be declared on table op {f.name}"
            out.append(f)
    return out


# Fit test of a form parameter (src/api/arg_fits.h); None for the types that don't tell forms apart.
FITS = {"Tensor": "FitsTensor", "TensorLike": None, "int": "FitsInt", "float": "FitsNumber",
        "Scalar": "FitsNumber", "bool": "FitsBool", "int[]": "FitsIntList", "float[]": None,
        "Tensor[]": "FitsTensorList", "str": "FitsStr", "DType": None, "Device": None,
        "Generator": None, "Any": None}


def guard(params, skip_first=False):
    """`if (!fits...) throw nb::next_overload();` for the handles of `params`."""
    tests = []
    for k, p in enumerate(params):
        fit = FITS[p.type]
        if fit is None or (skip_first and k == 0):
            continue
        none_ok = p.optional or p.default == "None"
        tests.append(f"FitsNoneOr({p.name}, {fit})" if none_ok else f"{fit}({p.name})")
    if not tests:
        return ""
    return f"if (!({' && '.join(tests)})) throw nb::next_overload(); "


def literal(tp, text):
    """A Python object for a literal argument of the called op's parameter `tp`."""
    import gen_ops
    p = gen_ops.Param(f"{tp.type}{'?' if tp.optional else ''} {tp.name}={text}", False)
    return p.py_default()


def form_binding(f):
    """`m.def(...)` of one upstream form."""
    import gen_ops
    t = f.target
    own = {p.name for p in f.params}
    lits, handles = [], []
    for k, tp in enumerate(t.params):
        a = f.args[k] if k < len(f.args) else None
        if a is not None and a in own:
            handles.append(a)
            continue
        expr = literal(tp, a) if a is not None else tp.py_default()
        lits.append(f"nb::object lit_{tp.name} = {expr};")
        handles.append(f"lit_{tp.name}")
    convs = [tp.convert(h) for tp, h in zip(t.params, handles)]
    names = [tp.name for tp in t.params]
    factory = gen_ops.takes_placement(t.name, t.params)
    extra = []
    if factory:  # placement= / sbp= make a global tensor (Note [Global arguments])
        for n in ("placement", "sbp"):
            extra.append(n if n in own else "nb::none()")
        names += ["placement", "sbp"]
    hook = gen_ops.lazy_hook(t, False, convs, None)
    call = gen_ops.wrap_result(t, f"functional::{t.cpp}({', '.join(convs)})")
    global_name, global_inplace = f'"{t.name}"', "false"
    if f.inplace:  # the in-place entry on the first argument, which is returned
        mut = [f"ToTensorMut({handles[0]})"] + convs[1:]
        ihook = gen_ops.lazy_hook(t, True, mut, handles[0])
        hook = (f"if (ToBool(inplace)) [[unlikely]] {{ {ihook} functional::{t.cpp}_({', '.join(mut)}); "
                f"return nb::borrow({handles[0]}); }} ") + hook
        global_name = f'ToBool(inplace) ? "{t.name}_" : "{t.name}"'
        global_inplace = "ToBool(inplace)"
    sig = ", ".join(f"nb::handle {p.name}" for p in f.params)
    all_handles = ", ".join(handles + extra)
    # Note [Kind test] (src/api/convert.h): the form's own tensor handles (its literals are none)
    route = f"GlobalCall({global_name}, {global_inplace}, {{{', '.join(chr(34) + n + chr(34) for n in names)}}}, {{{all_handles}}})"
    kinds = [h for tp, h in zip(t.params, handles) if tp.is_tensor and h in own]
    conds = ([f"AnyKind({{{', '.join(kinds)}}})"] if kinds else []) + \
        [f"!{e}.is_none()" for e in extra if e != "nb::none()"]
    test = f"if ({' || '.join(conds)}) [[unlikely]] return {route}; " if conds else ""
    if any(tp.type == "Tensor[]" for tp in t.params):  # (a global tensor inside a list: the conversion's throw)
        tail = f"try {{ {hook} return {call}; }} catch (const GlobalArgument&) {{ return {route}; }} }}"
    else:
        tail = f"{hook} return {call}; }}"
    body = f"[]({sig}) -> nb::object {{ {guard(f.params)}{' '.join(lits)} {test}{tail}"
    annots = []
    for p in f.params:
        if p.kw_only and "nb::kw_only()" not in annots:
            annots.append("nb::kw_only()")
        d = p.py_default()
        none_ok = (p.optional or p.type in ("TensorLike", "Scalar", "Any")) and not d
        annots.append(f'"{p.name}"_a' + (f" = {d}" if d else "") + (".none()" if none_ok else ""))
    return f'  m.def("{f.name}", {body}{"".join(", " + a for a in annots)});'
