"""The last undocumented silent results of tools/fuzz_torch.py (tools/fuzz_torch_known.txt, issue
39): calls that returned here where PyTorch raises. Each now raises the exception class PyTorch
raises for it (tests/error_cases.py), before any kernel runs; the forms that stay valid are checked
beside them. (Those upstream OneFlow accepts on purpose are rows of docs/oneflow_differences.md.)"""
import os

import numpy as np
import pytest
import torch

from error_cases import Case, check_error_case
from harness import flow


def X(lib, grad=False):
    return lib.tensor([[0.5, -1.0, 2.0], [0.25, 3.0, -0.5]], requires_grad=grad)


def P(lib, grad=False):  # probabilities
    return lib.tensor([[0.2, 0.5, 0.9], [0.05, 0.7, 0.3]], requires_grad=grad)


def backward(out):
    (out[0] if isinstance(out, tuple) else out).abs().sum().backward()


# ---- backward through ops PyTorch does not differentiate: its error, not a zero gradient
NO_DERIVATIVE = [
    Case("bernoulli(x, p) backward", lambda lib: backward(lib.bernoulli(P(lib, True), 0.5)), ["bernoulli"]),
    Case("Tensor.bernoulli(p) backward", lambda lib: backward(P(lib, True).bernoulli(1)), ["bernoulli"]),
    Case("histogram backward", lambda lib: backward(lib.histogram(X(lib, True))), ["histogram"]),
    Case("Tensor.histogram backward", lambda lib: backward(X(lib, True).histogram(3)), ["histogram"]),
    Case("histogramdd backward", lambda lib: backward(lib.histogramdd(X(lib, True), 2)), ["histogramdd"]),
    Case("detach_copy backward", lambda lib: backward(lib.detach_copy(X(lib, True))), ["detach_copy"]),
]

# ---- argument forms neither PyTorch nor upstream OneFlow has
FORM_CASES = [
    Case("linalg.matmul third argument", lambda lib: lib.linalg.matmul(X(lib), X(lib).t(), -1), ["linalg_matmul"]),
    Case("linalg.matrix_rank A=", lambda lib: lib.linalg.matrix_rank(A=X(lib)), ["linalg_matrix_rank", "'A'"]),
    Case("pow other=", lambda lib: lib.pow(X(lib), other=X(lib)), ["pow", "other"]),
    Case("Tensor.pow other=", lambda lib: X(lib).pow(other=X(lib)), ["pow", "other"]),
    Case("bernoulli tensor p", lambda lib: lib.bernoulli(P(lib), P(lib)), ["bernoulli", "'p'"]),
    Case("Tensor.bernoulli tensor p", lambda lib: P(lib).bernoulli(P(lib)), ["bernoulli", "'p'"]),
    Case("random_(None)", lambda lib: lib.zeros(3).random_(None), ["random_"]),
    Case("random_(to=None)", lambda lib: lib.zeros(3).random_(to=None), ["random_"]),
    Case("movedim list, int", lambda lib: lib.movedim(X(lib), [1], -1), ["movedim", "source"]),
    Case("movedim int, list", lambda lib: lib.movedim(X(lib), 1, [0]), ["movedim", "destination"]),
    Case("Tensor.moveaxis list, int", lambda lib: X(lib).moveaxis([1], -1), ["source", "destination"]),
    Case("squeeze_copy None", lambda lib: lib.squeeze_copy(X(lib), None), ["squeeze_copy", "dim"]),
    Case("view_copy one int", lambda lib: lib.view_copy(X(lib), -1), ["view_copy", "size"]),
    Case("expand_copy sizes", lambda lib: lib.expand_copy(X(lib), 2, 3), ["expand_copy"]),
    Case("permute_copy dims", lambda lib: lib.permute_copy(X(lib), 1, 0), ["permute_copy"]),
    Case("slice_copy list dim", lambda lib: lib.slice_copy(X(lib), []), ["slice_copy", "'dim'"]),
    Case("logical_and_ complex", lambda lib: X(lib).logical_and_(1j), ["logical_and_", "complex"]),
    Case("logical_or_ complex", lambda lib: X(lib).logical_or_(1j), ["logical_or_", "complex"]),
    Case("logical_xor_ complex", lambda lib: X(lib).logical_xor_(1j), ["logical_xor_", "complex"]),
]

# ---- values PyTorch refuses
VALUE_CASES = [
    Case("from_dlpack of a tensor requiring grad", lambda lib: lib.from_dlpack(X(lib, True)), ["require"],
         exc=BufferError),
    Case("__dlpack__ of a tensor requiring grad", lambda lib: X(lib, True).__dlpack__(), ["require"],
         exc=BufferError),
    Case("detach_ of a view", lambda lib: X(lib)[0].detach_(), ["detach"]),
    Case("detach_ of a transposed view", lambda lib: lib.detach_(X(lib).t()), ["detach"]),
    Case("diag_embed stride overflow", lambda lib: lib.zeros(0, 3).diag_embed(2**62), ["overflow"]),
    Case("empty strides overflow", lambda lib: lib.empty(0, 2**40, 2**40), ["overflow"]),
    Case("tensorinv 0-d", lambda lib: lib.linalg.tensorinv(lib.tensor(2.0)), ["tensorinv"]),
    Case("norm_except_dim 0-size", lambda lib: lib.norm_except_dim(lib.zeros(0, 3)), ["norm_except_dim"]),
    Case("normalize bool out", lambda lib: lib.nn.functional.normalize(X(lib), out=lib.zeros(2, 3, dtype=lib.bool)),
         ["normalize", "bool"]),
    Case("bce_with_logits tensor size_average",
         lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(X(lib), P(lib), None, X(lib), []),
         ["ambiguous"]),
]


@pytest.mark.parametrize("case", NO_DERIVATIVE + FORM_CASES + VALUE_CASES, ids=lambda c: c.id)
def test_refused_as_torch(case):
    check_error_case(case)


def test_forms_that_stay_valid():
    x, p = X(flow), P(flow)
    # bernoulli: probabilities in the input (a zero gradient, as PyTorch's), a number p; in place a
    # tensor of probabilities too
    g = P(flow, True)
    flow.bernoulli(g).sum().backward()
    assert g.grad.tolist() == [[0.0] * 3] * 2
    assert flow.bernoulli(p, 1.0).tolist() == [[1.0] * 3] * 2 and p.bernoulli(0.0).sum().item() == 0
    assert flow.zeros(2, 3).bernoulli_(flow.ones(2, 3)).tolist() == [[1.0] * 3] * 2
    assert flow.zeros(3).bernoulli_().shape == (3,) and flow.zeros(3).bernoulli_(None).shape == (3,)
    r = P(flow, True) * 1
    r.bernoulli_(0.5)
    r.sum().backward()  # in place: zeros, as PyTorch
    # pow's exponent by name; movedim's two forms; the copying forms with a size list
    assert flow.pow(x, exponent=2).tolist() == torch.pow(torch.tensor(x.tolist()), exponent=2).tolist()
    assert x.pow(exponent=flow.tensor(2.0)).shape == (2, 3)
    assert flow.movedim(x, 1, 0).shape == flow.movedim(x, [1], [0]).shape == (3, 2)
    assert flow.linalg.matmul(x, x.t()).shape == (2, 2)
    assert flow.linalg.matrix_rank(input=x).item() == torch.linalg.matrix_rank(input=torch.tensor(x.tolist())).item()
    assert flow.view_copy(x, [6]).shape == (6,) and flow.expand_copy(x[:1], (4, 3)).shape == (4, 3)
    assert flow.squeeze_copy(x.reshape(2, 1, 3), 1).shape == (2, 3) and flow.slice_copy(x, 1, 0, 2).shape == (2, 2)
    assert flow.zeros(3).random_(0, None).shape == (3,) and flow.zeros(3).random_(5).max().item() < 5
    assert x.clone().logical_and_(1).tolist() == [[1.0] * 3] * 2  # upstream's Scalar form
    # histogram without grad; detach_ of a tensor that is no view; normalize into a float out
    h = flow.histogram(x, 3)
    assert not h.hist.requires_grad and h.hist.sum().item() == 6
    y = X(flow, True) * 2
    assert y.detach_() is y and not y.requires_grad
    out = flow.empty(2, 3)
    flow.nn.functional.normalize(x, out=out)
    np.testing.assert_allclose(out.numpy(), torch.nn.functional.normalize(torch.tensor(x.tolist())).numpy(), rtol=1e-6)
    assert flow.norm_except_dim(flow.zeros(3, 0)).shape == torch.norm_except_dim(torch.zeros(3, 0)).shape
    assert flow.linalg.tensorinv(flow.eye(4).reshape(4, 2, 2), ind=1).shape == (2, 2, 4)
    assert flow.zeros(0, 3).diag_embed(1).shape == (0, 4, 4)
    # the legacy size_average / reduce pair, in PyTorch's order
    with pytest.warns(UserWarning):
        loss = flow.nn.functional.binary_cross_entropy_with_logits(x, p, None, False, True)
    assert loss.shape == ()


def test_from_file_checks_the_size_before_mapping(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(4, dtype=np.float32).tofile(path)
    # more elements than the file holds: refused before any read (PyTorch raises too)
    for shared in (False, None):
        with pytest.raises(RuntimeError, match="from_file"):
            flow.from_file(str(path), shared, 5)
        with pytest.raises(RuntimeError):
            torch.from_file(str(path), shared, 5)
    # a size no disk holds: the shared mapping cannot grow the file, a typed error (never SIGBUS)
    for size in (2**62, 2**40):
        with pytest.raises(RuntimeError, match="from_file"):
            flow.from_file(str(path), True, size)
    with pytest.raises(RuntimeError, match="from_file"):
        flow.from_file(str(path), False, 2**62)
    with pytest.raises(RuntimeError, match="from_file"):
        flow.from_file(str(path), True, -1)
    with pytest.raises(RuntimeError, match="from_file"):
        flow.from_file(str(tmp_path / "missing.bin"), False, 1)
    with pytest.raises(TypeError, match="from_file"):
        flow.from_file(str(path), False, 1.5)
    assert os.path.getsize(path) == 16  # the refused calls left the file alone
    # within the file: its values; shared: the mapping grows the file as PyTorch's does
    assert flow.from_file(str(path), False, 3).tolist() == [0.0, 1.0, 2.0]
    grown = flow.from_file(str(path), True, 6)
    assert grown.tolist() == [0.0, 1.0, 2.0, 3.0, 0.0, 0.0] and os.path.getsize(path) == 24
    grown[5] = 7.0
    del grown
    assert np.fromfile(path, dtype=np.float32).tolist()[5] == 7.0
    assert flow.from_file(str(path), True, 0).shape == (0,)
