"""Argument-type checks of the Python-level public functions (issue 39, docs/errors.md).

The generated bindings check every argument's type before any C++ runs; a function written in
Python would instead fail deep inside on `.dim()` / `.shape` of a non-tensor with an
AttributeError naming neither the function nor the argument. These helpers raise the TypeError
PyTorch's argument parser raises for the same call, worded as it words it. They are called at
the top of the function (one isinstance test: negligible next to any op) rather than through a
generic wrapper around every export, which would cost every call a frame and *args packing.

`pos` is PyTorch's 1-based position of the argument (a Tensor method does not count `self`).
"""
import numbers

from ._oneflow_internal import Tensor


# The default of a parameter that one of PyTorch's forms requires and another lacks (`where(c)`
# against `where(c, x, y)`, `trapezoid(y)` against `trapezoid(y, x)`): an explicit None is then
# a value, refused as PyTorch refuses it, not the argument left out.
LEFT_OUT = object()


def check_tensor(arg, fn, name, pos=1):
    """TypeError "fn(): argument 'name' (position pos) must be Tensor, not T" unless arg is one."""
    if not isinstance(arg, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not {type(arg).__name__}")
    return arg


def check_bool(arg, fn, name, pos=1):
    """A switch (set_grad_enabled, set_warn_always, ...): a bool, NumPy's too, as PyTorch's parser
    takes; a Tensor, a str, None or an int is a TypeError rather than its truth value."""
    if not isinstance(arg, bool) and type(arg).__name__ not in ("bool_", "bool"):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be bool, not {type(arg).__name__}")
    return bool(arg)


def check_flag(arg, fn, name, pos=1):
    """A bool parameter of an op under OneFlow's binding rule (python_arg.cpp kBOOL, as the
    generated bindings' ToBool): a bool, NumPy's bool, an int, or a one-element integer / bool
    tensor reads as its truth value; a float, a str, None, a floating tensor is a TypeError."""
    if isinstance(arg, bool) or type(arg).__name__ in ("bool_", "bool"):
        return bool(arg)
    if isinstance(arg, int) or (hasattr(arg, "__index__") and not isinstance(arg, (float, Tensor))):
        return bool(arg)
    if isinstance(arg, Tensor) and arg.numel() == 1 and not (arg.dtype.is_floating_point or arg.dtype.is_complex):
        return bool(arg.item())
    raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be bool, not {type(arg).__name__}")


def check_int_list(arg, fn, name, pos=1, one_int=False):
    """An `int[]` parameter (PyTorch's `tuple of ints`): a list, tuple or Size of ints; one int
    alone where `one_int` (PyTorch's `int[1]`). A Tensor was read element by element (an empty
    one as an empty list) and a float truncated; both are PyTorch's TypeError."""
    if one_int and isinstance(arg, numbers.Integral) and not isinstance(arg, bool):
        return [int(arg)]
    if not isinstance(arg, (list, tuple)):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of ints, not {type(arg).__name__}")
    for i, a in enumerate(arg):
        if isinstance(a, bool) or not isinstance(a, numbers.Integral):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of ints, but found "
                            f"element of type {type(a).__name__} at pos {i}")
    return [int(a) for a in arg]


def check_optional_tensor(arg, fn, name, pos=1):
    """check_tensor for an argument that may also be None."""
    if arg is not None and not isinstance(arg, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not {type(arg).__name__}")
    return arg


def check_tensors(args, fn, name, pos=1):
    """A sequence of tensors (PyTorch's `Tensor[]`, or a `*tensors` parameter): a list or tuple
    whose every element is a Tensor."""
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of Tensors, "
                        f"not {type(args).__name__}")
    for i, a in enumerate(args):
        if not isinstance(a, Tensor):
            raise TypeError(f"{fn}(): expected Tensor as element {i} in argument '{name}' "
                            f"(position {pos}), but got {type(a).__name__}")
    return args
