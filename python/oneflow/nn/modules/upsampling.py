"""Resampling modules: Upsample (nn.functional.interpolate), Fold / Unfold (col2im / im2col),
PixelShuffle / PixelUnshuffle (the resample family, src/ops/table/resample.yaml)."""
from ... import _oneflow_internal as _C
from .module import Module


def _F():
    from .. import functional
    return functional


class Upsample(Module):
    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name",
                     "recompute_scale_factor"]

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return _F().interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                                recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class Fold(Module):
    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return _F().fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                         self.stride)

    def extra_repr(self):
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
                "padding={padding}, stride={stride}".format(**self.__dict__))


class Unfold(Module):
    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return _F().unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return ("kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}".format(**self.__dict__))


class PixelShuffle(Module):
    """(N, C*r*r, H, W) -> (N, C, H*r, W*r) (pixel_shuffle). OneFlow's form also takes separate
    height / width factors (h_upscale_factor, w_upscale_factor): unequal ones are a
    reshape-permute-reshape."""

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor=None, h_upscale_factor=None, w_upscale_factor=None):
        super().__init__()
        if upscale_factor is None:
            if h_upscale_factor is None or w_upscale_factor is None:
                raise ValueError("PixelShuffle: give upscale_factor, or both h_upscale_factor and "
                                 "w_upscale_factor")
        else:
            h_upscale_factor = w_upscale_factor = upscale_factor
        self.upscale_factor = upscale_factor if h_upscale_factor == w_upscale_factor else None
        self.h_upscale_factor, self.w_upscale_factor = h_upscale_factor, w_upscale_factor

    def forward(self, input):
        h, w = self.h_upscale_factor, self.w_upscale_factor
        if h == w:
            return _C.pixel_shuffle(input, h)
        if h <= 0 or w <= 0:
            raise ValueError("PixelShuffle: upscale factors must be positive")
        if input.dim() != 4:
            raise ValueError(f"PixelShuffle: expected a 4-D input, got {input.dim()}-D")
        n, c, hh, ww = input.shape
        if c % (h * w) != 0:
            raise ValueError(f"PixelShuffle: channels ({c}) must be divisible by "
                             f"h_upscale_factor * w_upscale_factor ({h * w})")
        out = input.reshape(n, c // (h * w), h, w, hh, ww).permute(0, 1, 4, 2, 5, 3)
        return out.reshape(n, c // (h * w), hh * h, ww * w)

    def extra_repr(self):
        if self.h_upscale_factor == self.w_upscale_factor:
            return f"upscale_factor={self.h_upscale_factor}"
        return f"h_upscale_factor={self.h_upscale_factor}, w_upscale_factor={self.w_upscale_factor}"


PixelShufflev2 = PixelShuffle  # OneFlow's name


class PixelUnshuffle(Module):
    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return _C.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class CosineSimilarity(Module):
    __constants__ = ["dim", "eps"]

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return _C.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return _C.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class ChannelShuffle(Module):
    """(N, C, *) with C in `groups` groups: the channels of the groups interleaved (channel_shuffle)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        from .. import functional as F
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


__all__ = ["ChannelShuffle", "PixelShufflev2", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "Fold", "Unfold",
           "PixelShuffle", "PixelUnshuffle", "CosineSimilarity", "PairwiseDistance"]
