"""Data-pipeline modules of spec 002 (INVENTORY D.9) that work on tensors: CoinFlip (random
flags, e.g. which images to mirror) and CropMirrorNormalize (uint8 NHWC images -> cropped,
optionally mirrored, normalized float NCHW / NHWC). The record readers and image decoders of
D.9 are not built yet (they need TensorBuffer, G)."""
from ... import _oneflow_internal as _C
from .module import Module


class CoinFlip(Module):
    """forward() -> int8 tensor of shape (batch_size,): 1 with `probability`, else 0. With a
    random_seed the module draws from its own generator (reproducible sequences)."""

    def __init__(self, batch_size=1, random_seed=None, probability=0.5, device=None, placement=None, sbp=None):
        super().__init__()
        if (placement is None) != (sbp is None):
            raise TypeError("CoinFlip: a global CoinFlip needs both placement and sbp")
        # (global: the flags are drawn once and laid out as sbp: forward)
        self.placement, self.sbp = placement, sbp
        if placement is not None:
            device = placement.type
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"CoinFlip: probability must be in [0, 1], got {probability}")
        if batch_size < 1:
            raise ValueError(f"CoinFlip: batch_size must be positive, got {batch_size}")
        from ... import Generator, device as _device
        self.batch_size, self.probability = int(batch_size), float(probability)
        self.device = _device(device) if device is not None else _device("cpu")
        self.generator = None
        if random_seed is not None:
            self.generator = Generator(device=self.device)
            self.generator.manual_seed(int(random_seed))

    def forward(self):
        from ... import int8, rand
        if self.placement is None:
            u = rand(self.batch_size, generator=self.generator, device=self.device)
        else:  # (a global factory's draw: one logical tensor, laid out as sbp)
            u = rand(self.batch_size, generator=self.generator, placement=self.placement, sbp=self.sbp)
        return (u < self.probability).to(int8)

    def extra_repr(self):
        return f"batch_size={self.batch_size}, probability={self.probability}"


class CropMirrorNormalize(Module):
    """forward(input, mirror=None): `input` is a uint8 (or float) image batch in NHWC; each image
    is cropped to (crop_h, crop_w) at the relative position (crop_pos_y, crop_pos_x) of the
    free space (0 = top / left; a size of 0 keeps the full extent), flipped left-right where
    mirror[i] != 0, normalized per channel as (x - mean) / std, and laid out NCHW or NHWC in
    output_dtype."""

    _CHANNELS = {"BGR": 3, "RGB": 3, "GRAY": 1}

    def __init__(self, color_space="BGR", output_layout="NCHW", crop_h=0, crop_w=0, crop_pos_y=0.5,
                 crop_pos_x=0.5, mean=(0.0,), std=(1.0,), output_dtype=None):
        super().__init__()
        from ... import float16, float32
        if color_space not in self._CHANNELS:
            raise ValueError(f"CropMirrorNormalize: color_space must be BGR, RGB or GRAY, got {color_space!r}")
        if output_layout not in ("NCHW", "NHWC"):
            raise ValueError(f"CropMirrorNormalize: output_layout must be NCHW or NHWC, got {output_layout!r}")
        if not (0.0 <= crop_pos_y <= 1.0 and 0.0 <= crop_pos_x <= 1.0):
            raise ValueError("CropMirrorNormalize: crop_pos_y / crop_pos_x must be in [0, 1]")
        channels = self._CHANNELS[color_space]
        mean, std = list(mean), list(std)
        for name, v in (("mean", mean), ("std", std)):
            if len(v) not in (1, channels):
                raise ValueError(f"CropMirrorNormalize: {name} needs 1 or {channels} values, got {len(v)}")
        if any(s == 0 for s in std):
            raise ValueError("CropMirrorNormalize: std must not be zero")
        output_dtype = float32 if output_dtype is None else output_dtype
        if output_dtype not in (float32, float16):
            raise ValueError("CropMirrorNormalize: output_dtype must be float32 or float16")
        self.color_space, self.output_layout, self.channels = color_space, output_layout, channels
        self.crop_h, self.crop_w, self.crop_pos_y, self.crop_pos_x = crop_h, crop_w, crop_pos_y, crop_pos_x
        self.mean, self.std, self.output_dtype = mean, std, output_dtype

    def forward(self, input, mirror=None):  # noqa: A002
        from ... import float32, tensor
        if input.ndim != 4 or input.shape[3] != self.channels:
            raise RuntimeError(f"CropMirrorNormalize: expected NHWC images with {self.channels} channels "
                               f"({self.color_space}), got shape {tuple(input.shape)}")
        n, h, w, _ = input.shape
        ch, cw = self.crop_h or h, self.crop_w or w
        if ch > h or cw > w:
            raise RuntimeError(f"CropMirrorNormalize: crop {ch}x{cw} is larger than the images ({h}x{w})")
        y0, x0 = int((h - ch) * self.crop_pos_y), int((w - cw) * self.crop_pos_x)
        x = input[:, y0:y0 + ch, x0:x0 + cw, :].to(float32)
        if mirror is not None:
            if tuple(mirror.shape) != (n,):
                raise RuntimeError(f"CropMirrorNormalize: mirror must have shape ({n},), got {tuple(mirror.shape)}")
            flip = (mirror != 0).reshape(n, 1, 1, 1)
            x = _C.where(flip, x.flip(2), x)
        mean = tensor(self.mean, dtype=float32, device=x.device)
        std = tensor(self.std, dtype=float32, device=x.device)
        x = (x - mean) / std
        if self.output_layout == "NCHW":
            x = x.permute(0, 3, 1, 2).contiguous()
        return x.to(self.output_dtype)

    def extra_repr(self):
        return (f"color_space={self.color_space}, output_layout={self.output_layout}, crop=({self.crop_h}, "
                f"{self.crop_w}), mean={self.mean}, std={self.std}")


__all__ = ["CoinFlip", "CropMirrorNormalize"]
