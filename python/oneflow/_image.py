"""Image and object-detection ops on TensorBuffers (spec 000, INVENTORY G), and ``flow.image``.

Images are HWC elements of a TensorBuffer (uint8 or float). Decoding, resampling and polygon
rasterisation use Pillow (the imaging library matplotlib already brings); flips, normalisation,
alignment and box / polygon arithmetic are table ops on each element.
Flip codes: 0 none, 1 horizontal (left-right), 16 vertical, 17 both.
"""
import oneflow as flow
import io
import math

import numpy as np

from . import _oneflow_internal as _C
from ._export import export
from ._tensor_buffer import TensorBuffer, _check_buffer

_INTERP = {"auto": "BILINEAR", "bilinear": "BILINEAR", "nearest_neighbor": "NEAREST", "bicubic": "BICUBIC",
           "area": "BOX", "Linear": "BILINEAR", "Cubic": "BICUBIC", "NN": "NEAREST"}


def _pil():
    from PIL import Image, ImageDraw
    return Image, ImageDraw


def _codes(flip_code, n, what):
    if isinstance(flip_code, int):
        codes = [flip_code] * n
    else:
        codes = [int(c) for c in np.asarray(flip_code.numpy() if hasattr(flip_code, "numpy") else flip_code).reshape(-1)]
    if len(codes) != n:
        raise ValueError(f"{what}: {len(codes)} flip codes for {n} elements")
    for c in codes:
        if c not in (0, 1, 16, 17):
            raise ValueError(f"{what}: flip code must be 0, 1, 16 or 17, got {c}")
    return codes


@export("flow.image_decode")
def image_decode(images_bytes_buffer, dtype=None, color_space="BGR", name=None):
    """Decodes each element (the encoded bytes of a JPEG / PNG / ... as uint8) to an HWC image
    in color_space ("BGR", "RGB" or "GRAY")."""
    Image, _ = _pil()
    _check_buffer(images_bytes_buffer, "image_decode")
    if color_space not in ("BGR", "RGB", "GRAY"):
        raise ValueError(f"image_decode: color_space must be BGR, RGB or GRAY, got {color_space!r}")
    dtype = dtype or flow.uint8

    def decode(e):
        try:
            img = Image.open(io.BytesIO(e.numpy().astype(np.uint8).tobytes()))
        except Exception as exc:  # noqa: BLE001 - Pillow's many error types
            raise RuntimeError(f"image_decode: an element is not an image Pillow can decode ({exc})") from None
        arr = np.asarray(img.convert("L" if color_space == "GRAY" else "RGB"))
        arr = arr[:, :, None] if color_space == "GRAY" else (arr[:, :, ::-1] if color_space == "BGR" else arr)
        return flow.tensor(np.ascontiguousarray(arr)).to(dtype)
    return images_bytes_buffer.map(decode)


def _resize_one(e, w, h, interpolation_type):
    Image, _ = _pil()
    arr = e.numpy()
    c = arr.shape[2]
    resample = getattr(Image.Resampling, _INTERP[interpolation_type])
    chans = []
    for k in range(c):  # per channel in float ("F" mode) keeps any dtype's values
        img = Image.fromarray(arr[:, :, k].astype(np.float32), mode="F").resize((w, h), resample)
        chans.append(np.asarray(img))
    out = np.stack(chans, axis=2)
    if arr.dtype == np.uint8:
        out = np.clip(np.rint(out), 0, 255)
    return flow.tensor(out.astype(arr.dtype))


def _aspect_size(h, w, target, min_size, max_size, side):
    short, long_ = min(h, w), max(h, w)
    scale = target / (short if side == "shorter" else long_)
    if side == "shorter" and max_size is not None and long_ * scale > max_size:
        scale = max_size / long_
    if side == "longer" and min_size is not None and short * scale < min_size:
        scale = min_size / short
    return max(1, int(round(h * scale))), max(1, int(round(w * scale)))


@export("flow.image_resize")
def image_resize(image, target_size=None, min_size=None, max_size=None, keep_aspect_ratio=False,
                 resize_side="shorter", channels=3, dtype=None, interpolation_type="auto", name=None,
                 color_space=None, interp_type=None, resize_shorter=0, resize_x=0, resize_y=0):
    """Resizes each image: to (width, height) = target_size (a dense NHWC result), or keeping the
    aspect ratio (a TensorBuffer). Returns (images, scales (N, 2) as (w, h) factors, new sizes
    (N, 2) as (w, h), None without keep_aspect_ratio); the deprecated arguments (resize_x /
    resize_y / resize_shorter) return the images alone."""
    _check_buffer(image, "image_resize")
    if interp_type is not None:
        interpolation_type = interp_type
    if interpolation_type not in _INTERP:
        raise ValueError(f"image_resize: unknown interpolation_type {interpolation_type!r}")
    deprecated = bool(resize_x or resize_y or resize_shorter)
    if resize_x or resize_y:
        target_size, keep_aspect_ratio = (resize_x, resize_y), False
    elif resize_shorter:
        target_size, keep_aspect_ratio, resize_side = resize_shorter, True, "shorter"
    if target_size is None:
        raise ValueError("image_resize: give target_size")
    if resize_side not in ("shorter", "longer"):
        raise ValueError(f"image_resize: resize_side must be 'shorter' or 'longer', got {resize_side!r}")
    outs, scales, sizes = [], [], []
    for e in image.elements:
        h, w = e.shape[0], e.shape[1]
        if keep_aspect_ratio:
            if not isinstance(target_size, int):
                raise ValueError("image_resize: target_size must be an int with keep_aspect_ratio")
            nh, nw = _aspect_size(h, w, target_size, min_size, max_size, resize_side)
        else:
            nw, nh = (target_size, target_size) if isinstance(target_size, int) else tuple(target_size)
        r = _resize_one(e, nw, nh, interpolation_type)
        outs.append(r.to(dtype) if dtype is not None else r)
        scales.append([nw / w, nh / h])
        sizes.append([nw, nh])
    if keep_aspect_ratio:
        images = TensorBuffer(outs, image.shape)
        new_size = flow.tensor(sizes, dtype=flow.int32)
    else:
        images = flow.stack(outs) if outs else flow.empty(0, 0, 0, channels)
        new_size = None
    if deprecated:
        return images
    return images, flow.tensor(scales, dtype=flow.float32), new_size


@export("flow.image_target_resize")
def image_target_resize(images, target_size, min_size=None, max_size=None, resize_side="shorter",
                        interpolation_type="auto", name=None):
    """Keep-aspect resize -> (images, sizes (N, 2) as (w, h), scales (N, 2) as (w, h))."""
    out, scale, size = image_resize(images, target_size, min_size, max_size, True, resize_side,
                                    interpolation_type=interpolation_type)
    return out, size, scale


@export("flow.image_flip")
def image_flip(image, flip_code):
    _check_buffer(image, "image_flip")
    codes = _codes(flip_code, image.numel(), "image_flip")
    out = []
    for e, c in zip(image.elements, codes):
        dims = ([1] if c & 1 else []) + ([0] if c & 16 else [])
        out.append(e.flip(dims) if dims else e.clone())
    return TensorBuffer(out, image.shape)


@export("flow.image_normalize")
def image_normalize(image, std, mean, name=None):
    """(image - mean) / std per channel, as float32."""
    _check_buffer(image, "image_normalize")
    m = flow.tensor(list(mean), dtype=flow.float32)
    s = flow.tensor(list(std), dtype=flow.float32)
    return image.map(lambda e: (e.to(flow.float32) - m) / s)


@export("flow.image_batch_align")
def image_batch_align(images, shape, dtype, alignment, dynamic_out=True, name=None):
    """The images zero-padded (bottom / right) into one NHWC tensor whose H and W are the largest
    ones rounded up to `alignment` (at most shape's H, W)."""
    _check_buffer(images, "image_batch_align")
    if alignment < 1:
        raise ValueError("image_batch_align: alignment must be >= 1")
    hs = [e.shape[0] for e in images.elements]
    ws = [e.shape[1] for e in images.elements]
    c = shape[2] if len(shape) > 2 else images.elements[0].shape[2]
    h = int(math.ceil(max(hs) / alignment) * alignment)
    w = int(math.ceil(max(ws) / alignment) * alignment)
    if not dynamic_out:
        h, w = shape[0], shape[1]
    if h > shape[0] or w > shape[1]:
        raise RuntimeError(f"image_batch_align: images need {h}x{w}, more than shape {tuple(shape)}")
    out = flow.zeros(images.numel(), h, w, c, dtype=dtype)
    for i, e in enumerate(images.elements):
        out[i, :e.shape[0], :e.shape[1], :] = e.to(dtype)
    return out


@export("flow.image_random_crop")
def image_random_crop(input_blob, num_attempts=10, seed=None, random_area=None, random_aspect_ratio=None,
                      name="ImageRandomCrop"):
    """A random crop of each image covering a fraction of its area in random_area ([0.08, 1]) with
    an aspect ratio in random_aspect_ratio ([3/4, 4/3]); the whole image after num_attempts
    misses."""
    _check_buffer(input_blob, "image_random_crop")
    area = random_area or [0.08, 1.0]
    ratio = random_aspect_ratio or [0.75, 1.333333]
    rng = np.random.default_rng(seed)
    out = []
    for e in input_blob.elements:
        h, w = e.shape[0], e.shape[1]
        box = (0, 0, h, w)
        for _ in range(num_attempts):
            a = rng.uniform(*area) * h * w
            r = math.exp(rng.uniform(math.log(ratio[0]), math.log(ratio[1])))
            cw, ch = int(round(math.sqrt(a * r))), int(round(math.sqrt(a / r)))
            if 0 < cw <= w and 0 < ch <= h:
                y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
                box = (y, x, ch, cw)
                break
        y, x, ch, cw = box
        out.append(e[y:y + ch, x:x + cw].clone())
    return TensorBuffer(out, input_blob.shape)


def _sizes(image_size, n):
    arr = np.asarray(image_size.numpy() if hasattr(image_size, "numpy") else image_size).reshape(-1, 2)
    if arr.shape[0] != n:
        raise ValueError(f"expected {n} image sizes (w, h), got {arr.shape[0]}")
    return arr


@export("flow.object_bbox_flip")
def object_bbox_flip(bbox, image_size, flip_code, name=None):
    """Boxes (x1, y1, x2, y2) of each image flipped with it: horizontally x -> W - x - 1."""
    _check_buffer(bbox, "object_bbox_flip")
    sizes, codes = _sizes(image_size, bbox.numel()), _codes(flip_code, bbox.numel(), "object_bbox_flip")
    out = []
    for e, (w, h), c in zip(bbox.elements, sizes, codes):
        w, h = int(w), int(h)
        x1, y1, x2, y2 = e[:, 0], e[:, 1], e[:, 2], e[:, 3]
        if c & 1:
            x1, x2 = (w - 1) - x2, (w - 1) - x1
        if c & 16:
            y1, y2 = (h - 1) - y2, (h - 1) - y1
        out.append(_C.stack([x1, y1, x2, y2], 1))
    return TensorBuffer(out, bbox.shape)


@export("flow.object_bbox_scale")
def object_bbox_scale(bbox, scale, name=None):
    """Boxes scaled by each image's (w, h) resize factors."""
    _check_buffer(bbox, "object_bbox_scale")
    s = _sizes(scale, bbox.numel())
    return TensorBuffer([e * flow.tensor([float(sw), float(sh)] * 2, dtype=e.dtype) for e, (sw, sh) in zip(bbox.elements, s)],
                        bbox.shape)


@export("flow.object_segmentation_polygon_flip")
def object_segmentation_polygon_flip(poly, image_size, flip_code, name=None):
    """Polygon points (x, y) flipped with their image: horizontally x -> W - x."""
    _check_buffer(poly, "object_segmentation_polygon_flip")
    sizes = _sizes(image_size, poly.numel())
    codes = _codes(flip_code, poly.numel(), "object_segmentation_polygon_flip")
    out = []
    for e, (w, h), c in zip(poly.elements, sizes, codes):
        w, h = int(w), int(h)
        x, y = e[:, 0], e[:, 1]
        if c & 1:
            x = w - x
        if c & 16:
            y = h - y
        out.append(_C.stack([x, y], 1))
    return TensorBuffer(out, poly.shape)


@export("flow.object_segmentation_polygon_scale")
def object_segmentation_polygon_scale(poly, scale, name=None):
    _check_buffer(poly, "object_segmentation_polygon_scale")
    s = _sizes(scale, poly.numel())
    return TensorBuffer([e * flow.tensor([float(sw), float(sh)], dtype=e.dtype) for e, (sw, sh) in zip(poly.elements, s)],
                        poly.shape)


@export("flow.object_segmentation_polygon_to_mask")
def object_segmentation_polygon_to_mask(poly, poly_index, image_size, name=None):
    """One int8 mask (H, W) per object: the union of its polygons (points of `poly`, grouped by
    poly_index rows (polygon id, point id, object id))."""
    Image, ImageDraw = _pil()
    _check_buffer(poly, "object_segmentation_polygon_to_mask")
    _check_buffer(poly_index, "object_segmentation_polygon_to_mask")
    sizes = _sizes(image_size, poly.numel())
    out = []
    for pts, idx, (w, h) in zip(poly.elements, poly_index.elements, sizes):
        p, ix = pts.numpy(), idx.numpy().astype(np.int64).reshape(-1, 3)
        objects = sorted(set(ix[:, 2].tolist()))
        masks = []
        for obj in objects:
            canvas = Image.new("L", (int(w), int(h)), 0)
            draw = ImageDraw.Draw(canvas)
            rows = ix[:, 2] == obj
            for pid in sorted(set(ix[rows, 0].tolist())):
                sel = rows & (ix[:, 0] == pid)
                order = np.argsort(ix[sel, 1])
                draw.polygon([tuple(map(float, q)) for q in p[sel][order]], fill=1)
            masks.append(np.asarray(canvas, dtype=np.int8))
        out.append(flow.tensor(np.stack(masks) if masks else np.zeros((0, int(h), int(w)), np.int8)))
    return TensorBuffer(out, poly.shape)
