"""oneflow.nn.functional: filled from the op table (entries with `functional: true`), plus the
Python-level functions below."""
from .. import _global_hooks
from .. import _oneflow_internal as _C


def linear(input, weight, bias=None):
    """y = input @ weight^T + bias, over the last dimension of `input`.

    CPU floating tensors of one dtype with a 1-D bias: fused_matmul_bias (the GEMM accumulating onto
    the bias); otherwise matmul and add. The shape check is done here so that the error names the
    shapes as PyTorch's does (input flattened to 2-D, weight transposed)."""
    if getattr(type(input), "_oneflow_global_", False):  # a global tensor: one op, its weight used directly
        out = _C._global_fast_call("linear", linear, input, weight, bias)  # (Note [Global fast path])
        if out is not None:
            return out
        return _global_hooks.use("run")("linear", linear, (input, weight, bias), {})
    for arg, v in (("input", input), ("weight", weight)):
        if not isinstance(v, _C.Tensor):
            raise TypeError(f"linear(): argument '{arg}' must be Tensor, not {type(v).__name__}")
    if bias is not None and not isinstance(bias, _C.Tensor):
        raise TypeError(f"linear(): argument 'bias' must be Tensor, not {type(bias).__name__}")
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if weight.ndim == 2 and input.shape[-1] != weight.shape[1]:
        rows = 1
        for s in input.shape[:-1]:
            rows *= s
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} "
                           f"and {weight.shape[1]}x{weight.shape[0]})")
    if bias is not None and weight.ndim == 2 and bias.ndim == 1 and not input.is_cuda and \
            input.dtype == weight.dtype == bias.dtype and input.dtype.is_floating_point and \
            not _C._is_lazy(input) and not _C._autocast_is_enabled("cpu"):
        # One op instead of matmul + add, as PyTorch's addmm: the bias rows are written into the
        # output and the GEMM accumulates onto them, so the sum costs no pass (and no tensor) of
        # its own. Not inside nn.Graph's trace: its fusion pass makes the same op from matmul + add
        # when enabled (graph/fusion.cpp), and a trace with fusion off keeps the two.
        return _C.fused_matmul_bias(input, weight, bias)
    out = _C.matmul(input, weight.t() if weight.ndim == 2 else weight)
    if bias is None:
        return out
    if bias.dtype != out.dtype and bias.dtype.is_floating_point and bias.dtype != _C.float64 and \
            input.device.type in ("cpu", "cuda") and _C._autocast_is_enabled(input.device.type) and \
            out.dtype == _C._autocast_get_dtype(input.device.type):
        # linear is one op of autocast's lower-precision list (as PyTorch's): the bias is cast
        # with the matmul's operands, so the sum stays in the autocast dtype.
        bias = bias.to(out.dtype)
    return out + bias


from ._functional_conv import *  # noqa: F401,F403  (convolutions: padding strings)
from ._functional_pool import *  # noqa: F401,F403  (pooling: return_indices, output sizes)
from ._functional_norm import *  # noqa: F401,F403  (normalisation: statistics outputs, compositions)
from ._functional_bilinear import bilinear  # noqa: F401
from ._functional_grid import affine_grid, grid_sample  # noqa: F401  (compositions of gathers)
from ._functional_fractional import *  # noqa: F401,F403  (fractional max pooling, gathers)
from ._functional_extra import *  # noqa: F401,F403,E402  (gumbel_softmax, channel_shuffle, pdist)
from ._functional_softmax import softmax, log_softmax, softmin  # noqa: F401,E402  (PyTorch's _stacklevel)
from ._functional_extra import _with_indices  # noqa: E402

max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices = (
    _with_indices(max_pool1d), _with_indices(max_pool2d), _with_indices(max_pool3d))  # noqa: F405
adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices = (
    _with_indices(adaptive_max_pool1d), _with_indices(adaptive_max_pool2d),  # noqa: F405
    _with_indices(adaptive_max_pool3d))  # noqa: F405
from ._functional_attention import *  # noqa: F401,F403  (scaled_dot_product_attention, multi_head_attention_forward)
