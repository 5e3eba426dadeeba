"""Same-dtype host copies (kernels/move.cpp SameWidthCopy, behind contiguous(), copy_, clone and
casts to the same dtype) in each of their row forms -- memcpy, a broadcast element filled along
the row, reversed, strided gather, strided destination, tiled transpose -- for every element
width (1, 2, 4, 8, 16 bytes), against PyTorch; and broadcasting copies across dtypes."""
import numpy as np
import pytest
import torch

import oneflow as flow

DTYPES = ["bool", "int8", "float16", "bfloat16", "float32", "int64", "float64", "complex128"]


def _pair(dtype, shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape) * 3
    t = torch.tensor(a).to(getattr(torch, dtype)) if dtype != "complex128" else torch.tensor(a + 1j * a[::-1].copy())
    return flow.tensor(t.to(torch.float64 if dtype == "bfloat16" else t.dtype).numpy()).to(getattr(flow, dtype)), t


def _same(f, t):
    assert f.dtype == getattr(flow, str(t.dtype).replace("torch.", ""))
    assert tuple(f.shape) == tuple(t.shape) and f.is_contiguous()
    ref = t.to(torch.float64) if t.dtype == torch.bfloat16 else t
    got = f.to(flow.float64) if f.dtype == flow.bfloat16 else f
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


LAYOUTS = {
    "broadcast column": lambda x: x[:, :1].expand(x.shape[0], 37),
    "broadcast row": lambda x: x[:1].expand(29, x.shape[1]),
    "broadcast scalar 3d": lambda x: x[:1, :1].reshape(1, 1, 1).expand(3, 5, 40),
    "unsqueezed middle": lambda x: x.unsqueeze(1).expand(x.shape[0], 4, x.shape[1]),
    "reversed": lambda x: x.flip(1),
    "strided": lambda x: x[:, ::3],
    "transposed": lambda x: x.t(),
    "sliced plain": lambda x: x[2:9],
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_contiguous_of_each_layout_matches_torch(dtype, layout):
    f, t = _pair(dtype, (23, 45))
    _same(LAYOUTS[layout](f).contiguous(), LAYOUTS[layout](t).contiguous())


@pytest.mark.parametrize("dtype", ["int8", "float32", "complex128"])
def test_broadcasting_copy_into_strided_destination(dtype):
    f, t = _pair(dtype, (6, 1))
    fd, td = _pair(dtype, (10, 8), seed=1)
    fv, tv = fd.t(), td.t()  # (8, 10) non-contiguous views
    fv[:, 2:8].copy_(f.t().expand(8, 6))
    tv[:, 2:8].copy_(t.t().expand(8, 6))
    _same(fd.contiguous(), td.contiguous())


def test_broadcast_copy_with_a_cast():
    f, t = _pair("float32", (7, 1))
    got = f.expand(7, 33).to(flow.float64)
    want = t.expand(7, 33).to(torch.float64)
    _same(got, want)
    out_f, out_t = flow.zeros(7, 33, dtype=flow.int32), torch.zeros(7, 33, dtype=torch.int32)
    out_f.copy_(f)  # broadcast and cast in one copy
    out_t.copy_(t)
    _same(out_f, out_t)


def test_empty_and_zero_size_copies():
    f, t = _pair("float32", (0, 5))
    _same(f.t().contiguous(), t.t().contiguous())
    _same(f[:, :1].expand(0, 9).contiguous(), t[:, :1].expand(0, 9).contiguous())
