"""PyTorch functions that PyTorch-style scripts call and OneFlow's spec does not list, composed
of table ops in Python (their gradients are those ops'), with PyTorch's argument rules:

* flow.isin, tril_indices / triu_indices, logspace, cartesian_prod, block_diag, cov, corrcoef,
  dist, addr, renorm, vander, trapezoid / trapz, cumulative_trapezoid, unravel_index, ldexp,
  quantile / nanquantile, slice_scatter / select_scatter / diagonal_scatter, combinations,
  histogram, chain_matmul;
* linalg.multi_dot, vecdot, diagonal, cond, solve_triangular (linalg.solve on the triangle), vander,
  matrix_exp (scaling and squaring, Pade [13/13]), tensorinv, tensorsolve, matmul, eig / eigvals
  (over the table op linalg_eig);
* Tensor.fill_diagonal_, sum_to_size, put_ / put, index_reduce_, apply_ / map_, fix, adjoint,
  is_same_size, the in-place layout methods (squeeze_, unsqueeze_, t_,
  transpose_, swapaxes_, as_strided_, resize_, resize_as_, set_) and the methods of the functions
  above that PyTorch has;
* nn.functional.gumbel_softmax, channel_shuffle, pdist and the *_with_indices pooling names.
"""
import builtins
import math
import numbers

import numpy as np

from . import _C
from ._oneflow_internal import Tensor


def _flow():
    import oneflow
    return oneflow


def _as_tensor(v, like=None):
    if isinstance(v, Tensor):
        return v
    kw = {} if like is None else {"device": like.device}
    return _flow().tensor(v, **kw)


# ---------------------------------------------------------------------------
# membership, index grids, ranges


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` occurs in `test_elements` (either may be a number):
    a sorted copy of the test values and one binary search per element."""
    flow = _flow()
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
    flow = _flow()
    if row < 0 or col < 0:
        raise RuntimeError(f"{fn.__name__}(): row and col must be non-negative, got row={row}, col={col}")
    r, c = fn(row, offset, col)
    return flow.tensor(np.stack([r, c]).astype(np.int64).reshape(2, -1), dtype=dtype, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """The (2, N) row / column indices of the lower triangle of a row x col matrix, row-major."""
    return _triangle_indices(np.tril_indices, row, col, offset, dtype or _flow().int64, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """The (2, N) row / column indices of the upper triangle of a row x col matrix, row-major."""
    return _triangle_indices(np.triu_indices, row, col, offset, dtype or _flow().int64, device)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """base ** linspace(start, end, steps), computed in float64 and cast to dtype."""
    flow = _flow()
    dtype = dtype or flow.get_default_dtype()
    exps = flow.linspace(float(start), float(end), steps, dtype=flow.float64, device=device)
    r = flow.pow(float(base), exps).to(dtype)
    r.requires_grad_(requires_grad)
    return r


def cartesian_prod(*tensors):
    """Rows of every combination of the 1-D inputs' elements (itertools.product order)."""
    flow = _flow()
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"cartesian_prod(): expect a 1D vector, but got shape {tuple(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = flow.meshgrid(*tensors, indexing="ij")
    return flow.stack([g.reshape(-1) for g in grids], 1)


def block_diag(*tensors):
    """A block-diagonal matrix of the inputs (0-d: 1x1, 1-d: one row), in the promoted dtype."""
    flow = _flow()
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


def unravel_index(indices, shape):
    """The coordinates in `shape` of flat indices: a tuple of tensors shaped like `indices`."""
    flow = _flow()
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


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the variables (rows) over the observations (columns), optionally weighted by
    integer frequency weights and observation weights (numpy's / PyTorch's formula)."""
    flow = _flow()
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


def corrcoef(input):
    """Pearson correlation coefficients of the variables (rows): cov scaled by the standard
    deviations, clipped to [-1, 1] for real inputs."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = d.sqrt() if not d.dtype.is_complex else d.real.sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return c if c.dtype.is_complex else c.clamp(-1, 1)


def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    return _flow().linalg.vector_norm(input - other, p)


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
    norms = _flow().linalg.vector_norm(input, p, dim=others, keepdim=True)
    factor = _flow().where(norms > maxnorm, maxnorm / (norms + 1e-7), _flow().ones_like(norms))
    return input * factor


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)."""
    flow = _flow()
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D" if vec1.dim() != 1
                           else f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    prod = flow.outer(vec1, vec2)
    out = prod if alpha == 1 else prod * alpha
    if beta == 0:  # input is not read (its NaNs do not propagate), as PyTorch
        return out
    return out + (input if beta == 1 else input * beta)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D x: columns x^0 .. x^(N-1) (decreasing unless asked)."""
    flow = _flow()
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
    flow = _flow()
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


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim: spacing dx (default 1) or sample points x."""
    if x is not None and dx is not None:
        raise RuntimeError("trapezoid: received both `x` and `dx` as arguments")
    if isinstance(x, numbers.Number):
        x, dx = None, x
    return _trapezoid_core(y, x, 1.0 if dx is None else dx, dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal sums along dim (one fewer element than y there)."""
    flow = _flow()
    if x is not None and dx is not None:
        raise RuntimeError("cumulative_trapezoid: received both `x` and `dx` as arguments")
    if isinstance(x, numbers.Number):
        x, dx = None, x
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


def ldexp(input, other):
    """input * 2 ** other (a float result for integer inputs)."""
    flow = _flow()
    x = input if input.dtype.is_floating_point or input.dtype.is_complex else input.to(flow.get_default_dtype())
    return x * flow.pow(2.0, _as_tensor(other, x).to(x.dtype if not x.dtype.is_complex else flow.float64))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    flow = _flow()
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


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles along dim (of all elements when None); NaN where a row has a NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile ignoring NaN (NaN only for a row of NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# ---------------------------------------------------------------------------
# scatter-into-a-copy, combinations, histogram


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of input with src written into input[..., start:end:step, ...] along dim."""
    out = input.clone()
    index = [slice(None)] * input.dim()
    index[dim % input.dim()] = slice(start, end, step)
    out[tuple(index)] = src
    return out


def select_scatter(input, src, dim, index):
    """A copy of input with src written into input.select(dim, index)."""
    out = input.clone()
    out.select(dim, index).copy_(src)
    return out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input with src written into its diagonal(offset, dim1, dim2)."""
    out = input.clone()
    out.diagonal(offset, dim1, dim2).copy_(src)
    return out


def combinations(input, r=2, with_replacement=False):
    """The r-length combinations of the 1-D input's elements, as rows (itertools' order)."""
    import itertools
    flow = _flow()
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


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the input's values: `bins` equal bins over range (the data's
    min / max by default, widened by 0.5 each way when they agree) or the given edges; each bin
    holds [left, right), the last also its right edge; weights add instead of counts."""
    import collections
    flow = _flow()
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, "
                           f"but got input {input.dtype}")
    x = input.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins.to(input.dtype)
        if edges.dim() != 1 or edges.numel() < 1:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension and at least 1 element")
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel():
            lo, hi = float(x.min()), float(x.max())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError(f"torch.histogram(): min should not exceed max, but got min {lo} max {hi}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = flow.linspace(lo, hi, bins + 1, dtype=input.dtype, device=input.device)
    nb = edges.numel() - 1
    idx = flow.searchsorted(edges, x, right=True) - 1
    idx = flow.where(x == edges[-1], flow.full_like(idx, nb - 1), idx)
    keep = (idx >= 0) & (idx < nb) & (x >= edges[0]) & (x <= edges[-1])
    w = None if weight is None else weight.reshape(-1).to(input.dtype)[keep]
    hist = flow.bincount(idx[keep], w, nb).to(input.dtype) if nb > 0 else flow.zeros(0, dtype=input.dtype)
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (hist.sum() * widths)
    Result = collections.namedtuple("histogram", ["hist", "bin_edges"])
    return Result(hist, edges)


# ---------------------------------------------------------------------------
# linalg


def multi_dot(tensors):
    """The product of the chain of matrices (first / last may be 1-D), multiplied in the order
    of fewest scalar multiplications (the classic dynamic programme)."""
    flow = _flow()
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_1d, last_1d = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_1d:
        mats[0] = mats[0].unsqueeze(0)
    if last_1d:
        mats[-1] = mats[-1].unsqueeze(1)
    for k, m in enumerate(mats):
        if m.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {k} must be 2D but got {tensors[k].dim()}D")
    for k in builtins.range(n - 1):
        if mats[k].shape[1] != mats[k + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {k} and {k + 1} with shapes {list(tensors[k].shape)} and "
                               f"{list(tensors[k + 1].shape)} cannot be multiplied")
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    cost = [[0] * n for _ in builtins.range(n)]
    split = [[0] * n for _ in builtins.range(n)]
    for length in builtins.range(1, n):
        for i in builtins.range(n - length):
            j = i + length
            cost[i][j] = None
            for k in builtins.range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return flow.mm(product(i, k), product(k + 1, j))

    out = product(0, n - 1)
    if first_1d:
        out = out.squeeze(0)
    if last_1d:
        out = out.squeeze(-1)
    return out


def chain_matmul(*matrices):
    """Deprecated PyTorch name of linalg.multi_dot (2-D matrices)."""
    if len(matrices) == 1:
        return matrices[0]
    return multi_dot(matrices)


def vecdot(x, y, *, dim=-1):
    """sum(conj(x) * y) along dim (broadcast)."""
    return (x.conj() * y).sum(dim) if x.dtype.is_complex else (x * y).sum(dim)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the (batched) matrices, dims -2 / -1 by default."""
    return A.diagonal(offset, dim1, dim2)


def cond(A, p=None):
    """The condition number in the p-norm: the ratio of extreme singular values for p None / 2
    / -2, else norm(A, p) * norm(inv(A), p) (inf for a singular matrix, as PyTorch)."""
    flow = _flow()
    if A.dim() < 2:
        raise RuntimeError(f"linalg.cond: The input tensor A must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        s = flow.linalg.svdvals(A)
        hi, lo = s[..., 0], s[..., -1]
        return hi / lo if p != -2 else lo / hi
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.cond(ord=" + str(p) + "): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    try:
        inv = flow.linalg.inv(A)
    except RuntimeError:
        return flow.full(A.shape[:-2], float("inf"), dtype=A.dtype, device=A.device)
    return flow.linalg.matrix_norm(A, p) * flow.linalg.matrix_norm(inv, p)


_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0,
           1.0)
_THETA13 = 5.371920351148152  # Higham (2005): the 1-norm up to which Pade [13/13] is exact in float64


def matrix_exp(A):
    """exp of (batched) square matrices: scaling and squaring with the [13/13] Pade approximant
    (Higham 2005), computed in double (complex128 for complex input) and cast back; every
    matrix of a batch scaled by the largest norm's power of two."""
    flow = _flow()
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() >= 2 else 1} by {A.shape[-1] if A.dim() else 1} matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got {A.dtype}")
    if A.numel() == 0:
        return A.clone()
    wide = flow.complex128 if A.dtype.is_complex else flow.float64
    X = A.to(wide)
    norm = float(X.detach().abs().sum(-2).amax())  # the largest 1-norm of the batch
    s = max(0, math.ceil(math.log2(norm / _THETA13))) if norm > 0 and math.isfinite(norm) else 0
    X = X / (2.0 ** s) if s else X
    b = _PADE13
    eye = flow.eye(A.shape[-1], dtype=wide, device=A.device)
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    R = flow.linalg.solve(V - U, V + U)
    for _ in builtins.range(s):
        R = R @ R
    return R.to(A.dtype)


def eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of real square matrices (complex results, LAPACK's geev order
    and normalisation). No gradient yet (complex linear algebra is not wired)."""
    import collections
    w, V = _C.linalg_eig(A, True)
    Result = collections.namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
    return Result(w, V)


def eigvals(A, *, out=None):
    """The (complex) eigenvalues of real square matrices."""
    return _C.linalg_eig(A, False)[0]


def tensorinv(A, ind=2):
    """The inverse of A read as a matrix of (prod of its first ind dims) rows: shape
    A.shape[ind:] + A.shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return _flow().linalg.inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) = B: A's dims `dims` moved last, A read as a
    (B.numel(), rest) matrix."""
    flow = _flow()
    if dims is not None:
        nd = A.dim()
        moved = [d % nd for d in dims]
        A = A.permute(*[d for d in builtins.range(nd) if d not in moved], *moved)
    rest = tuple(A.shape[B.dim():])
    n = B.numel()
    if math.prod(rest) != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {math.prod(rest)} != {n}")
    return flow.linalg.solve(A.reshape(n, n), B.reshape(n)).reshape(rest)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (left) or X A = B, A triangular: only its upper (or lower) triangle is
    read, its diagonal taken as ones when unitriangular; solved by linalg.solve on that matrix."""
    flow = _flow()
    if A.dim() < 2 or B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor A and B must have at least 2 dimensions.")
    T = A.triu() if upper else A.tril()
    if unitriangular:
        eye = flow.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        T = T * (1 - eye) + eye
    return flow.linalg.solve(T, B, left=left)


# ---------------------------------------------------------------------------
# Tensor-only methods


def _fill_diagonal_(self, fill_value, wrap=False):
    """Writes fill_value on the main diagonal in place (all sizes equal beyond 2-D; with wrap,
    a tall matrix's diagonal restarts every cols + 1 rows, as numpy's)."""
    flow = _flow()
    if self.dim() < 2:
        raise RuntimeError("fill_diagonal_(): dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("fill_diagonal_(): all dimensions of input must be of equal length")
    if self.dim() == 2:
        rows, cols = self.shape
        k = min(rows, cols)
        r = list(range(k))
        c = list(range(k))
        if wrap and rows > cols + 1:
            start = cols + 1
            while start < rows:
                extra = list(range(start, min(rows, start + cols)))
                r += extra
                c += list(range(len(extra)))
                start += cols + 1
        idx = (flow.tensor(r, dtype=flow.int64, device=self.device), flow.tensor(c, dtype=flow.int64, device=self.device))
    else:
        i = flow.arange(self.shape[0], device=self.device)
        idx = (i,) * self.dim()
    self[idx] = fill_value
    return self


def _sum_to_size(self, *size):
    """Sums the broadcast dims away so that the result has `size` (expandable to self's shape)."""
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = tuple(size[0])
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s == 1 or s == t for s, t in zip(size, shape[lead:]))
    if not ok:
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    out = self.sum(tuple(range(lead))) if lead else self
    dims = [k for k, (s, t) in enumerate(zip(size, shape[lead:])) if s == 1 and t != 1]
    return out.sum(dims, keepdim=True) if dims else out


# ---------------------------------------------------------------------------
# nn.functional


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution: softmax((logits + g) / tau) with standard
    Gumbel noise g; hard: the one-hot of the argmax with the soft sample's gradient."""
    flow = _flow()
    g = -flow.empty_like(logits).exponential_().log()
    y = flow.softmax((logits + g) / tau, dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    one_hot = flow.zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot - y.detach() + y


def channel_shuffle(input, groups):
    """Rearranges the C channels of (N, C, *) as (groups, C / groups) -> (C / groups, groups)."""
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n, rest = input.shape[0], tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape((n, c) + rest)


def pdist(input, p=2):
    """The p-norm distances between the rows of a 2-D input, for each pair i < j (row-major)."""
    flow = _flow()
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n < 2:
        return flow.empty(0, dtype=input.dtype, device=input.device)
    i, j = triu_indices(n, n, 1, device=input.device)
    return flow.linalg.vector_norm(input[i] - input[j], p, dim=1)


# ---------------------------------------------------------------------------
# In-place view and resize methods: the tensor takes the new layout (storage shared, autograd
# identity kept, through the .data setter). Refused while the tensor requires grad and grad mode
# is on: autograd records no in-place layout change (use the out-of-place op).


def _check_layout_change(self, name):
    if self.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(f"{name}(): an in-place layout change of a tensor that requires grad is not supported; "
                           f"use the out-of-place op (or run it under no_grad)")


def _inplace_view(name, view):
    def method(self, *args, **kwargs):
        _check_layout_change(self, name)
        self.data = view(self, *args, **kwargs)
        return self

    method.__name__ = name
    method.__doc__ = f"In-place form of {name[:-1]}: this tensor becomes that view of its storage."
    return method


def _resize_(self, *size, memory_format=None):
    """Gives the tensor `size` (contiguous); its first elements keep their values when the storage
    grows (new ones are uninitialised, as PyTorch)."""
    flow = _flow()
    _check_layout_change(self, "resize_")
    if len(size) == 1 and not isinstance(size[0], numbers.Integral):
        size = tuple(size[0])
    if any(s < 0 for s in size):
        raise RuntimeError(f"resize_(): Trying to create tensor with negative dimension: {list(size)}")
    numel = math.prod(size)
    if self.is_contiguous() and self.numel() >= numel:
        self.data = self.reshape(-1)[:numel].view(*size) if size else self.reshape(-1)[:1].view(())
        return self
    fresh = flow.empty(numel, dtype=self.dtype, device=self.device)
    keep = min(numel, self.numel())
    if keep:
        fresh[:keep] = self.reshape(-1)[:keep]
    self.data = fresh.view(*size) if size else fresh.view(())
    return self


def _set_(self, source=None, storage_offset=0, size=None, stride=None):
    """The tensor shares source's storage and layout (or, with size / stride, that view of it);
    with no source it becomes an empty tensor."""
    flow = _flow()
    _check_layout_change(self, "set_")
    if source is None:
        self.data = flow.empty(0, dtype=self.dtype, device=self.device)
    elif size is None:
        self.data = source
    else:
        self.data = source.as_strided(size, stride if stride is not None else
                                      _contiguous_strides(size), storage_offset)
    return self


def _contiguous_strides(size):
    strides, acc = [], 1
    for s in reversed(list(size)):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _install_inplace_views():
    T = Tensor
    T.squeeze_ = _inplace_view("squeeze_", lambda x, *a, **k: x.squeeze(*a, **k))
    T.unsqueeze_ = _inplace_view("unsqueeze_", lambda x, dim: x.unsqueeze(dim))
    T.t_ = _inplace_view("t_", lambda x: x.t())
    T.transpose_ = _inplace_view("transpose_", lambda x, d0, d1: x.transpose(d0, d1))
    T.swapaxes_ = _inplace_view("swapaxes_", lambda x, d0, d1: x.transpose(d0, d1))
    T.swapdims_ = _inplace_view("swapdims_", lambda x, d0, d1: x.transpose(d0, d1))
    T.as_strided_ = _inplace_view("as_strided_", lambda x, size, stride, storage_offset=None:
                                  x.as_strided(size, stride, storage_offset))
    T.resize_ = _resize_
    T.resize_as_ = lambda self, other, memory_format=None: _resize_(self, tuple(other.shape))
    T.set_ = _set_


def _put_(self, index, source, accumulate=False):
    """Writes source into self read as a flat (row-major) tensor at index (added with
    accumulate, so repeated indices sum)."""
    flow = _flow()
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = self.numel()
    idx = index.reshape(-1).long()
    if idx.numel() and (int(idx.min()) < -n or int(idx.max()) >= n):
        raise IndexError(f"put_(): index out of range for a tensor of {n} elements")
    idx = flow.where(idx < 0, idx + n, idx)
    flat = self.reshape(-1) if self.is_contiguous() else self.contiguous().reshape(-1)
    flat.index_put_((idx,), source.reshape(-1).to(self.dtype), accumulate)
    if not self.is_contiguous():
        self.copy_(flat.reshape(self.shape))
    return self


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """self's slices along dim at index combined with source's by reduce ('prod', 'mean',
    'amax', 'amin'), through scatter_reduce_ with the index broadcast over source."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    d = dim % max(self.dim(), 1)
    if source.dim() and source.shape[d] != index.numel():
        raise IndexError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")
    shape = [1] * source.dim()
    if shape:
        shape[d] = -1
    full = index.reshape(shape).expand(tuple(source.shape)) if shape else index.reshape(())
    return self.scatter_reduce_(d, full.long(), source, reduce, include_self=include_self)


def _apply_(self, callable):
    """Replaces each element by callable(element) (a Python call per element; CPU tensors)."""
    flow = _flow()
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    vals = [callable(v) for v in self.reshape(-1).tolist()]
    self.copy_(flow.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


def _map_(self, other, callable):
    """self[i] = callable(self[i], other[i]) with other broadcast to self (CPU tensors)."""
    flow = _flow()
    if self.device.type != "cpu" or other.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    o = other.expand(tuple(self.shape)).reshape(-1).tolist()
    vals = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), o)]
    self.copy_(flow.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


# ---------------------------------------------------------------------------
# dtype rules, defaults and small top-level names


def result_type(tensor1, tensor2):
    """The dtype PyTorch's type promotion gives an op on the two (tensors or numbers): that of
    an addition of zero-element stand-ins of the same categories (0-d tensors stay 0-d)."""
    flow = _flow()

    def stand_in(v):
        if isinstance(v, Tensor):
            return v if v.dim() == 0 else v.reshape(-1)[:0]
        return v

    a, b = stand_in(tensor1), stand_in(tensor2)
    if not isinstance(a, Tensor):
        a, b = (b, a) if isinstance(b, Tensor) else (flow.tensor(a), b)
    b_bool = isinstance(b, bool) or (isinstance(b, Tensor) and b.dtype == flow.bool)
    if a.dtype == flow.bool and b_bool:
        return flow.bool
    with flow.no_grad():
        return flow.add(a, b).dtype


def can_cast(from_, to):
    """Whether PyTorch's casting rules allow from_ -> to in in-place ops: no float to integral,
    no complex to non-complex, no non-bool to bool."""
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    flow = _flow()
    if from_ != flow.bool and to == flow.bool:
        return False
    return True


_MATMUL_PRECISION = ["highest"]


def set_float32_matmul_precision(precision):
    """'highest' (float32 matmuls in full precision), 'high' or 'medium' (TF32 allowed on CUDA):
    flow.backends.cuda.matmul.allow_tf32 follows it, as in PyTorch."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision!r}; expected 'highest', 'high' or 'medium'")
    _MATMUL_PRECISION[0] = precision
    _flow().backends.cuda.matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision():
    return _MATMUL_PRECISION[0]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile's signature: returns the model (or function) itself, which runs eagerly
    (the same results; oneflow's graph compilation is nn.Graph). Usable as a decorator."""
    if model is None:
        return lambda m: m
    return model


_WARN_ALWAYS = [False]


def set_warn_always(b):
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled():
    return _WARN_ALWAYS[0]


def cholesky_solve(B, L, upper=False):
    """X with (L L^H) X = B for the Cholesky factor L (upper: A = U^H U)."""
    flow = _flow()
    if upper:
        y = flow.linalg.solve_triangular(L.transpose(-2, -1).conj(), B, upper=False)
        return flow.linalg.solve_triangular(L, y, upper=True)
    y = flow.linalg.solve_triangular(L, B, upper=False)
    return flow.linalg.solve_triangular(L.transpose(-2, -1).conj(), y, upper=True)


def cholesky_inverse(L, upper=False):
    """The inverse of L L^H (upper: U^H U) from its Cholesky factor."""
    flow = _flow()
    eye = flow.eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(tuple(L.shape))
    return cholesky_solve(eye, L, upper)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """A tensor of obj: shares the memory of a tensor or array when dtype and device allow and
    copy is not True (as torch.asarray)."""
    flow = _flow()
    if isinstance(obj, Tensor):
        t = obj
        if dtype is not None or device is not None:
            t = t.to(dtype=dtype or t.dtype, device=device or t.device)
        if copy:
            t = t.clone()
    else:
        t = flow.tensor(obj, dtype=dtype, device=device) if copy or copy is None and not hasattr(obj, "__array__") \
            else flow.as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t = t.detach().requires_grad_(True) if t is obj else t.requires_grad_(True)
    return t


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given strides (a view of a buffer just large enough)."""
    flow = _flow()
    extent = 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if all(s > 0 for s in size) else 0
    base = flow.empty(extent, dtype=dtype, device=device)
    t = base.as_strided(tuple(size), tuple(stride))
    return t.requires_grad_(requires_grad) if requires_grad else t


def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    return other - input * alpha if alpha != 1 else other - input


class layout:  # noqa: N801 - torch's name
    """A tensor memory layout; oneflow's tensors are all strided (dense)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"oneflow.{self.name}"


strided = layout("strided")


def _legacy_new(self, *args, device=None):
    """Tensor.new (PyTorch's legacy constructor): same dtype and device; sizes give an
    uninitialised tensor, a sequence or array its data, a tensor shares it."""
    flow = _flow()
    dev = device or self.device
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].to(dtype=self.dtype, device=dev) if args[0].dtype != self.dtype else args[0]
    if len(args) == 1 and not isinstance(args[0], (int, numbers.Integral)) and not isinstance(args[0], flow.Size):
        return flow.tensor(args[0], dtype=self.dtype, device=dev)
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], flow.Size) else args
    return flow.empty(*sizes, dtype=self.dtype, device=dev) if sizes else flow.empty(0, dtype=self.dtype, device=dev)


def _inplace_via_copy(name):
    def method(self, *args, **kwargs):
        return self.copy_(getattr(Tensor, name)(self, *args, **kwargs))
    method.__name__ = name + "_"
    return method


def _install():
    flow = _flow()
    for fn in (isin, tril_indices, triu_indices, logspace, cartesian_prod, block_diag, cov, corrcoef, dist,
               addr, renorm, vander, trapezoid, trapz, cumulative_trapezoid, unravel_index, ldexp, quantile,
               nanquantile, slice_scatter, select_scatter, diagonal_scatter, combinations, histogram,
               chain_matmul):
        setattr(flow, fn.__name__, fn)
    for fn in (slice_scatter, select_scatter, diagonal_scatter):
        setattr(Tensor, fn.__name__, fn)
    L = flow.linalg
    L.multi_dot, L.vecdot, L.diagonal, L.cond, L.solve_triangular = multi_dot, vecdot, linalg_diagonal, cond, \
        solve_triangular
    L.vander = lambda x, *, N=None: vander(x, N, increasing=True)
    L.matrix_exp = flow.matrix_exp = Tensor.matrix_exp = matrix_exp
    L.tensorinv, L.tensorsolve, L.matmul = tensorinv, tensorsolve, flow.matmul
    L.eig, L.eigvals = eig, eigvals
    for fn in (cov, corrcoef, dist, addr, renorm, ldexp, quantile, nanquantile):
        setattr(Tensor, fn.__name__, fn)
    Tensor.fill_diagonal_ = _fill_diagonal_
    _install_inplace_views()
    Tensor.put_ = _put_
    Tensor.put = lambda self, index, source, accumulate=False: _put_(self.clone(), index, source, accumulate)
    Tensor.index_reduce_ = _index_reduce_
    Tensor.index_reduce = lambda self, dim, index, source, reduce, *, include_self=True: _index_reduce_(
        self.clone(), dim, index, source, reduce, include_self=include_self)
    flow.index_reduce = Tensor.index_reduce
    Tensor.apply_, Tensor.map_ = _apply_, _map_
    Tensor.fix, Tensor.fix_, flow.fix = Tensor.trunc, Tensor.trunc_, flow.trunc
    Tensor.adjoint = lambda self: self.transpose(-2, -1).conj()
    flow.adjoint = Tensor.adjoint
    Tensor.is_same_size = lambda self, other: tuple(self.shape) == tuple(other.shape)
    for fn in (result_type, can_cast, set_float32_matmul_precision, get_float32_matmul_precision, compile,
               set_warn_always, is_warn_always_enabled, cholesky_solve, cholesky_inverse, asarray, empty_strided,
               rsub):
        setattr(flow, fn.__name__, fn)
    Tensor.cholesky_solve, Tensor.cholesky_inverse = cholesky_solve, cholesky_inverse
    flow.layout, flow.strided = layout, strided
    Tensor.layout = property(lambda self: strided)
    Tensor.new = _legacy_new
    Tensor.split_with_sizes = lambda self, split_sizes, dim=0: self.split(list(split_sizes), dim)
    # unsafe_chunk has no OneFlow form: PyTorch's chunk sizes (ceil(n / chunks), maybe fewer pieces)
    Tensor.unsafe_split = Tensor.split
    Tensor.unsafe_chunk = lambda self, chunks, dim=0: self.split(max(1, -(-self.shape[dim] // chunks)), dim)
    Tensor.unsafe_split_with_sizes = Tensor.split_with_sizes
    flow.split_with_sizes = Tensor.split_with_sizes
    flow.unsafe_split, flow.unsafe_chunk, flow.unsafe_split_with_sizes = (
        Tensor.unsafe_split, Tensor.unsafe_chunk, Tensor.unsafe_split_with_sizes)
    Tensor.new_empty_strided = lambda self, size, stride, *, dtype=None, device=None, requires_grad=False: \
        empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                      requires_grad=requires_grad)
    for name in ("addr", "renorm", "ldexp"):
        setattr(Tensor, name + "_", _inplace_via_copy(name))
    flow.is_same_size = Tensor.is_same_size
    flow.is_signed = lambda t: t.is_signed()
    flow.scalar_tensor = lambda s, *, dtype=None, device=None, requires_grad=False, **kw: flow.tensor(
        s, dtype=dtype or flow.get_default_dtype(), device=device, requires_grad=requires_grad)
    flow.get_default_device = lambda: flow.device("cpu")
    flow.detach = lambda t: t.detach()
    flow.fill = lambda t, value: t.clone().fill_(value)
    flow.zero_ = lambda t: t.zero_()
    flow.matrix_rank = lambda A, tol=None, symmetric=False: flow.linalg.matrix_rank(A, tol=tol, hermitian=symmetric)
    flow.nuclear_norm = lambda A, dim=(-2, -1), keepdim=False: flow.linalg.matrix_norm(A, "nuc", dim, keepdim)
    flow.frobenius_norm = lambda A, dim=(-2, -1), keepdim=False: flow.linalg.matrix_norm(A, "fro", dim, keepdim)
    # nn.functional forms PyTorch also has at the top level with the same leading arguments
    # (not batch_norm / instance_norm / embedding_bag: their torch.X signatures differ)
    for name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                 "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
                 "adaptive_avg_pool1d", "adaptive_max_pool1d", "layer_norm", "group_norm",
                 "rms_norm", "bilinear", "pdist", "channel_shuffle",
                 "pixel_shuffle", "pixel_unshuffle", "cosine_similarity", "pairwise_distance", "prelu", "hardshrink",
                 "rrelu", "selu", "celu", "threshold", "alpha_dropout", "feature_alpha_dropout", "dropout"):
        if not hasattr(flow, name) and hasattr(flow.nn.functional, name):
            setattr(flow, name, getattr(flow.nn.functional, name))
    # in-place functional forms at the top level (torch.exp_(t) ...): the Tensor methods
    for name in ("abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "arccos_", "arccosh_", "arcsin_",
                 "arcsinh_", "arctan_", "arctanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_",
                 "cosh_", "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "gcd_",
                 "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
                 "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_",
                 "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "index_put_", "addmv_", "resize_as_"):
        if not hasattr(flow, name) and hasattr(Tensor, name):
            setattr(flow, name, getattr(Tensor, name))
    # view ops' copying forms (torch.permute_copy ...)
    for name in ("permute", "transpose", "t", "squeeze", "unsqueeze", "expand", "diagonal", "select", "unfold",
                 "view", "narrow", "split", "unbind", "split_with_sizes", "as_strided", "view_as_real",
                 "view_as_complex", "slice"):
        src = getattr(Tensor, name, None) or getattr(flow, name, None)
        if src is None or hasattr(flow, name + "_copy"):
            continue

        def make(f):
            def copy_op(*args, **kwargs):
                r = f(*args, **kwargs)
                return type(r)(x.clone() for x in r) if isinstance(r, (tuple, list)) else r.clone()
            return copy_op
        setattr(flow, name + "_copy", make(src))
    Tensor.sum_to_size = _sum_to_size
    F = flow.nn.functional
    F.gumbel_softmax, F.channel_shuffle, F.pdist = gumbel_softmax, channel_shuffle, pdist
    for k in (1, 2, 3):
        for kind in ("max_pool", "adaptive_max_pool"):
            base = getattr(F, f"{kind}{k}d")
            setattr(F, f"{kind}{k}d_with_indices",
                    (lambda b: lambda *args, **kwargs: b(*args, **{**kwargs, "return_indices": True}))(base))


_install()
