"""The export registry: where every public name of the Python surface lives (docs/architecture.md §6).

A definition says where it is exposed, next to itself:

    @export("flow.quantile", "Tensor.quantile", out=True)
    def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"): ...

    export_value(property(_mT), "Tensor.mT")             # values, properties, classes, lambdas
    export_value(ref("Tensor.trunc"), "Tensor.fix")      # an alias of another public name

Recording has no other effect: no module sets attributes of another module or of Tensor while it
is imported. `apply()`, called once at the end of `oneflow/__init__.py`, puts the op table's
names (`_C._op_table()`: flow.X, Tensor.X aliases, nn.functional.X, the `also:` names) and every
recorded export on their targets. A public name has one definition: exporting a name twice, or a
name the op table already exposes, raises at import (turn the table's exposure off in the YAML
where Python defines the name: src/ops/table/README.md). Because nothing is set before
`apply()`, the order in which the package's modules are imported does not matter.

Targets are dotted from `oneflow` (`flow.linalg.cond`, `flow.nn.functional.mish`,
`flow.nn.Module.to_global`); `Tensor.X` is short for `flow.Tensor.X`. `out=True` wraps a
function target (not a Tensor method: PyTorch's methods take no out=) so that it takes `out=`
(Note [out= arguments], src/api/out_arg.cpp).
"""
import functools
import importlib
import sys

from . import _oneflow_internal as _C

_RECORDS = {}  # target -> (object, out, module that recorded it)
_APPLIED = []


class Ref:
    """The value of another public name (an alias), looked up when the registry is applied."""

    __slots__ = ("target",)

    def __init__(self, target):
        self.target = _canonical(target)

    def __repr__(self):
        return f"ref({self.target!r})"


def ref(target):
    return Ref(target)


def _canonical(target):
    if target.startswith("Tensor."):
        return "flow." + target
    if not target.startswith("flow.") or target.count(".") < 1 or target.endswith("."):
        raise ValueError(f"export: target {target!r} is not dotted from flow (flow.X, flow.linalg.X, Tensor.X)")
    return target


def _where(obj):
    if isinstance(obj, property):
        obj = obj.fget
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__name__)}"


def export_value(obj, *targets, out=False):
    """Records `obj` (a function, value, property, class or `ref(...)`) as the public names
    `targets`; returns `obj`."""
    if not targets:
        raise ValueError("export: no target given")
    module = sys._getframe(1).f_globals.get("__name__", "?")
    if module == __name__:
        module = sys._getframe(2).f_globals.get("__name__", "?")
    for t in targets:
        t = _canonical(t)
        if t in _RECORDS:
            raise ValueError(f"export: {t} is defined twice: in {_RECORDS[t][2]} and {_where(obj)} (in {module})")
    if _APPLIED:
        raise RuntimeError(f"export {targets}: the registry was already applied (export at import time)")
    for t in targets:
        _RECORDS[_canonical(t)] = (obj, out, module)
    return obj


def export(*targets, out=False):
    """Decorator: records the decorated definition as the public names `targets`."""
    def record(obj):
        export_value(obj, *targets, out=out)
        return obj
    return record


def takes_out(fn, name):
    """fn with PyTorch's `out=`: the result is written into `out` (resized as PyTorch does)."""
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else _C._with_out(name, result, out)
    return with_out


def table_exports():
    """{target: object} of the op table's rows: flow.X and its aliases, Tensor.<alias> (the C++
    class has Tensor.X itself), nn.functional.X and X_, and the `also:` names."""
    out = {}

    def put(target, value):
        if target in out and out[target] is not value:
            raise ValueError(f"op table: {target} is exposed by two ops")
        out[target] = value

    for name, flow, method, functional, inplace, aliases, also in _C._op_table():
        fn = getattr(_C, name, None)
        if fn is None:
            continue
        if flow:
            for a in [name, *aliases]:
                put(f"flow.{a}", fn)
        if functional:
            put(f"flow.nn.functional.{name}", fn)
            if inplace:
                put(f"flow.nn.functional.{name}_", getattr(_C, name + "_"))
        for dotted in also:
            put(f"flow.{dotted}", fn)
        if method:
            for a in aliases:
                if hasattr(_C.Tensor, name):
                    put(f"flow.Tensor.{a}", Ref(f"Tensor.{name}"))
                if inplace and hasattr(_C.Tensor, name + "_"):
                    put(f"flow.Tensor.{a}_", Ref(f"Tensor.{name}_"))
    return out


def _owner(flow, path):
    obj = flow
    for i, part in enumerate(path):
        if not hasattr(obj, part):
            importlib.import_module("oneflow." + ".".join(path[: i + 1]))
        obj = getattr(obj, part)
    return obj


def _lookup(flow, target):
    *path, attr = target.split(".")[1:]
    owner = _owner(flow, path)
    if isinstance(owner, type):
        for klass in owner.__mro__:
            if attr in vars(klass):
                return vars(klass)[attr]
        raise AttributeError(target)
    return getattr(owner, attr)


def records():
    """{target: (out, recording module)} of the Python exports (read by tests and tools)."""
    return {t: (out, module) for t, (_, out, module) in _RECORDS.items()}


def check_against_table(table, recorded):
    """A name is the op table's or Python's, never both."""
    both = sorted(set(table) & set(recorded))
    if both:
        raise ValueError("defined twice, by the op table and in Python (turn the table's exposure off "
                         "in src/ops/table/*.yaml): " + ", ".join(f"{t} ({recorded[t][2]})" for t in both))


def _check_unset(owner, attr, value, target):
    """Nothing but apply() sets a public name: a module may hold its own definition already (the
    exported object itself); anything else there was set by an import-time side effect, or is a
    second definition (a class's own attribute, C++ bindings of Tensor included)."""
    if isinstance(owner, type):
        if attr in vars(owner):
            raise ValueError(f"{target} is defined twice: {_where(vars(owner)[attr])} is in the class already "
                             f"(or was set before the registry was applied), and {_where(value)} is exported to it")
    elif vars(owner).get(attr, value) is not value:
        raise ValueError(f"{target} is defined twice: {_where(vars(owner)[attr])} is there already, "
                         f"and {_where(value)} is exported to it")


def apply():
    """Puts the op table's names and every recorded export on their targets (once)."""
    if _APPLIED:
        raise RuntimeError("the export registry is applied once, by oneflow/__init__.py")
    flow = sys.modules["oneflow"]
    table = table_exports()
    check_against_table(table, _RECORDS)
    every = set(table) | set(_RECORDS)
    pending = [(t, v, False) for t, v in table.items()] + [(t, v, o) for t, (v, o, _) in _RECORDS.items()]
    # Plain values first, then the aliases (a Ref may name another export or a table name).
    pending.sort(key=lambda r: isinstance(r[1], Ref))
    while pending:
        left = []
        for target, value, out in pending:
            if isinstance(value, Ref):
                if value.target in every and value.target not in _APPLIED_TARGETS:
                    left.append((target, value, out))
                    continue
                value = _lookup(flow, value.target)
            *path, attr = target.split(".")[1:]
            owner = _owner(flow, path)
            _check_unset(owner, attr, value, target)
            if out and not isinstance(owner, type):
                value = takes_out(value, attr)
                # pickle finds a function by __module__ + __qualname__: name the wrapper where it is
                # put (functools.wraps gave it the definition's name, which holds the unwrapped one)
                value.__module__, value.__qualname__ = owner.__name__, attr
            setattr(owner, attr, value)
            _APPLIED_TARGETS.add(target)
        if len(left) == len(pending):
            raise ValueError("export: aliases that name each other: " + ", ".join(t for t, _, _ in left))
        pending = left
    # The targets hold the objects now; the registry keeps only where each came from (holding them
    # here too would keep the C++ objects their closures capture alive past the extension's exit).
    for t, (_, out, module) in _RECORDS.items():
        _RECORDS[t] = (None, out, module)
    _APPLIED.append(True)


_APPLIED_TARGETS = set()
