"""Calls that returned a meaningless result where PyTorch refuses (issue 39, found by
tools/fuzz_torch.py, the hostile catalogue run on both libraries): each now raises PyTorch's
exception class, and the values OneFlow's signatures document keep working."""
import re

import numpy as np
import pytest
import torch

import oneflow as flow

X = [[0.5, -1.0, 2.0], [0.25, 3.0, -0.5]]


def both(fn):
    """fn(lib, x) in both libraries: (oneflow's outcome, torch's)."""
    out = []
    for lib in (flow, torch):
        try:
            out.append(fn(lib, lib.tensor(X)))
        except Exception as e:  # noqa: BLE001 -- the class is compared
            out.append(e)
    return out


# ---- bool parameters: the binding read any object's truth value (a str, a list, 1.5 were True)

BOOL_CALLS = {
    "linalg.svd full_matrices": lambda lib, x, v: lib.linalg.svd(x, v)[1],  # S: no sign choice
    "sum keepdim": lambda lib, x, v: lib.sum(x, 1, v),
    "nn.functional.poisson_nll_loss log_input": lambda lib, x, v: lib.nn.functional.poisson_nll_loss(x, x.abs(), v),
    "sort descending": lambda lib, x, v: lib.sort(x, 1, v),
    "Tensor.argmax keepdim": lambda lib, x, v: x.argmax(1, v),
    "logsumexp keepdim": lambda lib, x, v: lib.logsumexp(x, 1, v),
}


@pytest.mark.parametrize("value", ["abc", 1.5, [1], 1 + 2j, {"a": 1}, object()], ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("name", sorted(BOOL_CALLS))
def test_bool_parameter_refuses_what_is_not_a_bool(name, value):
    f, t = both(lambda lib, x: BOOL_CALLS[name](lib, x, value))
    assert isinstance(t, TypeError), f"torch accepts {value!r}: {t}"
    assert isinstance(f, TypeError), f"oneflow returns {f}"
    # PyTorch's sentence, naming the argument (Note [Argument names], src/api/arg_names.h)
    assert re.search(r"argument '\w+' \(position \d+\) must be bool, not ", str(f)), str(f)


@pytest.mark.parametrize("name", sorted(BOOL_CALLS))
def test_bool_parameter_takes_bools_and_oneflows_ints(name):
    # a bool (NumPy's too) gives torch's result; an int or a one-element integer tensor is
    # OneFlow's binding rule (python_arg.cpp kBOOL) and reads as its truth value
    for v_flow, v_torch in ((True, True), (False, False), (np.bool_(True), True), (1, True), (0, False),
                            (flow.tensor(1), True)):
        got = BOOL_CALLS[name](flow, flow.tensor(X), v_flow)
        want = BOOL_CALLS[name](torch, torch.tensor(X), v_torch)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_bool_parameter_refuses_a_float_tensor():
    with pytest.raises(TypeError, match=r"^svd\(\): argument 'some' \(position 2\) must be bool, not a Tensor of "
                                        r"1 element\(s\) of dtype float32"):
        flow.svd(flow.tensor(X), flow.tensor(1.0))


# ---- the conjugate / negative bits of a non-tensor: False (and the object back) before

@pytest.mark.parametrize("name", ["is_conj", "is_neg", "resolve_conj", "resolve_neg"])
@pytest.mark.parametrize("value", [None, "abc", 0, [1.0]], ids=lambda v: type(v).__name__)
def test_conj_bits_of_a_non_tensor(name, value):
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' \(position 1\) must be Tensor, not"):
        getattr(flow, name)(value)
    with pytest.raises(TypeError):
        getattr(torch, name)(value)


@pytest.mark.parametrize("name", ["is_conj", "is_neg", "resolve_conj", "resolve_neg"])
def test_conj_bits_of_a_tensor(name):
    f, t = getattr(flow, name)(flow.tensor(X)), getattr(torch, name)(torch.tensor(X))
    if isinstance(t, bool):
        assert f is t
    else:
        assert f.tolist() == t.tolist()


# ---- the orthogonal polynomials of a complex input: its real part was used, the rest dropped

POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYNOMIALS)
@pytest.mark.parametrize("which", ["input", "n"])
def test_polynomial_of_a_complex_tensor(name, which):
    def call(lib):
        x = lib.tensor(X)
        c = x.to(lib.complex64)
        return getattr(lib.special, name)(c, x) if which == "input" else getattr(lib.special, name)(x, c)

    with pytest.raises(NotImplementedError):
        call(torch)
    with pytest.raises(NotImplementedError, match=rf"^{name}\(\): not implemented for 'complex64'"):
        call(flow)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_of_a_real_tensor_still_matches(name):
    n = [[0, 1, 2], [3, 4, 5]]
    got = getattr(flow.special, name)(flow.tensor(X), flow.tensor(n))
    want = getattr(torch.special, name)(torch.tensor(X), torch.tensor(n))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


# ---- the Python-level switches: any object's truth value was taken (a tensor, a str, None)

SWITCHES = {
    "set_grad_enabled": lambda lib, v: lib.set_grad_enabled(v),
    "set_warn_always": lambda lib, v: lib.set_warn_always(v),
    "set_autocast_cpu_enabled": lambda lib, v: lib.set_autocast_cpu_enabled(v),
    "set_autocast_enabled": lambda lib, v: lib.set_autocast_enabled("cpu", v),
    "set_autocast_cache_enabled": lambda lib, v: lib.set_autocast_cache_enabled(v),
}
_GETTERS = {"set_grad_enabled": "is_grad_enabled", "set_warn_always": "is_warn_always_enabled",
            "set_autocast_cpu_enabled": "is_autocast_cpu_enabled", "set_autocast_cache_enabled": "is_autocast_cache_enabled"}


@pytest.mark.parametrize("value", ["abc", None, 1, [True], "tensor"], ids=str)
@pytest.mark.parametrize("name", sorted(SWITCHES))
def test_switch_refuses_what_is_not_a_bool(name, value):
    for lib in (torch, flow):
        v = lib.tensor(1.0) if value == "tensor" else value
        before = getattr(lib, _GETTERS.get(name, "is_grad_enabled"))()
        # (torch's set_warn_always raises RuntimeError "setWarnOnlyOnce expects a bool"; ours the
        # TypeError of every other switch)
        with pytest.raises(TypeError if lib is flow or name != "set_warn_always" else RuntimeError):
            SWITCHES[name](lib, v)
        assert getattr(lib, _GETTERS.get(name, "is_grad_enabled"))() == before  # nothing changed
    with pytest.raises(TypeError, match=r"\(\): argument '\w+' \(position \d\) must be bool, not"):
        SWITCHES[name](flow, "abc")


@pytest.mark.parametrize("name", sorted(_GETTERS))
def test_switch_takes_bools(name):
    get = getattr(flow, _GETTERS[name])
    before = get()
    try:
        for v in (not before, np.bool_(before)):
            SWITCHES[name](flow, v)
            assert get() == bool(v)
    finally:
        SWITCHES[name](flow, before)


# ---- value and dtype checks PyTorch makes before computing

REFUSED = {
    # a modulo took any dim (2**62 too); an out-of-range dim is PyTorch's IndexError
    "matrix_norm nuc, dim 2**62": (IndexError, lambda lib, x: lib.linalg.matrix_norm(x, "nuc", [2**62, -1]),
                                   r"^linalg.matrix_norm: Dimension out of range \(expected to be in range of \[-2, 1\]"),
    "nuclear_norm, dim 5": (IndexError, lambda lib, x: lib.nuclear_norm(x, [5, -1]), "Dimension out of range"),
    "matrix_norm 2, same dims": (RuntimeError, lambda lib, x: lib.linalg.matrix_norm(x, 2, [0, -2]),
                                 "dims must be different"),
    "vecdot float32 . int64": (RuntimeError, lambda lib, x: lib.linalg.vecdot(x, x.long()),
                               r"^linalg.vecdot\(\): Expected x and y to have the same dtype"),
    "vecdot float32 . float64": (RuntimeError, lambda lib, x: lib.linalg.vecdot(x, x.double()), "same dtype"),
    "chain_matmul of one 0-d tensor": (RuntimeError, lambda lib, x: lib.chain_matmul(x[0, 0]),
                                       r"^chain_matmul\(\): Tensor dimension is 0, expected 2 instead"),
    "pdist complex": (RuntimeError, lambda lib, x: lib.nn.functional.pdist(x.to(lib.complex64)),
                      "only supports floating-point dtypes"),
    "cross float32 x int64": (RuntimeError, lambda lib, x: lib.cross(x, x.long(), dim=1),
                              r"^cross\(\): expected scalar type float32 but found int64"),
    "linalg.cross float32 x float64": (RuntimeError, lambda lib, x: lib.linalg.cross(x, x.double(), dim=1),
                                       r"^linalg.cross\(\): expected scalar type float32 but found float64"),
    "kl_div int64 target": (RuntimeError, lambda lib, x: lib.nn.functional.kl_div(x, x.long(), reduction="sum"),
                            r"^kl_div\(\): Integral inputs not supported \(target is int64\)"),
    "kl_div bool target": (RuntimeError, lambda lib, x: lib.nn.functional.kl_div(x, x > 0, reduction="sum"),
                           "Integral inputs not supported"),
    "cosine_similarity eps < 0": (RuntimeError, lambda lib, x: lib.nn.functional.cosine_similarity(x, x, 1, -1.0),
                                  r"^cosine_similarity\(\): eps must be non-negative, got: -1"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_pytorch_refuses(name):
    kind, fn, msg = REFUSED[name]
    with pytest.raises(kind):
        fn(torch, torch.tensor(X))
    with pytest.raises(kind, match=msg):
        fn(flow, flow.tensor(X))


ACCEPTED = {
    "matrix_norm nuc (1, 0)": lambda lib, x: lib.linalg.matrix_norm(x, "nuc", [1, 0]),
    "matrix_norm 2 (-1, -2), keepdim": lambda lib, x: lib.linalg.matrix_norm(x, 2, [-1, -2], True),
    "vecdot": lambda lib, x: lib.linalg.vecdot(x, x * 2),
    "vecdot complex": lambda lib, x: lib.linalg.vecdot(x.to(lib.complex64), (x * 1j).to(lib.complex64)),
    "chain_matmul of one matrix": lambda lib, x: lib.chain_matmul(x),
    "pdist": lambda lib, x: lib.nn.functional.pdist(x),
    "kl_div float64 target": lambda lib, x: lib.nn.functional.kl_div(x, x.double().abs(), reduction="sum"),
    "cross": lambda lib, x: lib.cross(x, x.flip(1) * 2, dim=1),
    "linalg.cross float64": lambda lib, x: lib.linalg.cross(x.double(), x.double().flip(1), dim=1),
    "cosine_similarity eps 0": lambda lib, x: lib.nn.functional.cosine_similarity(x, x * 2, 1, 0.0),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_valid_calls_still_match(name):
    got = ACCEPTED[name](flow, flow.tensor(X))
    want = ACCEPTED[name](torch, torch.tensor(X))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


# ---- a Python number where PyTorch and OneFlow take only a Tensor: the binding made it a 0-d
# tensor (the op table declared these parameters `TensorLike`); upstream OneFlow's signatures
# (functional_api.yaml) have no Scalar form for them either, so they are `Tensor` now.

def _int_pair(lib, x):
    return (x * 4).to(lib.int64)


# name -> (call with the number in place of a tensor, the message's op)
TENSOR_ONLY = {
    "maximum other": (lambda lib, x: lib.maximum(x, 2), "maximum"),
    "maximum input": (lambda lib, x: lib.maximum(2, x), "maximum"),
    "minimum other": (lambda lib, x: lib.minimum(x, 1.5), "minimum"),
    "Tensor.minimum": (lambda lib, x: x.minimum(2), "minimum"),
    "atan2 other": (lambda lib, x: lib.atan2(x, 2), "atan2"),
    "Tensor.arctan2": (lambda lib, x: x.arctan2(2), "atan2"),
    "Tensor.atan2_": (lambda lib, x: x.atan2_(2**62), "atan2_"),
    "hypot other": (lambda lib, x: lib.hypot(x, 2.0), "hypot"),
    "Tensor.hypot_": (lambda lib, x: x.hypot_(2.0), "hypot_"),
    "logaddexp other": (lambda lib, x: lib.logaddexp(x, 1), "logaddexp"),
    "logaddexp2 input": (lambda lib, x: lib.logaddexp2(1, x), "logaddexp2"),
    "nextafter other": (lambda lib, x: lib.nextafter(x, 1.0), "nextafter"),
    "fmax other": (lambda lib, x: lib.fmax(x, 1.0), "fmax"),
    "Tensor.fmin": (lambda lib, x: x.fmin(1.0), "fmin"),
    "gcd other": (lambda lib, x: lib.gcd(_int_pair(lib, x), 6), "gcd"),
    "Tensor.lcm_": (lambda lib, x: _int_pair(lib, x).lcm_(6), "lcm_"),
    "igamma other": (lambda lib, x: lib.igamma(x.abs(), 2.0), "igamma"),
    "special.gammaincc input": (lambda lib, x: lib.special.gammaincc(2.0, x.abs()), "igammac"),
    "copysign input": (lambda lib, x: lib.copysign(2.0, x), "copysign"),
    "lerp end": (lambda lib, x: lib.lerp(x, 1.0, 0.5), "lerp"),
    "Tensor.lerp_ end": (lambda lib, x: x.lerp_(1.0, 0.5), "lerp_"),
}


@pytest.mark.parametrize("name", sorted(TENSOR_ONLY))
def test_tensor_parameter_refuses_a_number(name):
    fn, op = TENSOR_ONLY[name]
    f, t = both(fn)
    assert isinstance(t, TypeError) and ("must be Tensor" in str(t) or "invalid combination" in str(t)), repr(t)
    assert isinstance(f, TypeError), f"oneflow returns {f!r}"
    assert re.match(rf"{op}\(\): argument '\w+' \(position \d\) must be Tensor, not ", str(f)), str(f)


# the same ops with tensors, forward and backward, against PyTorch (0-d tensors broadcast as the
# numbers did)
TENSOR_CALLS = {
    "maximum": lambda lib, x: lib.maximum(x, lib.tensor(0.5)),
    "minimum": lambda lib, x: lib.minimum(lib.tensor(0.5), x),
    "atan2": lambda lib, x: lib.atan2(x, x.flip(1) + 3),
    "arctan2": lambda lib, x: x.arctan2(lib.tensor(2.0)),
    "hypot": lambda lib, x: lib.hypot(x, x * 2 + 1),
    "logaddexp": lambda lib, x: lib.logaddexp(x, lib.tensor(1.0)),
    "logaddexp2": lambda lib, x: lib.logaddexp2(lib.tensor(1.0), x),
    "fmax": lambda lib, x: lib.fmax(x, x.flip(0)),
    "fmin": lambda lib, x: x.fmin(lib.tensor(0.3)),
    "igamma": lambda lib, x: lib.igamma(lib.tensor(2.0), x.abs() + 0.1),
    "special.gammaincc": lambda lib, x: lib.special.gammaincc(lib.tensor(1.5), x.abs() + 0.1),
    "copysign": lambda lib, x: lib.copysign(x, -1.5),  # a number `other` stays PyTorch's overload
    "lerp": lambda lib, x: lib.lerp(x, x * 3, 0.25),  # and a number weight
    "lerp tensor weight": lambda lib, x: lib.lerp(x, x * 3, x.abs() / 4),
}


@pytest.mark.parametrize("name", sorted(TENSOR_CALLS))
def test_tensor_parameter_takes_tensors(name):
    outs, grads = [], []
    for lib in (flow, torch):
        x = lib.tensor(X, requires_grad=True)
        y = TENSOR_CALLS[name](lib, x)
        y.sum().backward()
        outs.append(y.detach().numpy())
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)


def test_integer_and_step_ops_take_tensors():
    for lib in (flow, torch):
        i = lib.tensor([[4, 6], [9, 12]])
        assert lib.gcd(i, lib.tensor(6)).tolist() == [[2, 6], [3, 6]]
        assert lib.lcm(i, lib.tensor([3, 4])).tolist() == [[12, 12], [9, 12]]
    got = flow.nextafter(flow.tensor(X), flow.tensor(10.0)).numpy()
    want = torch.nextafter(torch.tensor(X), torch.tensor(10.0)).numpy()
    assert (got == want).all()


# OneFlow's signatures with a Scalar form (functional_api.yaml: add, mul, pow, eq, logical_and,
# bitwise_and, where, clamp_min, ...) still take a number, in both positions where upstream does
SCALAR_FORMS = {
    "add": lambda lib, x: lib.add(2, x),
    "mul": lambda lib, x: lib.mul(x, 2),
    "pow number base": lambda lib, x: lib.pow(2, x),
    "eq": lambda lib, x: lib.eq(x, 0.5),
    # (OneFlow's alone: PyTorch's other is a Tensor, compared here with a 0-d one)
    "logical_and": lambda lib, x: lib.logical_and(x, 1 if lib is flow else lib.tensor(1)),
    "fmod": lambda lib, x: lib.fmod(x, 1.5),
    "where": lambda lib, x: lib.where(x > 0, x, 0.0),
    "clamp_min": lambda lib, x: lib.clamp_min(x, 0.5),
    "masked_fill": lambda lib, x: x.masked_fill(x > 1, 7.0),
    "remainder number input": lambda lib, x: lib.remainder(5, x),
    "xlogy number input": lambda lib, x: lib.xlogy(2, x.abs()),
}


@pytest.mark.parametrize("name", sorted(SCALAR_FORMS))
def test_scalar_forms_keep_taking_numbers(name):
    got = SCALAR_FORMS[name](flow, flow.tensor(X))
    want = SCALAR_FORMS[name](torch, torch.tensor(X))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


# ---- the Python-level functions over two tensors (dist, ldexp, the *_scatter family): a number
# was used as a 0-d tensor, and a smaller src was broadcast into the slice

PY_REFUSED = {
    "dist number": (TypeError, lambda lib, x: lib.dist(x, 2),
                    r"^dist\(\): argument 'other' \(position 2\) must be Tensor, not int"),
    "Tensor.dist number": (TypeError, lambda lib, x: x.dist(2.5), r"^dist\(\): argument 'other'"),
    "ldexp number": (TypeError, lambda lib, x: lib.ldexp(x, 2), r"^ldexp\(\): argument 'other' \(position 2\)"),
    "ldexp number input": (TypeError, lambda lib, x: lib.ldexp(2, x), r"^ldexp\(\): argument 'input' \(position 1\)"),
    "ldexp bool exponent": (NotImplementedError, lambda lib, x: lib.ldexp(x, x > 0), r"^ldexp\(\): not implemented for 'Bool'"),
    "Tensor.ldexp_ bool exponent": (NotImplementedError, lambda lib, x: x.ldexp_(x > 0), "not implemented for 'Bool'"),
    "slice_scatter number": (TypeError, lambda lib, x: lib.slice_scatter(x, 1),
                             r"^slice_scatter\(\): argument 'src' \(position 2\) must be Tensor, not int"),
    "slice_scatter smaller src": (RuntimeError, lambda lib, x: lib.slice_scatter(x, lib.zeros(3)),
                                  r"^slice_scatter\(\): expected src to have a size equal to the slice of self\. "
                                  r"src size = \[3\], slice size = \[2, 3\]"),
    "slice_scatter dim 2**62": (IndexError, lambda lib, x: x.slice_scatter(x, 2**62),
                                r"^slice_scatter\(\): Dimension out of range \(expected to be in range of \[-2, 1\], but got 4611686018427387904\)"),
    "slice_scatter dim True": (TypeError, lambda lib, x: lib.slice_scatter(x, x, True),
                               r"^slice_scatter\(\): argument 'dim' \(position 3\) must be int, not bool"),
    "slice_scatter dim -3": (IndexError, lambda lib, x: lib.slice_scatter(x, x, -3), "Dimension out of range"),
    "slice_scatter 0-d src": (RuntimeError, lambda lib, x: x.slice_scatter(lib.tensor(1.0), 1, 0, 2),
                              r"src size = \[\], slice size = \[2, 2\]"),
    "diagonal_scatter number": (TypeError, lambda lib, x: lib.diagonal_scatter(x, 2**62), r"^diagonal_scatter\(\): argument 'src'"),
    "diagonal_scatter smaller src": (RuntimeError, lambda lib, x: lib.diagonal_scatter(x, lib.zeros(1)),
                                     r"^diagonal_scatter\(\): expected src .* src size = \[1\], slice size = \[2\]"),
    "select_scatter smaller src": (RuntimeError, lambda lib, x: lib.select_scatter(x, lib.zeros(2), 0, 0),
                                   r"^select_scatter\(\): expected src .* src size = \[2\], slice size = \[3\]"),
}


@pytest.mark.parametrize("name", sorted(PY_REFUSED))
def test_python_level_refused_as_pytorch_refuses(name):
    kind, fn, msg = PY_REFUSED[name]
    with pytest.raises(kind):
        fn(torch, torch.tensor(X))
    with pytest.raises(kind, match=msg):
        fn(flow, flow.tensor(X))


PY_ACCEPTED = {
    "dist": lambda lib, x: lib.dist(x, x.flip(0), 3),
    "dist int other": lambda lib, x: lib.dist(x, lib.tensor([1, 2, 3])),
    "ldexp": lambda lib, x: lib.ldexp(x, lib.tensor([1, 2, 3])),
    "ldexp bool input": lambda lib, x: lib.ldexp(x > 0, x),
    "slice_scatter": lambda lib, x: lib.slice_scatter(x, lib.ones(2, 2), 1, 1),
    "slice_scatter float64 src": lambda lib, x: lib.slice_scatter(x, x.double() * 2),
    "diagonal_scatter": lambda lib, x: lib.diagonal_scatter(x, lib.tensor([7.0, 8.0])),
    "select_scatter": lambda lib, x: lib.select_scatter(x, lib.zeros(3), 0, 1),
}


@pytest.mark.parametrize("name", sorted(PY_ACCEPTED))
def test_python_level_valid_calls_still_match(name):
    got = PY_ACCEPTED[name](flow, flow.tensor(X))
    want = PY_ACCEPTED[name](torch, torch.tensor(X))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


# ---- constructors and Python-level functions that took any object

CONSTRUCTED_REFUSED = {
    # a tensor was its device, True cuda:1, -1 cuda:0 (the index was narrowed without a check)
    "device of a tensor": (TypeError, lambda lib, x: lib.device(x), r"^device\(\): expected a oneflow.device"),
    "device of a bool": (TypeError, lambda lib, x: lib.device(True), "got bool"),
    "device index -1": (RuntimeError, lambda lib, x: lib.device(-1), "Device index must not be negative"),
    "device cuda, index -1": (RuntimeError, lambda lib, x: lib.device("cuda", -1), "Device index must not be negative"),
    "device cuda, index 2**62": (RuntimeError, lambda lib, x: lib.device(-2**62), "must not be negative"),
    # the classes returned their argument's wrapper (memory_format(x) of a tensor was a "format")
    "memory_format()": (TypeError, lambda lib, x: lib.memory_format(x), r"^cannot create 'oneflow.memory_format' instances"),
    "layout()": (TypeError, lambda lib, x: lib.layout(1), r"^cannot create 'oneflow.layout' instances"),
    "scalar_tensor of a tensor": (TypeError, lambda lib, x: lib.scalar_tensor(x),
                                  r"^scalar_tensor\(\): argument 's' \(position 1\) must be Number, not Tensor"),
    "scalar_tensor of a list": (TypeError, lambda lib, x: lib.scalar_tensor([1.0]), "must be Number, not list"),
    "from_numpy of a tensor": (TypeError, lambda lib, x: lib.from_numpy(x), r"^from_numpy\(\): expected np.ndarray \(got [\w.]*Tensor\)"),
    "trapezoid of bool": (RuntimeError, lambda lib, x: lib.trapezoid(x > 0),
                          r"^trapezoid: received a bool input for `y`, but bool is not supported"),
    "trapz bool x": (RuntimeError, lambda lib, x: lib.trapz(x, x[0] > 0), "bool input for `x`"),
    "cumulative_trapezoid of bool": (RuntimeError, lambda lib, x: lib.cumulative_trapezoid(x > 0), "bool input for `y`"),
    "trapz number x": (TypeError, lambda lib, x: lib.trapz(x, 1.5), r"^trapz\(\): argument 'x' \(position 2\) must be Tensor"),
    "trapezoid dx str": (TypeError, lambda lib, x: lib.trapezoid(x, dx="abc"), "argument 'dx' must be Number"),
    "set_ other dtype": (RuntimeError, lambda lib, x: x.set_(x.long()),
                         r"^set_\(\): Could not set tensor of type oneflow.int64 to a tensor of type oneflow.float32"),
    "set_ offset without size": (TypeError, lambda lib, x: x.set_(x, 0), r"^set_\(\): storage_offset and stride need a size"),
    # varargs lists PyTorch and OneFlow's functional signatures require
    "flip()": (TypeError, lambda lib, x: lib.flip(x), r"^flip\(\): missing 1 required positional argument: 'dims'"),
    "Tensor.flip()": (TypeError, lambda lib, x: x.flip(), r"^flip\(\): missing 1 required positional argument: 'dims'"),
    "tile()": (TypeError, lambda lib, x: lib.tile(x), r"^tile\(\): missing 1 required positional argument: 'dims'"),
    "reshape()": (TypeError, lambda lib, x: lib.reshape(x), r"^reshape\(\): missing 1 required positional argument: 'shape'"),
    "permute()": (TypeError, lambda lib, x: lib.permute(x), r"^permute\(\): missing 1 required positional argument: 'dims'"),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTED_REFUSED))
def test_constructors_and_functions_refuse_as_pytorch(name):
    kind, fn, msg = CONSTRUCTED_REFUSED[name]
    with pytest.raises(kind):
        fn(torch, torch.tensor(X))
    with pytest.raises(kind, match=msg):
        fn(flow, flow.tensor(X))


def test_devices_formats_and_layouts_that_remain():
    assert str(flow.device("cpu")) == "cpu" and flow.device("cuda", 1).index == 1
    assert flow.device(flow.device("cpu")) == flow.device("cpu")
    assert flow.device(2) == flow.device("cuda:2")  # an int is a cuda index (PyTorch: the accelerator's)
    import copy
    import pickle

    for obj in (flow.channels_last, flow.contiguous_format, flow.preserve_format, flow.channels_last_3d, flow.strided):
        assert copy.deepcopy(obj) is obj and pickle.loads(pickle.dumps(obj)) is obj
    assert isinstance(flow.channels_last, flow.memory_format) and isinstance(flow.strided, flow.layout)
    y = flow.tensor(np.arange(24.0).reshape(1, 2, 3, 4)).clone(memory_format=flow.channels_last)
    assert y.stride() == torch.arange(24.0).reshape(1, 2, 3, 4).clone(memory_format=torch.channels_last).stride()


ACCEPTED_FORMS = {
    "scalar_tensor": lambda lib, x: lib.scalar_tensor(2.5),
    "scalar_tensor of a 0-d tensor": lambda lib, x: lib.scalar_tensor(x[0, 0]),
    "from_numpy": lambda lib, x: lib.from_numpy(np.array(X, np.float32)),
    "trapezoid dx": lambda lib, x: lib.trapezoid(x, dx=0.5),
    "trapz x": lambda lib, x: lib.trapz(x, lib.tensor([0.0, 1.0, 3.0])),
    "cumulative_trapezoid x": lambda lib, x: lib.cumulative_trapezoid(x, lib.tensor([0.0, 1.0, 3.0])),
    "cumulative_trapezoid dx": lambda lib, x: lib.cumulative_trapezoid(x, dx=2.0, dim=0),
    "set_ tensor": lambda lib, x: lib.zeros(1).set_(x),
    "set_ tensor view": lambda lib, x: lib.zeros(1).set_(x, 1, (2, 2), (2, 1)),
    "flip explicit empty": lambda lib, x: lib.flip(x, ()),
    "Tensor.flip": lambda lib, x: x.flip(0, 1),
    "tile keyword": lambda lib, x: lib.tile(x, dims=(2, 1)),
    "permute": lambda lib, x: lib.permute(x, (1, 0)),
    "reshape": lambda lib, x: lib.reshape(x, (3, 2)),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED_FORMS))
def test_accepted_forms_still_match(name):
    got = ACCEPTED_FORMS[name](flow, flow.tensor(X))
    want = ACCEPTED_FORMS[name](torch, torch.tensor(X))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_oneflows_tensor_methods_may_leave_the_list_out():
    # OneFlow's Tensor.reshape / view / permute (PyParseArgs: "return empty tuple for empty
    # arguments") and its Python-level tile / repeat / expand take no list: the 0-d shape
    x = flow.tensor(3.0)
    for name in ("reshape", "view", "permute", "tile", "repeat", "expand"):
        assert getattr(x, name)().shape == (), name
    assert flow.tensor([2.0]).reshape().shape == () and flow.expand(x).shape == ()


# ---- clamp with a tensor bound beside a number bound: neither PyTorch (Tensor, Tensor) /
# (Number, Number) nor upstream OneFlow (Scalar, Scalar) has that form

@pytest.mark.parametrize("call", [
    lambda lib, x: lib.clamp(x, x, -1),
    lambda lib, x: lib.clamp(x, -1, x),
    lambda lib, x: x.clip(x * 0, max=1.5),
    lambda lib, x: x.clamp_(x * 0, 2**62),
], ids=["clamp(T, T, -1)", "clamp(T, -1, T)", "Tensor.clip(T, max=1.5)", "Tensor.clamp_(T, 2**62)"])
def test_clamp_bounds_of_two_kinds(call):
    with pytest.raises(TypeError):
        call(torch, torch.tensor(X))
    with pytest.raises(TypeError, match=r"^clamp_?\(\): expected min and max both Tensors or both numbers, got min a "):
        call(flow, flow.tensor(X))


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.clamp(x, -0.5, 1.0),
    lambda lib, x: lib.clamp(x, x * 0, x * 0 + 1),
    lambda lib, x: lib.clamp(x, max=x * 0 + 1),
    lambda lib, x: lib.clamp(x, min=0.0),
    lambda lib, x: x.clone().clamp_(lib.tensor(-0.5), lib.tensor(1.0)),
], ids=["numbers", "tensors", "tensor max", "number min", "in place, 0-d tensors"])
def test_clamp_bounds_of_one_kind_still_match(call):
    got, want = call(flow, flow.tensor(X)), call(torch, torch.tensor(X))
    np.testing.assert_allclose(got.numpy(), want.numpy())


# ---- argument kinds of Python-level functions PyTorch checks in its signature

SIGNATURE_REFUSED = {
    "histogramdd without bins": (TypeError, lambda lib, x: lib.histogramdd(x)),
    "histogramdd bool bins": (TypeError, lambda lib, x: lib.histogramdd(x, True)),
    "histogramdd one Tensor bins": (TypeError, lambda lib, x: lib.histogramdd(x, x)),
    "resize_as_ positional memory_format": (TypeError, lambda lib, x: x.clone().resize_as_(x, None)),
    "norm_except_dim float pow": (TypeError, lambda lib, x: lib.norm_except_dim(x, 1.5)),
    "norm_except_dim bool pow": (TypeError, lambda lib, x: lib.norm_except_dim(x, True)),
    "svd_lowrank float q": (TypeError, lambda lib, x: lib.svd_lowrank(x, 1.5)),
    "svd_lowrank negative q": (RuntimeError, lambda lib, x: lib.svd_lowrank(x, -1)),
    "pca_lowrank float q": ((TypeError, ValueError), lambda lib, x: lib.pca_lowrank(x, 1.5)),
}


@pytest.mark.parametrize("name", sorted(SIGNATURE_REFUSED))
def test_python_signatures_refuse_as_pytorch(name):
    kind, fn = SIGNATURE_REFUSED[name]
    with pytest.raises(kind):
        fn(torch, torch.tensor(X))
    op = name.split()[0]
    with pytest.raises(kind, match=rf"{op}\(\)"):
        fn(flow, flow.tensor(X))


def test_python_signatures_valid_calls():
    for lib in (flow, torch):
        x = lib.tensor(X)
        assert list(lib.histogramdd(x, bins=[2, 2, 2])[0].shape) == [2, 2, 2]
        assert x.clone().resize_as_(x[:1], memory_format=lib.contiguous_format).shape == (1, 3)
        assert list(lib.norm_except_dim(x, 2, 0).shape) == [2, 1]
        assert [list(t.shape) for t in lib.svd_lowrank(x, 0)] == [[2, 0], [0], [3, 0]]
    np.testing.assert_allclose(flow.norm_except_dim(flow.tensor(X), 3, 1).numpy(),
                               torch.norm_except_dim(torch.tensor(X), 3, 1).numpy(), rtol=1e-6)


# ---- the third comparison's real bugs (issue 39: silent results no OneFlow difference explains)

THIRD_ROUND = {
    # an integer target: PyTorch computes in the target's dtype and cannot cast the loss back
    "binary_cross_entropy_with_logits int target": (
        RuntimeError, lambda lib, x: lib.nn.functional.binary_cross_entropy_with_logits(x, lib.ones(2, 3, dtype=lib.int64))),
    "binary_cross_entropy_with_logits bool target": (
        RuntimeError, lambda lib, x: lib.nn.functional.binary_cross_entropy_with_logits(x, x > 0)),
    # a bool weight was promoted to a 0 / 1 weight
    "lerp bool weight": (RuntimeError, lambda lib, x: lib.lerp(x, x * 2, x > 0)),
    "Tensor.lerp_ int weight": (RuntimeError, lambda lib, x: x.lerp_(x * 2, lib.ones(2, 3, dtype=lib.int64))),
    # a NaN in the data: no equal bins over [nan, nan]
    "histogram nan": (RuntimeError, lambda lib, x: lib.histogram(lib.tensor([1.0, float("nan")]))),
    "histogram inf range": (RuntimeError, lambda lib, x: lib.histogram(x, 4, range=(0.0, float("inf")))),
    # a float count
    "fft.fftfreq float tensor": (TypeError, lambda lib, x: lib.fft.fftfreq(lib.tensor(4.0))),
    "fft.rfftfreq float": (TypeError, lambda lib, x: lib.fft.rfftfreq(4.5)),
    # a tensor's truth value for a switch / flag
    "set_anomaly_enabled tensor": (TypeError, lambda lib, x: lib.set_anomaly_enabled(lib.tensor(0.0))),
    "lu pivot float tensor": (TypeError, lambda lib, x: lib.lu(x[:, :2], lib.tensor(1.0))),
    # a complex value's imaginary part was dropped
    "masked_fill complex into float": (RuntimeError, lambda lib, x: x.masked_fill(x > 0, 1 + 2j)),
}


@pytest.mark.parametrize("name", sorted(THIRD_ROUND))
def test_third_comparison_refuses_as_pytorch(name):
    exc, fn = THIRD_ROUND[name]
    f, t = both(fn)
    assert isinstance(t, exc), f"torch: {t!r}"
    assert isinstance(f, exc), f"oneflow: {f!r}"


def test_third_comparison_valid_forms_still_work():
    # the same ops with the arguments PyTorch takes: same values
    x = np.array(X, np.float32)
    cases = [
        lambda lib, t: lib.nn.functional.binary_cross_entropy_with_logits(t, (t > 0).float()),
        lambda lib, t: lib.lerp(t, t * 2, 0.25),
        lambda lib, t: lib.lerp(t, t * 2, lib.full_like(t, 0.75)),
        lambda lib, t: lib.histogram(t, 4)[0],
        lambda lib, t: lib.fft.fftfreq(5, 0.5),
        lambda lib, t: lib.fft.rfftfreq(6),
        lambda lib, t: t.masked_fill(t > 0, 1 + 0j),
        lambda lib, t: lib.lu(t[:, :2], True)[0],
    ]
    for fn in cases:
        got = fn(flow, flow.tensor(x))
        want = fn(torch, torch.tensor(x))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    # OneFlow's bool rule: an int pivot is its truth value
    np.testing.assert_allclose(flow.lu(flow.tensor(x[:, :2]), 1)[0].numpy(), torch.lu(torch.tensor(x[:, :2]), True)[0].numpy(),
                               rtol=1e-5, atol=1e-6)


def test_arange_refuses_a_complex_bound():
    for args in ((1 + 2j,), (0, 1 + 2j), (0, 4, 1j)):
        f, t = both(lambda lib, x: lib.arange(*args))
        assert isinstance(t, RuntimeError) and isinstance(f, RuntimeError), (f, t)
