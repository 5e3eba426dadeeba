"""Calls PyTorch refuses that used to compute here (issue 39, the fifth comparison of
tools/fuzz_torch.py): dtypes an op has no meaning for, argument forms neither PyTorch nor upstream
OneFlow has. Each call raises the exception class PyTorch raises for it (tests/error_cases.py);
the forms that still work are checked against PyTorch's values beside them."""
import pytest
import torch

from error_cases import Case, check_error_case
from harness import flow


def X(lib):
    return lib.tensor([[0.5, -1.0, 2.0], [0.25, 3.0, -0.5]])


def B(lib):
    return lib.tensor([[True, False, True], [False, True, True]])


def C(lib):
    return lib.tensor([1 + 1j, 0j, -2 + 0.5j])


def I(lib):
    return lib.tensor([[1, -2, 3], [0, 4, -5]])


# ---- dtypes: complex for sign, integers for the float-only activations, bool where PyTorch's
# formula subtracts or negates it
DTYPE_CASES = [
    Case("sign complex", lambda lib: lib.sign(C(lib)), ["sign", "sgn"], exc=NotImplementedError),
    Case("Tensor.sign complex", lambda lib: C(lib).sign(), ["sign", "sgn"], exc=NotImplementedError),
    Case("Tensor.sign_ complex", lambda lib: C(lib).sign_(), ["sign_", "sgn"], exc=NotImplementedError),
    Case("silu int", lambda lib: lib.nn.functional.silu(I(lib)), ["silu", "int64"]),
    Case("gelu int", lambda lib: lib.nn.functional.gelu(I(lib)), ["gelu", "int64"]),
    Case("gelu tanh int", lambda lib: lib.nn.functional.gelu(I(lib), approximate="tanh"), ["gelu"]),
    Case("silu bool", lambda lib: lib.nn.functional.silu(B(lib)), ["silu"]),
    Case("softsign bool", lambda lib: lib.nn.functional.softsign(B(lib)), ["softsign", "bool"]),
    Case("tanhshrink bool", lambda lib: lib.nn.functional.tanhshrink(B(lib)), ["tanhshrink", "bool"]),
    Case("margin_ranking_loss bool target",
         lambda lib: lib.nn.functional.margin_ranking_loss(X(lib), X(lib), B(lib)), ["margin_ranking_loss", "bool"]),
    Case("multilabel_soft_margin_loss bool target",
         lambda lib: lib.nn.functional.multilabel_soft_margin_loss(X(lib), B(lib)),
         ["multilabel_soft_margin_loss", "bool"]),
]

# ---- forms: a factory without its size, where() with half its operands, one int for a list
FORM_CASES = [
    Case("rand without size", lambda lib: lib.rand(), ["rand", "size"]),
    Case("randn without size", lambda lib: lib.randn(), ["randn", "size"]),
    Case("Tensor.where without x, y", lambda lib: B(lib).where(), ["where"]),
    Case("Tensor.where without y", lambda lib: B(lib).where(X(lib)), ["where"]),
    Case("where condition, None", lambda lib: lib.where(B(lib), None), ["where"]),
    Case("where None operands", lambda lib: lib.where(B(lib), None, None), ["where"]),
    Case("as_strided int stride", lambda lib: X(lib).as_strided([1], 2), ["as_strided", "'stride'", "tuple of ints"]),
    Case("as_strided int size", lambda lib: lib.as_strided(X(lib), 1, [1]), ["as_strided", "'size'", "tuple of ints"]),
    Case("unflatten int sizes", lambda lib: lib.unflatten(X(lib), 1, 3), ["unflatten", "'sizes'", "tuple of ints"]),
    Case("Tensor.unflatten int sizes", lambda lib: X(lib).unflatten(1, -1), ["unflatten", "'sizes'"]),
]


@pytest.mark.parametrize("case", DTYPE_CASES + FORM_CASES, ids=lambda c: c.id)
def test_refused_as_pytorch(case):
    check_error_case(case)


def _same(a, b):
    assert torch.allclose(torch.from_numpy(a.numpy()), b, rtol=1e-5, atol=1e-6), (a, b)


def test_sgn_keeps_complex():
    # sgn is its own op: z / |z| (0 at 0) for complex input, sign for real and bool input, and
    # its in-place form; abs' complex gradient (grad * sgn(z)) still reads it.
    for lib_x in (C, X, I):
        _same(flow.sgn(lib_x(flow)), torch.sgn(lib_x(torch)))
        _same(lib_x(flow).sgn_(), lib_x(torch).sgn_())
    assert flow.sgn(B(flow)).tolist() == torch.sgn(B(torch)).tolist()
    _same(flow.sign(X(flow)), torch.sign(X(torch)))
    z, zt = C(flow).requires_grad_(), C(torch).requires_grad_()
    z.abs().sum().backward()
    zt.abs().sum().backward()
    _same(z.grad, zt.grad)


def test_float_activations_still_work():
    for f in ("silu", "gelu", "softsign", "tanhshrink"):
        _same(getattr(flow.nn.functional, f)(X(flow)), getattr(torch.nn.functional, f)(X(torch)))
    # integers promote to the default float dtype where PyTorch's formula does
    for f in ("softsign", "tanhshrink"):
        _same(getattr(flow.nn.functional, f)(I(flow)), getattr(torch.nn.functional, f)(I(torch)))
    g, gt = X(flow).requires_grad_(), X(torch).requires_grad_()
    flow.nn.functional.gelu(g).sum().backward()
    torch.nn.functional.gelu(gt).sum().backward()
    _same(g.grad, gt.grad)


def test_forms_that_still_work():
    t = flow.tensor([1, -1, 1])
    _same(flow.nn.functional.margin_ranking_loss(X(flow)[0], X(flow)[1], t),
          torch.nn.functional.margin_ranking_loss(X(torch)[0], X(torch)[1], torch.tensor([1, -1, 1])))
    y = flow.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    _same(flow.nn.functional.multilabel_soft_margin_loss(X(flow), y),
          torch.nn.functional.multilabel_soft_margin_loss(X(torch), torch.tensor(y.numpy())))
    assert flow.rand(2, 3).shape == (2, 3) and flow.randn((2,)).shape == (2,)
    assert flow.zeros().shape == () and flow.ones().shape == ()  # OneFlow's 0-d (oneflow_differences.md)
    c = flow.tensor([True, False, True])
    assert c.where(flow.ones(3), flow.zeros(3)).tolist() == [1.0, 0.0, 1.0]  # OneFlow: self is the condition
    assert c.where(2.0, 0.0).tolist() == [2.0, 0.0, 2.0]
    assert [r.tolist() for r in flow.where(c)] == [[0, 2]]
    assert X(flow).as_strided([2], [1]).tolist() == X(torch).as_strided([2], [1]).tolist()
    assert X(flow).as_strided((2, 2), (3, 1), 1).tolist() == X(torch).as_strided((2, 2), (3, 1), 1).tolist()
    assert flow.unflatten(flow.zeros(2, 4), 1, (2, 2)).shape == (2, 2, 2)
    assert flow.zeros(2, 4).unflatten(1, [2, -1]).shape == (2, 2, 2)
