"""Hostile calls that used to crash, hang or answer with C++ text (issue 39, found by tools/fuzz.py):
each raises the exception PyTorch raises for the same call, with a message naming the op, or
returns PyTorch's result, fast."""
import math

import numpy as np
import pytest
import torch

import oneflow as flow

X = [[0.5, -1.0, 2.0], [0.25, 3.0, -0.5]]


def x():
    return flow.tensor(X)


# ---- the generated varargs bindings: arity checked before any conversion (were segfaults)

VARARGS = {"expand": "expand", "expand_copy": "expand", "flip": "flip", "permute": "permute",
           "permute_copy": "permute", "repeat": "repeat", "reshape": "reshape", "tile": "tile",
           "view": "view", "view_copy": "view"}


@pytest.mark.parametrize("name", sorted(VARARGS))
def test_varargs_op_without_arguments_is_a_type_error(name):
    with pytest.raises(TypeError, match=rf"^{VARARGS[name]}\(\): missing 1 required positional argument: 'input'"):
        getattr(flow, name)()


def test_varargs_op_takes_its_tensor_by_keyword():
    assert flow.flip(input=x(), dims=[1]).tolist() == torch.flip(input=torch.tensor(X), dims=[1]).tolist()
    # the list is required in flow.flip, as in torch.flip (varargs_required, tests/test_errors_silent.py)
    with pytest.raises(TypeError, match=r"^flip\(\): missing 1 required positional argument: 'dims'"):
        flow.flip(input=x())
    with pytest.raises(TypeError, match=r"^expand\(\): argument 'input' \(position 1\) must be Tensor, not str$"):
        flow.expand("abc", 2)


# ---- string arguments: a TypeError naming the op, not std::bad_cast

@pytest.mark.parametrize("call, op", [
    (lambda: flow.einsum(3, x()), "einsum"),
    (lambda: flow.linalg.eigh(x(), 3), "linalg_eigh"),
    (lambda: flow.linalg.eigvalsh(x(), 3), "linalg_eigvalsh"),
    (lambda: flow.linalg.qr(x(), 3), "linalg_qr"),
    (lambda: flow.nn.functional.kl_div(x(), x(), reduction=3), "kl_div"),
    (lambda: flow.nn.functional.huber_loss(x(), x(), 3), "huber_loss"),
    (lambda: flow.nn.functional.pad(x(), (1, 1), 3), "pad"),
])
def test_wrong_type_for_a_string_argument(call, op):
    with pytest.raises(TypeError) as e:
        call()
    # PyTorch's sentence: "op(): argument 'mode' (position 3) must be str, not int"
    assert str(e.value).startswith(f"{op}(): argument '") and "std::" not in str(e.value), str(e.value)
    assert "must be str, not int" in str(e.value), str(e.value)


# ---- size arithmetic checked for overflow (pixel_shuffle died of SIGFPE)

@pytest.mark.parametrize("fn", [flow.pixel_shuffle, flow.nn.functional.pixel_shuffle])
def test_pixel_shuffle_huge_factor(fn):
    with pytest.raises(ValueError, match=r"pixel_shuffle\(\): upscale factor is too large"):
        fn(flow.randn(1, 4, 2, 2), 2**62)
    with pytest.raises(RuntimeError, match=r"pixel_shuffle"):
        fn(flow.randn(1, 4, 2, 2), 2**31)
    t = torch.randn(1, 8, 2, 3)
    assert np.array_equal(fn(flow.tensor(t.numpy()), 2).numpy(), torch.pixel_shuffle(t, 2).numpy())


def test_pixel_unshuffle_of_an_empty_input_with_a_huge_factor():
    with pytest.raises(RuntimeError, match=r"pixel_unshuffle\(\): .*overflowed"):
        flow.pixel_unshuffle(flow.randn(1, 4, 0, 0), 2**62)


@pytest.mark.parametrize("pad", [[2**62, -1], [2**62, 2**62]])
def test_pad_overflowing_sizes(pad):
    with pytest.raises(RuntimeError, match=r"^pad\(\): .*overflowed") as e:
        flow.nn.functional.pad(x(), pad)
    assert "vector" not in str(e.value)
    with pytest.raises(RuntimeError, match=r"pad\(\): .*overflowed"):
        flow._legacy.ops.constant_pad2d(flow.randn(1, 1, 2, 2), [2**62, -1, 0, 0])


def test_pad_larger_than_memory_is_a_runtime_error_naming_the_op():
    with pytest.raises(RuntimeError, match=r"^pad\(\): (can't allocate memory|a size is too large)"):
        flow.nn.functional.pad(x(), [2**40, 0])


def test_chunk_and_tensor_split_into_huge_counts():
    with pytest.raises(RuntimeError, match=r"^chunk\(\): chunks = 4611686018427387904 would make"):
        flow.chunk(x(), 2**62)
    with pytest.raises(RuntimeError, match=r"tensor_split\(\): 4611686018427387904 sections"):
        flow.tensor_split(x(), 2**62)
    # counts past the size within the bound still give PyTorch's empty pieces
    got = flow.tensor_split(x(), 5)
    want = torch.tensor_split(torch.tensor(X), 5)
    assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]


# ---- loops bounded by their inputs: polynomials of huge degree, mvlgamma

XS = [0.3, -0.7, 0.0, 1.0, -1.0, 1.5, -2.0, 0.999]


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                                  "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                                  "laguerre_polynomial_l", "legendre_polynomial_p",
                                  "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u"])
def test_polynomials_match_torch_up_to_degree_300(name):
    xs = XS if not name.startswith("shifted") else [0.65, 0.15, 0.5, 1.0, 0.0, 1.25, -0.5, 0.9995]
    n = torch.arange(0, 301, dtype=torch.float64).repeat_interleave(len(xs))
    t = torch.tensor(xs, dtype=torch.float64).repeat(301)
    want = getattr(torch.special, name)(t, n)
    got = getattr(flow.special, name)(flow.tensor(t.numpy()), flow.tensor(n.numpy()))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-8, equal_nan=True)


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                                  "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he"])
def test_polynomials_of_huge_degree_answer_as_torch(name):
    # inside [-1, 1] the Chebyshev closed forms, outside (and Hermite's) overflow to NaN: PyTorch's
    # loop stops at the first NaN, so does ours
    t = torch.tensor([0.3, 1.0, -1.0, 2.0, -3.0], dtype=torch.float64)
    want = getattr(torch.special, name)(t, 2**40)
    got = getattr(flow.special, name)(flow.tensor(t.numpy()), 2**40)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, equal_nan=True)
    assert getattr(flow.special, name)(x(), 2**62).shape == (2, 3)


def test_shifted_chebyshev_huge_input_and_degree():
    got = flow.special.shifted_chebyshev_polynomial_t(flow.tensor(2.0**31), 2**31)
    assert math.isnan(got.item())


@pytest.mark.parametrize("name, inside", [("legendre_polynomial_p", 0.3), ("laguerre_polynomial_l", 0.3)])
def test_bounded_polynomials_of_huge_degree_are_refused(name, inside):
    # PyTorch loops 2**62 times here; the values stay finite, so no NaN ends the loop
    with pytest.raises(ValueError, match=rf"^{name}\(\): degree n=4611686018427387904 is too large"):
        getattr(flow.special, name)(flow.tensor([inside]), 2**62)


@pytest.mark.parametrize("call", [lambda: flow.mvlgamma(x() + 5, 2**62),
                                  lambda: flow.special.multigammaln(x() + 5, 2**31),
                                  lambda: flow.special.multigammaln(x() + 5, 2**62),
                                  lambda: (x() + 5).mvlgamma(2**20), lambda: (x() + 5).mvlgamma(2**62),
                                  lambda: (x() + 5).mvlgamma_(2**62)])
def test_mvlgamma_huge_order(call):
    with pytest.raises(RuntimeError, match=r"^mvlgamma_?\(\): p = \d+ is too large"):
        call()


def test_trunc_normal_of_a_bool_tensor():
    with pytest.raises(NotImplementedError, match=r"trunc_normal_\(\): not implemented for 'oneflow.bool'"):
        flow.nn.init.trunc_normal_(flow.zeros(3, dtype=flow.bool))
    with pytest.raises(NotImplementedError):
        torch.nn.init.trunc_normal_(torch.zeros(3, dtype=torch.bool))


def test_multi_count_not_finite_of_a_dict():
    with pytest.raises(TypeError, match=r"multi_count_not_finite\(\): expected a non-empty list"):
        flow._legacy.ops.multi_count_not_finite({})
    assert flow._legacy.ops.multi_count_not_finite([flow.tensor([1.0, float("nan")])]).item() == 1


# ---- accepted where PyTorch refuses

def test_chain_matmul_of_a_string():
    with pytest.raises(TypeError, match=r"chain_matmul\(\): expected Tensor as element 0"):
        flow.chain_matmul("abc")
    with pytest.raises(TypeError):
        torch.chain_matmul("abc")


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_of_bool(name):
    with pytest.raises(RuntimeError, match=rf"^{name}\(\): does not support bool input"):
        getattr(flow, name)(flow.tensor([True, False]))
    with pytest.raises(RuntimeError, match="does not support bool input"):
        getattr(torch, name)(torch.tensor([True, False]))
    with pytest.raises(RuntimeError, match=rf"^{name}\(\)"):
        getattr(flow.tensor([True, False]), name)(0)


def test_binomial_mixed_dtypes():
    with pytest.raises(RuntimeError, match=r"^binomial\(\): expected count and prob of the same dtype"):
        flow.binomial(flow.tensor([3.0], dtype=flow.float64), flow.tensor([0.5]))
    with pytest.raises(RuntimeError):
        torch.binomial(torch.tensor([3.0], dtype=torch.float64), torch.tensor([0.5]))


def test_can_cast_of_tensors():
    with pytest.raises(TypeError, match=r"can_cast\(\): argument 'from_' must be oneflow.dtype"):
        flow.can_cast(x(), x())
    assert flow.can_cast(flow.float32, flow.int32) is torch.can_cast(torch.float32, torch.int32)


@pytest.mark.parametrize("name", ["bartlett_window", "blackman_window", "hann_window", "hamming_window",
                                  "kaiser_window"])
def test_window_periodic_must_be_bool(name):
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'periodic' must be bool"):
        getattr(flow, name)(2, -3)
    with pytest.raises(TypeError):
        getattr(torch, name)(2, -3)


@pytest.mark.parametrize("name", ["adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_avg_pool2d"])
def test_adaptive_pool_output_size_none(name):
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'output_size'"):
        getattr(flow.nn.functional, name)(flow.randn(1, 2, 4, 4), None)
    with pytest.raises(TypeError):
        getattr(torch.nn.functional, name)(torch.randn(1, 2, 4, 4), None)


@pytest.mark.parametrize("n", [-1, -3, 1, 5])
def test_rfftfreq_matches_torch_for_any_n(n):
    # PyTorch computes n // 2 in C++ (truncation): rfftfreq(-1) is [-0.]
    got, want = flow.fft.rfftfreq(n).numpy(), torch.fft.rfftfreq(n).numpy()
    np.testing.assert_array_equal(got, want)
    assert list(np.signbit(got)) == list(np.signbit(want))


# ---- Python-level functions: a non-tensor input is a TypeError naming the op (was AttributeError)

@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
                                  "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn",
                                  "ihfftn", "fftshift", "ifftshift"])
def test_fft_of_a_non_tensor(name):
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' must be Tensor, not str"):
        getattr(flow.fft, name)("abc")
    with pytest.raises(TypeError):
        getattr(torch.fft, name)("abc")


@pytest.mark.parametrize("args, arg", [(("abc", "w"), "input"), ((None, None), "input"), ((1.5, 2), "input")])
def test_linear_of_non_tensors(args, arg):
    with pytest.raises(TypeError, match=rf"^linear\(\): argument '{arg}' must be Tensor"):
        flow.nn.functional.linear(*args)
    with pytest.raises(TypeError, match=r"^linear\(\): argument 'bias' must be Tensor"):
        flow.nn.functional.linear(x(), flow.randn(4, 3), "b")


@pytest.mark.parametrize("name, call", [
    ("cumulative_trapezoid", lambda lib: lib.cumulative_trapezoid(lib.tensor(1.0))),
    ("slice_scatter", lambda lib: lib.slice_scatter(lib.tensor(1.0), lib.tensor(1.0))),
])
def test_zero_dim_inputs_of_slicing_functions(name, call):
    # dim % 0 was a ZeroDivisionError
    with pytest.raises(IndexError, match=rf"^{name}\(\): slice\(\) cannot be applied to a 0-dim tensor"):
        call(flow)
    with pytest.raises(IndexError):
        call(torch)


# ---- Python-level functions: a non-tensor argument is PyTorch's TypeError naming the function
# and the argument (python/oneflow/_argcheck.py), never an AttributeError from `.dim()`

TYPED_ARGS = [  # (name, args with a bad one, the argument named in the message)
    ("equal", lambda t: (t, 1), "other"), ("type_as", lambda t: (t, "abc"), "other"),
    ("is_same_size", lambda t: (t, (2, 3)), "other"), ("is_same_size", lambda t: (1, t), "input"),
    ("cov", lambda t: ((2, 3),), "input"), ("corrcoef", lambda t: ("abc",), "input"),
    ("combinations", lambda t: (None,), "input"), ("vander", lambda t: (1.5,), "x"),
    ("tensordot", lambda t: (t, [1]), "b"), ("cholesky_inverse", lambda t: (2,), "input"),
    ("cholesky_solve", lambda t: (t, "abc"), "input2"), ("frexp", lambda t: ([1.0],), "input"),
    ("histogram", lambda t: (object(),), "input"), ("trapezoid", lambda t: ("abc",), "y"),
    ("numel", lambda t: (3,), "input"), ("is_floating_point", lambda t: (1.5,), "input"),
    ("is_complex", lambda t: (None,), "input"), ("detach", lambda t: ({},), "input"),
    ("adjoint", lambda t: ((2, 3),), "input"), ("repeat_interleave", lambda t: ("abc",), "input"),
    ("linalg.matrix_exp", lambda t: (2,), "A"), ("linalg.eigvals", lambda t: ("abc",), "A"),
    ("linalg.cond", lambda t: (None,), "A"), ("linalg.tensorinv", lambda t: ([1, 2],), "A"),
    ("nn.functional.pdist", lambda t: (1,), "input"), ("nn.functional.interpolate", lambda t: ("x",), "input"),
    ("nn.functional.dropout2d", lambda t: (None,), "input"), ("nn.functional.bilinear", lambda t: (t, t, -1), "weight"),
    ("nn.functional.grid_sample", lambda t: (t, (2, 3)), "grid"),
]


TORCH_UNTYPED = {"tensordot", "nn.functional.interpolate", "nn.functional.dropout2d"}


def _resolve(mod, dotted):
    if not hasattr(mod, dotted.split(".")[0]):  # torch.type_as: only the method
        return getattr(mod.Tensor, dotted)
    for part in dotted.split("."):
        mod = getattr(mod, part)
    return mod


@pytest.mark.parametrize("name, make, arg", TYPED_ARGS, ids=[f"{n}-{a}" for n, _, a in TYPED_ARGS])
def test_python_function_with_a_non_tensor_argument_is_a_type_error(name, make, arg):
    with pytest.raises(TypeError, match=rf"\(\): argument '{arg}' \(position \d\) must be Tensor, not \w+$"):
        _resolve(flow, name)(*make(x()))
    # PyTorch refuses the same call: a TypeError too, but an AttributeError from the Python code
    # of these few (ours is typed, as the other functions')
    kind = AttributeError if name in TORCH_UNTYPED else TypeError
    with pytest.raises(kind):
        _resolve(torch, name)(*make(torch.tensor(X)))


def test_type_error_wording_is_pytorchs():
    for fn, t, args in ((flow.equal, x(), (1,)), (torch.equal, torch.tensor(X), (1,))):
        with pytest.raises(TypeError, match=r"^equal\(\): argument 'other' \(position 2\) must be Tensor, not int$"):
            fn(t, *args)
    with pytest.raises(TypeError, match=r"^numel\(\): argument 'input' \(position 1\) must be Tensor, not str$"):
        flow.numel("abc")


@pytest.mark.parametrize("name", ["block_diag", "cartesian_prod"])
def test_tensor_lists_with_a_non_tensor_element(name):
    with pytest.raises(TypeError, match=rf"^{name}\(\): expected Tensor as element 1 in argument 'tensors'"):
        getattr(flow, name)(flow.ones(2), 3)
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        getattr(torch, name)(torch.ones(2), 3)
    with pytest.raises(TypeError, match=r"^linalg_multi_dot\(\): argument 'tensors' \(position 1\) must be tuple"):
        flow.linalg.multi_dot(x())


def test_methods_with_a_non_tensor_other():
    for method in ("equal", "is_same_size", "type_as", "resize_as_", "triangular_solve", "cholesky_solve"):
        with pytest.raises(TypeError, match=r"must be Tensor, not int$"):
            getattr(x(), method)(1)
    with pytest.raises(TypeError, match=r"^put\(\): argument 'source' \(position 3\) must be Tensor, not int$"):
        x().put(flow.tensor([0]), 1)
    with pytest.raises(ValueError, match="Mode 3 not supported"):  # PyTorch: AttributeError of mode.lower()
        flow.nn.init.kaiming_normal_(flow.empty(3, 4), 0, 3)


def test_legacy_and_file_functions_type_their_arguments():
    with pytest.raises(TypeError, match=r"^from_file\(\): argument 'filename' \(position 1\) must be str, not int$"):
        flow.from_file(3)
    with pytest.raises(TypeError, match=r"^load_variables\(\): argument 'value_dict' \(position 1\) must be dict"):
        flow.load_variables(x())
    with pytest.raises(TypeError, match=r"^reshape_like\(\): argument 'like' \(position 2\) must be Tensor"):
        flow.reshape_like(x(), (3, 2))


@pytest.mark.parametrize("path", [None, 3, [1], x])
def test_save_and_load_of_a_non_path(path, tmp_path):
    # PyTorch's AttributeError (it calls .seek / .write on the object) is a TypeError naming the op
    # and the argument here, raised before anything is encoded or read
    with pytest.raises(TypeError, match=r"^load\(\): argument 'path' must be a path .* not "):
        flow.load(path)
    with pytest.raises(TypeError, match=r"^save\(\): argument 'path' must be a path .* not "):
        flow.save({"a": x()}, path)
    with pytest.raises(AttributeError):
        torch.load(path)
    flow.save({"a": x()}, str(tmp_path / "ok.of"))  # a str path and a stream still work
    assert flow.load(str(tmp_path / "ok.of"))["a"].tolist() == X


# ---- unsafe_chunk: PyTorch's checks of `chunks` (was a ZeroDivisionError)

@pytest.mark.parametrize("chunks", [0, -1, -2**62])
def test_unsafe_chunk_of_non_positive_chunks(chunks):
    for fn, t in ((flow.unsafe_chunk, x()), (torch.unsafe_chunk, torch.tensor(X))):
        with pytest.raises(RuntimeError, match=rf"chunk expects `chunks` to be greater than 0, got: {chunks}$"):
            fn(t, chunks)
    with pytest.raises(RuntimeError, match="greater than 0"):
        x().unsafe_chunk(0)


@pytest.mark.parametrize("chunks", [True, 2.0, "2"])
def test_unsafe_chunk_of_a_non_int(chunks):
    for fn, t in ((flow.unsafe_chunk, x()), (torch.unsafe_chunk, torch.tensor(X))):
        with pytest.raises(TypeError, match=r"^unsafe_chunk\(\): argument 'chunks' \(position 2\) must be int"):
            fn(t, chunks)


def test_unsafe_chunk_matches_torch():
    for chunks in (1, 2, 3, 5, flow.tensor(2)):
        got = flow.unsafe_chunk(x(), chunks, 1)
        want = torch.unsafe_chunk(torch.tensor(X), int(chunks), 1)
        assert [g.tolist() for g in got] == [w.tolist() for w in want]


# ---- a 0-d bool mask indexes a new dim of size 1 (was `getitem(): internal error`)

@pytest.mark.parametrize("data", [3.0, [1.0, 2.0], X], ids=["0d", "1d", "2d"])
@pytest.mark.parametrize("mask", [True, False])
@pytest.mark.parametrize("where", ["alone", "after_ellipsis", "after_slice", "before_int"])
def test_zero_dim_bool_mask_getitem(data, mask, where):
    def index(m):
        return {"alone": m, "after_ellipsis": (Ellipsis, m), "after_slice": (slice(None), m),
                "before_int": (m, 0)}[where]

    t = torch.tensor(data)
    try:
        want = t[index(torch.tensor(mask))]
    except IndexError:
        with pytest.raises(IndexError):
            flow.tensor(data)[index(flow.tensor(mask))]
        return
    got = flow.tensor(data)[index(flow.tensor(mask))]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_zero_dim_bool_mask_setitem_and_grad():
    a = flow.tensor(3.0)
    a[flow.tensor(True)] = 5.0
    a[flow.tensor(False)] = 7.0
    assert a.item() == 5.0
    w = flow.tensor([1.0, 2.0], requires_grad=True)
    (w[flow.tensor(True)] * flow.tensor([[2.0, 3.0]])).sum().backward()
    assert w.grad.tolist() == [2.0, 3.0]


@pytest.mark.parametrize("mask", [True, False])
@pytest.mark.parametrize("inplace", [True, False])
def test_zero_dim_bool_mask_index_put(mask, inplace):
    # index_put(_) with a 0-d mask (was `index_put(): internal error (first >= 0)`)
    results = []
    for lib in (torch, flow):
        a = lib.tensor([1.0, 2.0])
        m, v = lib.tensor(mask), lib.tensor(5.0)
        results.append((a.index_put_((m,), v) if inplace else lib.index_put(a, (m,), v)).tolist())
    assert results[0] == results[1]
    # a 2-d tensor (PyTorch's kernel asserts there): the new dim broadcasts the values to each row
    got = flow.tensor([[1.0, 2.0], [3.0, 4.0]]).index_put_((flow.tensor(mask),), flow.tensor([8.0, 9.0]))
    assert got.tolist() == ([[8.0, 9.0], [8.0, 9.0]] if mask else [[1.0, 2.0], [3.0, 4.0]])


def test_index_put_without_index_tensors_is_an_index_error():
    with pytest.raises(IndexError, match=r"^index_put\(\): expected at least one index tensor"):
        flow.index_put(x(), (), flow.tensor(5.0))


# ---- a message names its op once (the fuzzer counts "op(): op(): ..." as unreadable)

@pytest.mark.parametrize("call, start", [
    (lambda: flow.nn.functional.adaptive_avg_pool2d(x(), 1), "adaptive_avg_pool2d(): Expected 3D or 4D tensor"),
    (lambda: flow.nn.functional.adaptive_max_pool3d(x(), 1), "adaptive_max_pool3d(): Expected 4D or 5D tensor"),
    (lambda: flow.nn.functional.adaptive_avg_pool1d(flow.randn(2, 0, 0), 1), "adaptive_avg_pool1d(): Expected input"),
    (lambda: flow.nn.functional.max_unpool2d(x(), x().long(), 2), "max_unpool2d(): Expected 3D or 4D tensor"),
    (lambda: flow.nanmean(flow.arange(3)), "nanmean(): expected input to have floating point"),
])
def test_pool_and_nanmean_messages_name_the_op_once(call, start):
    with pytest.raises(RuntimeError) as e:
        call()
    assert str(e.value).startswith(start), str(e.value)
