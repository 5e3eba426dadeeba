"""Tensor operators (arithmetic, comparison, bitwise, unary, matmul, in-place, with None)
against torch computing the same thing: same values, or the same kind of exception."""

import operator

import numpy as np
import pytest
import torch

from harness import assert_close, builtin_exc_type, flow, flow_to_torch


_ARITH = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_BITWISE = {"&": operator.and_, "|": operator.or_, "^": operator.xor}


def _pair(dtype):
    """Two (2, 3) operands without zero divisors, with some equal entries,
    and non-negative exponents for integer powers."""
    if dtype == "bool":
        a, b = [[True, False, True], [False, True, True]], [[True, True, False], [False, False, True]]
    elif dtype == "int64":
        a, b = [[-7, 3, 5], [2, -4, 6]], [[2, 3, -2], [1, 3, 6]]
    else:
        a, b = [[-7.5, 3.0, 5.25], [2.0, -4.0, 0.5]], [[2.0, 3.0, -1.5], [0.25, 3.0, 1.0]]
    return a, b


def _mk(values, dtype):
    """An operand: built per library at call time."""
    return lambda lib: lib.tensor(values, dtype=getattr(lib, dtype))


def _check_op(fn, a, b):
    """fn on flow and torch operands (tensor makers or Python scalars):
    both raise the same kind of exception, or both agree."""
    def conv(lib, v):
        return v(lib) if callable(v) else v

    try:
        want = fn(conv(torch, a), conv(torch, b))
    except Exception as e:  # noqa: BLE001
        with pytest.raises(builtin_exc_type(e)):
            fn(conv(flow, a), conv(flow, b))
        return
    got = fn(conv(flow, a), conv(flow, b))
    assert_close(got, want)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("sym", list(_ARITH))
def test_binary_operators(sym, dtype):
    fn = _ARITH[sym]
    a, b = _pair(dtype)
    if sym == "**" and dtype == "int64":
        b = [[0, 1, 2], [3, 2, 1]]  # integers to negative powers are an error
    ta, tb = _mk(a, dtype), _mk(b, dtype)
    _check_op(fn, ta, tb)
    for s in (2, 2.5, True):
        _check_op(fn, ta, s)
        _check_op(fn, s, tb)  # scalar on the left (__r*__); tb has no zeros


@pytest.mark.parametrize("dtype", ["int64", "bool", "uint8"])
@pytest.mark.parametrize("sym", list(_BITWISE))
def test_bitwise_operators(sym, dtype):
    fn = _BITWISE[sym]
    if dtype == "bool":
        a, b = _pair("bool")
    else:
        a, b = [[5, 3, 0], [12, 7, 1]], [[3, 6, 0], [10, 7, 255 if dtype == "uint8" else -1]]
    ta, tb = _mk(a, dtype), _mk(b, dtype)
    _check_op(fn, ta, tb)
    for s in (3, True):
        _check_op(fn, ta, s)
        _check_op(fn, s, ta)


@pytest.mark.parametrize("sym", list(_ARITH) + list(_BITWISE))
def test_operators_with_none_as_torch(sym):
    # `t != None` is True and `t == None` False (upstream's tests assert it); the other
    # operators raise Python's TypeError, as torch's.
    fn = {**_ARITH, **_BITWISE}[sym]
    for flip in (False, True):
        f, t = flow.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
        args = (lambda x: (None, x)) if flip else (lambda x: (x, None))
        try:
            want = fn(*args(t))
        except TypeError:
            with pytest.raises(TypeError):
                fn(*args(f))
            continue
        assert type(want) is bool and fn(*args(f)) is want, (sym, flip)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "int8"])
def test_unary_operators(dtype):
    a = _pair(dtype)[0] if dtype != "int8" else [[-128, 3], [127, 0]]
    f = flow.tensor(a, dtype=getattr(flow, dtype))
    t = torch.tensor(a, dtype=getattr(torch, dtype))
    if dtype != "bool":
        assert_close(-f, -t)
        assert_close(abs(f), abs(t))
    else:
        with pytest.raises(RuntimeError):
            -f
    if dtype in ("int64", "bool", "int8"):
        assert_close(~f, ~t)
    else:
        with pytest.raises((TypeError, RuntimeError)):
            ~f


def test_matmul_operator():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert_close(flow.tensor(a) @ flow.tensor(b), torch.tensor(a) @ torch.tensor(b))
    v = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    assert_close(flow.tensor(a) @ flow.tensor(v), torch.tensor(a) @ torch.tensor(v))


@pytest.mark.parametrize(
    "sym,dtype,other",
    [("+=", "float32", 2.5), ("-=", "int64", 3), ("*=", "float32", "t"), ("/=", "float32", 2),
     ("//=", "int64", 2), ("%=", "int64", 3), ("**=", "float32", 2), ("&=", "int64", 6),
     ("|=", "bool", True), ("^=", "int64", "t")],
)
def test_inplace_operators_keep_identity(sym, dtype, other):
    def run(lib):
        x = lib.tensor([[4, 5, 6], [7, 8, 9]], dtype=getattr(lib, dtype)) if dtype != "bool" else \
            lib.tensor([[True, False, True], [False, False, True]])
        o = lib.tensor([[1, 2, 3], [1, 2, 3]], dtype=getattr(lib, dtype)) if other == "t" else other
        ident, v0 = id(x), x._version
        ns = {"x": x, "o": o}
        exec(f"x {sym} o", ns)
        return ns["x"], ident, v0

    fx, fid, fv0 = run(flow)
    tx, _, _ = run(torch)
    assert id(fx) == fid, "augmented assignment rebound the name to a new tensor"
    assert fx._version > fv0
    assert_close(fx, tx)


def test_inplace_with_fully_aliased_input():
    x = flow.arange(6, dtype=flow.float32)
    x.add_(x)
    assert x.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    x.mul_(x)
    assert x.tolist() == [0.0, 4.0, 16.0, 36.0, 64.0, 100.0]
    base = flow.arange(8, dtype=flow.float32)
    v = base[::2]
    v.sub_(v)
    assert base.tolist() == [0.0, 1.0, 0.0, 3.0, 0.0, 5.0, 0.0, 7.0]


@pytest.mark.parametrize(
    "make",
    [lambda lib: (lambda x: (x, x.t()))(lib.arange(9, dtype=lib.float32).reshape(3, 3)),
     lambda lib: (lambda x: (x[1:], x[:-1]))(lib.arange(6, dtype=lib.float32))],
    ids=["transpose-of-self", "shifted-slice"],
)
def test_inplace_with_partially_overlapping_input(make):
    """torch refuses these (the result would depend on traversal order).
    flow must either refuse too (RuntimeError) or give the result of
    computing from the unmodified input, never an order-dependent mix."""
    dst, src = make(flow)
    want = flow_to_torch(dst) + flow_to_torch(src)
    try:
        dst.add_(src)
    except RuntimeError:
        return
    assert_close(dst, want, what="overlapping in-place add")


def test_inplace_operator_uncastable_raises():
    x = flow.tensor([1, 2])
    with pytest.raises(RuntimeError):
        x += 1.5
    with pytest.raises(RuntimeError):
        x /= 2
