"""In-place ops in build() on captured tensors (Note [Writes to free tensors], src/graph/free_writes.h):
the graph's state (its modules' buffers) is written once per call, as eager writes it; a free tensor
(one build() closes over) is written in a per-call copy and left as it was, as upstream OneFlow's
graph leaves it (its test_graph_free_eager_tensor.py); PyTorch is the reference for the values."""
import numpy as np
import pytest
import torch

import oneflow as flow


def _ops():
    # (name, oneflow in-place step, torch in-place step): each reads the tensor, then writes it
    return [
        ("add_", lambda t, o: t.add_(o), lambda t, o: t.add_(o)),
        ("mul_", lambda t, o: t.mul_(o), lambda t, o: t.mul_(o)),
        ("masked_fill_", lambda t, o: t.masked_fill_(o > 0.5, -3.0), lambda t, o: t.masked_fill_(o > 0.5, -3.0)),
        ("copy_", lambda t, o: t.copy_(o * 2 + t), lambda t, o: t.copy_(o * 2 + t)),
        ("setitem", lambda t, o: t.__setitem__(slice(1, 3), o[1:3] - t[0]),
         lambda t, o: t.__setitem__(slice(1, 3), o[1:3] - t[0])),
        ("view add_", lambda t, o: t[1:].add_(o[:-1]), lambda t, o: t[1:].add_(o[:-1])),
    ]


OPS = _ops()
IDS = [n for n, _, _ in OPS]


class _Holder(flow.nn.Module):
    def __init__(self, buf):
        super().__init__()
        self.register_buffer("buf", buf)


@pytest.mark.parametrize("name,op,top", OPS, ids=IDS)
def test_buffer_is_written_once_per_call(name, op, top):
    """A module buffer (the graph's state): two graph calls write it as two eager steps do."""
    init = np.random.RandomState(0).randn(5).astype(np.float32)
    other = np.random.RandomState(1).rand(5).astype(np.float32)
    m = _Holder(flow.tensor(init))

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m

        def build(self, o):
            op(self.m.buf, o)
            return self.m.buf * 1

    g = G()
    t = torch.tensor(init)
    for _ in range(2):
        out = g(flow.tensor(other))
        top(t, torch.tensor(other))
        np.testing.assert_allclose(out.numpy(), t.numpy(), rtol=1e-6)
        np.testing.assert_allclose(m.buf.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name,op,top", OPS, ids=IDS)
def test_free_tensor_is_left_as_it_was(name, op, top):
    """A free tensor: each call writes a copy of it (the result is one eager step from its
    values), the tensor itself keeps its values; returned, the graph gives the written copy."""
    init = np.random.RandomState(2).randn(5).astype(np.float32)
    other = np.random.RandomState(3).rand(5).astype(np.float32)
    x = flow.tensor(init)

    class G(flow.nn.Graph):
        def build(self, o):
            op(x, o)
            return x, x + 1

    g = G()
    t = torch.tensor(init)
    top(t, torch.tensor(other))
    for _ in range(2):
        same, plus = g(flow.tensor(other))
        np.testing.assert_allclose(same.numpy(), t.numpy(), rtol=1e-6)
        np.testing.assert_allclose(plus.numpy(), t.numpy() + 1, rtol=1e-6)
        np.testing.assert_array_equal(x.numpy(), init)
    assert "clone(" in g._programs()[0]


def test_eager_then_graph_applies_the_op_once():
    """Upstream's autotest runs an in-place method eagerly, then in a graph capturing the same
    tensor (a non-leaf requiring grad): the tensor is written once, and its gradient is eager's."""
    base_np = np.random.RandomState(4).randn(3, 4).astype(np.float32)
    end_np = np.random.RandomState(5).randn(3, 4).astype(np.float32)
    for method, args in (("sin_", ()), ("lerp_", (end_np, 0.3)), ("addcmul_", (end_np, end_np))):
        base = flow.tensor(base_np, requires_grad=True)
        tbase = torch.tensor(base_np, requires_grad=True)
        x, tx = base + 0.01, tbase + 0.01
        fargs = [flow.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        targs = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        getattr(x, method)(*fargs)
        getattr(tx, method)(*targs)

        class G(flow.nn.Graph):
            def build(self):
                return getattr(x, method)(*fargs)

        G()()
        np.testing.assert_allclose(x.numpy(), tx.detach().numpy(), rtol=1e-5, err_msg=method)
        (x * x).sum().backward()
        (tx * tx).sum().backward()
        np.testing.assert_allclose(base.grad.numpy(), tbase.grad.numpy(), rtol=1e-5, err_msg=method)


def test_values_made_in_build_are_written_in_place():
    """Tensors made in build() and intermediate values are written in place (no copy)."""
    class G(flow.nn.Graph):
        def build(self, a):
            z = flow.zeros(3)
            z.add_(a)
            h = a * 2
            h.mul_(3)
            return z, h

    g = G()
    z, h = g(flow.ones(3))
    np.testing.assert_array_equal(z.numpy(), [1, 1, 1])
    np.testing.assert_array_equal(h.numpy(), [6, 6, 6])
    assert "clone(" not in g._programs()[0]


@pytest.mark.parametrize("name,op,top", OPS, ids=IDS)
def test_input_written_in_a_copy(name, op, top):
    """A graph input written in place: the caller's tensor keeps its values (OneFlow copies inputs
    in: upstream's test_graph_inplace_add.py); the graph's results are eager's on a copy."""
    init = np.random.RandomState(6).randn(5).astype(np.float32)
    other = np.random.RandomState(7).rand(5).astype(np.float32)

    class G(flow.nn.Graph):
        def build(self, x, o):
            before = x * 1
            op(x, o)
            return x, before

    g = G()
    t = torch.tensor(init)
    top(t, torch.tensor(other))
    x = flow.tensor(init)
    for _ in range(2):
        written, before = g(x, flow.tensor(other))
        np.testing.assert_allclose(written.numpy(), t.numpy(), rtol=1e-6)
        np.testing.assert_array_equal(before.numpy(), init)
        np.testing.assert_array_equal(x.numpy(), init)


def test_inplace_add_of_inputs_as_upstream():
    """upstream's test_graph_inplace_add.py: `x += y` in build; the result is x + y for the x the
    caller still holds."""
    class G(flow.nn.Graph):
        def build(self, x, y):
            x += y
            return x

    x, y = flow.randn(10, 10), flow.ones(10)
    z = G()(x, y)
    np.testing.assert_allclose(z.numpy(), (x + y).numpy(), rtol=1e-6)


def test_parameter_of_an_unheld_module_is_state():
    """A leaf requiring grad (a parameter, here of a module the graph does not hold) is state: an
    in-place update of it under no_grad in build() writes it once per call, as eager."""
    lin = flow.nn.Linear(3, 2)
    w0 = lin.weight.numpy().copy()

    class G(flow.nn.Graph):
        def build(self, x):
            with flow.no_grad():
                lin.weight.mul_(0.5)
            return lin(x)

    g = G()
    for k in (1, 2):
        out = g(flow.ones(1, 3))
        np.testing.assert_allclose(lin.weight.numpy(), w0 * 0.5 ** k, rtol=1e-6)
        np.testing.assert_allclose(out.numpy(), (flow.ones(1, 3) @ lin.weight.T + lin.bias).detach().numpy(),
                                   rtol=1e-6)


def test_graph_trace_of_a_function():
    """`@flow.nn.Graph.trace` (OneFlow's): the function as an inference graph's build(); its
    in-place write of a free tensor is a copy's (upstream's test_slice `*_graph` cases)."""
    np_arr = np.zeros((2, 3, 4), np.float32)
    x = flow.tensor(np_arr)

    @flow.nn.Graph.trace
    def set_last(k):
        x[-1] = k
        return x

    assert isinstance(set_last, flow.nn.Graph) and type(set_last).__name__ == "set_last_graph"
    want = np_arr.copy()
    want[-1] = 1
    np.testing.assert_array_equal(set_last(1.0).numpy(), want)
    np.testing.assert_array_equal(x.numpy(), np_arr)
    with pytest.raises(TypeError, match="takes a function"):
        flow.nn.Graph.trace(flow.nn.ReLU())


def test_input_copy_seen_by_a_python_step():
    """The input's copy (`input_copy_`) replaces it in its slot, so a Python step of the program (an
    autograd.Function) after the write reads the written copy, as eager code would."""
    class Cube(flow.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * a * a

        @staticmethod
        def backward(ctx, g):
            return g

    class G(flow.nn.Graph):
        def build(self, x):
            x.mul_(2)
            return Cube.apply(x), x

    init = np.arange(4, dtype=np.float32)
    x = flow.tensor(init)
    g = G()
    for _ in range(2):
        cubed, written = g(x)
        np.testing.assert_allclose(cubed.numpy(), (2 * init) ** 3)
        np.testing.assert_allclose(written.numpy(), 2 * init)
        np.testing.assert_array_equal(x.numpy(), init)
    assert "<python" in g._programs()[0] and "%0 = input_copy_(%0)" in g._programs()[0].replace(":f32[4]", "")


def test_saved_program_keeps_the_copies():
    """runtime_state_dict / load_runtime_state_dict: the copies are nodes of the saved program
    (`input_copy_` a hand-written node found again by name, `clone` a table op)."""
    init = np.arange(3, dtype=np.float32)
    free = flow.tensor([10.0, 20.0, 30.0])
    built = []

    class G(flow.nn.Graph):
        def build(self, x):
            built.append(1)
            x.add_(1)
            free.mul_(x)
            return free + 0, x

    g = G()
    g.enable_save_runtime_state_dict()
    want = g(flow.tensor(init))
    state = g.runtime_state_dict()
    g2 = G()
    g2.load_runtime_state_dict(state)
    x = flow.tensor(init)
    got = g2(x)
    assert len(built) == 1  # (the loaded graph did not trace)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(got[0].numpy(), [10.0, 40.0, 90.0])
    np.testing.assert_array_equal(x.numpy(), init)
    np.testing.assert_array_equal(free.numpy(), [10.0, 20.0, 30.0])
