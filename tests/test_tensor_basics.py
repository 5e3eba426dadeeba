"""Tensor basics: construction, storage sharing, numpy interop, Python
protocol (item/tolist/len/iter), shape/size/device metadata,
indexing, the version counter, seeding, threads and type promotion.

Values are compared with torch (or numpy) computing the same thing. Operators:
tests/test_tensor_operators.py.
"""

import numpy as np
import pytest
import torch

from harness import (
    NP_DTYPE,
    ALL,
    PREFIX,
    SHIM,
    assert_close,
    flow,
    flow_dtype_name,
    flow_to_torch,
    oneflow_only,
    ref_dtype_name,
    to_numpy,
)

# Dtypes numpy can hold natively (no bfloat16), from the shared harness map.
NP_OF = {k: v for k, v in NP_DTYPE.items() if k != "bfloat16"}


def _name(t):
    return flow_dtype_name(t.dtype)


# ---------------------------------------------------------------------------
# construction


def test_Tensor_shape_form():
    x = flow.Tensor(2, 3)
    assert _name(x) == "float32"
    assert tuple(x.shape) == (2, 3)


def test_Tensor_data_form():
    x = flow.Tensor([1, 2])
    assert _name(x) == "float32"
    assert x.tolist() == [1.0, 2.0]
    y = flow.Tensor([[1.5, 2], [3, 4]])
    assert _name(y) == "float32" and tuple(y.shape) == (2, 2)


def test_Tensor_follows_the_default_dtype_as_torch():
    # flow.Tensor(shape) / flow.Tensor(data) take the default dtype; Tensor(float32 tensor) keeps it.
    cases = [lambda lib: lib.Tensor(2, 3), lambda lib: lib.Tensor((2, 3)), lambda lib: lib.Tensor([1, 2]),
             lambda lib: lib.Tensor(), lambda lib: lib.Tensor(lib.ones(2, dtype=lib.float32))]
    try:
        for lib in (flow, torch):
            lib.set_default_dtype(lib.float64)
        got = [_name(make(flow)) for make in cases]
        want = [str(make(torch).dtype).replace("torch.", "") for make in cases]
    finally:
        for lib in (flow, torch):
            lib.set_default_dtype(lib.float32)
    assert got == want == ["float64"] * 4 + ["float32"]
    assert _name(flow.Tensor(2)) == "float32"


def test_set_default_dtype_refuses_non_floating_as_torch():
    with pytest.raises(TypeError) as te:
        torch.set_default_dtype(torch.int32)
    with pytest.raises(TypeError) as fe:
        flow.set_default_dtype(flow.int32)
    assert str(fe.value).startswith(str(te.value)) and "int32" in str(fe.value)
    assert flow.get_default_dtype() == flow.float32


def test_Tensor_empty_form():
    x = flow.Tensor()
    assert _name(x) == "float32" and tuple(x.shape) == (0,)


@pytest.mark.parametrize(
    "data,dtype",
    [
        ([1, 2], "int64"),
        ([1.0, 2.0], "float32"),
        ([1, 2.0], "float32"),
        ([True, False], "bool"),
        (3, "int64"),
        (2.5, "float32"),
        (True, "bool"),
        (((1, 2), (3, 4)), "int64"),
        ([], "float32"),
    ],
    ids=["ints", "floats", "mixed", "bools", "int-scalar", "float-scalar", "bool-scalar", "tuples", "empty"],
)
def test_tensor_infers_dtype(data, dtype):
    x = flow.tensor(data)
    assert _name(x) == dtype
    t = torch.tensor(data)
    assert tuple(x.shape) == tuple(t.shape)
    assert x.tolist() == t.tolist()


@pytest.mark.parametrize("name", list(NP_OF))
def test_tensor_from_numpy_keeps_dtype_and_copies(name):
    a = (np.arange(6) % 3).astype(NP_OF[name]).reshape(2, 3)
    x = flow.tensor(a)
    assert _name(x) == name
    np.testing.assert_array_equal(x.numpy(), a)
    a[0, 0] = 1 if name != "bool" else True
    a[0, 1] = 2 if name != "bool" else False
    # flow.tensor copies: later writes to the array do not show through.
    assert x.numpy()[0, 0] == 0 and x.numpy()[0, 1] == (1 if name != "bool" else True)


def test_tensor_from_numpy_scalar_and_explicit_dtype():
    x = flow.tensor(np.float64(1.5))
    assert _name(x) == "float64" and tuple(x.shape) == ()
    y = flow.tensor([1, 2], dtype=flow.float64)
    assert _name(y) == "float64" and y.tolist() == [1.0, 2.0]
    z = flow.tensor([1.7, -1.7], dtype=flow.int32)
    assert _name(z) == "int32" and z.tolist() == [1, -1]


def test_dtype_objects():
    assert flow.float is flow.float32
    assert flow.double is flow.float64
    assert flow.half is flow.float16
    assert flow.long is flow.int64
    assert flow.int is flow.int32
    for n in ALL:
        assert str(getattr(flow, n)) == f"{PREFIX}.{n}"
    assert flow.float32.is_floating_point and flow.bfloat16.is_floating_point
    assert not flow.int64.is_floating_point and not flow.bool.is_floating_point


# ---------------------------------------------------------------------------
# storage sharing


def _base():
    return flow.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))


VIEWS = {
    "int": lambda x: x[1],
    "slice": lambda x: x[:, 1:3],
    "step": lambda x: x[::2],
    "ellipsis": lambda x: x[..., 1],
    "none": lambda x: x[None],
    "view-flat": lambda x: x.view(12),
    "view-2d": lambda x: x.view(4, 3),
    "reshape": lambda x: x.reshape(2, 6),
    "flatten": lambda x: x.flatten(),
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x.unsqueeze(1).squeeze(1),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "split": lambda x: x.split(2, dim=1)[1],
    "chunk": lambda x: x.chunk(3)[2],
    "contiguous-of-contiguous": lambda x: x.contiguous(),
    "expand": lambda x: x[1].expand(2, 4),
}


@pytest.mark.parametrize("key", list(VIEWS))
def test_views_share_storage(key):
    x = _base()
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    v, tv = VIEWS[key](x), VIEWS[key](t)
    assert tuple(v.shape) == tuple(tv.shape)
    assert tuple(v.stride()) == tuple(tv.stride()), "view strides differ from torch's"
    # write through the view (in-place op), read through the base; an
    # expanded view has overlapping elements, so writing to it is refused.
    if key != "expand":
        v.add_(100)
        tv.add_(100)
        np.testing.assert_array_equal(x.numpy(), t.numpy())
    # write through the base, read through the view
    x.mul_(2)
    t.mul_(2)
    np.testing.assert_array_equal(to_numpy(v), tv.numpy())


def test_inplace_on_expanded_view_is_refused():
    x = flow.zeros(4)
    with pytest.raises(RuntimeError):
        x.expand(3, 4).add_(1)


def test_setitem_on_view_reaches_base():
    x = _base()
    v = x[1:, ::2]
    v[0, 1] = -5.0
    assert x[1, 2].item() == -5.0


@pytest.mark.parametrize(
    "make_copy",
    [lambda x: x.clone(), lambda x: x.transpose(0, 1).contiguous(), lambda x: x.transpose(0, 1).reshape(12),
     lambda x: x[[0, 2]], lambda x: x[x > 3], lambda x: x + 0],
    ids=["clone", "contiguous-of-transposed", "reshape-of-transposed", "advanced-index", "mask", "add"],
)
def test_copies_do_not_share_storage(make_copy):
    x = _base()
    c = make_copy(x)
    before = to_numpy(c).copy()
    x.add_(1000)
    np.testing.assert_array_equal(to_numpy(c), before)


def test_copy_from_numpy_array_as_oneflow():
    # OneFlow's Tensor.copy_ takes a numpy array (torch's wants a tensor: the reference copies
    # torch.from_numpy of it); the values are cast to the destination and broadcast.
    a = np.arange(6, dtype=np.float64).reshape(2, 3) - 2.5
    f, t = flow.zeros(2, 3), torch.zeros(2, 3)
    assert f.copy_(a) is f
    t.copy_(torch.from_numpy(a))
    assert f.dtype == flow.float32
    assert_close(f, t)
    fv, tv = flow.zeros(3, 2).t(), torch.zeros(3, 2).t()  # a non-contiguous destination
    fv.copy_(a[0]), tv.copy_(torch.from_numpy(a[0]))  # broadcast row
    assert_close(fv, tv)
    fi, ti = flow.zeros(2, 3, dtype=flow.int64), torch.zeros(2, 3, dtype=torch.int64)
    fi.copy_(a[:, ::-1].copy()), ti.copy_(torch.from_numpy(a[:, ::-1].copy()))
    assert_close(fi, ti)
    p = flow.nn.Parameter(flow.zeros(3))
    with flow.no_grad():
        p.copy_(np.ones(3, dtype=np.float32))
    assert p.tolist() == [1.0, 1.0, 1.0] and p.requires_grad
    with pytest.raises(RuntimeError):
        torch.zeros(2, 3).copy_(torch.from_numpy(np.ones(4)))
    with pytest.raises(RuntimeError, match="copy_"):
        flow.zeros(2, 3).copy_(np.ones(4))


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = flow.from_numpy(a)
    assert _name(t) == "float64" and tuple(t.shape) == (2, 3)
    a[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    t.add_(1)
    assert a[1, 2] == 6.0 and a[0, 0] == 101.0


def test_read_only_arrays():
    """np.frombuffer's arrays are read-only: flow.tensor copies them (as torch.tensor);
    from_numpy shares them with a UserWarning (as torch.from_numpy)."""
    a = np.frombuffer(np.arange(4, dtype=np.float32).tobytes(), np.float32)
    assert not a.flags.writeable
    t = flow.tensor(a)
    np.testing.assert_array_equal(to_numpy(t), [0, 1, 2, 3])
    t.add_(1)  # its own memory
    assert a[0] == 0
    with pytest.warns(UserWarning, match="not writable"):
        s = flow.from_numpy(a)
    np.testing.assert_array_equal(to_numpy(s), a)
    np.testing.assert_array_equal(to_numpy(flow.tensor(np.broadcast_to(np.arange(3.0), (2, 3)))),
                                  np.broadcast_to(np.arange(3.0), (2, 3)))


@pytest.mark.parametrize("name", list(NP_OF))
def test_from_numpy_dtypes(name):
    a = (np.arange(4) % 2).astype(NP_OF[name])
    t = flow.from_numpy(a)
    assert _name(t) == name
    np.testing.assert_array_equal(t.numpy(), a)


def test_from_numpy_strided_array():
    a = np.arange(20, dtype=np.int64).reshape(4, 5)
    v = a[:, ::2]
    t = flow.from_numpy(v)
    np.testing.assert_array_equal(t.numpy(), v)
    a[0, 2] = -1
    assert t[0, 1].item() == -1


def test_numpy_of_contiguous_tensor_shares_memory():
    t = flow.zeros(2, 3)
    n = t.numpy()
    n[0, 1] = 5.0
    assert t[0, 1].item() == 5.0
    t.add_(1)
    assert n[1, 2] == 1.0 and n[0, 1] == 6.0


def test_numpy_of_non_contiguous_tensor_has_right_values():
    t = flow.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    np.testing.assert_array_equal(t.transpose(0, 1).numpy(), np.arange(12, dtype=np.float32).reshape(3, 4).T)
    np.testing.assert_array_equal(t[:, ::2].numpy(), np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2])


@pytest.mark.parametrize("name", list(NP_OF))
def test_numpy_dtype_mapping(name):
    t = flow.zeros(2, dtype=getattr(flow, name))
    assert t.numpy().dtype == np.dtype(NP_OF[name])


# ---------------------------------------------------------------------------
# Python protocol


@pytest.mark.parametrize(
    "data,dtype,pytype",
    [(2.5, "float32", float), (-3, "int64", int), (True, "bool", bool), (7, "uint8", int),
     (0.5, "float16", float), (1.25, "float64", float), (2, "int8", int), (-1, "int32", int),
     (1.5, "bfloat16", float)],
)
def test_item(data, dtype, pytype):
    x = flow.tensor(data, dtype=getattr(flow, dtype))
    v = x.item()
    assert type(v) is pytype and v == data
    assert flow.tensor([data], dtype=getattr(flow, dtype)).item() == data  # one-element 1-d
    assert flow.tensor([[data]], dtype=getattr(flow, dtype)).item() == data


def test_tolist():
    assert flow.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    r = flow.tensor([[1.5], [2.5]]).tolist()
    assert r == [[1.5], [2.5]] and type(r[0][0]) is float
    assert flow.tensor([True, False]).tolist() == [True, False]
    assert type(flow.tensor([True]).tolist()[0]) is bool
    assert flow.tensor(3).tolist() == 3
    assert flow.zeros(0, 2).tolist() == []
    assert flow.tensor(np.arange(6).reshape(2, 3)).transpose(0, 1).tolist() == [[0, 3], [1, 4], [2, 5]]


def test_python_number_conversions():
    assert float(flow.tensor([2.5])) == 2.5
    assert int(flow.tensor(7)) == 7
    assert bool(flow.tensor([1])) is True
    assert bool(flow.tensor(0.0)) is False


def test_len_and_iteration():
    x = flow.tensor(np.arange(6).reshape(3, 2))
    assert len(x) == 3
    rows = [r.tolist() for r in x]
    assert rows == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(TypeError):
        len(flow.tensor(1))


def test_shape_size_and_friends():
    x = flow.zeros(2, 3)
    assert isinstance(x.shape, flow.Size) and isinstance(x.shape, tuple)
    assert x.shape == (2, 3)
    assert x.size() == x.shape and isinstance(x.size(), flow.Size)
    assert x.size(1) == 3 and x.size(-1) == 3 and x.size(0) == 2
    assert x.ndim == 2 and x.dim() == 2
    assert x.numel() == 6
    assert x.dtype is flow.float32
    assert flow.zeros(()).shape == () and flow.zeros(()).ndim == 0 and flow.zeros(()).numel() == 1
    assert flow.zeros(0, 3).numel() == 0


def test_size_type():
    s = flow.zeros(2, 3).shape
    assert repr(s) == f"{PREFIX}.Size([2, 3])"
    assert repr(flow.zeros(()).shape) == f"{PREFIX}.Size([])"
    assert isinstance(s[0:1], flow.Size) and s[0:1] == (2,)
    assert s[-1] == 3 and isinstance(s[-1], int)
    assert s.numel() == 6
    assert list(s) == [2, 3]
    a, b = s
    assert (a, b) == (2, 3)
    assert flow.Size([4, 5]) == (4, 5)
    assert flow.zeros(flow.Size([4, 5])).shape == (4, 5)


@oneflow_only  # torch prints device(type='cpu') without an index
def test_device_repr():
    x = flow.zeros(2)
    assert repr(x.device) == "device(type='cpu', index=0)"
    assert x.device.type == "cpu"
    assert repr(flow.device("cpu")) == "device(type='cpu', index=0)"


def test_device_type():
    assert flow.zeros(2).device.type == "cpu"
    assert flow.zeros(2).device == flow.device("cpu")


@oneflow_only
def test_repr_uses_oneflow_names():
    assert repr(flow.tensor([1.0, 2.0])) == "tensor([1., 2.], dtype=oneflow.float32)"
    assert repr(flow.tensor([1, 2])) == "tensor([1, 2], dtype=oneflow.int64)"


def test_stride_and_contiguity_match_torch():
    for make in (
        lambda lib: lib.zeros(2, 3, 4),
        lambda lib: lib.zeros(2, 3, 4).transpose(0, 2),
        lambda lib: lib.zeros(4, 6)[::2, 1::3],
        lambda lib: lib.zeros(3, 1).expand(3, 5),
        lambda lib: lib.zeros(()),
        lambda lib: lib.zeros(5, 1).transpose(0, 1),
    ):
        f, t = make(flow), make(torch)
        assert tuple(f.stride()) == tuple(t.stride())
        assert f.is_contiguous() == t.is_contiguous(), tuple(t.shape)


# ---------------------------------------------------------------------------
# indexing


def _x(lib):
    return lib.arange(120, dtype=lib.float32).reshape(4, 5, 6)


def _t(lib, v, dt="int64"):
    return lib.tensor(v, dtype=getattr(lib, dt))


# Each index builder takes (lib, x) so masks can be computed from x.
GETITEM = {
    "int": lambda lib, x: 1,
    "neg-int": lambda lib, x: -1,
    "ints": lambda lib, x: (1, 2),
    "neg-ints": lambda lib, x: (-1, -2, -3),
    "slice": lambda lib, x: slice(1, 3),
    "slice-step": lambda lib, x: slice(None, None, 2),
    "slices-steps": lambda lib, x: (slice(None), slice(1, None, 2), slice(0, 5, 3)),
    "neg-slice": lambda lib, x: slice(-3, -1),
    "empty-slice": lambda lib, x: slice(3, 1),
    "out-of-range-slice": lambda lib, x: slice(10, 20),
    "none": lambda lib, x: None,
    "none-mid": lambda lib, x: (1, None, slice(None)),
    "none-ellipsis-none": lambda lib, x: (None, Ellipsis, None),
    "ellipsis-int": lambda lib, x: (Ellipsis, 1),
    "int-ellipsis": lambda lib, x: (1, Ellipsis),
    "ellipsis-slice-int": lambda lib, x: (Ellipsis, slice(None, None, 2), 0),
    "zero-d-int-tensor": lambda lib, x: _t(lib, 2),
    "mask-full": lambda lib, x: x > 50,
    "mask-first-dim": lambda lib, x: _t(lib, [True, False, True, True], "bool"),
    "mask-two-dims": lambda lib, x: (x.sum(-1) > 300),
    "mask-after-slice": lambda lib, x: (slice(None), _t(lib, [True, False, True, False, True], "bool")),
    "int-tensor": lambda lib, x: _t(lib, [0, 2, 3]),
    "int-list": lambda lib, x: [0, 2],
    "neg-int-list": lambda lib, x: [-1, 0],
    "2d-index-tensor": lambda lib, x: _t(lib, [[0, 1], [2, 3]]),
    "int32-index": lambda lib, x: _t(lib, [3, 1], "int32"),
    "adv-slice-int": lambda lib, x: (_t(lib, [0, 2]), slice(None), 1),
    "slice-adv-adv-adjacent": lambda lib, x: (slice(None), [0, 2], [1, 3]),
    "adv-slice-adv-separated": lambda lib, x: ([0, 2], slice(None), [1, 3]),
    "int-then-adv": lambda lib, x: (1, [0, 2]),
    "ellipsis-adv": lambda lib, x: (Ellipsis, [0, 1]),
    "broadcast-adv": lambda lib, x: (_t(lib, [[0], [1]]), _t(lib, [1, 2, 3])),
    "adv-with-step-slice": lambda lib, x: (slice(None, None, 2), _t(lib, [4, 0])),
    "zero-size-adv": lambda lib, x: _t(lib, [], "int64"),
}
BASIC = {
    "int", "neg-int", "ints", "neg-ints", "slice", "slice-step", "slices-steps", "neg-slice", "empty-slice",
    "out-of-range-slice", "none", "none-mid", "none-ellipsis-none", "ellipsis-int", "int-ellipsis",
    "ellipsis-slice-int", "zero-d-int-tensor",
}


@pytest.mark.parametrize("key", list(GETITEM))
def test_getitem(key):
    fx, tx = _x(flow), _x(torch)
    got = fx[GETITEM[key](flow, fx)]
    want = tx[GETITEM[key](torch, tx)]
    assert_close(got, want, what=key)
    if key in BASIC and got.numel() > 0:
        # basic indexing gives a view: writes reach the base
        got.add_(1000)
        want.add_(1000)
        np.testing.assert_array_equal(fx.numpy(), tx.numpy())


SETITEM = {
    "int-scalar": (lambda lib, x: 0, lambda lib: 1.5),
    "neg-ints-scalar": (lambda lib, x: (-1, -1, -1), lambda lib: 9.0),
    "slice-broadcast-tensor": (lambda lib, x: (slice(None), 1),
                               lambda lib: lib.arange(6, dtype=lib.float32)),
    "ellipsis-step": (lambda lib, x: (Ellipsis, slice(None, None, 2)), lambda lib: 0.0),
    "mask": (lambda lib, x: x > 60, lambda lib: -1.0),
    "mask-tensor-value": (lambda lib, x: x < 3, lambda lib: lib.tensor([7.0, 8.0, 9.0])),
    "int-list": (lambda lib, x: [0, 2], lambda lib: 7.0),
    "adv-slice-adv": (lambda lib, x: (_t(lib, [0, 1]), slice(None), _t(lib, [2, 3])),
                      lambda lib: lib.arange(5, dtype=lib.float32)),
    "none-int": (lambda lib, x: (slice(1, 3), None, 2), lambda lib: 4.0),
    "mask-first-dim": (lambda lib, x: _t(lib, [True, False, False, True], "bool"), lambda lib: 0.5),
    "int-tensor-value-cast": (lambda lib, x: 3, lambda lib: lib.tensor(3)),
    "full-slice": (lambda lib, x: slice(None), lambda lib: lib.zeros(6)),
    "zero-d-index": (lambda lib, x: _t(lib, 1), lambda lib: 2.0),
}


@pytest.mark.parametrize("key", list(SETITEM))
def test_setitem(key):
    idx, val = SETITEM[key]
    fx, tx = _x(flow), _x(torch)
    v0 = fx._version
    fx[idx(flow, fx)] = val(flow)
    tx[idx(torch, tx)] = val(torch)
    assert_close(fx, tx, what=key)
    assert fx._version > v0, "__setitem__ did not bump the version counter"


def test_setitem_on_int_tensor_casts_float_value():
    f = flow.tensor([1, 2, 3])
    t = torch.tensor([1, 2, 3])
    f[0] = 2.7
    t[0] = 2.7
    assert f.tolist() == t.tolist()


# ---------------------------------------------------------------------------
# version counter


def test_version_counter():
    x = flow.zeros(3)
    v0 = x._version
    x.add_(1)
    assert x._version > v0
    v1 = x._version
    y = x + 1  # out-of-place: no bump
    assert x._version == v1 and y is not x
    x.mul_(2)
    assert x._version > v1


def test_version_counter_shared_by_views():
    x = flow.zeros(2, 3)
    v = x[0]
    before = x._version
    v.add_(1)
    assert x._version > before and v._version == x._version


# ---------------------------------------------------------------------------
# seeding and threads


def test_manual_seed_reproducible():
    flow.manual_seed(7)
    a = flow.rand(5).numpy().copy()
    b = flow.randn(3).numpy().copy()
    flow.manual_seed(7)
    np.testing.assert_array_equal(flow.rand(5).numpy(), a)
    np.testing.assert_array_equal(flow.randn(3).numpy(), b)
    flow.manual_seed(8)
    assert not np.array_equal(flow.rand(5).numpy(), a)


def test_num_threads():
    orig = flow.get_num_threads()
    assert isinstance(orig, int) and orig >= 1
    try:
        x = flow.tensor(np.arange(100000, dtype=np.float64))
        flow.set_num_threads(1)
        assert flow.get_num_threads() == 1
        s1 = x.sum().item()
        flow.set_num_threads(2)
        assert flow.get_num_threads() == 2
        assert x.sum().item() == s1  # exact: integers in float64
    finally:
        flow.set_num_threads(orig)
    assert flow.get_num_threads() == orig


# ---------------------------------------------------------------------------
# type promotion


def _promoted(lib, a, b, b_shape=(2,)):
    x = lib.ones(2, dtype=getattr(lib, a))
    y = lib.ones(b_shape, dtype=getattr(lib, b))
    return x + y


@pytest.mark.parametrize("a", ALL)
def test_promotion_table(a):
    """(a + b).dtype for every pair, tensor with tensor: torch's table."""
    wrong = []
    for b in ALL:
        want = ref_dtype_name(_promoted(torch, a, b).dtype)
        got = _name(_promoted(flow, a, b))
        if got != want:
            wrong.append(f"{a}+{b}: {got} (want {want})")
    assert not wrong, wrong


@pytest.mark.parametrize("a", ALL)
def test_promotion_with_zero_dim_tensors(a):
    """A 0-d tensor only decides the dtype when it is of a higher category
    (bool < int < float) than the dimensioned operand, as in torch."""
    wrong = []
    for b in ALL:
        want = ref_dtype_name(_promoted(torch, a, b, ()).dtype)
        got = _name(_promoted(flow, a, b, ()))
        if got != want:
            wrong.append(f"{a}+{b}(0-d): {got} (want {want})")
    assert not wrong, wrong


@pytest.mark.parametrize("a", ALL)
def test_promotion_with_python_scalars(a):
    wrong = []
    for s in (True, 2, 2.5):
        for side in ("right", "left"):
            x = flow.ones(2, dtype=getattr(flow, a))
            t = torch.ones(2, dtype=getattr(torch, a))
            got = _name(x + s if side == "right" else s + x)
            want = ref_dtype_name((t + s if side == "right" else s + t).dtype)
            if got != want:
                wrong.append(f"{a} {side} {s!r}: {got} (want {want})")
    assert not wrong, wrong


def test_promotion_examples_from_spec():
    assert _name(flow.tensor([1, 2]) + 2.5) == "float32"
    assert _name(flow.ones(2, dtype=flow.float16) + 2) == "float16"
    assert _name(flow.tensor([True]) + True) == "bool"
    assert _name(flow.ones(2, dtype=flow.uint8) + flow.ones(2, dtype=flow.int8)) == "int16"  # (as PyTorch)
    assert _name(flow.ones(2, dtype=flow.int8) + flow.ones(2, dtype=flow.uint8)) == "int16"  # (as PyTorch)
    assert _name(flow.ones(2, dtype=flow.bfloat16) + flow.ones(2, dtype=flow.float16)) == "float32"
    assert _name(flow.ones(2, dtype=flow.int32) * 2.5) == "float32"
    assert _name(flow.ones(2, dtype=flow.int64) / 2) == "float32"


def test_uint8_int8_values_in_int32():
    a = flow.tensor([200, 0], dtype=flow.uint8)
    b = flow.tensor([-100, -5], dtype=flow.int8)
    assert (a + b).tolist() == [100, -5]
    assert (a * b).tolist() == [-20000, 0]


# ---------------------------------------------------------------------------
# functional exposure


@pytest.mark.parametrize("name", ["gelu", "silu", "relu"])
def test_nn_functional_exposure(name):
    x = np.linspace(-3, 3, 7).astype(np.float32)
    got = getattr(flow.nn.functional, name)(flow.tensor(x))
    want = getattr(torch.nn.functional, name)(torch.tensor(x))
    assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert_close(getattr(flow.tensor(x), name)(), want, rtol=1e-5, atol=1e-6)


def test_flow_to_torch_helper_roundtrip():
    """Harness self-check (bfloat16 survives the numpy trip)."""
    x = flow.tensor([1.5, -2.0]).to(flow.bfloat16)
    t = flow_to_torch(x)
    assert t.dtype == torch.bfloat16 and t.tolist() == [1.5, -2.0]
    assert SHIM in ("", "torch")
