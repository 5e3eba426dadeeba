"""Fused float modules made by fuse_modules / fuse_modules_qat (PyTorch's torch.ao.nn.intrinsic);
`qat` holds their QAT versions."""
from .modules import (ConvBn1d, ConvBn2d, ConvBn3d, ConvBnReLU1d, ConvBnReLU2d, ConvBnReLU3d,  # noqa: F401
                      ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearReLU, _FusedModule)
from . import qat  # noqa: F401,E402
