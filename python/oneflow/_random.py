"""Python glue of the random ops (src/ops/table/random.yaml): the overloads PyTorch resolves
in its argument parser (randint(high, size), randint_like(input, high), Tensor.random_(to)),
OneFlow's keyword names (Tensor.uniform_(a, b)) and the seeding functions of the default
generator."""

from . import _oneflow_internal as _C
from ._export import export, export_value

Generator = export_value(_C.Generator, "flow.Generator")
default_generator = export_value(_C._default_generator(), "flow.default_generator")
initial_seed = export_value(_C.initial_seed, "flow.initial_seed")
seed = export_value(_C.seed, "flow.seed")
get_rng_state = export_value(_C.get_rng_state, "flow.get_rng_state")
set_rng_state = export_value(_C.set_rng_state, "flow.set_rng_state")


@export("flow.manual_seed")
def manual_seed(seed):
    """Seeds every device's default generator; returns flow.default_generator (as torch)."""
    _C.manual_seed(seed)
    return default_generator


@export("flow.randint")
def randint(*args, **kwargs):
    """randint(high, size) or randint(low, high, size), like PyTorch."""
    if len(args) == 2 and "size" not in kwargs:
        args = (0,) + args
    elif len(args) == 1 and "size" in kwargs and "high" not in kwargs:
        args = (0,) + args
    elif not args and "low" not in kwargs and "high" in kwargs:
        kwargs["low"] = 0
    return _C.randint(*args, **kwargs)


@export("flow.randint_like")
def randint_like(input, *args, **kwargs):
    """randint_like(input, high) or randint_like(input, low, high), like PyTorch."""
    if len(args) == 1 and "high" not in kwargs:
        args = (0,) + args
    elif not args and "low" not in kwargs:
        kwargs["low"] = 0
    return _C.randint_like(input, *args, **kwargs)


@export("Tensor.random_")
def _random_(self, *args, **kwargs):
    """Tensor.random_(), random_(to) or random_(from, to), like PyTorch."""
    one = args[0] if len(args) == 1 else kwargs.get("to", 0) if len(args) == 0 and "from" not in kwargs else 0
    if one is None:  # `to` alone is PyTorch's `int to`: None there is no bound (only after `from`)
        given = "NoneType" if args else "to=NoneType, "
        raise TypeError(f"random_() received an invalid combination of arguments - got ({given}), but expected one "
                        "of: (*, Generator generator), (int from, int? to, *, Generator generator), "
                        "(int to, *, Generator generator)")
    if len(args) == 1 and "to" not in kwargs:
        args = (0,) + args
    return _C.random_(self, *args, **kwargs)


@export("Tensor.uniform_")
def _uniform_(self, *args, a=None, b=None, **kwargs):
    """Tensor.uniform_(from=0, to=1) as torch, or with OneFlow's keyword names a and b."""
    if a is not None:
        kwargs["from"] = a
    if b is not None:
        kwargs["to"] = b
    return _C.uniform_(self, *args, **kwargs)


