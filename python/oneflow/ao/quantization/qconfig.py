"""QConfig (which fake-quantizers a module's activations and weight get) and PyTorch's default
QAT qconfigs per backend."""
from collections import namedtuple

from ...nn.modules.module import Module

from .fake_quantize import (FakeQuantize, FusedMovingAvgObsFakeQuantize, default_fake_quant,
                            default_fused_per_channel_wt_fake_quant, default_fused_wt_fake_quant,
                            default_per_channel_weight_fake_quant, default_weight_fake_quant)
from .observer import MovingAverageMinMaxObserver

_BACKENDS = ("x86", "fbgemm", "qnnpack", "onednn")


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """activation / weight: factories (a class or cls.with_args(...)) called once per module."""

    def __new__(cls, activation, weight):
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. Use "
                             "MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)


def get_default_qat_qconfig(backend="x86", version=1):
    """PyTorch's default QAT qconfig: version 1 (default) uses the fused observe + fake-quantize
    modules, version 0 the unfused ones. x86 / fbgemm: activations quint8 per-tensor affine in the
    reduced range [0, 127], weights qint8 per-channel symmetric; qnnpack: full activation range and
    per-tensor symmetric weights; onednn: full activation range, per-channel weights."""
    if backend not in _BACKENDS:
        raise ValueError(f"get_default_qat_qconfig: backend must be one of {_BACKENDS}, got {backend!r}")
    if version not in (0, 1, None):
        raise ValueError(f"get_default_qat_qconfig: version must be 0 or 1, got {version!r}")
    fq = FakeQuantize if version == 0 else FusedMovingAvgObsFakeQuantize
    reduce_range = backend in ("x86", "fbgemm")
    activation = fq.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                              reduce_range=reduce_range)
    if backend == "qnnpack":
        weight = default_weight_fake_quant if version == 0 else default_fused_wt_fake_quant
    else:
        weight = default_per_channel_weight_fake_quant if version == 0 else default_fused_per_channel_wt_fake_quant
    return QConfig(activation=activation, weight=weight)


__all__ = ["QConfig", "default_qat_qconfig", "get_default_qat_qconfig"]
