"""Bad arguments to the nn functional ops (activations, losses, dropout, embedding, padding,
resampling) raise PyTorch's exception type with a message naming the op; the framework stays
usable afterwards. Each case runs on flow and on torch (the exception class flow must raise is
torch's builtin family unless the case pins one)."""

import pytest

from harness import SHIM, builtin_exc_type, flow


def _i64(lib, *v):
    return lib.tensor(list(v), dtype=lib.int64)


class Case:
    def __init__(self, id, fn, words=(), exc=None):
        self.id, self.fn, self.words, self.exc = id, fn, words, exc


def F(lib):
    return lib.nn.functional


CASES = [
    # activations
    Case("gelu-approximate", lambda lib: F(lib).gelu(lib.zeros(3), approximate="fast"), ["gelu", "approximate"]),
    Case("hardtanh-bounds", lambda lib: F(lib).hardtanh(lib.zeros(3), 2.0, 1.0), ["hardtanh", "min_val"]),
    Case("celu-alpha0", lambda lib: F(lib).celu(lib.zeros(3), 0.0), ["celu", "alpha"]),
    Case("softshrink-negative", lambda lib: F(lib).softshrink(lib.zeros(3), -0.5), ["softshrink", "lambd"]),
    Case("prelu-channels", lambda lib: F(lib).prelu(lib.zeros(2, 4, 3), lib.zeros(3)), ["prelu", "channel"]),
    Case("prelu-weight-2d", lambda lib: F(lib).prelu(lib.zeros(2, 4), lib.zeros(2, 2)), ["prelu", "weight"]),
    Case("glu-odd", lambda lib: F(lib).glu(lib.zeros(3, 5)), ["glu", "even"]),
    Case("glu-0d", lambda lib: F(lib).glu(lib.zeros(())), ["glu"]),
    Case("rrelu-bounds", lambda lib: F(lib).rrelu(lib.zeros(3), 0.5, 0.1, True), ["rrelu", "bound"]),
    Case("elu-int", lambda lib: F(lib).elu(_i64(lib, 1, 2)), ["elu"]),
    # losses: targets
    Case("cross_entropy-target-oob", lambda lib: F(lib).cross_entropy(lib.zeros(3, 4), _i64(lib, 0, 5, 1)),
         ["cross_entropy", "target 5 is out of bounds"]),
    Case("cross_entropy-int32-target-oob",
         lambda lib: F(lib).cross_entropy(lib.zeros(3, 4), lib.tensor([0, 4, 1], dtype=lib.int32).long()
                                          if lib.__name__ == "torch" else lib.tensor([0, 4, 1], dtype=lib.int32)),
         ["cross_entropy", "out of bounds"]),
    Case("nll_loss-target-oob", lambda lib: F(lib).nll_loss(lib.zeros(3, 4), _i64(lib, 0, -3, 1)),
         ["nll_loss", "target -3 is out of bounds"]),
    Case("nll_loss-batch", lambda lib: F(lib).nll_loss(lib.zeros(3, 4), _i64(lib, 0, 1)),
         ["nll_loss", "batch_size"]),
    Case("nll_loss-nd-target", lambda lib: F(lib).nll_loss(lib.zeros(2, 4, 5), lib.zeros(2, 6, dtype=lib.int64)),
         ["nll_loss", "target size"]),
    Case("nll_loss-weight", lambda lib: F(lib).nll_loss(lib.zeros(3, 4), _i64(lib, 0, 1, 2), lib.ones(3)),
         ["nll_loss", "weight"]),
    Case("nll_loss-float-target", lambda lib: F(lib).nll_loss(lib.zeros(3, 4), lib.zeros(3)), ["nll_loss", "target"]),
    Case("nll_loss-0d", lambda lib: F(lib).nll_loss(lib.zeros(()), lib.zeros((), dtype=lib.int64)),
         ["nll_loss", "dimensions"]),
    Case("cross_entropy-smoothing", lambda lib: F(lib).cross_entropy(lib.zeros(3, 4), _i64(lib, 0, 1, 2),
                                                                      label_smoothing=1.5),
         ["cross_entropy", "label_smoothing"]),
    Case("cross_entropy-reduction", lambda lib: F(lib).cross_entropy(lib.zeros(3, 4), _i64(lib, 0, 1, 2),
                                                                      reduction="avg"), ["avg"]),
    Case("mse-shapes", lambda lib: F(lib).mse_loss(lib.zeros(3, 4), lib.zeros(3)), ["mse_loss"]),
    Case("bce-size", lambda lib: F(lib).binary_cross_entropy(lib.zeros(3, 4) + 0.5, lib.zeros(3)),
         ["binary_cross_entropy", "size"]),
    Case("bce-range", lambda lib: F(lib).binary_cross_entropy(lib.ones(3) * 2, lib.zeros(3)),
         ["binary_cross_entropy", "between 0 and 1"]),
    Case("bce-logits-size", lambda lib: F(lib).binary_cross_entropy_with_logits(lib.zeros(3, 4), lib.zeros(4)),
         ["binary_cross_entropy_with_logits", "size"]),
    Case("smooth_l1-beta", lambda lib: F(lib).smooth_l1_loss(lib.zeros(3), lib.zeros(3), beta=-1.0),
         ["smooth_l1_loss", "beta"]),
    Case("huber-delta", lambda lib: F(lib).huber_loss(lib.zeros(3), lib.zeros(3), delta=0.0), ["huber_loss", "delta"]),
    Case("margin_ranking-dims", lambda lib: F(lib).margin_ranking_loss(lib.zeros(3), lib.zeros(3, 1), lib.zeros(3)),
         ["margin_ranking_loss"]),
    Case("multi_margin-p", lambda lib: F(lib).multi_margin_loss(lib.zeros(3, 4), _i64(lib, 0, 1, 2), p=3),
         ["multi_margin_loss", "p == 1 and p == 2"]),
    Case("multi_margin-target", lambda lib: F(lib).multi_margin_loss(lib.zeros(3, 4), _i64(lib, 0, 4, 1)),
         ["multi_margin_loss", "target"]),
    Case("multilabel_margin-shape",
         lambda lib: F(lib).multilabel_margin_loss(lib.zeros(3, 4), lib.zeros(3, 3, dtype=lib.int64)),
         ["multilabel_margin_loss", "target"]),
    Case("ctc-input-length", lambda lib: F(lib).ctc_loss(lib.zeros(4, 2, 3), _i64(lib, 1, 2, 1, 1).reshape(2, 2),
                                                         _i64(lib, 5, 4), _i64(lib, 2, 2)),
         ["ctc_loss", "input_lengths"]),
    Case("triplet-dims", lambda lib: F(lib).triplet_margin_loss(lib.zeros(3, 4), lib.zeros(4), lib.zeros(3, 4)),
         ["triplet_margin_loss", "dimensions"]),
    Case("gaussian-var-negative",
         lambda lib: F(lib).gaussian_nll_loss(lib.zeros(3, 4), lib.zeros(3, 4), -lib.ones(3, 4)),
         ["gaussian_nll_loss", "negative"]),
    Case("cosine_similarity-dim", lambda lib: F(lib).cosine_similarity(lib.zeros(3, 4), lib.zeros(3, 4), dim=2),
         ["cosine_similarity", "dimension"]),
    # dropout
    Case("dropout-p", lambda lib: F(lib).dropout(lib.zeros(3), p=1.5), ["dropout", "probability"]),
    Case("dropout1d-dims", lambda lib: F(lib).dropout1d(lib.zeros(2, 3, 4, 5)), ["dropout1d"]),
    # embedding
    Case("embedding-index", lambda lib: F(lib).embedding(_i64(lib, 0, 7), lib.zeros(5, 3)),
         ["embedding", "index out of range"]),
    Case("embedding-float-index", lambda lib: F(lib).embedding(lib.zeros(2), lib.zeros(5, 3)), ["embedding"]),
    Case("embedding-padding_idx", lambda lib: F(lib).embedding(_i64(lib, 0, 1), lib.zeros(5, 3), padding_idx=7),
         ["padding_idx"], exc=(ValueError, AssertionError)),
    Case("embedding_bag-offsets0", lambda lib: F(lib).embedding_bag(_i64(lib, 0, 1, 2), lib.zeros(5, 3),
                                                                    _i64(lib, 1)), ["embedding_bag", "offsets"]),
    Case("embedding_bag-2d-offsets", lambda lib: F(lib).embedding_bag(_i64(lib, 0, 1).reshape(1, 2), lib.zeros(5, 3),
                                                                      _i64(lib, 0)), ["offsets"]),
    Case("one_hot-class", lambda lib: F(lib).one_hot(_i64(lib, 0, 4), 3), ["one_hot", "num_classes"]),
    Case("one_hot-negative", lambda lib: F(lib).one_hot(_i64(lib, 0, -1)), ["one_hot", "non-negative"]),
    # padding
    Case("pad-odd", lambda lib: F(lib).pad(lib.zeros(2, 3), (1,)), ["pad", "divisible by 2"]),
    Case("pad-too-long", lambda lib: F(lib).pad(lib.zeros(2, 3), (1, 1, 1, 1, 1, 1)), ["pad", "padding length"]),
    Case("pad-reflect-size", lambda lib: F(lib).pad(lib.zeros(1, 2, 3), (3, 3), mode="reflect"),
         ["pad", "padding size"]),
    Case("pad-reflect-dims", lambda lib: F(lib).pad(lib.zeros(3), (1, 1), mode="reflect"), ["pad", "not supported"]),
    Case("pad-mode", lambda lib: F(lib).pad(lib.zeros(1, 2, 3), (1, 1), mode="wrap"), ["pad", "wrap"]),
    Case("pad-value-mode", lambda lib: F(lib).pad(lib.zeros(1, 2, 3), (1, 1), mode="reflect", value=1.0),
         ["pad", "value"]),
    Case("pad-negative-size", lambda lib: F(lib).pad(lib.zeros(1, 2, 3), (-2, -2)), ["pad"]),
    # resampling
    Case("interpolate-both", lambda lib: F(lib).interpolate(lib.zeros(1, 1, 4, 4), size=2, scale_factor=2),
         ["interpolate", "only one of size or scale_factor"]),
    Case("interpolate-neither", lambda lib: F(lib).interpolate(lib.zeros(1, 1, 4, 4)), ["interpolate"]),
    Case("interpolate-align", lambda lib: F(lib).interpolate(lib.zeros(1, 1, 4, 4), scale_factor=2,
                                                             align_corners=True), ["interpolate", "align_corners"]),
    Case("interpolate-size-len", lambda lib: F(lib).interpolate(lib.zeros(1, 1, 4, 4), size=(2, 2, 2)),
         ["interpolate", "spatial dimensions"]),
    Case("interpolate-bilinear-3d", lambda lib: F(lib).interpolate(lib.zeros(1, 1, 4), scale_factor=2,
                                                                   mode="bilinear"), ["interpolate", "4d"]),
    Case("interpolate-zero", lambda lib: F(lib).interpolate(lib.zeros(1, 1, 4, 4), scale_factor=0.1),
         ["interpolate", "greater than 0"]),
    Case("pixel_shuffle-channels", lambda lib: F(lib).pixel_shuffle(lib.zeros(1, 6, 2, 2), 2),
         ["pixel_shuffle", "divisible"]),
    Case("unfold-blocks", lambda lib: F(lib).unfold(lib.zeros(1, 1, 2, 2), 3), ["im2col", "sliding blocks"]),
    Case("fold-channels", lambda lib: F(lib).fold(lib.zeros(1, 5, 4), (3, 3), 2), ["col2im", "divisible"]),
]


def test_ctc_label_out_of_range():
    """torch's CPU kernel reads past the class dim without a check; flow refuses."""
    lp = flow.zeros(6, 2, 4).log_softmax(2)
    targets = flow.tensor([[1, 2, 4], [1, 3, 0]])
    with pytest.raises(IndexError, match="ctc_loss.*Target 4 is out of bounds"):
        F(flow).ctc_loss(lp, targets, [6, 6], [3, 2])


def _torch_outcome(case):
    import torch

    try:
        case.fn(torch)
    except Exception as e:  # noqa: BLE001
        return e
    return None


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_error(case):
    t_err = _torch_outcome(case)
    assert t_err is not None, f"harness: torch does not raise for {case.id}"
    want = case.exc or builtin_exc_type(t_err)
    with pytest.raises(want) as info:
        case.fn(flow)
    msg = str(info.value)
    assert msg.strip(), "empty error message"
    if not SHIM:
        for w in case.words:
            assert w in msg.lower(), f"message does not name {w!r}: {msg!r}"
    x = flow.ones(2, 3)
    assert float((x + 1).sum().item()) == 12.0


def test_oob_target_raises_before_writing():
    """A target out of range is found before any kernel runs: no output, the inputs intact."""
    x = flow.zeros(3, 4, requires_grad=True)
    with pytest.raises(IndexError, match="Target 9 is out of bounds"):
        flow.nn.functional.cross_entropy(x, flow.tensor([0, 9, 1], dtype=flow.int32))
    assert x.grad is None and float(x.sum().item()) == 0.0


def test_weight_requiring_grad_refused_like_torch():
    w = flow.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        flow.nn.functional.cross_entropy(flow.zeros(3, 4), flow.tensor([0, 1, 2]), weight=w)
    with flow.no_grad():
        flow.nn.functional.cross_entropy(flow.zeros(3, 4), flow.tensor([0, 1, 2]), weight=w)
