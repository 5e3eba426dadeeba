"""flow.fft (python/oneflow/fft.py over the FFTW primitives of src/ops/table/fft.yaml), windows,
stft / istft: forward and gradients against torch over dtypes, n / s, dim, norm, non-contiguous
and zero-size inputs, error paths; gradients also by finite differences."""

import numpy as np
import pytest
import torch

from harness import assert_close, flow

RNG = np.random.default_rng(1)
NORMS = [None, "backward", "ortho", "forward"]
TOL = {"float32": (2e-5, 2e-5), "complex64": (2e-5, 2e-5), "float64": (1e-10, 1e-10),
       "complex128": (1e-10, 1e-10)}


def rand(shape, dtype):
    v = RNG.uniform(-1, 1, shape)
    if dtype.startswith("complex"):
        v = v + 1j * RNG.uniform(-1, 1, shape)
    return v.astype(dtype)


def check(fname, a, kwargs, dtype, noncontig=False):
    f, t = flow.tensor(a), torch.tensor(a)
    if noncontig:
        f, t = f.transpose(0, -1), t.transpose(0, -1)
    out_f = getattr(flow.fft, fname)(f, **kwargs)
    if a.size == 0:
        # torch's MKL backend refuses empty batches; its meta kernels give the expected shape.
        out_t = getattr(torch.fft, fname)(t.to("meta"), **kwargs)
        assert tuple(out_f.shape) == tuple(out_t.shape)
        assert str(out_f.dtype).split(".")[1] == str(out_t.dtype).split(".")[1]
        return
    out_t = getattr(torch.fft, fname)(t, **kwargs)
    rtol, atol = TOL[str(out_t.dtype).split(".")[1]]
    assert_close(out_f, out_t, rtol=rtol, atol=atol, what=f"{fname}{kwargs}")


ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn"}


def dtypes_for(fname):
    return ["float32", "float64"] if fname in REAL_ONLY else ["float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("fname", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
def test_one_dim_forward(fname, norm):
    for dtype in dtypes_for(fname):
        for shape, kw in [((8,), {}), ((7,), {}), ((3, 10), {"dim": 0}), ((3, 10), {"n": 6}),
                          ((3, 10), {"n": 13, "dim": -1}), ((2, 3, 5), {"dim": 1, "n": 4}), ((1,), {}),
                          ((0, 4), {"dim": 1})]:
            if fname in ("irfft", "hfft") and shape[kw.get("dim", -1)] == 1 and "n" not in kw:
                continue  # default n = 2 (m - 1) = 0: an error, tested below
            check(fname, rand(shape, dtype), dict(kw, norm=norm), dtype)
        check(fname, rand((6, 5), dtype), {"norm": norm}, dtype, noncontig=True)


@pytest.mark.parametrize("fname", N_D)
@pytest.mark.parametrize("norm", NORMS)
def test_n_dim_forward(fname, norm):
    nd = fname.endswith("n")
    for dtype in dtypes_for(fname):
        cases = [((4, 6), {}), ((3, 4, 5), {}), ((3, 4, 5), {"dim": (0, 2)}), ((3, 4, 5), {"s": (3, 7)}),
                 ((3, 4, 5), {"s": (5, -1), "dim": (2, 0)}), ((4, 6), {"dim": (1, 0)})]
        if nd:
            cases += [((3, 4, 5), {"dim": 1}), ((2, 3, 4), {"s": (2, 3, 4)}), ((2, 3, 4), {"dim": (-1,)})]
        for shape, kw in cases:
            check(fname, rand(shape, dtype), dict(kw, norm=norm), dtype)
        check(fname, rand((4, 3, 6), dtype), {"norm": norm}, dtype, noncontig=True)


def test_freq_and_shift():
    for n, d in [(1, 1.0), (8, 1.0), (9, 0.5), (10, 2.0)]:
        assert_close(flow.fft.fftfreq(n, d), torch.fft.fftfreq(n, d))
        assert_close(flow.fft.rfftfreq(n, d), torch.fft.rfftfreq(n, d))
    assert_close(flow.fft.fftfreq(5, dtype=flow.float64), torch.fft.fftfreq(5, dtype=torch.float64))
    a = rand((4, 5, 3), "complex64")
    for dim in [None, 0, (1, 2), -1]:
        assert_close(flow.fft.fftshift(flow.tensor(a), dim), torch.fft.fftshift(torch.tensor(a), dim))
        assert_close(flow.fft.ifftshift(flow.tensor(a), dim), torch.fft.ifftshift(torch.tensor(a), dim))


def test_integer_input_promotes():
    a = np.arange(8)
    assert_close(flow.fft.fft(flow.tensor(a)), torch.fft.fft(torch.tensor(a)), rtol=1e-5, atol=1e-5)
    assert_close(flow.fft.rfft(flow.tensor(a)), torch.fft.rfft(torch.tensor(a)), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# gradients


GRAD_CASES = [
    ("fft", (6,), {}), ("fft", (3, 5), {"n": 7, "norm": "ortho"}), ("ifft", (4, 5), {"dim": 0, "n": 3}),
    ("rfft", (7,), {}), ("rfft", (3, 6), {"norm": "forward"}), ("rfft", (3, 6), {"n": 9}),
    ("irfft", (5,), {}), ("irfft", (3, 4), {"n": 7, "norm": "ortho"}), ("irfft", (3, 4), {"dim": 0}),
    ("hfft", (4,), {}), ("hfft", (3, 4), {"n": 5}), ("ihfft", (6,), {}), ("ihfft", (2, 5), {"norm": "ortho"}),
    ("fft2", (3, 4), {}), ("ifft2", (3, 4), {"s": (4, 3)}), ("fftn", (2, 3, 4), {"dim": (0, 2)}),
    ("ifftn", (2, 3, 2), {"norm": "forward"}), ("rfft2", (3, 4), {}), ("rfftn", (2, 3, 5), {"s": (3, 4)}),
    ("irfft2", (3, 4), {}), ("irfftn", (2, 3, 3), {"s": (2, 3, 5), "norm": "ortho"}),
]


# Real-input-only functions (rfft, ihfft, rfftn, rfft2) get float64 inputs only (complex input
# is an error, tested below).
GRAD_PARAMS = [(f, s, k, d) for f, s, k in GRAD_CASES for d in ("float64", "complex128")
               if not (f in REAL_ONLY and d == "complex128")]


@pytest.mark.parametrize("fname,shape,kw,dtype", GRAD_PARAMS,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in GRAD_PARAMS])
def test_gradients(fname, shape, kw, dtype):
    a = rand(shape, dtype)
    x = flow.tensor(a, requires_grad=True)
    y = getattr(flow.fft, fname)(x, **kw)
    tx = torch.tensor(a, requires_grad=True)
    ty = getattr(torch.fft, fname)(tx, **kw)
    g = rand(tuple(ty.shape), "complex128" if ty.is_complex() else "float64")
    (gx,) = flow.autograd.grad(y, [x], flow.tensor(g))
    (rx,) = torch.autograd.grad(ty, [tx], torch.tensor(g))
    assert_close(gx, rx, rtol=1e-10, atol=1e-10)

    # Finite differences of the real loss L = Re <g, f(x)> (PyTorch's convention for complex x:
    # the gradient is dL/dRe + i dL/dIm).
    def loss(v):
        out = getattr(flow.fft, fname)(flow.tensor(v), **kw).numpy()
        return float(np.real(np.sum(out * np.conj(g))))

    num = np.zeros_like(a)
    eps = 1e-6
    units = (1.0, 1j) if dtype == "complex128" else (1.0,)
    for k in range(a.size):
        for u in units:
            p, m = a.copy(), a.copy()
            p.reshape(-1)[k] += eps * u
            m.reshape(-1)[k] -= eps * u
            num.reshape(-1)[k] += u * (loss(p) - loss(m)) / (2 * eps)
    np.testing.assert_allclose(gx.numpy(), num, rtol=1e-5, atol=1e-6)


def test_gradient_float32():
    a = rand((4, 6), "float32")
    x = flow.tensor(a, requires_grad=True)
    flow.fft.rfft2(x).abs().sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    torch.fft.rfft2(tx).abs().sum().backward()
    assert_close(x.grad, tx.grad, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("call,exc,words", [
    (lambda: flow.fft.fft(flow.ones(4), norm="bad"), RuntimeError, ["fft", "normalization", "bad"]),
    (lambda: flow.fft.rfftn(flow.ones(4), norm="ortho2"), RuntimeError, ["rfftn", "normalization"]),
    (lambda: flow.fft.fft(flow.tensor(1.0)), IndexError, ["fft", "no dimensions"]),
    (lambda: flow.fft.fft(flow.ones(4), n=0), RuntimeError, ["fft", "Invalid number of data points (0)"]),
    (lambda: flow.fft.fft(flow.ones(4), dim=1), IndexError, ["fft", "Dimension out of range"]),
    (lambda: flow.fft.rfft(flow.ones(4, dtype=flow.complex64)), RuntimeError, ["rfft", "real"]),
    (lambda: flow.fft.ihfft(flow.ones(4, dtype=flow.complex64)), RuntimeError, ["ihfft", "real"]),
    (lambda: flow.fft.rfftn(flow.ones(2, 2, dtype=flow.complex64)), RuntimeError, ["rfftn", "real"]),
    (lambda: flow.fft.irfft(flow.ones(1, dtype=flow.complex64)), RuntimeError, ["irfft", "(0)"]),
    (lambda: flow.fft.fftn(flow.ones(3, 3), dim=(0, 0)), RuntimeError, ["fftn", "unique"]),
    (lambda: flow.fft.fftn(flow.ones(3, 3), s=(1, 2, 3)), RuntimeError, ["fftn", "shape"]),
    (lambda: flow.fft.fft2(flow.ones(3, 3), s=(2,), dim=(0, 1)), RuntimeError, ["fft2", "same length"]),
    (lambda: flow.fft.fft(flow.ones(4, dtype=flow.float16)), RuntimeError, ["fft", "Unsupported dtype"]),
])
def test_errors(call, exc, words):
    with pytest.raises(exc) as e:
        call()
    for w in words:
        assert w in str(e.value), str(e.value)


# ---------------------------------------------------------------------------
# windows, stft, istft


WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_windows(name):
    for n in [0, 1, 2, 5, 8, 33]:
        for periodic in (True, False):
            for dtype in ("float32", "float64"):
                f = getattr(flow, name)(n, periodic, dtype=getattr(flow, dtype))
                t = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
                assert_close(f, t, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6 if dtype == "float32" else 1e-12)
    assert getattr(flow, name)(4).dtype == flow.float32
    with pytest.raises(RuntimeError, match=name):
        getattr(flow, name)(-1)
    with pytest.raises(RuntimeError, match="floating point"):
        getattr(flow, name)(4, dtype=flow.int64)


def test_kaiser_beta_and_hamming_coefficients():
    assert_close(flow.kaiser_window(10, True, 5.0), torch.kaiser_window(10, True, 5.0), rtol=1e-5, atol=1e-6)
    assert_close(flow.hamming_window(7, False, 0.6, 0.3), torch.hamming_window(7, False, 0.6, 0.3),
                 rtol=1e-5, atol=1e-6)


STFT_CASES = [
    ((64,), dict(n_fft=16)),
    ((2, 50), dict(n_fft=12, hop_length=5, window="hann")),
    ((40,), dict(n_fft=10, win_length=6, window="hamming", center=False)),
    ((40,), dict(n_fft=8, normalized=True, onesided=False)),
    ((2, 33), dict(n_fft=8, hop_length=3, pad_mode="constant", window="hann")),
]


def _stft_args(lib, kw, dtype):
    kw = dict(kw)
    w = kw.pop("window", None)
    if w is not None:
        n = kw.get("win_length", kw["n_fft"])
        kw["window"] = getattr(lib, w + "_window")(n, dtype=getattr(lib, dtype))
    return kw


@pytest.mark.parametrize("case", range(len(STFT_CASES)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stft_istft(case, dtype):
    shape, kw = STFT_CASES[case]
    a = rand(shape, dtype)
    fx = flow.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    fs = flow.stft(fx, return_complex=True, **_stft_args(flow, kw, dtype))
    ts = torch.stft(tx, return_complex=True, **_stft_args(torch, kw, dtype))
    rtol, atol = TOL[dtype]
    assert_close(fs, ts, rtol=rtol * 10, atol=atol * 10)
    g = rand(tuple(ts.shape), "complex128").astype(ts.numpy().dtype if False else np.complex128)
    g = g.astype(np.complex64 if dtype == "float32" else np.complex128)
    (gf,) = flow.autograd.grad(fs, [fx], flow.tensor(g))
    (gt,) = torch.autograd.grad(ts, [tx], torch.tensor(g))
    assert_close(gf, gt, rtol=rtol * 10, atol=atol * 10)
    # view_as_real output form
    assert_close(flow.stft(flow.tensor(a), return_complex=False, **_stft_args(flow, kw, dtype)),
                 torch.stft(torch.tensor(a), return_complex=False, **_stft_args(torch, kw, dtype)),
                 rtol=rtol * 10, atol=atol * 10)
    # istft inverts (where the window overlap-add is nonzero), as torch's does
    ikw = {k: v for k, v in kw.items() if k not in ("pad_mode",)}
    if kw.get("center", True) is False:
        return  # torch: the window envelope is zero at the ends without centering
    fi = flow.istft(fs.detach(), length=shape[-1], **_stft_args(flow, ikw, dtype))
    ti = torch.istft(ts.detach(), length=shape[-1], **_stft_args(torch, ikw, dtype))
    assert_close(fi, ti, rtol=rtol * 10, atol=atol * 10)


def test_stft_errors():
    x = flow.ones(20)
    with pytest.raises(RuntimeError, match="return_complex"):
        flow.stft(x, 8)
    with pytest.raises(RuntimeError, match="n_fft"):
        flow.stft(x, 40, center=False, return_complex=True)
    with pytest.raises(RuntimeError, match="hop_length"):
        flow.stft(x, 8, hop_length=0, return_complex=True)
    with pytest.raises(RuntimeError, match="window"):
        flow.stft(x, 8, window=flow.ones(5), return_complex=True)
    with pytest.raises(RuntimeError, match="1D or 2D"):
        flow.stft(flow.ones(2, 2, 20), 8, return_complex=True)
    with pytest.raises(RuntimeError, match="complex"):
        flow.istft(x, 8)


# ---------------------------------------------------------------------------
# Note [FFTW wisdom] (kernels/fft.cpp): measured plans are saved and read back by later processes

_WISDOM_SCRIPT = """
import numpy as np, oneflow as flow
for dt in ("complex64", "complex128"):
    x = np.random.default_rng(0).standard_normal(96).astype(dt)
    y = flow.fft.fft(flow.tensor(x)).numpy()
    assert np.allclose(y, np.fft.fft(x), rtol=1e-4, atol=1e-4), dt
print("ok")
"""


def _run_with_wisdom(prefix):
    import os
    import subprocess
    import sys

    env = dict(os.environ, ONEFLOW_FFTW_WISDOM=str(prefix), ONEFLOW_FFTW_PLANNER="measure")
    r = subprocess.run([sys.executable, "-c", _WISDOM_SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_fftw_wisdom_is_saved_and_reused(tmp_path):
    prefix = tmp_path / "sub" / "wisdom"
    _run_with_wisdom(prefix)  # creates the folder and one file per precision
    for suffix in ("f", "d"):
        text = (tmp_path / "sub" / f"wisdom_{suffix}").read_text()
        assert text.startswith("(fftw-"), text[:40]
    assert not [p for p in (tmp_path / "sub").iterdir() if ".tmp" in p.name]  # written whole, renamed
    files = sorted((tmp_path / "sub").iterdir())
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in files]
    _run_with_wisdom(prefix)  # reads it back
    # Note [Choosing among measured plans]: the saved wisdom holds the chosen plans, so the later
    # process finds them (FFTW_WISDOM_ONLY) and neither measures nor rewrites the files.
    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in files] == before


def test_fftw_wisdom_file_that_is_not_wisdom_is_ignored(tmp_path):
    (tmp_path / "wisdom_f").write_text("not wisdom")
    (tmp_path / "wisdom_d").write_bytes(b"\x00\xff" * 10)
    _run_with_wisdom(tmp_path / "wisdom")
    assert (tmp_path / "wisdom_f").read_text().startswith("(fftw-")  # replaced by real wisdom


@pytest.mark.parametrize("norm", [None, "forward", "ortho", "backward"])
@pytest.mark.parametrize("name,kw", [("hfftn", {}), ("hfft2", {}), ("hfftn", {"s": (3, 8)}), ("hfftn", {"dim": (0, 2)}),
                                     ("ihfftn", {}), ("ihfft2", {}), ("ihfftn", {"dim": (0, 2)}),
                                     ("ihfftn", {"s": (2, 4), "dim": (1, 2)})])
def test_hermitian_nd_transforms(name, kw, norm):
    rng = np.random.default_rng(7)
    if name.startswith("h"):
        x = (rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))).astype(np.complex128)
    else:
        x = rng.standard_normal((3, 4, 6))
    tf, tt = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = getattr(flow.fft, name)(tf, norm=norm, **kw), getattr(torch.fft, name)(tt, norm=norm, **kw)
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-10)
    w = rng.standard_normal(tuple(want.shape))
    (got.abs() * flow.tensor(w)).sum().backward(), (want.abs() * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(tf.grad.numpy(), tt.grad.numpy(), rtol=1e-8, atol=1e-10)
