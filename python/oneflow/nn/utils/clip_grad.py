"""Gradient clipping: clip_grad_norm_ and clip_grad_value_ (PyTorch's semantics and messages).

Norms are composed from table ops (abs, pow, sum, sqrt, amax). There are no foreach
(multi-tensor) kernels yet: `foreach` is accepted (as PyTorch does on the CPU) and the tensors
are processed one by one, which gives the same values.
"""
import math
import types
import warnings

from ... import _oneflow_internal as _C
from ..._grad_mode import no_grad


def _vector_norm(x, p):
    """The p-norm of all elements of x (torch.linalg.vector_norm)."""
    if p == math.inf:
        return x.abs().amax()
    if p == -math.inf:
        return x.abs().amin()
    if p == 0:
        return _C.cast(x != 0, x.dtype).sum()
    if p == 1:
        return x.abs().sum()
    if p == 2:
        return (x * x).sum().sqrt()
    return x.abs().pow(p).sum().pow(1.0 / p)


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of `tensors` (= the norm of all their elements as one vector)."""
    tensors = [tensors] if isinstance(tensors, _C.Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _C.full((), 0.0, dtype=_C.get_default_dtype())
    first_device = tensors[0].device
    norms = [_vector_norm(g, norm_type) for g in tensors]
    dtype = norms[0].dtype
    for n in norms[1:]:
        dtype = _C.promote_types(dtype, n.dtype)
    norms = [_C.cast(n, dtype).to(first_device) for n in norms]
    total_norm = _vector_norm(_C.stack(norms), norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients of `parameters` by min(1, max_norm / (total_norm + 1e-6))."""
    if isinstance(parameters, _C.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    # Multiplying by a coefficient clamped to 1 (instead of testing `coef < 1`) avoids reading
    # the norm back on the host, which on a GPU would synchronise.
    clip_coef_clamped = _C.clamp(max_norm / (total_norm + 1e-6), None, 1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.device))


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clips the gradients of `parameters` in place so that their total `norm_type`-norm (as one
    vector) is at most `max_norm`; returns the total norm before clipping (a 0-d tensor)."""
    if isinstance(parameters, _C.Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # a generator is used twice below
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of clip_grad_norm_."""
    warnings.warn("`oneflow.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`oneflow.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient of `parameters` to [-clip_value, clip_value] in place."""
    if isinstance(parameters, _C.Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    for grad in grads:
        grad.clamp_(-clip_value, clip_value)
