"""Tests for python/oneflow/_tensor_str.py against PyTorch's repr.

The expected string is torch's repr with ``torch.`` replaced by ``oneflow.``
and the dtype added where torch leaves it out (float32, int64, bool).  Adding
a suffix may move later suffixes to a new line, so the suffixes are re-laid
out with torch's rule; test_suffix_rule_matches_torch checks that rule against
torch itself.

The module is loaded by file path because the oneflow package (C++ core) may
not be built; it must only need numpy and the standard library.
"""

import importlib.util
import math
import os
import re

import numpy as np
import pytest
import torch
from torch._tensor_str import get_printoptions as torch_get_printoptions

_PATH = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "python", "oneflow", "_tensor_str.py"
)
_spec = importlib.util.spec_from_file_location("oneflow_tensor_str_under_test", _PATH)
ts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ts)

# A suffix starts after ", " or ",\n<indent>" and is one of these keys; numbers,
# brackets and "..." in the body can never match.
_SUFFIX_SPLIT = re.compile(r",(?: |\n +)(?=(?:device|size|dtype|requires_grad|grad_fn)=)")


def _layout_suffixes(body, suffixes, linewidth):
    """torch's _add_suffixes rule (current line over-counted by 2)."""
    out, line_len = body, len(body) - body.rfind("\n") + 1
    for s in suffixes:
        if line_len + len(s) + 2 > linewidth:
            out, line_len = out + ",\n" + " " * 7 + s, 7 + len(s)
        else:
            out, line_len = out + ", " + s, line_len + len(s) + 2
    return out + ")"


def _split_repr(r):
    assert r.startswith("tensor(") and r.endswith(")"), r
    pieces = _SUFFIX_SPLIT.split(r[:-1])
    return pieces[0], pieces[1:]


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def expected_repr(t, device=None):
    """OneFlow's repr of ``t`` derived from torch's repr."""
    body, suffixes = _split_repr(repr(t))
    if not any(s.startswith("dtype=") for s in suffixes):
        # OneFlow puts the dtype after device/size and before grad info.
        pos = sum(s.startswith(("device=", "size=")) for s in suffixes)
        suffixes.insert(pos, "dtype=torch." + dtype_name(t))
    if device is not None:
        suffixes.insert(0, f"device='{device}'")
    suffixes = [s.replace("torch.", "oneflow.") for s in suffixes]
    return _layout_suffixes(body, suffixes, torch_get_printoptions()["linewidth"])


def actual_repr(t, device=None):
    t = t.detach() if not t.requires_grad else t
    arr = (t.detach().float() if t.dtype == torch.bfloat16 else t.detach()).numpy()
    extras = ()
    if t.grad_fn is not None:
        extras = (f"grad_fn=<{type(t.grad_fn).__name__}>",)
    elif t.requires_grad:
        extras = ("requires_grad=True",)
    return ts.format_tensor(arr, dtype_name(t), device, extras)


def check(t, device=None):
    assert actual_repr(t, device) == expected_repr(t, device)


def set_both(**kw):
    ts.set_printoptions(**kw)
    torch.set_printoptions(**kw)


@pytest.fixture(autouse=True)
def _restore_printoptions():
    set_both(profile="default")
    yield
    set_both(profile="default")
    torch.set_default_dtype(torch.float32)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


nan, inf = float("nan"), float("inf")

# (id, factory); factories so that every test builds fresh tensors.
CASES = [
    # 0-d
    ("scalar_float", lambda: torch.tensor(3.5)),
    ("scalar_zero", lambda: torch.tensor(0.0)),
    ("scalar_negzero", lambda: torch.tensor(-0.0)),
    ("scalar_nan", lambda: torch.tensor(nan)),
    ("scalar_ninf", lambda: torch.tensor(-inf)),
    ("scalar_tiny", lambda: torch.tensor(1e-8)),
    ("scalar_huge", lambda: torch.tensor(123456789.0)),
    ("scalar_int", lambda: torch.tensor(7)),
    ("scalar_negint", lambda: torch.tensor(-12345, dtype=torch.int32)),
    ("scalar_bool", lambda: torch.tensor(True)),
    ("scalar_half", lambda: torch.tensor(0.1, dtype=torch.float16)),
    ("scalar_bf16", lambda: torch.tensor(3.14159, dtype=torch.bfloat16)),
    ("scalar_f64", lambda: torch.tensor(-2.123456789, dtype=torch.float64)),
    # 1-d
    ("arange_f", lambda: torch.arange(10.0)),
    ("two", lambda: torch.tensor([1.0, 2.0])),
    ("frac", lambda: torch.tensor([1.5, -2.25, 100.125])),
    ("small_ratio", lambda: torch.tensor([0.1, 1e-5])),
    ("big_ratio_int", lambda: torch.tensor([1.0, 1000.0, 1001.0])),
    ("ratio_exact_1000", lambda: torch.tensor([1.0, 1000.0])),
    ("big_1e8", lambda: torch.tensor([1e8, 1.0])),
    ("big_above_1e8", lambda: torch.tensor([1.5e8, 2.0])),
    ("huge_f32", lambda: torch.tensor([3.4e38, -1.0])),
    ("exp3", lambda: torch.tensor([1e300, 1e-300, -5.0], dtype=torch.float64)),
    ("denormal", lambda: torch.tensor([1e-320, 1.0], dtype=torch.float64)),
    ("rounds_up", lambda: torch.tensor([9.99996, 0.5, -9.99996])),
    ("tiny_neg", lambda: torch.tensor([-0.00001, 0.5])),
    ("zeros", lambda: torch.zeros(5)),
    ("neg_zeros", lambda: torch.tensor([0.0, -0.0])),
    ("negzero_one", lambda: torch.tensor([-0.0, 1.0, 2.0])),
    ("negzero_frac", lambda: torch.tensor([-0.0, 1.5])),
    ("nonfinite", lambda: torch.tensor([nan, inf, -inf])),
    ("nan_frac", lambda: torch.tensor([nan, 1.5, -inf])),
    ("inf_int", lambda: torch.tensor([inf, 1.0, -3.0])),
    ("zero_nan", lambda: torch.tensor([0.0, nan])),
    ("nan_sci", lambda: torch.tensor([nan, 1e-7, inf, -1e10])),
    ("negatives", lambda: -torch.arange(12.0) * 1.25),
    ("linspace", lambda: torch.linspace(-1, 1, 11)),
    ("randn_1d", lambda: torch.randn(17, generator=_gen(0))),
    ("int_1d", lambda: torch.randint(-1000, 1000, (20,), generator=_gen(1))),
    ("bool_1d", lambda: torch.tensor([True, False, True])),
    ("all_true", lambda: torch.tensor([True, True])),
    # 2-d .. 5-d
    ("randn_2d", lambda: torch.randn(3, 4, generator=_gen(2))),
    ("int_2d", lambda: torch.arange(1, 5).reshape(2, 2)),
    ("negint_2d", lambda: torch.randint(-100, 100, (4, 5), generator=_gen(3))),
    ("bool_2d", lambda: torch.randint(0, 2, (3, 4), generator=_gen(4)).bool()),
    ("randn_3d", lambda: torch.randn(2, 3, 4, generator=_gen(5))),
    ("int_3d", lambda: torch.arange(24).reshape(2, 3, 4)),
    ("randn_4d", lambda: torch.randn(2, 2, 2, 3, generator=_gen(6))),
    ("int_5d", lambda: torch.arange(32).reshape(2, 2, 2, 2, 2)),
    ("ones_1x1x1", lambda: torch.ones(1, 1, 1)),
    ("sci_2d", lambda: torch.randn(3, 3, generator=_gen(7)) * 1e-6),
    ("sci_3d_big", lambda: torch.randn(2, 2, 3, generator=_gen(8)) * 1e10),
    # empty
    ("empty", lambda: torch.tensor([])),
    ("empty_0x3", lambda: torch.zeros(0, 3)),
    ("empty_2x0", lambda: torch.zeros(2, 0)),
    ("empty_0x2x3", lambda: torch.zeros(0, 2, 3)),
    ("empty_int", lambda: torch.zeros(0, dtype=torch.int64)),
    ("empty_int_3x0", lambda: torch.zeros(3, 0, dtype=torch.int64)),
    ("empty_bool", lambda: torch.zeros(0, dtype=torch.bool)),
    ("empty_f16", lambda: torch.zeros(0, 4, dtype=torch.float16)),
    ("empty_f64", lambda: torch.zeros(1, 0, 1, dtype=torch.float64)),
    # summarisation (numel > 1000)
    ("arange_2000", lambda: torch.arange(2000)),
    ("arange_1001", lambda: torch.arange(1001.0)),
    ("arange_1000_wraps", lambda: torch.arange(1000.0)),
    ("randn_2000", lambda: torch.randn(2000, generator=_gen(9))),
    ("randn_40x40", lambda: torch.randn(40, 40, generator=_gen(10))),
    ("randn_20x20x20", lambda: torch.randn(20, 20, 20, generator=_gen(11))),
    ("wide_5x300", lambda: torch.randn(5, 300, generator=_gen(12))),
    ("tall_300x5", lambda: torch.randn(300, 5, generator=_gen(13))),
    ("big_4d", lambda: torch.randn(7, 8, 9, 10, generator=_gen(14))),
    ("big_int", lambda: torch.randint(-10**6, 10**6, (50, 50), generator=_gen(15))),
    ("big_bool", lambda: torch.randint(0, 2, (30, 40), generator=_gen(16)).bool()),
    ("big_half", lambda: torch.randn(1200, generator=_gen(17)).half()),
    # hidden elements must not influence the layout
    ("hidden_big", lambda: torch.cat([torch.ones(3), torch.full((2000,), 1e9), torch.ones(3)])),
    # wrapping
    ("wrap_100", lambda: torch.randn(100, generator=_gen(18))),
    ("wrap_3x30", lambda: torch.randn(3, 30, generator=_gen(19))),
    ("wrap_sci", lambda: torch.arange(40.0) * 1e5 + 0.5),
    ("wrap_int", lambda: torch.arange(0, 10**9, 10**7)),
    ("wrap_3d", lambda: torch.randn(2, 2, 25, generator=_gen(20))),
    # dtypes
    ("int8", lambda: torch.randint(-128, 128, (4, 6), dtype=torch.int8, generator=_gen(21))),
    ("uint8", lambda: torch.randint(0, 256, (4, 6), dtype=torch.uint8, generator=_gen(22))),
    ("int16", lambda: torch.randint(-30000, 30000, (3, 5), dtype=torch.int16, generator=_gen(23))),
    ("int32", lambda: torch.randint(-2**31, 2**31 - 1, (3, 5), dtype=torch.int32, generator=_gen(24))),
    ("int64_extreme", lambda: torch.tensor([2**62, -2**63, 0, 5])),
    ("float64", lambda: torch.randn(4, 3, dtype=torch.float64, generator=_gen(25))),
    ("half", lambda: torch.randn(3, 4, generator=_gen(26)).half()),
    ("half_extremes", lambda: torch.tensor([65504.0, 6e-8, -1.0, 1e-3], dtype=torch.float16)),
    ("half_int", lambda: torch.tensor([1.0, 2048.0, -7.0], dtype=torch.float16)),
    ("half_nonfinite", lambda: torch.tensor([inf, nan, 0.5], dtype=torch.float16)),
    ("bf16", lambda: torch.randn(3, 4, generator=_gen(27)).bfloat16()),
    ("bf16_big", lambda: torch.tensor([1e30, -3.0, 1.0], dtype=torch.bfloat16)),
    ("bf16_int", lambda: torch.tensor([1.0, 256.0, -2.0], dtype=torch.bfloat16)),
]


@pytest.mark.parametrize("factory", [f for _, f in CASES], ids=[i for i, _ in CASES])
def test_matches_torch(factory):
    check(factory())


def test_doc_examples():
    f = ts.format_tensor
    assert f(np.array([1.0, 2.0], np.float32), "float32") == "tensor([1., 2.], dtype=oneflow.float32)"
    assert (
        f(np.array([[1, 2], [3, 4]]), "int64")
        == "tensor([[1, 2],\n        [3, 4]], dtype=oneflow.int64)"
    )
    assert f(np.array(3.5, np.float32), "float32") == "tensor(3.5000, dtype=oneflow.float32)"
    # bool pads to the common width like PyTorch: "True" gets a space before it
    assert f(np.array([True, False]), "bool") == "tensor([ True, False], dtype=oneflow.bool)"
    assert f(np.array([True, True]), "bool") == "tensor([True, True], dtype=oneflow.bool)"
    assert f(np.zeros(0, np.float32), "float32") == "tensor([], dtype=oneflow.float32)"
    assert (
        f(np.zeros((0, 3), np.float32), "float32")
        == "tensor([], size=(0, 3), dtype=oneflow.float32)"
    )
    # bfloat16 arrives as float32 values; a "oneflow." prefix on the name is accepted.
    assert f(np.array([1.5], np.float32), "oneflow.bfloat16") == "tensor([1.5000], dtype=oneflow.bfloat16)"
    # a float dtype name forces float style even for an integer array
    assert f(np.array([1, 2]), "float32") == "tensor([1., 2.], dtype=oneflow.float32)"


def test_device_and_extras():
    f = ts.format_tensor
    a = np.array([1.0], np.float32)
    assert f(a, "float32", "cuda:0") == "tensor([1.], device='cuda:0', dtype=oneflow.float32)"
    assert f(a, "float32", "cpu") == "tensor([1.], dtype=oneflow.float32)"
    assert f(a, "float32", None) == "tensor([1.], dtype=oneflow.float32)"
    assert (
        f(np.zeros((0, 3), np.float32), "float32", "cuda:1")
        == "tensor([], device='cuda:1', size=(0, 3), dtype=oneflow.float32)"
    )
    assert (
        f(a, "float32", "cuda:0", ("requires_grad=True",))
        == "tensor([1.], device='cuda:0', dtype=oneflow.float32, requires_grad=True)"
    )
    # device on long tensors: suffixes wrap with the same rule
    for n in (10, 11, 12, 13, 30):
        check(torch.arange(n * 1.0) + 0.5, device="cuda:0")
    check(torch.randn(4, 9, generator=_gen(30)), device="cuda:0")


def test_requires_grad_and_grad_fn():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    check(x)
    check(x + 1)
    check((x * 3).sum())
    check(torch.randn(4, 9, generator=_gen(31), requires_grad=True) * 2)
    assert actual_repr(x + 1) == "tensor([2., 3.], dtype=oneflow.float32, grad_fn=<AddBackward0>)"


def test_suffix_rule_matches_torch():
    """The helper's suffix layout must equal torch's own: with float64 as the
    default dtype torch prints dtype=torch.float32 itself, wrapping included."""
    torch.set_default_dtype(torch.float64)
    lw = torch_get_printoptions()["linewidth"]
    wrapped = 0
    for n in range(1, 60):
        for t in (torch.arange(n, dtype=torch.float32) + 0.5, torch.ones(2, n, dtype=torch.float32)):
            r = repr(t)
            wrapped += ",\n       dtype=" in r
            body, suffixes = _split_repr(r)
            assert "dtype=torch.float32" in suffixes
            assert _layout_suffixes(body, suffixes, lw) == r
    assert wrapped > 0


@pytest.mark.parametrize("precision", [0, 1, 2, 6, 8])
def test_precision(precision):
    set_both(precision=precision)
    for t in (
        torch.randn(3, 4, generator=_gen(40)),
        torch.tensor([1e-6, 1.0]),
        torch.tensor(2.0 / 3.0),
        torch.arange(5.0),
        torch.randn(5, dtype=torch.float64, generator=_gen(41)) * 1e12,
    ):
        check(t)


@pytest.mark.parametrize("threshold", [0, 1, 5, 24, 100, math.inf])
def test_threshold(threshold):
    set_both(threshold=threshold)
    for t in (torch.tensor(4.0), torch.arange(7), torch.arange(24.0).reshape(2, 3, 4),
              torch.randn(12, 12, generator=_gen(42)), torch.arange(1500)):
        check(t)


@pytest.mark.parametrize("edgeitems", [0, 1, 2, 5])
def test_edgeitems(edgeitems):
    set_both(edgeitems=edgeitems, threshold=10)
    for t in (torch.arange(20), torch.randn(12, 13, generator=_gen(43)),
              torch.arange(60.0).reshape(3, 4, 5), torch.arange(3), torch.tensor(1.5),
              torch.randn(2, 2, 30, generator=_gen(44))):
        check(t)


@pytest.mark.parametrize("linewidth", [1, 10, 40, 79, 81, 120, 200])
def test_linewidth(linewidth):
    set_both(linewidth=linewidth)
    for t in (torch.randn(50, generator=_gen(45)), torch.arange(100).reshape(2, 50),
              torch.randn(3, 2, 20, generator=_gen(46)) * 1e-7, torch.arange(3000.0)):
        check(t)


@pytest.mark.parametrize("sci_mode", [True, False, None])
def test_sci_mode(sci_mode):
    set_both(sci_mode=sci_mode)
    for t in (torch.randn(4, 4, generator=_gen(47)), torch.arange(6.0),
              torch.tensor([1e-8, 1e9, -3.0]), torch.tensor([1e20]), torch.zeros(3),
              torch.tensor([0.0, nan, -inf]), torch.arange(5), torch.tensor([True]),
              torch.tensor([1.0, nan, inf]), torch.randn(3, dtype=torch.float16, generator=_gen(48))):
        check(t)


@pytest.mark.parametrize("profile", ["short", "full", "default"])
def test_profile(profile):
    set_both(precision=7, edgeitems=1, linewidth=50)
    set_both(profile=profile)
    assert ts.get_printoptions() == torch_get_printoptions()
    for t in (torch.randn(40, 40, generator=_gen(49)), torch.arange(2000),
              torch.tensor([1.123456, 2.0])):
        check(t)


def test_get_set_printoptions():
    assert ts.get_printoptions() == {
        "precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None
    }
    assert ts.get_printoptions() == torch_get_printoptions()
    set_both(precision=2, sci_mode=True)
    assert ts.get_printoptions() == torch_get_printoptions()
    set_both(linewidth=100)  # like torch, every call resets sci_mode to None
    assert ts.get_printoptions() == torch_get_printoptions()
    assert ts.get_printoptions()["sci_mode"] is None
    saved = ts.get_printoptions()
    ts.set_printoptions(profile="full")
    ts.set_printoptions(**saved)
    assert ts.get_printoptions() == saved


_FUZZ_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
                torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool]


def _random_tensor(seed):
    rng = np.random.default_rng(seed)
    g = _gen(seed)
    ndim = int(rng.integers(0, 5))
    limit = [1, 3000, 70, 14, 8][ndim]
    shape = tuple(int(rng.integers(0 if rng.random() < 0.1 else 1, limit + 1)) for _ in range(ndim))
    dtype = _FUZZ_DTYPES[int(rng.integers(len(_FUZZ_DTYPES)))]
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        hi = min(info.max, int(10 ** rng.uniform(0, 18)))
        lo = max(info.min, -hi) if rng.random() < 0.7 else 0
        return torch.randint(lo, hi + 1, shape, dtype=dtype, generator=g)
    t = torch.randn(shape, dtype=torch.float64, generator=g) * 10 ** rng.uniform(-9, 12)
    if rng.random() < 0.3:
        t = t.round()  # integer-valued floats
    if t.numel() and rng.random() < 0.3:
        flat = t.view(-1)
        for v in (nan, inf, -inf, 0.0, -0.0):
            if rng.random() < 0.5:
                flat[int(rng.integers(flat.numel()))] = v
    return t.to(dtype)


@pytest.mark.parametrize("seed", range(300))
def test_fuzz_default_options(seed):
    check(_random_tensor(seed))


@pytest.mark.parametrize("seed", range(300, 500))
def test_fuzz_random_options(seed):
    rng = np.random.default_rng(seed)
    set_both(
        precision=int(rng.integers(0, 9)),
        threshold=int(rng.choice([0, 10, 100, 1000, 5000])),
        edgeitems=int(rng.integers(0, 5)),
        linewidth=int(rng.integers(20, 160)),
        sci_mode=[None, True, False][int(rng.integers(3))],
    )
    check(_random_tensor(seed))
