"""nn.GRU's layers as the gru_layer table op (src/ops/table/rnn.yaml): the op is what runs (its
backward node), so a GRU traces into nn.Graph with its backward as nodes; every layer option
against PyTorch forward and backward in float32 and float64, double backward, packed and
zero-size batches, the op's own checks. The module's wider behaviour: test_nn_rnn.py."""
import numpy as np
import pytest
import torch

from harness import flow
from nn_util import arr, close, leaf_pair, packed_pair, twins

CONFIGS = [dict(), dict(num_layers=2), dict(bidirectional=True), dict(batch_first=True),
           dict(num_layers=2, bidirectional=True, bias=False),
           dict(num_layers=3, bidirectional=True, batch_first=True)]
F32 = dict(rtol=1e-5, atol=1e-5)
F64 = dict(rtol=1e-10, atol=1e-11)


def _id(cfg):
    return "-".join(f"{k}={v}" for k, v in cfg.items()) or "default"


def _grads_match(fm, tm, tol):
    named_t = dict(tm.named_parameters())
    for name, p in fm.named_parameters():
        close(p.grad, named_t[name].grad, **tol)


def _compare(cfg, dtype, given, tol):
    fm, tm = twins(lambda lib: lib.nn.GRU(4, 5, **cfg))
    if dtype == np.float64:
        fm, tm = fm.double(), tm.double()
    x = arr(3, 6, 4, dtype=dtype) if cfg.get("batch_first") else arr(6, 3, 4, dtype=dtype)
    xf, xt = leaf_pair(x)
    ld = cfg.get("num_layers", 1) * (2 if cfg.get("bidirectional") else 1)
    hf = ht = None
    if given:
        hf, ht = leaf_pair(arr(ld, 3, 5, dtype=dtype))
    of, nf = fm(xf, hf)
    ot, nt = tm(xt, ht)
    close(of, ot, **tol)
    close(nf, nt, **tol)
    w = arr(*ot.shape, dtype=dtype)
    ((of * flow.tensor(w)).sum() + (nf * nf).sum()).backward()
    ((ot * torch.tensor(w)).sum() + (nt * nt).sum()).backward()
    close(xf.grad, xt.grad, **tol)
    if given:
        close(hf.grad, ht.grad, **tol)
    _grads_match(fm, tm, tol)


@pytest.fixture(params=["auto", "native"])
def impl(request, monkeypatch):
    """The kernel behind the op (ONEFLOW_RNN_IMPL, read on every call): oneDNN's primitives
    where they fit (float32 padded batches), or ours."""
    monkeypatch.setenv("ONEFLOW_RNN_IMPL", request.param)
    return request.param


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
@pytest.mark.parametrize("given", [False, True], ids=["no_h0", "h0"])
def test_float32(cfg, given, impl):
    _compare(cfg, np.float32, given, F32)


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
@pytest.mark.parametrize("given", [False, True], ids=["no_h0", "h0"])
def test_float64(cfg, given):
    _compare(cfg, np.float64, given, F64)


def test_the_table_op_runs():
    m = flow.nn.GRU(3, 4)
    out, h = m(flow.randn(5, 2, 3))
    assert out.grad_fn.next_functions[0][0].name() == "GruLayerBackward0"
    # the op on rows: a packed schedule (batch sizes 3, 2, 2, 1)
    w_ih, w_hh = m.weight_ih_l0, m.weight_hh_l0
    rows = flow.randn(8, 3)
    out, h, ws = flow._C.gru_layer(rows, w_ih, w_hh, m.bias_ih_l0, m.bias_hh_l0, None,
                                   [3, 2, 2, 1], False)
    assert out.grad_fn.name() == "GruLayerBackward0"
    assert tuple(out.shape) == (8, 4) and tuple(h.shape) == (3, 4) and tuple(ws.shape) == (8, 5 * 4)


def test_the_op_checks_its_arguments():
    m = flow.nn.GRU(3, 4)
    w_ih, w_hh, b = m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0
    rows = flow.randn(8, 3)
    with pytest.raises(RuntimeError, match="gru_layer.*non-increasing"):
        flow._C.gru_layer(rows, w_ih, w_hh, None, None, None, [2, 3, 2, 1], False)
    with pytest.raises(RuntimeError, match="gru_layer.*whole numbers"):
        flow._C.gru_layer(rows, w_ih, w_hh, None, None, None, [3, 2.5, 2, 0.5], False)
    with pytest.raises(RuntimeError, match="gru_layer.*sum\\(batch_sizes\\) = 7 rows, got 8"):
        flow._C.gru_layer(rows, w_ih, w_hh, None, None, None, [3, 2, 2], False)
    with pytest.raises(RuntimeError, match="gru_layer.*weight_hh of shape \\[12, 4\\]"):
        flow._C.gru_layer(rows, w_ih, w_ih, None, None, None, [3, 2, 2, 1], False)
    with pytest.raises(RuntimeError, match="gru_layer.*weight_ih of shape \\(3 \\* hidden_size"):
        flow._C.gru_layer(rows, w_hh[:11], w_hh, None, None, None, [8], False)
    with pytest.raises(RuntimeError, match="gru_layer.*bias_hh of shape \\[12\\]"):
        flow._C.gru_layer(rows, w_ih, w_hh, b, b[:6], None, [8], False)
    with pytest.raises(RuntimeError, match="gru_layer.*hx of shape \\[3, 4\\]"):
        flow._C.gru_layer(rows, w_ih, w_hh, None, None, flow.zeros(2, 4), [3, 2, 2, 1], False)
    with pytest.raises(RuntimeError, match="gru_layer.*expected weight_ih of dtype float64"):
        flow._C.gru_layer(rows.double(), w_ih, w_hh, None, None, None, [8], False)
    with pytest.raises(RuntimeError, match="gru_layer.*float32 or float64 input"):
        flow._C.gru_layer(rows.half(), w_ih.half(), w_hh.half(), None, None, None, [8], False)
    with pytest.raises(RuntimeError, match="gru_layer.*at least one step"):
        flow._C.gru_layer(rows[:0], w_ih, w_hh, None, None, None, [], False)


@pytest.mark.parametrize("cfg", [dict(), dict(num_layers=2, bidirectional=True),
                                 dict(num_layers=2, bidirectional=True, bias=False)], ids=_id)
@pytest.mark.parametrize("given", [False, True], ids=["no_h0", "h0"])
def test_packed(cfg, given):
    fm, tm = twins(lambda lib: lib.nn.GRU(4, 5, **cfg))
    fm, tm = fm.double(), tm.double()
    lengths = [2, 6, 1, 4, 4]
    xf, xt, pf, pt = packed_pair(arr(6, 5, 4, dtype=np.float64), lengths, False)
    ld = cfg.get("num_layers", 1) * (2 if cfg.get("bidirectional") else 1)
    hf = ht = None
    if given:
        hf, ht = leaf_pair(arr(ld, 5, 5, dtype=np.float64))
    of, nf = fm(pf, hf)
    ot, nt = tm(pt, ht)
    close(of.data, ot.data, **F64)
    close(nf, nt, **F64)
    w = arr(*ot.data.shape, dtype=np.float64)
    ((of.data * flow.tensor(w)).sum() + (nf * nf).sum()).backward()
    ((ot.data * torch.tensor(w)).sum() + (nt * nt).sum()).backward()
    close(xf.grad, xt.grad, **F64)
    if given:
        close(hf.grad, ht.grad, **F64)
    _grads_match(fm, tm, F64)


@pytest.mark.parametrize("cfg", [dict(), dict(num_layers=2, bidirectional=True)], ids=_id)
def test_zero_size_batch(cfg, impl):
    fm, tm = twins(lambda lib: lib.nn.GRU(4, 5, **cfg))
    xf, xt = leaf_pair(arr(6, 0, 4))
    of, nf = fm(xf)
    ot, nt = tm(xt)
    close(of, ot)
    close(nf, nt)
    (of.sum() + nf.sum()).backward()
    (ot.sum() + nt.sum()).backward()
    close(xf.grad, xt.grad)
    _grads_match(fm, tm, dict(rtol=1e-5, atol=1e-6))


@pytest.mark.parametrize("cfg", [dict(), dict(bidirectional=True, bias=False)], ids=_id)
def test_double_backward(cfg):
    """create_graph: the gradients are differentiable (the layer recomputed from table ops)."""
    fm, tm = twins(lambda lib: lib.nn.GRU(3, 4, num_layers=2, **cfg))
    fm, tm = fm.double(), tm.double()
    xf, xt = leaf_pair(arr(5, 2, 3, dtype=np.float64))
    hf, ht = leaf_pair(arr(2 * (2 if cfg.get("bidirectional") else 1), 2, 4, dtype=np.float64))
    of, nf = fm(xf, hf)
    ot, nt = tm(xt, ht)
    gf = flow.autograd.grad(of.pow(2).sum() + nf.sum(), [xf, hf], create_graph=True)
    gt = torch.autograd.grad(ot.pow(2).sum() + nt.sum(), [xt, ht], create_graph=True)
    for a, b in zip(gf, gt):
        close(a, b.detach(), **F64)
    ((gf[0] * gf[0]).sum() + gf[1].sum()).backward()
    ((gt[0] * gt[0]).sum() + gt[1].sum()).backward()
    close(xf.grad, xt.grad, **F64)
    close(hf.grad, ht.grad, **F64)
    _grads_match(fm, tm, F64)


class _Net(flow.nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.gru = getattr(flow.nn, mode)(4, 6, num_layers=2, batch_first=True, bidirectional=True)
        self.lin = flow.nn.Linear(12, 1)

    def forward(self, x):
        y, _ = self.gru(x)
        return (self.lin(y) ** 2).mean()  # no slice: its backward is a Python step in a graph


@pytest.mark.parametrize("impl", ["auto", "native"])
@pytest.mark.parametrize("mode", ["GRU", "LSTM"])
def test_traces_with_backward_as_nodes(mode, impl, monkeypatch):
    """The layers are table ops in the program: an eval graph has no Python step, a training
    graph's backward is nodes too (the table's formula); both agree with eager. (LSTM too: the
    bias gradient's copy and the zeros of h_n's unused gradient are nodes.)"""
    monkeypatch.setenv("ONEFLOW_RNN_IMPL", impl)
    flow.manual_seed(3)
    m = _Net(mode)
    ref = _Net(mode)
    ref.load_state_dict(m.state_dict())

    class Eval(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m

        def build(self, x):
            return self.m.gru(x)[0]

    class Train(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m
            self.add_optimizer(flow.optim.SGD(m.parameters(), lr=0.1))

        def build(self, x):
            loss = self.m(x)
            loss.backward()
            return loss

    x = flow.tensor(arr(2, 5, 4))
    ge = Eval()
    close(ge(x), ref.gru(x)[0].detach().numpy(), 1e-6, 1e-6)
    (text,) = ge._programs()
    assert "<python" not in text and mode.lower() + "_layer" in text, text
    gt = Train()
    ropt = flow.optim.SGD(ref.parameters(), lr=0.1)
    for _ in range(2):
        loss = gt(x)
        le = ref(x)
        ropt.zero_grad()
        le.backward()
        ropt.step()
        close(loss, le.detach().numpy(), 1e-6, 1e-7)
    (compiled,) = gt._compiled.values()
    assert compiled.backward_steps == []
    (text,) = gt._programs()
    assert "<python" not in text and mode.lower() + "_layer_backward" in text, text
    for p, q in zip(m.parameters(), ref.parameters()):
        close(p, q.detach().numpy(), 1e-5, 1e-6)


@pytest.mark.parametrize("mode", ["GRU", "LSTM"])
def test_the_kernel_choice(mode, monkeypatch):
    """oneDNN's primitives run float32 padded batches (their workspace is 1-D), ours packed
    batches, float64 and ONEFLOW_RNN_IMPL=native (a (rows, width) workspace)."""
    m = getattr(flow.nn, mode)(3, 4)
    w = [m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0, m.bias_hh_l0]

    def layer(rows, sizes):
        if mode == "GRU":
            return flow._C.gru_layer(rows, *w, None, sizes, False)[-1]
        return flow._C.lstm_layer(rows, *w, None, None, None, sizes, False)[-1]

    width = 5 * 4 if mode == "GRU" else 6 * 4 + 4
    assert layer(flow.randn(8, 3), [2, 2, 2, 2]).dim() == 1
    assert tuple(layer(flow.randn(8, 3), [3, 2, 2, 1]).shape) == (8, width)
    monkeypatch.setenv("ONEFLOW_RNN_IMPL", "native")
    assert tuple(layer(flow.randn(8, 3), [2, 2, 2, 2]).shape) == (8, width)
    monkeypatch.setenv("ONEFLOW_RNN_IMPL", "fast")
    with pytest.raises(ValueError, match="ONEFLOW_RNN_IMPL must be auto or native, got 'fast'"):
        layer(flow.randn(8, 3), [2, 2, 2, 2])


def test_backward_of_a_mismatched_workspace():
    """The backward kernel names the workspace it expected."""
    m = flow.nn.GRU(3, 4)
    rows = flow.randn(8, 3)
    w = [m.weight_ih_l0, m.weight_hh_l0]
    with pytest.raises(RuntimeError, match="gru_layer_backward.*workspace of shape \\[8, 20\\]"):
        flow._C.gru_layer_backward(flow.ones(8, 4), None, rows, *w, flow.zeros(8, 19), None, None,
                                   None, None, None, [2, 2, 2, 2], False)
    with pytest.raises(RuntimeError, match="gru_layer_backward.*the forward's output"):
        flow._C.gru_layer_backward(flow.ones(8, 4), None, rows, *w,
                                   flow._C.gru_layer(rows, *w, None, None, None, [2, 2, 2, 2], False)[-1],
                                   None, None, None, None, None, [2, 2, 2, 2], False)
