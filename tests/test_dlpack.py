"""DLPack and numpy interop: zero-copy in both directions with torch and numpy (writes are
seen on the other side), dtypes, strides, lifetimes, __array__ per numpy 2, from_numpy."""

import gc

import numpy as np
import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow's DLPack")

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_both_directions(dtype):
    # complex travels with DLPack's complex code (bits = both parts), never as its real half
    x = flow.tensor([[1 + 2j, -3j], [0.5, 4 - 1j]], dtype=getattr(flow, dtype))
    t = torch.from_dlpack(x)
    assert t.dtype == getattr(torch, dtype) and t.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(t.numpy(), x.numpy())
    back = flow.from_dlpack(t[:, 1])
    assert back.dtype == x.dtype and back.stride() == (2,)
    assert back.tolist() == [-3j, 4 - 1j]
    a = np.from_dlpack(x)
    assert a.dtype == np.dtype(dtype) and a[0, 0] == 1 + 2j


@pytest.mark.parametrize("dtype", DTYPES)
def test_flow_to_torch_zero_copy(dtype):
    x = flow.arange(6).reshape(2, 3).to(getattr(flow, dtype))
    t = torch.from_dlpack(x)
    assert t.dtype == getattr(torch, dtype) and tuple(t.shape) == (2, 3)
    assert t.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(t.float().numpy(), x.float().numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_to_flow_zero_copy(dtype):
    t = torch.arange(6).reshape(2, 3).to(getattr(torch, dtype))
    x = flow.from_dlpack(t)
    assert x.dtype == getattr(flow, dtype) and tuple(x.shape) == (2, 3)
    assert x.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(x.float().numpy(), t.float().numpy())


def test_writes_are_shared_and_strides_kept():
    t = torch.arange(12.0).reshape(3, 4).t()[1:]  # non-contiguous, offset
    x = flow.utils.dlpack.from_dlpack(t)
    assert x.stride() == t.stride() and tuple(x.shape) == tuple(t.shape)
    t[0, 0] = -1.0
    assert x[0, 0].item() == -1.0
    x[1, 2] = 99.0
    assert t[1, 2].item() == 99.0
    y = flow.arange(8.0).reshape(2, 4)[:, ::2]
    ty = torch.utils.dlpack.from_dlpack(flow.utils.dlpack.to_dlpack(y))
    assert ty.stride() == (4, 2)
    ty.mul_(10)
    assert y.tolist() == [[0.0, 20.0], [40.0, 60.0]]


def test_numpy_both_directions():
    x = flow.zeros(4)
    a = np.from_dlpack(x)
    a[2] = 5
    assert x.tolist() == [0, 0, 5, 0]
    b = np.arange(4, dtype=np.int64)
    y = flow.from_dlpack(b)
    b[0] = 7
    assert y.tolist() == [7, 1, 2, 3]


def test_lifetimes():
    t = torch.arange(1000.0)
    x = flow.from_dlpack(t)
    del t
    gc.collect()
    assert x.sum().item() == sum(range(1000))
    x2 = flow.arange(5.0)
    t2 = torch.from_dlpack(x2)
    del x2
    gc.collect()
    assert t2.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    cap = flow.utils.dlpack.to_dlpack(flow.ones(3))
    del cap  # an unconsumed capsule frees what it holds
    gc.collect()


def test_capsule_consumed_once_and_errors():
    cap = flow.utils.dlpack.to_dlpack(flow.ones(3))
    flow.utils.dlpack.from_dlpack(cap)
    with pytest.raises(TypeError, match="capsule"):
        flow.utils.dlpack.from_dlpack(cap)
    with pytest.raises(TypeError):
        flow.utils.dlpack.from_dlpack(3)
    with pytest.raises(TypeError, match="dtype"):
        flow.from_dlpack(torch.zeros(2, dtype=torch.uint16))
    with pytest.raises(RuntimeError, match="meta"):
        flow.empty(2, device="meta").__dlpack__()
    assert flow.ones(2).__dlpack_device__() == (1, 0) == tuple(torch.ones(2).__dlpack_device__())


def test_dunder_array_numpy2_protocol():
    x = flow.arange(4.0)
    a = np.asarray(x)
    a[0] = 10
    assert x[0].item() == 10  # no copy by default
    c = np.array(x, copy=True)
    c[1] = -1
    assert x[1].item() == 1
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="copy"):
        np.array(x, dtype=np.float64, copy=False)
    with pytest.raises(ValueError, match="bfloat16"):
        np.array(x.bfloat16(), copy=False)
    np.testing.assert_array_equal(np.asarray(x.bfloat16()), [10, 1, 2, 3])
    r = flow.ones(2, requires_grad=True) * 2
    assert np.asarray(r).tolist() == [2.0, 2.0]


def test_from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = flow.from_numpy(a)
    a[0, 0] = 42
    x[1, 1] = -3
    assert x[0, 0].item() == 42 and a[1, 1] == -3
    t = a.T
    y = flow.from_numpy(t)
    assert y.stride() == (1, 3) and y.tolist() == t.tolist()
