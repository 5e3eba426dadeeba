"""oneflow.testing: PyTorch's torch.testing (assert_close, make_tensor, the deprecated
assert_allclose), for tests written against either framework."""

import warnings

import oneflow as flow

from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor", "assert_allclose"]

# assert_allclose's own defaults (looser than assert_close's), kept as PyTorch kept them.
_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated form of assert_close (as torch.testing.assert_allclose): non-tensor inputs
    become tensors (`expected` in the dtype of `actual`), the dtypes need not match, NaNs
    compare equal by default and the default tolerances are per dtype as listed above."""
    warnings.warn(
        "`oneflow.testing.assert_allclose()` is deprecated (as torch.testing.assert_allclose since "
        "PyTorch 1.12). Please use `oneflow.testing.assert_close()` instead.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, flow.Tensor):
        actual = flow.tensor(actual)
    if not isinstance(expected, flow.Tensor):
        expected = flow.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(
        actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
        check_dtype=False, check_stride=False, msg=msg or None,
    )
