"""nn.functional losses with PyTorch's Python-level arguments over the op table's entries
(src/ops/table/loss.yaml): the deprecated ``size_average``/``reduce`` pair, lengths given as
lists (ctc_loss), a float ``var`` (gaussian_nll_loss), and the elementwise ``weight`` of
mse/l1/huber (computed as PyTorch does in Python: the weighted mean divides by the weights' sum).
"""
import numbers
import warnings

from . import _oneflow_internal as _C
from ._export import export
from ._argcheck import check_optional_tensor, check_tensor
from ._tensor import tensor as _tensor
from .nn import functional as _F


def _legacy_reduction(size_average, reduce, reduction):
    """PyTorch's legacy_get_string: the old pair overrides ``reduction`` (with a warning)."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction="
                  f"'{_reduction_of(size_average, reduce)}' instead.", stacklevel=3)
    return _reduction_of(size_average, reduce)


def _reduction_of(size_average, reduce):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    # PyTorch's order: size_average's truth is taken first (a tensor of several values is then
    # its "ambiguous" RuntimeError, whatever reduce says)
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _weighted(elem, weight, input, reduction):
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    elem = elem * weight
    if reduction == "none":
        return elem
    if reduction == "sum":
        return elem.sum()
    if reduction == "mean":
        return elem.sum() / weight.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


@export("flow.nn.functional.cross_entropy")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


@export("flow.nn.functional.nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.nll_loss(input, target, weight, ignore_index, reduction)


@export("flow.nn.functional.binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.binary_cross_entropy(input, target, weight, reduction)


@export("flow.nn.functional.binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


@export("flow.nn.functional.mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted(_C.mse_loss(input, target, "none"), weight, input, reduction)
    return _C.mse_loss(input, target, reduction)


@export("flow.nn.functional.l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted(_C.l1_loss(input, target, "none"), weight, input, reduction)
    return _C.l1_loss(input, target, reduction)


@export("flow.nn.functional.smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.smooth_l1_loss(input, target, reduction, beta)


@export("flow.nn.functional.huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if weight is not None:
        return _weighted(_C.huber_loss(input, target, "none", delta), weight, input, reduction)
    return _C.huber_loss(input, target, reduction, delta)


@export("flow.nn.functional.kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.kl_div(input, target, reduction, log_target)


@export("flow.nn.functional.margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.margin_ranking_loss(input1, input2, target, margin, reduction)


@export("flow.nn.functional.triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


@export("flow.nn.functional.ctc_loss")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    import oneflow as flow

    if not isinstance(input_lengths, flow.Tensor):
        input_lengths = flow.tensor(input_lengths, dtype=flow.int64)
    if not isinstance(target_lengths, flow.Tensor):
        target_lengths = flow.tensor(target_lengths, dtype=flow.int64)
    return _C.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                       zero_infinity)


@export("flow.nn.functional.sparse_softmax_cross_entropy")
def sparse_softmax_cross_entropy(labels, logits):
    """OneFlow's (and TensorFlow's) argument order, labels first: the per-entry cross entropy of
    softmax(logits) over its last dim at the class `labels` (flow._C.sparse_softmax_cross_entropy
    takes logits first, as upstream's functional API)."""
    return _C.sparse_softmax_cross_entropy(logits, labels)


@export("flow.nn.functional.cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.cosine_embedding_loss(input1, input2, target, margin, reduction)


@export("flow.nn.functional.hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.hinge_embedding_loss(input, target, margin, reduction)


@export("flow.nn.functional.multilabel_soft_margin_loss")
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if isinstance(input, _C.Tensor):
        target, weight = _number_operand(target, input), _number_operand(weight, input)
    return _C.multilabel_soft_margin_loss(input, target, weight, reduction)


def _number_operand(v, input):
    """A Python number as target / weight of multilabel_soft_margin_loss is a 0-d tensor that
    broadcasts: PyTorch's F.multilabel_soft_margin_loss is elementwise arithmetic on its
    arguments, so a number is taken there (its class scores all equal). A bool counts as 0 / 1
    (the op refuses bool tensors, as PyTorch's `1 - target` does); a 0-d tensor does not change
    the input's dtype (PyTorch's rule for a number), a complex one makes it complex."""
    if isinstance(v, numbers.Number) and not isinstance(v, _C.Tensor):
        return _tensor(int(v) if isinstance(v, bool) else v, device=input.device)
    return v


@export("flow.nn.functional.multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.multi_margin_loss(input, target, p, margin, weight, reduction)


@export("flow.nn.functional.multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.multilabel_margin_loss(input, target, reduction)


@export("flow.nn.functional.soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.soft_margin_loss(input, target, reduction)


@export("flow.nn.functional.poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C.poisson_nll_loss(input, target, log_input, full, eps, reduction)


@export("flow.nn.functional.gaussian_nll_loss")
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if not isinstance(var, _C.Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _C.full_like(input, var)
    return _C.gaussian_nll_loss(input, target, var, full, eps, reduction)


@export("flow.nn.functional.normalize")
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps), as PyTorch (a composition of table ops, so its
    gradient comes from the parts). As PyTorch's `Tensor.norm`: p None is 2, dim None or empty
    the whole tensor; `out` is written as the generated ops' out= (resized, cast-checked)."""
    check_optional_tensor(out, "normalize", "out", 5)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        dims = None
    else:
        dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    norm = _C.linalg_vector_norm(input, 2.0 if p is None else p, dims, True)
    r = _C.div(input, _C.clamp_min(norm, eps).expand_as(input))
    return r if out is None else _C._with_out("normalize", r, out)


@export("flow.nn.functional.triplet_margin_with_distance_loss")
def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """max(margin + d(anchor, positive) - d(anchor, negative), 0) for a distance function d
    (pairwise_distance by default); swap: d(anchor, negative) replaced by the smaller
    d(positive, negative) where it is smaller."""
    check_tensor(anchor, "triplet_margin_with_distance_loss", "anchor", 1)
    check_tensor(positive, "triplet_margin_with_distance_loss", "positive", 2)
    check_tensor(negative, "triplet_margin_with_distance_loss", "negative", 3)
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         "instead")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D "
                           "inputs")
    d = distance_function if distance_function is not None else _F.pairwise_distance
    dist_pos, dist_neg = d(anchor, positive), d(anchor, negative)
    if swap:
        dist_neg = _C.minimum(dist_neg, d(positive, negative))
    loss = (dist_pos - dist_neg + margin).clamp(min=0)
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
