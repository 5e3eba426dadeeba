"""Calling ops through their boxed form (docs/architecture.md §8) with a Python-style argument list.

``call("add", x, y, alpha=2)`` binds the arguments to the op's schema the way its Python binding
does, splits them into tensor inputs and named attributes, and runs ``_C._call_boxed``; ``infer``
does the same through meta inference alone. The graph tracer and ``BuiltinOp`` use the same door.
"""
from . import _oneflow_internal as _C

_TENSOR_TYPES = ("Tensor", "TensorLike", "Tensor[]")


def schema(name):
    """[(param name, type, optional, kw_only, varargs, has_default, default)], output names."""
    return _C._op_schema(name)


def bind(name, *args, **kwargs):
    """(inputs, attrs) for op ``name`` called as ``flow.<name>(*args, **kwargs)``."""
    params, _ = schema(name)
    values = {}
    pos = list(args)
    for pname, ptype, _opt, kw_only, varargs, _has_default, _default in params:
        if kw_only or not pos:
            continue
        if varargs:
            rest, pos = pos, []
            values[pname] = rest[0] if len(rest) == 1 and not isinstance(rest[0], int) else tuple(rest)
        else:
            values[pname] = pos.pop(0)
    if pos:
        raise TypeError(f"{name}() takes {len(args) - len(pos)} positional arguments but {len(args)} were given")
    for k, v in kwargs.items():
        if k in values:
            raise TypeError(f"{name}() got multiple values for argument '{k}'")
        values[k] = v
    names = {p[0] for p in params}
    unknown = set(values) - names
    if unknown:
        raise TypeError(f"{name}() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    inputs, attrs = [], {}
    lists = sum(p[1] == "Tensor[]" for p in params)
    for pname, ptype, _opt, *_ in params:
        if pname not in values:
            if ptype in _TENSOR_TYPES[:2]:
                inputs.append(None)
            continue
        if ptype == "Tensor[]":
            inputs.extend(values[pname])
            if lists > 1:
                inputs.append(None)  # ends the list (Note [Several tensor lists], ops/boxed.h)
        elif ptype in _TENSOR_TYPES:
            inputs.append(values[pname])
        else:
            attrs[pname] = values[pname]
    while inputs and inputs[-1] is None:
        inputs.pop()
    return inputs, attrs


def call(name, *args, **kwargs):
    inputs, attrs = bind(name, *args, **kwargs)
    return _C._call_boxed(name, inputs, attrs)


def infer(name, *args, **kwargs):
    inputs, attrs = bind(name, *args, **kwargs)
    return _C._infer_boxed(name, inputs, attrs)
