"""The non-zero padding modes (reflect, replicate, circular) of the convolution modules
(Conv*d(padding_mode=...)) and of stft(center=True), written with narrow and cat so that they are
differentiable. Minimal on purpose: nn.functional.pad (another family) is the general op.

`pad` is in F.pad's order: (left, right) of the last dim, then of the dim before, ...
"""
from . import _oneflow_internal as _C


def _reversed_run(x, dim, start, length):
    """x.narrow(dim, start, length) with its elements in reverse order."""
    return _C.cat([x.narrow(dim, start + i, 1) for i in range(length - 1, -1, -1)], dim)


def _pad_dim(x, dim, left, right, mode):
    n = x.shape[dim]
    if mode == "reflect":
        if left >= n or right >= n:
            raise RuntimeError(f"Padding size should be less than the corresponding input dimension, but got: "
                               f"padding ({left}, {right}) at dimension {dim} of input {list(x.shape)}")
        before = _reversed_run(x, dim, 1, left) if left else None
        after = _reversed_run(x, dim, n - 1 - right, right) if right else None
    elif mode == "replicate":
        if n == 0 and (left or right):
            raise RuntimeError(f"padding of an empty dimension ({dim} of input {list(x.shape)}) in replicate mode")
        edge = lambda start, count: _C.cat([x.narrow(dim, start, 1)] * count, dim)  # noqa: E731
        before = edge(0, left) if left else None
        after = edge(n - 1, right) if right else None
    elif mode == "circular":
        if left > n or right > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        before = x.narrow(dim, n - left, left) if left else None
        after = x.narrow(dim, 0, right) if right else None
    else:
        raise ValueError(f"padding mode {mode!r} is not one of reflect, replicate, circular")
    parts = [p for p in (before, x, after) if p is not None]
    return _C.cat(parts, dim) if len(parts) > 1 else x


def pad_nonzero(x, pad, mode):
    for i in range(len(pad) // 2):
        x = _pad_dim(x, x.dim() - 1 - i, pad[2 * i], pad[2 * i + 1], mode)
    return x
