"""flow.int16 (flow.short): the dtype itself, its conversions (numpy, torch through DLPack, casts
from and to every dtype), promotion, the kernels of each family on int16 data (arithmetic with
wrap-around, comparison, reduction, scan, sort, indexing) and saving. Every value is compared
with torch computing the same thing; the op families' generic tests (tests/opinfo) cover int16
through the harness's integer dtype lists as well.
"""

import pickle

import numpy as np
import pytest
import torch

from harness import ALL, assert_close, flow, oneflow_only

I16 = np.iinfo(np.int16)


def _pair(values, dtype="int16"):
    a = np.asarray(values)
    return flow.tensor(a, dtype=getattr(flow, dtype)), torch.tensor(a, dtype=getattr(torch, dtype))


def _same(got, want):
    """Same dtype name, shape and values (exact for integers)."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    assert_close(got, want)


def _wrapping(rng, shape=(3, 5)):
    # the whole range, ends included: results wrap as C's int16 arithmetic in both frameworks
    v = rng.integers(I16.min, I16.max + 1, size=shape).astype(np.int16)
    v.flat[0], v.flat[1] = I16.min, I16.max
    return v


# ---------------------------------------------------------------------------
# the dtype


def test_dtype_object():
    d = flow.int16
    assert flow.short is d and isinstance(d, flow.dtype)
    assert repr(d) == "oneflow.int16" and d.itemsize == 2
    assert d.is_signed and not d.is_floating_point and not d.is_complex
    assert pickle.loads(pickle.dumps(d)) is d
    info = flow.iinfo(flow.int16)
    assert (info.bits, info.min, info.max) == (16, -32768, 32767)
    # the dtypes that existed before keep their numbers (hash is the DType number: saved programs)
    assert [hash(t) for t in (flow.bool, flow.int8, flow.uint8, flow.int32)] == [0, 1, 2, 3]


def test_tensor_short_and_type_names():
    x = flow.tensor([1.7, -2.2, 40000.0])
    t = torch.tensor([1.7, -2.2, 40000.0])
    _same(x[:2].short(), t[:2].short())
    assert x.short().dtype == flow.int16
    assert x.short().type() == "oneflow.ShortTensor"
    assert isinstance(flow.ones(2, dtype=flow.int16), flow.ShortTensor)
    assert flow.ShortTensor([1, 2]).dtype == flow.int16


def test_factories():
    for name in ("zeros", "ones", "empty"):
        y = getattr(flow, name)(2, 3, dtype=flow.int16)
        assert y.dtype == flow.int16 and tuple(y.shape) == (2, 3)
    _same(flow.full((2, 2), -7, dtype=flow.short), torch.full((2, 2), -7, dtype=torch.short))
    _same(flow.arange(-5, 5, 2, dtype=flow.int16), torch.arange(-5, 5, 2, dtype=torch.int16))
    _same(flow.tensor([[1, -2], [3, 4]], dtype=flow.int16), torch.tensor([[1, -2], [3, 4]], dtype=torch.int16))
    # Python data outside the range is PyTorch's error, naming the dtype
    with pytest.raises(RuntimeError, match="int16"):
        flow.tensor([1, 40000], dtype=flow.int16)
    r = flow.randint(-300, 300, (1000,), dtype=flow.int16)
    assert r.dtype == flow.int16 and -300 <= int(r.min()) and int(r.max()) < 300
    p = flow.randperm(100, dtype=flow.int16)
    assert p.dtype == flow.int16 and sorted(p.tolist()) == list(range(100))


# ---------------------------------------------------------------------------
# conversions


def test_numpy_round_trip():
    a = np.array([[-32768, 0, 32767], [5, -6, 7]], dtype=np.int16)
    x = flow.tensor(a)
    assert x.dtype == flow.int16 and x.tolist() == a.tolist()
    assert x.numpy().dtype == np.int16
    np.testing.assert_array_equal(x.numpy(), a)
    shared = flow.from_numpy(a)  # zero copy, both ways
    assert shared.dtype == flow.int16
    shared[0, 1] = 9
    assert a[0, 1] == 9
    assert x[1, 2].item() == 7 and isinstance(x[1, 2].item(), int)


def test_torch_round_trip_dlpack():
    t = torch.tensor([-32768, 1, 32767], dtype=torch.int16)
    x = flow.from_dlpack(t)
    assert x.dtype == flow.int16 and x.tolist() == t.tolist()
    back = torch.from_dlpack(x)
    assert back.dtype == torch.int16 and back.tolist() == t.tolist()


@pytest.mark.parametrize("other", [d for d in ALL if d != "int16"])
def test_casts_with_every_dtype(other):
    rng = np.random.default_rng(0)
    # int16 -> other: the full range (wraps into narrower integers, rounds into float16/bfloat16)
    f, t = _pair(_wrapping(rng))
    _same(f.to(getattr(flow, other)), t.to(getattr(torch, other)))
    # other -> int16: values the target holds (out-of-range float -> int casts are undefined in C)
    src = rng.integers(-120, 120, size=(4, 3))
    if other == "uint8":
        src = np.abs(src)
    if other == "bool":
        src = src > 0
    f, t = _pair(src, other)
    _same(f.to(flow.int16), t.to(torch.int16))
    _same(f.short(), t.short())


def test_integer_casts_wrap():
    f, t = _pair(np.array([70000, -70000, 32768, -32769, 65535], dtype=np.int64), "int64")
    _same(f.to(flow.int16), t.to(torch.int16))
    f, t = _pair(np.array([-1, -32768, 32767, 300], dtype=np.int16))
    _same(f.to(flow.uint8), t.to(torch.uint8))
    _same(f.to(flow.int8), t.to(torch.int8))


# ---------------------------------------------------------------------------
# promotion


@pytest.mark.parametrize("other", ALL)
def test_promotion(other):
    x16 = (flow.ones(2, dtype=flow.int16), torch.ones(2, dtype=torch.int16))
    for b_shape in ((2,), ()):  # with a dimensioned and with a 0-d operand
        xo = (flow.ones(b_shape, dtype=getattr(flow, other)), torch.ones(b_shape, dtype=getattr(torch, other)))
        for a, b in ((x16, xo), (xo, x16)):
            got, want = (a[0] + b[0]).dtype, (a[1] + b[1]).dtype
            assert str(got).split(".")[-1] == str(want).split(".")[-1], (other, b_shape)
    assert flow.promote_types(flow.int8, flow.uint8) == flow.int16
    assert flow.promote_types(flow.int16, flow.uint8) == flow.int16
    assert flow.promote_types(flow.int16, flow.int32) == flow.int32
    assert flow.promote_types(flow.int16, flow.float16) == flow.float16
    assert flow.result_type(flow.ones(1, dtype=flow.int16), 2) == flow.int16
    assert flow.result_type(flow.ones(1, dtype=flow.int16), 2.5) == flow.float32


def test_int8_with_uint8_gives_int16():
    f1, t1 = _pair([-128, 127, -1], "int8")
    f2, t2 = _pair([255, 255, 0], "uint8")
    _same(f1 + f2, t1 + t2)
    _same(f1 * f2, t1 * t2)


# ---------------------------------------------------------------------------
# kernels


BINARY = ["add", "sub", "mul", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor",
          "eq", "ne", "lt", "le", "gt", "ge", "div"]


@pytest.mark.parametrize("op", BINARY)
def test_binary(op):
    rng = np.random.default_rng(1)
    a, b = _wrapping(rng), _wrapping(rng)
    if op == "div":
        b[b == 0] = 1
    (fa, ta), (fb, tb) = _pair(a), _pair(b)
    _same(getattr(flow, op)(fa, fb), getattr(torch, op)(ta, tb))
    if op not in ("maximum", "minimum"):  # (tensors only, in both)
        _same(getattr(flow, op)(fa, 3), getattr(torch, op)(ta, 3))


def test_integer_division_and_remainder():
    rng = np.random.default_rng(2)
    a = rng.integers(-1000, 1000, size=(4, 6)).astype(np.int16)
    b = rng.integers(-50, 50, size=(4, 6)).astype(np.int16)
    b[b == 0] = 7
    (fa, ta), (fb, tb) = _pair(a), _pair(b)
    _same(flow.floor_divide(fa, fb), torch.floor_divide(ta, tb))
    _same(flow.div(fa, fb, rounding_mode="trunc"), torch.div(ta, tb, rounding_mode="trunc"))
    _same(flow.remainder(fa, fb), torch.remainder(ta, tb))
    _same(flow.fmod(fa, fb), torch.fmod(ta, tb))
    _same(fa // 3, ta // 3)
    _same(fa % -7, ta % -7)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        flow.floor_divide(fa, flow.zeros_like(fa))


def test_unary_and_pow():
    rng = np.random.default_rng(3)
    f, t = _pair(_wrapping(rng))
    for op in ("neg", "abs", "sign", "bitwise_not", "square"):
        _same(getattr(flow, op)(f), getattr(torch, op)(t))
    _same(-f, -t)
    _same(flow.clamp(f, -100, 200), torch.clamp(t, -100, 200))
    _same(flow.sqrt(f.abs()), torch.sqrt(t.abs()))  # integers compute floats: float32
    s, ts = _pair(rng.integers(-6, 7, size=(3, 4)))
    _same(s ** 2, ts ** 2)
    _same(flow.pow(s, s.abs()), torch.pow(ts, ts.abs()))
    _same(flow.bitwise_left_shift(s, 3), torch.bitwise_left_shift(ts, 3))
    _same(f >> 2, t >> 2)


def test_where_and_masked():
    rng = np.random.default_rng(4)
    f, t = _pair(_wrapping(rng))
    _same(flow.where(f > 0, f, flow.zeros_like(f)), torch.where(t > 0, t, torch.zeros_like(t)))
    _same(f.masked_fill(f < 0, -5), t.masked_fill(t < 0, -5))
    _same(flow.masked_select(f, f > 0), torch.masked_select(t, t > 0))


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_reductions(dim):
    rng = np.random.default_rng(5)
    f, t = _pair(_wrapping(rng))
    kw = {} if dim is None else {"dim": dim}
    for op in ("sum", "amax", "amin"):
        _same(getattr(flow, op)(f, **kw), getattr(torch, op)(t, **kw))  # sum: int64, as torch
    small, tsmall = _pair(rng.integers(-3, 4, size=(3, 5)))
    _same(flow.prod(small, **kw), torch.prod(tsmall, **kw))
    if dim is None:
        for op in ("max", "min", "argmax", "argmin"):
            _same(getattr(flow, op)(f), getattr(torch, op)(t))
    else:
        v, i = flow.max(f, dim)
        tv, ti = torch.max(t, dim)
        _same(v, tv)
        _same(i, ti)
        _same(flow.sum(f, dim, dtype=flow.int16), torch.sum(t, dim, dtype=torch.int16))  # wraps
    _same(flow.any(f > 30000), torch.any(t > 30000))
    with pytest.raises(RuntimeError, match="mean"):
        flow.mean(f)  # integers have no mean (torch's error too)


def test_scans_and_sorting():
    rng = np.random.default_rng(6)
    f, t = _pair(rng.integers(-2000, 2000, size=(4, 7)))
    _same(flow.cumsum(f, 1), torch.cumsum(t, 1))
    _same(flow.cummax(f, 1)[0], torch.cummax(t, 1)[0])
    v, i = flow.sort(f, 1)
    tv, ti = torch.sort(t, dim=1, stable=True)
    _same(v, tv)
    _same(flow.sort(f, dim=1, stable=True)[1], ti)
    _same(flow.topk(f, 3, 1)[0], torch.topk(t, 3, 1)[0])
    u = flow.unique(flow.tensor([3, -1, 3, 7, -1], dtype=flow.int16))
    assert u.dtype == flow.int16 and u.tolist() == [-1, 3, 7]
    _same(flow.bincount(flow.tensor([0, 1, 1, 4], dtype=flow.int16)),
          torch.bincount(torch.tensor([0, 1, 1, 4], dtype=torch.int16)))


def test_indexing():
    rng = np.random.default_rng(7)
    f, t = _pair(_wrapping(rng, (4, 5)))
    _same(f[1:, ::2], t[1:, ::2])
    _same(f[f > 0], t[t > 0])
    idx = [0, 3, 3]
    _same(f[idx], t[idx])
    _same(flow.index_select(f, 1, flow.tensor([4, 0])), torch.index_select(t, 1, torch.tensor([4, 0])))
    gi = rng.integers(0, 5, size=(4, 3))
    _same(flow.gather(f, 1, flow.tensor(gi)), torch.gather(t, 1, torch.tensor(gi)))
    g, tg = f.clone(), t.clone()
    g[0] = 11
    tg[0] = 11
    g[:, 1] = flow.tensor([1, 2, 3, 4], dtype=flow.int16)
    tg[:, 1] = torch.tensor([1, 2, 3, 4], dtype=torch.int16)
    _same(g, tg)
    src, tsrc = _pair(rng.integers(-30000, 30000, size=(4, 3)))
    _same(flow.zeros(4, 5, dtype=flow.int16).scatter_add(1, flow.tensor(gi), src),
          torch.zeros(4, 5, dtype=torch.int16).scatter_add(1, torch.tensor(gi), tsrc))
    # accumulation wraps: 30000 + 30000 in int16
    vals, tvals = _pair([30000, 30000, 2])
    _same(flow.zeros(6, dtype=flow.int16).index_put_((flow.tensor([1, 1, 5]),), vals, accumulate=True),
          torch.zeros(6, dtype=torch.int16).index_put_((torch.tensor([1, 1, 5]),), tvals, accumulate=True))
    _same(flow.nonzero(f > 0), torch.nonzero(t > 0))


def test_shape_ops():
    rng = np.random.default_rng(8)
    f, t = _pair(_wrapping(rng, (2, 3, 4)))
    _same(f.permute(2, 0, 1).contiguous(), t.permute(2, 0, 1).contiguous())
    _same(flow.cat([f, f], 1), torch.cat([t, t], 1))
    _same(flow.stack([f, f]), torch.stack([t, t]))
    _same(f.flip(1), t.flip(1))
    _same(flow.nn.functional.pad(f, (1, 1), value=-3), torch.nn.functional.pad(t, (1, 1), value=-3))
    _same(f.reshape(6, 4), t.reshape(6, 4))
    _same(flow.tril(f[0]), torch.tril(t[0]))


def test_matmul_and_pools():
    rng = np.random.default_rng(9)
    a, ta = _pair(rng.integers(-5, 6, size=(3, 4)))
    b, tb = _pair(rng.integers(-5, 6, size=(4, 2)))
    _same(flow.matmul(a, b), torch.matmul(ta, tb))
    x, tx = _pair(rng.integers(-300, 300, size=(1, 2, 6, 6)))
    _same(flow.nn.functional.max_pool2d(x, 2), torch.nn.functional.max_pool2d(tx, 2))
    with pytest.raises(RuntimeError, match="avg_pool2d.*int16"):
        flow.nn.functional.avg_pool2d(x, 2)  # int64 is the only integer average, as torch


def test_gradient_through_int16_operands():
    # an int16 operand promotes; the float operand's gradient is torch's
    rng = np.random.default_rng(10)
    xv = rng.standard_normal((3, 4)).astype(np.float32)
    iv = rng.integers(-4, 5, size=(3, 4))
    fx = flow.tensor(xv, requires_grad=True)
    tx = torch.tensor(xv, requires_grad=True)
    fi, ti = _pair(iv)
    fy = (fx * fi + fi).sum() + (fx.short().float() * fx).sum()
    ty = (tx * ti + ti).sum() + (tx.short().float() * tx).sum()
    fy.backward()
    ty.backward()
    assert_close(fy, ty)
    assert_close(fx.grad, tx.grad)
    with pytest.raises(RuntimeError, match="floating point"):
        flow.ones(2, dtype=flow.int16).requires_grad_()


# ---------------------------------------------------------------------------
# saving


def test_save_load(tmp_path):
    x = flow.tensor([[-32768, 5], [7, 32767]], dtype=flow.int16)
    path = str(tmp_path / "ckpt")
    flow.save({"x": x, "v": x[:, 1], "dt": flow.int16}, path)
    got = flow.load(path)
    assert got["x"].dtype == flow.int16 and got["x"].tolist() == x.tolist()
    assert got["v"].tolist() == [5, 32767] and got["dt"] is flow.int16


class _Int16Graph(flow.nn.Graph):
    def build(self, x, i):
        return (x.short() * 3 + i).float() * x, (i * i).sum(1)


def test_graph_program_saves_int16(tmp_path):
    # int16 values and slots of a compiled program survive runtime_state_dict / load (the dtype's
    # number is stored there: Note [DType numbers])
    rng = np.random.default_rng(12)
    xv = (rng.standard_normal((3, 4)) * 100).astype(np.float32)
    iv = rng.integers(-200, 200, size=(3, 4)).astype(np.int16)
    g = _Int16Graph()
    g.enable_save_runtime_state_dict()
    want = g(flow.tensor(xv), flow.tensor(iv))
    path = str(tmp_path / "prog")
    flow.save(g.runtime_state_dict(), path)
    g2 = _Int16Graph()
    g2.load_runtime_state_dict(flow.load(path))
    got = g2(flow.tensor(xv), flow.tensor(iv))
    tx, ti = torch.tensor(xv), torch.tensor(iv)
    for a, b, t in zip(got, want, ((tx.short() * 3 + ti).float() * tx, (ti * ti).sum(1))):
        _same(a, t)
        _same(b, t)


@oneflow_only
def test_upstream_snapshot_int16(tmp_path):
    # upstream's directory checkpoints name int16 by its DataType (kInt16 = 17)
    from oneflow.framework.serialization import _snapshot_format as snap

    assert snap._DTYPES["kInt16"] == (17, "int16") and snap._NAME_OF["int16"] == "kInt16"


@pytest.mark.cuda
def test_cuda_kernels():
    rng = np.random.default_rng(11)
    a, ta = _pair(_wrapping(rng))
    b, tb = _pair(_wrapping(rng))
    da, db = a.cuda(), b.cuda()
    assert da.dtype == flow.int16
    _same((da + db).cpu(), ta + tb)
    _same((da * 3 - db).cpu(), ta * 3 - tb)
    _same(flow.sum(da, 1).cpu(), torch.sum(ta, 1))
    _same(flow.cumsum(da, 1).cpu(), torch.cumsum(ta, 1))
    _same(flow.sort(da, 1)[0].cpu(), torch.sort(ta, 1)[0])
    _same((da > db).cpu(), ta > tb)
    _same(da.to(flow.float32).cpu(), ta.float())
    _same(da.float().short().cpu(), ta)
    vals, tvals = _pair([30000, 30000, 2])  # atomic int16 adds, wrapping
    acc = flow.zeros(6, dtype=flow.int16).cuda().index_put_((flow.tensor([1, 1, 4]).cuda(),), vals.cuda(),
                                                             accumulate=True)
    want = torch.zeros(6, dtype=torch.int16).index_put_((torch.tensor([1, 1, 4]),), tvals, accumulate=True)
    _same(acc.cpu(), want)
