"""Statistics over tensors, composed of table ops (their gradients are those ops'), with
PyTorch's argument rules: var / std / var_mean / std_mean (their bool `unbiased` overload),
cov / corrcoef, quantile / nanquantile, histogram / histogramdd (the
bin edges and bin indices they share). Tested against PyTorch in tests/test_torch_names.py and
tests/test_compat_numeric.py.
"""
import builtins
import math
import numbers

import oneflow as flow  # the assembled namespace, looked up at call time

from . import _oneflow_internal as _C
from ._oneflow_internal import Tensor
from ._export import export, export_value
from ._argcheck import check_tensor
from ._math import _along
from ._no_derivative import not_implemented_derivative


# ---------------------------------------------------------------------------
# var / std: var(x, True) means unbiased=True, as in PyTorch's overload.


def _with_bool_unbiased(fn):
    def wrapper(input, *args, **kwargs):
        if args and isinstance(args[0], builtins.bool):
            if "unbiased" in kwargs:
                raise TypeError(f"{fn.__name__}() got multiple values for argument 'unbiased'")
            kwargs["unbiased"] = args[0]
            args = args[1:]
        return fn(input, *args, **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


export_value(_with_bool_unbiased(_C.var), "flow.var", "Tensor.var", out=True)
export_value(_with_bool_unbiased(_C.std), "flow.std", "Tensor.std", out=True)
export_value(_with_bool_unbiased(_C.var_mean), "flow.var_mean")
export_value(_with_bool_unbiased(_C.std_mean), "flow.std_mean")


@export("flow.cov", "Tensor.cov")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the variables (rows) over the observations (columns), optionally weighted by
    integer frequency weights and observation weights (numpy's / PyTorch's formula)."""
    check_tensor(input, "cov", "input", 1)
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {input.dim()} dimensions")
    if input.dtype == flow.bool:  # read as 0 / 1 (PyTorch refuses it)
        raise RuntimeError("cov(): bool dtype is not supported for input")
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
    if not (math.isfinite(lo) and math.isfinite(hi)):  # a NaN / inf value or bound: no equal steps
        raise RuntimeError(f"{name}: dimension {dim}'s range [{lo}, {hi}] is not finite")
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
    # bins: a count or the edges; a bool was read as 1 bin (PyTorch: no such overload)
    if isinstance(bins, bool) or not isinstance(bins, (numbers.Integral, flow.Tensor, list, tuple)):
        raise TypeError(f"histogram(): argument 'bins' (position 2) must be int or Tensor, not {type(bins).__name__}")
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
    # PyTorch does not differentiate histograms: a backward through them raises there too
    hist, edges = not_implemented_derivative("histogram", [input, weight, bins], [hist, edges])
    Result = collections.namedtuple("histogram", ["hist", "bin_edges"])
    return Result(hist, edges)


def _bin_edges(sample, bins, rng, dtype):
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
def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):  # noqa: A002 (bins: required, as PyTorch)
    """The D-dimensional histogram of the points input[..., :] (D = input.shape[-1]): counts
    (or summed weights) in the cells of the bin edges per dimension, each bin closed on the
    left, the last one also on the right; points outside are dropped. (hist, bin_edges), as
    torch.histogramdd."""
    check_tensor(input, "histogramdd", "input", 1)
    # PyTorch's forms: an int, a list of ints, a list of edge tensors (one Tensor or a bool is none)
    if isinstance(bins, (bool, Tensor)):
        raise TypeError(f"histogramdd(): argument 'bins' must be int, tuple of ints or tuple of Tensors, "
                        f"not {type(bins).__name__}")
    if not input.is_floating_point():
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                           f"got input {input.dtype}")
    if input.dim() < 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 1 dimension")
    D = input.shape[-1]
    sample = input.detach().reshape(-1, D)
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
    hist, *edges = not_implemented_derivative("histogramdd", [input, weight], [hist, *edges])
    return collections.namedtuple("histogramdd", ["hist", "bin_edges"])(hist, tuple(edges))


export_value(lambda self, *a, **k: flow.histogram(self, *a, **k), "Tensor.histogram")


@export("flow.roc_auc_score")
def roc_auc_score(label, pred):
    """OneFlow's area under the ROC curve of binary `label` (nonzero = positive) scored by `pred`,
    as a float32 tensor of shape (1,) (upstream's op; sklearn.metrics.roc_auc_score's value). It
    is the Mann-Whitney statistic: the chance that a random positive scores above a random
    negative, ties counting half, computed from the ranks of `pred` (tied scores share their
    average rank). Not differentiable, as upstream's."""
    check_tensor(label, "roc_auc_score", "label", 1)
    check_tensor(pred, "roc_auc_score", "pred", 2)
    if label.numel() != pred.numel():
        raise RuntimeError(f"roc_auc_score(): label and pred must have the same number of elements, got "
                           f"{label.numel()} and {pred.numel()}")
    with flow.no_grad():
        score, order = flow.sort(pred.reshape(-1).to(flow.float64))
        positive = (label.reshape(-1)[order] != 0).to(flow.float64)
        _, group, counts = flow.unique_consecutive(score, return_inverse=True, return_counts=True)
        last = flow.cumsum(counts, 0).to(flow.float64)  # 1-based rank of each group's last element
        rank = (last - (counts.to(flow.float64) - 1) / 2)[group]  # average rank of the tied scores
        n_pos = positive.sum()
        n_neg = positive.numel() - n_pos
        auc = ((rank * positive).sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
        return auc.to(flow.float32).reshape(1)
