"""Gradient references for tests/test_ops_grad.py where torch has no derivative: torch.special's
Bessel functions with their closed-form derivatives (J / Y evaluated by mpmath, torch's float64
ones being up to 2.8e-7 off)."""
import torch


class AccurateSpecial:
    """torch.special with J0, J1, Y0, Y1 from mpmath (torch's float64 ones are up to 2.8e-7 off)."""

    def __getattr__(self, name):
        from opinfo.special import MP_BESSEL, mp_unary
        return mp_unary(MP_BESSEL[name])(torch) if name in MP_BESSEL else getattr(torch.special, name)


def closed_form(name, deriv):
    """torch.special.<name> with the derivative deriv(S, x) (S: torch.special's functions in
    float64, J / Y from mpmath; x float64), both rounded to the input's dtype: torch gives these
    functions no gradient (and no 16-bit kernel)."""
    f = getattr(AccurateSpecial(), name)

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return f(x.double()).to(x.dtype)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * deriv(AccurateSpecial(), x.double()).to(g.dtype)

    return Fn.apply


def _sinc_derivative(S, x):
    series = x * (-1 / 3 + x * x * (1 / 30 + x * x * (-1 / 840 + x * x / 45360)))
    return torch.where(x.abs() < 0.1, series, (torch.cos(x) - torch.sin(x) / x) / x)


BESSEL_DERIVATIVES = {
    "bessel_j0": lambda S, x: -S.bessel_j1(x),
    "bessel_j1": lambda S, x: torch.where(x == 0, 0.5, S.bessel_j0(x) - S.bessel_j1(x) / x),
    "bessel_y0": lambda S, x: -S.bessel_y1(x),
    "bessel_y1": lambda S, x: S.bessel_y0(x) - S.bessel_y1(x) / x,
    "modified_bessel_k0": lambda S, x: -S.modified_bessel_k1(x),
    "modified_bessel_k1": lambda S, x: -S.modified_bessel_k0(x) - S.modified_bessel_k1(x) / x,
    "scaled_modified_bessel_k0": lambda S, x: S.scaled_modified_bessel_k0(x) - S.scaled_modified_bessel_k1(x),
    "scaled_modified_bessel_k1": lambda S, x: (S.scaled_modified_bessel_k1(x) - S.scaled_modified_bessel_k0(x)
                                               - S.scaled_modified_bessel_k1(x) / x),
    "spherical_bessel_j0": _sinc_derivative,
}
