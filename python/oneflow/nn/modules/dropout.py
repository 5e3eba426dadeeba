"""Dropout modules over nn.functional's dropouts (python/oneflow/_dropout.py; random masks from
the device generator's Philox stream). Active only in training mode, as PyTorch."""
from .module import Module


def _F():
    from .. import functional
    return functional


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]
    _fn = ""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return getattr(_F(), self._fn)(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """PyTorch's nn.Dropout with upstream OneFlow's `generator=` (the mask's flow.Generator) and
    `forward(input, addend=None)` (dropout(input) + addend)."""
    _fn = "dropout"

    def __init__(self, p=0.5, inplace=False, generator=None):
        super().__init__(p, inplace)
        self.generator = generator

    def forward(self, input, addend=None):
        return _F().dropout(input, self.p, self.training, self.inplace, self.generator, addend)


class Dropout1d(_DropoutNd):
    _fn = "dropout1d"


class Dropout2d(_DropoutNd):
    _fn = "dropout2d"


class Dropout3d(_DropoutNd):
    _fn = "dropout3d"


class AlphaDropout(_DropoutNd):
    _fn = "alpha_dropout"


class FeatureAlphaDropout(_DropoutNd):
    _fn = "feature_alpha_dropout"


__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
