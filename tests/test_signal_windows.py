"""oneflow.signal.windows (python/oneflow/signal/windows.py) against torch.signal.windows: values,
dtype and shape over window lengths, symmetric and periodic forms, both dtypes and several
parameter values; requires_grad; the default dtype; signatures; errors (type and message)."""

import inspect

import numpy as np
import pytest
import torch

from error_cases import raises_like_torch
from harness import flow

W = flow.signal.windows
T = torch.signal.windows

LENGTHS = (0, 1, 2, 5, 10, 11)
DTYPES = ("float32", "float64")
# (rtol, atol). The differences seen are a few ulps of 1 (linspace, cos, exp, i0 kernels that
# round differently), so float64 holds far tighter than float32; atol covers the windows'
# near-zero ends (blackman, nuttall), where a relative bound is meaningless.
TOL = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-14)}

# Each window with representative parameter values (defaults first).
CASES = [
    ("bartlett", {}),
    ("blackman", {}),
    ("cosine", {}),
    ("exponential", {}),
    ("exponential", {"tau": 0.5}),
    ("exponential", {"tau": 3.5}),
    ("gaussian", {}),
    ("gaussian", {"std": 0.3}),
    ("gaussian", {"std": 2.7}),
    ("general_cosine", {"a": [0.5, 0.5]}),
    ("general_cosine", {"a": [0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368]}),
    ("general_cosine", {"a": (1.0,)}),
    ("general_hamming", {}),
    ("general_hamming", {"alpha": 0.6}),
    ("general_hamming", {"alpha": 0.0}),
    ("hamming", {}),
    ("hann", {}),
    ("kaiser", {}),
    ("kaiser", {"beta": 0.0}),
    ("kaiser", {"beta": 5.5}),
    ("kaiser", {"beta": 30.0}),
    ("nuttall", {}),
]


def _ids(case):
    name, kw = case
    return name + "".join(f"-{k}={v}" for k, v in kw.items())


def check_same(out_f, out_t, what):
    dname = str(out_t.dtype).split(".")[1]
    assert str(out_f.dtype) == f"oneflow.{dname}", what
    assert tuple(out_f.shape) == tuple(out_t.shape), what
    rtol, atol = TOL[dname]
    np.testing.assert_allclose(out_f.numpy(), out_t.numpy(), rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sym", [True, False])
def test_values(case, dtype, sym):
    name, kw = case
    for M in LENGTHS:
        out_f = getattr(W, name)(M, sym=sym, dtype=getattr(flow, dtype), **kw)
        out_t = getattr(T, name)(M, sym=sym, dtype=getattr(torch, dtype), **kw)
        check_same(out_f, out_t, f"{name}({M}, sym={sym}, {kw}) {dtype}")


def test_trivial_lengths():
    # M = 0 is empty and M = 1 a single 1 for every window (with its default parameters).
    for name, kw in CASES:
        assert tuple(getattr(W, name)(0, **kw).shape) == (0,), name
        assert getattr(W, name)(1, **kw).tolist() == [1.0], name


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("center", [0.0, 2.0, 4.5, -1.25, 13.0])
@pytest.mark.parametrize("tau", [1.0, 2.5])
def test_exponential_center(dtype, center, tau):
    # `center` is accepted only for periodic windows.
    for M in LENGTHS:
        out_f = W.exponential(M, center=center, tau=tau, sym=False, dtype=getattr(flow, dtype))
        out_t = T.exponential(M, center=center, tau=tau, sym=False, dtype=getattr(torch, dtype))
        check_same(out_f, out_t, f"exponential({M}, center={center}, tau={tau}) {dtype}")


def test_symmetry_and_periodic_form():
    # Symmetric windows mirror (to rounding: cos(2 pi - x) and cos(x) may differ in the last
    # bit) and peak at 1 in the middle of an odd length; a periodic window of length M is the
    # symmetric one of length M + 1 without its last point.
    for name, kw in CASES:
        w = getattr(W, name)(11, dtype=flow.float64, **kw).numpy()
        np.testing.assert_allclose(w, w[::-1], rtol=0, atol=1e-15, err_msg=name)
        if name not in ("general_cosine", "general_hamming"):
            assert abs(w[5] - 1.0) < 1e-15, name
        for M in LENGTHS[2:]:
            per = getattr(W, name)(M, sym=False, dtype=flow.float64, **kw).numpy()
            full = getattr(W, name)(M + 1, dtype=flow.float64, **kw).numpy()
            np.testing.assert_allclose(per, full[:M], rtol=0, atol=1e-15, err_msg=f"{name} {M}")


@pytest.mark.parametrize("default", DTYPES)
def test_default_dtype(default):
    old_f, old_t = flow.get_default_dtype(), torch.get_default_dtype()
    flow.set_default_dtype(getattr(flow, default))
    torch.set_default_dtype(getattr(torch, default))
    try:
        for name, kw in CASES:
            out_f, out_t = getattr(W, name)(10, **kw), getattr(T, name)(10, **kw)
            assert str(out_f.dtype) == f"oneflow.{default}", name
            check_same(out_f, out_t, f"{name} default {default}")
    finally:
        flow.set_default_dtype(old_f)
        torch.set_default_dtype(old_t)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_requires_grad(case):
    # As in torch: True when asked for; a leaf only where no op ran on the positions.
    name, kw = case
    for M in LENGTHS:
        for rg in (False, True):
            out_f = getattr(W, name)(M, requires_grad=rg, **kw)
            out_t = getattr(T, name)(M, requires_grad=rg, **kw)
            assert out_f.requires_grad == out_t.requires_grad == rg, (name, M, rg)
            assert out_f.is_leaf == out_t.is_leaf, (name, M, rg)


def test_requires_grad_backward():
    # A window that requires grad can be part of a graph that is differentiated.
    x = flow.ones(10, requires_grad=True)
    (x * W.hann(10, requires_grad=True)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), T.hann(10).numpy(), rtol=1e-6, atol=1e-7)


def test_device_and_layout_arguments():
    out = W.kaiser(7, beta=4.0, device="cpu", layout=flow.strided, dtype=flow.float64)
    assert out.device.type == "cpu"
    check_same(out, T.kaiser(7, beta=4.0, device="cpu", dtype=torch.float64), "kaiser cpu")
    out = W.hann(6, device=flow.device("cpu"))
    assert out.device.type == "cpu"
    check_same(out, T.hann(6), "hann cpu")


def test_signatures_and_names():
    assert sorted(W.__all__) == sorted(T.__all__)
    assert flow.signal.windows is W
    for name in T.__all__:
        ours = inspect.signature(getattr(W, name)).parameters.values()
        theirs = inspect.signature(getattr(T, name)).parameters.values()
        expected = [(p.name, p.kind, flow.strided if p.default is torch.strided else p.default)
                    for p in theirs]
        assert [(p.name, p.kind, p.default) for p in ours] == expected, name


def assert_same_error(name, args, kwargs_f, kwargs_t=None, message=True):
    """Both libraries' windows raise alike (kwargs_t: torch's keywords where they differ)."""
    return raises_like_torch(lambda lib: getattr(T if lib is torch else W, name)(
        *args, **(kwargs_f if lib is flow or kwargs_t is None else kwargs_t)), message=message)


ALL_NAMES = [(n, {"a": [0.5, 0.5]} if n == "general_cosine" else {}) for n in T.__all__]


@pytest.mark.parametrize("name,kw", ALL_NAMES, ids=[n for n, _ in ALL_NAMES])
def test_negative_length(name, kw):
    for M in (-1, -7):
        assert_same_error(name, (M,), kw)


@pytest.mark.parametrize("name,kw", ALL_NAMES, ids=[n for n, _ in ALL_NAMES])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16", "bfloat16",
                                   "complex64"])
def test_bad_dtype(name, kw, dtype):
    # torch accepts float32 and float64 only, also for M = 0.
    for M in (0, 5):
        assert_same_error(name, (M,), dict(kw, dtype=getattr(flow, dtype)),
                          dict(kw, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("name,kw", ALL_NAMES, ids=[n for n, _ in ALL_NAMES])
def test_bad_layout(name, kw):
    # oneflow has only strided tensors and no public constructor of other layouts (layout() is a
    # TypeError, as torch's); a layout object of another name stands for torch.sparse_coo.
    assert_same_error(name, (5,), dict(kw, layout=flow.layout._make("sparse_coo")),
                      dict(kw, layout=torch.sparse_coo))


def test_check_order():
    # Length before layout before dtype before the window's own parameters.
    assert_same_error("gaussian", (-1,), {"std": -1.0, "dtype": flow.int64},
                      {"std": -1.0, "dtype": torch.int64})
    assert_same_error("kaiser", (3,), {"beta": -1.0, "dtype": flow.int64},
                      {"beta": -1.0, "dtype": torch.int64})
    assert_same_error("exponential", (3,), {"tau": 0.0, "center": 1.0})


@pytest.mark.parametrize("std", [0.0, -1.0])
def test_gaussian_bad_std(std):
    for M in (0, 5):
        assert_same_error("gaussian", (M,), {"std": std})


@pytest.mark.parametrize("tau", [0.0, -2.5])
def test_exponential_bad_tau(tau):
    for M in (0, 5):
        assert_same_error("exponential", (M,), {"tau": tau})


def test_exponential_center_with_sym():
    for M in (0, 1, 5):
        assert_same_error("exponential", (M,), {"center": 1.0})
        assert_same_error("exponential", (M,), {"center": 1.0, "sym": True})


@pytest.mark.parametrize("beta", [-0.5, -12.0])
def test_kaiser_bad_beta(beta):
    for M in (0, 5):
        assert_same_error("kaiser", (M,), {"beta": beta})


def test_general_cosine_bad_coefficients():
    assert_same_error("general_cosine", (5,), {"a": 0.5})
    assert_same_error("general_cosine", (5,), {"a": []})
    assert_same_error("general_cosine", (5,), {"a": ()})
    # torch only looks at `a` when a coefficient is needed (M >= 2).
    for M in (0, 1):
        check_same(W.general_cosine(M, a=[]), T.general_cosine(M, a=[]), f"a=[] M={M}")


def test_keyword_only_and_required():
    # Options are keyword-only, and general_cosine needs `a`.
    for name, kw in ALL_NAMES:
        ef, et = assert_same_error(name, (5, True), kw, message=False)
        assert type(ef) is type(et) is TypeError, name
    ef, et = assert_same_error("general_cosine", (5,), {}, message=False)
    assert type(ef) is type(et) is TypeError
    assert "'a'" in str(ef) and "'a'" in str(et)
