"""Top-level PyTorch names about the runtime and a few ATen-level forms: the math constants
(e, pi, inf, nan, newaxis), the build flags (has_lapack, has_openmp, ...), get_device_module,
set_anomaly_enabled, GradScaler, `convolution` (ATen's one entry for every conv) and the
functional RNN cells (lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell: one step with given
weights, the nn cells' arithmetic). Tested against PyTorch in tests/test_compat_runtime.py."""
import oneflow as flow
import math
from ._export import export, export_value, ref


@export("flow.get_device_module")
def get_device_module(device=None):
    """oneflow.cuda or oneflow.cpu for a device (or its type string); the default device's
    module without an argument."""
    if device is None:
        device = flow.get_default_device()
    kind = device if isinstance(device, str) else flow.device(device).type
    kind = kind.split(":")[0]
    if kind == "cuda":
        return flow.cuda
    if kind == "cpu":
        return flow.cpu
    raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as 'oneflow.{kind}'.")


@export("flow.set_anomaly_enabled")
def set_anomaly_enabled(enabled, check_nan=True):
    flow.autograd.set_detect_anomaly(enabled, check_nan)


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
    from .nn.modules import _rnn_impl
    # Batches only, as PyTorch's functional cells (the nn cells also take one unbatched row).
    if input.dim() == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if input.dim() != 2:
        raise RuntimeError(f"{mode.lower()} cell: expected a 2-D input (batch, features), got {input.dim()}-D")
    w = _rnn_impl.Weights(mode, w_ih, w_hh, b_ih, b_hh, None)
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


export_value(math.e, "flow.e")
export_value(math.pi, "flow.pi")
export_value(math.inf, "flow.inf")
export_value(math.nan, "flow.nan")
export_value(None, "flow.newaxis")
# Build facts PyTorch code checks: LAPACK (OpenBLAS's), OpenMP and the FFTs are in; no MKL.
export_value(True, "flow.has_lapack")
export_value(True, "flow.has_openmp")
export_value(True, "flow.has_spectral")
export_value(False, "flow.has_mkl")
export_value(lambda: True, "flow.compiled_with_cxx11_abi")
export_value(ref("flow.autograd.anomaly_mode.is_anomaly_enabled"), "flow.is_anomaly_enabled")
export_value(ref("flow.autograd.anomaly_mode.is_anomaly_check_nan_enabled"), "flow.is_anomaly_check_nan_enabled")
export_value(ref("flow.amp.GradScaler"), "flow.GradScaler")
