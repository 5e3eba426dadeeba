"""Image transforms (torchvision.transforms semantics) for numpy images (H x W or H x W x C,
as the datasets here return them; PIL images too when PIL is installed) and C x H x W tensors.
Random transforms draw from oneflow's generator (flow.manual_seed / per-worker seeds)."""
import numbers

import numpy as np

from ... import _oneflow_internal as _C

Tensor = _C.Tensor


def _rand():
    return float(_C.rand(1).item())


def _randint(low, high):
    return int(_C.randint(low, high, (1,)).item())


def _is_image_array(pic):
    return isinstance(pic, np.ndarray) or type(pic).__module__.startswith("PIL.")


class Compose:
    """Applies transforms in order."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        inner = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({inner}\n)"


class ToTensor:
    """H x W (x C) image -> C x H x W float32 tensor; uint8 images are scaled to [0, 1]."""

    def __call__(self, pic):
        if not _is_image_array(pic):
            raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
        arr = np.asarray(pic)
        if arr.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {arr.ndim} dimensions.")
        if arr.ndim == 2:
            arr = arr[:, :, None]
        chw = np.ascontiguousarray(arr.transpose(2, 0, 1))
        if chw.dtype == np.uint8:
            # One numpy pass (uint8 -> float32 / 255), then one tensor without another copy.
            return _C.from_numpy(chw.astype(np.float32) / np.float32(255))
        if chw.dtype == np.bool_:
            chw = chw.astype(np.uint8)
        if chw.dtype in (np.float64, np.float16):
            return _C.from_numpy(chw)
        return _C.from_numpy(chw.astype(np.float32) if chw.dtype != np.float32 else chw)

    def __repr__(self):
        return "ToTensor()"


class Normalize:
    """(tensor - mean) / std per channel of a (..., C, H, W) float tensor."""

    def __init__(self, mean, std, inplace=False):
        self.mean = list(mean) if isinstance(mean, (list, tuple)) else [mean]
        self.std = list(std) if isinstance(std, (list, tuple)) else [std]
        self.inplace = inplace

    def __call__(self, tensor):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Input tensor should be a oneflow tensor. Got {type(tensor)}.")
        if not tensor.dtype.is_floating_point:
            raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
        if tensor.ndim < 3:
            raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                             f"tensor.size() = {tuple(tensor.shape)}")
        mean, std = self._stats(tensor.dtype)
        if self.inplace:
            return tensor.sub_(mean).div_(std)
        return (tensor - mean) / std

    def _stats(self, dt):
        """mean and std as (C, 1, 1) tensors of dtype dt, made once per dtype."""
        cache = self.__dict__.setdefault("_cache", {})
        if dt not in cache:
            mean = _C.cast(_C.from_numpy(np.asarray(self.mean, dtype=np.float64)), dt)
            std = _C.cast(_C.from_numpy(np.asarray(self.std, dtype=np.float64)), dt)
            if bool((std == 0).any()):
                raise ValueError(f"std evaluated to zero after conversion to {dt}, leading to "
                                 "division by zero.")
            cache[dt] = (mean.reshape(-1, 1, 1), std.reshape(-1, 1, 1))
        return cache[dt]

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Lambda:
    """Applies a user function."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


def _size_hw(img):
    if isinstance(img, Tensor):
        return img.shape[-2], img.shape[-1]
    a = np.asarray(img)
    return a.shape[0], a.shape[1]


def _flip_w(img):
    if isinstance(img, Tensor):
        idx = _C.arange(img.shape[-1] - 1, -1, -1, device=img.device)
        return img[..., idx]
    return np.ascontiguousarray(np.asarray(img)[:, ::-1])


class RandomHorizontalFlip:
    """Mirrors the image left-right with probability p."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        return _flip_w(img) if _rand() < self.p else img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


def _pad(img, left, top, right, bottom, fill, mode):
    if isinstance(img, Tensor):
        arr = (img if img.dtype != _C.bfloat16 else img.cast(_C.float32)).numpy()
        widths = [(0, 0)] * (arr.ndim - 2) + [(top, bottom), (left, right)]
    else:
        arr = np.asarray(img)
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    if mode == "constant":
        out = np.pad(arr, widths, mode="constant", constant_values=fill)
    else:
        out = np.pad(arr, widths, mode={"edge": "edge", "reflect": "reflect",
                                        "symmetric": "symmetric"}[mode])
    if isinstance(img, Tensor):
        return _C.from_numpy(np.ascontiguousarray(out)).cast(img.dtype)
    return out


def _crop(img, top, left, h, w):
    if isinstance(img, Tensor):
        return img[..., top:top + h, left:left + w]
    return np.asarray(img)[top:top + h, left:left + w]


class RandomCrop:
    """A random h x w crop, after optional padding (an int, (lr, tb) or (l, t, r, b))."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else tuple(size)
        if len(self.size) != 2:
            raise ValueError("Please provide only two dimensions (h, w) for size.")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def _padding(self):
        p = self.padding
        if isinstance(p, numbers.Number):
            return p, p, p, p
        if len(p) == 2:
            return p[0], p[1], p[0], p[1]
        if len(p) == 4:
            return tuple(p)
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(p)} element tuple")

    def __call__(self, img):
        if self.padding is not None:
            img = _pad(img, *self._padding(), self.fill, self.padding_mode)
        h, w = _size_hw(img)
        th, tw = self.size
        if self.pad_if_needed and w < tw:
            img = _pad(img, tw - w, 0, tw - w, 0, self.fill, self.padding_mode)
        if self.pad_if_needed and h < th:
            img = _pad(img, 0, th - h, 0, th - h, self.fill, self.padding_mode)
        h, w = _size_hw(img)
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        top, left = _randint(0, h - th + 1), _randint(0, w - tw + 1)
        return _crop(img, top, left, th, tw)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


def _bilinear(arr, out_h, out_w):
    """Bilinear resize of the last two dims (align_corners=False, no antialias), computed as
    nn.functional.interpolate(mode='bilinear') does on the CPU: source coordinates and weights
    in the data's precision, interpolation along W first, then H."""
    in_h, in_w = arr.shape[-2:]
    ft = arr.dtype.type

    def axis(n_in, n_out):
        scale = ft(n_in) / ft(n_out)
        src = np.maximum(scale * (np.arange(n_out, dtype=arr.dtype) + ft(0.5)) - ft(0.5), ft(0))
        i0 = src.astype(np.int64)
        i1 = i0 + (i0 < n_in - 1)
        lam1 = (src - i0.astype(arr.dtype)).astype(arr.dtype)
        return i0, i1, ft(1) - lam1, lam1

    y0, y1, wy0, wy1 = axis(in_h, out_h)
    x0, x1, wx0, wx1 = axis(in_w, out_w)
    rows0, rows1 = arr[..., y0, :], arr[..., y1, :]
    w_top = wx0 * rows0[..., x0] + wx1 * rows0[..., x1]
    w_bot = wx0 * rows1[..., x0] + wx1 * rows1[..., x1]
    return wy0[:, None] * w_top + wy1[:, None] * w_bot


class Resize:
    """Resizes a (..., H, W) tensor with bilinear interpolation (align_corners=False, no
    antialiasing). `size` (h, w), or an int for the smaller edge (aspect ratio kept,
    `max_size` bounding the longer edge)."""

    def __init__(self, size, interpolation="bilinear", max_size=None, antialias=None):
        mode = getattr(interpolation, "value", interpolation)
        if str(mode).lower() not in ("bilinear", "2"):
            raise ValueError(f"Resize: only bilinear interpolation is supported, got "
                             f"{interpolation}")
        if antialias:
            raise ValueError("Resize: antialias=True is not supported (bilinear without "
                             "antialiasing, as nn.functional.interpolate)")
        self.size = size
        self.max_size = max_size

    def _out_size(self, h, w):
        if isinstance(self.size, numbers.Number) or len(self.size) == 1:
            s = int(self.size if isinstance(self.size, numbers.Number) else self.size[0])
            short, long = (h, w) if h <= w else (w, h)
            new_short, new_long = s, int(s * long / short)
            if self.max_size is not None and new_long > self.max_size:
                new_short, new_long = int(self.max_size * new_short / new_long), self.max_size
            return (new_short, new_long) if h <= w else (new_long, new_short)
        return int(self.size[0]), int(self.size[1])

    def __call__(self, img):
        if not isinstance(img, Tensor):
            raise TypeError(f"Resize: expected a tensor image (..., H, W), got {type(img)}")
        if img.ndim < 2:
            raise ValueError(f"Resize: expected a tensor with at least 2 dims, got shape "
                             f"{tuple(img.shape)}")
        h, w = img.shape[-2], img.shape[-1]
        oh, ow = self._out_size(h, w)
        if (oh, ow) == (h, w):
            return img
        interpolate = _functional_interpolate()
        if interpolate is not None and img.ndim in (3, 4) and img.dtype.is_floating_point:
            x = img if img.ndim == 4 else img.unsqueeze(0)
            out = interpolate(x, size=(oh, ow), mode="bilinear", align_corners=False)
            return out if img.ndim == 4 else out.squeeze(0)
        src = (img if img.dtype not in (_C.bfloat16, _C.float16) else img.cast(_C.float32))
        arr = src.numpy().astype(np.float32 if src.dtype != _C.float64 else np.float64)
        out = _bilinear(arr, oh, ow)
        if not img.dtype.is_floating_point:
            out = np.round(out)
        return _C.from_numpy(np.ascontiguousarray(out)).cast(img.dtype)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, interpolation=bilinear)"


def _functional_interpolate():
    from ... import nn

    return getattr(nn.functional, "interpolate", None)
