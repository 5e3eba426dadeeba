"""nn.functional.fractional_max_pool2d / 3d (Graham, "Fractional Max-Pooling"), as PyTorch's:
each (sample, channel) plane draws one uniform u per spatial dim (or takes _random_samples);
the window starts along a dim of input size n, output size m and kernel k are
floor((i + u) * alpha) - floor(u * alpha) for i < m - 1 (alpha = (n - k) / (m - 1), in the
input's dtype) and n - k for the last; each output is the max of its window (the first maximum,
NaN winning) and its index is the flat position in the input plane. The windows are gathered
(so the gradient is a scatter-add into the chosen positions)."""
import oneflow as flow


def _tuple(v, k):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * k


def _starts(u, n, m, k):
    """Window starts (..., m) from samples u (...) for input size n, output m, kernel k."""
    i = flow.arange(m, dtype=u.dtype, device=u.device)
    if m > 1:
        alpha = flow.full((), float(n - k), dtype=u.dtype, device=u.device) / float(m - 1)  # in u's dtype
        s = ((i + u.unsqueeze(-1)) * alpha).floor() - (u * alpha).floor().unsqueeze(-1)
    else:
        s = flow.zeros(tuple(u.shape) + (m,), dtype=u.dtype, device=u.device)
    s = s.long()
    last = flow.full(tuple(u.shape) + (1,), n - k, dtype=flow.int64, device=u.device)
    return flow.cat([s[..., :m - 1], last], -1) if m >= 1 else s


def _fractional_max_pool(name, k, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"{name}(): Expected {k + 1}D or {k + 2}D tensor, but got: {list(input.shape)}")
    batched = input.dim() == k + 2
    x = input if batched else input.unsqueeze(0)
    spatial = list(x.shape[2:])
    ks = _tuple(kernel_size, k)
    if output_size is None:
        ratio = _tuple(output_ratio, k)
        out = [int(s * r) for s, r in zip(spatial, ratio)]
    else:
        out = list(_tuple(output_size, k))
    for n, m, kk in zip(spatial, out, ks):
        if m + kk - 1 > n:
            raise RuntimeError(f"{name}(): pool size {kk} too large relative to input size {n} for output size {m}")
    N, C = x.shape[0], x.shape[1]
    if _random_samples is None:
        u = flow.rand(N, C, k, dtype=x.dtype, device=x.device)
    else:
        u = _random_samples.to(x.dtype)
        if tuple(u.shape) != (N, C, k):
            raise RuntimeError(f"{name}(): expected _random_samples of shape {(N, C, k)}, got {tuple(u.shape)}")
    # which sample drives which dim: 2-D (w, h), 3-D (t, h, w), as PyTorch's kernels
    order = [1, 0] if k == 2 else [0, 1, 2]
    starts = [_starts(u[..., order[d]], spatial[d], out[d], ks[d]) for d in range(k)]  # each (N, C, m_d)
    # flat input positions of every window element: (N, C, *out, prod(ks))
    strides = [1] * k
    for d in range(k - 2, -1, -1):
        strides[d] = strides[d + 1] * spatial[d + 1]
    index = None
    for d in range(k):
        pos = starts[d].unsqueeze(-1) + flow.arange(ks[d], device=x.device)  # (N, C, m_d, k_d)
        shape = [N, C] + [1] * (2 * k)
        shape[2 + d] = out[d]
        shape[2 + k + d] = ks[d]
        term = (pos * strides[d]).reshape(shape)
        index = term if index is None else index + term
    index = index.expand([N, C] + out + list(ks)).reshape(N, C, -1)
    vals = x.reshape(N, C, -1).gather(2, index).reshape([N, C] + out + [-1])
    result, arg = vals.max(-1)
    idx = index.reshape([N, C] + out + [-1]).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    if not batched:
        result, idx = result.squeeze(0), idx.squeeze(0)
    return (result, idx) if return_indices else result


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)


def fractional_max_pool2d_with_indices(*args, **kwargs):
    return fractional_max_pool2d(*args, **{**kwargs, "return_indices": True})


def fractional_max_pool3d_with_indices(*args, **kwargs):
    return fractional_max_pool3d(*args, **{**kwargs, "return_indices": True})


__all__ = ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices"]
