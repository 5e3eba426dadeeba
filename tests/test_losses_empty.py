"""Every loss of nn.functional over zero-size inputs, each reduction, against PyTorch (issue 39):
the same shape and dtype, the same value (NaN where PyTorch's mean over nothing is NaN, 0 for a
sum), the same gradient shapes, or the same exception class where PyTorch refuses (ctc_loss)."""
import numpy as np
import pytest
import torch

import oneflow as flow


_LEAVES = []  # the inputs created with requires_grad by the call running now


def _t(lib, shape, kind="f", grad=False):
    g = np.random.default_rng(len(shape) + sum(shape))
    a = {"f": lambda: g.standard_normal(shape).astype(np.float32),
         "p": lambda: g.uniform(0.1, 0.9, shape).astype(np.float32),
         "l": lambda: np.zeros(shape, np.int64),
         "s": lambda: np.ones(shape, np.float32)}[kind]()
    t = lib.tensor(a)
    if grad:
        t.requires_grad_(True)
        _LEAVES.append(t)
    return t


def F(lib):
    return lib.nn.functional


# name -> call(lib, reduction): the first tensor requires grad (the one whose gradient is compared).
CASES = {
    "l1_loss": lambda lib, r: F(lib).l1_loss(_t(lib, (0, 3), grad=True), _t(lib, (0, 3)), reduction=r),
    "l1_loss 3-d": lambda lib, r: F(lib).l1_loss(_t(lib, (3, 0, 2), grad=True), _t(lib, (3, 0, 2)), reduction=r),
    "mse_loss": lambda lib, r: F(lib).mse_loss(_t(lib, (0, 3), grad=True), _t(lib, (0, 3)), reduction=r),
    "mse_loss 1-d": lambda lib, r: F(lib).mse_loss(_t(lib, (0,), grad=True), _t(lib, (0,)), reduction=r),
    "mse_loss broadcast": lambda lib, r: F(lib).mse_loss(_t(lib, (0, 3), grad=True), _t(lib, (1, 3)), reduction=r),
    "smooth_l1_loss": lambda lib, r: F(lib).smooth_l1_loss(_t(lib, (2, 0, 3), grad=True), _t(lib, (2, 0, 3)),
                                                           reduction=r, beta=0.0),
    "huber_loss": lambda lib, r: F(lib).huber_loss(_t(lib, (3, 0), grad=True), _t(lib, (3, 0)), reduction=r,
                                                   delta=0.5),
    "soft_margin_loss": lambda lib, r: F(lib).soft_margin_loss(_t(lib, (0, 3), grad=True), _t(lib, (0, 3), "s"),
                                                               reduction=r),
    "kl_div": lambda lib, r: F(lib).kl_div(_t(lib, (0, 3), grad=True), _t(lib, (0, 3), "p"), reduction=r),
    "kl_div log_target": lambda lib, r: F(lib).kl_div(_t(lib, (0, 3), grad=True), _t(lib, (0, 3)), reduction=r,
                                                      log_target=True),
    "binary_cross_entropy": lambda lib, r: F(lib).binary_cross_entropy(
        _t(lib, (0, 3), "p", grad=True), _t(lib, (0, 3), "p"), weight=_t(lib, (3,), "p"), reduction=r),
    "binary_cross_entropy_with_logits": lambda lib, r: F(lib).binary_cross_entropy_with_logits(
        _t(lib, (0, 3), grad=True), _t(lib, (0, 3), "p"), pos_weight=_t(lib, (3,), "p"), reduction=r),
    "nll_loss": lambda lib, r: F(lib).nll_loss(_t(lib, (0, 3), grad=True), _t(lib, (0,), "l"), reduction=r),
    "nll_loss weight": lambda lib, r: F(lib).nll_loss(_t(lib, (0, 3), grad=True), _t(lib, (0,), "l"),
                                                      weight=_t(lib, (3,), "p"), reduction=r),
    "nll_loss 2-d": lambda lib, r: F(lib).nll_loss(_t(lib, (2, 3, 0, 2), grad=True), _t(lib, (2, 0, 2), "l"),
                                                   reduction=r),
    "cross_entropy": lambda lib, r: F(lib).cross_entropy(_t(lib, (0, 3), grad=True), _t(lib, (0,), "l"), reduction=r),
    "cross_entropy smoothing": lambda lib, r: F(lib).cross_entropy(_t(lib, (0, 3), grad=True), _t(lib, (0,), "l"),
                                                                   reduction=r, label_smoothing=0.1),
    "cross_entropy 3-d": lambda lib, r: F(lib).cross_entropy(_t(lib, (2, 3, 0), grad=True), _t(lib, (2, 0), "l"),
                                                             reduction=r),
    "cross_entropy probs": lambda lib, r: F(lib).cross_entropy(_t(lib, (0, 3), grad=True), _t(lib, (0, 3), "p"),
                                                               reduction=r),
    "cross_entropy probs 3-d": lambda lib, r: F(lib).cross_entropy(_t(lib, (2, 3, 0), grad=True),
                                                                   _t(lib, (2, 3, 0), "p"), reduction=r),
    "cross_entropy probs, no classes": lambda lib, r: F(lib).cross_entropy(_t(lib, (2, 0), grad=True),
                                                                           _t(lib, (2, 0), "p"), reduction=r),
    "poisson_nll_loss": lambda lib, r: F(lib).poisson_nll_loss(_t(lib, (0, 3), grad=True), _t(lib, (0, 3), "p"),
                                                               reduction=r),
    "poisson_nll_loss full": lambda lib, r: F(lib).poisson_nll_loss(_t(lib, (0, 3), grad=True), _t(lib, (0, 3), "p"),
                                                                    log_input=False, full=True, reduction=r),
    "gaussian_nll_loss": lambda lib, r: F(lib).gaussian_nll_loss(_t(lib, (0, 3), grad=True), _t(lib, (0, 3)),
                                                                 _t(lib, (0, 1), "p"), reduction=r),
    "margin_ranking_loss": lambda lib, r: F(lib).margin_ranking_loss(_t(lib, (0,), grad=True), _t(lib, (0,)),
                                                                     _t(lib, (0,), "s"), reduction=r),
    "cosine_embedding_loss": lambda lib, r: F(lib).cosine_embedding_loss(_t(lib, (0, 3), grad=True), _t(lib, (0, 3)),
                                                                         _t(lib, (0,), "s"), reduction=r),
    "hinge_embedding_loss": lambda lib, r: F(lib).hinge_embedding_loss(_t(lib, (0,), grad=True), _t(lib, (0,), "s"),
                                                                       reduction=r),
    "multi_margin_loss": lambda lib, r: F(lib).multi_margin_loss(_t(lib, (0, 3), grad=True), _t(lib, (0,), "l"),
                                                                 reduction=r),
    "multilabel_margin_loss": lambda lib, r: F(lib).multilabel_margin_loss(_t(lib, (0, 3), grad=True),
                                                                           _t(lib, (0, 3), "l"), reduction=r),
    "multilabel_soft_margin_loss": lambda lib, r: F(lib).multilabel_soft_margin_loss(
        _t(lib, (0, 3), grad=True), _t(lib, (0, 3), "p"), weight=_t(lib, (3,), "p"), reduction=r),
    "triplet_margin_loss": lambda lib, r: F(lib).triplet_margin_loss(_t(lib, (0, 3), grad=True), _t(lib, (0, 3)),
                                                                     _t(lib, (0, 3)), reduction=r),
    "triplet_margin_loss no features": lambda lib, r: F(lib).triplet_margin_loss(
        _t(lib, (2, 0), grad=True), _t(lib, (2, 0)), _t(lib, (2, 0)), reduction=r),
    "triplet_margin_with_distance_loss": lambda lib, r: F(lib).triplet_margin_with_distance_loss(
        _t(lib, (0, 3), grad=True), _t(lib, (0, 3)), _t(lib, (0, 3)), reduction=r),
    "ctc_loss empty batch": lambda lib, r: F(lib).ctc_loss(
        _t(lib, (5, 0, 4), grad=True), _t(lib, (0, 3), "l") + 1, lib.tensor([], dtype=lib.int64),
        lib.tensor([], dtype=lib.int64), reduction=r),
    "ctc_loss empty time": lambda lib, r: F(lib).ctc_loss(_t(lib, (0, 4), grad=True), _t(lib, (1,), "l") + 1,
                                                          lib.tensor([0]), lib.tensor([1]), reduction=r),
}
# PyTorch's mean / sum of these over an empty batch is memory it never wrote (torch.empty: a
# different value on each run); ours is the reduction's value over nothing.
UNWRITTEN = {("multi_margin_loss", "mean"): float("nan"), ("multi_margin_loss", "sum"): 0.0,
             ("multilabel_margin_loss", "mean"): float("nan"), ("multilabel_margin_loss", "sum"): 0.0}


def _outcome(lib, name, r):
    """(exception, output, gradient of the first input)."""
    _LEAVES.clear()
    try:
        out = CASES[name](lib, r)
    except Exception as e:  # noqa: BLE001 -- the class is compared with torch's
        return e, None, None
    leaf = _LEAVES[0]
    out.sum().backward()
    return None, out, leaf.grad


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_over_empty_inputs(name, reduction):
    te, tout, tgrad = _outcome(torch, name, reduction)
    fe, fout, fgrad = _outcome(flow, name, reduction)
    if te is not None:
        assert fe is not None, f"{name}: torch raises {te!r}, oneflow returns {fout}"
        assert isinstance(fe, RuntimeError) == isinstance(te, RuntimeError), (fe, te)
        return
    assert fe is None, f"{name}: oneflow raises {fe!r}"
    assert tuple(fout.shape) == tuple(tout.shape)
    assert str(fout.dtype).split(".")[-1] == str(tout.dtype).split(".")[-1]
    want = tout.detach().numpy()
    if (name, reduction) in UNWRITTEN:
        want = np.array(UNWRITTEN[(name, reduction)], np.float32)
    np.testing.assert_array_equal(fout.detach().numpy(), want)
    # backward: the first input's gradient, of its (empty) shape, as torch's
    assert fgrad is not None and tgrad is not None
    assert tuple(fgrad.shape) == tuple(tgrad.shape)
    assert str(fgrad.dtype).split(".")[-1] == str(tgrad.dtype).split(".")[-1]
