"""oneflow.fft: discrete Fourier transforms (PyTorch's torch.fft API).

Every function is argument handling (n / s, dim, norm, resizing, dtype promotion) over three
table primitives on FFTW, as in PyTorch: ``_C.fft_c2c`` (complex to complex), ``_C.fft_r2c``
(real to one-sided complex) and ``_C.fft_c2r`` (one-sided complex to real). Their backward
formulas, with those of the resizing ops (narrow / cat / cast), give the gradients.
"""
import builtins
import numbers as _numbers
import math

from . import _oneflow_internal as _C
from ._export import export as _export

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
    "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

# PyTorch's fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n.
_NONE, _ROOT_N, _BY_N = 0, 1, 2


def _norm_mode(norm, forward, fname):
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _ROOT_N
    raise RuntimeError(f'{fname}: Invalid normalization mode: "{norm}"')


def _tensor(x, fname):
    """The input, checked to be a Tensor (PyTorch's parser: a TypeError naming the op)."""
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


# The transforms on PyTorch's CPU autocast float32 list (its hfft2 / hfftn / ihfft2 / ihfftn are
# not): under autocast, a 16-bit float input runs in float32 instead of being refused.
_AUTOCAST_FP32 = frozenset({"fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
                            "rfftn", "irfftn", "hfft", "ihfft"})


def _promote(x, require_complex, fname):
    dt = x.dtype
    if dt.is_complex:
        return x
    if (dt in (_C.bfloat16, _C.float16) and fname in _AUTOCAST_FP32
            and _C._autocast_is_enabled("cuda" if x.device.type == "cuda" else "cpu")):
        x = _C.cast(x, _C.float32)
        dt = _C.float32
    if not dt.is_floating_point:
        dt = _C.get_default_dtype()
    if dt not in (_C.float32, _C.float64):
        raise RuntimeError(f"{fname}: Unsupported dtype {dt.name}")
    if require_complex:
        dt = _C.complex128 if dt == _C.float64 else _C.complex64
    return x if dt == x.dtype else _C.cast(x, dt)


def _wrap(d, ndim, fname):
    if not isinstance(d, builtins.int) or isinstance(d, builtins.bool):
        raise TypeError(f"{fname}: dim must be an int, got {type(d).__name__}")
    if ndim == 0:
        raise IndexError(f"{fname}: Dimension specified as {d} but tensor has no dimensions")
    if d < -ndim or d >= ndim:
        raise IndexError(f"{fname}: Dimension out of range (expected to be in range of "
                         f"[{-ndim}, {ndim - 1}], but got {d})")
    return d % ndim


def _resize(x, dims, sizes):
    """Zero-pad or trim x along each of dims to the given sizes (differentiable)."""
    for d, n in zip(dims, sizes):
        cur = x.shape[d]
        if n < cur:
            x = x.narrow(d, 0, n)
        elif n > cur:
            shape = list(x.shape)
            shape[d] = n - cur
            x = _C.cat([x, _C.zeros(shape, dtype=x.dtype, device=x.device)], d)
    return x


def _check_n(n, fname, arg="n"):
    # A float or NaN count compared as a number (`fft(x, nan)` returned the untrimmed transform):
    # PyTorch's parser takes an int only.
    if isinstance(n, builtins.bool) or not isinstance(n, _numbers.Integral):
        raise TypeError(f"{fname}(): argument '{arg}' must be int, not {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"{fname}: Invalid number of data points ({n}) specified")


def _one_dim(x, n, dim, fname):
    d = _wrap(dim, x.dim(), fname)
    if n is not None:
        _check_n(n, fname)
    return d


def _c2c_1d(fname, x, n, dim, norm, forward):
    x = _tensor(x, fname)
    x = _promote(x, True, fname)
    d = _one_dim(x, n, dim, fname)
    n = x.shape[d] if n is None else n
    _check_n(n, fname)
    x = _resize(x, [d], [n])
    return _C.fft_c2c(x, [d], _norm_mode(norm, forward, fname), forward)


@_export("flow.fft.fft", out=True)
def fft(input, n=None, dim=-1, norm=None):
    return _c2c_1d("fft", input, n, dim, norm, True)


@_export("flow.fft.ifft", out=True)
def ifft(input, n=None, dim=-1, norm=None):
    return _c2c_1d("ifft", input, n, dim, norm, False)


def _r2c_1d(fname, x, n, dim, norm, forward):
    x = _tensor(x, fname)
    if x.dtype.is_complex:
        raise RuntimeError(f"{fname} expects a real input tensor, but got {x.dtype}")
    x = _promote(x, False, fname)
    d = _one_dim(x, n, dim, fname)
    n = x.shape[d] if n is None else n
    _check_n(n, fname)
    x = _resize(x, [d], [n])
    out = _C.fft_r2c(x, [d], _norm_mode(norm, forward, fname), True)
    return out if forward else _C.conj(out)


@_export("flow.fft.rfft", out=True)
def rfft(input, n=None, dim=-1, norm=None):
    return _r2c_1d("rfft", input, n, dim, norm, True)


@_export("flow.fft.ihfft", out=True)
def ihfft(input, n=None, dim=-1, norm=None):
    return _r2c_1d("ihfft", input, n, dim, norm, False)


def _c2r_1d(fname, x, n, dim, norm, forward):
    x = _tensor(x, fname)
    x = _promote(x, True, fname)
    d = _one_dim(x, n, dim, fname)
    out_n = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(out_n, fname)
    x = _resize(x, [d], [out_n // 2 + 1])
    if forward:  # hfft: the c2r of the conjugate
        x = _C.conj(x)
    return _C.fft_c2r(x, [d], _norm_mode(norm, forward, fname), out_n)


@_export("flow.fft.irfft", out=True)
def irfft(input, n=None, dim=-1, norm=None):
    return _c2r_1d("irfft", input, n, dim, norm, False)


@_export("flow.fft.hfft", out=True)
def hfft(input, n=None, dim=-1, norm=None):
    return _c2r_1d("hfft", input, n, dim, norm, True)


def _shape_and_dims(x, s, dim, fname):
    """PyTorch's canonicalize_fft_shape_and_dim_args: the dims and signal sizes."""
    ndim = x.dim()
    if dim is not None:
        if isinstance(dim, builtins.int):
            dim = [dim]
        dims = [_wrap(d, ndim, fname) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{fname}: FFT dims must be unique")
    if s is not None:
        if isinstance(s, _C.Tensor) or not isinstance(s, (_numbers.Integral, list, tuple)):
            raise TypeError(f"{fname}(): argument 's' must be tuple of ints, not {type(s).__name__}")
        s = [s] if isinstance(s, _numbers.Integral) else list(s)
        for n in s:
            if isinstance(n, builtins.bool) or not isinstance(n, _numbers.Integral):
                raise TypeError(f"{fname}(): argument 's' must be tuple of ints, but found element of "
                                f"type {type(n).__name__}")
        if dim is not None and len(s) != len(dims):
            raise RuntimeError(f"{fname}: When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"{fname}: Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dim is None:
            dims = list(range(ndim - len(s), ndim))
        sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
        for n in sizes:
            _check_n(n, fname)
    else:
        if dim is None:
            dims = list(range(ndim))
        sizes = [x.shape[d] for d in dims]
    return dims, sizes


def _c2c_nd(fname, x, s, dim, norm, forward):
    x = _tensor(x, fname)
    x = _promote(x, True, fname)
    dims, sizes = _shape_and_dims(x, s, dim, fname)
    for n in sizes:
        _check_n(n, fname)
    x = _resize(x, dims, sizes)
    return _C.fft_c2c(x, dims, _norm_mode(norm, forward, fname), forward)


@_export("flow.fft.fftn", out=True)
def fftn(input, s=None, dim=None, norm=None):
    return _c2c_nd("fftn", input, s, dim, norm, True)


@_export("flow.fft.ifftn", out=True)
def ifftn(input, s=None, dim=None, norm=None):
    return _c2c_nd("ifftn", input, s, dim, norm, False)


@_export("flow.fft.fft2", out=True)
def fft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2c_nd("fft2", input, s, dim, norm, True)


@_export("flow.fft.ifft2", out=True)
def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2c_nd("ifft2", input, s, dim, norm, False)


def _rfftn(fname, x, s, dim, norm, forward=True):
    x = _tensor(x, fname)
    """rfftn, or (forward False) ihfftn: the conjugate of the r2c transform, inverse-normalised."""
    if x.dtype.is_complex:
        raise RuntimeError(f"{fname} expects a real-valued input tensor, but got {x.dtype}")
    x = _promote(x, False, fname)
    dims, sizes = _shape_and_dims(x, s, dim, fname)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    x = _resize(x, dims, sizes)
    out = _C.fft_r2c(x, dims, _norm_mode(norm, forward, fname), True)
    return out if forward else _C.conj(out)


@_export("flow.fft.rfftn", out=True)
def rfftn(input, s=None, dim=None, norm=None):
    return _rfftn("rfftn", input, s, dim, norm)


@_export("flow.fft.rfft2", out=True)
def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return _rfftn("rfft2", input, s, dim, norm)


def _irfftn(fname, x, s, dim, norm, forward=False):
    x = _tensor(x, fname)
    """irfftn, or (forward True) hfftn: the c2r transform of the conjugate, forward-normalised."""
    x = _promote(x, True, fname)
    dims, sizes = _shape_and_dims(x, s, dim, fname)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    if s is None or (list([s] if isinstance(s, builtins.int) else s)[-1] == -1):
        last = 2 * (x.shape[dims[-1]] - 1)
    else:
        last = sizes[-1]
    _check_n(last, fname)
    sizes[-1] = last // 2 + 1
    x = _resize(x, dims, sizes)
    if forward:
        x = _C.conj(x)
    return _C.fft_c2r(x, dims, _norm_mode(norm, forward, fname), last)


@_export("flow.fft.irfftn", out=True)
def irfftn(input, s=None, dim=None, norm=None):
    return _irfftn("irfftn", input, s, dim, norm)


@_export("flow.fft.irfft2", out=True)
def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return _irfftn("irfft2", input, s, dim, norm)


@_export("flow.fft.hfftn", out=True)
def hfftn(input, s=None, dim=None, norm=None):
    return _irfftn("hfftn", input, s, dim, norm, True)


@_export("flow.fft.hfft2", out=True)
def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return _irfftn("hfft2", input, s, dim, norm, True)


@_export("flow.fft.ihfftn", out=True)
def ihfftn(input, s=None, dim=None, norm=None):
    return _rfftn("ihfftn", input, s, dim, norm, False)


@_export("flow.fft.ihfft2", out=True)
def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return _rfftn("ihfft2", input, s, dim, norm, False)


def _count(n, name):
    """fftfreq's `n`: an int (NumPy's, or a one-element integer tensor, as the bindings' ToInt);
    a float or a floating tensor is PyTorch's TypeError, not a count."""
    if isinstance(n, _C.Tensor) and n.numel() == 1 and not (n.dtype.is_floating_point or n.dtype.is_complex):
        return int(n.item())
    if isinstance(n, bool) or isinstance(n, _C.Tensor) or not hasattr(n, "__index__"):
        raise TypeError(f"{name}(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    return n.__index__()


@_export("flow.fft.fftfreq", out=True)
def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n)."""
    n = _count(n, "fftfreq")
    pos = _C.arange(0, (n - 1) // 2 + 1, 1, dtype=_C.int64)
    neg = _C.arange(-(n // 2), 0, 1, dtype=_C.int64)
    out = _C.cat([pos, neg], 0)
    out = _C.cast(out, dtype or _C.get_default_dtype()) * _inv(n * d)
    if device is not None:
        out = out.to(device)
    out.requires_grad = requires_grad
    return out


def _inv(v):
    """1 / v with C++'s (PyTorch's) double semantics: 1 / 0 is inf, not a ZeroDivisionError."""
    return 1.0 / v if v != 0 else math.copysign(math.inf, v)


@_export("flow.fft.rfftfreq", out=True)
def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """[0, 1, ..., n//2] / (d * n)."""
    n = _count(n, "rfftfreq")
    half = int(n / 2) if isinstance(n, int) else n // 2  # C++'s truncation, as PyTorch: rfftfreq(-1) is [-0.]
    out = _C.cast(_C.arange(0, half + 1, 1, dtype=_C.int64), dtype or _C.get_default_dtype())
    out = out * _inv(n * d)
    if device is not None:
        out = out.to(device)
    out.requires_grad = requires_grad
    return out


def _shift(x, dim, inverse):
    x = _tensor(x, "ifftshift" if inverse else "fftshift")
    if dim is None:
        dims = list(range(x.dim()))
    elif isinstance(dim, builtins.int):
        dims = [dim]
    else:
        dims = list(dim)
    if not dims:  # a 0-d input was returned as is; PyTorch's roll refuses no shifts
        raise RuntimeError(f"{'ifftshift' if inverse else 'fftshift'}(): `shifts` required (the input has no dim to shift)")
    shifts = [(x.shape[d] + 1) // 2 if inverse else x.shape[d] // 2 for d in dims]
    return _C.roll(x, shifts, dims)


def fftshift(input, dim=None):
    return _shift(input, dim, False)


def ifftshift(input, dim=None):
    return _shift(input, dim, True)
