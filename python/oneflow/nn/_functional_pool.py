"""nn.functional pooling: the argument glue PyTorch also does in Python, over the op-table
entries ``flow._C.*pool*`` (src/ops/table/pool.yaml).

The table's max pools always return (output, indices); ``return_indices`` picks what the user
sees. ``lp_pool`` is a composition over ``avg_pool``, as in PyTorch.
"""
from .. import _oneflow_internal as _C


def _ntuple(v, k):
    if isinstance(v, (list, tuple)):
        return tuple(v) if len(v) != 1 else tuple(v) * k
    return (v,) * k


def _stride(stride):
    # PyTorch treats an empty stride like an omitted one (the kernel size).
    return None if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else stride


def _channels_last(name, k, data_format):
    """Whether a k-D pool reads channels-last input: OneFlow's data_format="channels_last" of the
    2-D pools (also what nn.MaxPool2d / AvgPool2d pick under ONEFLOW_ENABLE_NHWC=1), pooled as
    (N, C, H, W) between two permutes (this CPU engine has no NHWC kernel to gain from)."""
    if data_format in ("channels_first", "NCHW"):
        return False
    if k != 2:
        raise ValueError(f"{name}(): data_format={data_format!r} is not supported (only 'channels_first')")
    if data_format in ("channels_last", "NHWC"):
        return True
    raise ValueError(f"{name}(): data_format must be 'channels_first' or 'channels_last', got {data_format!r}")


def _to_nchw(x):
    return x.permute(0, 3, 1, 2) if x.dim() == 4 else x.permute(2, 0, 1)


def _to_nhwc(x):
    return x.permute(0, 2, 3, 1) if x.dim() == 4 else x.permute(1, 2, 0)


def _max_pool(k):
    name = f"max_pool{k}d"
    entry = getattr(_C, name)

    def max_pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False,
                 data_format="channels_first"):
        last = _channels_last(name, k, data_format)
        out, indices = entry(_to_nchw(input) if last else input, kernel_size, _stride(stride), padding, dilation,
                             ceil_mode)
        if last:
            out, indices = _to_nhwc(out), _to_nhwc(indices)
        return (out, indices) if return_indices else out

    max_pool.__name__ = max_pool.__qualname__ = name
    max_pool.__doc__ = (f"{name}(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, "
                        f"return_indices=False) -> Tensor\n\nApplies a {k}D max pooling. See "
                        f":class:`oneflow.nn.MaxPool{k}d`.")
    return max_pool


def _avg_pool(k):
    name = f"avg_pool{k}d"
    entry = getattr(_C, name)
    if k == 1:
        def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
            return entry(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)
    else:
        def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                     divisor_override=None, data_format="channels_first"):
            last = _channels_last(name, k, data_format)
            out = entry(_to_nchw(input) if last else input, kernel_size, _stride(stride), padding, ceil_mode,
                        count_include_pad, divisor_override)
            return _to_nhwc(out) if last else out

    avg_pool.__name__ = avg_pool.__qualname__ = name
    avg_pool.__doc__ = (f"{name}(input, kernel_size, stride=None, padding=0, ceil_mode=False, "
                        f"count_include_pad=True{', divisor_override=None' if k > 1 else ''}) -> Tensor\n\n"
                        f"Applies a {k}D average pooling. See :class:`oneflow.nn.AvgPool{k}d`.")
    return avg_pool


def _adaptive_size(input, output_size, k, name):
    """output_size as k ints; None entries keep the input's size (None as a whole is refused, as
    PyTorch: it names no size at all)."""
    if output_size is None:
        raise TypeError(f"{name}(): argument 'output_size' must be tuple of ints, not NoneType")
    size = _ntuple(output_size, k)
    if len(size) != k:
        return list(size)  # the entry reports the length
    return [input.shape[input.dim() - k + d] if s is None else s for d, s in enumerate(size)]


def _adaptive_avg_pool(k):
    name = f"adaptive_avg_pool{k}d"
    entry = getattr(_C, name)

    def adaptive_avg_pool(input, output_size):
        return entry(input, _adaptive_size(input, output_size, k, name))

    adaptive_avg_pool.__name__ = adaptive_avg_pool.__qualname__ = name
    adaptive_avg_pool.__doc__ = (f"{name}(input, output_size) -> Tensor\n\nApplies a {k}D adaptive average "
                                 f"pooling. See :class:`oneflow.nn.AdaptiveAvgPool{k}d`.")
    return adaptive_avg_pool


def _adaptive_max_pool(k):
    name = f"adaptive_max_pool{k}d"
    entry = getattr(_C, name)

    def adaptive_max_pool(input, output_size, return_indices=False):
        out, indices = entry(input, _adaptive_size(input, output_size, k, name))
        return (out, indices) if return_indices else out

    adaptive_max_pool.__name__ = adaptive_max_pool.__qualname__ = name
    adaptive_max_pool.__doc__ = (f"{name}(input, output_size, return_indices=False) -> Tensor\n\nApplies a {k}D "
                                 f"adaptive max pooling. See :class:`oneflow.nn.AdaptiveMaxPool{k}d`.")
    return adaptive_max_pool


def _unpool_output_size(name, input, kernel_size, stride, padding, output_size, k):
    """PyTorch's default (and checked) output size of max_unpool: spatial sizes only."""
    ks, st, pd = _ntuple(kernel_size, k), _ntuple(kernel_size if _stride(stride) is None else stride, k), \
        _ntuple(padding, k)
    spatial = list(input.shape)[input.dim() - k:]
    default = [(spatial[d] - 1) * st[d] + ks[d] - 2 * pd[d] for d in range(k)]
    if output_size is None:
        return default
    size = list(output_size)
    if len(size) == k + 2 or (len(size) == k + 1 and input.dim() == k + 1):
        size = size[len(size) - k:]
    if len(size) != k:
        raise ValueError(f"{name}(): output_size should be a sequence containing {k} or {k + 2} elements, but it "
                         f"has a length of '{len(output_size)}'")
    for d in range(k):
        lo, hi = default[d] - st[d], default[d] + st[d]
        if not lo < size[d] < hi:
            raise ValueError(f"{name}(): invalid output_size \"{list(output_size)}\" (dim {d} must be between "
                             f"{lo} and {hi})")
    return size


def _max_unpool(k):
    name = f"max_unpool{k}d"
    entry = getattr(_C, name)

    def max_unpool(input, indices, kernel_size, stride=None, padding=0, output_size=None):
        size = _unpool_output_size(name, input, kernel_size, stride, padding, output_size, k)
        return entry(input, indices, size)

    max_unpool.__name__ = max_unpool.__qualname__ = name
    max_unpool.__doc__ = (f"{name}(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> "
                          f"Tensor\n\nThe partial inverse of max_pool{k}d: puts each value at the position its "
                          f"index names, zeros elsewhere. See :class:`oneflow.nn.MaxUnpool{k}d`.")
    return max_unpool


def _lp_pool(k):
    name = f"lp_pool{k}d"
    avg = _avg_pool(k)

    def lp_pool(input, norm_type, kernel_size, stride=None, ceil_mode=False):
        # (sum over the window of x^p)^(1/p), via the average times the window size.
        window = 1
        for s in _ntuple(kernel_size, k):
            window *= s
        out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
        return (_C.sign(out) * _C.relu(_C.abs(out))).mul(window).pow(1.0 / norm_type)

    lp_pool.__name__ = lp_pool.__qualname__ = name
    lp_pool.__doc__ = (f"{name}(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor\n\n"
                       f"Applies a {k}D power-average pooling. See :class:`oneflow.nn.LPPool{k}d`.")
    return lp_pool


max_pool1d, max_pool2d, max_pool3d = _max_pool(1), _max_pool(2), _max_pool(3)
avg_pool1d, avg_pool2d, avg_pool3d = _avg_pool(1), _avg_pool(2), _avg_pool(3)
adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = (
    _adaptive_avg_pool(1), _adaptive_avg_pool(2), _adaptive_avg_pool(3))
adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d = (
    _adaptive_max_pool(1), _adaptive_max_pool(2), _adaptive_max_pool(3))
max_unpool1d, max_unpool2d, max_unpool3d = _max_unpool(1), _max_unpool(2), _max_unpool(3)
lp_pool1d, lp_pool2d, lp_pool3d = _lp_pool(1), _lp_pool(2), _lp_pool(3)

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
]
