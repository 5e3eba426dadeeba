"""Numerical helpers PyTorch has outside OneFlow's spec, composed of table ops (so they run on any
device and, where PyTorch's do, carry gradients): gradient (finite differences, numpy's
formulas), frexp, histogramdd. Tested against PyTorch in tests/test_compat_numeric.py.
"""
import oneflow as flow
import numbers

from ._oneflow_internal import Tensor
from ._export import export, export_value
from ._argcheck import check_tensor


# ---------------------------------------------------------------------------------------------
# gradient


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


# ---------------------------------------------------------------------------------------------
# frexp


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


# ---------------------------------------------------------------------------------------------
# histogramdd


def _bin_edges(sample, bins, rng, dtype):
    from ._compat_math import bin_edges
    D = sample.shape[-1]
    if isinstance(bins, numbers.Integral):
        bins = [bins] * D
    bins = list(bins)
    if len(bins) != D:
        raise RuntimeError(f"torch.histogramdd: expected {D} sequences of bin edges for each dimension, but "
                           f"got {len(bins)}")
    if rng is not None and len(rng) != 2 * D:
        raise RuntimeError(f"torch.histogramdd: expected {2 * D} values for range but got {len(rng)}")
    return [bin_edges(sample[:, i], b, None if rng is None else rng[2 * i:2 * i + 2], dtype, "torch.histogramdd", i)
            for i, b in enumerate(bins)]


@export("flow.histogramdd")
def histogramdd(input, bins=10, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """The D-dimensional histogram of the points input[..., :] (D = input.shape[-1]): counts
    (or summed weights) in the cells of the bin edges per dimension, each bin closed on the
    left, the last one also on the right; points outside are dropped. (hist, bin_edges), as
    torch.histogramdd."""
    check_tensor(input, "histogramdd", "input", 1)
    if not input.is_floating_point():
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                           f"got input {input.dtype}")
    if input.dim() < 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 1 dimension")
    D = input.shape[-1]
    sample = input.detach().reshape(-1, D)
    from ._compat_math import bin_index
    edges = _bin_edges(sample, bins, range, input.dtype)
    counts = [e.numel() - 1 for e in edges]
    keep = flow.ones(sample.shape[0], dtype=flow.bool, device=sample.device)
    flat = flow.zeros(sample.shape[0], dtype=flow.int64, device=sample.device)
    for i, e in enumerate(edges):  # the cell's flat index, dims in order
        idx, inside = bin_index(e, sample[:, i].contiguous())
        keep = keep & inside
        flat = flat * counts[i] + idx.clamp(0, max(counts[i] - 1, 0))
    total = 1
    for c in counts:
        total *= c
    w = weight.detach().reshape(-1).to(input.dtype) if weight is not None else flow.ones(
        sample.shape[0], dtype=input.dtype, device=sample.device)
    if weight is not None and w.numel() != sample.shape[0]:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           "input tensor excluding its innermost dimension")
    w = flow.where(keep, w, flow.zeros_like(w))
    hist = flow.zeros(total, dtype=input.dtype, device=sample.device)
    if total > 0:
        hist = hist.index_add(0, flat, w)
    hist = hist.reshape(counts)
    if density and total > 0:
        vol = None
        for i, e in enumerate(edges):
            widths = _along(e[1:] - e[:-1], i, counts[i], D)
            vol = widths if vol is None else vol * widths
        hist = hist / (hist.sum() * vol)
    if out is not None:
        out[0].copy_(hist)
        return out
    import collections
    return collections.namedtuple("histogramdd", ["hist", "bin_edges"])(hist, tuple(edges))


export_value(lambda self: frexp(self), "Tensor.frexp")


