"""Mask and advanced-index ops on CUDA against the CPU (the oracle): where / masked_fill
(src/cuda/select.cu), masked_select / nonzero (host copy of the mask), x[idx] / x[mask] /
index_put (src/cuda/index.cu: geometry on the host, Note [Advanced indexing geometry]),
forward and backward. Marker ``cuda``: skipped with the reason where there is no device."""
import numpy as np
import pytest

import oneflow as flow

cuda = pytest.mark.cuda
DEV = "cuda"
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int8", "bool", "complex64"]


def _rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 3
    if dtype == "complex64":
        return flow.tensor((a + 1j * rng.standard_normal(shape)).astype("complex64"))
    if dtype == "bool":
        return flow.tensor(a > 0)
    return flow.tensor(a.astype("float32")).to(getattr(flow, dtype))


def _mask(shape, seed=1):
    return flow.tensor(np.random.default_rng(seed).random(shape) > 0.5)


def _same(got, want):
    assert got.device.type == DEV and got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    if want.dtype == flow.bfloat16:  # numpy has no bfloat16: compare exactly in float32
        got, want = got.float(), want.float()
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_where_broadcast_and_host_scalars(dtype):
    c, x, y = _mask((4, 1, 5)), _rand((3, 5), dtype), _rand((4, 3, 1), dtype, seed=2)
    _same(flow.where(c.to(DEV), x.to(DEV), y.to(DEV)), flow.where(c, x, y))
    # non-contiguous operands, an integral condition (OneFlow: nonzero is true)
    xt = _rand((5, 3), dtype).t()
    ci = flow.tensor(np.random.default_rng(3).integers(0, 3, (3, 5)))
    _same(flow.where(ci.to(DEV), xt.to(DEV), y[0].to(DEV)), flow.where(ci, xt, y[0]))
    if dtype in ("float32", "float64"):
        _same(flow.where(c.to(DEV), x.to(DEV), 0.5), flow.where(c, x, 0.5))
        _same(flow.where(c.to(DEV), 2.0, x.to(DEV)), flow.where(c, 2.0, x))


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_fill_and_in_place(dtype):
    x, m = _rand((6, 7), dtype), _mask((7,))
    v = True if dtype == "bool" else 2.5 if dtype not in ("int64", "int8") else 3
    _same(x.to(DEV).masked_fill(m.to(DEV), v), x.masked_fill(m, v))
    xd = x.to(DEV).t()  # in place into a non-contiguous view
    xd.masked_fill_(m.to(DEV).unsqueeze(1), v)
    want = x.t().clone()
    want.masked_fill_(m.unsqueeze(1), v)
    _same(xd, want)
    # a 0-d value tensor on the host
    _same(x.to(DEV).masked_fill(m.to(DEV), flow.tensor(v)), x.masked_fill(m, flow.tensor(v)))


@cuda
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_masked_select_nonzero_argwhere(dtype):
    x, m = _rand((5, 6), dtype), _mask((6,))
    _same(flow.masked_select(x.to(DEV), m.to(DEV)), flow.masked_select(x, m))
    _same(flow.masked_select(x.to(DEV), flow.zeros(6, dtype=flow.bool, device=DEV)),
          flow.masked_select(x, flow.zeros(6, dtype=flow.bool)))
    _same(flow.nonzero(x.to(DEV)), flow.nonzero(x))
    _same(flow.argwhere(x.to(DEV)), flow.argwhere(x))
    s = flow.tensor(1.0)
    _same(flow.masked_select(s.to(DEV), flow.tensor(True).to(DEV)), flow.masked_select(s, flow.tensor(True)))


INDEXERS = [
    lambda i: (i,),
    lambda i: (slice(None), i),
    lambda i: (i, slice(None), i.flip(0)),  # two index tensors around a slice: not adjacent
    lambda i: (Ellipsis, i),
    lambda i: (i.view(2, 2), 1),
]


@cuda
@pytest.mark.parametrize("k", range(len(INDEXERS)))
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool", "complex64"])
def test_getitem_with_index_tensors(k, dtype):
    x = _rand((4, 5, 4), dtype)
    idx = flow.tensor([3, -1, 0, 2])
    key = INDEXERS[k](idx)
    want = x[key]
    for i in (idx.to(DEV), idx):  # device or host indices
        _same(x.to(DEV)[INDEXERS[k](i)], want)
    _same(x.to(DEV).transpose(0, 2)[key], x.transpose(0, 2)[key])  # a strided self


@cuda
def test_getitem_with_masks_and_errors():
    x, m = _rand((4, 5), "float32"), _mask((4, 5))
    _same(x.to(DEV)[m.to(DEV)], x[m])
    _same(x.to(DEV)[m[:, 0].to(DEV)], x[m[:, 0]])
    with pytest.raises(IndexError, match="out of bounds"):
        x.to(DEV)[flow.tensor([0, 4], device=DEV)]
    # device indices: offsets made on the device (negatives wrapped, broadcast), range-checked there
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 0 with size 4"):
        x.to(DEV)[flow.tensor([0, -5], device=DEV)]
    i, j = flow.tensor([[-1, 2], [0, -4]]), flow.tensor([1, -5])
    _same(x.to(DEV)[i.to(DEV), j.to(DEV)], x[i, j])
    _same(x.to(DEV).t()[j.to(DEV) + 1], x.t()[j + 1])  # a strided self
    y = x.to(DEV)
    y[i.to(DEV), j.to(DEV)] = 7.0
    z = x.clone()
    z[i, j] = 7.0
    _same(y, z)
    with pytest.raises(IndexError):
        x.to(DEV)[flow.zeros(3, 5, dtype=flow.bool, device=DEV)]


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int8", "bool"])
def test_setitem_and_index_put(dtype):
    x = _rand((5, 6), dtype)
    idx = flow.tensor([4, 0, 2])
    v = _rand((3, 6), dtype, seed=4)
    xd = x.to(DEV)
    xd[idx.to(DEV)] = v.to(DEV)
    want = x.clone()
    want[idx] = v
    _same(xd, want)
    xd[:, idx.to(DEV)] = v[0, 0].to(DEV)  # one value, broadcast
    want[:, idx] = v[0, 0]
    _same(xd, want)
    m = _mask((5, 6))
    xd[m.to(DEV)] = v[0, 1].to(DEV)
    want[m] = v[0, 1]
    _same(xd, want)
    if dtype != "int8":
        # accumulate with repeated positions: every value is added (or or-ed for bool)
        rep = flow.tensor([1, 3, 1, 1])
        vals = _rand((4, 6), dtype, seed=5)
        got = flow.index_put(x.to(DEV), (rep.to(DEV),), vals.to(DEV), accumulate=True)
        ref = flow.index_put(x, (rep,), vals, accumulate=True)
        if dtype in ("float16", "bfloat16", "float32", "float64"):
            # the device adds in an unspecified order: rounding may differ
            np.testing.assert_allclose(got.cpu().float().numpy(), ref.float().numpy(), rtol=1e-2, atol=1e-2)
        else:
            _same(got, ref)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_index_and_mask_backward(dtype):
    x = _rand((6, 5), dtype)
    idx, m = flow.tensor([5, 1, 1, 0]), _mask((6, 5))
    g = _rand((4, 5), dtype, seed=6)
    outs = []
    for d in ("cpu", DEV):
        xr = x.detach().clone().to(d).requires_grad_()
        (xr[idx.to(d)] * g.to(d)).sum().backward()
        y = flow.where(m.to(d), xr, xr * 2).masked_fill(m.to(d).flip(0), 0.0)
        y.sum().backward()
        outs.append(xr.grad)
    np.testing.assert_allclose(outs[1].cpu().numpy(), outs[0].numpy(), rtol=1e-6, atol=1e-6)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_searchsorted_bucketize(dtype):
    seq = flow.tensor([[0.0, 1.0, 1.0, 3.0, 7.0], [-2.0, -1.0, 0.5, 2.0, 2.0]]).to(getattr(flow, dtype))
    vals = flow.tensor([[1.0, 7.0, -5.0], [2.0, 0.0, 9.0]]).to(getattr(flow, dtype))
    for right in (False, True):
        _same(flow.searchsorted(seq.to(DEV), vals.to(DEV), right=right), flow.searchsorted(seq, vals, right=right))
        _same(flow.searchsorted(seq[0].to(DEV), vals.to(DEV), right=right, out_int32=True),
              flow.searchsorted(seq[0], vals, right=right, out_int32=True))
        _same(flow.bucketize(vals.to(DEV), seq[1].to(DEV), right=right), flow.bucketize(vals, seq[1], right=right))
    sorter = flow.tensor([[4, 0, 3, 1, 2], [1, 0, 4, 2, 3]])
    shuffled = flow.gather(seq, 1, flow.argsort(sorter, dim=1))
    _same(flow.searchsorted(shuffled.to(DEV), vals.to(DEV), sorter=sorter.to(DEV)),
          flow.searchsorted(shuffled, vals, sorter=sorter))


@cuda
def test_unique_bincount_histc_on_device():
    x = flow.tensor([3, 1, 3, 3, 0, 7, 1])
    for kw in (dict(), dict(return_inverse=True, return_counts=True)):
        got, want = flow.unique(x.to(DEV), **kw), flow.unique(x, **kw)
        for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            _same(a, b)
    _same(flow.bincount(x.to(DEV)), flow.bincount(x))
    w = _rand((7,), "float32")
    _same(flow.bincount(x.to(DEV), w.to(DEV)), flow.bincount(x, w))
    h = _rand((50,), "float32")
    _same(flow.histc(h.to(DEV), bins=6, min=-3, max=3), flow.histc(h, bins=6, min=-3, max=3))


@cuda
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_nd_index_ops_and_repeat_interleave(dtype):
    params = _rand((4, 3, 5), dtype)
    idx = flow.tensor([[1, 2], [3, 0], [1, 2]])  # a repeated row: the scatters add it twice
    upd = _rand((3, 5), dtype, seed=3)
    _same(flow.gather_nd(params.to(DEV), idx.to(DEV)), flow.gather_nd(params, idx))
    _same(flow.gather_nd(params.to(DEV), flow.tensor([[2], [0]], device=DEV)), flow.gather_nd(params, flow.tensor([[2], [0]])))
    if dtype != "bool":
        _same(flow.scatter_nd(idx.to(DEV), upd.to(DEV), [4, 3, 5]), flow.scatter_nd(idx, upd, [4, 3, 5]))
        _same(flow.tensor_scatter_nd_add(params.to(DEV), idx.to(DEV), upd.to(DEV)),
              flow.tensor_scatter_nd_add(params, idx, upd))
    u1 = flow.tensor([[0, 1], [3, 0]])  # update needs distinct rows to be deterministic
    _same(flow.tensor_scatter_nd_update(params.to(DEV), u1.to(DEV), upd[:2].to(DEV)),
          flow.tensor_scatter_nd_update(params, u1, upd[:2]))
    reps = flow.tensor([2, 0, 1, 3])
    _same(flow.repeat_interleave(params.to(DEV), reps.to(DEV), dim=0), flow.repeat_interleave(params, reps, dim=0))
    _same(flow.repeat_interleave(params.to(DEV), 2, dim=1), flow.repeat_interleave(params, 2, dim=1))


@cuda
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_take_index_copy_index_fill_masked_scatter(dtype):
    x = _rand((4, 6), dtype)
    idx = flow.tensor([[0, -1], [23, 5]])
    _same(flow.take(x.to(DEV), idx.to(DEV)), flow.take(x, idx))
    with pytest.raises(IndexError):
        flow.take(x.to(DEV), flow.tensor([24], device=DEV))
    src = _rand((4, 2), dtype, seed=5)
    ci = flow.tensor([5, 1])
    _same(flow.index_copy(x.to(DEV), 1, ci.to(DEV), src.to(DEV)), flow.index_copy(x, 1, ci, src))
    v = True if dtype == "bool" else 7
    _same(x.to(DEV).index_fill(0, flow.tensor([2, 0], device=DEV), v), x.index_fill(0, flow.tensor([2, 0]), v))
    _same(x.to(DEV).index_fill(1, flow.tensor(3, device=DEV), v), x.index_fill(1, flow.tensor(3), v))
    m = _mask((4, 6))
    source = _rand((30,), dtype, seed=6)
    _same(x.to(DEV).masked_scatter(m.to(DEV), source.to(DEV)), x.masked_scatter(m, source))
    _same(x.to(DEV).masked_scatter(m[0].to(DEV), source.to(DEV)), x.masked_scatter(m[0], source))


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "uint8", "int8", "bool"])
def test_scatter_reduce_modes_on_device(dtype, cuda_kernels_only):
    """scatter(reduce='multiply'), scatter_add and scatter_reduce in every mode, out of place and
    in place, with repeated targets (atomic updates: the CPU's values; products of floats within
    rounding of another order)."""
    rng = np.random.default_rng(4)
    self_ = _rand((4, 6), dtype, seed=5)
    src = _rand((4, 5), dtype, seed=6)
    if dtype.startswith("float"):  # small factors keep products in range
        self_ = flow.tensor(rng.uniform(0.5, 1.5, (4, 6)).astype(dtype))
        src = flow.tensor(rng.uniform(0.5, 1.5, (4, 5)).astype(dtype))
    idx = flow.tensor(rng.integers(0, 6, (4, 5)))  # repeats within rows
    tol = {"float16": 2e-3, "float32": 1e-6, "float64": 1e-12}.get(dtype, 0)

    def same(got, want):
        assert got.device.type == DEV and got.dtype == want.dtype
        g, w = got.cpu().numpy(), want.numpy()
        if tol:
            np.testing.assert_allclose(g.astype("float64"), w.astype("float64"), rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(g, w)

    d = [t.to(DEV) for t in (self_, idx, src)]
    if dtype != "bool":
        same(d[0].scatter(1, d[1], d[2], reduce="multiply"), self_.scatter(1, idx, src, reduce="multiply"))
    same(flow.scatter_add(d[0], 1, d[1], d[2]), flow.scatter_add(self_, 1, idx, src))
    modes = ["sum", "prod", "amax", "amin"] + (["mean"] if dtype != "bool" else [])
    for reduce in modes:
        for include_self in (True, False):
            want = self_.scatter_reduce(1, idx, src, reduce, include_self=include_self)
            same(d[0].scatter_reduce(1, d[1], d[2], reduce, include_self=include_self), want)
            inplace = d[0].clone()
            inplace.scatter_reduce_(1, d[1], d[2], reduce, include_self=include_self)
            same(inplace, want)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_take_along_dim_on_device(dtype, cuda_kernels_only):
    """Broadcast indices, negative ones counted from the end, every dim and the flattened form."""
    x = _rand((4, 5, 3), dtype)
    rng = np.random.default_rng(7)
    for dim, ishape in ((0, (2, 5, 3)), (1, (4, 2, 1)), (-1, (1, 5, 4))):
        size = x.shape[dim]
        idx = flow.tensor(rng.integers(-size, size, ishape))
        _same(flow.take_along_dim(x.to(DEV), idx.to(DEV), dim), flow.take_along_dim(x, idx, dim))
    flat = flow.tensor(rng.integers(0, 60, (7,)))
    _same(flow.take_along_dim(x.to(DEV), flat.to(DEV)), flow.take_along_dim(x, flat))
    with pytest.raises(IndexError, match="out of bounds"):
        flow.take_along_dim(x.to(DEV), flow.tensor([[[9]]], device=DEV), 1)


@cuda
def test_one_hot_on_device(cuda_kernels_only):
    """one_hot's CUDA path: the class range from the indices' extremes on the device, on_value
    scattered along the new last dim; the CPU's values, dtypes and errors."""
    F = flow.nn.functional
    idx = flow.tensor([[3, 0, 2], [1, 1, 4]])
    for args in ((), (6,)):
        _same(F.one_hot(idx.to(DEV), *args), F.one_hot(idx, *args))
    _same(F.one_hot(flow.tensor(2).to(DEV), 3), F.one_hot(flow.tensor(2), 3))  # 0-d
    _same(F.one_hot(idx.to(DEV, flow.int32), 5), F.one_hot(idx.to(flow.int32), 5))
    _same(flow._C.one_hot(idx.to(DEV), 5, 1.5, -0.5), flow._C.one_hot(idx, 5, 1.5, -0.5))  # float values
    _same(F.one_hot(flow.zeros(0, dtype=flow.int64, device=DEV), 4), F.one_hot(flow.zeros(0, dtype=flow.int64), 4))
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(flow.tensor([1, -1], device=DEV), 3)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(flow.tensor([1, 3], device=DEV), 3)
    with pytest.raises(RuntimeError, match="empty tensor"):
        F.one_hot(flow.zeros(0, dtype=flow.int64, device=DEV))
