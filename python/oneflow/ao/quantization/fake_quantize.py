"""Fake-quantize modules of PyTorch's eager QAT (torch.ao.quantization.FakeQuantize and
FusedMovingAvgObsFakeQuantize) on oneflow tensors.

Forward: q = clamp(round(x * (1 / scale)) + zero_point, quant_min, quant_max) and
out = (q - zero_point) * scale (round to nearest even, float32 as PyTorch). Backward: PyTorch's
masked straight-through estimator, the gradient passes where round(x / scale) + zero_point falls
inside [quant_min, quant_max] and is 0 where the value was clamped. (OneFlow's own
nn.FakeQuantization passes the gradient everywhere; these modules follow PyTorch because ported
scripts expect its training dynamics.)

FakeQuantize computes (scale, zero_point) with the observer's formula; FusedMovingAvgObsFakeQuantize
(what get_default_qat_qconfig returns) with the fused op's (observer.choose_qparams).
"""
from ...nn.modules.module import Module
from .observer import (MovingAverageMinMaxObserver, _resize_buffers_to, MovingAveragePerChannelMinMaxObserver, choose_qparams,
                       is_per_channel, is_symmetric, per_channel_symmetric, per_tensor_affine,
                       per_tensor_symmetric, qint8, quint8)


def fake_quantize(x, scale, zero_point, quant_min, quant_max, ch_axis=None):
    """Fake quantization with PyTorch's masked straight-through gradient (see the module docstring);
    per channel along ch_axis when scale has one entry per channel."""
    import oneflow as flow
    scale = scale.to(device=x.device, dtype=flow.float32)
    zero_point = zero_point.to(device=x.device, dtype=flow.float32)
    if ch_axis is not None:
        shape = [1] * x.ndim
        shape[ch_axis] = -1
        scale, zero_point = scale.reshape(shape), zero_point.reshape(shape)
    else:
        scale, zero_point = scale.reshape(()), zero_point.reshape(())
    with flow.no_grad():
        q = (x.detach() * (1.0 / scale)).round() + zero_point
        mask = ((q >= quant_min) & (q <= quant_max)).to(x.dtype)
        out = (q.clamp(quant_min, quant_max) - zero_point) * scale
    if not x.requires_grad:
        return out
    # forward value `out`; gradient `mask` (x - x.detach() is exactly 0 in the forward)
    return out + (x - x.detach()) * mask


class FakeQuantizeBase(Module):
    def __init__(self):
        super().__init__()
        import oneflow as flow
        self.register_buffer("fake_quant_enabled", flow.tensor([1], dtype=flow.int64))
        self.register_buffer("observer_enabled", flow.tensor([1], dtype=flow.int64))

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0
        return self

    def disable_fake_quant(self):
        return self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0
        return self

    def disable_observer(self):
        return self.enable_observer(False)

    @classmethod
    def with_args(cls, **kwargs):
        return _with_args(cls, **kwargs)


class FakeQuantize(FakeQuantizeBase):
    """Observer + fake quantization; (scale, zero_point) from the observer's calculate_qparams."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None, is_dynamic=False,
                 **observer_kwargs):
        super().__init__()
        import oneflow as flow
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise ValueError(f"FakeQuantize: quant_min ({quant_min}) must be <= quant_max ({quant_max})")
            observer_kwargs.update(quant_min=quant_min, quant_max=quant_max)
        self.activation_post_process = observer(is_dynamic=is_dynamic, **observer_kwargs)
        obs = self.activation_post_process
        self.quant_min, self.quant_max = obs.quant_min, obs.quant_max
        self.dtype, self.qscheme, self.is_dynamic = obs.dtype, obs.qscheme, False
        self.ch_axis = getattr(obs, "ch_axis", -1)
        self.is_per_channel = is_per_channel(self.qscheme)
        self.register_buffer("scale", flow.tensor([1.0]))
        self.register_buffer("zero_point", flow.tensor([0], dtype=flow.int32))

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        _resize_buffers_to(self, ("scale", "zero_point"), state_dict, prefix)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _update_qparams(self, x):
        self.activation_post_process(x.detach())
        scale, zp = self.calculate_qparams()
        self.scale, self.zero_point = scale.to(self.scale.device), zp.to(self.zero_point.device)

    def forward(self, x):
        if int(self.observer_enabled[0]) == 1:
            self._update_qparams(x)
        if int(self.fake_quant_enabled[0]) == 1:
            return fake_quantize(x, self.scale, self.zero_point, self.quant_min, self.quant_max,
                                 self.ch_axis if self.is_per_channel else None)
        return x

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"quant_min={self.quant_min}, quant_max={self.quant_max}, dtype={self.dtype}, "
                f"qscheme={self.qscheme}, ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """FakeQuantize over a moving-average observer whose training-time (scale, zero_point) follow
    PyTorch's fused observe + fake-quantize op (fbgemm's ChooseQuantizationParams; symmetric schemes
    keep zero exact with 2^(b-1) steps below it). calculate_qparams (used by convert) is the
    observer's formula, as in PyTorch."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(self.activation_post_process, MovingAverageMinMaxObserver):
            raise TypeError("FusedMovingAvgObsFakeQuantize: the observer must be MovingAverageMinMaxObserver or "
                            "MovingAveragePerChannelMinMaxObserver")
        self.is_symmetric_quant = is_symmetric(self.qscheme)

    def forward(self, x):
        import oneflow as flow
        obs = self.activation_post_process
        if int(self.observer_enabled[0]) == 1:
            obs(x.detach())
        if int(self.fake_quant_enabled[0]) == 1:
            # as PyTorch's fused op: the qparams are recomputed from the running min / max at every call,
            # also with the observer disabled
            if obs.min_val.numel() and not bool(obs.min_val.isinf().any()):
                scale, zp = choose_qparams(obs.min_val.cpu().numpy(), obs.max_val.cpu().numpy(), obs.quant_min,
                                           obs.quant_max, self.is_symmetric_quant)
                self.scale = flow.tensor(scale, device=x.device)
                self.zero_point = flow.tensor(zp, dtype=flow.int32, device=x.device)
            return fake_quantize(x, self.scale, self.zero_point, self.quant_min, self.quant_max,
                                 self.ch_axis if self.is_per_channel else None)
        return x


class _PartialWrapper:
    """cls.with_args(**kw): a factory remembering constructor arguments (PyTorch's with_args)."""

    def __init__(self, cls, kwargs):
        self.cls, self.kwargs = cls, dict(kwargs)

    def __call__(self, **kwargs):
        return self.cls(**{**self.kwargs, **kwargs})

    def with_args(self, **kwargs):
        return _PartialWrapper(self.cls, {**self.kwargs, **kwargs})

    def __repr__(self):
        return f"functools.partial({self.cls.__name__}, {self.kwargs})"


def _with_args(cls, **kwargs):
    return _PartialWrapper(cls, kwargs)


def disable_observer(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_observer()


def enable_observer(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_observer()


def disable_fake_quant(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_fake_quant()


def enable_fake_quant(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_fake_quant()


default_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            dtype=quint8, qscheme=per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                   quant_max=127, dtype=qint8, qscheme=per_tensor_symmetric,
                                                   reduce_range=False)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_channel_symmetric, reduce_range=False, ch_axis=0)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_channel_symmetric)

__all__ = ["FakeQuantizeBase", "FakeQuantize", "FusedMovingAvgObsFakeQuantize", "fake_quantize",
           "disable_observer", "enable_observer", "disable_fake_quant", "enable_fake_quant", "default_fake_quant",
           "default_weight_fake_quant", "default_per_channel_weight_fake_quant", "default_fused_act_fake_quant",
           "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant"]
