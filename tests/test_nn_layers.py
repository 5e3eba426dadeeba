"""Layers against torch: Linear (+ F.linear and its errors, default init), Identity, Flatten,
Unflatten and the activation modules (forward, backward, in-place, repr)."""
import math

import numpy as np
import pytest
import torch

from harness import flow
from nn_util import arr, check_forward_backward, close, leaf_pair, torch_repr, twins


# ---------------------------------------------------------------------------
# Linear


@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (4,), (2, 1, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_forward_backward(shape, bias):
    fm, tm = twins(lambda lib: lib.nn.Linear(4, 3, bias=bias))
    check_forward_backward(fm, tm, arr(*shape))


def test_linear_float64():
    fm, tm = twins(lambda lib: lib.nn.Linear(4, 3, dtype=lib.float64))
    assert fm.weight.dtype == flow.float64 and fm.bias.dtype == flow.float64
    check_forward_backward(fm, tm, arr(3, 4, dtype=np.float64), rtol=1e-12, atol=1e-12)


def test_linear_parameters_and_repr():
    fm, tm = flow.nn.Linear(20, 40), torch.nn.Linear(20, 40)
    assert repr(fm) == torch_repr(tm) == "Linear(in_features=20, out_features=40, bias=True)"
    assert repr(flow.nn.Linear(2, 3, bias=False)) == (
        "Linear(in_features=2, out_features=3, bias=False)")
    assert [(n, tuple(p.shape)) for n, p in fm.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert all(type(p) is flow.nn.Parameter and p.requires_grad for p in fm.parameters())
    nb = flow.nn.Linear(2, 3, bias=False)
    assert nb.bias is None and "bias" in nb._parameters and list(nb.state_dict()) == ["weight"]
    assert fm.in_features == 20 and fm.out_features == 40


def test_linear_device_keyword():
    m = flow.nn.Linear(2, 2, device="cpu")
    assert m.weight.device.type == "cpu"
    meta = flow.nn.Linear(2, 3, device="meta")
    assert meta.weight.is_meta and tuple(meta.weight.shape) == (3, 2)


def test_linear_default_init_bounds_and_spread():
    flow.manual_seed(0)
    m = flow.nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives 1/sqrt(fan_in) too
    w, b = m.weight.numpy(), m.bias.numpy()
    assert np.abs(w).max() <= np.float32(bound) and np.abs(b).max() <= np.float32(bound)
    # U(-bound, bound): mean 0, std bound / sqrt(3)
    assert abs(w.mean()) < 0.01 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert abs(b.std() - bound / math.sqrt(3)) < 0.1 * bound
    assert np.abs(w).max() > 0.99 * bound


def test_linear_reset_parameters_redraws():
    m = flow.nn.Linear(8, 8)
    before = m.weight.numpy().copy()
    w = m.weight
    m.reset_parameters()
    assert m.weight is w and not np.array_equal(before, m.weight.numpy())


@pytest.mark.parametrize("in_shape,w_shape", [
    ((2, 3), (5, 4)), ((7, 2, 3), (5, 4)), ((3,), (5, 4)), ((2, 6, 3), (5, 4))])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_shape_error_matches_torch(in_shape, w_shape, with_bias):
    def call(lib):
        w = lib.ones(*w_shape)
        b = lib.ones(w_shape[0]) if with_bias else None
        return lib.nn.functional.linear(lib.ones(*in_shape), w, b)

    with pytest.raises(RuntimeError) as te:
        call(torch)
    with pytest.raises(RuntimeError) as fe:
        call(flow)
    assert str(fe.value) == str(te.value)


def test_linear_module_error_names_the_shapes():
    with pytest.raises(RuntimeError,
                       match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        flow.nn.Linear(4, 5)(flow.ones(2, 3))


def test_functional_linear_zero_dim_error_and_vector_weight():
    with pytest.raises(RuntimeError) as te:
        torch.nn.functional.linear(torch.ones(()), torch.ones(2, 2))
    with pytest.raises(RuntimeError) as fe:
        flow.nn.functional.linear(flow.ones(()), flow.ones(2, 2))
    assert str(fe.value) == str(te.value)
    a, w = arr(2, 4), arr(4)
    close(flow.nn.functional.linear(flow.tensor(a), flow.tensor(w)),
          torch.nn.functional.linear(torch.tensor(a), torch.tensor(w)))


def test_functional_linear_gradients():
    (xf, xt), (wf, wt), (bf, bt) = leaf_pair(arr(3, 4)), leaf_pair(arr(2, 4)), leaf_pair(arr(2))
    of, ot = flow.nn.functional.linear(xf, wf, bf), torch.nn.functional.linear(xt, wt, bt)
    close(of, ot)
    (of * of).sum().backward()
    (ot * ot).sum().backward()
    for f, t in ((xf, xt), (wf, wt), (bf, bt)):
        close(f.grad, t.grad)


# ---------------------------------------------------------------------------
# Identity, Flatten, Unflatten


def test_identity():
    m = flow.nn.Identity(54, unused="x")
    x = flow.ones(2)
    assert m(x) is x and repr(m) == "Identity()"


@pytest.mark.parametrize("args,shape", [
    ((), (2, 3, 4, 5)), ((0,), (2, 3, 4)), ((1, 2), (2, 3, 4, 5)), ((-3, -2), (2, 3, 4, 5)),
    ((0, -1), (3,)), ((), (2, 3))])
def test_flatten(args, shape):
    fm, tm = flow.nn.Flatten(*args), torch.nn.Flatten(*args)
    assert repr(fm) == torch_repr(tm)
    check_forward_backward(fm, tm, arr(*shape))


def test_flatten_error():
    with pytest.raises(IndexError) as te:
        torch.nn.Flatten()(torch.ones(3))
    with pytest.raises(IndexError) as fe:
        flow.nn.Flatten()(flow.ones(3))
    assert str(te.value) in str(fe.value)


@pytest.mark.parametrize("dim,sizes,shape", [
    (1, (2, 3), (2, 6, 3)), (1, [2, 3], (2, 6)), (-1, (2, -1), (3, 8)), (0, (1, 2, 3), (6, 2)),
    (-2, (3, 1, 2), (2, 6, 3))])
def test_unflatten(dim, sizes, shape):
    fm, tm = flow.nn.Unflatten(dim, sizes), torch.nn.Unflatten(dim, sizes)
    assert repr(fm) == torch_repr(tm)
    check_forward_backward(fm, tm, arr(*shape))


@pytest.mark.parametrize("dim,sizes", [(1, (2, 4)), (1, (-1, 4)), (5, (2, 3)), (1, ())])
def test_unflatten_errors_match_torch(dim, sizes):
    with pytest.raises(Exception) as te:
        torch.nn.Unflatten(dim, sizes)(torch.ones(2, 6, 3))
    with pytest.raises(type(te.value)) as fe:
        flow.nn.Unflatten(dim, sizes)(flow.ones(2, 6, 3))
    assert str(fe.value) == str(te.value)


def test_unflatten_two_inferred_dims_is_an_error():
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        flow.nn.Unflatten(1, (-1, -1))(flow.ones(2, 6))


@pytest.mark.parametrize("sizes", [(2.0, 3), 6, "23"])
def test_unflatten_size_type_errors_match_torch(sizes):
    with pytest.raises(TypeError) as te:
        torch.nn.Unflatten(1, sizes)
    with pytest.raises(TypeError) as fe:
        flow.nn.Unflatten(1, sizes)
    assert str(fe.value) == str(te.value)


# ---------------------------------------------------------------------------
# Activations


ACTIVATIONS = [
    ("ReLU", lambda lib: lib.nn.ReLU()),
    ("Sigmoid", lambda lib: lib.nn.Sigmoid()),
    ("Tanh", lambda lib: lib.nn.Tanh()),
    ("GELU", lambda lib: lib.nn.GELU()),
    ("GELU-tanh", lambda lib: lib.nn.GELU(approximate="tanh")),
    ("SiLU", lambda lib: lib.nn.SiLU()),
]


@pytest.mark.parametrize("make", [a[1] for a in ACTIVATIONS], ids=[a[0] for a in ACTIVATIONS])
def test_activation_forward_backward_and_repr(make):
    fm, tm = make(flow), make(torch)
    assert repr(fm) == torch_repr(tm)
    check_forward_backward(fm, tm, arr(4, 5) * 3)


@pytest.mark.parametrize("make", [a[1] for a in ACTIVATIONS], ids=[a[0] for a in ACTIVATIONS])
def test_activation_float64(make):
    fm, tm = make(flow), make(torch)
    check_forward_backward(fm, tm, arr(3, 2, dtype=np.float64) * 4, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["ReLU", "SiLU"])
def test_inplace_activation_overwrites_its_input(name):
    a = arr(3, 4) * 2
    for lib in (flow, torch):
        m = getattr(lib.nn, name)(inplace=True)
        assert repr(m) == f"{name}(inplace=True)"
    xf, xt = flow.tensor(a), torch.tensor(a)
    yf, yt = getattr(flow.nn, name)(inplace=True)(xf), getattr(torch.nn, name)(inplace=True)(xt)
    assert yf is xf and yt is xt
    close(xf, xt)
    # In-place inside a graph: gradients flow through the overwritten tensor.
    (lf, lt) = leaf_pair(a)
    of = getattr(flow.nn, name)(inplace=True)(lf * 1)
    ot = getattr(torch.nn, name)(inplace=True)(lt * 1)
    (of * of).sum().backward()
    (ot * ot).sum().backward()
    close(lf.grad, lt.grad)


@pytest.mark.parametrize("name", ["ReLU", "SiLU"])
def test_inplace_activation_on_a_leaf_is_an_error(name):
    with pytest.raises(RuntimeError) as te:
        getattr(torch.nn, name)(inplace=True)(torch.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError) as fe:
        getattr(flow.nn, name)(inplace=True)(flow.ones(2, requires_grad=True))
    assert str(te.value) in str(fe.value)


def test_gelu_bad_approximate_is_an_error():
    with pytest.raises(RuntimeError) as te:
        torch.nn.GELU("foo")(torch.ones(1))
    with pytest.raises(RuntimeError) as fe:
        flow.nn.GELU("foo")(flow.ones(1))
    assert str(fe.value) == "gelu(): " + str(te.value)  # the table op's error names the op
    assert repr(flow.nn.GELU("tanh")) == "GELU(approximate='tanh')"
