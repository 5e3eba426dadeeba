"""What oneflow.ao.quantization.convert produces (PyTorch's torch.ao.nn.quantized), emulated in
float: see modules.py."""
from .modules import (Conv1d, Conv2d, Conv3d, ConvReLU1d, ConvReLU2d, ConvReLU3d, DeQuantize, FloatOp,  # noqa: F401
                      Linear, LinearReLU, Quantize, ReLU6)

__all__ = ["Quantize", "DeQuantize", "Conv1d", "Conv2d", "Conv3d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d",
           "Linear", "LinearReLU", "FloatOp", "ReLU6"]
