"""The generated bindings' TypeErrors name the op and the argument, as PyTorch's parser does
(issue 39, Note [Argument names] in src/api/arg_names.h):
`matmul(): argument 'other' (position 2) must be Tensor, not str`."""
import os
import re
import sys

import pytest
import torch

import oneflow as flow

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import fuzz  # noqa: E402  (the op table's signatures, as the fuzzer reads them)


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- the exception is what is compared
        return e
    raise AssertionError("no exception")


# Calls whose message is PyTorch's, word for word (same op name, argument name and position).
SAME_AS_TORCH = {
    "matmul other": lambda lib, x: lib.matmul(x, "abc"),
    "Tensor.matmul other": lambda lib, x: x.matmul("abc"),
    "atan2 other": lambda lib, x: lib.atan2(x, [1.0]),
    "Tensor.atan2 other": lambda lib, x: x.atan2("abc"),
    "maximum other": lambda lib, x: lib.maximum(x, 1),
    "flip dims element": lambda lib, x: lib.flip(x, ["a"]),
    "roll shifts": lambda lib, x: lib.roll(x, "a"),
    "gather index": lambda lib, x: lib.gather(x, 1, 2.5),
}


@pytest.mark.parametrize("name", sorted(SAME_AS_TORCH))
def test_message_is_pytorchs(name):
    fn = SAME_AS_TORCH[name]
    f = _raised(lambda: fn(flow, flow.randn(2, 3)))
    t = _raised(lambda: fn(torch, torch.randn(2, 3)))
    assert isinstance(t, TypeError) and isinstance(f, TypeError), (f, t)
    assert str(f) == str(t), (str(f), str(t))


def _table_ops():
    """(public name, parameter name) of the table ops exposed as flow.X whose first two
    parameters are Tensors (the second one `Tensor`: no number form) and the rest optional."""
    out = []
    for name, params in sorted(fuzz._table_params().items()):
        if len(params) < 2 or params[0][0] != "Tensor" or params[1][0] != "Tensor" or params[1][3]:
            continue
        if not all(p[2] for p in params[2:]):
            continue
        # the generated binding itself (a Python function of that name may take other forms)
        if "." in name or type(getattr(flow, name, None)).__name__ != "nb_func":
            continue
        out.append((name, params[1][1]))
    return out


TABLE_OPS = _table_ops()


def test_table_sample_is_large():
    assert len(TABLE_OPS) > 40, TABLE_OPS


@pytest.mark.parametrize("value, got", [("abc", "str"), (object(), "object"), ([1, 2], "list")])
def test_every_two_tensor_op_names_its_second_argument(value, got):
    # The whole table's sample: flow.X(x, <not a tensor>) names X, the argument and position 2.
    bad = []
    for name, pname in TABLE_OPS:
        e = _raised(lambda: getattr(flow, name)(flow.randn(2, 3), value))
        # (an alias's message names the op it binds: arctan2 -> atan2)
        want = rf"^\w+\(\): argument '{pname}' \(position 2\) must be Tensor, not {got}$"
        if not isinstance(e, TypeError) or not re.match(want, str(e)):
            bad.append(f"{name}: {type(e).__name__}: {e}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("call, want", [
    (lambda x: flow.sum(x, 1, "abc"), r"^sum\(\): argument 'keepdim' \(position 3\) must be bool, not str$"),
    (lambda x: x.sum(1, "abc"), r"^sum\(\): argument 'keepdim' \(position 2\) must be bool, not str$"),
    (lambda x: flow.sum(x, 1, keepdim=1.5), r"^sum\(\): argument 'keepdim' \(position 3\) must be bool, not float$"),
    (lambda x: flow.linalg.svd(x, flow.tensor(1.0)),
     r"^linalg_svd\(\): argument 'full_matrices' \(position 2\) must be bool, not a Tensor of 1 element\(s\) of dtype "
     r"float32$"),
    (lambda x: flow.nn.functional.pad(x, [1], 7), r"^pad\(\): argument 'mode' \(position 3\) must be str, not int$"),
    # keyword-only: no position, as PyTorch words it
    (lambda x: flow.zeros(2, dtype="float32"), r"^zeros\(\): argument 'dtype' must be oneflow.dtype, not str$"),
    (lambda x: flow.cat([x, "a"]), r"^cat\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, "
                                   r"but found element of type str at pos 1$"),
    (lambda x: x.view(2, "a"), r"^view\(\): argument 'shape' \(position 1\) must be int, not str$"),
    # by keyword: the position still given (PyTorch leaves it out; a binding does not see how
    # the argument came)
    (lambda x: flow.matmul(x, other="a"), r"^matmul\(\): argument 'other' \(position 2\) must be Tensor, not str$"),
    # an element of a varargs list: its place in the list (PyTorch: "failed to unpack the object")
    (lambda x: x.flip([0, "a"]),
     r"^flip\(\): argument 'dims' \(position 1\) must be tuple of ints, but found element of type str at pos 1$"),
    (lambda x: flow.add(x, "a"), r"^add\(\): argument 'other' \(position 2\) must be Tensor or Number, not str$"),
])
def test_message_names_op_argument_and_position(call, want):
    e = _raised(lambda: call(flow.randn(2, 3)))
    assert isinstance(e, TypeError), repr(e)
    assert re.search(want, str(e)), str(e)


def test_an_overloaded_name_names_the_argument_when_no_form_fits():
    # matmul also has upstream OneFlow's form (transpose_a, ...): a call no form takes still gets
    # the op's own conversion error, not nanobind's list of the forms
    e = _raised(lambda: flow.matmul(flow.randn(2, 3), "abc"))
    assert str(e) == "matmul(): argument 'other' (position 2) must be Tensor, not str", str(e)
    assert flow._C.matmul(flow.ones(2, 3), flow.ones(2, 3), False, True).shape == (2, 2)  # the form still fits


def test_hand_written_bindings_keep_their_wording():
    # no generated binding around the conversion: the argument is not named (and a previous
    # call's argument never leaks into the message)
    x = flow.randn(2, 3)
    flow.matmul(x, x.t())
    e = _raised(lambda: flow.device(x))
    assert isinstance(e, TypeError) and "argument '" not in str(e), str(e)
