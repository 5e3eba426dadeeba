"""Errors of the math family (math, special functions, scans, softmax, statistics, norms):
the exception class torch raises (its builtin family), a message naming the op and what was
wrong, and a framework that keeps working. Same conventions as test_errors.py."""

import numpy as np
import pytest
import torch

from error_cases import Case, check_error_case
from harness import SHIM, flow


def _f(lib, *vals):
    return lib.tensor(list(vals), dtype=lib.float32)


def _i(lib, *vals):
    return lib.tensor(list(vals), dtype=lib.int64)




CASES = [
    # integer-only ops on floats / bools
    Case("gcd-float", lambda lib: lib.gcd(_f(lib, 4.0), _f(lib, 6.0)), ["gcd", "float32"]),
    Case("gcd-bool", lambda lib: lib.gcd(lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.bool)),
         ["gcd", "bool"]),
    Case("lcm-float", lambda lib: lib.lcm(_f(lib, 4.0), _i(lib, 6)), ["lcm"]),
    Case("left-shift-float", lambda lib: _f(lib, 1.0) << 1, ["bitwise_left_shift"]),
    Case("right-shift-bool", lambda lib: lib.ones(2, dtype=lib.bool) >> lib.ones(2, dtype=lib.bool),
         ["bitwise_right_shift", "bool"]),
    # float-only ops on integers
    Case("hypot-int", lambda lib: lib.hypot(_i(lib, 3), _i(lib, 4)), ["hypot", "int64"]),
    Case("logaddexp-int", lambda lib: lib.logaddexp(_i(lib, 1), _i(lib, 2)), ["logaddexp"]),
    Case("frac-int", lambda lib: lib.frac(_i(lib, 1)), ["frac"]),
    Case("round-decimals-int", lambda lib: lib.round(_i(lib, 15), decimals=-1), ["round", "decimals"]),
    Case("var-int", lambda lib: lib.var(_i(lib, 1, 2, 3)), ["var", "floating"]),
    Case("std-int-method", lambda lib: _i(lib, 1, 2, 3).std(), ["std", "floating"]),
    Case("nanmean-int", lambda lib: lib.nanmean(_i(lib, 1, 2)), ["nanmean", "int64"]),
    Case("softmax-int", lambda lib: lib.softmax(_i(lib, 1, 2), 0), ["softmax", "int64"]),
    Case("log_softmax-int", lambda lib: lib.log_softmax(_i(lib, 1, 2), 0), ["log_softmax"]),
    Case("logcumsumexp-int", lambda lib: lib.logcumsumexp(_i(lib, 1, 2), 0), ["logcumsumexp"]),
    Case("vector_norm-int", lambda lib: lib.linalg.vector_norm(_i(lib, 1, 2)), ["vector_norm", "int64"]),
    Case("vector_norm-int-dtype", lambda lib: lib.linalg.vector_norm(_f(lib, 1.0), dtype=lib.int64),
         ["vector_norm", "dtype"]),
    Case("norm-int", lambda lib: lib.norm(_i(lib, 1, 2)), ["vector_norm"]),
    Case("clamp-bool", lambda lib: lib.clamp(lib.ones(2, dtype=lib.bool), min=True), ["clamp", "bool"]),
    Case("positive-bool", lambda lib: lib.positive(lib.ones(2, dtype=lib.bool)), ["positive", "bool"]),
    Case("mvlgamma-bool", lambda lib: lib.mvlgamma(lib.ones(2, dtype=lib.bool), 1), ["mvlgamma", "boolean"]),
    Case("softmin-bool", lambda lib: lib.nn.functional.softmin(lib.ones(2, dtype=lib.bool), 0),
         ["softmin", "bool"]),
    # bad values of arguments
    Case("polygamma-negative-n", lambda lib: lib.polygamma(-1, _f(lib, 1.0)), ["polygamma", "negative"]),
    Case("mvlgamma-p0", lambda lib: lib.mvlgamma(_f(lib, 2.0), 0), ["mvlgamma", "p"]),
    Case("div-bad-rounding", lambda lib: lib.div(_f(lib, 1.0), 2, rounding_mode="nearest"),
         ["div", "rounding_mode", "nearest"]),
    Case("isclose-negative-rtol", lambda lib: lib.isclose(_f(lib, 1.0), _f(lib, 1.0), rtol=-1.0),
         ["isclose", "rtol"]),
    Case("isclose-negative-atol", lambda lib: lib.isclose(_f(lib, 1.0), _f(lib, 1.0), atol=-1.0),
         ["isclose", "atol"]),
    Case("clamp-no-bounds", lambda lib: lib.clamp(_f(lib, 1.0)), ["clamp", "min", "max"]),
    Case("matrix_norm-order", lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2), ord=3), ["matrix_norm", "3"]),
    Case("matrix_norm-1d", lambda lib: lib.linalg.matrix_norm(lib.ones(3)), ["matrix_norm", "2 dimensions"]),
    Case("matrix_norm-dims", lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2), 1, (0, 0)), ["matrix_norm", "dims"]),
    Case("linalg_norm-3d-ord", lambda lib: lib.linalg.norm(lib.ones(2, 2, 2), 2), ["linalg.norm", "3d"]),
    Case("vector_norm-inf-empty", lambda lib: lib.linalg.vector_norm(lib.ones(0), float("inf")),
         ["vector_norm", "empty"]),
    Case("var-unbiased-and-correction",
         lambda lib: lib.var(lib.ones(3), dim=0, unbiased=True, correction=1), ["var"]),
    # mismatching dtypes and shapes
    Case("heaviside-dtypes", lambda lib: lib.heaviside(_f(lib, 1.0), _i(lib, 1)), ["heaviside", "dtypes"]),
    Case("isclose-dtypes", lambda lib: lib.isclose(_f(lib, 1.0), _i(lib, 1)), ["isclose", "int64", "float32"]),
    Case("allclose-dtypes", lambda lib: lib.allclose(_f(lib, 1.0), _i(lib, 1)), ["isclose"]),
    Case("addcdiv-integers", lambda lib: lib.addcdiv(_f(lib, 1.0), _i(lib, 1), _i(lib, 2)),
         ["addcdiv", "integer division"]),
    Case("addcmul-shapes", lambda lib: lib.addcmul(lib.ones(2), lib.ones(3), lib.ones(2)), ["addcmul"]),
    Case("clamp-tensor-shapes", lambda lib: lib.clamp(lib.ones(3), min=lib.zeros(2)), ["clamp"]),
    Case("pow-int-negative-number", lambda lib: _i(lib, 2, 3).pow(-1), ["pow", "negative"]),
    Case("pow_-int-negative-number", lambda lib: _i(lib, 2, 3).pow_(-2), ["pow", "negative"]),
    Case("float_power_-float32-self", lambda lib: lib.ones(2).float_power_(2), ["float_power_", "float64"]),
    Case("cumsum_-dtype", lambda lib: lib.ones(2).cumsum_(0, dtype=lib.float64), ["cumsum_", "float64"]),
    Case("clamp_-float-bound-int-self", lambda lib: _i(lib, 1, 2).clamp_(min=0.5), ["clamp_"]),
    # bad dims
    Case("cumsum-bad-dim", lambda lib: lib.cumsum(lib.ones(2, 3), 2), ["cumsum"]),
    Case("cummax-bad-dim", lambda lib: lib.cummax(lib.ones(2, 3), -3), ["cummax"]),
    Case("softmax-bad-dim", lambda lib: lib.softmax(lib.ones(2, 3), 2), ["softmax"]),
    Case("log_softmax-bad-dim", lambda lib: lib.ones(2).log_softmax(1), ["log_softmax"]),
    Case("logsumexp-bad-dim", lambda lib: lib.logsumexp(lib.ones(2, 3), 3), ["logsumexp"]),
    Case("logsumexp-repeated-dim", lambda lib: lib.logsumexp(lib.ones(2, 3), (1, -1)), ["logsumexp", "multiple"]),
    Case("var-bad-dim", lambda lib: lib.var(lib.ones(2, 3), 4), ["var"]),
    Case("std-repeated-dim", lambda lib: lib.std(lib.ones(2, 3), (0, 0)), ["std", "multiple"]),
    Case("nansum-bad-dim", lambda lib: lib.nansum(lib.ones(2), 1), ["nansum"]),
    Case("count_nonzero-bad-dim", lambda lib: lib.count_nonzero(lib.ones(2), 3), ["count_nonzero"]),
    Case("vector_norm-bad-dim", lambda lib: lib.linalg.vector_norm(lib.ones(2), dim=1), ["vector_norm"]),
]




def _still_works():
    x = flow.ones(2, 3)
    assert float(flow.softmax(x, -1).sum().item()) == pytest.approx(2.0)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_error(case):
    check_error_case(case, _still_works)


def test_integer_division_by_zero_with_rounding_mode():
    for mode in ("trunc", "floor"):
        with pytest.raises(RuntimeError) as info:
            flow.div(flow.tensor([1, 2]), flow.tensor([1, 0]), rounding_mode=mode)
        if not SHIM:
            assert "div" in str(info.value)
    _still_works()


def test_failed_inplace_leaves_tensor_unchanged():
    x = flow.tensor([1, 2, 3])
    with pytest.raises(RuntimeError):
        x.clamp_(min=0.5)
    with pytest.raises(RuntimeError):
        x.cumsum_(0, dtype=flow.float32)
    assert x.tolist() == [1, 2, 3]


def test_zeta_order_not_differentiable():
    """zeta(s, q): like torch, no derivative with respect to s (q's exists)."""
    for lib in (torch, flow):
        s = lib.tensor([2.0, 3.0], requires_grad=True)
        q = lib.tensor([1.5, 2.5], requires_grad=True)
        y = lib.special.zeta(s, q)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        if lib is flow and not SHIM:
            assert "zeta" in str(info.value)
    q = flow.tensor([1.5, 2.5], requires_grad=True)
    flow.special.zeta(2.0, q).sum().backward()
    tq = torch.tensor([1.5, 2.5], requires_grad=True)
    torch.special.zeta(2.0, tq).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy(), rtol=1e-6)


def test_not_differentiable_like_torch():
    """nextafter and heaviside record a node whose backward raises, as in torch."""
    for name in ("nextafter", "heaviside"):
        x = flow.tensor([1.0, -2.0], requires_grad=True)
        y = getattr(flow, name)(x, flow.tensor([0.5, 0.5]))
        assert y.requires_grad
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        if not SHIM:
            assert name in str(info.value)
    _still_works()


def test_svd_orders_without_svdvals():
    """ord 2, -2 and 'nuc' need singular values: NotImplementedError naming linalg.svdvals
    while the build has no linalg.svdvals."""
    if hasattr(flow.linalg, "svdvals"):
        pytest.skip("linalg.svdvals exists: the orders are computed (test_spec_examples_math)")
    for ord in (2, -2, "nuc"):
        with pytest.raises(NotImplementedError) as info:
            flow.linalg.matrix_norm(flow.ones(2, 2), ord=ord)
        assert "svdvals" in str(info.value)
    _still_works()
