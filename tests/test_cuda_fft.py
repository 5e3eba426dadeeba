"""FFTs of CUDA tensors on cuFFT (Note [cuFFT transforms], src/cuda/fft.cu) against the CPU's
FFTW kernels (the oracle): every flow.fft function, transform dims anywhere (permuted layouts),
more than three transform dims (several cuFFT passes), norms, non-contiguous inputs, float32 /
float64, and gradients. The host fallback is off, so a missing kernel fails. Marker ``cuda``:
skipped with the reason where there is no device; with DEV = "cpu" the test logic runs anywhere."""

import numpy as np
import pytest

import oneflow as flow

cuda = pytest.mark.cuda
DEV = "cuda"
TOL = {"float32": 2e-4, "float64": 1e-10}


pytestmark = pytest.mark.usefixtures("cuda_kernels_only")


def _real(shape, dtype, seed=0):
    return flow.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def _cplx(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return flow.tensor(z, dtype=flow.complex64 if dtype == "float32" else flow.complex128)


def _close(got, want, dtype, what):
    assert got.device.type == DEV and got.dtype == want.dtype and got.shape == want.shape, what
    scale = max(1.0, float(np.abs(want.numpy()).max()) if want.numel() else 1.0)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=TOL[dtype], atol=TOL[dtype] * scale,
                               err_msg=what)


CASES = [
    ("fft", "c", (6, 10), dict()),
    ("fft", "c", (6, 10), dict(dim=0, norm="ortho")),
    ("fft", "r", (7, 9), dict(n=12)),
    ("ifft", "c", (4, 8), dict(norm="forward")),
    ("fft2", "c", (3, 6, 10), dict()),
    ("fft2", "c", (3, 6, 10), dict(dim=(0, 2))),
    ("fftn", "c", (2, 3, 4, 5, 3), dict()),  # five dims: two cuFFT passes
    ("ifftn", "c", (2, 3, 4, 5), dict(dim=(3, 0, 1, 2), norm="ortho")),
    ("rfft", "r", (5, 16), dict()),
    ("rfft", "r", (9, 6), dict(dim=0)),
    ("irfft", "c", (5, 9), dict()),
    ("irfft", "c", (5, 9), dict(n=20, norm="ortho")),
    ("rfft2", "r", (3, 8, 6), dict()),
    ("irfft2", "c", (3, 8, 4), dict()),
    ("rfftn", "r", (2, 3, 4, 6), dict()),
    ("irfftn", "c", (2, 3, 4, 4), dict()),
    ("hfft", "c", (4, 7), dict()),
    ("ihfft", "r", (4, 10), dict()),
]


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[2])}d-{'-'.join(map(str, c[3].values()))}")
def test_fft_matches_cpu(case, dtype):
    name, kind, shape, kw = case
    x = _cplx(shape, dtype) if kind == "c" else _real(shape, dtype)
    fn = getattr(flow.fft, name)
    _close(fn(x.to(DEV), **kw), fn(x, **kw), dtype, name)
    xt = x.transpose(0, -1)  # non-contiguous input
    _close(fn(xt.to(DEV), **kw), fn(xt, **kw), dtype, name + " of a transposed input")


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fft_gradients(dtype):
    x = _real((4, 6), dtype, seed=1)
    z = _cplx((4, 6), dtype, seed=2)

    def loss(a, b):
        return (flow.fft.rfft(a).abs().sum() + flow.fft.irfft(b).pow(2).sum()
                + flow.fft.fft2(b).real.sum())

    host = [x.clone().requires_grad_(), z.clone().requires_grad_()]
    dev = [x.to(DEV).requires_grad_(), z.to(DEV).requires_grad_()]
    loss(*host).backward()
    loss(*dev).backward()
    for h, d in zip(host, dev):
        _close(d.grad, h.grad, dtype, "gradient")


@cuda
def test_fft_zero_size_and_repeated_plans():
    x = _cplx((0, 8), "float32")
    assert flow.fft.fft(x.to(DEV)).shape == (0, 8)
    y = _cplx((3, 8), "float32")
    for _ in range(3):  # the cached plan serves repeated calls
        _close(flow.fft.fft(y.to(DEV)), flow.fft.fft(y), "float32", "repeated")
