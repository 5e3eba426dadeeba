"""nn.functional normalisation: glue over the op-table entries ``flow._C.batch_norm`` /
``layer_norm`` / ``group_norm`` (src/ops/table/normalization.yaml), which also return the statistics
their backward uses; ``instance_norm`` and ``local_response_norm`` are compositions, as in
PyTorch (instance norm is batch norm over a (1, N*C, ...) view).
"""
from .. import _oneflow_internal as _C
from .._global_hooks import placed_like
from .._grad_mode import no_grad
from .._argcheck import check_optional_tensor, check_tensor


def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
    eps=1e-05) -> Tensor

    Normalises each channel (dim 1) over the batch and spatial dims. In training the batch
    statistics are used and the running ones (if given) updated in place:
    ``running = (1 - momentum) * running + momentum * batch`` (unbiased variance)."""
    if training:
        _verify_batch_size(list(input.shape))
    return _C.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)[0]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05) -> Tensor

    Normalises over the trailing dims given by ``normalized_shape`` (one fused kernel)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _C.layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """group_norm(input, num_groups, weight=None, bias=None, eps=1e-05) -> Tensor

    Normalises each group of ``C // num_groups`` channels of every sample (one fused kernel)."""
    if input.dim() < 2:
        raise RuntimeError(f"group_norm(): Expected at least 2 dimensions for input tensor but received {input.dim()}")
    if num_groups > 0 and input.shape[1] % num_groups == 0:
        _verify_batch_size([input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:]))
    return _C.group_norm(input, num_groups, weight, bias, eps)[0]


def _repeat(t, b):
    """t (C,) repeated b times as (b*C,), differentiable."""
    return None if t is None else t.unsqueeze(0).expand(b, t.shape[0]).reshape(-1)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
    use_input_stats=True, momentum=0.1, eps=1e-05) -> Tensor

    Normalises every channel of every sample over its spatial dims."""
    check_tensor(input, "instance_norm", "input", 1)
    for k, (name, t) in enumerate((("running_mean", running_mean), ("running_var", running_var),
                                   ("weight", weight), ("bias", bias))):
        check_optional_tensor(t, "instance_norm", name, k + 2)
    if use_input_stats:
        n = 1
        for s in input.shape[2:]:
            n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(input.shape)}")
    b, c = input.shape[0], input.shape[1]
    rm = None if running_mean is None else _repeat(running_mean, b).clone()
    rv = None if running_var is None else _repeat(running_var, b).clone()
    x = input.contiguous().reshape([1, b * c] + list(input.shape[2:]))
    out = _C.batch_norm(x, rm, rv, _repeat(weight, b), _repeat(bias, b), use_input_stats, momentum, eps)[0]
    with no_grad():
        # Each channel's running statistic is the average over the batch of the per-sample ones.
        if running_mean is not None:
            running_mean.copy_(rm.reshape(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.reshape(b, c).mean(0))
    return out.reshape(list(input.shape))


def _zero_pad_dim(x, dim, before, after):
    """x with `before`/`after` zeros along dim (differentiable: a concatenation)."""
    parts = []
    for n in (before, after):
        shape = list(x.shape)
        shape[dim] = n
        parts.append(_C.zeros(shape, dtype=x.dtype, **placed_like(x)) if n else None)
    seq = [p for p in (parts[0], x, parts[1]) if p is not None]
    return _C.cat(seq, dim) if len(seq) > 1 else x


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """local_response_norm(input, size, alpha=0.0001, beta=0.75, k=1.0) -> Tensor

    x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta (PyTorch's composition:
    an average pool over the channel dim of the zero-padded squares)."""
    from ._functional_pool import avg_pool2d, avg_pool3d

    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = _zero_pad_dim(div.unsqueeze(1), 2, size // 2, (size - 1) // 2)
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = list(input.shape)
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = _zero_pad_dim(div, 2, size // 2, (size - 1) // 2)
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor

    Root-mean-square normalisation over the trailing dims ``normalized_shape``:
    ``x / sqrt(mean(x^2) + eps) * weight``; ``eps`` None is the dtype's machine epsilon. A
    composition (its gradient is its ops'); 16-bit inputs compute in float32, as PyTorch's
    (their default eps is then float32's)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if k == 0 or input.dim() < k or tuple(input.shape[input.dim() - k:]) != normalized_shape:
        raise RuntimeError(
            f"rms_norm(): Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size {tuple(input.shape)}")
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(f"rms_norm(): expected weight of shape {list(normalized_shape)}, got {tuple(weight.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"rms_norm(): expected a floating point input, got {input.dtype}")
    x = input.float() if input.dtype in (_C.float16, _C.bfloat16) else input
    if eps is None:  # the epsilon of the computing dtype (float32 for 16-bit inputs), as PyTorch
        from .. import finfo
        eps = finfo(x.dtype).eps
    dims = list(range(-k, 0))
    y = x * _C.rsqrt(x.square().mean(dims, keepdim=True) + eps)
    if weight is not None:
        y = y * weight  # in float for 16-bit inputs, rounded once below (as PyTorch)
    return y.to(input.dtype)


__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "local_response_norm", "rms_norm"]
