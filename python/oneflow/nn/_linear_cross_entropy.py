"""linear_cross_entropy: cross_entropy(linear(input, W, b), target) (torch 2.13's
nn.functional.linear_cross_entropy, nn.LinearCrossEntropyLoss, nn.LinearCrossEntropyOptions).

Note [Chunked linear cross entropy]: with `options`, the batch is processed in chunks of rows,
so that the (N, C) logits of a large-vocabulary head never exist at once: each chunk's logits,
log-sum-exp and loss are computed and dropped. For the scalar reductions the gradients are
formed in the same pass when an input requires grad (softmax - one-hot, times the class weight,
into grad_input rows and one accumulated grad_weight / grad_bias), so training costs the
reference's three matmuls and no second pass; backward only scales them by the incoming
gradient (which also makes retain_graph work). reduction='none' keeps nothing: its backward
recomputes each chunk's logits with the per-row gradients. The chunked path covers what torch's
covers (int64 class targets, no label smoothing, 2-d weights); anything else warns and takes the
reference path. Both paths are first-order only, as torch's chunked one."""
import dataclasses
import math
import warnings

from .. import _oneflow_internal as _C
from .._export import export
from .._argcheck import check_optional_tensor, check_tensor
from ..autograd.function import Function
from .modules.linear import Linear
from .modules.loss import _WeightedLoss

_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """Opts linear_cross_entropy into the chunked path (Note [Chunked linear cross entropy]).

    batch_chunk_size: rows per chunk (None: from chunking_method). chunking_method: "auto",
    "aspect_ratio[:N]" (chunks whose (rows, C) logits are about the size of the (N, in) input,
    divided by N) or None (batch_chunk_size, else one chunk). acc_dtype: the dtype the chunk
    computes in (None: float32 for 16-bit inputs, else theirs). acc_policy and
    allow_retain_graph are accepted for torch's signature; this implementation always keeps
    its gradient buffers (retain_graph works) and accumulates in acc_dtype.
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method not in (None, "auto"):
            name, sep, factor = str(self.chunking_method).partition(":")
            if not (name == "aspect_ratio" and (not sep or (factor.isdigit() and int(factor) > 0))):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and not isinstance(size, bool) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
            raise ValueError(f"acc_dtype must be one of None, float16, bfloat16, float32, float64; got "
                             f"{self.acc_dtype!r}")

    def _rows_per_chunk(self, rows, in_features, classes, dtype):
        method = self.chunking_method
        if method == "auto":
            if self.batch_chunk_size is not None:  # an explicit size wins over the heuristic
                return min(self.batch_chunk_size, max(rows, 1))
            method = "aspect_ratio" if dtype in (_C.float16, _C.bfloat16) else "aspect_ratio:2"
        if method is None:
            return min(self.batch_chunk_size or rows, max(rows, 1))
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = -(-rows // -(-classes // in_features))  # rows / ceil(C / in), rounded up
        power = 1 << max(target - 1, 0).bit_length()
        return max(1, min(power // factor, rows))


def _acc_dtype(options, dtype):
    if options.acc_dtype is not None:
        return options.acc_dtype
    return _C.float32 if dtype in (_C.float16, _C.bfloat16) else dtype


def _check_targets(t, ignore_index, classes):
    """Once per call, before any chunk (one pass over the targets, not one sync per chunk)."""
    bad = (t != ignore_index) & ((t < 0) | (t >= classes))
    if bool(bad.any()):
        raise IndexError(f"linear_cross_entropy: Target {int(t[bad][0])} is out of bounds.")


def _chunk_terms(x, w, b, t, cls_weight, ignore_index):
    """One chunk: its logits' log-sum-exp and target logits, the per-row weights (0 where
    ignored), and the softmax (the gradient's first term)."""
    z = _C.matmul(x, w.T)
    if b is not None:
        z = z + b
    valid = t != ignore_index
    safe = _C.where(valid, t, _C.zeros_like(t))
    row_w = valid.to(z.dtype) if cls_weight is None else cls_weight[safe] * valid.to(z.dtype)
    lse = _C.logsumexp(z, [1], True)
    zt = _C.gather(z, 1, safe.unsqueeze(1))
    return z, lse, zt, safe, row_w


def _chunk_grad_logits(z, lse, safe, scale):
    """(softmax(z) - one_hot(target)) * scale[:, None]: d(loss rows)/d(logits), scaled."""
    g = _C.exp(z - lse)
    g.scatter_add_(1, safe.unsqueeze(1), _C.full((g.shape[0], 1), -1.0, dtype=g.dtype))
    return g * scale.unsqueeze(1)


def _in_acc(acc, *tensors):
    return [None if t is None else t.to(acc) for t in tensors]


class _GradBuffers:
    """grad_input (row blocks), grad_weight and grad_bias, accumulated chunk by chunk in acc."""

    def __init__(self, x, w, wanted, has_bias, acc):
        want_x, want_w, want_b = wanted
        self.x = _C.zeros(x.shape, dtype=acc) if want_x else None
        self.w = _C.zeros(w.shape, dtype=acc) if want_w else None
        self.b = _C.zeros((w.shape[0],), dtype=acc) if want_b and has_bias else None

    def add(self, g, xc, wa, start):
        """One chunk's d(loss)/d(logits) g for the input rows xc starting at `start`."""
        if self.x is not None:
            self.x[start:start + g.shape[0]] = _C.matmul(g, wa)
        if self.w is not None:
            self.w.addmm_(g.T, xc)
        if self.b is not None:
            self.b += g.sum(0)


class _Chunked(Function):
    """Note [Chunked linear cross entropy]. Inputs: x (N, in), W (C, in), b (C,) or None,
    targets (N,), class weights (C,) or None."""

    @staticmethod
    def forward(ctx, x, w, b, target, cls_weight, reduction, ignore_index, rows, acc):
        n, classes = x.shape[0], w.shape[0]
        _check_targets(target, ignore_index, classes)
        wa, ba, cwa = _in_acc(acc, w, b, cls_weight)
        need = ctx.needs_input_grad[:3]
        want = reduction != "none" and any(need)
        grads = _GradBuffers(x, w, need, b is not None, acc) if want else None
        losses, total, denom = [], _C.zeros((), dtype=_C.float64), _C.zeros((), dtype=_C.float64)
        for start in range(0, n, rows):
            xc, tc = x[start:start + rows].to(acc), target[start:start + rows]
            z, lse, zt, safe, row_w = _chunk_terms(xc, wa, ba, tc, cwa, ignore_index)
            loss = (lse - zt).squeeze(1) * row_w
            if reduction == "none":
                losses.append(loss)
                continue
            total += loss.sum().double()
            denom += row_w.sum().double()
            if want:
                grads.add(_chunk_grad_logits(z, lse, safe, row_w), xc, wa, start)
        ctx.meta = (reduction, ignore_index, rows, acc, b is not None)
        if reduction == "none":
            ctx.save_for_backward(x, w, b, target, cls_weight)
            return _C.cat(losses).to(x.dtype) if losses else _C.zeros((0,), dtype=x.dtype)
        scale = 1.0 / denom if reduction == "mean" else _C.ones((), dtype=_C.float64)
        ctx.grads = (None, None, None, scale) if grads is None else (grads.x, grads.w, grads.b, scale)
        return (total * scale).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        reduction, ignore_index, rows, acc, has_bias = ctx.meta
        if reduction != "none":
            gx, gw, gb, scale = ctx.grads
            s = (grad.double() * scale).to(acc)
            out = [None if g is None else g * s for g in (gx, gw, gb)]
            return (*out, None, None, None, None, None, None)
        x, w, b, target, cls_weight = ctx.saved_tensors
        wa, ba, cwa = _in_acc(acc, w, b, cls_weight)
        grads = _GradBuffers(x, w, ctx.needs_input_grad[:3], has_bias, acc)
        for start in range(0, x.shape[0], rows):
            xc, tc = x[start:start + rows].to(acc), target[start:start + rows]
            z, lse, _, safe, row_w = _chunk_terms(xc, wa, ba, tc, cwa, ignore_index)
            grads.add(_chunk_grad_logits(z, lse, safe, row_w * grad[start:start + rows].to(acc)), xc, wa, start)
        return (grads.x, grads.w, grads.b, None, None, None, None, None, None)


def _check(input, linear_weight, target, linear_bias, ignore_index):
    check_tensor(input, "linear_cross_entropy", "input", 1)
    check_tensor(linear_weight, "linear_cross_entropy", "linear_weight", 2)
    check_tensor(target, "linear_cross_entropy", "target", 3)
    check_optional_tensor(linear_bias, "linear_cross_entropy", "linear_bias", 4)
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and input.dim() == 1:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
                           f"requires batched input, (N, {input.shape[-1]}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*input.shape[:-1], classes, *out_features)
    probabilities = tuple(target.shape) == logits_shape
    if probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    return classes, out_features, logits_shape


@export("flow.nn.functional.linear_cross_entropy")
def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...) for input (N, in) or
    (in,) and linear_weight (C, d_1..d_K, in) (K-dimensional loss); with `options` (a
    LinearCrossEntropyOptions), chunked over the batch (Note [Chunked linear cross entropy])."""
    from . import functional as F

    classes, out_features, logits_shape = _check(input, linear_weight, target, linear_bias, ignore_index)
    ignore = -100 if ignore_index is None else ignore_index
    if options is not None:
        chunked = (not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0
                   and target.dtype == _C.int64)
        if chunked:
            batched = input.dim() == 2
            x, t = (input, target) if batched else (input.unsqueeze(0), target.unsqueeze(0))
            rows = options._rows_per_chunk(x.shape[0], x.shape[1], classes, x.dtype)
            out = _Chunked.apply(x, linear_weight, linear_bias, t, weight, reduction, ignore, rows,
                                 _acc_dtype(options, x.dtype))
            return out if batched or reduction != "none" else out.squeeze(0)
        warnings.warn("linear_cross_entropy: ``options`` ignored; the chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64 and out_features == (); "
                      f"got reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}", stacklevel=2)
    w, b = linear_weight, linear_bias
    if out_features:
        flat = math.prod(out_features) * classes
        w = w.reshape(flat, input.shape[-1])
        b = None if b is None else b.reshape(flat)
    logits = F.linear(input, w, b).reshape(logits_shape)
    return F.cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore,
                           label_smoothing=label_smoothing)


@export("flow.nn.modules.LinearCrossEntropyLoss")
class LinearCrossEntropyLoss(_WeightedLoss):
    """A Linear(in_features, num_classes * prod(out_features)) head and cross_entropy in one
    module (its weight stored flat, reshaped to (C, *out_features, in) in forward)."""

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None, dtype=None,
                 reduction="mean", weight=None, ignore_index=None, label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(self.out_features) * num_classes, bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")

    def forward(self, input, target):
        w = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        b = None if self.linear.bias is None else self.linear.bias.reshape((self.num_classes, *self.out_features))
        return linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight, reduction=self.reduction,
                                    ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                    options=self.options)
