"""nn.functional.bilinear: y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o].

One matmul of x2 with W seen as (out * in1, in2) (a view, W is not copied), then a pointwise
product with x1 summed over in1. Checks and messages are PyTorch's."""
from .. import _oneflow_internal as _C
from .._argcheck import check_optional_tensor, check_tensor

__all__ = ["bilinear"]


def _check_bilinear(input1, input2, weight, bias):
    check_tensor(input1, "bilinear", "input1", 1)
    check_tensor(input2, "bilinear", "input2", 2)
    check_tensor(weight, "bilinear", "weight", 3)
    check_optional_tensor(bias, "bilinear", "bias", 4)
    if input1.ndim != input2.ndim:
        raise RuntimeError("bilinear(): input dimensions do not match: "
                           f"got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError("bilinear(): input1 size does not match weight size: "
                           f"got {input1.shape[-1]} but expected {weight.shape[1]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out, in1, in2), got {weight.ndim}-D")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError("bilinear(): input2 size does not match weight size: "
                           f"got {input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.ndim > 0 and bias.shape[0] != weight.shape[0]:
        raise RuntimeError("bilinear(): bias size does not match weight size: "
                           f"got {bias.shape[0]} but expected {weight.shape[0]}")
    if not input1.dtype == input2.dtype == weight.dtype:
        raise RuntimeError(f"All tensors must have the same dtype, got input1: {input1.dtype}, "
                           f"input2: {input2.dtype}, weight: {weight.dtype}")


def bilinear(input1, input2, weight, bias=None):
    """Applies y = x1^T A x2 + b over the last dimension of both inputs (leading dims are
    batch dims and must match); weight has shape (out_features, in1_features, in2_features)."""
    _check_bilinear(input1, input2, weight, bias)
    out_features, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    rows = 1
    for s in lead:
        rows *= s
    # t[n, o, i] = sum_j x2[n, j] W[o, i, j]; then y[n, o] = sum_i t[n, o, i] x1[n, i] as a
    # product and a reduction (a bmm of (out, in1) x (in1, 1) per row is several times slower
    # when in1 is small, forward and backward).
    t = _C.matmul(input2.reshape(rows, in2), weight.reshape(out_features * in1, in2).t())
    out = (t.reshape(rows, out_features, in1) * input1.reshape(rows, 1, in1)).sum(-1)
    out = out.reshape(*lead, out_features)
    return out if bias is None else out + bias
