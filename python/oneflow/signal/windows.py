"""oneflow.signal.windows: the window functions of torch.signal.windows (SciPy's definitions), in
Python over table ops, with torch's signatures, defaults, checks and error messages.

Every window is built the same way: the sample positions come from one `linspace` in the
requested dtype, then a few pointwise ops map them to window values. Working in the requested
dtype (not in float64 and casting at the end) is what lets float32 results agree with PyTorch's
to a few ulps, since PyTorch rounds at the same steps.

`requires_grad=True` is given to that `linspace`, so (as in PyTorch) the window is the result of
ops on a leaf that requires grad: `requires_grad` is True and `is_leaf` False, except where a
constant is returned (M = 0; M = 1 except for cosine, exponential and gaussian).
"""
import math
from collections.abc import Iterable

import oneflow as flow  # a partly initialised module at import time; used only in calls
from .._types import strided

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _checks(name, M, dtype, layout):
    """The checks every window makes first; returns the dtype to compute in.

    PyTorch accepts float32 and float64 only (not float16 / bfloat16), and names in its messages
    the function that made the check, which for hann / hamming / general_hamming / nuttall is
    general_cosine (they delegate before checking); callers pass that name to keep the messages.
    """
    if dtype is None:
        dtype = flow.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (flow.float32, flow.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _empty(dtype, device, requires_grad):
    return flow.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)


def _one(dtype, device, requires_grad):
    return flow.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)


def _positions(first, step, M, dtype, device, requires_grad):
    """M evenly spaced samples first, first + step, ..., in `dtype`.

    Given to linspace as its two ends (not arange * step) because linspace fills the second
    half backwards from the end, which keeps symmetric windows symmetric to the last bit.
    """
    return flow.linspace(first, first + (M - 1) * step, M, dtype=dtype, device=device,
                       requires_grad=requires_grad)


def _span(M, sym):
    """The denominator of the sample spacing: M - 1 for a symmetric window; M for a periodic
    one, i.e. the symmetric window of length M + 1 without its last point."""
    return M - 1 if sym else M


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None,
                requires_grad=False):
    """The exponential (Poisson) window, exp(-|n - center| / tau).

    `center` defaults to the middle of the window, (M - 1) / 2, or M / 2 for a periodic window
    (a symmetric window is centred by definition, so giving `center` with sym=True is an error).
    """
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    # The positions are pre-scaled by 1 / tau so that one op per element is left to do.
    inv_tau = 1 / tau
    k = _positions(-center * inv_tau, inv_tau, M, dtype, device, requires_grad)
    return flow.exp(-flow.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The cosine (sine) window, sin(pi (n + 0.5) / M), SciPy's form that does not reach 0."""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    # M == 1 goes through the formula too: sin(pi / 2) is 1.
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return flow.sin(_positions(0.5 * step, step, M, dtype, device, requires_grad))


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None,
             requires_grad=False):
    """The Gaussian window, exp(-n^2 / (2 std^2)) with n measured from the window's middle."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    first = -(M if not sym and M > 1 else M - 1) / 2.0
    # Scaling by 1 / (std sqrt 2) up front leaves exp(-k^2) per element.
    scale = 1 / (std * math.sqrt(2))
    k = _positions(first * scale, scale, M, dtype, device, requires_grad)
    return flow.exp(-(k * k))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None,
           requires_grad=False):
    """The Kaiser window, I0(beta sqrt(1 - (2n / N - 1)^2)) / I0(beta) with N = M - 1 if sym
    else M, evaluated as I0(sqrt(beta^2 - k^2)) / I0(beta) for k running from -beta."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _one(dtype, device, requires_grad)
    # beta is rounded to `dtype` first and the ends are computed in `dtype`: then the last k
    # of a symmetric window is exactly beta, not a float64 value a rounding above it whose
    # beta^2 - k^2 < 0 would give sqrt -> NaN. The clamp to beta guards the same for any M.
    b = flow.tensor(beta, dtype=dtype, device=device)
    step = 2.0 * b / _span(M, sym)
    last = flow.minimum(b, -b + (M - 1) * step)
    k = flow.linspace((-b).item(), last.item(), M, dtype=dtype, device=device,
                    requires_grad=requires_grad)
    return flow.i0(flow.sqrt(b * b - k * k)) / flow.i0(b)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Bartlett (triangular, zero-ended) window, 1 - |2n / N - 1|, N = M - 1 if sym else M."""
    dtype = _checks("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _one(dtype, device, requires_grad)
    k = _positions(-1, 2 / _span(M, sym), M, dtype, device, requires_grad)
    return 1 - flow.abs(k)


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None,
                   requires_grad=False):
    """The sum of cosines sum_i (-1)^i a_i cos(2 pi i n / N), N = M - 1 if sym else M.

    As in PyTorch, `a` is only looked at when M >= 2 (the window of length 0 or 1 needs no
    coefficients), and must be a non-empty iterable.
    """
    dtype = _checks("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _one(dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _positions(0, 2 * math.pi / _span(M, sym), M, dtype, device, requires_grad)
    # The alternating signs go into the coefficients, which are rounded to `dtype` before use
    # (as PyTorch does), and the terms are summed along a leading axis of length len(a).
    signed = [c if i % 2 == 0 else -c for i, c in enumerate(a)]
    coef = flow.tensor(signed, dtype=dtype, device=device).unsqueeze(-1)
    order = flow.arange(0, coef.shape[0], 1, dtype=dtype, device=device).unsqueeze(-1)
    return (coef * flow.cos(order * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None,
                    requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / N): the two-term cosine window."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hamming window: general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hann window: general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Blackman window: general_cosine with a = [0.42, 0.5, 0.08]."""
    # Checked here (unlike hann / hamming) so that errors name blackman, as PyTorch's do.
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window (the coefficients SciPy uses)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
