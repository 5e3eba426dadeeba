"""Fused float modules (Sequential containers of the modules fused, as PyTorch's intrinsic ones):
they run as their parts do; prepare_qat swaps them for their QAT versions in one piece."""
from ....nn.modules.activation import ReLU
from ....nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from ....nn.modules.container import Sequential
from ....nn.modules.conv import Conv1d, Conv2d, Conv3d
from ....nn.modules.linear import Linear


class _FusedModule(Sequential):
    _parts = ()

    def __init__(self, *mods):
        if len(mods) != len(self._parts) or not all(isinstance(m, t) for m, t in zip(mods, self._parts)):
            raise TypeError(f"{type(self).__name__}: expected modules of types "
                            f"{[t.__name__ for t in self._parts]}, got {[type(m).__name__ for m in mods]}")
        super().__init__(*mods)


def _fused(name, parts):
    return type(name, (_FusedModule,), {"_parts": parts, "__module__": __name__,
                                        "__doc__": f"{' + '.join(t.__name__ for t in parts)} fused for quantization."})


ConvReLU1d = _fused("ConvReLU1d", (Conv1d, ReLU))
ConvReLU2d = _fused("ConvReLU2d", (Conv2d, ReLU))
ConvReLU3d = _fused("ConvReLU3d", (Conv3d, ReLU))
ConvBn1d = _fused("ConvBn1d", (Conv1d, BatchNorm1d))
ConvBn2d = _fused("ConvBn2d", (Conv2d, BatchNorm2d))
ConvBn3d = _fused("ConvBn3d", (Conv3d, BatchNorm3d))
ConvBnReLU1d = _fused("ConvBnReLU1d", (Conv1d, BatchNorm1d, ReLU))
ConvBnReLU2d = _fused("ConvBnReLU2d", (Conv2d, BatchNorm2d, ReLU))
ConvBnReLU3d = _fused("ConvBnReLU3d", (Conv3d, BatchNorm3d, ReLU))
LinearReLU = _fused("LinearReLU", (Linear, ReLU))

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "ConvBn1d", "ConvBn2d", "ConvBn3d", "ConvBnReLU1d",
           "ConvBnReLU2d", "ConvBnReLU3d", "LinearReLU"]
