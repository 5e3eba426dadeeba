"""The orthogonal polynomials of oneflow.special (as torch.special's): Chebyshev T / U / V / W and
their shifted forms, Hermite H (physicists') and He (probabilists'), Laguerre L, Legendre P.

f(input, n): input and n broadcast (either may be a number; n is read as an integer, n < 0 gives
0). The three-term recurrences run up to the largest n and each element keeps the value at its
own n; PyTorch's special cases are kept: the values at x = +-1 in closed form, and for |x| < 1
with large n the trigonometric forms of the Chebyshev polynomials (n > 6 for T, n > 8 for
U / V / W). Integer inputs compute in the default float dtype. No gradients (PyTorch defines
none either).
"""

import numbers

import oneflow as flow
from .. import _oneflow_internal as _C
from .._grad_mode import no_grad
from .._export import export_value


def _prepare(x, n, name):
    # PyTorch's overloads take a Tensor or a Number for each (a list was made a tensor here)
    for pos, (arg, v) in enumerate((("input", x), ("n", n)), 1):
        if not isinstance(v, (_C.Tensor, numbers.Number)):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor or Number, not {type(v).__name__}")
    like = x if isinstance(x, _C.Tensor) else n if isinstance(n, _C.Tensor) else None
    if like is None:
        raise TypeError("expected input or n to be a Tensor")
    device = like.device
    if not isinstance(x, _C.Tensor):
        x = flow.tensor(float(x), dtype=n.dtype if n.dtype.is_floating_point else flow.get_default_dtype(),
                        device=device)
    if not isinstance(n, _C.Tensor):
        n = flow.tensor(n, device=device)
    dt = flow.promote_types(x.dtype, n.dtype)
    if dt.is_complex:  # PyTorch has no complex kernel: a complex x is not read as its real part
        raise NotImplementedError(f"{name}(): not implemented for '{dt.name}' (no complex kernel, as in PyTorch)")
    if not dt.is_floating_point:
        dt = flow.get_default_dtype()
    x, n = flow.broadcast_tensors(x.to(dt), n.to(dt))
    return x, n.to(flow.int64), dt


# The recurrence's steps are tensor ops run from Python: a degree far past what the values can
# carry (2**62) must not mean 2**62 steps. An element leaves the loop at its own n, or when its
# value turns NaN (PyTorch's loop stops there too: the polynomials that grow overflow to inf, then
# NaN, within a few hundred steps). Elements whose values stay finite and bounded (Legendre and
# Laguerre inside their intervals) with n beyond _MAX_STEPS are refused, as PyTorch would loop n
# times (hours for n = 2**62).
_MAX_STEPS = 1 << 16
_CHECK_EVERY = 64  # steps between two host reads of "is any element still running"


def _recurrence(x, n, p0, p1, step, name, todo=None):
    """Values of P_n(x) per element for the recurrence P_{k+1} = step(k, P_k, P_{k-1}); `todo`
    masks the elements that need it (the others take a closed form afterwards)."""
    out = flow.where(n == 0, p0, flow.zeros_like(x))
    out = flow.where(n == 1, p1, out)
    live = n >= 2 if todo is None else (n >= 2) & todo
    if not bool(live.any()):
        return out
    top = int(flow.where(live, n, flow.zeros_like(n)).max())
    p, q = p0, p1
    k = 1
    while k < top:
        p, q = q, step(k, q, p)
        k += 1
        out = flow.where(n == k, q, out)
        if k % _CHECK_EVERY == 0:
            ended = live & q.isnan()  # NaN stays NaN: the value at every larger n
            out = flow.where(ended & (n > k), q, out)
            live = live & (n > k) & ~ended
            if not bool(live.any()):
                break
            if k >= _MAX_STEPS:
                top = int(flow.where(live, n, flow.zeros_like(n)).max())
                raise ValueError(f"{name}(): degree n={top} is too large: at these inputs the "
                                 f"three-term recurrence has no closed form and would run n steps "
                                 f"(at most {_MAX_STEPS} are run)")
    return out


def _finish(out, n, edge=None):
    out = flow.where(n < 0, flow.zeros_like(out), out)
    if edge is not None:
        mask, value = edge
        out = flow.where(mask & (n >= 0), value, out)
    return out


def _chebyshev(kind, x, n, name=None):
    x, n, dt = _prepare(x, n, name or f"chebyshev_polynomial_{kind}")
    with no_grad():
        nf = n.to(dt)
        one = flow.ones_like(x)
        first = {"t": x, "u": x + x, "v": x + x - 1, "w": x + x + 1}[kind]
        ax = x.abs()
        inside = ax < 1
        big = {"t": 6}.get(kind, 8)
        out = _recurrence(x, n, one, first, lambda k, q, p: (x + x) * q - p, f"chebyshev_polynomial_{kind}",
                          ~(inside & (n > big)) & (ax != 1))
        theta = x.clamp(-1, 1).acos()
        odd = (n % 2) == 1
        if kind == "t":
            trig = (nf * theta).cos()
            at_one = flow.where((x > 0) | ~odd, one, -one)
        elif kind == "u":
            s = theta.sin()
            trig = flow.where(s != 0, ((nf + 1) * theta).sin() / s, (nf + 1) * ((nf + 1) * theta).cos() / x)
            at_one = flow.where((x > 0) | ~odd, nf + 1, -(nf + 1))
        elif kind == "v":
            half = theta / 2
            trig = flow.where(half.sin() != 1, ((nf + 0.5) * theta).cos() / half.cos(),
                              flow.where(~odd, nf + nf + 1, -(nf + nf + 1)))
            at_one = flow.where(x > 0, one, flow.where(~odd, nf + nf + 1, -(nf + nf + 1)))
        else:
            half = theta / 2
            trig = flow.where(half.cos() != 1, ((nf + 0.5) * theta).sin() / half.sin(),
                              flow.where(x > 0, nf + nf + 1, flow.where(~odd, one, -one)))
            at_one = flow.where(x > 0, nf + nf + 1, flow.where(~odd, one, -one))
        out = flow.where(inside & (n > big), trig, out)
        return _finish(out, n, (ax == 1, at_one))


def chebyshev_polynomial_t(input, n):
    return _chebyshev("t", input, n)


def chebyshev_polynomial_u(input, n):
    return _chebyshev("u", input, n)


def chebyshev_polynomial_v(input, n):
    return _chebyshev("v", input, n)


def chebyshev_polynomial_w(input, n):
    return _chebyshev("w", input, n)


def _shifted(kind):
    def fn(input, n):
        x = input if isinstance(input, _C.Tensor) else flow.tensor(float(input))
        return _chebyshev(kind, x + x - 1, n, f"shifted_chebyshev_polynomial_{kind}")
    fn.__name__ = f"shifted_chebyshev_polynomial_{kind}"
    fn.__doc__ = f"Chebyshev {kind.upper()} at 2 x - 1 (the polynomials orthogonal on [0, 1])."
    return fn


shifted_chebyshev_polynomial_t = _shifted("t")
shifted_chebyshev_polynomial_u = _shifted("u")
shifted_chebyshev_polynomial_v = _shifted("v")
shifted_chebyshev_polynomial_w = _shifted("w")


def hermite_polynomial_h(input, n):
    """Physicists' Hermite: H_{k+1} = 2 x H_k - 2 k H_{k-1}."""
    x, n, _ = _prepare(input, n, "hermite_polynomial_h")
    with no_grad():
        out = _recurrence(x, n, flow.ones_like(x), x + x, lambda k, q, p: (x + x) * q - (k + k) * p,
                          "hermite_polynomial_h")
        return _finish(out, n)


def hermite_polynomial_he(input, n):
    """Probabilists' Hermite: He_{k+1} = x He_k - k He_{k-1}."""
    x, n, _ = _prepare(input, n, "hermite_polynomial_he")
    with no_grad():
        out = _recurrence(x, n, flow.ones_like(x), x, lambda k, q, p: x * q - k * p, "hermite_polynomial_he")
        return _finish(out, n)


def laguerre_polynomial_l(input, n):
    """L_{k+1} = ((2k + 1 - x) L_k - k L_{k-1}) / (k + 1); 1 at x = 0."""
    x, n, _ = _prepare(input, n, "laguerre_polynomial_l")
    with no_grad():
        one = flow.ones_like(x)
        out = _recurrence(x, n, one, 1 - x, lambda k, q, p: ((k + k + (1 - x)) * q - k * p) / (k + 1),
                          "laguerre_polynomial_l", x != 0)
        return _finish(out, n, (x.abs() == 0, one))


def legendre_polynomial_p(input, n):
    """P_{k+1} = ((2k + 1) x P_k - k P_{k-1}) / (k + 1); +-1 at x = +-1."""
    x, n, _ = _prepare(input, n, "legendre_polynomial_p")
    with no_grad():
        one = flow.ones_like(x)
        out = _recurrence(x, n, one, x, lambda k, q, p: ((k + k + 1) * x * q - k * p) / (k + 1),
                          "legendre_polynomial_p", x.abs() != 1)
        at_one = flow.where((x > 0) | (n == 0) | ((n % 2) == 0), one, -one)
        return _finish(out, n, (x.abs() == 1, at_one))


_NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
          "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
          "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
          "legendre_polynomial_p"]


for _name in _NAMES:
    export_value(globals()[_name], "flow.special." + _name, out=True)
del _name
