"""oneflow.nn.image: OneFlow's image-pipeline modules over TensorBuffers of HWC images
(OFRecordImageDecoder's output), each a Module form of the image ops of oneflow/_image.py:
`Resize`, `decode`, `flip`, `normalize`, `batch_align` (upstream's names, lower-case ones too)."""
from .. import _image as _ops
from .modules.module import Module


class Resize(Module):
    """Arguments and results as `image_resize`: (images, scales, new sizes), or the images alone
    with the deprecated resize_x / resize_y / resize_shorter arguments."""

    def __init__(self, target_size=None, min_size=None, max_size=None, keep_aspect_ratio=False,
                 resize_side="shorter", channels=3, dtype=None, interpolation_type="auto", name=None,
                 color_space=None, interp_type=None, resize_shorter=0, resize_x=0, resize_y=0):
        super().__init__()
        self._kwargs = dict(target_size=target_size, min_size=min_size, max_size=max_size,
                            keep_aspect_ratio=keep_aspect_ratio, resize_side=resize_side, channels=channels,
                            dtype=dtype, interpolation_type=interpolation_type, color_space=color_space,
                            interp_type=interp_type, resize_shorter=resize_shorter, resize_x=resize_x,
                            resize_y=resize_y)

    def forward(self, images):
        return _ops.image_resize(images, **self._kwargs)


class decode(Module):  # noqa: N801 - OneFlow's name
    def __init__(self, dtype=None, color_space="BGR"):
        super().__init__()
        self.dtype, self.color_space = dtype, color_space

    def forward(self, input):
        return _ops.image_decode(input, dtype=self.dtype, color_space=self.color_space)


class flip(Module):  # noqa: N801
    def forward(self, images, flip_code):
        return _ops.image_flip(images, flip_code)


class normalize(Module):  # noqa: N801
    def __init__(self, std, mean):
        super().__init__()
        self.std, self.mean = list(std), list(mean)

    def forward(self, images):
        return _ops.image_normalize(images, self.std, self.mean)


class batch_align(Module):  # noqa: N801
    def __init__(self, shape, dtype, alignment):
        super().__init__()
        self.shape, self.dtype, self.alignment = shape, dtype, alignment

    def forward(self, images):
        return _ops.image_batch_align(images, self.shape, self.dtype, self.alignment)
