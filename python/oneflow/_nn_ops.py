"""The nn ops PyTorch also has at the top level (torch.X), with ATen's signatures: batch_norm,
instance_norm, constant_pad_nd, native_layer_norm / native_batch_norm / native_group_norm,
the dropout forms (native_dropout, dropout_, ...), `convolution` (ATen's one entry for every
conv), the functional RNN cells (lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell: one step with
given weights) and the nn.functional names torch.X shares (conv2d, layer_norm, ...). Composed of
oneflow's nn.functional, looked up at call time. Tested against PyTorch in
tests/test_compat_native.py and tests/test_compat_runtime.py.
"""
import oneflow as flow  # the assembled namespace, looked up at call time

from . import _oneflow_internal as _C
from ._export import export, export_value, ref
from ._argcheck import check_int_list


def _F():
    return flow.nn.functional


@export("flow.batch_norm")
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@export("flow.instance_norm")
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled=True):
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


@export("flow.constant_pad_nd")
def constant_pad_nd(input, pad, value=0):
    pad = check_int_list(pad, "constant_pad_nd", "pad", 2)
    return _F().pad(input, pad, mode="constant", value=value)


def _stats(x, dims, eps):
    """Mean and 1 / sqrt(biased variance + eps) over dims (kept), without gradient."""
    x = x.detach()
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, unbiased=False, keepdim=True)
    return mean, (var + eps).rsqrt()


@export("flow.native_layer_norm")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd); mean and rstd keep the normalised dims as size 1."""
    normalized_shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    out = _F().layer_norm(input, normalized_shape, weight, bias, eps)
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    mean, rstd = _stats(input, dims, eps) if dims else (input.detach(), input.detach())
    return out, mean, rstd


@export("flow.native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd): the batch statistics per channel when training (empty
    tensors otherwise, as PyTorch's CPU kernel)."""
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        e = flow.empty(0, dtype=input.dtype, device=input.device)
        return out, e, e.clone()
    dims = [0] + list(range(2, input.dim()))
    mean, invstd = _stats(input, dims, eps)
    return out, mean.reshape(-1), invstd.reshape(-1)


@export("flow.native_group_norm")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd) with mean and rstd of shape (N, group)."""
    out = _F().group_norm(input, group, weight, bias, eps)
    g = input.detach().reshape(N, group, -1)
    mean, rstd = _stats(g, [2], eps)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


# the dropout table ops have the ATen signatures (input, p, train) already
# (feature_dropout is a top-level name of the op table itself)
for _name in ("native_dropout", "feature_dropout_", "dropout_", "alpha_dropout_", "feature_alpha_dropout_"):
    export_value(getattr(_C, _name), "flow." + _name)


@export("flow.convolution")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """ATen's convolution: conv{1,2,3}d or conv_transpose{1,2,3}d by the weight's rank."""
    F = flow.nn.functional
    n = weight.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution(): expected a 3-D, 4-D or 5-D weight, got {weight.dim()}-D")
    if transposed:
        conv = getattr(F, f"conv_transpose{n}d")
        return conv(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding), groups,
                    tuple(dilation))
    return getattr(F, f"conv{n}d")(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


def _cell(mode, input, state, w_ih, w_hh, b_ih, b_hh):
    from .nn.modules import _rnn_impl, _rnn_steps
    # Batches only, as PyTorch's functional cells (the nn cells also take one unbatched row).
    if input.dim() == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if input.dim() != 2:
        raise RuntimeError(f"{mode.lower()} cell: expected a 2-D input (batch, features), got {input.dim()}-D")
    w = _rnn_steps.Weights(mode, w_ih, w_hh, b_ih, b_hh, None)
    return _rnn_impl.run_layer_direction(mode, input, w, state, [input._shape[0]], False)[1]


@export("flow.lstm_cell")
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: (h', c') from input and hx = (h, c)."""
    if not isinstance(hx, (tuple, list)) or len(hx) != 2:
        raise RuntimeError("lstm_cell(): hx must be a tuple (h, c)")
    return _cell("LSTM", input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


@export("flow.gru_cell")
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell("GRU", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


@export("flow.rnn_tanh_cell")
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell("RNN_TANH", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


@export("flow.rnn_relu_cell")
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell("RNN_RELU", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


# nn.functional forms PyTorch also has at the top level with the same leading arguments
# (not batch_norm / instance_norm / embedding_bag: their torch.X signatures differ)
for _name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
              "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
              "adaptive_avg_pool1d", "adaptive_max_pool1d", "layer_norm", "group_norm", "rms_norm", "bilinear",
              "pdist", "channel_shuffle"):
    export_value(ref("flow.nn.functional." + _name), "flow." + _name)
