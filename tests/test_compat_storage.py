"""Storages, shared memory and oneflow.multiprocessing against PyTorch: untyped_storage() /
storage() (sizes, aliasing through data_ptr, element access), share_memory_ (forked processes
see each other's writes; views follow the move), _base, the tensor-kind flags, `in`, reversed(),
Tensor.stft, and multiprocessing.spawn's error propagation."""
import multiprocessing as mp
import sys

import numpy as np
import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow storages")


def _pair(values, dtype="float32"):
    a = np.asarray(values, dtype=dtype)
    return flow.tensor(a), torch.tensor(a)


def test_untyped_and_typed_storage_as_torch():
    f, t = _pair(np.arange(12).reshape(3, 4))
    for fv, tv in [(f, t), (f[1:, ::2], t[1:, ::2]), (f.t(), t.t())]:
        fu, tu = fv.untyped_storage(), tv.untyped_storage()
        assert fu.nbytes() == tu.nbytes() == len(fu) == 48 and fu.element_size() == tu.element_size() == 1
        fs, ts = fv.storage(), tv.storage()
        assert fs.size() == ts.size() == len(fs) == 12 and fs.element_size() == ts.element_size() == 4
        assert fs.tolist() == ts.tolist() and fu.tolist() == tu.tolist()
        assert fs[5] == ts[5] and fu[3] == tu[3]
        assert str(fs.dtype).split(".")[-1] == str(ts.dtype).split(".")[-1]
    # Aliasing as PyTorch code tests it: the same memory, the same storage pointer.
    assert f[1:].untyped_storage().data_ptr() == f.untyped_storage().data_ptr()
    assert f.clone().untyped_storage().data_ptr() != f.untyped_storage().data_ptr()
    assert f.data_ptr() == f.untyped_storage().data_ptr() and f[1:].data_ptr() == f.data_ptr() + 16
    s = f.storage()
    s[0] = 42.0  # writes through to the tensor
    assert f[0, 0].item() == 42.0
    assert isinstance(s, flow.TypedStorage) and isinstance(s.untyped(), flow.UntypedStorage)


def test_base_and_is_view_as_torch():
    f, t = _pair(np.arange(6.0))
    fv, tv = f[1:].view(5, 1)[2:], t[1:].view(5, 1)[2:]
    assert f._base is None and t._base is None
    assert fv._base is f and tv._base is t  # the root, not the intermediate view
    assert fv._is_view() and not f._is_view() and not f.clone()._is_view()


def test_kind_flags_contains_reversed_stft():
    f, t = _pair([[1, 2], [3, 4]])
    for name in ("is_sparse", "is_sparse_csr", "is_quantized", "is_mkldnn", "is_nested", "is_mps"):
        assert getattr(f, name) is False and getattr(t, name) is False, name
    for element in (3, 3.0, 5, flow.tensor(4.0)):
        ref = torch.tensor(element.item()) if isinstance(element, flow.Tensor) else element
        assert (element in f) == (ref in t)
    with pytest.raises(RuntimeError, match="__contains__ only supports Tensor or scalar"):
        "a" in f  # noqa: B015
    np.testing.assert_array_equal(np.stack([r.numpy() for r in reversed(f)]),
                                  np.stack([r.numpy() for r in reversed(t)]))
    assert reversed(flow.tensor(2.0)).item() == 2.0
    x = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    fs = flow.tensor(x).stft(16, return_complex=True, window=flow.hann_window(16))
    ts = torch.tensor(x).stft(16, return_complex=True, window=torch.hann_window(16))
    np.testing.assert_allclose(fs.numpy(), ts.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fs.istft(16, window=flow.hann_window(16)).numpy(),
                               ts.istft(16, window=torch.hann_window(16)).numpy(), rtol=1e-5, atol=1e-5)


def _add_one(x, done):
    x.add_(1.0)
    done.set()


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_share_memory_is_seen_by_forked_processes():
    x = flow.zeros(1000)
    view = x[10:20]
    arr = x.numpy()  # a numpy view taken before the move stays valid (the old memory lives on)
    assert not x.is_shared()
    assert x.share_memory_() is x and x.is_shared() and view.is_shared()
    assert x.storage().is_shared() and x.untyped_storage().is_shared()
    ctx = mp.get_context("fork")
    done = ctx.Event()
    p = ctx.Process(target=_add_one, args=(x, done))
    p.start()
    p.join(60)
    assert p.exitcode == 0 and done.is_set()
    np.testing.assert_array_equal(x.numpy(), np.ones(1000, np.float32))  # the child's write
    np.testing.assert_array_equal(view.numpy(), np.ones(10, np.float32))  # views followed
    np.testing.assert_array_equal(arr, np.zeros(1000, np.float32))
    x.share_memory_()  # idempotent
    m = flow.nn.Linear(3, 2)
    assert m.share_memory() is m and all(p.is_shared() for p in m.parameters())
    y = flow.ones(3, requires_grad=True).share_memory_()
    (y * 2).sum().backward()  # autograd works on shared tensors
    np.testing.assert_array_equal(y.grad.numpy(), [2, 2, 2])
    assert flow.zeros(0).share_memory_().is_shared()


def _worker(i, out_dir, fail_rank):
    import numpy as _np

    import oneflow as _flow
    if i == fail_rank:
        raise ValueError(f"rank {i} failed on purpose")
    _np.save(f"{out_dir}/r{i}.npy", (_flow.ones(2) * i).numpy())


def test_multiprocessing_spawn_runs_and_reports_failures(tmp_path):
    fmp = flow.multiprocessing
    assert fmp.get_sharing_strategy() in fmp.get_all_sharing_strategies()
    assert fmp.Queue is not None and fmp.get_context("spawn") is not None
    fmp.spawn(_worker, args=(str(tmp_path), -1), nprocs=2, start_method="fork")
    for i in range(2):
        np.testing.assert_array_equal(np.load(tmp_path / f"r{i}.npy"), [i, i])
    with pytest.raises(fmp.ProcessRaisedException, match="rank 1 failed on purpose"):
        fmp.spawn(_worker, args=(str(tmp_path), 1), nprocs=2, start_method="fork")
    with pytest.raises(ValueError, match="unknown strategy"):
        fmp.set_sharing_strategy("nope")


_VIEW_DTYPES = ["uint8", "int8", "bool", "int32", "float32", "float16", "bfloat16", "int64", "float64", "complex64"]


def _layouts(lib, base):
    t = base.view(6, 8)
    return {"contiguous": t, "row slice": t[1:4], "column slice": t[:, 2:6], "transposed": t.t(),
            "scalar": t[0, 0], "odd columns": t[:, :3], "offset one": base[1:9]}


def _values(v, lib):
    """Exact values (the bytes are 0 / 1, so every reinterpretation is finite and exact)."""
    return v.to(lib.complex128 if v.dtype.is_complex else lib.float64).numpy()


@pytest.mark.parametrize("src", ["uint8", "int32", "float32", "float64"])
@pytest.mark.parametrize("dst", _VIEW_DTYPES)
def test_view_dtype_as_torch(src, dst):
    raw = np.random.default_rng(0).integers(0, 2, 48 * 8).astype(np.uint8)
    fbase, tbase = flow.tensor(raw), torch.tensor(raw)
    fbase, tbase = fbase.view(getattr(flow, src))[:48], tbase.view(getattr(torch, src))[:48]
    for name, f, t in zip(_layouts(flow, fbase), _layouts(flow, fbase).values(), _layouts(torch, tbase).values()):
        try:
            tv = t.view(getattr(torch, dst))
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as info:
                f.view(getattr(flow, dst))
            assert str(e).split(" (")[0] in str(info.value), (name, str(e), str(info.value))
            continue
        fv = f.view(getattr(flow, dst))
        assert tuple(fv.shape) == tuple(tv.shape) and fv._stride() == tv.stride(), name
        assert fv.storage_offset() == tv.storage_offset() and not fv.requires_grad, name
        np.testing.assert_array_equal(_values(fv, flow), _values(tv, torch), err_msg=name)
        assert fv.untyped_storage().data_ptr() == f.untyped_storage().data_ptr()  # the same memory


def test_view_dtype_shares_memory_and_keeps_shape_overloads():
    x = flow.zeros(2, 4)
    y = x.view(flow.int32)
    y[0, 0] = 1065353216  # the bits of 1.0f
    assert x[0, 0].item() == 1.0
    assert tuple(x.view(8).shape) == (8,) and tuple(x.view(-1, 2).shape) == (4, 2)
    assert tuple(x.view((2, 2, 2)).shape) == (2, 2, 2) and tuple(x.view(dtype=flow.float16).shape) == (2, 8)
    w = flow.ones(3, requires_grad=True)
    assert not w.view(flow.int32).requires_grad
