"""oneflow.nn.qat: OneFlow's quantization-aware-training modules (fake-quantized weights and inputs
with OneFlow's own observer formulas; see conv.py)."""
from .conv import QatConv1d, QatConv2d, QatConv3d  # noqa: F401

__all__ = ["QatConv1d", "QatConv2d", "QatConv3d"]
