"""PyTorch functions outside OneFlow's spec, math family, composed of table ops in Python (their
gradients are those ops'), with PyTorch's argument rules: isin, tril_indices / triu_indices,
logspace, cartesian_prod, block_diag, unravel_index, cov, corrcoef, dist, renorm, addr, vander,
trapezoid / trapz / cumulative_trapezoid, ldexp, quantile / nanquantile, slice_scatter /
select_scatter / diagonal_scatter, combinations, histogram (and the Tensor methods PyTorch has).
Tested against PyTorch in tests/test_torch_names.py.
"""
import oneflow as flow
import builtins
import math
import numbers

import numpy as np

from . import _C
from ._oneflow_internal import Tensor
from ._export import export, export_value
from ._argcheck import check_optional_tensor, check_tensor, check_tensors


def _as_tensor(v, like=None):
    if isinstance(v, Tensor):
        return v
    kw = {} if like is None else {"device": like.device}
    return flow.tensor(v, **kw)


# ---------------------------------------------------------------------------
# membership, index grids, ranges


@export("flow.isin")
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` occurs in `test_elements` (either may be a number):
    a sorted copy of the test values and one binary search per element."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): expected at least one of elements and test_elements to be a Tensor")
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


def _triangle_indices(fn, row, col, offset, dtype, device):
    if row < 0 or col < 0:
        raise RuntimeError(f"{fn.__name__}(): row and col must be non-negative, got row={row}, col={col}")
    r, c = fn(row, offset, col)
    return flow.tensor(np.stack([r, c]).astype(np.int64).reshape(2, -1), dtype=dtype, device=device)


@export("flow.tril_indices")
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """The (2, N) row / column indices of the lower triangle of a row x col matrix, row-major."""
    return _triangle_indices(np.tril_indices, row, col, offset, dtype or flow.int64, device)


@export("flow.triu_indices")
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """The (2, N) row / column indices of the upper triangle of a row x col matrix, row-major."""
    return _triangle_indices(np.triu_indices, row, col, offset, dtype or flow.int64, device)


@export("flow.logspace")
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, placement=None, sbp=None):
    """base ** linspace(start, end, steps), computed in float64 and cast to dtype (a global tensor
    with placement= and sbp=)."""
    complex_ends = isinstance(start, complex) or isinstance(end, complex)
    if dtype is None:  # complex end points: the default complex dtype (torch's rule)
        dtype = {flow.float64: flow.complex128}.get(flow.get_default_dtype(), flow.complex64) if complex_ends \
            else flow.get_default_dtype()
    if placement is not None or sbp is not None:
        from ._global.tensor import from_logical
        if device is not None:
            raise TypeError("logspace(): give either device (a local tensor) or placement (a global one), not both")
        r = from_logical(logspace(start, end, steps, base, dtype=dtype, device=getattr(placement, "type", None)),
                         placement, sbp, "logspace")
        return r.requires_grad_(requires_grad)
    if complex_ends:
        if not dtype.is_complex:
            raise RuntimeError(f"logspace(): inferred dtype complex can't be safely cast to passed dtype {dtype}")
        exps = flow.linspace(complex(start), complex(end), steps, dtype=flow.complex128, device=device)
    else:
        exps = flow.linspace(float(start), float(end), steps, dtype=flow.float64, device=device)
    r = flow.pow(float(base), exps).to(dtype)
    r.requires_grad_(requires_grad)
    return r


@export("flow.cartesian_prod")
def cartesian_prod(*tensors):
    """Rows of every combination of the 1-D inputs' elements (itertools.product order)."""
    check_tensors(tensors, "cartesian_prod", "tensors", 1)
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"cartesian_prod(): expect a 1D vector, but got shape {tuple(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = flow.meshgrid(*tensors, indexing="ij")
    return flow.stack([g.reshape(-1) for g in grids], 1)


@export("flow.block_diag")
def block_diag(*tensors):
    """A block-diagonal matrix of the inputs (0-d: 1x1, 1-d: one row), in the promoted dtype."""
    check_tensors(tensors, "block_diag", "tensors", 1)
    mats = []
    for k, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {k} has {t.dim()} dimensions")
        mats.append(t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t)
    if not mats:
        return flow.empty(1, 0)
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = flow.promote_types(dt, m.dtype)
    total = builtins.sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        w = m.shape[1]
        rows.append(flow.nn.functional.pad(m.to(dt), (left, total - left - w)) if total else m.to(dt))
        left += w
    return flow.cat(rows, 0)


@export("flow.unravel_index")
def unravel_index(indices, shape):
    """The coordinates in `shape` of flat indices: a tuple of tensors shaped like `indices`."""
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    idx = _as_tensor(indices)
    if idx.dtype.is_floating_point or idx.dtype == flow.bool:
        raise TypeError(f"unravel_index(): expected 'indices' to be an integer tensor, but got {idx.dtype}")
    if any(s < 0 for s in shape):
        raise ValueError("unravel_index(): 'shape' cannot have negative values")
    numel = math.prod(shape)
    if idx.numel() and (int(idx.min()) < -numel or int(idx.max()) >= numel):
        raise ValueError(f"unravel_index(): 'indices' must be in the range [-{numel}, {numel - 1}] for shape {tuple(shape)}")
    idx = flow.where(idx < 0, idx + numel, idx).to(flow.int64)
    out = []
    for s in reversed(shape):
        out.append(idx % s)
        idx = flow.div(idx, s, rounding_mode="floor")
    return tuple(reversed(out))


# ---------------------------------------------------------------------------
# statistics and norms


@export("flow.cov", "Tensor.cov")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the variables (rows) over the observations (columns), optionally weighted by
    integer frequency weights and observation weights (numpy's / PyTorch's formula)."""
    check_tensor(input, "cov", "input", 1)
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(flow.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1 or fweights.numel() != n or fweights.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected fweights to be a 1-D integer tensor with {n} elements")
        if fweights.numel() and int(fweights.min()) < 0:
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.dim() > 1 or aweights.numel() != n or not aweights.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to be a 1-D floating point tensor with {n} elements")
        if aweights.numel() and float(aweights.min()) < 0:
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = float(n)
        avg = x.mean(1)
        norm = w_sum - correction
    else:
        w = w.to(x.dtype)
        w_sum_t = w.sum()
        avg = (x * w).sum(1) / w_sum_t
        w_sum = float(w_sum_t)
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * float((w * aweights).sum()) / w_sum
    if norm <= 0:
        import warnings
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number "
                      "of observations.")
        norm = 0.0
    xm = x - avg.unsqueeze(1)
    xw = xm if w is None else xm * w
    c = _C.mm(xw, xm.t().conj()) / norm
    return c.squeeze()


@export("flow.corrcoef", "Tensor.corrcoef")
def corrcoef(input):
    """Pearson correlation coefficients of the variables (rows): cov scaled by the standard
    deviations, clipped to [-1, 1] for real inputs."""
    check_tensor(input, "corrcoef", "input", 1)
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = d.sqrt() if not d.dtype.is_complex else d.real.sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return c if c.dtype.is_complex else c.clamp(-1, 1)


@export("flow.dist", "Tensor.dist")
def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
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


@export("flow.vander")
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D x: columns x^0 .. x^(N-1) (decreasing unless asked)."""
    check_tensor(x, "vander", "x", 1)
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = x.dtype if (x.dtype.is_floating_point or x.dtype.is_complex) else flow.int64
    xs = x.to(dt)
    if n == 0:
        return flow.empty(x.shape[0], 0, dtype=dt, device=x.device)
    cols = [flow.ones_like(xs)]
    for _ in range(1, n):
        cols.append(cols[-1] * xs)
    m = flow.stack(cols, 1)
    return m if increasing else m.flip(1)


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
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim: spacing dx (default 1) or sample points x."""
    check_tensor(y, "trapezoid", "y", 1)
    if x is not None and dx is not None:
        raise RuntimeError("trapezoid: received both `x` and `dx` as arguments")
    if isinstance(x, numbers.Number):
        x, dx = None, x
    check_optional_tensor(x, "trapezoid", "x", 2)
    return _trapezoid_core(y, x, 1.0 if dx is None else dx, dim)


@export("flow.trapz")
def trapz(y, x=None, *, dx=None, dim=-1):
    check_tensor(y, "trapz", "y", 1)
    return trapezoid(y, x, dx=dx, dim=dim)


@export("flow.cumulative_trapezoid")
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal sums along dim (one fewer element than y there)."""
    check_tensor(y, "cumulative_trapezoid", "y", 1)
    if x is not None and dx is not None:
        raise RuntimeError("cumulative_trapezoid: received both `x` and `dx` as arguments")
    if isinstance(x, numbers.Number):
        x, dx = None, x
    check_optional_tensor(x, "cumulative_trapezoid", "x", 2)
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
    x = input if input.dtype.is_floating_point or input.dtype.is_complex else input.to(flow.get_default_dtype())
    e = _as_tensor(other, x)
    if not (e.dtype.is_floating_point or e.dtype.is_complex):
        e = e.to(flow.get_default_dtype())
    return x * flow.pow(2.0, e)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    if input.dtype not in (flow.float32, flow.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                         f"Got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    if isinstance(q, Tensor):
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        scalar_q = q.dim() == 0
        qt = q.reshape(-1).to(input.device)
    else:
        qt = flow.tensor([float(q)], dtype=input.dtype, device=input.device)
    if qt.numel() and (float(qt.min()) < 0 or float(qt.max()) > 1):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        d = dim % input.dim() if input.dim() else 0
        x = input if input.dim() else input.reshape(1)
    rows = x.movedim(d, -1)
    srt = rows.sort(-1).values  # NaN last
    n = srt.shape[-1]
    nan = srt.isnan()
    if ignore_nan:
        valid = (~nan).sum(-1, keepdim=True).to(srt.dtype)
    else:
        valid = flow.full(srt.shape[:-1] + (1,), float(n), dtype=srt.dtype, device=srt.device)
    ranks = qt * (valid - 1)  # (..., nq)
    if not ignore_nan:  # a row with a NaN gives NaN: its last (NaN) element
        ranks = flow.where(nan.any(-1, keepdim=True), flow.full_like(ranks, float(n - 1)), ranks)
    ranks = ranks.clamp(min=0)
    below = ranks.floor()
    if interpolation == "lower":
        out = srt.gather(-1, below.long())
    elif interpolation == "higher":
        out = srt.gather(-1, ranks.ceil().long())
    elif interpolation == "nearest":
        out = srt.gather(-1, ranks.round().long())
    else:
        lo, hi = srt.gather(-1, below.long()), srt.gather(-1, ranks.ceil().long())
        w = flow.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        out = flow.lerp(lo, hi, w)
    out = out.movedim(-1, 0)  # (nq, ...)
    if keepdim:
        if dim is None:
            out = out.reshape((out.shape[0],) + (1,) * input.dim())
        elif input.dim():
            out = out.unsqueeze(d + 1)
    return out.squeeze(0) if scalar_q else out


@export("flow.quantile", "Tensor.quantile", out=True)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles along dim (of all elements when None); NaN where a row has a NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@export("flow.nanquantile", "Tensor.nanquantile", out=True)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile ignoring NaN (NaN only for a row of NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# ---------------------------------------------------------------------------
# scatter-into-a-copy, combinations, histogram


@export("flow.slice_scatter", "Tensor.slice_scatter")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of input with src written into input[..., start:end:step, ...] along dim."""
    if input.dim() == 0:  # as PyTorch (dim % 0 was a ZeroDivisionError)
        raise IndexError("slice_scatter(): slice() cannot be applied to a 0-dim tensor.")
    out = input.clone()
    index = [slice(None)] * input.dim()
    index[dim % input.dim()] = slice(start, end, step)
    out[tuple(index)] = src
    return out


@export("flow.select_scatter", "Tensor.select_scatter")
def select_scatter(input, src, dim, index):
    """A copy of input with src written into input.select(dim, index)."""
    out = input.clone()
    out.select(dim, index).copy_(src)
    return out


@export("flow.diagonal_scatter", "Tensor.diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input with src written into its diagonal(offset, dim1, dim2)."""
    out = input.clone()
    out.diagonal(offset, dim1, dim2).copy_(src)
    return out


@export("flow.combinations")
def combinations(input, r=2, with_replacement=False):
    """The r-length combinations of the 1-D input's elements, as rows (itertools' order)."""
    check_tensor(input, "combinations", "input", 1)
    import itertools
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return flow.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if not rows:
        return flow.empty(0, r, dtype=input.dtype, device=input.device)
    return input[flow.tensor(rows, dtype=flow.int64, device=input.device)]


def bin_edges(x, bins, span, dtype, name, dim=0):
    """One dimension's histogram edges: the given 1-D edges tensor, or bins + 1 equal steps over
    span (x's min / max by default, widened by 0.5 each way when they agree). Also histogramdd's."""
    if isinstance(bins, Tensor):
        edges = bins.to(dtype)
        if edges.dim() != 1 or edges.numel() < 1:
            raise RuntimeError(f"{name}(): bins tensor should have one dimension and at least 1 element")
        return edges
    if bins <= 0:
        raise RuntimeError(f"{name}(): bins must be > 0, but got {bins} for dimension {dim}")
    if span is not None:
        lo, hi = float(span[0]), float(span[1])
    elif x.numel():
        lo, hi = float(x.min()), float(x.max())
    else:
        lo, hi = 0.0, 0.0
    if lo > hi:
        raise RuntimeError(f"{name}(): min should not exceed max, but got min {lo} max {hi}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return flow.linspace(lo, hi, bins + 1, dtype=dtype, device=x.device)


def bin_index(edges, x):
    """(each value's bin, whether it falls in one): bins hold [left, right), the last also its
    right edge."""
    nb = edges.numel() - 1
    idx = flow.searchsorted(edges, x, right=True) - 1
    idx = flow.where(x == edges[-1], flow.full_like(idx, nb - 1), idx)
    return idx, (idx >= 0) & (idx < nb) & (x >= edges[0]) & (x <= edges[-1])


@export("flow.histogram", out=True)
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the input's values: `bins` equal bins over range (the data's
    min / max by default, widened by 0.5 each way when they agree) or the given edges; each bin
    holds [left, right), the last also its right edge; weights add instead of counts."""
    check_tensor(input, "histogram", "input", 1)
    import collections
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, "
                           f"but got input {input.dtype}")
    x = input.reshape(-1)
    edges = bin_edges(x, bins, range, input.dtype, "torch.histogram")
    nb = edges.numel() - 1
    idx, keep = bin_index(edges, x)
    w = None if weight is None else weight.reshape(-1).to(input.dtype)[keep]
    hist = flow.bincount(idx[keep], w, nb).to(input.dtype) if nb > 0 else flow.zeros(0, dtype=input.dtype)
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (hist.sum() * widths)
    Result = collections.namedtuple("histogram", ["hist", "bin_edges"])
    return Result(hist, edges)


def _inplace_via_copy(name):
    def method(self, *args, **kwargs):
        check_tensor(self, name + "_", "input")
        return self.copy_(getattr(Tensor, name)(self, *args, **kwargs))
    method.__name__ = name + "_"
    return method


for _name in ("addr", "renorm", "ldexp"):
    export_value(_inplace_via_copy(_name), "Tensor." + _name + "_")
del _name
