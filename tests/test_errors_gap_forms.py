"""Forms PyTorch accepts where we raised (tools/fuzz_torch.py's "gap" calls, issue 39's follow-up):
the grad-mode switches given a function, GradScaler's PyTorch order, nn.functional's softmax
family with PyTorch's `_stacklevel` third, linalg.matrix_rank / pinv with PyTorch's positional
tolerance and tensor tolerances, multilabel_soft_margin_loss with a number target / weight,
linalg.vander's batched form. Each against PyTorch, forward and (where it applies) backward;
OneFlow's own forms of the same functions are checked beside them."""
import warnings

import numpy as np
import pytest
import torch

from error_cases import raises_like_torch
from harness import flow

A_ROWS = [[[2.0, 0.0, 1.0], [0.0, 1e-3, 0.0], [1.0, 0.0, 3.0]],
          [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 0.0]]]


def close(a, b, atol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=atol)


# ---- no_grad / enable_grad / inference_mode given a function (Note [Grad-mode switches given a function])
@pytest.mark.parametrize("switch", ["no_grad", "enable_grad"])
def test_switch_given_a_function_decorates_it(switch):
    def records(lib):
        x = lib.ones(2, requires_grad=True)
        outer = lib.enable_grad() if switch == "no_grad" else lib.no_grad()
        with outer:
            return getattr(lib, switch)(lambda v: (v * 2).requires_grad)(x)

    assert records(flow) == records(torch)

    @getattr(flow, switch)  # the bare decorator, PyTorch's usual form
    def gen(x):
        yield (x * 2).requires_grad

    with flow.no_grad() if switch == "enable_grad" else flow.enable_grad():
        assert list(gen(flow.ones(1, requires_grad=True))) == [switch == "enable_grad"]
    assert gen.__name__ == "gen"


@pytest.mark.parametrize("arg", [1, 2.5, "x", (2, 3)])
def test_switch_given_anything_returns_like_torch(arg):
    for switch in ("no_grad", "enable_grad"):
        t, f = getattr(torch, switch)(arg), getattr(flow, switch)(arg)
        assert callable(t) and callable(f)  # a wrapper that fails when called, as PyTorch's
        with pytest.raises(TypeError):
            t()
        with pytest.raises(TypeError):
            f()


def test_switch_given_none_as_torch():
    # PyTorch's no_grad has an __init__ taking nothing (its TypeError); enable_grad has none
    raises_like_torch(lambda lib: lib.no_grad(None), message=False)
    assert isinstance(flow.enable_grad(None), flow.enable_grad)


def test_inference_mode_given_a_function_or_a_non_bool():
    @flow.inference_mode
    def inside():
        return flow.is_inference_mode_enabled(), flow.is_grad_enabled()

    assert inside() == (True, False)
    assert not flow.is_inference_mode_enabled()
    assert isinstance(flow.inference_mode(False), flow.inference_mode)
    assert callable(flow.inference_mode(1)) and callable(torch.inference_mode(1))
    with flow.inference_mode(False):
        assert flow.is_grad_enabled() and not flow.is_inference_mode_enabled()


def test_switch_given_a_class_warns_and_constructs():
    class C:
        def __init__(self, v):
            self.v = v

    for lib in (torch, flow):
        with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
            made = lib.no_grad(C)
        assert made(3).v == 3


# ---- GradScaler: PyTorch's device first, OneFlow's init_scale first (Note [GradScaler's two positional orders])
@pytest.mark.parametrize("args", [(None,), ("cpu", 1024.0), (object(),), ([1, 2],), ("cpu", [1.0], 1.5)])
def test_grad_scaler_takes_torch_device_first(args):
    t = torch.amp.GradScaler(*args)
    f = flow.amp.GradScaler(*args)
    assert f.get_growth_factor() == t.get_growth_factor()
    if t.is_enabled():
        assert f.get_scale() == t.get_scale()


def test_grad_scaler_oneflow_order_and_torch_checks():
    s = flow.amp.GradScaler(1024.0, 3.0)
    assert s.get_scale() == 1024.0 and s.get_growth_factor() == 3.0
    # an enabled scaler still checks its factors
    raises_like_torch(lambda lib: lib.amp.GradScaler("cpu", 1.0, 0.5))
    raises_like_torch(lambda lib: lib.amp.GradScaler("cpu", 1.0, 2.0, 1.5))
    scaler = flow.amp.GradScaler("cpu", 8.0)
    x = flow.tensor([1.5], requires_grad=True)
    scaler.scale(x * 2).sum().backward()
    tx = torch.tensor([1.5], requires_grad=True)
    torch.amp.GradScaler("cpu", 8.0).scale(tx * 2).sum().backward()
    close(x.grad, tx.grad)


# ---- nn.functional.softmax / log_softmax / softmin: PyTorch's _stacklevel third (Note [softmax's third positional])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("third", [5, "float32", 1.5, None, -2**62])
def test_softmax_family_ignores_torch_stacklevel(name, third):
    x = np.random.RandomState(0).randn(3, 4).astype(np.float32)
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    f = getattr(flow.nn.functional, name)(fx, 1, third)
    t = getattr(torch.nn.functional, name)(tx, 1, third)
    close(f, t)
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    (f * flow.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    close(fx.grad, tx.grad)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family_dtype_third_is_oneflow_form(name):
    x = np.random.RandomState(1).randn(2, 5).astype(np.float32)
    fn = getattr(flow.nn.functional, name)
    t = getattr(torch.nn.functional, name)(torch.tensor(x), 1, dtype=torch.float64)
    for f in (fn(flow.tensor(x), 1, flow.float64), fn(flow.tensor(x), 1, dtype=flow.float64)):
        assert f.dtype == flow.float64
        close(f, t, atol=1e-12)


# ---- linalg.matrix_rank / pinv: positional tolerance, tensor tolerances (Note [Tolerance overloads])
TOLS = [0.01, 0.5, 0, -3, 2**62, float("nan")]


def matrices_and_tolerance(hermitian, value):
    """A_ROWS (symmetrised for hermitian) and `value` as a number and as a float64 tensor, each
    as (flow's, torch's) pairs."""
    A = np.array(A_ROWS, dtype=np.float64)
    if hermitian:
        A = A + A.transpose(0, 2, 1)
    return A, [(value, value), (flow.tensor(value, dtype=flow.float64), torch.tensor(value, dtype=torch.float64))]


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("tol", TOLS)
def test_matrix_rank_tol_second(tol, hermitian):
    A, tolerances = matrices_and_tolerance(hermitian, tol)
    for ft, tt in tolerances:
        f = flow.linalg.matrix_rank(flow.tensor(A), ft, hermitian)
        t = torch.linalg.matrix_rank(torch.tensor(A), tt, hermitian)
        assert f.tolist() == t.tolist() and f.shape == tuple(t.shape)


def test_matrix_rank_tensor_tolerances_per_matrix():
    A = np.array(A_ROWS, dtype=np.float32)
    for kw in ({"atol": [0.01, 5.0]}, {"rtol": [0.5, 1e-6]}, {"atol": [0.0, 2.0], "rtol": [0.9, 0.0]}):
        f = flow.linalg.matrix_rank(flow.tensor(A), **{k: flow.tensor(v) for k, v in kw.items()})
        t = torch.linalg.matrix_rank(torch.tensor(A), **{k: torch.tensor(v) for k, v in kw.items()})
        assert f.tolist() == t.tolist()
    # a tolerance shaped unlike the batch broadcasts as PyTorch's
    tol = np.full((2, 3), 0.1, dtype=np.float32)
    f = flow.linalg.matrix_rank(flow.tensor(A[0]), flow.tensor(tol))
    t = torch.linalg.matrix_rank(torch.tensor(A[0]), torch.tensor(tol))
    assert f.tolist() == t.tolist()


def test_top_level_matrix_rank_is_removed_as_in_torch():
    # torch.matrix_rank was removed in 1.9: its RuntimeError names linalg.matrix_rank
    raises_like_torch(lambda lib: lib.matrix_rank(lib.ones(2, 2), 0.1))


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("rcond", [1e-15, 0.01, 0.5, 0])
def test_pinv_rcond_second(rcond, hermitian):
    A, tolerances = matrices_and_tolerance(hermitian, rcond)
    # Under a cut below the rounding of float64 (1e-15, 0) the singular A_ROWS[1]'s zero singular
    # value (~1e-16, rounding noise) is inverted: entries of ~1e15 that depend on the SVD's
    # blocking and thread count in either library. Only the nonsingular matrix is determined.
    compared = slice(None) if rcond > 1e-12 else slice(0, 1)
    for fr, tr in tolerances:
        close(flow.linalg.pinv(flow.tensor(A), fr, hermitian)[compared],
              torch.linalg.pinv(torch.tensor(A), tr, hermitian)[compared], atol=1e-8)
        # Backward (of the symmetric input's function for hermitian: eigh reads one triangle).
        # Without hermitian, against the exact derivative (finite differences, on A_ROWS[0]
        # alone: A_ROWS[1] is singular, its zero singular value would cross any small cut under
        # the differences): PyTorch's own gradient is off by up to 3e-4 once a nonzero singular
        # value is cut (1e-3 under rcond 0.01). With hermitian, against PyTorch's where nothing
        # nonzero is cut.
        sym = (lambda a: (a + a.mT) / 2) if hermitian else (lambda a: a)
        if not hermitian:
            assert flow.autograd.gradcheck(lambda a: flow.linalg.pinv(a, fr), (flow.tensor(A[:1], requires_grad=True),))
        elif rcond in (0, 1e-15):
            w = np.linspace(-1, 1, A.size).reshape(A.shape)
            fa, ta = flow.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
            (flow.linalg.pinv(sym(fa), fr, True) * flow.tensor(w)).sum().backward()
            (torch.linalg.pinv(sym(ta), tr, True) * torch.tensor(w)).sum().backward()
            close(fa.grad, ta.grad, atol=1e-6)


def test_pinv_tensor_tolerances_per_matrix():
    A = np.array(A_ROWS, dtype=np.float64)
    for kw in ({"atol": [0.01, 5.0]}, {"rtol": [0.5, 1e-12]}):
        f = flow.linalg.pinv(flow.tensor(A), **{k: flow.tensor(v) for k, v in kw.items()})
        t = torch.linalg.pinv(torch.tensor(A), **{k: torch.tensor(v) for k, v in kw.items()})
        close(f, t, atol=1e-8)


def test_tolerance_overloads_refuse_both_forms():
    A = flow.tensor(A_ROWS)
    with pytest.raises(TypeError, match="matrix_rank"):
        flow.linalg.matrix_rank(A, 0.1, atol=0.1)
    with pytest.raises(TypeError, match="pinv"):
        flow.linalg.pinv(A, 0.1, rtol=0.1)
    with pytest.raises(RuntimeError, match="complex"):
        flow.linalg.matrix_rank(A, atol=flow.tensor([0.1j, 0.2j]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert flow.linalg.matrix_rank(A, atol=0.1, rtol=0.0).tolist() == \
            torch.linalg.matrix_rank(torch.tensor(A_ROWS), atol=0.1, rtol=0.0).tolist()


# ---- "other-error" groups: the exception class PyTorch raises (tests/error_cases.py)
@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.interpolate(lib.ones(2, 3)),  # no size: before the rank check
    lambda lib: lib.nn.functional.interpolate(lib.ones(2, 3), 4, 2.0),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 3), mode="cubic"),  # no size before the mode
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 3), 4, mode="cubic"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(2, 3), 4),
])
def test_interpolate_checks_in_torch_order(call):
    raises_like_torch(call, message=False)


@pytest.mark.parametrize("fn", ["tril_indices", "triu_indices"])
def test_triangle_indices_take_ints_only(fn):
    for args in ((lambda lib: lib.ones(2, 3), 3), (lambda lib: True, 3), (lambda lib: 3.0, 3),
                 (lambda lib: 3, 3, 1.5)):
        raises_like_torch(lambda lib: getattr(lib, fn)(args[0](lib), *args[1:]))
    f = getattr(flow, fn)(flow.tensor(4), 3, -1)
    t = getattr(torch, fn)(torch.tensor(4), 3, -1)
    assert f.tolist() == t.tolist()


def test_einsum_sublist_format_and_arity():
    a = np.random.RandomState(2).randn(2, 3, 4)
    b = np.random.RandomState(3).randn(2, 4, 5)
    fa, fb = flow.tensor(a, requires_grad=True), flow.tensor(b)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b)
    f = flow.einsum(fa, [0, 1, 2], fb, [0, 2, 30], [0, 1, 30])
    t = torch.einsum(ta, [0, 1, 2], tb, [0, 2, 30], [0, 1, 30])
    close(f, t)
    f.sum().backward()
    t.sum().backward()
    close(fa.grad, ta.grad)
    close(flow.einsum(fa, [Ellipsis, 2], fa, [Ellipsis, 2]), torch.einsum(ta, [Ellipsis, 2], ta, [Ellipsis, 2]))
    close(flow.einsum(fa, [0, 1, 2]), torch.einsum(ta, [0, 1, 2]))  # no output list: implicit
    for call in (lambda lib: lib.einsum(), lambda lib: lib.einsum("ij"),
                 lambda lib: lib.einsum(lib.ones(2), [52]),
                 lambda lib: lib.einsum(lib.ones(2, 3), lib.ones(2, 3))):  # a tensor as a subscript list
        raises_like_torch(call, message=False)


@pytest.mark.parametrize("fn", ["matrix_rank", "pinv"])
def test_tolerance_overloads_refuse_what_torch_refuses(fn):
    A = lambda lib: lib.tensor(A_ROWS)  # noqa: E731
    for call in (lambda lib: getattr(lib.linalg, fn)(A(lib), None),
                 lambda lib: getattr(lib.linalg, fn)(A(lib), [0.1]),
                 lambda lib: getattr(lib.linalg, fn)(A(lib), 0.1, None)):
        raises_like_torch(call, TypeError, message=False)
    if fn == "pinv":  # no derivative flows to a tolerance
        raises_like_torch(lambda lib: lib.linalg.pinv(A(lib), lib.tensor(0.1, requires_grad=True)), message=False)
        raises_like_torch(lambda lib: lib.linalg.pinv(A(lib), rtol=lib.tensor(0.1, requires_grad=True)))


def test_tensor_tolerances_of_empty_matrices():
    for shape, tol in (((0, 3), (0, 3)), ((2, 0, 3), (2,)), ((3, 0), ())):
        for fn in ("matrix_rank", "pinv"):
            f = getattr(flow.linalg, fn)(flow.ones(shape), flow.ones(tol))
            t = getattr(torch.linalg, fn)(torch.ones(shape), torch.ones(tol))
            assert f.shape == tuple(t.shape) and f.dtype.is_floating_point == t.dtype.is_floating_point


@pytest.mark.parametrize("fn", ["matrix_rank", "pinv"])
def test_tolerance_functions_name_their_input_as_torch(fn):
    raises_like_torch(lambda lib: getattr(lib.linalg, fn)(A=lib.eye(3)), TypeError, message=False)
    f = getattr(flow.linalg, fn)(input=flow.eye(3), hermitian=True)
    t = getattr(torch.linalg, fn)(input=torch.eye(3), hermitian=True)
    close(f, t)


def test_interpolate_size_and_scale_checked_before_reading_them():
    for call in (lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 3), lib.ones(2, 3), 1.5),
                 lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 3), [1], [1.5], 7)):
        raises_like_torch(call, ValueError, message=False)  # ours names the op first


# ---- multilabel_soft_margin_loss with a number target / weight (PyTorch's is arithmetic on them)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("which, value", [("target", 0), ("target", 1), ("target", 0.25), ("target", True),
                                          ("target", -1), ("target", 2**62), ("weight", 2), ("weight", 0.5),
                                          ("weight", False), ("target", 1 + 2j)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multilabel_soft_margin_loss_number_operand(which, value, reduction, dtype):
    x = np.array([[0.5, -1.0, 2.0], [0.25, 3.0, -0.5]], dtype=dtype)
    t = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], dtype=dtype)
    outs = []
    for lib in (flow, torch):
        xs = lib.tensor(x, requires_grad=True)
        args = (value,) if which == "target" else (lib.tensor(t), value)
        out = lib.nn.functional.multilabel_soft_margin_loss(xs, *args, reduction=reduction)
        (out.abs() if out.dtype.is_complex else out).sum().backward()
        outs.append((out, xs.grad))
    (fo, fg), (to, tg) = outs
    assert str(fo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1] and tuple(fo.shape) == tuple(to.shape)
    close(fo, to)
    close(fg, tg)


def test_multilabel_soft_margin_loss_number_is_the_full_tensor():
    # the number broadcasts as the constant target / weight tensor would
    x = flow.tensor([[0.5, -1.0, 2.0], [0.25, 3.0, -0.5]])
    F = flow.nn.functional
    assert F.multilabel_soft_margin_loss(x, 1).item() == F.multilabel_soft_margin_loss(x, flow.ones(2, 3)).item()
    t = flow.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    assert (F.multilabel_soft_margin_loss(x, t, 3.0).item()
            == F.multilabel_soft_margin_loss(x, t, flow.full((2, 3), 3.0)).item())
    # a bool tensor target stays PyTorch's RuntimeError (its `1 - target`); a str is no number
    raises_like_torch(lambda lib: lib.nn.functional.multilabel_soft_margin_loss(
        lib.zeros(2, 3), lib.ones(2, 3, dtype=lib.bool)), RuntimeError, message=False)
    with pytest.raises(TypeError, match=r"multilabel_soft_margin_loss\(\): argument 'target'"):
        F.multilabel_soft_margin_loss(x, "abc")


# ---- linalg.vander: PyTorch's batched form (x of shape (*, n)), columns x^0 .. x^(N-1)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32", "int64", "uint8"])
@pytest.mark.parametrize("shape, N", [((3,), None), ((3,), 5), ((2, 3), None), ((2, 3), 2), ((2, 1, 4), 3),
                                      ((0, 3), None), ((2, 0), 3), ((), 3)])
def test_linalg_vander_batched(dtype, shape, N):
    a = (np.arange(int(np.prod(shape))) % 5 - 1).reshape(shape).astype(dtype)
    got, want = flow.linalg.vander(flow.tensor(a), N=N), torch.linalg.vander(torch.tensor(a), N=N)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_linalg_vander_backward():
    a = [[0.0, 2.0, -3.0], [0.5, 0.0, 2.0]]
    grads = []
    for lib in (flow, torch):
        x = lib.tensor(a, requires_grad=True)
        (lib.linalg.vander(x, N=4) * lib.linspace(0.5, 2.0, 24).reshape(2, 3, 4)).sum().backward()
        grads.append(x.grad)
    close(*grads)


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.vander(lib.randn(3), N=1),       # N must be greater than 1
    lambda lib: lib.linalg.vander(lib.randn(3), N=0),
    lambda lib: lib.linalg.vander(lib.randn(())),           # 0-d: one element, N = 1
    lambda lib: lib.linalg.vander(lib.ones(3, dtype=lib.bool)),
    lambda lib: lib.linalg.vander(lib.ones(3, dtype=lib.float16)),
])
def test_linalg_vander_refusals(call):
    raises_like_torch(call, RuntimeError)


@pytest.mark.parametrize("N", [1.5, True])
def test_linalg_vander_n_is_an_int(N):
    raises_like_torch(lambda lib: lib.linalg.vander(lib.randn(3), N=N), TypeError)
    with pytest.raises(TypeError):  # keyword-only, as PyTorch's
        flow.linalg.vander(flow.randn(3), 3)


# ---- normalize: PyTorch's Tensor.norm forms of p and dim, out= as the generated ops'
@pytest.mark.parametrize("kw", [dict(p=None), dict(dim=None), dict(dim=[]), dict(dim=(0, 2)), dict(dim=[-1]),
                                dict(p=None, dim=None), dict(p=1, dim=(1, 2)), dict(p=float("inf"), dim=None)],
                         ids=str)
def test_normalize_p_and_dim_forms(kw):
    a = np.random.RandomState(0).randn(2, 3, 4)
    grads = []
    for lib in (flow, torch):
        x = lib.tensor(a, requires_grad=True)
        out = lib.nn.functional.normalize(x, **kw)
        (out * lib.linspace(-1.0, 1.0, 24, dtype=lib.float64).reshape(2, 3, 4)).sum().backward()
        grads.append((out, x.grad))
    close(grads[0][0], grads[1][0])
    close(grads[0][1], grads[1][1])


@pytest.mark.parametrize("shape", [(0, 3), (3, 2), (2, 3)])
def test_normalize_out_is_resized_as_pytorchs(shape):
    a = np.random.RandomState(1).randn(2, 3).astype("float32")
    outs = []
    for lib in (flow, torch):
        o = lib.zeros(*shape)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = lib.nn.functional.normalize(lib.tensor(a), out=o)
        assert r is o and tuple(o.shape) == (2, 3)
        outs.append((o, len([m for m in w if "resized" in str(m.message)])))
    close(outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1]  # the warning only when out had elements


def test_normalize_out_must_be_a_tensor():
    # PyTorch's F.normalize passes a float out= on unread; ours is the generated ops' TypeError
    with pytest.raises(TypeError, match=r"^normalize\(\): argument 'out' \(position 5\) must be Tensor, not float"):
        flow.nn.functional.normalize(flow.randn(2, 3), 2.0, 1, 1e-12, 1.5)


# ---- Tensor.copy_(src, non_blocking): PyTorch's second parameter (a prefetcher's idiom)
def test_copy_takes_non_blocking():
    for lib in (flow, torch):
        x = lib.zeros(2, 3)
        assert x.copy_(lib.ones(3), non_blocking=True) is x and x.tolist() == [[1.0] * 3] * 2
        assert x.copy_(lib.full((2, 3), 2.0), True).tolist() == [[2.0] * 3] * 2
    assert flow.ones(2).copy_(src=flow.zeros(1)).tolist() == [0.0, 0.0]  # the documented name (torch's parser: other)
    for bad in ("abc", None, 1.5):
        with pytest.raises(TypeError, match=r"^copy_\(\): argument 'non_blocking' \(position 2\) must be bool"):
            flow.zeros(2).copy_(flow.ones(2), bad)
        with pytest.raises(TypeError):
            torch.zeros(2).copy_(torch.ones(2), bad)


# ---- dropout in eval mode (or p == 0, or empty): the input itself, of any dtype, as PyTorch's
@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d"])
def test_dropout_identity_before_the_dtype_check(name):
    for lib in (flow, torch):
        fn = getattr(lib.nn.functional, name)
        x = lib.arange(6).reshape(1, 2, 3)
        assert fn(x, training=False) is x and fn(x, 0.0, True) is x
        assert fn(lib.zeros(0, 2, 3, dtype=lib.int64), 0.5, True).shape == (0, 2, 3)
        with pytest.raises(ValueError):  # p is checked first, in eval mode too
            fn(x, 1.5, False)
    # training an integer input stays refused (PyTorch's own error there is its in-place cast)
    with pytest.raises(RuntimeError, match="floating point input"):
        getattr(flow.nn.functional, name)(flow.arange(6).reshape(1, 2, 3), 0.5, True)
