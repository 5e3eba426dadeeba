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
    Case("trapezoid x None", lambda lib: lib.trapezoid(X(lib), None), ["trapezoid", "'x'", "NoneType"]),
    Case("trapz x None", lambda lib: lib.trapz(X(lib), None), ["trapz", "'x'"]),
    Case("cumulative_trapezoid x None", lambda lib: lib.cumulative_trapezoid(X(lib), None), ["cumulative_trapezoid", "'x'"]),
    Case("chebyshev_polynomial_t n list", lambda lib: lib.special.chebyshev_polynomial_t(X(lib), [-1]),
         ["chebyshev_polynomial_t", "'n'", "list"]),
    Case("shifted_chebyshev_polynomial_w n list", lambda lib: lib.special.shifted_chebyshev_polynomial_w(X(lib), [2]),
         ["shifted_chebyshev_polynomial_w", "'n'"]),
    Case("hermite_polynomial_he n list", lambda lib: lib.special.hermite_polynomial_he(X(lib), [1, 2]),
         ["hermite_polynomial_he", "'n'"]),
    Case("unflatten int sizes", lambda lib: lib.unflatten(X(lib), 1, 3), ["unflatten", "'sizes'", "tuple of ints"]),
    Case("Tensor.unflatten int sizes", lambda lib: X(lib).unflatten(1, -1), ["unflatten", "'sizes'"]),
]


# ---- values PyTorch refuses that were computed: a complex weight of a real result, an in-place
# result self cannot hold, a window past 32 bits, dims out of range, bool operands
VALUE_CASES = [
    Case("lerp complex weight", lambda lib: lib.lerp(X(lib), X(lib), X(lib) * 1j), ["lerp", "weight"]),
    Case("Tensor.lerp complex weight", lambda lib: X(lib).lerp(X(lib), weight=X(lib) * 1j), ["lerp", "weight"]),
    Case("bce_with_logits complex weight",
         lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(X(lib), X(lib).sigmoid(), X(lib) * 1j),
         ["binary_cross_entropy_with_logits", "complex"]),
    Case("bce_with_logits bool pos_weight",
         lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(X(lib), X(lib).sigmoid(), pos_weight=B(lib)[0]),
         ["binary_cross_entropy_with_logits", "bool"]),
    Case("multilabel_margin_loss complex target",
         lambda lib: lib.nn.functional.multilabel_margin_loss(X(lib), I(lib).abs() * (1 + 0j)), ["multilabel_margin_loss"]),
    Case("ldexp_ complex exponent", lambda lib: X(lib).ldexp_(X(lib) * 1j), ["ldexp_", "cast"]),
    Case("ldexp_ into int", lambda lib: I(lib).ldexp_(X(lib)), ["ldexp_", "cast"]),
    Case("flow.ldexp_ into int", lambda lib: lib.ldexp_(I(lib), I(lib)), ["ldexp_", "cast"]),
    Case("softshrink inf", lambda lib: lib.nn.functional.softshrink(X(lib), float("inf")), ["softshrink", "lambda"]),
    Case("avg_pool1d stride 2**62", lambda lib: lib.nn.functional.avg_pool1d(X(lib)[None], [1], 2**62), ["avg_pool1d", "int"]),
    Case("avg_pool1d stride 2**31", lambda lib: lib.avg_pool1d(X(lib)[None], [1], 2**31), ["avg_pool1d", "overflow"]),
    Case("avg_pool2d kernel 2**31", lambda lib: lib.nn.functional.avg_pool2d(X(lib)[None], [2**31, 1], 1), ["avg_pool2d"]),
    Case("flatten 0-d dim 2**62", lambda lib: lib.tensor(1.0).flatten(2**62), ["flatten", "range"]),
    Case("flatten 0-d end_dim 1", lambda lib: lib.flatten(lib.tensor(1.0), 0, 1), ["flatten", "range"]),
    Case("lstsq B of more dims", lambda lib: lib.linalg.lstsq(X(lib), lib.zeros(1, 1, 2, 3)), ["lstsq", "dim"]),
    Case("lu_unpack float pivots", lambda lib: lib.lu_unpack(X(lib), lib.zeros(0)), ["lu_unpack", "int32"]),
    Case("gradient bool", lambda lib: lib.gradient(B(lib)), ["gradient", "bool"]),
    Case("isin bool tensor", lambda lib: lib.isin(X(lib), B(lib)), ["isin", "Bool"]),
    Case("isin bool scalar", lambda lib: lib.isin(X(lib), True), ["isin", "Bool"]),
    Case("isin list", lambda lib: lib.isin(X(lib), [1.0, 2.0]), ["isin", "'test_elements'", "list"]),
    Case("isin tuple elements", lambda lib: lib.isin((1, 2), X(lib)), ["isin", "'elements'", "tuple"]),
    Case("svd_lowrank q 2**62", lambda lib: lib.svd_lowrank(X(lib), 2**62), ["svd_lowrank", "overflow"]),
    Case("cdist compute_mode None", lambda lib: lib.cdist(X(lib), X(lib), 1.5, None), ["cdist", "compute_mode"]),
    Case("cdist compute_mode= None", lambda lib: lib.cdist(X(lib), X(lib), compute_mode=None), ["compute_mode"]),
]

# ---- None / an int / a tensor where a dtype, a device string or a size is required
ARGUMENT_CASES = [
    Case("finfo None", lambda lib: lib.finfo(None), ["finfo", "'type'", "NoneType"]),
    Case("is_autocast_enabled None", lambda lib: lib.is_autocast_enabled(None), ["is_autocast_enabled", "str"]),
    Case("is_autocast_enabled 0", lambda lib: lib.is_autocast_enabled(0), ["is_autocast_enabled", "int"]),
    Case("max other keepdim", lambda lib: lib.max(X(lib), X(lib), True), ["max", "keepdim"]),
    Case("Tensor.min other keepdim", lambda lib: X(lib).min(X(lib), True), ["min", "keepdim"]),
    Case("split bool dim", lambda lib: lib.split(X(lib), 1, True), ["split", "bool"]),
    Case("Tensor.split bool dim", lambda lib: X(lib).split(1, True), ["split", "bool"]),
    Case("Tensor.to two tensors", lambda lib: X(lib).to(X(lib), X(lib)), ["to()", "Tensor"]),
    Case("contiguous positional", lambda lib: X(lib).contiguous(None), ["contiguous"]),
    Case("resize_ tensor", lambda lib: X(lib).resize_(lib.zeros(0)), ["resize_", "'size'", "Tensor"]),
    Case("set_ None", lambda lib: X(lib).set_(None), ["set_", "'source'", "NoneType"]),
    Case("set_ offset None", lambda lib: X(lib).set_(X(lib), None), ["set_", "'storage_offset'"]),
    Case("sum_to_size tensor", lambda lib: X(lib).sum_to_size(lib.zeros(0)), ["sum_to_size", "'size'", "Tensor"]),
    Case("sum_to_size bool", lambda lib: X(lib).sum_to_size(True), ["sum_to_size", "'size'", "bool"]),
]


@pytest.mark.parametrize("case", DTYPE_CASES + FORM_CASES + VALUE_CASES + ARGUMENT_CASES, ids=lambda c: c.id)
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


def test_values_that_still_work():
    x, xt = X(flow), X(torch)
    _same(flow.lerp(x, x * 2, 0.25), torch.lerp(xt, xt * 2, 0.25))
    _same(flow.lerp(x, x * 2, flow.full_like(x, 0.25)), torch.lerp(xt, xt * 2, torch.full_like(xt, 0.25)))
    c, ct = x * (1 + 1j), xt * (1 + 1j)
    _same(flow.lerp(c, c * 2, c), torch.lerp(ct, ct * 2, ct))  # complex operands take a complex weight
    _same(x.clone().ldexp_(flow.tensor([1, 2, 3])), xt.clone().ldexp_(torch.tensor([1, 2, 3])))
    _same(flow.nn.functional.binary_cross_entropy_with_logits(x, x.sigmoid(), x.abs()),
          torch.nn.functional.binary_cross_entropy_with_logits(xt, xt.sigmoid(), xt.abs()))
    _same(flow.nn.functional.binary_cross_entropy_with_logits(x, x.sigmoid(), pos_weight=flow.tensor([1.0, 2.0, 0.5])),
          torch.nn.functional.binary_cross_entropy_with_logits(xt, xt.sigmoid(), pos_weight=torch.tensor([1.0, 2.0, 0.5])))
    _same(flow.nn.functional.softshrink(x, 1e30), torch.nn.functional.softshrink(xt, 1e30))
    _same(flow.nn.functional.avg_pool1d(x[None], [2], 2**31 - 1), torch.nn.functional.avg_pool1d(xt[None], [2], 2**31 - 1))
    assert flow.tensor(1.0).flatten(-1).shape == (1,) and flow.tensor(1.0).flatten(0, 0).shape == (1,)
    A, Bm = flow.tensor([[2.0, 0.0], [0.0, 4.0], [0.0, 0.0]]), flow.tensor([[2.0], [4.0], [0.0]])
    assert flow.linalg.lstsq(A, Bm).solution.reshape(-1).tolist() == pytest.approx([1.0, 1.0])
    assert flow.linalg.lstsq(A, Bm[:, 0]).solution.tolist() == pytest.approx([1.0, 1.0])  # a vector B
    LU, piv = flow.linalg.lu_factor(x[:, :2])
    P, L, U = flow.lu_unpack(LU, piv)
    _same(P @ L @ U, xt[:, :2])
    g = flow.gradient(flow.tensor([1, 4, 9]))  # integers: the default float dtype, as PyTorch
    assert g[0].tolist() == torch.gradient(torch.tensor([1, 4, 9]))[0].tolist()
    assert flow.isin(x, 2.0).tolist() == torch.isin(xt, 2.0).tolist()
    assert flow.isin(2, flow.tensor([1, 2])).tolist() == torch.isin(2, torch.tensor([1, 2])).tolist()
    assert flow.isin(I(flow), flow.tensor([3, 4])).tolist() == torch.isin(I(torch), torch.tensor([3, 4])).tolist()
    assert flow.svd_lowrank(x, 2)[1].shape == (2,)
    assert flow.cdist(x, x).shape == (2, 2) and flow.cdist(x, x, compute_mode="use_mm_for_euclid_dist").shape == (2, 2)
    assert flow.finfo().eps == torch.finfo().eps and flow.finfo(type=flow.float16).max == 65504.0
    assert flow.is_autocast_enabled() is False and flow.is_autocast_enabled("cpu") is False
    assert x.sum_to_size(1, 3).shape == (1, 3) and x.sum_to_size((2, 1)).shape == (2, 1)
    assert x.sum_to_size(flow.Size([3])).tolist() == xt.sum_to_size(torch.Size([3])).tolist()
    _same(flow.trapezoid(x), torch.trapezoid(xt))
    _same(flow.trapz(x, flow.tensor([0.0, 1.0, 3.0])), torch.trapz(xt, torch.tensor([0.0, 1.0, 3.0])))
    _same(flow.cumulative_trapezoid(x, dx=2.0), torch.cumulative_trapezoid(xt, dx=2.0))
    _same(flow.special.chebyshev_polynomial_t(x, 3), torch.special.chebyshev_polynomial_t(xt, 3))
    _same(flow.special.hermite_polynomial_h(0.5, flow.tensor([2])), torch.special.hermite_polynomial_h(0.5, torch.tensor([2])))
    _same(flow.max(x, x * 2), torch.max(xt, xt * 2))
    _same(x.min(1, True).values, xt.min(1, True).values)
    _same(flow.max(x, 0, keepdim=True).indices, torch.max(xt, 0, keepdim=True).indices)
    assert [t.shape for t in flow.split(x, 1, 1)] == [t.shape for t in torch.split(xt, 1, 1)]
    assert [t.shape for t in x.split([1, 2], dim=1)] == [t.shape for t in xt.split([1, 2], dim=1)]
    assert x.to(flow.zeros(1, dtype=flow.float64)).dtype == flow.float64 and x.to("cpu", flow.float16).dtype == flow.float16
    assert x.contiguous(memory_format=flow.contiguous_format).shape == (2, 3)
    assert x.clone().resize_(3).shape == (3,) and x.clone().resize_(flow.Size([1, 2])).shape == (1, 2)
    assert x.clone().set_().shape == (0,) and x.clone().set_(x, 1, (2,)).tolist() == xt.clone().set_(xt, 1, (2,)).tolist()
