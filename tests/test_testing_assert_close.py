"""oneflow.testing against torch.testing: assert_close (and the deprecated assert_allclose) run on
twin inputs built by the same code in each framework must pass or fail alike, with the same
exception type and the same message (mismatch counts, greatest differences and their indices,
tolerances, the failing item), framework names aside; make_tensor must give the same shapes,
dtypes, strides, value ranges and errors."""
import math
import re
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.testing

NAN, INF = float("nan"), float("inf")


def _normalize(text):
    # The same message up to the framework's names.
    text = text.replace("<class 'torch.Tensor'>", "<class 'oneflow._oneflow_internal.Tensor'>")
    return text.replace("torch.", "oneflow.")


def _outcome(fn, M):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            fn(M)
        except Exception as e:  # noqa: BLE001 - the outcome is what is compared
            return type(e), str(e)
    return None, ""


_KEY_LINES = re.compile(r"^(Mismatched elements|Greatest (absolute|relative) difference|"
                        r"(Absolute|Relative) difference|Expected) .*$", re.M)


def _check_twins(fn, *, message=True):
    """Runs `fn(torch)` and `fn(flow)`; returns the (common) exception type, None if both pass."""
    (t_type, t_msg), (f_type, f_msg) = _outcome(fn, torch), _outcome(fn, flow)
    assert t_type is f_type, (t_msg, f_msg)
    if message:
        # The key lines first (a clearer failure), then the whole message.
        assert [m.group(0) for m in _KEY_LINES.finditer(_normalize(t_msg))] == \
            [m.group(0) for m in _KEY_LINES.finditer(f_msg)]
        assert _normalize(t_msg) == f_msg
    return t_type, f_msg


def T(M, values, dtype=None, **kw):
    return M.tensor(values, dtype=getattr(M, dtype) if dtype else None, **kw)


def _build(x, M):
    # Inputs are written once for both frameworks: a callable builds a tensor in module M,
    # containers are rebuilt around their built items.
    if callable(x):
        return x(M)
    if isinstance(x, (list, tuple)):
        return type(x)(_build(v, M) for v in x)
    if isinstance(x, dict):
        return {k: _build(v, M) for k, v in x.items()}
    return x


def close(*args, **kw):
    return lambda M: M.testing.assert_close(*[_build(a, M) for a in args], **kw)


def t(values, dtype=None, **kw):
    return lambda M: T(M, values, dtype, **kw)


# name: (case, expected outcome: None (passes) or the exception type)
CASES = {
    # tensors, each default tolerance
    "float32_mismatch": (close(t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.1])), AssertionError),
    "float32_within_default": (close(t([1.0, 2.0]), t([1.0, 2.0 + 1e-6])), None),
    "float16": (close(t([1.0, 2.0], "float16"), t([1.0, 2.01], "float16")), AssertionError),
    "float16_within": (close(t([1.0], "float16"), t([1.0009765625], "float16")), None),
    "bfloat16": (close(t([1.5], "bfloat16"), t([1.6], "bfloat16")), AssertionError),
    "bfloat16_within": (close(t([100.0], "bfloat16"), t([101.0], "bfloat16")), None),
    "float64": (close(t([1.0], "float64"), t([1.000001], "float64")), AssertionError),
    "float64_within": (close(t([1.0], "float64"), t([1.0000001], "float64")), None),
    "int64": (close(t([1, 2, 3]), t([1, 2, 4])), AssertionError),
    "int32_equal": (close(t([1, 2], "int32"), t([1, 2], "int32")), None),
    "uint8_no_wrap": (close(t([1, 2, 3], "uint8"), t([3, 2, 1], "uint8")), AssertionError),
    "uint8_atol": (close(t([1, 2], "uint8"), t([3, 2], "uint8"), rtol=0, atol=5), None),
    "int8": (close(t([-100, 2], "int8"), t([100, 2], "int8")), AssertionError),
    "int_tolerances": (close(t([1, 2]), t([1, 5]), rtol=0.1, atol=1), AssertionError),
    "bool": (close(t([True, False]), t([True, True])), AssertionError),
    "2d_index": (close(t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.0], [3.0, 5.0]])), AssertionError),
    "3d_index": (close(lambda M: T(M, [1e-4, 1.0, 0.0]).reshape(1, 3, 1),
                       lambda M: T(M, [0.0, 0.0, 1.0]).reshape(1, 3, 1)), AssertionError),
    "many_mismatches": (close(lambda M: M.arange(1000.0),
                              lambda M: M.arange(1000.0) + (M.arange(1000) % 3 == 0).float()), AssertionError),
    "ties_first_index": (close(t([1.0, 2.0, 3.0]), t([3.0, 2.0, 1.0])), AssertionError),
    "zero_expected": (close(t([0.0, 0.0, 0.0]), t([0.0, 1e-4, -2e-4])), AssertionError),
    "huge": (close(t([1e38]), t([-1e38])), AssertionError),
    "transposed_values": (close(t([[1.0, 2.0], [3.0, 4.0]]), lambda M: T(M, [[1.0, 2.0], [3.0, 4.0]]).t()),
                          AssertionError),
    "empty": (close(t([]), t([])), None),
    "requires_grad_ignored": (close(lambda M: M.ones(2, requires_grad=True), lambda M: M.ones(2)), None),
    "requires_grad_mismatch": (close(lambda M: M.ones(2, requires_grad=True), lambda M: M.ones(2) * 1.1),
                               AssertionError),
    # 0-d tensors report as scalars
    "0d_float": (close(t(1.0), t(1.5)), AssertionError),
    "0d_int": (close(t(1), t(3)), AssertionError),
    "0d_bool": (close(t(True), t(False)), AssertionError),
    "0d_nan": (close(t(1.0), t(NAN)), AssertionError),
    # user tolerances
    "equality": (close(t([1.0, 2.0]), t([1.0, 2.5]), rtol=0, atol=0), AssertionError),
    "atol_only_nonzero": (close(t([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), t([1.0, 2.0, 3.0, 4.0, 5.0, 7.0]), rtol=0,
                                atol=0.5), AssertionError),
    "loose_passes": (close(t([1.0, 2.0]), t([1.0, 2.5]), rtol=0.5, atol=0.0), None),
    "rtol_without_atol": (close(t([1.0]), t([1.0]), rtol=1e-3), ValueError),
    "atol_without_rtol": (close(t([1.0]), t([1.0]), atol=1e-3), ValueError),
    "rtol_without_atol_nested": (close([1.0], [1.0], rtol=1e-3, msg="ignored for misuse"), ValueError),
    "rtol_without_atol_none": (close(None, None, rtol=1e-3), None),
    "negative_rtol": (close(t([1.0, 2.0]), t([1.0, 2.0]), rtol=-1.0, atol=0.0), RuntimeError),
    "equal_nan_not_bool": (close(t([1.0, 2.0]), t([1.0, 2.0]), equal_nan="relaxed"), RuntimeError),
    # NaN and infinities
    "nan_not_equal": (close(t([NAN]), t([NAN])), AssertionError),
    "nan_equal_nan": (close(t([NAN, 1.0]), t([NAN, 1.0]), equal_nan=True), None),
    "nan_against_number": (close(t([1.0, NAN]), t([1.0, 2.5]), equal_nan=True), AssertionError),
    "nan_mixed": (close(t([1.0, 2.0, 3.0, 4.0]), t([1.0, 2.0, NAN, 5.0])), AssertionError),
    "inf_equal": (close(t([1.0, INF, -INF]), t([1.0, INF, -INF]), rtol=0, atol=0), None),
    "inf_opposite": (close(t([[1.0, INF]]), t([[1.0, -INF]])), AssertionError),
    "inf_vs_finite": (close(t([INF]), t([1e38]), rtol=1e10, atol=0), AssertionError),
    # complex: the modulus of the difference
    "complex64": (close(t([1 + 1j]), t([1 + 1.1j])), AssertionError),
    "complex128": (close(t([1 + 2j], "complex128"), t([1 + 2.1j], "complex128")), AssertionError),
    "complex_within": (close(t([1 + 2j, 3j]), t([1 + 2.000001j, 3j])), None),
    "complex_0d": (close(t(1 + 1j), t(1 + 1.1j)), AssertionError),
    "complex_conj": (close(t([1 + 2j]), lambda M: T(M, [1 + 2j]).conj()), AssertionError),
    "complex_nan_parts": (close(t([complex(1, NAN)]), t([complex(NAN, 1)]), equal_nan=True), None),
    "complex_nan_parts_unequal": (close(t([complex(1, NAN)]), t([complex(NAN, 1)])), AssertionError),
    "complex_inf": (close(t([complex(INF, 0), 1 + 2j]), t([complex(INF, 0), 1 + 2j])), None),
    # attributes
    "shape": (close(t([1.0, 2.0]), t([1.0, 2.0, 3.0])), AssertionError),
    "shape_before_dtype": (close(t([1.0, 2.0]), t([1.0, 2.0, 3.0], "float64")), AssertionError),
    "shape_empty": (close(t([]), lambda M: T(M, []).reshape(0, 1)), AssertionError),
    "dtype": (close(t([1.0, 2.0]), t([1.0, 2.0], "float64")), AssertionError),
    "dtype_int": (close(t([1, 2], "int32"), t([1, 2], "int64")), AssertionError),
    "dtype_complex": (close(t([1 + 2j]), t([1 + 2j], "complex128")), AssertionError),
    "dtype_unchecked_promoted": (close(t([1.0, 2.0]), t([1.0, 2.0001], "float64"), check_dtype=False),
                                 AssertionError),
    "dtype_unchecked_int_float": (close(t([1, 2]), t([1.0, 2.5]), check_dtype=False), AssertionError),
    "dtype_unchecked_equal": (close(t([1.0]), t([1], "int64"), check_dtype=False), None),
    "dtype_unchecked_16bit": (close(lambda M: M.zeros(3, dtype=M.bfloat16), t([0.0, 1.0, 2.0], "float16"),
                                    check_dtype=False), AssertionError),
    "dtype_unchecked_bool": (close(t([True]), t([3.5]), check_dtype=False), AssertionError),
    "device": (close(t([1.0, 2.0]), lambda M: M.ones(2, device="meta")), AssertionError),
    "device_before_dtype": (close(t([1.0, 2.0]), lambda M: M.ones(2, device="meta", dtype=M.float64)),
                            AssertionError),
    "device_unchecked_meta": (close(t([1.0, 2.0]), lambda M: M.ones(2, device="meta"), check_device=False), None),
    "meta_values_skipped": (close(lambda M: M.zeros(2, device="meta"), lambda M: M.ones(2, device="meta")), None),
    "stride": (close(lambda M: M.ones(2, 3), lambda M: M.ones(3, 2).t(), check_stride=True), AssertionError),
    "stride_unchecked": (close(lambda M: M.ones(2, 3), lambda M: M.ones(3, 2).t()), None),
    "stride_before_dtype": (close(lambda M: M.ones(2, 3), lambda M: M.ones(3, 2, dtype=M.float64).t(),
                                  check_stride=True), AssertionError),
    "stride_expanded": (close(lambda M: T(M, [1.0, 2.0]).expand(2, 2), t([[1.0, 2.0], [1.0, 2.0]]),
                              check_stride=True), AssertionError),
    "subclass_allowed": (close(t([1.0, 2.0]), lambda M: M.nn.Parameter(T(M, [1.0, 2.0]))), None),
    # Python scalars, numpy scalars, None, bools
    "float_scalars": (close(1.0, 1.1), AssertionError),
    "int_scalars": (close(1, 2), AssertionError),
    "complex_scalars": (close(1 + 1j, 1 + 2j), AssertionError),
    "scalar_types": (close(1, 1.0), AssertionError),
    "scalar_types_unchecked": (close(1, 1.5, check_dtype=False), AssertionError),
    "scalar_types_unchecked_equal": (close(1, 1.0, check_dtype=False), None),
    "scalar_nan": (close(NAN, NAN), AssertionError),
    "scalar_nan_equal": (close(NAN, NAN, equal_nan=True), None),
    "scalar_nan_vs_zero": (close(NAN, 0.0), AssertionError),
    "scalar_zero_expected": (close(1e-3, 0.0, rtol=0, atol=1e-4), AssertionError),
    "scalar_equality": (close(1e-3, 0.0, rtol=0, atol=0), AssertionError),
    "numpy_float32_scalar": (close(np.float32(1.0), np.float32(1.1)), AssertionError),
    "numpy_int_vs_int": (close(np.int64(1), 1), None),
    "none": (close(None, None), None),
    "none_vs_number": (close(None, 1), AssertionError),
    "bools": (close(True, False), AssertionError),
    "numpy_bools": (close(np.bool_(True), True), None),
    "bool_vs_int": (close(True, 1), RuntimeError),
    # numpy arrays (compared with numpy arrays only)
    "numpy": (close(np.array([1.0, 2.0]), np.array([1.0, 2.1])), AssertionError),
    "numpy_int": (close(np.array([1, 2]), np.array([1, 3])), AssertionError),
    "numpy_0d": (close(np.array(1.0), np.array(2.0)), AssertionError),
    "numpy_dtype": (close(np.array([1.0]), np.array([1.0], dtype=np.float32)), AssertionError),
    "numpy_dtype_unchecked": (close(np.array([1.0]), np.array([1.0], dtype=np.float32), check_dtype=False), None),
    # type mismatches
    "tensor_vs_numpy": (close(t([1.0, 2.0]), np.array([1.0, 2.0])), TypeError),
    "scalar_vs_tensor": (close(1.0, t(1.0)), TypeError),
    "tensor_vs_list": (close(t([1.0]), [1.0]), TypeError),
    "strings": (close("a", "a"), TypeError),
    "objects": (close(..., ...), TypeError),
    "list_vs_dict": (close([1], {"a": 1}), TypeError),
    "subclass_refused": (close(t([1.0, 2.0]), lambda M: M.nn.Parameter(T(M, [1.0, 2.0])),
                               allow_subclasses=False), TypeError),
    # sequences and mappings
    "list": (close([1.0, 2.0], [1.0, 2.1]), AssertionError),
    "list_vs_tuple": (close([1.0, 2.0], (1.0, 2.0)), None),
    "list_length": (close([1.0, 2.0], [1.0, 2.0, 3.0]), AssertionError),
    "nested_lists": (close([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.5]]), AssertionError),
    "nested_length": (close([t([1.0, 2.0]), [1, 2]], [t([1.0, 3.0]), [1, 2, 3]]), AssertionError),
    "structure_before_values": (close([t([1.0, 2.0]), "x"], [t([1.0, 3.0]), "x"]), TypeError),
    "list_of_tensors": (close([t([1.0]), t([2.0, 3.0])], [t([1.0]), t([2.0, 3.5])]), AssertionError),
    "list_of_tensors_shape": (close([t([1.0, 2.0])], [t([1.0, 2.0, 3.0])]), AssertionError),
    "sizes": (close(lambda M: M.Size([2, 3]), lambda M: M.Size([2, 4])), AssertionError),
    "size_vs_tuple": (close(lambda M: M.Size([2, 3]), (2, 3)), None),
    "bytes": (close(b"ab", b"ac"), AssertionError),
    "empty_containers": (close(([], {}), ((), {})), None),
    "dict": (close({"a": 1.0}, {"a": 1.1}), AssertionError),
    "dict_keys": (close({"a": 1.0, "c": 2}, {"b": 1.0, "c": 2}), AssertionError),
    "dict_missing_key": (close({"a": 1}, {"a": 1, "b": 2}), AssertionError),
    "dict_sorted_first_failure": (close({"b": 1.0, "a": 2.0}, {"a": 2.5, "b": 1.5}), AssertionError),
    "dict_of_tensors": (close({"w": t([1.0, 2.0]), "b": t([0.5])}, {"w": t([1.0, 2.0]), "b": t([0.6])}),
                        AssertionError),
    "nested_dict": (close({"a": [1.0, {"b": t([2.0])}]}, {"a": [1.0, {"b": t([2.1])}]}), AssertionError),
    "nested_dict_ok": (close({"a": [1.0, {"b": t([2.0])}]}, {"a": (1.0, {"b": t([2.0])})}), None),
    # msg
    "msg_string": (close(t([1.0]), t([1.1]), msg="custom"), AssertionError),
    "msg_callable": (close(t([1.0]), t([1.1]), msg=lambda m: f"Header\n\n{m}\n\nFooter"), AssertionError),
    "msg_callable_nested": (close([t([1.0, 2.0])], [t([1.0, 2.5])], msg=lambda m: "<" + m + ">"), AssertionError),
    "msg_string_shape": (close(t([1.0, 2.0]), t([1.0, 2.0, 3.0]), msg="custom"), AssertionError),
    "msg_callable_shape": (close(t([1.0, 2.0]), t([1.0, 2.0, 3.0]), msg=lambda m: "[" + m + "]"), AssertionError),
    "msg_string_none": (close(None, 1, msg="custom"), AssertionError),
    "msg_string_scalar_types": (close(1, 1.0, msg="custom"), AssertionError),
    "msg_callable_bools": (close(True, False, msg=lambda m: "<" + m), AssertionError),
    "msg_not_for_structure": (close([1, 2], [1, 2, 3], msg="custom"), AssertionError),
    "msg_not_for_keys": (close({"a": 1}, {"b": 1}, msg=lambda m: "<" + m), AssertionError),
    "msg_not_for_types": (close(["a"], ["a"], msg=lambda m: "<" + m), TypeError),
    "msg_other_ignored": (close(t([1.0, 2.0]), t([1.0, 2.5]), msg=3), AssertionError),
    "msg_on_pass": (close(t(3.0), t(3.0), msg=lambda m: m.upper()), None),
}

# Unexpected inputs raise RuntimeError in both, with each framework's own explanation.
_TYPE_ONLY = {"negative_rtol", "equal_nan_not_bool", "bool_vs_int"}


@pytest.mark.parametrize("name", list(CASES))
def test_assert_close_as_torch(name):
    fn, expected = CASES[name]
    kind, _ = _check_twins(fn, message=name not in _TYPE_ONLY)
    assert kind is expected


def test_assert_close_messages_spelled_out():
    # The report itself, not only its agreement with PyTorch's.
    with pytest.raises(AssertionError) as info:
        flow.testing.assert_close(flow.tensor([1.0, 2.0, 3.0]), flow.tensor([1.0, 2.5, 3.1]))
    assert str(info.value) == (
        "Tensor-likes are not close!\n\nMismatched elements: 2 / 3 (66.7%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)"
    )
    with pytest.raises(AssertionError, match=r"^The values for attribute 'shape' do not match: "
                                             r"oneflow.Size\(\[2\]\) != oneflow.Size\(\[3\]\).$"):
        flow.testing.assert_close(flow.ones(2), flow.ones(3))
    with pytest.raises(AssertionError, match=r"^The values for attribute 'dtype' do not match: "
                                             r"oneflow.float32 != oneflow.float64.$"):
        flow.testing.assert_close(flow.ones(2), flow.ones(2, dtype=flow.float64))
    with pytest.raises(AssertionError, match=r"^The values for attribute 'device' do not match: cpu != meta.$"):
        flow.testing.assert_close(flow.ones(2), flow.ones(2, device="meta"))
    with pytest.raises(AssertionError, match=r"The failure occurred for item \['a'\]\[1\]\['b'\]$"):
        flow.testing.assert_close({"a": [1, {"b": 2.0}]}, {"a": [1, {"b": 2.5}]})
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted"):
        flow.testing.assert_close(1.0, 1.0, atol=1.0)
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
        flow.testing.assert_close(flow.ones(1), np.ones(1, dtype=np.float32))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_default_tolerances_as_torch(dtype):
    # Each default shows in the report, and values just inside / outside atol + rtol*|e| behave alike.
    kind, f_msg = _check_twins(close(t([1.0, 2.0], dtype), t([1.0, 2.5], dtype)))
    rtol, atol = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
                  "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}[dtype]
    assert kind is AssertionError and f"(up to {atol} allowed)" in f_msg and f"(up to {rtol} allowed)" in f_msg
    for scale, outcome in ((0.5, None), (3.0, AssertionError)):
        delta = scale * (atol + rtol * 100.0)
        kind, _ = _check_twins(close(t([100.0], dtype), lambda M: T(M, [100.0], "float64").add(delta).to(
            getattr(M, dtype))))
        if dtype not in ("float16", "bfloat16"):  # the 16-bit grid may round delta away
            assert kind is outcome


def test_integer_and_bool_compare_exactly():
    for dtype in ("uint8", "int8", "int32", "int64", "bool"):
        kind, f_msg = _check_twins(close(t([1, 0], dtype), t([1, 1], dtype)))
        assert kind is AssertionError and f_msg.startswith("Tensor-likes are not equal!")
        assert "allowed" not in f_msg and "Mismatched elements: 1 / 2 (50.0%)" in f_msg


def test_assert_allclose_as_torch():
    cases = [
        (close(t([1.0]), t([1.1])), AssertionError),
        (lambda M: M.testing.assert_allclose(T(M, [1.0]), T(M, [1.1])), AssertionError),
        (lambda M: M.testing.assert_allclose(T(M, [1.0]), [1.00001]), None),
        (lambda M: M.testing.assert_allclose(T(M, [1.0, NAN]), T(M, [1.0, NAN], "float64")), None),
        (lambda M: M.testing.assert_allclose(T(M, [1.0]), T(M, [1.0], "float64"), rtol=1e-3), ValueError),
        (lambda M: M.testing.assert_allclose(T(M, [1, 2]), [1, 3], msg="custom"), AssertionError),
        (lambda M: M.testing.assert_allclose(T(M, [1.0], "float16"), T(M, [1.0009765625], "float16")), None),
    ]
    for fn, expected in cases:
        kind, _ = _check_twins(fn)
        assert kind is expected
    with pytest.warns(FutureWarning, match="assert_allclose"):
        flow.testing.assert_allclose(flow.ones(2), flow.ones(2))


def test_module_is_registered():
    assert flow.testing is oneflow.testing
    assert {"assert_close", "make_tensor", "assert_allclose"} <= set(dir(flow.testing))
    flow.testing.assert_close(flow.ones(2, 3), flow.ones(2, 3))


# ---- make_tensor


def make(M, *shape, **kw):
    kw = dict(kw)
    kw["dtype"] = getattr(M, kw["dtype"])
    kw.setdefault("device", "cpu")
    for key in ("memory_format",):
        if key in kw:
            kw[key] = getattr(M, kw[key])
    return M.testing.make_tensor(*shape, **kw)


def _describe(x):
    return (tuple(x.shape), str(x.dtype).split(".")[-1], x.is_contiguous(), tuple(x.stride()),
            x.requires_grad, x.is_leaf)


@pytest.mark.parametrize("shape,kw", [
    ((2, 3), dict(dtype="float32")),
    (((2, 3),), dict(dtype="float64")),
    (([4, 1, 2],), dict(dtype="int64")),
    ((), dict(dtype="float32")),
    ((0, 3), dict(dtype="complex64")),
    ((5,), dict(dtype="float32", requires_grad=True)),
    ((5,), dict(dtype="complex128", requires_grad=True)),
    ((4, 5), dict(dtype="float32", noncontiguous=True)),
    ((2, 3, 4), dict(dtype="float64", noncontiguous=True, requires_grad=True)),
    ((5,), dict(dtype="int32", noncontiguous=True)),
    ((1,), dict(dtype="float32", noncontiguous=True)),
    ((), dict(dtype="float32", noncontiguous=True)),
    ((2, 0), dict(dtype="float32", noncontiguous=True)),
    ((2, 3, 4, 5), dict(dtype="float32", memory_format="channels_last")),
    ((2, 3, 4, 5), dict(dtype="float32", memory_format="channels_last", requires_grad=True)),
])
def test_make_tensor_layout_as_torch(shape, kw):
    f, t_ = make(flow, *shape, **kw), make(torch, *shape, **kw)
    assert _describe(f) == _describe(t_)
    if kw.get("noncontiguous") and f.numel() > 1:
        # A view of a buffer twice as long in the last dimension; its values copy out unchanged.
        assert not f.is_contiguous() and f.stride()[-1] == 2
        assert np.array_equal(f.contiguous().numpy(), f.numpy())


@pytest.mark.parametrize("dtype,low,high,lo,hi", [
    ("float16", None, None, -9, 9), ("bfloat16", None, None, -9, 9), ("float32", None, None, -9, 9),
    ("float64", None, None, -9, 9), ("complex64", None, None, -9, 9), ("complex128", None, None, -9, 9),
    ("uint8", None, None, 0, 9), ("int8", None, None, -9, 9), ("int32", None, None, -9, 9),
    ("int64", None, None, -9, 9), ("bool", None, None, 0, 1),
    ("float32", -1, 1, -1, 1), ("float64", 2.5, 2.75, 2.5, 2.75), ("int64", 3.5, 4.5, 4, 4),
    ("int32", -3, 3, -3, 2), ("uint8", -100, 1000, 0, 255), ("int8", -1000, 1000, -128, 127),
    ("bool", 1, 2, 1, 1), ("bool", 0, 1, 0, 0), ("bool", -1, None, 0, 1),
])
def test_make_tensor_ranges_as_torch(dtype, low, high, lo, hi):
    def parts(x):
        return [x.real, x.imag] if x.is_complex() else [x]

    for M in (flow, torch):
        x = make(M, 4000, dtype=dtype, low=low, high=high)
        assert str(x.dtype).split(".")[-1] == dtype
        for p in parts(x):
            vals = p.to(M.float64)
            assert vals.min().item() >= lo and vals.max().item() <= hi
            if dtype in ("float32", "float64") and high is not None:
                assert vals.max().item() < high  # the upper bound is exclusive
        # Integer draws reach both ends of a small range; float draws spread over it.
        if dtype not in ("float16", "bfloat16", "float32", "float64", "complex64", "complex128"):
            assert (x.min().item(), x.max().item()) == (lo, hi)
        else:
            assert parts(x)[0].to(M.float64).std().item() > (hi - lo) / 5


def test_make_tensor_clamps_huge_ranges():
    for M in (flow, torch):
        x = make(M, 2000, dtype="float32", low=-1e300, high=1e300)
        assert bool(M.isfinite(x).all()) and x.abs().max().item() > 1e37
        x = make(M, 2000, dtype="float16", low=-1e6, high=1e6)
        assert bool(M.isfinite(x).all()) and x.abs().max().item() > 1e4
        x = make(M, 100, dtype="int64", low=-2**70, high=2**70)
        assert x.abs().max().item() > 2**50
        x = make(M, 100, dtype="int32", low=1, high=2**40)
        assert x.min().item() >= 1 and x.max().item() > 2**20


def test_make_tensor_low_equal_high_floats_warns():
    for M in (flow, torch):
        with pytest.warns(FutureWarning):
            x = make(M, 10, dtype="float64", low=3, high=3)
        assert x.tolist() == [3.0] * 10
        with pytest.warns(FutureWarning):
            z = make(M, 3, dtype="complex64", low=2, high=2)
        assert z.tolist() == [2 + 2j] * 3


@pytest.mark.parametrize("dtype,low,high,replacement", [
    ("float32", -1e-45, 1e-45, 1.1754943508222875e-38), ("float16", 0, 1e-8, 6.103515625e-05),
    ("int64", -1, 1, 1), ("uint8", 0, 1, 1), ("bool", None, None, True),
    ("complex64", -1e-45, 1e-45, None), ("complex128", -1e-300, 1e-300, None),
])
def test_make_tensor_exclude_zero_as_torch(dtype, low, high, replacement):
    for M in (flow, torch):
        for noncontiguous in (False, True):
            x = make(M, 50, 40, dtype=dtype, low=low, high=high, exclude_zero=True, noncontiguous=noncontiguous)
            assert int((x == 0).sum().item()) == 0
            if replacement is not None:
                assert replacement in set(x.flatten().tolist())
            else:
                # A zero complex value becomes (tiny + 0j), as PyTorch 2.x does.
                tiny = (M.finfo(M.float32) if dtype == "complex64" else M.finfo(M.float64)).tiny
                assert complex(tiny, 0) in set(x.flatten().tolist()) or x.real.eq(0).sum().item() == 0


def test_make_tensor_requires_grad_is_a_leaf():
    for M in (flow, torch):
        x = make(M, 3, 4, dtype="float32", requires_grad=True, noncontiguous=True)
        assert x.requires_grad and x.is_leaf and x.grad_fn is None
        (x * 2).sum().backward()
        assert x.grad.tolist() == [[2.0] * 4] * 3


@pytest.mark.parametrize("shape,kw,kind", [
    ((10,), dict(dtype="int64", requires_grad=True), ValueError),
    ((10,), dict(dtype="bool", requires_grad=True), ValueError),
    ((10,), dict(dtype="float64", low=4, high=3), ValueError),
    ((10,), dict(dtype="int64", low=3, high=3), ValueError),
    ((10,), dict(dtype="bool", low=1, high=1), ValueError),
    ((10,), dict(dtype="float32", low=4.0, high=3), ValueError),
    ((10,), dict(dtype="float32", low=INF), ValueError),
    ((10,), dict(dtype="float32", high=-20), ValueError),
    ((10,), dict(dtype="int64", low=NAN), ValueError),
    ((10,), dict(dtype="float32", high=NAN), ValueError),
    ((10,), dict(dtype="float32", low=NAN, high=NAN), ValueError),
    ((10,), dict(dtype="int64", low=NAN, requires_grad=True), ValueError),
    ((10,), dict(dtype="int8", low=200, high=300), ValueError),
    ((10,), dict(dtype="float32", low=1e39, high=2e39), ValueError),
    ((10,), dict(dtype="float32", low=-2e39, high=-1e39), ValueError),
    ((10,), dict(dtype="bool", low=5, high=10), ValueError),
    ((5,), dict(dtype="float32", noncontiguous=True, memory_format="contiguous_format"), ValueError),
    ((5,), dict(dtype="int64", noncontiguous=True, memory_format="channels_last", requires_grad=True), ValueError),
    ((10,), dict(dtype="int64", low=3.2, high=3.8), RuntimeError),
    ((-1,), dict(dtype="float32"), RuntimeError),
    ((2, 3), dict(dtype="float32", memory_format="channels_last"), RuntimeError),
])
def test_make_tensor_errors_as_torch(shape, kw, kind):
    (t_type, t_msg), (f_type, f_msg) = (_outcome(lambda M: make(M, *shape, **kw), M) for M in (torch, flow))
    assert t_type is f_type is kind
    if kind is ValueError:
        assert _normalize(t_msg) == f_msg


def test_make_tensor_type_errors():
    for M in (flow, torch):
        with pytest.raises(TypeError):
            M.testing.make_tensor(10, 2.5, dtype=M.float32, device="cpu")
        with pytest.raises(TypeError):
            M.testing.make_tensor(True, dtype=M.float32, device="cpu")
        with pytest.raises(TypeError, match="device"):
            M.testing.make_tensor(10, dtype=M.float32)
        with pytest.raises(TypeError, match="not supported by .*make_tensor"):
            M.testing.make_tensor(10, dtype="float32", device="cpu")
        with pytest.raises(TypeError):
            M.testing.make_tensor(10, dtype=M.float32, device="cpu", low=1 + 1j)


def test_make_tensor_feeds_assert_close():
    # The two halves together, as test suites use them: a tensor equals its copy, and not itself + 1.
    x = flow.testing.make_tensor(3, 4, dtype=flow.float32, device="cpu", noncontiguous=True)
    flow.testing.assert_close(x, x.clone())
    with pytest.raises(AssertionError, match=r"Mismatched elements: 12 / 12 \(100.0%\)"):
        flow.testing.assert_close(x, x + 1)
    assert math.isclose(float((x + 1 - x).mean()), 1.0, rel_tol=1e-5)
