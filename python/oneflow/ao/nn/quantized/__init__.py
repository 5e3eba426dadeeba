"""What oneflow.ao.quantization.convert produces (PyTorch's torch.ao.nn.quantized), emulated in
float: see modules.py."""
from .modules import Conv1d, Conv2d, Conv3d, DeQuantize, Linear, Quantize  # noqa: F401

__all__ = ["Quantize", "DeQuantize", "Conv1d", "Conv2d", "Conv3d", "Linear"]
