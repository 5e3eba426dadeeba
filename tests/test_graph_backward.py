"""Backward as nodes of the graph program (Note [Backward nodes], src/graph/lazy.h; docs/graph.md).

`loss.backward()` in build() is traced into nodes of the program from the op table's formulas:
no Python step is left for it, and 20 training steps of the issue's four models (an MLP, the example
CNN, an LSTM language model, a Transformer encoder) give eager's losses and parameters."""
import copy
import importlib.util
import pathlib
import re

import numpy as np

import oneflow as flow

ROOT = pathlib.Path(__file__).resolve().parents[1]


class Train(flow.nn.Graph):
    def __init__(self, model, opt):
        super().__init__()
        self.model = model
        self.add_optimizer(opt)

    def build(self, x, y):
        loss = flow.nn.functional.cross_entropy(self.model(x), y)
        loss.backward()
        return loss


def _example_net():
    spec = importlib.util.spec_from_file_location("train_fashion_mnist", ROOT / "examples" / "train_fashion_mnist.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Net()


def _compare(model, make_opt, batches, seed=0, bitwise_passes=False):
    """Trains a copy eagerly and the model in a graph on the same batches: (graph, losses).
    `bitwise_passes`: only passes that keep eager's bits (no matmul+bias fusion, which adds the
    bias inside the GEMM: a model with Adam and a conv bias before BatchNorm -- whose gradient is
    rounding noise around 0, which Adam scales up to lr-sized steps -- shows that as a different
    bias, whatever the backward)."""
    eager = copy.deepcopy(model)
    opt_e, opt_g = make_opt(eager), make_opt(model)
    g = Train(model, opt_g)
    if bitwise_passes:
        g.config.enable_producer_fusion(False)
    flow.manual_seed(seed)
    want = []
    for x, y in batches:
        loss = flow.nn.functional.cross_entropy(eager(x), y)
        opt_e.zero_grad()
        loss.backward()
        opt_e.step()
        want.append(loss.numpy())
    flow.manual_seed(seed)
    got = [g(x, y).numpy() for x, y in batches]
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-7)
    for (name, p), q in zip(model.named_parameters(), eager.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    for (name, b), c in zip(model.named_buffers(), eager.buffers()):
        np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    return g


def _closed(g, model):
    """The single program has no Python step, backward nodes, and one accumulate node per
    parameter -- none with the update as nodes (the default), which reads the gradients where the
    backward computed them (Note [Dropped gradient writes])."""
    (compiled,) = g._compiled.values()
    assert compiled.backward_steps == []
    assert compiled.program.run_grad is False
    (text,) = g._programs()
    assert "<python" not in text, text
    if compiled.updates:
        assert "accumulate_grad_(" not in text and text.count("_update(") == 1, text
    else:
        assert text.count("accumulate_grad_(") == len(list(model.parameters())), text
    assert text.count("[backward]") > text.count("accumulate_grad_("), text
    return text


def test_mlp_backward_is_nodes_and_trains_like_eager():
    flow.manual_seed(0)
    model = flow.nn.Sequential(flow.nn.Linear(12, 32), flow.nn.ReLU(), flow.nn.Linear(32, 16), flow.nn.ReLU(),
                               flow.nn.Linear(16, 5))
    rs = np.random.RandomState(1)
    batches = [(flow.tensor(rs.randn(8, 12).astype(np.float32)), flow.tensor(rs.randint(0, 5, 8)))
               for _ in range(20)]
    g = _compare(model, lambda m: flow.optim.SGD(m.parameters(), lr=0.1, momentum=0.9), batches)
    text = _closed(g, model)
    # the formulas' ops are the table's: matmul's gradient is matmuls, relu's threshold_backward
    assert "threshold_backward(" in text and "cross_entropy_backward(" in text


def test_example_cnn_backward_is_nodes_and_trains_like_eager():
    flow.manual_seed(0)
    model = _example_net()
    rs = np.random.RandomState(2)
    batches = [(flow.tensor(rs.randn(4, 1, 28, 28).astype(np.float32)), flow.tensor(rs.randint(0, 10, 4)))
               for _ in range(20)]
    # the default passes: eager's F.linear adds the bias inside the GEMM too (fused_matmul_bias, the
    # CPU path of nn.Linear), as the graph's producer fusion does, so the two keep the same bits
    g = _compare(model, lambda m: flow.optim.Adam(m.parameters(), lr=1e-3), batches)
    _closed(g, model)


def test_input_gradients_and_a_second_backward_accumulate():
    class Two(flow.nn.Graph):
        def __init__(self, lin, opt):
            super().__init__()
            self.lin = lin
            self.add_optimizer(opt)

        def build(self, x):
            h = self.lin(x)
            (h * h).sum().backward()
            h2 = self.lin(x * 2)
            h2.sum().backward()
            return h2

    flow.manual_seed(3)
    lin = flow.nn.Linear(3, 2)
    ref = copy.deepcopy(lin)
    opt = flow.optim.SGD(lin.parameters(), lr=0.0)  # gradients only: read them before the step clears them
    g = Two(lin, opt)
    x = flow.randn(4, 3).requires_grad_()
    xe = x.detach().clone().requires_grad_()
    g(x)
    h = ref(xe)
    (h * h).sum().backward()
    ref(xe * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-6, atol=1e-6)
    (text,) = g._programs()
    assert "<python" not in text and text.count("accumulate_grad_(") == 6, text


class _Square(flow.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x


def test_a_user_function_keeps_backward_a_python_step():
    class G(flow.nn.Graph):
        def __init__(self, lin, opt):
            super().__init__()
            self.lin = lin
            self.add_optimizer(opt)

        def build(self, x):
            loss = _Square.apply(self.lin(x)).sum()
            loss.backward()
            return loss

    flow.manual_seed(4)
    lin = flow.nn.Linear(3, 2)
    ref = copy.deepcopy(lin)
    g = G(lin, flow.optim.SGD(lin.parameters(), lr=0.1))
    opt = flow.optim.SGD(ref.parameters(), lr=0.1)
    x = flow.randn(5, 3)
    for _ in range(3):
        got = g(x)
        want = (ref(x) ** 2).sum()
        opt.zero_grad()
        want.backward()
        opt.step()
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    (compiled,) = g._compiled.values()
    assert compiled.program.run_grad is True and "Python step" in compiled.backward_steps[0]
    (text,) = g._programs()
    assert "backward(" in text and "accumulate_grad_(" not in text


class _HandWritten(flow.nn.Module):
    """Ops recorded by hand-written bindings: indexing, split, max, glu (manual), a composite."""

    def __init__(self):
        super().__init__()
        self.lin = flow.nn.Linear(6, 8)

    def forward(self, x):
        h = self.lin(x)
        a, b = h.split(4, dim=1)
        m = flow.max(h[:, 1:7:2], dim=1).values
        return flow.nn.functional.glu(h, dim=1) * a[1] + b.mean() + m.unsqueeze(1) + flow.outer(x[:, 2], x[0])[:, :4]


def test_hand_written_ops_are_local_autograd_nodes():
    """Note [Local autograd nodes]: no Python step; each hand-written op has one local backward
    node; the gradients (of the input and the parameters, two backward passes) are eager's."""

    class G(flow.nn.Graph):
        def __init__(self, model, opt):
            super().__init__()
            self.model = model
            self.add_optimizer(opt)

        def build(self, x):
            out = self.model(x)
            (out * out).sum().backward()
            self.model(x * 2).sum().backward()
            return out

    flow.manual_seed(5)
    model = _HandWritten()
    ref = copy.deepcopy(model)
    opt = flow.optim.SGD(model.parameters(), lr=0.0)  # (read the gradients before step clears them)
    g = G(model, opt)
    x = flow.randn(5, 6).requires_grad_()
    xe = x.detach().clone().requires_grad_()
    for _ in range(2):  # (the second call: .grad accumulates over calls, as eager)
        got = g(x)
        want = ref(xe)
        (want * want).sum().backward()
        ref(xe * 2).sum().backward()
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-5, atol=1e-6)
    (compiled,) = g._compiled.values()
    assert compiled.backward_steps == [] and compiled.program.run_grad is False
    (text,) = g._programs()
    assert "<python" not in text, text
    for op in ("split", "max", "glu", "outer"):
        assert f"{op}_local_backward(" in text, (op, text)


def test_an_in_place_hand_written_op_keeps_backward_a_python_step():
    """An assignment (copy_ into a view) writes its argument: no local graph of the op's outputs
    gives that gradient, so the backward stays a Python step (with eager's gradients)."""

    class G(flow.nn.Graph):
        def __init__(self, lin, opt):
            super().__init__()
            self.lin = lin
            self.add_optimizer(opt)

        def build(self, x):
            h = self.lin(x) * 1
            h[:, 0] = x[:, 1] * 3
            loss = (h * h).sum()
            loss.backward()
            return loss

    flow.manual_seed(6)
    lin = flow.nn.Linear(3, 2)
    ref = copy.deepcopy(lin)
    g = G(lin, flow.optim.SGD(lin.parameters(), lr=0.0))
    x = flow.randn(4, 3).requires_grad_()
    xe = x.detach().clone().requires_grad_()
    g(x)
    h = ref(xe) * 1
    h[:, 0] = xe[:, 1] * 3
    (h * h).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-6, atol=1e-6)
    (compiled,) = g._compiled.values()
    assert compiled.program.run_grad is True and compiled.backward_steps == ["autograd cannot follow copy_"]


def test_a_local_autograd_node_is_its_op_with_local_grads():
    """Note [Local autograd nodes]: the node is the op itself (its name and arguments, nothing
    appended); the inputs its own autograd differentiates are printed after the call -- a slot, or
    a parameter by name -- and the leaves are its last outputs."""

    class M(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = flow.nn.Parameter(flow.randn(4, 6))

        def forward(self, x):
            a, b = flow.split(x * 2, 3, dim=1)
            c, d = flow.split(self.w, 3, dim=1)
            return (a * c + b.max(dim=1, keepdim=True)[0] * d).sum()

    class G(flow.nn.Graph):
        def __init__(self, m):
            super().__init__()
            self.m = m
            self.add_optimizer(flow.optim.SGD(m.parameters(), lr=0.0))

        def build(self, x):
            loss = self.m(x)
            loss.backward()
            return loss

    flow.manual_seed(3)
    m = M()
    x = flow.randn(4, 6).requires_grad_()
    g = G(m)
    g(x)
    (text,) = g._programs()
    assert re.search(r"%\d+:f32\[4,3\], %\d+:f32\[4,3\], %\d+:f32\[4,6\] = split\(%(\d+), 3, 1\)  "
                     r"\{local_grads: \[%\1\]\}", text), text
    assert re.search(r"= split\(m\.w:f32\[4,6\], 3, 1\)  \{local_grads: \[m\.w:f32\[4,6\]\]\}", text), text
    assert re.search(r"= max\(%(\d+), 1, True\)  \{local_grads: \[%\1\]\}", text), text
    # eager's gradients
    xe, we = x.detach().clone().requires_grad_(), m.w.detach().clone().requires_grad_()
    a, b = flow.split(xe * 2, 3, dim=1)
    c, d = flow.split(we, 3, dim=1)
    (a * c + b.max(dim=1, keepdim=True)[0] * d).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-6)
    (compiled,) = g._compiled.values()
    assert compiled.backward_steps == []


class _LstmLM(flow.nn.Module):
    """The issue's LSTM language model, small: embedding, a 2-layer LSTM, a decoder over the
    vocabulary; the logits of every position as rows (cross_entropy's (N, C))."""

    def __init__(self, vocab=30, embed=8, hidden=12):
        super().__init__()
        self.encoder = flow.nn.Embedding(vocab, embed)
        self.rnn = flow.nn.LSTM(embed, hidden, 2, batch_first=True)
        self.decoder = flow.nn.Linear(hidden, vocab)

    def forward(self, ids):
        out, _ = self.rnn(self.encoder(ids))
        return self.decoder(out).reshape(-1, self.decoder.out_features)


def test_lstm_language_model_backward_is_nodes_and_trains_like_eager():
    flow.manual_seed(0)
    model = _LstmLM()
    rs = np.random.RandomState(3)
    batches = []
    for _ in range(20):
        ids = rs.randint(0, 30, (3, 7))
        batches.append((flow.tensor(ids[:, :-1]), flow.tensor(ids[:, 1:].reshape(-1))))
    g = _compare(model, lambda m: flow.optim.SGD(m.parameters(), lr=0.5, momentum=0.9), batches)
    _closed(g, model)


class _Encoder(flow.nn.Module):
    """The issue's Transformer encoder, small: two encoder layers (dropout on: the graph draws
    eager's masks from the same seed), mean-pooled into a classifier."""

    def __init__(self, d=16, classes=5):
        super().__init__()
        layer = flow.nn.TransformerEncoderLayer(d, 4, dim_feedforward=32, dropout=0.1, batch_first=True)
        self.encoder = flow.nn.TransformerEncoder(layer, 2)
        self.head = flow.nn.Linear(d, classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


def test_transformer_encoder_backward_is_nodes_and_trains_like_eager():
    flow.manual_seed(0)
    model = _Encoder()
    rs = np.random.RandomState(4)
    batches = [(flow.tensor(rs.randn(4, 6, 16).astype(np.float32)), flow.tensor(rs.randint(0, 5, 4)))
               for _ in range(20)]
    g = _compare(model, lambda m: flow.optim.AdamW(m.parameters(), lr=1e-3), batches)
    _closed(g, model)
