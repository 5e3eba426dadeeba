"""nn.functional convolutions: the argument glue PyTorch also does in Python, over the op-table
entries ``flow._C.convNd`` / ``conv_transposeNd`` (src/ops/table/conv.yaml).

``padding`` may be a string: ``'valid'`` is no padding; ``'same'`` pads so that the output has the
input's size (stride 1 only). When the total padding ``dilation * (kernel - 1)`` of a dim is odd,
the extra zero goes on the right, as a zero-padded copy of the input (PyTorch does the same).
"""
from .. import _oneflow_internal as _C
from .._global_hooks import placed_like


def _ntuple(v, k):
    if isinstance(v, (list, tuple)):
        return tuple(v) if len(v) != 1 else tuple(v) * k
    return (v,) * k


def _pad_right(x, extra):
    """x with extra[d] zeros appended to spatial dim d (differentiable: a concatenation)."""
    k = len(extra)
    for d, e in enumerate(extra):
        if e:
            dim = x.dim() - k + d
            shape = list(x.shape)
            shape[dim] = e
            x = _C.cat([x, _C.zeros(shape, dtype=x.dtype, **placed_like(x))], dim)
    return x


def _resolve_padding(name, input, weight, stride, padding, dilation, k):
    """(input, padding as ints) for a padding string; unchanged otherwise."""
    if not isinstance(padding, str):
        return input, padding
    if padding == "valid":
        return input, 0
    if padding != "same":
        raise RuntimeError(f"{name}(): Invalid padding string: {padding!r} (expected 'valid' or 'same')")
    if any(s != 1 for s in _ntuple(stride, k)):
        raise RuntimeError(f"{name}(): padding='same' is not supported for strided convolutions")
    if weight.dim() != k + 2:
        return input, 0  # the entry reports the weight's rank
    dil = _ntuple(dilation, k)
    if len(dil) != k:
        return input, 0  # the entry reports the length mismatch
    total = [dil[d] * (weight.shape[2 + d] - 1) for d in range(k)]
    left = [t // 2 for t in total]
    extra = [t - 2 * l for t, l in zip(total, left)]
    if any(extra):
        input = _pad_right(input, extra)
    return input, left


def _conv(k):
    name = f"conv{k}d"
    entry = getattr(_C, name)

    def conv(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        input, padding = _resolve_padding(name, input, weight, stride, padding, dilation, k)
        return entry(input, weight, bias, stride, padding, dilation, groups)

    conv.__name__ = conv.__qualname__ = name
    conv.__doc__ = (
        f"{name}(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor\n\n"
        f"Applies a {k}D convolution over an input of shape (N, C_in, *spatial) or (C_in, *spatial).\n"
        "padding: int, tuple, 'valid' or 'same'. See :class:`oneflow.nn.Conv{k}d`."
    )
    return conv


def _conv_transpose(k):
    name = f"conv_transpose{k}d"
    entry = getattr(_C, name)

    def conv_transpose(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        return entry(input, weight, bias, stride, padding, output_padding, groups, dilation)

    conv_transpose.__name__ = conv_transpose.__qualname__ = name
    conv_transpose.__doc__ = (
        f"{name}(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1)"
        f" -> Tensor\n\nApplies a {k}D transposed convolution (the gradient of conv{k}d with respect"
        f" to its input). See :class:`oneflow.nn.ConvTranspose{k}d`."
    )
    return conv_transpose


conv1d, conv2d, conv3d = _conv(1), _conv(2), _conv(3)
conv_transpose1d, conv_transpose2d, conv_transpose3d = _conv_transpose(1), _conv_transpose(2), _conv_transpose(3)



def deform_conv2d(input, offset, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), mask=None):
    """torchvision.ops.deform_conv2d's signature (upstream's F.deform_conv2d): deformable convolution
    v2 with a mask, v1 without. The groups and offset groups follow from the shapes; the op is
    ``flow._C.deform_conv2d`` (src/ops/table/vision.yaml), which checks them."""
    for pos, (arg, v) in enumerate((("input", input), ("offset", offset), ("weight", weight)), 1):
        if not isinstance(v, _C.Tensor):  # the wording of python/oneflow/_argcheck.py (main)
            raise TypeError(f"deform_conv2d(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(v).__name__}")
    # Note [Upstream's words] (src/autograd/meta.cpp): upstream's checks in its order (the mask's dims
    # first), its text in brackets after ours.
    for arg, v in (("mask", mask), ("input", input), ("weight", weight), ("offset", offset)):
        if isinstance(v, _C.Tensor) and v.ndim != 4:
            raise RuntimeError(f"deform_conv2d(): expected {arg} to be a 4-D tensor, got shape {tuple(v.shape)} "
                               f"[OneFlow: The dimension of {arg} tensor weight must be 4]")
    kh, kw = weight.shape[2], weight.shape[3]
    if kh * kw == 0 or offset.shape[1] % (2 * kh * kw) or offset.shape[1] == 0:
        raise RuntimeError(f"deform_conv2d(): offset.size(1) = {offset.shape[1]} must be a multiple of "
                           f"2 * kernel_h * kernel_w = {2 * kh * kw} [OneFlow: The shape of the offset tensor at "
                           f"dimension 1 is not valid. It should be a multiple of 2 * weight.size[2] * "
                           f"weight.size[3].\nGot offset.shape[1]={offset.shape[1]}, while 2 * weight.size[2] * "
                           f"weight.size[3]={2 * kh * kw}]")
    if weight.shape[1] == 0 or input.shape[1] % weight.shape[1]:
        raise RuntimeError(f"deform_conv2d(): weight.size(1) = {weight.shape[1]} must divide the "
                           f"{input.shape[1]} input channels")
    (sh, sw), (ph, pw), (dh, dw) = _ntuple(stride, 2), _ntuple(padding, 2), _ntuple(dilation, 2)
    use_mask = mask is not None
    if not use_mask:  # v1: the op ignores the mask argument
        mask = _C.zeros(0, dtype=input.dtype)
    return _C.deform_conv2d(input, weight, offset, mask, bias, sh, sw, ph, pw, dh, dw,
                            input.shape[1] // weight.shape[1], offset.shape[1] // (2 * kh * kw), use_mask)


__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "deform_conv2d"]
