"""SBP rules of the nn ops a data-parallel step runs (docs/global_tensors.md): with the batch split
(split(0)) and the parameters broadcast, convolutions, pooling, per-sample normalisation,
embeddings, flatten of the rows and the losses run on each rank's rows. Which op follows
which rule is op-table data (`sbp: batchwise`, ...: signatures.RULES names these functions).

A rule returns (targets, output sbp, output's logical size along its split dim, pre, post) or None
(the op runs whole on broadcast inputs): `pre(args, kwargs)` rewrites logical arguments into local ones (a
mean loss's reduction), `post(result)` finishes the local result (a mean loss's normaliser)."""
import math

from .. import _oneflow_internal as _C
from ..sbp import broadcast as B, partial_sum as P, split as S
from .runtime import arg, group

def _batch(gs, first):
    """`first` split along dim 0, every other global input broadcast: the output split along 0."""
    if first._sbp[0] != S(0):
        return None
    return {id(g): B for g in gs if g is not first}, S(0), first._shape[0], None, None


def batchwise(name, gs, args, kwargs):
    w = kwargs.get("weight")
    if w is not None and hasattr(w, "_sbp") and w.dim() >= 3 and gs[0].dim() < w.dim():
        return None  # an unbatched convolution (C, *spatial): its dim 0 is the channels
    return _batch(gs, gs[0])


def embedding(name, gs, args, kwargs):
    weight = arg(args, kwargs, 0, "weight")
    if kwargs.get("scale_grad_by_freq"):
        return None  # (its gradient divides by each index's count over the whole batch)
    indices = [g for g in gs if g is not weight]
    if not indices or indices[0]._sbp[0]._kind != "S":
        return None
    idx = indices[0]
    return {id(weight): B} if any(g is weight for g in gs) else {}, idx._sbp[0], idx._shape[idx._sbp[0]._dim], None, None


def layer_norm(name, gs, args, kwargs):
    x = gs[0]
    if "begin_norm_axis" in kwargs:  # (layer_norm_affine: the dims from begin_norm_axis on)
        n = x.dim() - kwargs["begin_norm_axis"] % max(x.dim(), 1)
    else:  # (rms_norm has its weight before normalized_shape)
        shape = kwargs["normalized_shape"] if "normalized_shape" in kwargs else arg(args, kwargs, 1, "normalized_shape")
        n = 1 if isinstance(shape, int) else len(shape)
    s = x._sbp[0]
    if s._kind != "S" or s._dim >= x.dim() - n:
        return None
    return {id(g): B for g in gs if g is not x}, s, x._shape[s._dim], None, None


def flatten(name, gs, args, kwargs):
    x = gs[0]
    start = arg(args, kwargs, 1, "start_dim", 0)
    if x._sbp[0] != S(0) or x.dim() == 0 or start % x.dim() == 0:
        return None
    return {}, S(0), x._shape[0], None, None


def _loss(name, gs, args, kwargs, normaliser):
    """input and target split along the batch, weights broadcast: 'none' stays split, 'sum' is a
    partial sum, 'mean' a partial sum of each rank's sum over the global normaliser."""
    if "reduction" not in kwargs or not isinstance(kwargs["reduction"], str):
        return None
    reduction = kwargs["reduction"]
    # (the split: the rule of src/api/global_rules.h, LossRule, which the C++ fast path runs too)
    sig = _C._sbp_loss([g._sbp[0] for g in gs], [list(g._shape) for g in gs], reduction)
    if sig is None:
        return None
    targets = {id(g): t for g, t in zip(gs[1:], sig[0][1:])}
    if reduction == "none":
        return targets, S(0), sig[2], None, None
    if reduction != "mean":
        return targets, P, None, None, None
    box_to = targets

    def pre(a, k):
        return a, dict(k, reduction="sum")

    def post(result, locals_):
        return result / normaliser(locals_, box_to)
    return targets, P, None, pre, post


def elementwise_loss(name, gs, args, kwargs):
    x = gs[0]
    n = float(math.prod(x._shape))
    return _loss(name, gs, args, kwargs, lambda locals_, t: n)


def class_loss(name, gs, args, kwargs):
    """cross_entropy / nll_loss: the mean divides by the summed weights of the targets that are
    not ignored, over every rank (one all-reduce); probability targets by the batch size."""
    from .. import distributed as dist, ones_like, where, zeros_like
    x = gs[0]
    target = kwargs.get("target")
    weight = kwargs.get("weight")
    ignore = kwargs.get("ignore_index", -100)
    if target is None or not hasattr(target, "_local") or x.dim() < 2:
        return None  # (an unbatched input (C,): its dim 0 is the classes)

    def normaliser(locals_, t):
        tl = locals_[id(target)]
        if tl.dtype.is_floating_point:  # class probabilities: the batch size
            return float(x._shape[0])
        valid = tl != ignore
        safe = where(valid, tl, zeros_like(tl))
        w = locals_[id(weight)][safe] if weight is not None else ones_like(tl, dtype=x.dtype)
        total = (w * valid.to(w.dtype)).sum().detach().clone()
        dist.all_reduce(total, group=group(x._placement._ranks))
        return total
    return _loss(name, gs, args, kwargs, normaliser)


def batch_norm(name, gs, args, kwargs):
    """Training on a split batch normalises with the statistics of the whole batch (SyncBatchNorm's
    function over the default group: per-channel moments all-gathered); in eval mode, with fixed
    running statistics, each rank normalises its own rows."""
    x = gs[0]
    if x._sbp[0] != S(0) or x.dim() < 2:
        return None
    targets = {id(g): B for g in gs if g is not x}
    if not kwargs.get("training", False):
        return targets, S(0), x._shape[0], None, None

    def impl(input, running_mean, running_var, weight=None, bias=None, training=True, momentum=0.1, eps=1e-5):
        from ..nn.modules._sync_bn import SyncBatchNormFunction
        ranks = x._placement._ranks
        y = SyncBatchNormFunction.apply(input, weight, bias, running_mean, running_var, eps, momentum, group(ranks),
                                        len(ranks))
        return y, None, None
    return targets, S(0), x._shape[0], None, None, impl


def row_loss(name, gs, args, kwargs):
    """Losses of one value per sample (kl_div, cosine embedding, triplet margin, the multi-class
    margins): every tensor of the batch's size split along it (a broadcast one sliced), class
    weights whole. 'none' stays split, 'sum' is a partial sum, 'mean' / 'batchmean' a partial sum
    of each rank's sum over the global normaliser (the batch size; kl_div's 'mean': every
    element)."""
    x = gs[0]
    reduction = kwargs.get("reduction")
    if x._sbp[0] != S(0) or x.dim() < (1 if name == "kl_div" else 2) or not isinstance(reduction, str) or \
            any(g._sbp[0]._kind == "P" for g in gs):
        return None
    n = x._shape[0]
    targets = {id(g): S(0) if g.dim() > 0 and g._shape[0] == n else B for g in gs}
    if reduction == "none":
        return targets, S(0), n, None, None
    if reduction == "sum":
        return targets, P, None, None, None
    if reduction not in ("mean", "batchmean"):
        return None
    norm = float(math.prod(x._shape) if reduction == "mean" and name == "kl_div" else n)

    def pre(a, k):
        return a, dict(k, reduction="sum")

    def post(result, locals_):
        return result / norm
    return targets, P, None, pre, post
