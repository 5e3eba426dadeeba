"""Recurrent layers against torch: RNN (tanh / relu), LSTM (incl. proj_size), GRU and the cells
(every option: layers, bias, batch_first, bidirectional, dropout, unbatched input, initial
states, packed sequences), their gradients (input, initial states, every parameter),
state_dict, repr, default init and errors. nn.utils.rnn: test_nn_rnn_utils.py."""
import math
import warnings

import numpy as np
import pytest
import torch

from harness import flow
from error_cases import raises_like_torch
from nn_util import arr, close, leaf_pair, packed_pair, torch_repr, twins

TOL = dict(rtol=1e-5, atol=1e-5)


def _mode_builder(mode, *args, **kwargs):
    """(lib -> module): mode is RNN / RNN_relu / LSTM / GRU."""
    if mode == "RNN_relu":
        kwargs["nonlinearity"] = "relu"
        mode = "RNN"
    return lambda lib: getattr(lib.nn, mode)(*args, **kwargs)


def _state_shapes(mode, layers_dirs, batch, hidden, proj=0):
    """Shapes of h0 (and c0) for a batch (batch None = unbatched)."""
    lead = (layers_dirs,) if batch is None else (layers_dirs, batch)
    h = lead + (proj or hidden,)
    return [h, lead + (hidden,)] if mode == "LSTM" else [h]


def _flat(result):
    """(output, h) or (output, (h, c)) -> list of tensors."""
    out, hidden = result
    return [out] + (list(hidden) if isinstance(hidden, tuple) else [hidden])


def run_pair(fm, tm, x, states=None, rtol=1e-5, atol=1e-5, check_grads=True):
    """Runs both modules on x (numpy) and optional initial states (numpy list); compares every
    output, then the gradients of x, of the states and of every parameter."""
    xf, xt = leaf_pair(x)
    sf = st = None
    if states is not None:
        pairs = [leaf_pair(s) for s in states]
        sf = [p[0] for p in pairs]
        st = [p[1] for p in pairs]
    lstm = isinstance(tm, (torch.nn.LSTM, torch.nn.LSTMCell))

    def call(m, inp, s):
        if s is None:
            return m(inp)
        return m(inp, tuple(s) if lstm else s[0])

    rf, rt = call(fm, xf, sf), call(tm, xt, st)
    outs_f = _flat(rf) if isinstance(rf, tuple) else [rf]
    outs_t = _flat(rt) if isinstance(rt, tuple) else [rt]
    if isinstance(tm, torch.nn.LSTMCell):
        outs_f, outs_t = list(rf), list(rt)
    assert len(outs_f) == len(outs_t)
    for a, b in zip(outs_f, outs_t):
        close(a, b, rtol, atol)
    if not check_grads:
        return
    loss_f, loss_t = 0, 0
    for a, b in zip(outs_f, outs_t):
        w = arr(*b.shape)
        loss_f = loss_f + (a * flow.tensor(w)).sum()
        loss_t = loss_t + (b * torch.tensor(w)).sum()
    loss_f.backward()
    loss_t.backward()
    close(xf.grad, xt.grad, rtol, atol)
    if states is not None:
        for a, b in zip(sf, st):
            close(a.grad, b.grad, rtol, atol)
    named_t = dict(tm.named_parameters())
    for name, p in fm.named_parameters():
        assert p.grad is not None, f"{name} got no grad"
        close(p.grad, named_t[name].grad, rtol, atol)


MODES = ["RNN", "RNN_relu", "LSTM", "GRU"]
CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(bias=False),
    dict(batch_first=True),
    dict(bidirectional=True),
    dict(num_layers=2, bidirectional=True, batch_first=True),
    dict(num_layers=3, bias=False, bidirectional=True),
]


def _cfg_id(cfg):
    return "-".join(f"{k}={v}" for k, v in cfg.items()) or "default"


def _input(cfg, seq=5, batch=3, features=4, dtype=np.float32):
    shape = (batch, seq, features) if cfg.get("batch_first") else (seq, batch, features)
    return arr(*shape, dtype=dtype)


@pytest.mark.parametrize("cfg", CONFIGS, ids=_cfg_id)
@pytest.mark.parametrize("mode", MODES)
def test_forward_backward(mode, cfg):
    fm, tm = twins(_mode_builder(mode, 4, 6, **cfg))
    run_pair(fm, tm, _input(cfg))


@pytest.mark.parametrize("cfg", CONFIGS, ids=_cfg_id)
@pytest.mark.parametrize("mode", MODES)
def test_given_initial_state(mode, cfg):
    fm, tm = twins(_mode_builder(mode, 4, 6, **cfg))
    ld = cfg.get("num_layers", 1) * (2 if cfg.get("bidirectional") else 1)
    states = [arr(*s) for s in _state_shapes(mode, ld, 3, 6)]
    run_pair(fm, tm, _input(cfg), states)


@pytest.mark.parametrize("cfg", [dict(), dict(num_layers=2), dict(bidirectional=True),
                                 dict(num_layers=2, bidirectional=True, bias=False,
                                      batch_first=True)], ids=_cfg_id)
@pytest.mark.parametrize("given", [False, True])
def test_lstm_proj_size(cfg, given):
    fm, tm = twins(lambda lib: lib.nn.LSTM(4, 6, proj_size=3, **cfg))
    ld = cfg.get("num_layers", 1) * (2 if cfg.get("bidirectional") else 1)
    states = [arr(*s) for s in _state_shapes("LSTM", ld, 3, 6, proj=3)] if given else None
    run_pair(fm, tm, _input(cfg), states)
    assert tuple(fm.weight_hr_l0.shape) == (3, 6) and tuple(fm.weight_hh_l0.shape) == (24, 3)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cfg", [dict(), dict(batch_first=True),
                                 dict(num_layers=2, bidirectional=True)], ids=_cfg_id)
@pytest.mark.parametrize("given", [False, True])
def test_unbatched_input(mode, cfg, given):
    fm, tm = twins(_mode_builder(mode, 4, 5, **cfg))
    ld = cfg.get("num_layers", 1) * (2 if cfg.get("bidirectional") else 1)
    states = [arr(*s) for s in _state_shapes(mode, ld, None, 5)] if given else None
    run_pair(fm, tm, arr(7, 4), states)
    out, _ = fm(flow.tensor(arr(7, 4)))
    assert tuple(out.shape) == (7, 5 * (2 if cfg.get("bidirectional") else 1))


def test_lstm_unbatched_proj():
    fm, tm = twins(lambda lib: lib.nn.LSTM(4, 5, proj_size=2, num_layers=2))
    run_pair(fm, tm, arr(6, 4), [arr(2, 2), arr(2, 5)])


@pytest.mark.parametrize("mode", MODES)
def test_float64(mode):
    fm, tm = twins(_mode_builder(mode, 4, 6, num_layers=2, bidirectional=True))
    fm, tm = fm.double(), tm.double()
    assert all(p.dtype == flow.float64 for p in fm.parameters())
    ld = 4
    states = [arr(*s, dtype=np.float64) for s in _state_shapes(mode, ld, 3, 6)]
    run_pair(fm, tm, _input({}, dtype=np.float64), states, rtol=1e-12, atol=1e-12)


def test_dtype_keyword():
    m = flow.nn.LSTM(3, 4, dtype=flow.float64)
    assert all(p.dtype == flow.float64 for p in m.parameters())
    out, (h, c) = m(flow.tensor(arr(2, 1, 3, dtype=np.float64)))
    assert out.dtype == h.dtype == c.dtype == flow.float64


@pytest.mark.parametrize("mode", MODES)
def test_long_sequence(mode):
    # 200 steps, two layers: rounding differences of the two libraries go through the whole
    # recurrence (forward and backward) and stay within the float32 tolerance.
    fm, tm = twins(_mode_builder(mode, 8, 16, num_layers=2))
    run_pair(fm, tm, arr(200, 2, 8), rtol=1e-5, atol=1e-5)


def test_outputs_shapes_and_last_step():
    m = flow.nn.LSTM(4, 6, num_layers=2, bidirectional=True)
    out, (h, c) = m(flow.tensor(arr(5, 3, 4)))
    assert tuple(out.shape) == (5, 3, 12) and tuple(h.shape) == (4, 3, 6)
    assert tuple(c.shape) == (4, 3, 6)
    # forward half of the last step = h of the last layer's forward direction; reverse half of
    # step 0 = h of its reverse direction
    close(out[-1, :, :6], h[2].numpy())
    close(out[0, :, 6:], h[3].numpy())


# ---------------------------------------------------------------------------
# Dropout between layers


@pytest.mark.parametrize("mode", MODES)
def test_dropout_eval_matches_torch(mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm, tm = twins(_mode_builder(mode, 4, 6, num_layers=3, dropout=0.5))
    fm.eval()
    tm.eval()
    run_pair(fm, tm, _input({}))


@pytest.mark.parametrize("mode", MODES)
def test_dropout_one_in_training_zeroes_layer_inputs(mode):
    # p = 1 drops everything: layer 2 then sees zeros, deterministically, as in torch.
    fm, tm = twins(_mode_builder(mode, 4, 6, num_layers=2, dropout=1.0))
    fm.train()
    tm.train()
    run_pair(fm, tm, _input({}))


def test_dropout_training_is_random_and_scaled():
    flow.manual_seed(0)
    m = flow.nn.RNN(4, 64, num_layers=2, dropout=0.5)
    x = flow.tensor(arr(3, 8, 4))
    m.eval()
    ref, _ = m(x)
    m.train()
    a, _ = m(x)
    b, _ = m(x)
    assert not np.allclose(a.numpy(), ref.numpy())
    assert not np.allclose(a.numpy(), b.numpy())
    # one layer: no dropout is applied at all, even in training
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last"):
        one = flow.nn.GRU(4, 8, dropout=0.5)
    one.train()
    o1, _ = one(x)
    o2, _ = one(x)
    close(o1, o2.numpy(), 0, 0)


def test_dropout_mask_statistics():
    # Layer 1 output h, dropped with p: the second layer's input projection sees h * mask / (1-p).
    # With W_ih of layer 2 = identity-like rows and W_hh = 0 and tanh, the zero fraction of
    # the dropped inputs shows through: tanh(0 + b) = tanh(b) with b = 0.
    flow.manual_seed(1)
    m = flow.nn.RNN(8, 32, num_layers=2, dropout=0.25, nonlinearity="relu")
    with flow.no_grad():
        m.weight_ih_l1.copy_(flow.eye(32))
        m.weight_hh_l1.zero_()
        m.bias_ih_l1.zero_()
        m.bias_hh_l1.zero_()
        m.weight_hh_l0.zero_()
        m.bias_ih_l0.fill_(1.0)  # layer 1 outputs relu(x W^T + 1) > 0 almost everywhere
        m.bias_hh_l0.zero_()
    m.train()
    x = flow.tensor(arr(50, 40, 8) * 0.1)
    out, _ = m(x)
    m.eval()
    ref, _ = m(x)
    o, r = out.numpy(), ref.numpy()
    kept = o != 0
    assert abs(1 - kept.mean() - 0.25) < 0.02
    np.testing.assert_allclose(o[kept], r[kept] / 0.75, rtol=1e-5)


# ---------------------------------------------------------------------------
# Packed sequences


PACKED_CFGS = [dict(), dict(num_layers=2), dict(bidirectional=True),
               dict(num_layers=2, bidirectional=True, bias=False)]


@pytest.mark.parametrize("cfg", PACKED_CFGS, ids=_cfg_id)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sorted_", [True, False], ids=["sorted", "unsorted"])
@pytest.mark.parametrize("given", [False, True], ids=["no_h0", "h0"])
def test_packed_sequence(mode, cfg, sorted_, given):
    fm, tm = twins(_mode_builder(mode, 4, 5, **cfg))
    lengths = [6, 4, 4, 2, 1] if sorted_ else [2, 6, 1, 4, 4]
    x = arr(6, 5, 4)
    xf, xt, pf, pt = packed_pair(x, lengths, sorted_)
    ld = cfg.get("num_layers", 1) * (2 if cfg.get("bidirectional") else 1)
    lstm = mode == "LSTM"
    if given:
        pairs = [leaf_pair(arr(*s)) for s in _state_shapes(mode, ld, 5, 5)]
        sf = tuple(p[0] for p in pairs)
        st = tuple(p[1] for p in pairs)
        of, hf = fm(pf, sf if lstm else sf[0])
        ot, ht = tm(pt, st if lstm else st[0])
    else:
        of, hf = fm(pf)
        ot, ht = tm(pt)
    assert isinstance(of, flow.nn.utils.rnn.PackedSequence)
    close(of.data, ot.data, **TOL)
    assert of.batch_sizes.tolist() == ot.batch_sizes.tolist()
    hf = list(hf) if lstm else [hf]
    ht = list(ht) if lstm else [ht]
    for a, b in zip(hf, ht):
        close(a, b, **TOL)
    # padded views agree too, and gradients reach x, the states and every parameter
    pad_f, len_f = flow.nn.utils.rnn.pad_packed_sequence(of)
    pad_t, len_t = torch.nn.utils.rnn.pad_packed_sequence(ot)
    close(pad_f, pad_t, **TOL)
    assert len_f.tolist() == len_t.tolist() == lengths
    w = arr(*pad_t.shape)
    loss_f = (pad_f * flow.tensor(w)).sum() + sum((h * h).sum() for h in hf)
    loss_t = (pad_t * torch.tensor(w)).sum() + sum((h * h).sum() for h in ht)
    loss_f.backward()
    loss_t.backward()
    close(xf.grad, xt.grad, **TOL)
    if given:
        for a, b in zip(sf, st):
            close(a.grad, b.grad, **TOL)
    named_t = dict(tm.named_parameters())
    for name, p in fm.named_parameters():
        close(p.grad, named_t[name].grad, **TOL)


def test_packed_lstm_proj_batch_first():
    fm, tm = twins(lambda lib: lib.nn.LSTM(4, 6, proj_size=2, batch_first=True,
                                           bidirectional=True))
    x = arr(4, 5, 4)
    lengths = [3, 5, 1, 5]
    xf, xt, pf, pt = packed_pair(x, lengths, False, batch_first=True)
    of, (hf, cf) = fm(pf)
    ot, (ht, ct) = tm(pt)
    close(of.data, ot.data, **TOL)
    close(hf, ht, **TOL)
    close(cf, ct, **TOL)
    pf2, _ = flow.nn.utils.rnn.pad_packed_sequence(of, batch_first=True)
    pt2, _ = torch.nn.utils.rnn.pad_packed_sequence(ot, batch_first=True)
    close(pf2, pt2, **TOL)
    pf2.sum().backward()
    pt2.sum().backward()
    close(xf.grad, xt.grad, **TOL)


def test_packed_equal_lengths_matches_padded():
    m = flow.nn.GRU(3, 4, bidirectional=True)
    x = flow.tensor(arr(5, 2, 3))
    packed = flow.nn.utils.rnn.pack_padded_sequence(x, [5, 5])
    po, ph = m(packed)
    o, h = m(x)
    close(po.data, o.numpy().reshape(10, 8), 1e-6, 1e-7)
    close(ph, h.numpy(), 1e-6, 1e-7)


# ---------------------------------------------------------------------------
# Cells


CELLS = [
    ("RNNCell", dict()), ("RNNCell", dict(nonlinearity="relu")), ("RNNCell", dict(bias=False)),
    ("LSTMCell", dict()), ("LSTMCell", dict(bias=False)), ("GRUCell", dict()),
    ("GRUCell", dict(bias=False)),
]


@pytest.mark.parametrize("name,kw", CELLS, ids=[f"{n}-{_cfg_id(k)}" for n, k in CELLS])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("given", [False, True])
def test_cells(name, kw, batched, given):
    fm, tm = twins(lambda lib: getattr(lib.nn, name)(4, 5, **kw))
    x = arr(3, 4) if batched else arr(4)
    shape = (3, 5) if batched else (5,)
    states = None
    if given:
        states = [arr(*shape), arr(*shape)] if name == "LSTMCell" else [arr(*shape)]
    run_pair(fm, tm, x, states)


def test_cell_unrolled_equals_layer():
    cell = flow.nn.LSTMCell(3, 4)
    layer = flow.nn.LSTM(3, 4)
    layer.load_state_dict({k + "_l0": v for k, v in cell.state_dict().items()})
    x = flow.tensor(arr(6, 2, 3))
    h = c = flow.zeros(2, 4)
    outs = []
    for t in range(6):
        h, c = cell(x[t], (h, c))
        outs.append(h)
    out, (hn, cn) = layer(x)
    close(flow.stack(outs), out.numpy(), 1e-6, 1e-7)
    close(hn[0], h.numpy(), 1e-6, 1e-7)
    close(cn[0], c.numpy(), 1e-6, 1e-7)


def test_cell_float64():
    fm, tm = twins(lambda lib: lib.nn.GRUCell(4, 5))
    fm, tm = fm.double(), tm.double()
    run_pair(fm, tm, arr(3, 4, dtype=np.float64), [arr(3, 5, dtype=np.float64)],
             rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------
# Parameters, state_dict, repr, init


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.LSTM(4, 6, num_layers=2, bidirectional=True, proj_size=3),
    lambda lib: lib.nn.GRU(4, 6, num_layers=2, bias=False),
    lambda lib: lib.nn.RNN(4, 6, nonlinearity="relu", bidirectional=True),
    lambda lib: lib.nn.LSTMCell(4, 6),
    lambda lib: lib.nn.GRUCell(4, 6, bias=False),
])
def test_parameters_and_state_dict(build):
    fm, tm = build(flow), build(torch)
    assert [(n, tuple(p.shape)) for n, p in fm.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert list(fm.state_dict()) == list(tm.state_dict())
    assert all(type(p) is flow.nn.Parameter and p.requires_grad for p in fm.parameters())
    # torch -> flow -> torch round trip
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    for k, v in fm.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), tm.state_dict()[k].numpy())
    fm2 = build(flow)
    fm2.load_state_dict(fm.state_dict())
    for (k, a), (_, b) in zip(fm.state_dict().items(), fm2.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_all_weights_and_flatten_parameters():
    fm, tm = flow.nn.LSTM(3, 4, num_layers=2, bidirectional=True), torch.nn.LSTM(
        3, 4, num_layers=2, bidirectional=True)
    assert fm._flat_weights_names == tm._flat_weights_names
    assert fm._all_weights == tm._all_weights
    assert [[tuple(w.shape) for w in ws] for ws in fm.all_weights] == [
        [tuple(w.shape) for w in ws] for ws in tm.all_weights]
    assert fm.all_weights[1][0] is fm.weight_ih_l0_reverse
    assert fm.flatten_parameters() is None


@pytest.mark.parametrize("name", ["LSTM", "LSTMCell", "GRU"])
def test_inplace_weight_updates_are_seen(name):
    # every kind of parameter change reaches the next forward
    fm, tm = twins(lambda lib: getattr(lib.nn, name)(3, 4))
    x = arr(5, 2, 3) if name != "LSTMCell" else arr(2, 3)

    def compare():
        with flow.no_grad():
            of = fm(flow.tensor(x))
        with torch.no_grad():
            ot = tm(torch.tensor(x))
        of = _flat(of) if name != "LSTMCell" else list(of)
        ot = _flat(ot) if name != "LSTMCell" else list(ot)
        for a, b in zip(of, ot):
            close(a, b, **TOL)

    compare()
    w_hh = "weight_hh" if name.endswith("Cell") else "weight_hh_l0"
    w_ih = "weight_ih" if name.endswith("Cell") else "weight_ih_l0"
    b_ih = "bias_ih" if name.endswith("Cell") else "bias_ih_l0"
    for lib, m in ((flow, fm), (torch, tm)):  # in place
        with lib.no_grad():
            getattr(m, w_hh).mul_(1.5)
            getattr(m, b_ih).add_(0.25)
    compare()
    delta = arr(*tuple(getattr(tm, w_ih).shape))
    for lib, m in ((flow, fm), (torch, tm)):  # through .data
        getattr(m, w_ih).data = getattr(m, w_ih).data + lib.tensor(delta)
    compare()
    new = arr(*tuple(getattr(tm, w_hh).shape))
    fm.load_state_dict({**fm.state_dict(), w_hh: flow.tensor(new)})
    tm.load_state_dict({**tm.state_dict(), w_hh: torch.tensor(new)})
    compare()
    setattr(fm, w_hh, flow.nn.Parameter(flow.tensor(new * 2)))
    setattr(tm, w_hh, torch.nn.Parameter(torch.tensor(new * 2)))
    compare()


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_training_steps_match_torch(mode):
    fm, tm = twins(_mode_builder(mode, 4, 6, num_layers=2, bidirectional=True, batch_first=True))
    of = flow.optim.SGD(fm.parameters(), lr=0.5, momentum=0.9, weight_decay=0.01)
    ot = torch.optim.SGD(tm.parameters(), lr=0.5, momentum=0.9, weight_decay=0.01)
    for step in range(4):
        x, target = arr(3, 7, 4), arr(3, 7, 12)
        lf = ((fm(flow.tensor(x))[0] - flow.tensor(target)) ** 2).mean()
        lt = ((tm(torch.tensor(x))[0] - torch.tensor(target)) ** 2).mean()
        close(lf, lt.detach(), 1e-5, 1e-6)
        of.zero_grad()
        ot.zero_grad()
        lf.backward()
        lt.backward()
        of.step()
        ot.step()
    for (n, a), (_, b) in zip(fm.named_parameters(), tm.named_parameters()):
        close(a, b, 1e-5, 1e-5)


def test_lstm_retain_graph_and_second_backward():
    m = flow.nn.LSTM(3, 4, num_layers=2)
    x = flow.tensor(arr(5, 2, 3), requires_grad=True)
    out, (h, c) = m(x)
    loss = out.sum() + (h * c).sum()
    loss.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    loss.backward()
    close(x.grad, 2 * first, 1e-6, 1e-6)
    out, _ = m(x)
    out.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.sum().backward()


@pytest.mark.parametrize("mode,kw", [
    ("LSTM", dict()), ("LSTM", dict(proj_size=2, bidirectional=True)), ("GRU", dict()),
    ("GRU", dict(bidirectional=True, bias=False)), ("RNN", dict())],
    ids=["LSTM", "LSTM-proj-bidir", "GRU", "GRU-bidir-nobias", "RNN"])
def test_double_backward(mode, kw):
    # backward with create_graph=True gives differentiable gradients (a gradient penalty)
    fm, tm = twins(_mode_builder(mode, 3, 4, num_layers=2, **kw))
    x = arr(5, 2, 3)
    xf, xt = leaf_pair(x)
    gf, = flow.autograd.grad(fm(xf)[0].pow(2).sum(), xf, create_graph=True)
    gt, = torch.autograd.grad(tm(xt)[0].pow(2).sum(), xt, create_graph=True)
    close(gf, gt.detach(), **TOL)
    (gf * gf).sum().backward()
    (gt * gt).sum().backward()
    close(xf.grad, xt.grad, **TOL)
    named_t = dict(tm.named_parameters())
    for n, p in fm.named_parameters():
        close(p.grad, named_t[n].grad, **TOL)


def test_lstm_weight_modified_before_backward():
    def run(lib):
        m = lib.nn.LSTM(3, 4)
        out, _ = m(lib.ones(5, 2, 3))
        with lib.no_grad():
            m.weight_hh_l0.add_(1)
        out.sum().backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(torch)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(flow)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which", ["input", "params", "state"])
def test_partial_requires_grad(mode, which):
    fm, tm = twins(_mode_builder(mode, 4, 5, num_layers=2))
    lstm = mode == "LSTM"
    for m in (fm, tm):
        m.requires_grad_(which == "params")
    x = arr(6, 3, 4)
    states = [arr(*s) for s in _state_shapes(mode, 2, 3, 5)]
    xf = flow.tensor(x, requires_grad=which == "input")
    xt = torch.tensor(x, requires_grad=which == "input")
    sf = [flow.tensor(s, requires_grad=which == "state") for s in states]
    st = [torch.tensor(s, requires_grad=which == "state") for s in states]
    rf = fm(xf, tuple(sf) if lstm else sf[0])
    rt = tm(xt, tuple(st) if lstm else st[0])
    hf, ht = _flat(rf)[1], _flat(rt)[1]  # only h_n: the output's gradient is zero
    (hf * hf).sum().backward()
    (ht * ht).sum().backward()
    if which == "input":
        close(xf.grad, xt.grad, **TOL)
    elif which == "state":
        for a, b in zip(sf, st):
            close(a.grad, b.grad, **TOL)
    else:
        named_t = dict(tm.named_parameters())
        for n, p in fm.named_parameters():
            close(p.grad, named_t[n].grad, **TOL)
    assert all(p.grad is None for p in fm.parameters()) == (which != "params")


def test_no_reference_cycles_through_the_graph():
    # A recurrence recorded without backward must be freed with its outputs (saved tensors
    # that were also outputs would make cycles through C++ that the GC cannot collect;
    # nanobind reports such leaks at exit).
    import subprocess
    import sys
    import textwrap
    code = textwrap.dedent("""
        import oneflow as flow
        nn = flow.nn
        layers = (nn.LSTM(3, 4, num_layers=2, bidirectional=True), nn.LSTM(3, 4, proj_size=2),
                  nn.GRU(3, 4))
        for m in layers:
            out = m(flow.randn(5, 2, 3))
            out2 = m(nn.utils.rnn.pack_padded_sequence(flow.randn(5, 2, 3), [5, 3]))
        cell = nn.LSTMCell(3, 4)(flow.randn(2, 3))
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "leaked" not in r.stderr, r.stderr[-2000:]


def test_pickle_and_deepcopy():
    import copy
    import pickle
    m = flow.nn.LSTM(3, 4, num_layers=2)
    x = flow.tensor(arr(4, 2, 3))
    with flow.no_grad():
        ref, _ = m(x)
    for m2 in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert repr(m2) == repr(m)
        with flow.no_grad():
            out, _ = m2(x)
        close(out, ref.numpy(), 0, 0)
        with flow.no_grad():
            m2.weight_hh_l0.zero_()
        with flow.no_grad():
            changed, _ = m2(x)
        assert not np.allclose(changed.numpy(), ref.numpy())
    with flow.no_grad():
        again, _ = m(x)
    close(again, ref.numpy(), 0, 0)


def test_replaced_parameter_is_used():
    m = flow.nn.RNN(2, 3)
    x = flow.tensor(arr(4, 1, 2))
    m.weight_hh_l0 = flow.nn.Parameter(flow.zeros(3, 3))
    m.weight_ih_l0 = flow.nn.Parameter(flow.zeros(3, 2))
    out, _ = m(x)
    expected = np.tanh((m.bias_ih_l0 + m.bias_hh_l0).numpy())
    close(out, np.broadcast_to(expected, (4, 1, 3)), 1e-6, 1e-7)


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.RNN(10, 20),
    lambda lib: lib.nn.RNN(10, 20, 2, "relu", False, True, 0.5, True),
    lambda lib: lib.nn.LSTM(10, 20, 2, proj_size=5, bidirectional=True, dropout=0.25,
                            batch_first=True, bias=False),
    lambda lib: lib.nn.GRU(3, 4),
    lambda lib: lib.nn.GRU(3, 4, num_layers=3, dropout=0.1),
    lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="relu"),
    lambda lib: lib.nn.RNNCell(3, 4, bias=False),
    lambda lib: lib.nn.LSTMCell(3, 4, bias=False),
    lambda lib: lib.nn.GRUCell(3, 4),
])
def test_repr(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm, tm = build(flow), build(torch)
    assert repr(fm) == torch_repr(tm)


def test_repr_in_container():
    fm = flow.nn.Sequential(flow.nn.LSTM(3, 4, batch_first=True))
    tm = torch.nn.Sequential(torch.nn.LSTM(3, 4, batch_first=True))
    assert repr(fm) == torch_repr(tm)


@pytest.mark.parametrize("build", [lambda: flow.nn.LSTM(64, 100, num_layers=2),
                                   lambda: flow.nn.GRUCell(64, 100)])
def test_default_init_statistics(build):
    flow.manual_seed(0)
    m = build()
    bound = 1 / math.sqrt(100)
    values = np.concatenate([p.numpy().ravel() for p in m.parameters()])
    assert np.abs(values).max() <= np.float32(bound)
    assert np.abs(values).max() > 0.99 * bound
    assert abs(values.mean()) < 0.02 * bound
    assert abs(values.std() - bound / math.sqrt(3)) < 0.02 * bound
    hist, _ = np.histogram(values, bins=10, range=(-bound, bound))
    assert hist.min() > 0.9 * len(values) / 10  # roughly flat
    for p in m.parameters():  # every tensor is initialised, not only the first
        assert p.numpy().std() > 0.5 * bound / math.sqrt(3)


def test_reset_parameters_redraws_in_place():
    m = flow.nn.GRU(3, 4)
    w = m.weight_ih_l0
    before = w.numpy().copy()
    m.reset_parameters()
    assert m.weight_ih_l0 is w and not np.array_equal(before, w.numpy())


def test_module_conversions_keep_working():
    m = flow.nn.LSTM(3, 4).double()
    out, _ = m(flow.tensor(arr(2, 1, 3, dtype=np.float64)))
    assert out.dtype == flow.float64
    m.float()
    out, _ = m(flow.tensor(arr(2, 1, 3)))
    assert out.dtype == flow.float32


# ---------------------------------------------------------------------------
# Errors (PyTorch's types and messages)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", [(5,), (2, 3, 4, 5)])
def test_error_input_rank(mode, shape):
    raises_like_torch(lambda lib: _mode_builder(mode, 5, 6)(lib)(lib.ones(*shape)), ValueError)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", [(3, 2, 4), (3, 4)])
def test_error_input_size(mode, shape):
    def call(lib):
        lib.manual_seed(0)
        return _mode_builder(mode, 10, 6)(lib)(lib.ones(*shape))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 10, got 4"):
        call(flow)
    raises_like_torch(call, RuntimeError)


def test_error_message_exact():
    with pytest.raises(RuntimeError) as e:
        flow.nn.LSTM(10, 20)(flow.ones(3, 2, 5))
    assert str(e.value) == "input.size(-1) must be equal to input_size. Expected 10, got 5"


@pytest.mark.parametrize("mode", ["RNN", "GRU"])
@pytest.mark.parametrize("hshape", [(1, 2, 7), (2, 2, 6), (1, 3, 6), (2, 6), (1, 1, 2, 6)])
def test_error_h0_shape(mode, hshape):
    raises_like_torch(lambda lib: _mode_builder(mode, 4, 6)(lib)(lib.ones(5, 2, 4), lib.ones(*hshape)),
                RuntimeError)


@pytest.mark.parametrize("hshape,cshape", [
    ((1, 2, 6), (1, 2, 7)), ((1, 2, 5), (1, 2, 6)), ((1, 3, 6), (1, 3, 6)), ((2, 6), (1, 2, 6)),
    ((1, 2, 3), (1, 2, 6))])
def test_error_lstm_state_shapes(hshape, cshape):
    raises_like_torch(lambda lib: lib.nn.LSTM(4, 6)(lib.ones(5, 2, 4),
                                              (lib.ones(*hshape), lib.ones(*cshape))),
                RuntimeError)


@pytest.mark.parametrize("hshape,cshape", [((1, 2, 6), (1, 2, 6)), ((1, 2, 3), (1, 2, 3))])
def test_error_lstm_proj_state_shapes(hshape, cshape):
    raises_like_torch(lambda lib: lib.nn.LSTM(4, 6, proj_size=3)(lib.ones(5, 2, 4),
                                                           (lib.ones(*hshape), lib.ones(*cshape))),
                RuntimeError)


@pytest.mark.parametrize("mode", MODES)
def test_error_unbatched_hidden_rank(mode):
    lstm = mode == "LSTM"

    def call(lib):
        h = lib.ones(1, 1, 6)
        return _mode_builder(mode, 4, 6)(lib)(lib.ones(5, 4), (h, h) if lstm else h)
    raises_like_torch(call, RuntimeError)


@pytest.mark.parametrize("batch_first", [False, True])
def test_error_empty_sequence(batch_first):
    shape = (2, 0, 3) if batch_first else (0, 2, 3)
    raises_like_torch(lambda lib: lib.nn.LSTM(3, 4, batch_first=batch_first)(lib.ones(*shape)),
                RuntimeError)


def test_error_dtype_mismatch():
    raises_like_torch(lambda lib: lib.nn.GRU(4, 6)(lib.ones(5, 2, 4, dtype=lib.float64)), ValueError)


@pytest.mark.parametrize("kwargs", [
    dict(dropout=1.5), dict(dropout=-0.1), dict(dropout=True), dict(dropout="0.1"),
    dict(hidden_size=0), dict(hidden_size=2.0), dict(input_size=0), dict(input_size=1.5),
    dict(num_layers=0), dict(bias=1), dict(batch_first=None), dict(proj_size=-1),
    dict(proj_size=6), dict(proj_size=8)])
def test_error_constructor(kwargs):
    args = dict(input_size=4, hidden_size=6)
    args.update(kwargs)
    raises_like_torch(lambda lib: lib.nn.LSTM(**args))


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.RNN(4, 6, nonlinearity="gelu"),
    lambda lib: lib.nn.RNN(4, 6, 1, "sigmoid"),
    lambda lib: lib.nn.RNN(4, 6, proj_size=2),
    lambda lib: lib.nn.GRU(4, 6, proj_size=2),
    lambda lib: lib.nn.modules.rnn.RNNBase("XYZ", 4, 6),
])
def test_error_constructor_modes(call):
    raises_like_torch(call, ValueError)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("xshape,hshape", [
    ((2, 3, 4), None), ((3, 5), None), ((3, 4), (2, 6)), ((3, 4), (3, 7)), ((3, 4), (1, 3, 6))])
def test_error_cells(name, xshape, hshape):
    def call(lib):
        m = getattr(lib.nn, name)(4, 6)
        if hshape is None:
            return m(lib.ones(*xshape))
        h = lib.ones(*hshape)
        return m(lib.ones(*xshape), (h, h) if name == "LSTMCell" else h)
    raises_like_torch(call)


def test_dropout_warning_single_layer():
    with pytest.warns(UserWarning, match=r"non-zero dropout expects num_layers greater than 1, "
                                         r"but got dropout=0.2 and num_layers=1"):
        flow.nn.LSTM(3, 4, dropout=0.2)


def test_rnn_exports():
    for name in ("RNNBase", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"):
        assert getattr(flow.nn, name) is getattr(flow.nn.modules, name)
    assert issubclass(flow.nn.LSTM, flow.nn.RNNBase)
    assert issubclass(flow.nn.GRUCell, flow.nn.modules.rnn.RNNCellBase)
    for name in torch.nn.utils.rnn.__all__:
        assert hasattr(flow.nn.utils.rnn, name), name
