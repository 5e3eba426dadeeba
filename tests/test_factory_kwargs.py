"""Factory arguments upstream OneFlow's tests pass (modules/test_randn.py, test_randn_like.py,
test_randint_like.py, test_global_full_like.py, test_rand.py, test_nonzero.py): layout=, a `_like`
factory's placement= / sbp=, the error class of a random fill of an integer dtype, nonzero's
positional as_tuple. Compared with PyTorch 2.13 where it has the form."""
import numpy as np
import pytest
import torch

import oneflow as flow
from error_cases import raises_like_torch

_FACTORIES = {
    "rand": lambda m, **k: m.rand(2, 3, **k),
    "randn": lambda m, **k: m.randn(2, 3, **k),
    "zeros": lambda m, **k: m.zeros(2, 3, **k),
    "ones": lambda m, **k: m.ones((2, 3), **k),
    "empty": lambda m, **k: m.empty(2, 3, **k),
    "full": lambda m, **k: m.full((2, 3), 1.5, **k),
    "arange": lambda m, **k: m.arange(6, **k),
    "randint": lambda m, **k: m.randint(0, 4, (2, 3), **k),
    "randperm": lambda m, **k: m.randperm(5, **k),
    "eye": lambda m, **k: m.eye(3, **k),
    "linspace": lambda m, **k: m.linspace(0, 1, 4, **k),
    "zeros_like": lambda m, **k: m.zeros_like(m.ones(2, 3), **k),
    "ones_like": lambda m, **k: m.ones_like(m.ones(2, 3), **k),
    "full_like": lambda m, **k: m.full_like(m.ones(2, 3), 7.0, **k),
    "rand_like": lambda m, **k: m.rand_like(m.ones(2, 3), **k),
    "randn_like": lambda m, **k: m.randn_like(m.ones(2, 3), **k),
    "empty_like": lambda m, **k: m.empty_like(m.ones(2, 3), **k),
}


@pytest.mark.parametrize("name", sorted(_FACTORIES))
def test_factories_take_layout_strided_as_torch(name):
    make = _FACTORIES[name]
    t = make(torch, layout=torch.strided)
    f = make(flow, layout=flow.strided)
    assert tuple(f.shape) == tuple(t.shape) and f.layout == flow.strided
    if name not in ("rand", "randn", "randint", "randperm", "empty", "rand_like", "randn_like", "empty_like"):
        np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-6)  # (linspace: 1 ulp apart)
    assert tuple(make(flow, layout=None).shape) == tuple(t.shape)


@pytest.mark.parametrize("name", ["zeros", "randn", "full", "zeros_like"])
def test_layout_that_is_no_layout_is_a_type_error_as_torch(name):
    make = _FACTORIES[name]
    with pytest.raises(TypeError, match="layout"):
        make(torch, layout=1)
    with pytest.raises(TypeError, match=r"argument 'layout' must be oneflow.layout, not int"):
        make(flow, layout=1)


@pytest.mark.parametrize("name,kw", [
    ("randn_like", {}), ("rand_like", {}), ("zeros_like", {}), ("ones_like", {}),
    ("full_like", {"fill_value": 2.5}), ("empty_like", {}),
])
def test_like_factories_make_a_global_tensor_from_a_local_template(name, kw):
    # Upstream OneFlow: flow.randn_like(local, placement=, sbp=) is the global tensor of that
    # layout with the template's shape (and its dtype unless dtype= says otherwise).
    x = flow.randn(4, 2, dtype=flow.float64)
    placement = flow.placement("cpu", [0])
    fill = kw.pop("fill_value", None)
    args = (x,) if fill is None else (x, fill)
    for sbp in (flow.sbp.broadcast, flow.sbp.split(0)):
        y = getattr(flow, name)(*args, placement=placement, sbp=sbp, **kw)
        assert y.is_global and y.placement == placement and y.sbp == (sbp,)
        assert tuple(y.shape) == (4, 2) and y.dtype == flow.float64
        if name in ("zeros_like", "ones_like", "full_like"):
            value = {"zeros_like": 0.0, "ones_like": 1.0, "full_like": fill}[name]
            np.testing.assert_array_equal(y.to_local().numpy(), np.full((4, 2), value))
    with pytest.raises(TypeError, match="needs both placement and sbp"):
        getattr(flow, name)(*args, placement=placement)


def test_randint_like_global_with_dtype():
    x = flow.zeros(3, 5)
    placement = flow.placement("cpu", [0])
    y = flow.randint_like(x, 1, 10, placement=placement, sbp=flow.sbp.broadcast, dtype=flow.int8)
    assert y.is_global and y.dtype == flow.int8 and tuple(y.shape) == (3, 5)
    v = y.to_local().numpy()
    assert v.min() >= 1 and v.max() < 10
    y = flow.randint_like(x, 6, placement=placement, sbp=flow.sbp.split(1))  # (input, high)
    assert y.sbp == (flow.sbp.split(1),) and y.to_local().numpy().max() < 6


@pytest.mark.parametrize("call", [
    lambda m: m.rand(2, 3, dtype=m.int32), lambda m: m.randn(2, dtype=m.int64),
    lambda m: m.empty(3, dtype=m.int32).uniform_(), lambda m: m.empty(3, dtype=m.int32).normal_(),
])
def test_random_fill_of_an_integer_dtype_is_not_implemented_as_torch(call):
    # PyTorch's dispatch raises NotImplementedError (a RuntimeError); upstream's tests expect it.
    with pytest.raises(NotImplementedError):
        call(torch)
    with pytest.raises(NotImplementedError, match="expects a floating point tensor"):
        call(flow)


def test_nonzero_takes_as_tuple_positionally():
    # Upstream OneFlow's nonzero(input, as_tuple=False); PyTorch's keyword form still works.
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], dtype=np.float32)
    f, t = flow.tensor(a), torch.tensor(a)
    for got, want in zip(flow.nonzero(f, True), torch.nonzero(t, as_tuple=True)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for got, want in zip(f.nonzero(True), t.nonzero(as_tuple=True)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(flow.nonzero(f, as_tuple=False).numpy(), torch.nonzero(t).numpy())


@pytest.mark.parametrize("make", [
    lambda m: m.nn.Embedding(10, 3, padding_idx=25), lambda m: m.nn.Embedding(10, 3, padding_idx=-11),
    lambda m: m.nn.EmbeddingBag(10, 3, padding_idx=10), lambda m: m.nn.Embedding(3, 2, _weight=m.ones(2, 2)),
    lambda m: m.nn.functional.embedding(m.tensor([0]), m.ones(3, 2), padding_idx=5),
])
def test_embedding_argument_checks_are_assertion_errors_as_torch(make):
    raises_like_torch(make, AssertionError)


@pytest.mark.parametrize("name,args", [("hann_window", (8,)), ("hamming_window", (7, False)),
                                       ("blackman_window", (6,)), ("bartlett_window", (5,)),
                                       ("kaiser_window", (9, True, 8.0)), ("hann_window", (1,))])
def test_window_functions_take_the_factory_arguments(name, args):
    want = getattr(torch, name)(*args, dtype=torch.float64, layout=torch.strided, pin_memory=False)
    got = getattr(flow, name)(*args, dtype=flow.float64, layout=flow.strided, pin_memory=False)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    # upstream OneFlow's global form: the logical window, laid out as sbp
    placement = flow.placement("cpu", [0])
    for sbp in (flow.sbp.broadcast, flow.sbp.split(0)):
        g = getattr(flow, name)(*args, dtype=flow.float64, placement=placement, sbp=sbp, requires_grad=True)
        assert g.is_global and g.sbp == (sbp,) and g.placement == placement and g.requires_grad
        np.testing.assert_allclose(g.to_local().detach().numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="placement and sbp"):
        getattr(flow, name)(*args, placement=placement)


def test_c_randint_like_takes_upstreams_high_only_form():
    # flow._C.randint_like(x, high, ...): upstream's functional form (an `oneflow:` form of the op)
    x = flow.zeros(40, 5)
    y = flow._C.randint_like(x, 3, device=flow.device("cpu"), dtype=flow.int64)
    assert tuple(y.shape) == (40, 5) and y.dtype == flow.int64
    v = y.numpy()
    assert v.min() >= 0 and v.max() < 3 and len(np.unique(v)) == 3
    v = flow._C.randint_like(x, 7, 9).numpy()
    assert v.min() >= 7 and v.max() < 9
