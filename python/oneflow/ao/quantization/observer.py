"""PyTorch-style observers of torch.ao.quantization (eager QAT): they record a tensor's running
min / max and turn them into (scale, zero_point).

Semantics are PyTorch's, so that a ported QAT script learns the same quantization parameters:
* MovingAverageMinMaxObserver (per tensor) and MovingAveragePerChannelMinMaxObserver (per
  channel, channel axis 0 flattened against the rest): the first observation sets min / max, the
  next ones move them by `averaging_constant` (min += c * (batch_min - min));
* calculate_qparams uses PyTorch's observer formula (symmetric: scale = max(|min|, max) /
  ((qmax - qmin) / 2); affine: scale = (max - min) / (qmax - qmin), zero_point = qmin -
  round(min / scale)), both with min <= 0 <= max forced and scale >= float32 eps;
* choose_qparams is the formula of PyTorch's fused observe + fake-quantize op (the one
  get_default_qat_qconfig uses while training): fbgemm's ChooseQuantizationParams, double
  precision intermediates, the symmetric range of 2^(b-1) steps below zero.
`reduce_range=True` halves the integer range (quint8: [0, 127]) as PyTorch does for x86 / fbgemm.
"""
import numpy as np

from ...nn.modules.module import Module

# qscheme and dtype names (PyTorch's torch.per_tensor_affine, torch.quint8, ...: plain strings here)
per_tensor_affine, per_tensor_symmetric = "per_tensor_affine", "per_tensor_symmetric"
per_channel_affine, per_channel_symmetric = "per_channel_affine", "per_channel_symmetric"
quint8, qint8 = "quint8", "qint8"
_QSCHEMES = (per_tensor_affine, per_tensor_symmetric, per_channel_affine, per_channel_symmetric)
_RANGES = {quint8: (0, 255), qint8: (-128, 127)}
_F32_EPS = float(np.finfo(np.float32).eps)
_SMALL_SCALE = np.float32(6.1e-5)


def _dtype_name(dtype):
    """quint8 / qint8 from the names here or from oneflow's uint8 / int8."""
    if dtype in _RANGES:
        return dtype
    name = str(dtype).split(".")[-1]
    if name in ("uint8", "quint8"):
        return quint8
    if name in ("int8", "qint8"):
        return qint8
    raise ValueError(f"observer: dtype must be quint8 or qint8 (or oneflow.uint8 / oneflow.int8), got {dtype!r}")


def is_symmetric(qscheme):
    return qscheme in (per_tensor_symmetric, per_channel_symmetric)


def is_per_channel(qscheme):
    return qscheme in (per_channel_affine, per_channel_symmetric)


def choose_qparams(min_val, max_val, qmin, qmax, preserve_sparsity):
    """fbgemm's ChooseQuantizationParams over float32 arrays of min / max: (scale float32, zp int32).
    Vectorised over channels; float32 where the C++ computes in float, float64 where in double."""
    f32, f64 = np.float32, np.float64
    lo = np.asarray(min_val, dtype=f32).reshape(-1)
    hi = np.asarray(max_val, dtype=f32).reshape(-1)
    if np.any(lo > hi):
        raise RuntimeError("choose_qparams: min should be less than or equal to max")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if preserve_sparsity:
            sym = (lo < 0) & (hi > 0)
            sqmin, sqmax = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
            max_scale = np.maximum(np.abs(lo / f32(sqmin)), np.abs(hi / f32(sqmax))).astype(f64)
            lo = np.where(sym, (max_scale * sqmin).astype(f32), lo)
            hi = np.where(sym, (max_scale * sqmax).astype(f32), hi)
        lo, hi = np.minimum(lo, f32(0)), np.maximum(hi, f32(0))
        scale = (hi.astype(f64) - lo.astype(f64)) / (qmax - qmin)
        degenerate = (scale.astype(f32) == 0) | np.isinf(f32(1) / scale.astype(f32))
        scale = np.where(degenerate, 0.1, scale)
        # scales below fp16's smallest normal are raised to it, the range widened to match
        small = scale < f64(_SMALL_SCALE)
        amp = (_SMALL_SCALE / scale.astype(f32)).astype(f32)
        lo_zero, hi_zero = lo == 0, hi == 0
        span = f32(_SMALL_SCALE * f32(qmax - qmin))
        new_hi = np.where(lo_zero, span, np.where(hi_zero, hi, hi * amp))
        new_lo = np.where(lo_zero, lo, np.where(hi_zero, -span, lo * amp))
        lo, hi = np.where(small, new_lo, lo), np.where(small, new_hi, hi)
        scale = np.where(small, f64(_SMALL_SCALE), scale)
        lo64, hi64 = lo.astype(f64), hi.astype(f64)
        zp_min, zp_max = qmin - lo64 / scale, qmax - hi64 / scale
        err_min, err_max = abs(qmin) - np.abs(lo64 / scale), abs(qmax) - np.abs(hi64 / scale)
        zp = np.where(err_min < err_max, zp_min, zp_max)
        if preserve_sparsity:
            zp = np.where((lo < 0) & (hi > 0), (qmin + qmax) / 2, zp)
        zp = np.where(zp < qmin, qmin, np.where(zp > qmax, qmax, np.rint(zp)))
    return scale.astype(f32), zp.astype(np.int32)


def _resize_buffers_to(module, names, state_dict, prefix):
    """Per-channel statistics and qparams take their size from the first observation (PyTorch's
    convention), so a checkpoint's buffers replace a fresh module's instead of failing to fit."""
    for name in names:
        value = state_dict.get(prefix + name)
        current = getattr(module, name)
        if value is not None and tuple(value.shape) != tuple(current.shape):
            setattr(module, name, value.detach().clone().to(device=current.device, dtype=current.dtype))


class ObserverBase(Module):
    """Common state of the observers: dtype, qscheme, integer range (reduce_range halves it)."""

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        _resize_buffers_to(self, ("min_val", "max_val"), state_dict, prefix)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, eps=_F32_EPS, is_dynamic=False, ch_axis=None):
        super().__init__()
        if qscheme not in _QSCHEMES:
            raise ValueError(f"observer: qscheme must be one of {_QSCHEMES}, got {qscheme!r}")
        if is_dynamic:
            raise NotImplementedError("observer: dynamic quantization (is_dynamic=True) is not supported")
        self.dtype, self.qscheme, self.reduce_range = _dtype_name(dtype), qscheme, reduce_range
        import oneflow as flow
        self.register_buffer("eps", flow.tensor([float(eps)]))  # a buffer as in PyTorch (same state_dict keys)
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        lo, hi = (quant_min, quant_max) if self.has_customized_qrange else _RANGES[self.dtype]
        dlo, dhi = _RANGES[self.dtype]
        if not dlo <= lo < hi <= dhi:
            raise ValueError(f"observer: [quant_min, quant_max] = [{lo}, {hi}] must be a non-empty range inside "
                             f"{self.dtype}'s [{dlo}, {dhi}]")
        if reduce_range:
            lo, hi = lo // 2, hi // 2
        self.quant_min, self.quant_max = lo, hi
        self.is_dynamic = False

    def calculate_qparams(self):
        """PyTorch's observer formula from the recorded min / max (scale float32, zero_point int64)."""
        import oneflow as flow
        mn, mx = self.min_val.cpu().numpy().astype(np.float32), self.max_val.cpu().numpy().astype(np.float32)
        if mn.size == 0 or np.any(np.isinf(mn)) or np.any(np.isinf(mx)):
            return flow.tensor([1.0]), flow.tensor([0], dtype=flow.int64)  # nothing observed yet
        mn, mx = np.minimum(mn, 0).reshape(-1), np.maximum(mx, 0).reshape(-1)
        qmin, qmax = self.quant_min, self.quant_max
        if is_symmetric(self.qscheme):
            scale = np.maximum(-mn, mx) / np.float32((qmax - qmin) / 2)
            scale = np.maximum(scale, self.eps.cpu().numpy()[0]).astype(np.float32)
            zp = np.zeros(scale.shape, np.int64)
            if self.dtype == quint8:
                zp[:] = (qmin + qmax) // 2 if self.has_customized_qrange else 128
        else:
            scale = ((mx - mn) / np.float32(qmax - qmin)).astype(np.float32)
            scale = np.maximum(scale, self.eps.cpu().numpy()[0]).astype(np.float32)
            zp = np.clip(qmin - np.rint(mn / scale).astype(np.int64), qmin, qmax)
        return flow.tensor(scale), flow.tensor(zp, dtype=flow.int64)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class MovingAverageMinMaxObserver(ObserverBase):
    """Per-tensor running min / max moved by `averaging_constant` at each observation."""

    def __init__(self, averaging_constant=0.01, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, eps=_F32_EPS, is_dynamic=False, **kwargs):
        if is_per_channel(qscheme):
            raise ValueError("MovingAverageMinMaxObserver: per-channel qscheme; use "
                             "MovingAveragePerChannelMinMaxObserver")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps, is_dynamic)
        import oneflow as flow
        self.averaging_constant = float(averaging_constant)
        self.register_buffer("min_val", flow.tensor(float("inf")))
        self.register_buffer("max_val", flow.tensor(float("-inf")))

    def _batch_min_max(self, x):
        return x.detach().min().reshape(self.min_val.shape), x.detach().max().reshape(self.max_val.shape)

    def forward(self, x):
        if x.numel() == 0:
            return x
        import oneflow as flow
        with flow.no_grad():
            cur_min, cur_max = self._batch_min_max(x)
            if self.min_val.numel() != cur_min.numel() or bool(self.min_val.isinf().any()):
                self.min_val, self.max_val = cur_min.clone(), cur_max.clone()  # first observation
            else:
                c = self.averaging_constant
                self.min_val.copy_(self.min_val + c * (cur_min - self.min_val))
                self.max_val.copy_(self.max_val + c * (cur_max - self.max_val))
        return x


class MovingAveragePerChannelMinMaxObserver(MovingAverageMinMaxObserver):
    """Per-channel (axis ch_axis) running min / max moved by `averaging_constant`."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=quint8, qscheme=per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_F32_EPS, is_dynamic=False, **kwargs):
        if not is_per_channel(qscheme):
            raise ValueError("MovingAveragePerChannelMinMaxObserver: qscheme must be per_channel_affine or "
                             f"per_channel_symmetric, got {qscheme!r}")
        ObserverBase.__init__(self, dtype, qscheme, reduce_range, quant_min, quant_max, eps, is_dynamic)
        import oneflow as flow
        self.averaging_constant, self.ch_axis = float(averaging_constant), ch_axis
        self.register_buffer("min_val", flow.tensor([], dtype=flow.float32))
        self.register_buffer("max_val", flow.tensor([], dtype=flow.float32))

    def _batch_min_max(self, x):
        flat = x.detach().movedim(self.ch_axis, 0).reshape(x.shape[self.ch_axis], -1)
        return flat.amin(1), flat.amax(1)

    def forward(self, x):
        if x.numel() == 0:
            return x
        import oneflow as flow
        with flow.no_grad():
            cur_min, cur_max = self._batch_min_max(x)
            if self.min_val.numel() != cur_min.numel() or bool(self.min_val.isinf().any()):
                self.min_val, self.max_val = cur_min.clone(), cur_max.clone()
            else:
                c = self.averaging_constant
                self.min_val.copy_(self.min_val + c * (cur_min - self.min_val))
                self.max_val.copy_(self.max_val + c * (cur_max - self.max_val))
        return x


__all__ = ["ObserverBase", "MovingAverageMinMaxObserver", "MovingAveragePerChannelMinMaxObserver",
           "choose_qparams", "per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
           "per_channel_symmetric", "quint8", "qint8"]
