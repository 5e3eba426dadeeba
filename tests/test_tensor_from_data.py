"""flow.tensor / flow.Tensor / as_tensor from Python data against torch.tensor: the inferred
dtype, the values, the shape, every target dtype, and the errors (Note [Tensors from Python data]:
nested lists of Python numbers take a C++ path, everything else the numpy one)."""
import enum

import numpy as np
import pytest
import torch

from harness import SHIM, flow

DATA = {
    "floats": [1.0, 2.5, -3.25],
    "ints": [1, 2, -3],
    "bools": [True, False],
    "bool+int": [True, 2],
    "int+float": [1, 2.5],
    "complex": [1 + 2j, 3],
    "empty": [],
    "empty rows": [[], []],
    "matrix": [[1, 2], [3, 4]],
    "tuples": ((1.5, 2.0), (3.0, 4.0)),
    "mixed list/tuple": [(1, 2), [3, 4]],
    "3d": [[[1.0, 2.0]], [[3.0, 4.0]]],
    "float scalar": 3.5,
    "int scalar": 7,
    "bool scalar": True,
    "complex scalar": 2j,
    "large int": [2 ** 62, -(2 ** 62)],
    "huge float": [1e300, -1e300],
    "nan inf": [float("nan"), float("inf"), -float("inf")],
    "negative ints": [-1, -128, 255],
    "fractions": [0.5, 1.5, 127.0],
}
DTYPES = [None, "float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64",
          "bool", "complex64", "complex128"]


def _both(data, dtype):
    out = []
    for lib in (flow, torch):
        try:
            out.append(lib.tensor(data, dtype=None if dtype is None else getattr(lib, dtype)))
        except (RuntimeError, TypeError, ValueError) as e:
            out.append(type(e))
    return out


def _values(t):
    return (t.float() if str(t.dtype).endswith("bfloat16") else t).numpy()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(DATA))
def test_tensor_from_python_data_as_torch(name, dtype):
    f, t = _both(DATA[name], dtype)
    if isinstance(t, type):  # torch refuses: so must we, with the same exception type
        assert f is t, (f, t)
        return
    assert not isinstance(f, type), f
    assert str(f.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(f.shape) == tuple(t.shape)
    np.testing.assert_array_equal(_values(f), _values(t))


def test_default_dtype_governs_python_floats():
    prev = flow.get_default_dtype()
    try:
        flow.set_default_dtype(flow.float64)
        assert flow.tensor([1.5]).dtype == flow.float64
        assert flow.tensor([1j]).dtype == flow.complex128
        assert flow.tensor([1]).dtype == flow.int64
    finally:
        flow.set_default_dtype(prev)
    assert flow.tensor([1.5]).dtype == flow.float32 and flow.tensor([1j]).dtype == flow.complex64


def test_overflow_and_complex_errors_name_the_problem():
    with pytest.raises(RuntimeError, match="cannot be converted to type int8 without overflow"):
        flow.tensor([300], dtype=flow.int8)
    with pytest.raises(RuntimeError, match="uint8 without overflow"):
        flow.tensor([-0.5], dtype=flow.uint8)
    with pytest.raises(RuntimeError, match="int64 without overflow"):
        flow.tensor([float("nan")], dtype=flow.int64)
    with pytest.raises(TypeError, match="not complex"):
        flow.tensor([1 + 1j], dtype=flow.float32)
    assert flow.tensor([-1], dtype=flow.uint8).tolist() == [255]  # wraps, as PyTorch


class _Color(enum.IntEnum):
    RED = 1
    BLUE = 2


@pytest.mark.filterwarnings("ignore:Creating a tensor from a list of numpy")
@pytest.mark.parametrize("data", [
    [np.float32(1.5), 2.0], [np.float64(1.5), 2.0], [np.int64(3), 4], [np.int32(3), 4],
    [np.float32(1), np.int64(2)], [_Color.RED, _Color.BLUE], [flow.tensor(1.0), flow.tensor(2.0)],
    np.float64(2.5), [np.array([1.0, 2.0]), [3.0, 4.0]], [np.array([1, 2], dtype=np.int32), [3, 4]],
], ids=["numpy float32", "numpy float64", "numpy int", "numpy int32", "numpy float32+int64",
        "int enum", "tensors", "numpy scalar", "arrays in list", "int32 array in list"])
def test_other_python_data_takes_the_numpy_path(data):
    ref = torch.tensor(data if not isinstance(data, list) or not isinstance(data[0], flow.Tensor)
                       else [torch.tensor(x.item()) for x in data])
    got = flow.tensor(data)
    assert str(got.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


@pytest.mark.parametrize("bad,exc", [
    ([[1, 2], [3]], ValueError), ([1, "a"], ValueError), ([[1], 2], TypeError), ([object()], RuntimeError),
    ([np.uint64(1), 2], TypeError),
])
def test_bad_data_raises(bad, exc):
    with pytest.raises(exc):
        flow.tensor(bad)


def test_tensor_from_list_is_a_fresh_tensor_with_options():
    t = flow.tensor([[1.0, 2.0]], requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad is None
    (t * 2).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [[2.0, 2.0]])
    assert flow.Tensor([1, 2]).dtype == flow.float32  # the Tensor constructor: float32
    np.testing.assert_array_equal(flow.as_tensor([3, 4]).numpy(), [3, 4])


@pytest.mark.skipif(bool(SHIM), reason="oneflow's internal fast path")
def test_fast_path_declines_what_it_does_not_read():
    from oneflow import _oneflow_internal as _C
    assert _C._tensor_from_data([1.0, 2.0]) is not None
    for data in ([np.float32(1)], [[1, 2], [3]], [2 ** 64], "ab", [[1], 2]):
        assert _C._tensor_from_data(data) is None


@pytest.mark.skipif(bool(SHIM), reason="OneFlow's Tensor constructor options (not torch's)")
def test_Tensor_constructor_oneflow_options():
    """flow.Tensor's OneFlow-only options: data_initializer fills a tensor made from a shape
    (the legacy initializers); tensors are made at once, so every one is determined; a global
    tensor is refused with a pointer to flow.tensor / the factories, not silently made local."""
    t = flow.Tensor(2, 3, data_initializer=flow.constant_initializer(2.5))
    assert t.dtype == flow.float32 and t.tolist() == [[2.5] * 3] * 2
    d = flow.DoubleTensor((4,), data_initializer=flow.ones_initializer())
    assert d.dtype == flow.float64 and d.tolist() == [1.0] * 4
    flow.manual_seed(0)
    r = flow.Tensor(1000, data_initializer=flow.random_uniform_initializer(-2.0, -1.0))
    assert -2.0 <= float(r.min()) and float(r.max()) < -1.0 and float(r.std()) > 0.2
    z = flow.Tensor(2, 2, is_lazy=False, determining_initializer=None)
    assert z.is_determined and z.determine() is z and z.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert flow.tensor([1.0]).is_determined
    with pytest.raises(TypeError, match="data_initializer fills a tensor made from a shape"):
        flow.Tensor([1.0, 2.0], data_initializer=flow.ones_initializer())
    with pytest.raises(TypeError, match="data_initializer must be an initializer"):
        flow.Tensor(2, data_initializer=3.0)
    for kw in (dict(placement=flow.placement("cpu", ranks=[0])), dict(sbp=flow.sbp.broadcast),
               dict(is_consistent=True)):
        with pytest.raises(TypeError, match=r"Tensor\(\): placement / sbp / is_consistent make a global tensor"):
            flow.Tensor(2, 3, **kw)
