"""Helpers shared by the nn tests: modules defined once for both libraries, weight copying
between flow and torch, and value comparison.

A test builds the same network with ``lib = flow`` and ``lib = torch`` (the builders below take
the library as argument), copies the flow weights into the torch twin through numpy, and then
compares outputs, gradients, names, reprs and hook logs.
"""
import re

import numpy as np
import torch

from harness import flow

RNG = np.random.RandomState(0)


def arr(*shape, dtype=np.float32):
    return RNG.uniform(-1.0, 1.0, size=shape).astype(dtype)


def np_of(t):
    return t.detach().numpy()


def close(actual, expected, rtol=1e-5, atol=1e-6):
    """A flow tensor against a torch tensor / numpy array: shape and values."""
    assert actual is not None, "value is None"
    if isinstance(expected, torch.Tensor):
        expected = np_of(expected)
    expected = np.asarray(expected, dtype=np.float64)
    assert tuple(actual.shape) == expected.shape, f"{tuple(actual.shape)} != {expected.shape}"
    np.testing.assert_allclose(np_of(actual).astype(np.float64), expected, rtol=rtol, atol=atol)


def to_torch_state(flow_module):
    """flow state_dict -> a dict of torch tensors (through numpy)."""
    return {k: torch.from_numpy(np.array(v.numpy())) for k, v in flow_module.state_dict().items()}


def to_flow_state(torch_module):
    return {k: flow.tensor(v.detach().numpy()) for k, v in torch_module.state_dict().items()}


def twins(build):
    """(flow module, torch module) from ``build(lib)``, the torch one holding flow's weights."""
    fm, tm = build(flow), build(torch)
    tm.load_state_dict(to_torch_state(fm))
    return fm, tm


def leaf_pair(a):
    return flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def packed_pair(x, lengths, enforce_sorted, batch_first=False):
    """Leaf twins of `x` and their PackedSequences (flow's, torch's) for the given lengths."""
    xf, xt = leaf_pair(x)
    pf = flow.nn.utils.rnn.pack_padded_sequence(xf, lengths, batch_first, enforce_sorted)
    pt = torch.nn.utils.rnn.pack_padded_sequence(xt, torch.tensor(lengths), batch_first,
                                                 enforce_sorted)
    return xf, xt, pf, pt


def check_forward_backward(fm, tm, *arrays, rtol=1e-5, atol=1e-6):
    """Runs both modules on the same inputs; compares outputs, input grads and parameter grads
    (a random weighting of the output makes every element's gradient matter)."""
    pairs = [leaf_pair(a) for a in arrays]
    out_f = fm(*[p[0] for p in pairs])
    out_t = tm(*[p[1] for p in pairs])
    close(out_f, out_t, rtol, atol)
    weight = arr(*out_t.shape)
    (out_f * flow.tensor(weight)).sum().backward()
    (out_t * torch.tensor(weight)).sum().backward()
    for i, (xf, xt) in enumerate(pairs):
        close(xf.grad, xt.grad, rtol, atol)
    named_t = dict(tm.named_parameters())
    for name, p in fm.named_parameters():
        assert p.grad is not None, f"{name} got no grad"
        close(p.grad, named_t[name].grad, rtol, atol)


_TORCH_BEFORE_2_13 = tuple(int(v) for v in torch.__version__.split(".")[:2]) < (2, 13)


def as_installed_torch_repr(text):
    """Our repr as the installed PyTorch would print it. Ours follow PyTorch 2.13, the reference,
    whose norm layers print `bias=`; older ones (2.11 on the GPU machine) do not."""
    if not _TORCH_BEFORE_2_13:
        return text
    return re.sub(r"(affine=(?:True|False)), bias=(?:True|False)", r"\1", text)


def torch_repr(module):
    """torch's repr with its names spelled as ours."""
    return repr(module).replace("torch.", "oneflow.")


# ---------------------------------------------------------------------------
# Networks defined once for both libraries.


def make_mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Tanh())


def make_net(lib):
    """Parameters, a persistent and a non-persistent buffer, nested and shared submodules."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.act = nn.Sigmoid()
            self.register_buffer("count", lib.zeros(1))

        def forward(self, x):
            return self.act(self.fc(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(lib.ones(3))
            self.block = Block()
            self.head = nn.Sequential(nn.Linear(3, 2), nn.GELU())
            self.shared = self.block  # the same module twice
            self.register_buffer("stats", lib.arange(3.0))
            self.register_buffer("cache", lib.zeros(2), persistent=False)

        def forward(self, x):
            return self.head(self.shared(self.block(x) * self.scale))

    return Net()
