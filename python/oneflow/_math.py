"""Python glue of the math family: the argument juggling PyTorch also does in Python, and the
math functions PyTorch has beyond OneFlow's spec, composed of table ops (their gradients are
those ops').

* Tensor.polygamma(n) and polygamma_(n) take self as the input of polygamma(n, input);
* allclose and equal return Python bools;
* isin, dist, renorm, addr, ldexp / frexp, rsub, trapezoid / trapz / cumulative_trapezoid,
  gradient (finite differences, numpy's formulas), fix, and the top-level in-place forms
  (flow.exp_ ...). Tested against PyTorch in tests/test_torch_names.py, test_compat_numeric.py.
"""
import builtins
import math
import numbers

import oneflow as flow  # the assembled namespace, looked up at call time

from . import _C
from ._argcheck import LEFT_OUT, check_tensor
from ._export import export, export_value, ref
from ._oneflow_internal import Tensor

_INF = math.inf


# ---------------------------------------------------------------------------
# polygamma as a method: self is the input, the order comes first in the function.


@export("Tensor.polygamma")
def _polygamma_method(self, n):
    return _C.polygamma(n, self)


@export("Tensor.polygamma_")
def _polygamma_inplace(self, n):
    if not self.is_floating_point():
        raise RuntimeError(
            f"polygamma_: result type Float can't be cast to the desired output type {self.dtype}")
    return self.copy_(_C.polygamma(n, self))


# ---------------------------------------------------------------------------
# closeness as Python bools


@export("flow.allclose", "Tensor.allclose")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of input is close to other (isclose, broadcast)."""
    return builtins.bool(_C.isclose(input, other, rtol, atol, equal_nan).all())


@export("flow.equal", "Tensor.equal")
def equal(input, other):
    """True when both tensors have the same shape and the same values."""
    check_tensor(input, "equal", "input", 1)
    check_tensor(other, "equal", "other", 2)
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(_C.eq(input, other).all())


def _as_tensor(v, like=None):
    if isinstance(v, Tensor):
        return v
    kw = {} if like is None else {"device": like.device}
    return flow.tensor(v, **kw)


@export("flow.isin")
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` occurs in `test_elements` (either may be a number):
    a sorted copy of the test values and one binary search per element."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): expected at least one of elements and test_elements to be a Tensor")
    # PyTorch's overloads: a Tensor or a Number each (a list is no test set there), and no bool
    # kernel (a bool scalar is a bool tensor); upstream OneFlow has no isin.
    for pos, (arg, v) in enumerate((("elements", elements), ("test_elements", test_elements)), 1):
        if not isinstance(v, (Tensor, numbers.Number)):
            raise TypeError(f"isin(): argument '{arg}' (position {pos}) must be Tensor or Number, not {type(v).__name__}")
        if isinstance(v, bool) or (isinstance(v, Tensor) and v.dtype == flow.bool):
            raise RuntimeError("isin(): Unsupported input type encountered for isin(): Bool")
    like = elements if isinstance(elements, Tensor) else test_elements
    e, t = _as_tensor(elements, like), _as_tensor(test_elements, like)
    dt = flow.promote_types(e.dtype, t.dtype)
    e, t = e.to(dt), t.reshape(-1).to(dt)
    if t.numel() == 0:
        found = flow.zeros(e.shape, dtype=flow.bool, device=e.device)
    else:
        s = t.sort().values
        pos = flow.searchsorted(s, e.reshape(-1)).clamp(max=s.numel() - 1)
        found = (s[pos] == e.reshape(-1)).reshape(e.shape)
    return ~found if invert else found


@export("flow.dist", "Tensor.dist")
def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    check_tensor(input, "dist", "input", 1)
    check_tensor(other, "dist", "other", 2)
    return flow.linalg.vector_norm(input - other, p)


@export("flow.renorm", "Tensor.renorm", out=True)
def renorm(input, p, dim, maxnorm):
    """Each slice along `dim` whose p-norm exceeds maxnorm scaled down to norm maxnorm
    (factor maxnorm / (norm + 1e-7), as PyTorch)."""
    if p <= 0:
        raise RuntimeError(f"renorm(): non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm(): expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm(): input needs at least 2 dimensions, got {input.dim()} dimensions")
    d = dim % input.dim()
    others = [k for k in range(input.dim()) if k != d]
    norms = flow.linalg.vector_norm(input, p, dim=others, keepdim=True)
    factor = flow.where(norms > maxnorm, maxnorm / (norms + 1e-7), flow.ones_like(norms))
    return input * factor


@export("flow.addr", "Tensor.addr", out=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)."""
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D" if vec1.dim() != 1
                           else f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    prod = flow.outer(vec1, vec2)
    out = prod if alpha == 1 else prod * alpha
    if beta == 0:  # input is not read (its NaNs do not propagate), as PyTorch
        return out
    return out + (input if beta == 1 else input * beta)


def _trapezoid_args(fn, y, x, dx):
    """PyTorch's two forms, (y, x) and (y, *, dx): x a tensor of sample points (a number there was
    taken as dx, an explicit None as left out), y and x not bool. Returns x (None: left out)."""
    check_tensor(y, fn, "y", 1)
    x = None if x is LEFT_OUT else check_tensor(x, fn, "x", 2)
    if x is not None and dx is not None:
        raise RuntimeError(f"{fn}: received both `x` and `dx` as arguments")
    for name, t in (("y", y), ("x", x)):
        if t is not None and t.dtype == flow.bool:
            raise RuntimeError(f"{fn}: received a bool input for `{name}`, but bool is not supported")
    if dx is not None and (isinstance(dx, bool) or not isinstance(dx, numbers.Number)):
        raise TypeError(f"{fn}(): argument 'dx' must be Number, not {type(dx).__name__}")
    return x


def _trapezoid_core(y, x, dx, dim):
    d = dim % y.dim() if y.dim() else 0
    n = y.shape[d]
    if n == 0:
        return flow.zeros_like(y.sum(d))
    left, right = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is None:
        return ((left + right) * (dx / 2.0)).sum(d)
    if x.dim() == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point, got {x.shape[0]} for {n}")
        dxs = x.diff()
        shape = [1] * y.dim()
        shape[d] = n - 1
        dxs = dxs.reshape(shape)
    else:
        dxs = x.diff(dim=dim)
    return ((left + right) * dxs / 2.0).sum(d)


@export("flow.trapezoid")
def trapezoid(y, x=LEFT_OUT, *, dx=None, dim=-1):
    """The trapezoidal rule along dim: spacing dx (default 1) or sample points x."""
    x = _trapezoid_args("trapezoid", y, x, dx)
    return _trapezoid_core(y, x, 1.0 if dx is None else dx, dim)


@export("flow.trapz")
def trapz(y, x=LEFT_OUT, *, dx=None, dim=-1):
    x = _trapezoid_args("trapz", y, x, dx)
    return _trapezoid_core(y, x, 1.0 if dx is None else dx, dim)


@export("flow.cumulative_trapezoid")
def cumulative_trapezoid(y, x=LEFT_OUT, *, dx=None, dim=-1):
    """The running trapezoidal sums along dim (one fewer element than y there)."""
    x = _trapezoid_args("cumulative_trapezoid", y, x, dx)
    if y.dim() == 0:  # as PyTorch (dim % 0 was a ZeroDivisionError)
        raise IndexError("cumulative_trapezoid(): slice() cannot be applied to a 0-dim tensor.")
    d = dim % y.dim()
    n = y.shape[d]
    if n == 0:
        return y.narrow(d, 0, 0)
    left, right = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is None:
        parts = (left + right) * ((1.0 if dx is None else dx) / 2.0)
    else:
        dxs = x.diff() if x.dim() == 1 else x.diff(dim=dim)
        if x.dim() == 1:
            shape = [1] * y.dim()
            shape[d] = n - 1
            dxs = dxs.reshape(shape)
        parts = (left + right) * dxs / 2.0
    return flow.cumsum(parts, d)


@export("flow.ldexp", "Tensor.ldexp", out=True)
def ldexp(input, other):
    """input * 2 ** other (a float result for integer inputs). As torch, 2 ** other keeps a
    floating other's dtype (integers: the default float), and the product promotes the two."""
    check_tensor(input, "ldexp", "input", 1)
    check_tensor(other, "ldexp", "other", 2)
    if other.dtype == flow.bool:  # PyTorch's 2 ** other has no bool kernel (input may be bool)
        raise NotImplementedError("ldexp(): not implemented for 'Bool' exponents (other)")
    x = input if input.dtype.is_floating_point or input.dtype.is_complex else input.to(flow.get_default_dtype())
    e = _as_tensor(other, x)
    if not (e.dtype.is_floating_point or e.dtype.is_complex):
        e = e.to(flow.get_default_dtype())
    return x * flow.pow(2.0, e)


def _inplace_via_copy(name):
    def method(self, *args, **kwargs):
        check_tensor(self, name + "_", "input")
        r = getattr(Tensor, name)(self, *args, **kwargs)
        # An in-place op keeps self's dtype only where PyTorch's casting rules allow it: copy_
        # alone would keep a complex result's real part or truncate a float one into an int.
        if not flow.can_cast(r.dtype, self.dtype):
            raise RuntimeError(f"{name}_(): result type {r.dtype} can't be cast to the desired output type {self.dtype}")
        return self.copy_(r)
    method.__name__ = name + "_"
    return method


for _name in ("addr", "renorm", "ldexp"):
    export_value(_inplace_via_copy(_name), "Tensor." + _name + "_")


def _dims_of(input, dim):
    if dim is None:
        return list(range(input.dim()))
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    out = []
    for d in dims:
        if not -input.dim() <= d < max(input.dim(), 1):
            raise IndexError(f"torch.gradient: dim {d} is out of range for a tensor of {input.dim()} dimensions")
        out.append(d % input.dim())
    if len(set(out)) != len(out):
        raise RuntimeError("torch.gradient: dim appears multiple times in the list of dims")
    return out


def _spacings_of(spacing, dims):
    """One entry per dim: a number (uniform step) or a 1-D tensor of coordinates."""
    if isinstance(spacing, (numbers.Number, Tensor)) and not (isinstance(spacing, Tensor) and spacing.dim() == 1):
        h = spacing.item() if isinstance(spacing, Tensor) else spacing
        return [h] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length "
                           f"{len(spacing)} and a dim argument of length {len(dims)}.")
    return [s.item() if isinstance(s, Tensor) and s.dim() == 0 else s for s in spacing]


def _along(t, d, n, ndim):
    """The 1-D tensor t shaped to broadcast along dim d of an ndim-dim tensor."""
    shape = [1] * ndim
    shape[d] = n
    return t.reshape(shape)


@export("flow.gradient")
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Finite-difference estimate of d input / d x along each dim (second-order central
    differences inside, one-sided ones of order edge_order at the ends): a tuple, one tensor a
    dim, as torch.gradient / numpy.gradient."""
    check_tensor(input, "gradient", "input", 1)
    if input.dtype == flow.bool:  # PyTorch's differences subtract two bool tensors, which it refuses
        raise RuntimeError("gradient(): Subtraction, the `-` operator, with two bool tensors is not supported")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = _dims_of(input, dim)
    steps = _spacings_of(spacing, dims)
    if not (input.is_floating_point() or input.is_complex()):
        input = input.to(flow.get_default_dtype())
    out = []
    for d, h in zip(dims, steps):
        n = input.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        f = lambda start, length: input.narrow(d, start, length)  # noqa: E731
        if not isinstance(h, Tensor):  # uniform step h
            inner = (f(2, n - 2) - f(0, n - 2)) / (2 * h)
            if edge_order == 1:
                first, last = (f(1, 1) - f(0, 1)) / h, (f(n - 1, 1) - f(n - 2, 1)) / h
            else:
                first = (-1.5 * f(0, 1) + 2 * f(1, 1) - 0.5 * f(2, 1)) / h
                last = (0.5 * f(n - 3, 1) - 2 * f(n - 2, 1) + 1.5 * f(n - 1, 1)) / h
        else:  # coordinates
            if h.dim() != 1 or h.shape[0] != n:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device and of size "
                                   f"{n} along dim {d}, got coordinates of shape {tuple(h.shape)}")
            x = h.to(input.dtype) if input.is_floating_point() else h
            dx = x[1:] - x[:-1]
            hl, hr = _along(dx[:-1], d, n - 2, input.dim()), _along(dx[1:], d, n - 2, input.dim())
            inner = (hl * hl * f(2, n - 2) - hr * hr * f(0, n - 2) + (hr * hr - hl * hl) * f(1, n - 2)) / (
                hl * hr * (hl + hr))
            if edge_order == 1:
                first, last = (f(1, 1) - f(0, 1)) / dx[0], (f(n - 1, 1) - f(n - 2, 1)) / dx[-1]
            else:
                h1, h2 = dx[0], dx[1]
                first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * f(0, 1) + (h1 + h2) / (h1 * h2) * f(1, 1)
                         - h1 / (h2 * (h1 + h2)) * f(2, 1))
                h1, h2 = dx[-2], dx[-1]
                last = (h2 / (h1 * (h1 + h2)) * f(n - 3, 1) - (h1 + h2) / (h1 * h2) * f(n - 2, 1)
                        + (2 * h2 + h1) / (h2 * (h1 + h2)) * f(n - 1, 1))
        out.append(flow.cat([first, inner, last], dim=d))
    return tuple(out)


@export("flow.frexp")
def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, 0.5 <= |mantissa| < 1 (zero,
    inf and nan: themselves and exponent 0), exponent int32, as torch.frexp / C's frexp."""
    check_tensor(input, "frexp", "input", 1)
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input.detach()
    finite = flow.isfinite(x) & (x != 0)
    a = flow.where(finite, x.abs(), flow.ones_like(x))
    # subnormals: scaled into the normal range first (2 ** -e would overflow for them)
    tiny = flow.finfo(x.dtype).tiny
    sub = a < tiny
    a = flow.where(sub, a * 2.0 ** 64, a)
    e = flow.floor(flow.log2(a)) + 1
    m = a * flow.pow(2.0, -e)  # exact: a power of two
    # log2's rounding near powers of two can be one off: bring m into [0.5, 1)
    hi, lo = m >= 1, m < 0.5
    m = flow.where(hi, m * 0.5, flow.where(lo, m * 2, m))
    e = e + hi.to(e.dtype) - lo.to(e.dtype) - 64 * sub.to(e.dtype)
    mantissa = flow.where(finite, m * flow.sign(x), x)
    exponent = flow.where(finite, e, flow.zeros_like(e)).to(flow.int32)
    if out is not None:
        out[0].copy_(mantissa)
        out[1].copy_(exponent)
        return out
    import collections
    return collections.namedtuple("frexp", ["mantissa", "exponent"])(mantissa, exponent)


export_value(lambda self: frexp(self), "Tensor.frexp")
export_value(ref("Tensor.trunc"), "Tensor.fix")
export_value(ref("Tensor.trunc_"), "Tensor.fix_")
export_value(ref("flow.trunc"), "flow.fix")


@export("flow.rsub")
def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    return other - input * alpha if alpha != 1 else other - input


# (pixel_shuffle, cosine_similarity, prelu, selu, dropout, ... are top-level names of the op table)
# in-place functional forms at the top level (torch.exp_(t) ...): the Tensor methods
for _name in ("abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "arccos_", "arccosh_", "arcsin_",
             "arcsinh_", "arctan_", "arctanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_",
             "cosh_", "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "gcd_",
             "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
             "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_",
             "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "index_put_", "addmv_", "resize_as_"):
    export_value(ref("Tensor." + _name), "flow." + _name)
