"""A numpy array as the other operand of a tensor's arithmetic (upstream OneFlow's
tensor/test_tensor_and_ndarray_compatibility.py): a tensor of its values, as PyTorch 2.13 reads it."""
import operator

import numpy as np
import pytest
import torch

import oneflow as flow

_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
        "**": operator.pow, "//": operator.floordiv, "%": operator.mod, "==": operator.eq}


@pytest.mark.parametrize("op", sorted(_OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_tensor_op_ndarray_as_torch(op, dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(1, 9, size=(2, 3)).astype(np.float32)
    b = rng.integers(1, 5, size=(2, 3)).astype(dtype)
    fn = _OPS[op]
    got, want = fn(flow.tensor(a), b), fn(torch.tensor(a), b)
    if dtype != np.int64:  # a full operand in promotion: float32 + float64 array is float64
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    else:
        # PyTorch's Tensor.__add__ declines an array and numpy computes it (numpy's promotion:
        # float32 with int64 is float64, returned as a tensor); ours promotes it as a tensor
        # operand, as upstream OneFlow: an integer array leaves the float tensor's dtype.
        assert got.dtype == (flow.bool if op == "==" else flow.float32)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_ndarray_operand_broadcasts_and_keeps_read_only_arrays_unwarned():
    x = flow.ones(2, 3)
    ro = np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))  # read-only view
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = x + ro
    np.testing.assert_array_equal(r.numpy(), 1 + ro)
    np.testing.assert_array_equal(flow.add(x, np.arange(3.0)).numpy(), torch.add(torch.ones(2, 3), torch.arange(3.0)).numpy())
    # numpy scalars stay wrapped numbers (no promotion to float64), as PyTorch's
    assert (x + np.float64(2)).dtype == flow.float32
