"""Calls that returned a meaningless result where PyTorch refuses (issue 39, found by
tools/fuzz_torch.py, the hostile catalogue run on both libraries): each now raises PyTorch's
exception class, and the values OneFlow's signatures document keep working."""
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
    assert "expected a bool, got" in str(f)


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
    with pytest.raises(TypeError, match=r"^svd\(\): expected a bool, got a Tensor of 1 element\(s\) of dtype float32"):
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
