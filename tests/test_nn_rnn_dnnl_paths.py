"""The lstm_layer / gru_layer ops' train= argument (Note [RNN inference forward] in
src/ops/rnn_ops.cpp): with train=False oneDNN runs its forward_inference primitive (float32,
padded batches), saving no workspace; nn.LSTM / nn.GRU pass it when no backward can follow.
Results against PyTorch; the backward of such a forward is refused by name."""
import numpy as np
import pytest
import torch

from harness import flow
from nn_util import arr, close, twins

SIZES = [4] * 6  # a padded batch: oneDNN's case


def _lstm_args(m, x):
    return (x, m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0, m.bias_hh_l0, None, None, None)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_lstm_layer_inference_forward(reverse):
    m = flow.nn.LSTM(3, 5)
    x = flow.tensor(arr(24, 3))
    trained = flow._C.lstm_layer(*_lstm_args(m, x), SIZES, reverse, True)
    inferred = flow._C.lstm_layer(*_lstm_args(m, x), SIZES, reverse, False)
    for a, b in zip(trained[:3], inferred[:3]):
        close(a.detach(), b.detach(), rtol=1e-6, atol=1e-6)
    assert trained[3].dim() == 1 and trained[3].numel() > 0  # oneDNN's training workspace
    assert tuple(inferred[3].shape) == (0,)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_gru_layer_inference_forward(reverse):
    m = flow.nn.GRU(3, 5)
    x = flow.tensor(arr(24, 3))
    args = (x, m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0, m.bias_hh_l0, None)
    trained = flow._C.gru_layer(*args, SIZES, reverse, True)
    inferred = flow._C.gru_layer(*args, SIZES, reverse, False)
    for a, b in zip(trained[:2], inferred[:2]):
        close(a.detach(), b.detach(), rtol=1e-6, atol=1e-6)
    assert tuple(inferred[2].shape) == (0,)


def test_packed_and_float64_keep_their_workspace():
    # our kernel runs these (oneDNN has no packed batches or float64) and saves its workspace
    m = flow.nn.LSTM(3, 5)
    out, h, c, ws = flow._C.lstm_layer(*_lstm_args(m, flow.randn(8, 3)), [3, 2, 2, 1], False, False)
    assert tuple(ws.shape) == (8, 6 * 5 + 5)
    md = flow.nn.LSTM(3, 5).double()
    out, h, c, ws = flow._C.lstm_layer(*_lstm_args(md, flow.randn(24, 3).double()), SIZES, False, False)
    assert tuple(ws.shape) == (24, 6 * 5 + 5)


def test_backward_of_an_inference_forward_is_refused():
    m = flow.nn.LSTM(3, 5)
    out, h, c, ws = flow._C.lstm_layer(*_lstm_args(m, flow.randn(24, 3)), SIZES, False, False)
    with pytest.raises(RuntimeError, match="lstm_layer_backward.*train=False"):
        out.sum().backward()
    g = flow.nn.GRU(3, 5)
    out, h, ws = flow._C.gru_layer(flow.randn(24, 3), g.weight_ih_l0, g.weight_hh_l0, g.bias_ih_l0,
                                   g.bias_hh_l0, None, SIZES, False, False)
    with pytest.raises(RuntimeError, match="gru_layer_backward.*train=False"):
        out.sum().backward()


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("how", ["no_grad", "frozen", "input_grad", "train"])
def test_module_against_torch(mode, how):
    """Every way a forward may or may not be differentiated gives PyTorch's results, and the
    gradients where one follows (input_grad: frozen weights, an input requiring grad)."""
    fm, tm = twins(lambda lib: getattr(lib.nn, mode)(4, 6, num_layers=2))
    if how in ("frozen", "input_grad"):
        for p in list(fm.parameters()) + list(tm.parameters()):
            p.requires_grad_(False)
    x = arr(7, 3, 4)
    xf, xt = flow.tensor(x), torch.tensor(x)
    if how == "input_grad":
        xf.requires_grad_(True)
        xt.requires_grad_(True)
    if how == "no_grad":
        with flow.no_grad():
            of = fm(xf)[0]
        with torch.no_grad():
            ot = tm(xt)[0]
    else:
        of, ot = fm(xf)[0], tm(xt)[0]
    close(of.detach(), ot.detach(), rtol=1e-5, atol=1e-5)
    assert of.requires_grad == ot.requires_grad
    if of.requires_grad:
        of.sum().backward()
        ot.sum().backward()
        if how == "input_grad":
            close(xf.grad, xt.grad, rtol=1e-5, atol=1e-5)
        else:
            named = dict(tm.named_parameters())
            for name, p in fm.named_parameters():
                close(p.grad, named[name].grad, rtol=1e-5, atol=1e-5)


def test_train_flag_follows_grad_needs():
    from oneflow.nn.modules._rnn_impl import _may_differentiate
    from oneflow.nn.modules._rnn_steps import Weights
    m = flow.nn.LSTM(3, 5)
    w = Weights("LSTM", m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0, m.bias_hh_l0, None)
    x = flow.randn(4, 3)
    assert _may_differentiate(x, w, (None, None))
    with flow.no_grad():
        assert not _may_differentiate(x.requires_grad_(True), w, (None, None))
    m.requires_grad_(False)
    assert not _may_differentiate(flow.randn(4, 3), w, (None, None))
    assert _may_differentiate(flow.randn(4, 3), w, (flow.randn(1, 5).requires_grad_(True), None))
    assert _may_differentiate(flow.randn(4, 3).requires_grad_(True), w, (None, None))
