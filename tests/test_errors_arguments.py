"""Arguments of the wrong kind that used to be taken (issue 39, found by tools/fuzz_torch.py):
None for a tensor or a number, a complex number for a float or an order, a float for a count,
positional options PyTorch makes keyword-only. Each call raises the exception class PyTorch raises
for it (tests/error_cases.py), naming the argument where PyTorch's parser does."""
import pytest

from error_cases import Case, check_error_case
from harness import flow


def X(lib):
    return lib.tensor([[0.5, -1.0, 2.0], [0.25, 3.0, -0.5]])


# ---- None for a tensor or a number: the binding's conversion refuses it, naming the argument
# (nanobind refused it first with its list of overloads, no argument named)
NONE_CASES = [
    Case("atan2 other", lambda lib: lib.atan2(X(lib), None), ["atan2", "'other'", "NoneType"]),
    Case("Tensor.atan2 other", lambda lib: X(lib).atan2(None), ["atan2", "'other'", "NoneType"]),
    Case("matmul other", lambda lib: lib.matmul(X(lib), None), ["matmul", "'other'"]),
    Case("hardshrink lambd", lambda lib: lib.nn.functional.hardshrink(X(lib), None), ["hardshrink", "'lambd'"]),
    Case("logit eps=None is a number", lambda lib: lib.clamp_min(X(lib), None), ["clamp_min"]),
]

# ---- a complex number where a float is taken: its real part was used
COMPLEX_CASES = [
    Case("dropout p", lambda lib: lib.dropout(X(lib), 1j, True), ["dropout", "'p'", "complex"]),
    Case("celu alpha", lambda lib: lib.celu(X(lib), 1j), ["celu", "'alpha'", "complex"],
         exc=TypeError),  # PyTorch: the RuntimeError of a failed cast; ours the parser's TypeError
    Case("nan_to_num nan", lambda lib: lib.nan_to_num(X(lib), 1j), ["nan_to_num", "'nan'", "complex"]),
    Case("Tensor.normal_ mean", lambda lib: X(lib).normal_(1j), ["normal_", "'mean'", "complex"]),
    Case("Tensor.uniform_ from", lambda lib: X(lib).uniform_(1j), ["uniform_", "complex"]),
    Case("logit eps", lambda lib: lib.logit(X(lib), 1j), ["logit", "'eps'", "complex"]),
    Case("pinverse rcond", lambda lib: lib.pinverse(X(lib), 1j), ["pinverse", "complex"]),
    Case("softplus beta", lambda lib: lib.nn.functional.softplus(X(lib), 1j), ["softplus", "complex"],
         exc=TypeError),  # PyTorch's RuntimeError of a failed cast; ours the parser's TypeError
    Case("norm ord", lambda lib: lib.linalg.vector_norm(X(lib), 1j), ["vector_norm", "non-complex"]),
    Case("Tensor.norm ord", lambda lib: X(lib).norm(1j), ["non-complex"]),
    Case("matrix_norm ord", lambda lib: lib.linalg.matrix_norm(X(lib), 1j), ["matrix_norm", "non-complex"]),
    Case("normalize p", lambda lib: lib.nn.functional.normalize(X(lib), 1j), ["non-complex"]),
    # a complex value into a real tensor (PyTorch's failed conversion)
    Case("fill_ value", lambda lib: X(lib).fill_(1j), ["fill_", "converted"]),
    Case("full_like value", lambda lib: lib.full_like(X(lib), 1j), ["full", "converted"]),
    Case("fill_diagonal_ value", lambda lib: X(lib).fill_diagonal_(1j), ["fill_diagonal_", "converted"]),
    Case("fill_diagonal_ list", lambda lib: X(lib).fill_diagonal_([1]), ["fill_diagonal_", "'fill_value'", "list"]),
    Case("full into float32", lambda lib: lib.full((2,), 1j, dtype=lib.float32), ["full", "converted"]),
]

# ---- counts, orders and options of the wrong kind
OTHER_CASES = [
    Case("fft n nan", lambda lib: lib.fft.fft(X(lib), float("nan")), ["fft", "'n'", "float"]),
    Case("rfft n 1.5", lambda lib: lib.fft.rfft(X(lib), 1.5), ["rfft", "'n'"]),
    Case("fftn s tensor", lambda lib: lib.fft.fftn(X(lib), lib.zeros(0)), ["fftn", "'s'", "Tensor"]),
    Case("fftn s float element", lambda lib: lib.fft.fftn(X(lib), [1.5]), ["fftn", "'s'", "float"]),
    Case("pdist p nan", lambda lib: lib.nn.functional.pdist(X(lib), float("nan")), ["pdist", "non-negative"]),
    Case("pdist p str", lambda lib: lib.nn.functional.pdist(X(lib), "2"), ["pdist", "'p'"]),
    Case("histogram bins bool", lambda lib: lib.histogram(X(lib), True), ["histogram", "'bins'", "bool"]),
    Case("tensor dtype positional", lambda lib: lib.tensor(X(lib), None), ["tensor", "positional"]),
    Case("as_tensor dtype positional", lambda lib: lib.as_tensor(X(lib), None), ["as_tensor", "positional"]),
    Case("Tensor.new_tensor dtype positional", lambda lib: X(lib).new_tensor([1], None), ["positional"]),
    Case("broadcast_shapes of a tensor", lambda lib: lib.broadcast_shapes(lib.zeros(0, 3)), ["broadcast_shapes", "Tensor"]),
    # a tensor for an int list was read element by element (an empty one as no ints)
    Case("constant_pad_nd pad tensor", lambda lib: lib.constant_pad_nd(X(lib), lib.zeros(0)), ["constant_pad_nd", "'pad'", "Tensor"]),
    Case("split_with_sizes tensor", lambda lib: lib.split_with_sizes(X(lib), lib.ones(2)), ["split_with_sizes", "'split_sizes'"]),
    Case("empty_strided size tensor", lambda lib: lib.empty_strided(lib.zeros(0), (1,)), ["empty_strided", "'size'"]),
    Case("frobenius_norm dim tensor", lambda lib: lib.frobenius_norm(X(lib), lib.zeros(0)), ["frobenius_norm", "'dim'"]),
    Case("constant_pad_nd pad float", lambda lib: lib.constant_pad_nd(X(lib), [1.5, 1]), ["constant_pad_nd", "float"]),
    Case("Tensor.size bool dim", lambda lib: X(lib).size(True), ["size", "'dim'", "bool"]),
    Case("Tensor.stride bool dim", lambda lib: X(lib).stride(True), ["stride", "'dim'", "bool"]),
    Case("Tensor.stride dim out of range", lambda lib: X(lib).stride(5), ["stride", "out of range"]),
    Case("expand_copy without size", lambda lib: lib.expand_copy(lib.tensor(1.0)), ["expand_copy", "'size'"]),
    Case("permute_copy without dims", lambda lib: lib.permute_copy(lib.tensor(1.0)), ["permute_copy", "'dims'"]),
    Case("view_copy without size", lambda lib: lib.view_copy(lib.tensor(1.0)), ["view_copy", "'size'"]),
    # values of the right kind that PyTorch refuses
    Case("cov of bool", lambda lib: lib.cov(X(lib) > 0), ["cov", "bool"]),
    Case("corrcoef of bool", lambda lib: lib.corrcoef(X(lib) > 0), ["cov", "bool"]),
    Case("fftshift of 0-d", lambda lib: lib.fft.fftshift(lib.tensor(1.0)), ["fftshift", "shifts"]),
    Case("put float index", lambda lib: X(lib).put(lib.zeros(2), lib.ones(2)), ["put_", "long"]),
    Case("put_ bool index", lambda lib: X(lib).put_(lib.zeros(2) > 0, lib.ones(2)), ["put_", "long"]),
]


@pytest.mark.parametrize("case", NONE_CASES + COMPLEX_CASES + OTHER_CASES, ids=lambda c: c.id)
def test_wrong_kind_of_argument(case):
    check_error_case(case)


def test_right_kinds_still_work():
    x = flow.tensor([[0.5, -1.0, 2.0], [0.25, 3.0, -0.5]])
    assert flow.fft.fft(x, 4).shape == (2, 4)
    assert flow.fft.fftn(x, [2, 2]).shape == (2, 2)
    assert flow.fft.fftn(x, flow.Size([2, 2])).shape == (2, 2)
    assert flow.nn.functional.pdist(x, 1).shape == (1,)
    assert flow.histogram(x, 3).hist.shape == (3,)
    assert flow.tensor([1, 2], dtype=flow.float64).dtype == flow.float64
    assert flow.full((2,), 1j).dtype.is_complex
    z = flow.zeros(2, dtype=flow.complex64).fill_(1j)
    assert z.imag.tolist() == [1.0, 1.0]
    assert flow.zeros(2).fill_(flow.tensor(1 + 0j)).tolist() == [1.0, 1.0]  # a complex tensor: a copy
    assert flow.linalg.vector_norm(x, 1.0).item() == pytest.approx(7.25)
    assert flow.nn.functional.hardshrink(x, 0.6).tolist()[0][0] == 0.0
    assert flow.broadcast_shapes((2, 1), [3], flow.Size([1, 3])) == (2, 3)
    assert flow.constant_pad_nd(x, (1, 1)).shape == (2, 5)
    assert (x.size(-1), x.stride(0), x.t().stride(-1)) == (3, 3, 3)
    assert flow.expand_copy(x[:1], (4, 3)).shape == (4, 3) and flow.permute_copy(x, (1, 0)).shape == (3, 2)
    assert flow.view_copy(x, [6]).shape == (6,) and flow.view_copy(x, dtype=flow.int32).shape == (2, 3)
    assert flow.zeros(2, 2).fill_diagonal_(flow.tensor(3.0)).tolist() == [[3.0, 0.0], [0.0, 3.0]]
    assert [t.shape[0] for t in flow.split_with_sizes(x, [1, 1])] == [1, 1]
    assert flow.empty_strided((2, 2), (1, 2)).stride() == (1, 2)
    assert flow.frobenius_norm(x, (0, 1)).item() == pytest.approx(float(flow.linalg.norm(x)))
    assert flow.cov(flow.tensor([[1, 2, 4]])).item() == pytest.approx(7 / 3)  # ints: the default float dtype
    assert flow.fft.fftshift(flow.arange(4)).tolist() == [2, 3, 0, 1]
    assert flow.zeros(3).put(flow.tensor([0, 2]), flow.ones(2)).tolist() == [1.0, 0.0, 1.0]
