"""oneflow.nn.modules.utils: the argument helpers upstream OneFlow keeps at this path (as
torch.nn.modules.utils), which model code imports directly — flowvision's layers take `_pair`,
`_single`, `_triple` from here. Behaviour follows upstream's public one: `_ntuple(n)(x)` turns any
iterable into a tuple of its items (its length unchecked) and repeats a scalar n times."""
import collections.abc
import itertools

__all__ = []  # private helpers: `from oneflow.nn.modules.utils import *` brings nothing


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(itertools.repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _getint(x):
    """int of a scalar, or of the first item of an iterable."""
    if isinstance(x, collections.abc.Iterable):
        return int(x[0])
    return int(x)


def _reverse_repeat_tuple(t, n):
    """`t` reversed with each item repeated n times: Conv's padding=(ph, pw) as F.pad's
    (pw, pw, ph, ph)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """Adaptive pooling's output size: None entries take the input's trailing sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def _handle_size_arg(size):
    """A size given as f(2, 3) or as f((2, 3)) / f([2, 3]): the tuple of ints either way."""
    from ... import Size

    if len(size) == 0:
        return size
    if isinstance(size[0], (list, tuple, Size)):
        if len(size) != 1:
            raise TypeError("shape should be specified by tuple of int size, not tuple of list")
        return size[0]
    return size


def _check_axis(axis, shape):
    """axis (None: all, an int, or a sequence) as a list of non-negative dims of `shape`."""
    ndim = len(shape)
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, int):
        axis = [axis]
    if not isinstance(axis, (list, tuple)):
        raise TypeError(f"Invalid axis {axis}")
    out = []
    for a in axis:
        if not -ndim <= a <= ndim - 1:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {a})")
        out.append(a + ndim if a < 0 else a)
    return out


def _generate_output_size(input_size, output_size):
    """An N-d adaptive op's output size for input (N, C, *spatial): None keeps that spatial size."""
    if len(input_size) - 2 != len(output_size):
        raise ValueError(
            f"the length of 'output_size' does not match the input size, {len(input_size) - 2} expected")
    out = []
    for i, s in enumerate(output_size):
        if s is None:
            out.append(input_size[i + 2])
        elif not isinstance(s, int):
            raise TypeError("numbers in 'output_size' should be integer")
        else:
            out.append(s)
    return tuple(out)
