"""OpInfos of the fft family's primitives (src/ops/table/fft.yaml), against torch's
_fft_c2c / _fft_r2c / _fft_c2r. The public flow.fft functions over them: tests/test_fft.py."""

from .core import *  # noqa: F401,F403

_FFT_TOL = {"float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}
_NORMS = (0, 1, 2)


def _c2c_samples(dtype, rng):
    out = []
    for shape, dims in [((8,), [0]), ((3, 5), [1]), ((3, 5), [0]), ((2, 3, 4), [0, 2]),
                        ((4, 6), [0, 1]), ((2, 3, 4), [2, 0, 1]), ((3, 1), [1])]:
        for norm in _NORMS:
            for fwd in (True, False):
                out.append(Sample((arr(rng, shape, dtype), dims, norm, fwd),
                                  desc=f"{shape} dims={dims} norm={norm} forward={fwd}"))
    out.append(Sample((arr(rng, (3, 4), dtype), [2], 0, True), desc="dim out of range (error)",
                      error_types=(IndexError, RuntimeError)))
    return out


def _r2c_samples(dtype, rng):
    out = []
    for shape, dims in [((8,), [0]), ((7,), [0]), ((3, 5), [1]), ((3, 6), [0]), ((2, 3, 4), [0, 2]),
                        ((4, 5), [1, 0]), ((3, 1), [1])]:
        for norm in _NORMS:
            out.append(Sample((arr(rng, shape, dtype), dims, norm, True),
                              desc=f"{shape} dims={dims} norm={norm}"))
    return out


def _c2r_samples(dtype, rng):
    out = []
    # (input shape, dims, last_dim_size): input's last transformed dim is last_dim_size // 2 + 1.
    for shape, dims, n in [((5,), [0], 8), ((4,), [0], 7), ((3, 3), [1], 4), ((3, 4), [1], 7),
                           ((4, 3), [0, 1], 5), ((2, 3, 4), [0, 2], 6), ((2, 1), [1], 1)]:
        for norm in _NORMS:
            out.append(Sample((arr(rng, shape, dtype), dims, norm, n),
                              desc=f"{shape} dims={dims} norm={norm} n={n}"))
    return out


add(
    OpInfo("fft_c2c", "fft", COMPLEX, _c2c_samples, fn=lambda lib: lib._C.fft_c2c,
           ref=lambda torch: torch._fft_c2c, method="", tol=_FFT_TOL),
    OpInfo("fft_r2c", "fft", ("float32", "float64"), _r2c_samples, fn=lambda lib: lib._C.fft_r2c,
           ref=lambda torch: torch._fft_r2c, method="", tol=_FFT_TOL),
    OpInfo("fft_c2r", "fft", COMPLEX, _c2r_samples, fn=lambda lib: lib._C.fft_c2r,
           ref=lambda torch: torch._fft_c2r, method="", tol=_FFT_TOL),
)
