"""nn.LSTM's layers as the lstm_layer table op (src/ops/table/rnn.yaml): the op is what runs
(its backward node), so an LSTM traces into nn.Graph with no Python step; every layer option
against PyTorch forward and backward in float32 and float64, packed and zero-size batches, the
op's own checks. The module's wider behaviour (errors, cells, state_dict...): test_nn_rnn.py."""
import numpy as np
import pytest
import torch

from harness import flow
from nn_util import arr, close, leaf_pair, packed_pair, twins

CONFIGS = [dict(), dict(num_layers=2), dict(bidirectional=True), dict(batch_first=True),
           dict(num_layers=2, bidirectional=True, bias=False), dict(proj_size=3),
           dict(num_layers=2, bidirectional=True, proj_size=2, batch_first=True)]


def _id(cfg):
    return "-".join(f"{k}={v}" for k, v in cfg.items()) or "default"


def _compare(cfg, dtype, given, tol):
    fm, tm = twins(lambda lib: lib.nn.LSTM(4, 5, **cfg))
    if dtype == np.float64:
        fm, tm = fm.double(), tm.double()
    x = arr(3, 6, 4, dtype=dtype) if cfg.get("batch_first") else arr(6, 3, 4, dtype=dtype)
    xf, xt = leaf_pair(x)
    ld = cfg.get("num_layers", 1) * (2 if cfg.get("bidirectional") else 1)
    sf = st = None
    if given:
        pairs = [leaf_pair(arr(ld, 3, cfg.get("proj_size") or 5, dtype=dtype)),
                 leaf_pair(arr(ld, 3, 5, dtype=dtype))]
        sf, st = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    of, (hf, cf) = fm(xf, sf)
    ot, (ht, ct) = tm(xt, st)
    for a, b in [(of, ot), (hf, ht), (cf, ct)]:
        close(a, b, **tol)
    w = arr(*ot.shape, dtype=dtype)
    loss_f = (of * flow.tensor(w)).sum() + (hf * hf).sum() + (cf * 0.5).sum()
    loss_t = (ot * torch.tensor(w)).sum() + (ht * ht).sum() + (ct * 0.5).sum()
    loss_f.backward()
    loss_t.backward()
    close(xf.grad, xt.grad, **tol)
    if given:
        for a, b in zip(sf, st):
            close(a.grad, b.grad, **tol)
    named_t = dict(tm.named_parameters())
    for name, p in fm.named_parameters():
        close(p.grad, named_t[name].grad, **tol)


@pytest.fixture(params=["auto", "native"])
def impl(request, monkeypatch):
    """The kernel behind the op (ONEFLOW_RNN_IMPL, read on every call): oneDNN's primitives
    where they fit (float32 padded batches), or ours."""
    monkeypatch.setenv("ONEFLOW_RNN_IMPL", request.param)
    return request.param


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
@pytest.mark.parametrize("given", [False, True], ids=["no_h0", "h0"])
def test_float32(cfg, given, impl):
    _compare(cfg, np.float32, given, dict(rtol=1e-5, atol=1e-5))


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
def test_float64(cfg):
    _compare(cfg, np.float64, True, dict(rtol=1e-10, atol=1e-11))


def test_the_table_op_runs():
    m = flow.nn.LSTM(3, 4)
    out, (h, c) = m(flow.randn(5, 2, 3))
    assert out.grad_fn.next_functions[0][0].name() == "LstmLayerBackward0"
    # the op on rows: a packed schedule (batch sizes 3, 2, 2, 1) runs and checks its arguments
    w_ih, w_hh = m.weight_ih_l0, m.weight_hh_l0
    rows = flow.randn(8, 3)
    out, h, c, ws = flow._C.lstm_layer(rows, w_ih, w_hh, m.bias_ih_l0, m.bias_hh_l0, None, None,
                                       None, [3, 2, 2, 1], False)
    assert out.grad_fn.name() == "LstmLayerBackward0"
    assert tuple(out.shape) == (8, 4) and tuple(h.shape) == (3, 4) and tuple(ws.shape) == (8, 6 * 4 + 4)
    with pytest.raises(RuntimeError, match="lstm_layer.*non-increasing"):
        flow._C.lstm_layer(rows, w_ih, w_hh, None, None, None, None, None, [2, 3, 2, 1], False)
    with pytest.raises(RuntimeError, match="lstm_layer.*sum\\(batch_sizes\\)"):
        flow._C.lstm_layer(rows, w_ih, w_hh, None, None, None, None, None, [3, 2, 2], False)
    with pytest.raises(RuntimeError, match="lstm_layer.*weight_hh"):
        flow._C.lstm_layer(rows, w_ih, w_ih, None, None, None, None, None, [3, 2, 2, 1], False)


@pytest.mark.parametrize("cfg", [dict(), dict(num_layers=2, bidirectional=True, proj_size=2)],
                         ids=_id)
def test_packed_float64(cfg):
    fm, tm = twins(lambda lib: lib.nn.LSTM(4, 5, **cfg))
    fm, tm = fm.double(), tm.double()
    lengths = [2, 6, 1, 4, 4]
    xf, xt, pf, pt = packed_pair(arr(6, 5, 4, dtype=np.float64), lengths, False)
    of, (hf, cf) = fm(pf)
    ot, (ht, ct) = tm(pt)
    tol = dict(rtol=1e-10, atol=1e-11)
    for a, b in [(of.data, ot.data), (hf, ht), (cf, ct)]:
        close(a, b, **tol)
    w = arr(*ot.data.shape, dtype=np.float64)
    ((of.data * flow.tensor(w)).sum() + (hf * hf).sum() + cf.sum()).backward()
    ((ot.data * torch.tensor(w)).sum() + (ht * ht).sum() + ct.sum()).backward()
    close(xf.grad, xt.grad, **tol)
    named_t = dict(tm.named_parameters())
    for name, p in fm.named_parameters():
        close(p.grad, named_t[name].grad, **tol)


@pytest.mark.parametrize("cfg", [dict(), dict(num_layers=2, bidirectional=True)], ids=_id)
def test_zero_size_batch(cfg, impl):
    fm, tm = twins(lambda lib: lib.nn.LSTM(4, 5, **cfg))
    xf, xt = leaf_pair(arr(6, 0, 4))
    of, (hf, cf) = fm(xf)
    ot, (ht, ct) = tm(xt)
    for a, b in [(of, ot), (hf, ht), (cf, ct)]:
        close(a, b)
    (of.sum() + hf.sum()).backward()
    (ot.sum() + ht.sum()).backward()
    close(xf.grad, xt.grad)
    named_t = dict(tm.named_parameters())
    for name, p in fm.named_parameters():
        close(p.grad, named_t[name].grad)


class _Net(flow.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = flow.nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True)
        self.lin = flow.nn.Linear(12, 1)

    def forward(self, x):
        y, _ = self.lstm(x)
        return (self.lin(y[:, -1]) ** 2).mean()


def test_lstm_traces_without_python_steps():
    """The layers are table ops in the program: neither an eval graph nor a training graph (its
    backward included) has a Python step; both agree with eager."""
    flow.manual_seed(3)
    m = _Net()
    ref = type(m)()
    ref.load_state_dict(m.state_dict())

    class Eval(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m

        def build(self, x):
            return self.m.lstm(x)[0]

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
    close(ge(x), ref.lstm(x)[0].detach().numpy(), 1e-6, 1e-6)
    (text,) = ge._programs()
    assert "<python" not in text and "lstm_layer" in text, text
    gt = Train()
    ropt = flow.optim.SGD(ref.parameters(), lr=0.1)
    for _ in range(2):
        loss = gt(x)
        le = ref(x)
        ropt.zero_grad()
        le.backward()
        ropt.step()
        close(loss, le.detach().numpy(), 1e-6, 1e-7)
    (text,) = gt._programs()
    # the backward too is nodes of the program (lstm_layer_backward), no Python step
    assert "<python" not in text and "lstm_layer_backward" in text and "[backward]" in text, text
    assert gt._compiled and all(c.backward_steps == [] for c in gt._compiled.values())
    for p, q in zip(m.parameters(), ref.parameters()):
        close(p, q.detach().numpy(), 1e-5, 1e-6)
