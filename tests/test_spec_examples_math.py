"""The spec's eager examples of the math family (INVENTORY groups A/B: std/var, norm /
linalg.norm, softmax, clamp/clip) with their documented outputs.

Spec files: /work/shared/spec/000_*.txt (Tensor and eager ops) and 002_*.txt (nn). Older examples
print shape-(1,) reductions where current OneFlow (and PyTorch) return 0-d tensors; the values
are what must match (spec/README.md, decision 1).
"""

import numpy as np
import pytest

from harness import flow


def _close(t, expected, atol=1e-4):
    np.testing.assert_allclose(np.asarray(t.numpy(), dtype=np.float64), np.asarray(expected), atol=atol, rtol=0)


# -- std (000: "std(dim, unbiased=True, keepdim=False)") ---------------------------------


def test_std_example():
    # The spec prints 0.8164968 for flow.std(input, dim=0) on [1, 2, 3]: that is the biased
    # estimate, while the same page documents unbiased=True (Bessel's correction) as the
    # default. We implement the documented behaviour (as OneFlow and PyTorch do today): the
    # default gives 1.0 and unbiased=False gives the printed value (docs/decisions.md).
    arr = np.array([1.0, 2.0, 3.0])
    x = flow.Tensor(arr)
    out = flow.std(x, dim=0)
    assert out.dtype == flow.float32
    _close(out, 1.0, atol=1e-7)
    _close(flow.std(x, dim=0, unbiased=False), 0.8164968, atol=1e-6)
    _close(x.std(0, False), 0.8164968, atol=1e-6)
    _close(x.std(dim=0, unbiased=False, keepdim=True), [0.8164968], atol=1e-6)


# -- var (000: "var(dim=None, keepdim=False)", example flow.var(input, 1, True)) -------------


def test_var_example():
    np_arr = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    x = flow.Tensor(np_arr)
    out = flow.var(x, 1, True)  # dim=1, unbiased=True (OneFlow's and PyTorch's positional order)
    assert tuple(out.shape) == (2, 4, 5)
    _close(out, np.var(np_arr.astype(np.float32), axis=1, ddof=1), atol=1e-5)
    kept = x.var(1, True, True)
    assert tuple(kept.shape) == (2, 1, 4, 5)
    _close(flow.var(x), np.var(np_arr.astype(np.float32), ddof=1), atol=1e-5)
    _close(x.var(dim=(1, 3), unbiased=False), np.var(np_arr.astype(np.float32), axis=(1, 3)), atol=1e-5)


# -- softmax (000: Softmax example; Tensor.softmax / flow.softmax) -----------------------------


_SOFTMAX_X = [[[-0.46716809, 0.40112534, 0.61984003], [-1.31244969, -0.42528763, 1.47953856]]]
_SOFTMAX_OUT = [[[0.1575, 0.3754, 0.4671], [0.0507, 0.1230, 0.8263]]]


def test_softmax_example():
    x = flow.Tensor(np.array(_SOFTMAX_X))
    _close(flow.softmax(x, dim=2), _SOFTMAX_OUT)
    _close(x.softmax(2), _SOFTMAX_OUT)
    _close(flow.nn.functional.softmax(x, dim=2), _SOFTMAX_OUT)
    _close(flow.special.softmax(x, 2), _SOFTMAX_OUT)
    y = flow.tensor(_SOFTMAX_X, dtype=flow.float32)
    out = flow.softmax(y, dim=2)
    assert out.dtype == flow.float32 and tuple(out.shape) == (1, 2, 3)
    _close(out.sum(2), [[1.0, 1.0]], atol=1e-6)


def test_log_softmax_example():
    # 002: nn.LogSoftmax(dim=1) example, through the functional forms.
    x = flow.Tensor(np.array([[0.4296, -1.1957, 2.5463], [1.2552, -1.5747, 0.6923]]))
    expected = [[-2.2513, -3.8766, -0.1346], [-0.4877, -3.3176, -1.0506]]
    _close(flow.log_softmax(x, 1), expected)
    _close(flow.nn.functional.log_softmax(x, dim=1), expected)
    _close(x.log_softmax(1), expected)


# -- clamp / clip (000: clip_by_value example; eager clamp/clip "see oneflow.clamp") ---------


def test_clamp_example():
    x = flow.tensor(np.array([-2, 1, 4, 7], dtype=np.float32))
    expected = [-1.0, 1.0, 4.0, 5.0]
    _close(flow.clamp(x, min=-1, max=5), expected, atol=0)
    _close(flow.clip(x, -1, 5), expected, atol=0)
    _close(x.clamp(-1, 5), expected, atol=0)
    _close(x.clip(min=-1, max=5), expected, atol=0)
    y = x.clone()
    assert y.clamp_(-1, 5) is y
    _close(y, expected, atol=0)
    with pytest.raises(RuntimeError):  # the spec: min and max cannot both be None
        flow.clamp(x)


# -- norms (000: Tensor.norm "see oneflow.linalg.norm"; 002: clip_grad_norm_ values) --------


def test_norm_values_of_clip_grad_norm_example():
    # 002's clip_grad_norm_ example: the total norms of the gradients are 6 (norm_type 1.0) and
    # 1.0394 (norm_type 2.0); the same norms through the norm ops.
    x1 = flow.tensor([[2, 3, 4], [1.5, 2.6, 3.7]], dtype=flow.float32, requires_grad=True)
    flow.relu(x1).sum().backward()
    _close(flow.linalg.vector_norm(x1.grad, 1.0), 6.0, atol=1e-6)
    _close(flow.norm(x1.grad, p=1), 6.0, atol=1e-6)
    _close(x1.grad.norm(1), 6.0, atol=1e-6)
    x2 = flow.tensor([[-2, -3, -4], [2.5, 0, 3.2]], dtype=flow.float32, requires_grad=True)
    flow.atan(x2).sum().backward()
    _close(flow.linalg.norm(x2.grad), 1.0394)
    _close(flow.norm(x2.grad), 1.0394)
    _close(x2.grad.norm(), 1.0394)
    _close(flow.linalg.vector_norm(x2.grad, 2.0), 1.0394)
    # ... and clipping by the ratio max_norm / norm gives the printed gradients.
    _close(x2.grad * (0.5 / flow.linalg.norm(x2.grad)),
           [[0.0962, 0.0481, 0.0283], [0.0663, 0.4810, 0.0428]])


def test_tensor_norm_spec_signature():
    # Tensor.norm(ord=None, dim=None, keepdim=False): "see oneflow.linalg.norm".
    a = flow.tensor([[1.0, -2.0], [3.0, 4.0]])
    _close(a.norm(), np.sqrt(30.0), atol=1e-6)
    _close(a.norm(ord=1), 6.0, atol=1e-6)  # matrix 1-norm (max column sum), as linalg.norm
    _close(a.norm(ord=float("inf")), 7.0, atol=1e-6)
    _close(a.norm(dim=1), [np.sqrt(5.0), 5.0], atol=1e-6)
    _close(a.norm(ord=1, dim=1, keepdim=True), [[3.0], [7.0]], atol=1e-6)
    _close(flow.linalg.norm(a, "fro"), np.sqrt(30.0), atol=1e-6)
    _close(flow.linalg.norm(a, ord=-1), 4.0, atol=1e-6)
