"""Shared test plumbing: which ``flow`` module is under test, dtype names,
tensor construction from numpy, and comparison against torch.

The default run tests the real ``oneflow`` package.  Setting the environment
variable ``OF_TEST_SHIM=torch`` swaps in a thin torch-backed stand-in (see
``torch_shim.py``); that exists only to validate the harness itself while the
C++ core is not built, and is never used unless asked for.

When ``oneflow`` is simply not installed, every module that needs it is
skipped (so ``test_tensor_str.py`` still runs on its own).  Any other import
failure (a broken build, a missing symbol) is raised, because hiding it would
make a broken package look like a passing suite.
"""

import os
import re

import numpy as np
import pytest
import torch

SHIM = os.environ.get("OF_TEST_SHIM", "")

if SHIM == "torch":
    import torch_shim

    flow = torch_shim.make_shim()
elif SHIM:
    raise ValueError(f"unknown OF_TEST_SHIM={SHIM!r} (only 'torch' is supported)")
else:
    try:
        import oneflow as flow  # noqa: F401
    except ModuleNotFoundError as e:
        if e.name != "oneflow":
            raise
        pytest.skip("oneflow is not built/installed", allow_module_level=True)

# The prefix of type names: ``oneflow.float32``, ``oneflow.Size([2, 3])``.  The
# shim reuses torch's objects, whose names say ``torch.``.
PREFIX = "torch" if SHIM else "oneflow"

# Only tests of behaviour where OneFlow deliberately differs from PyTorch (or
# that torch cannot express) are skipped under the shim; see conftest.py.
oneflow_only = pytest.mark.oneflow_only

# ---------------------------------------------------------------------------
# dtypes

BOOL = ("bool",)
INTS = ("int8", "uint8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
NUMBER = INTS + FLOATS
ALL = BOOL + NUMBER
COMPLEX = ("complex64", "complex128")
ALL_DTYPES = ALL

# numpy has no bfloat16: such values travel as float32 and are cast by the
# framework itself (the same way in flow and torch).
NP_DTYPE = {
    "bool": np.bool_,
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "float16": np.float16,
    "bfloat16": np.float32,
    "float32": np.float32,
    "float64": np.float64,
    "complex64": np.complex64,
    "complex128": np.complex128,
}


def lib_dtype(lib, name):
    """The dtype object called ``name`` in ``lib`` (flow or torch)."""
    return getattr(lib, name)


def dtype_name(dt):
    """``oneflow.float32`` / ``torch.float32`` -> ``float32``."""
    s = str(dt)
    return s.split(".", 1)[1] if "." in s else s


def ref_dtype_name(torch_dtype):
    """The dtype flow must produce where torch produced ``torch_dtype``: the same."""
    return dtype_name(torch_dtype)


def flow_dtype_name(flow_dtype):
    return dtype_name(flow_dtype)


# ---------------------------------------------------------------------------
# Tolerances.  The reference is torch run in the same dtype, so 16-bit results
# may legitimately differ by one unit in the last place (both sides compute in
# float32 and round; the float32 intermediates can differ in the last bits).

DEFAULT_TOL = {
    "float16": (2e-3, 1e-3),  # (rtol, atol); one half ulp is ~9.8e-4 relative
    "bfloat16": (1.6e-2, 1e-2),  # one bfloat16 ulp is ~7.8e-3 relative
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    # Per real component, as for the float dtype of the parts.
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def tol_for(name, overrides=None):
    if overrides and name in overrides:
        return overrides[name]
    return DEFAULT_TOL.get(name, (0.0, 0.0))


# ---------------------------------------------------------------------------
# Tensor construction.


def np_array(values, dtype):
    return np.asarray(values, dtype=NP_DTYPE[dtype])


def from_np(lib, arr, dtype):
    """A contiguous ``lib`` tensor of ``dtype`` holding ``arr``'s values."""
    t = lib.tensor(np.asarray(arr).copy(order="C"))
    if dtype == "bfloat16":
        t = t.to(lib.bfloat16)
    return t


def to_numpy(t):
    """Values of a flow or torch tensor as numpy (bfloat16 widened exactly)."""
    if dtype_name(t.dtype) == "bfloat16":
        t = t.float()
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy()  # torch's lazy conj (flow's is eager)
    return t.numpy()


def is_tensor(x):
    return isinstance(x, (flow.Tensor, torch.Tensor))


def builtin_exc_type(exc):
    """The Python exception class to expect from flow where torch raised ``exc``.

    torch raises its own subclasses (``torch.OutOfMemoryError``,
    NotImplementedError for a missing dtype kernel); what matters is the
    builtin family: TypeError, ValueError, IndexError or RuntimeError.
    """
    if isinstance(exc, torch.linalg.LinAlgError):  # (a RuntimeError: the subclass must match too)
        return flow.linalg.LinAlgError
    for cls in (TypeError, IndexError, ValueError, RuntimeError):
        if isinstance(exc, cls):
            return cls
    return type(exc)


# ---------------------------------------------------------------------------
# Comparison.


def assert_close(actual, expected, rtol=None, atol=None, overrides=None, what=""):
    """Compare a flow result with a torch reference: structure, shape, dtype, values.

    ``expected`` may be a torch tensor, a tuple/list of them, or a Python scalar.
    """
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)), f"{what}: expected a sequence, got {type(actual)}"
        assert len(actual) == len(expected), f"{what}: length {len(actual)} != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, rtol, atol, overrides, f"{what}[{i}]")
        return
    if not isinstance(expected, torch.Tensor):
        assert not is_tensor(actual) and actual == expected, f"{what}: {actual!r} != {expected!r}"
        return
    assert isinstance(actual, flow.Tensor), f"{what}: expected a tensor, got {type(actual)}"
    want_dtype = ref_dtype_name(expected.dtype)
    got_dtype = flow_dtype_name(actual.dtype)
    assert str(actual.dtype) == f"{PREFIX}.{dtype_name(actual.dtype)}", f"{what}: dtype str {actual.dtype}"
    assert got_dtype == want_dtype, f"{what}: dtype {got_dtype} != {want_dtype}"
    assert tuple(actual.shape) == tuple(expected.shape), (
        f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    )
    a = to_numpy(actual)
    e = to_numpy(expected)
    if want_dtype != dtype_name(expected.dtype):
        e = e.astype(NP_DTYPE[want_dtype])
    if rtol is None:
        rtol, atol = tol_for(want_dtype, overrides)
    if want_dtype in FLOATS:
        np.testing.assert_allclose(
            a.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True,
            err_msg=what,
        )
    elif want_dtype in COMPLEX:
        # Real and imaginary parts each within the tolerance (NaN in the same places).
        for part in (np.real, np.imag):
            np.testing.assert_allclose(part(a).astype(np.float64), part(e).astype(np.float64),
                                       rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, e, err_msg=what)


def assert_same_meta(actual, expected, what="", device_type=None):
    """Structure, shape and dtype only (for ops whose values are undefined,
    like ``empty``, and for meta-device results).  ``expected`` may be a flow
    or torch tensor, or a sequence of them."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)), f"{what}: expected a sequence, got {type(actual)}"
        assert len(actual) == len(expected), f"{what}: length {len(actual)} != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same_meta(a, e, f"{what}[{i}]", device_type)
        return
    assert isinstance(actual, flow.Tensor), f"{what}: expected a tensor, got {type(actual)}"
    exp_dtype = (
        ref_dtype_name(expected.dtype) if isinstance(expected, torch.Tensor)
        else flow_dtype_name(expected.dtype)
    )
    assert flow_dtype_name(actual.dtype) == exp_dtype, f"{what}: dtype {actual.dtype} != {exp_dtype}"
    assert tuple(actual.shape) == tuple(expected.shape), (
        f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    )
    if device_type is not None:
        assert actual.device.type == device_type, f"{what}: device {actual.device} is not {device_type}"


def flow_to_torch(t):
    """A torch copy of a flow tensor (for comparing two flow results)."""
    name = flow_dtype_name(t.dtype)
    out = torch.from_numpy(np.array(to_numpy(t)))
    return out.to(torch.bfloat16) if name == "bfloat16" else out


def invoke(op, form, lib, args, kwargs, torch_ref=None):
    """Call OpInfo ``op`` in ``form`` ("fn", "method", "op") with materialized arguments.  On the torch side
    ``torch_ref`` (a callable) replaces the OpInfo reference when given."""
    if lib is torch and torch_ref is not None:
        return torch_ref(*args, **kwargs)
    if form == "fn":
        f = op.fn(flow) if lib is flow else op.ref(torch)
        return f(*args, **kwargs)
    if form == "method":
        if lib is flow or (op.ref_is_default and hasattr(torch.Tensor, op.method)):
            return getattr(args[0], op.method)(*args[1:], **kwargs)
        return op.ref(torch)(*args, **kwargs)
    if form == "op":
        return op.operator(*args)
    raise ValueError(form)


_TORCH_213 = tuple(int(v) for v in re.findall(r"\d+", torch.__version__)[:2]) >= (2, 13)


def assert_same_repr(f, t):
    """repr(f) == repr(t), as PyTorch 2.13 (the reference) prints it: older torch leaves the norm
    layers' `bias=` flag out of their repr (2.13 added it), so it is dropped from ours there."""
    a, b = repr(f), repr(t)
    if not _TORCH_213 and "bias=" not in b:
        a = re.sub(r", bias=(True|False)(?=[,)])", "", a)
    assert a == b
