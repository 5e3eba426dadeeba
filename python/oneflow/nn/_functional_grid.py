"""nn.functional.affine_grid and grid_sample (spatial transformer networks, warps), composed of
table ops: the sampling is gathers of the input at the taps around each grid point, weighted, so
the gradients with respect to the input (scatter-adds) and to the grid (through the weights) are
those of the ops. PyTorch's rules throughout: coordinates in [-1, 1] unnormalised by
align_corners, padding modes zeros / border / reflection, modes bilinear (trilinear for 5-D
input), nearest (half to even) and bicubic (4-D input, cubic convolution with A = -0.75)."""
import oneflow as flow
import itertools

from .._argcheck import check_tensor
from .._global_hooks import placed_like


def _base_coords(steps, align_corners, like):
    """The normalised coordinates of `steps` pixel centres (align_corners: of the corner pixels)."""
    if steps <= 1:
        return flow.zeros(steps, dtype=like.dtype, **placed_like(like))
    r = flow.linspace(-1.0, 1.0, steps, dtype=like.dtype, **placed_like(like))
    return r if align_corners else r * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps theta (N, 2, 3)
    (or (N, 3, 4)) over an output of `size` (N, C, H, W) (or (N, C, D, H, W))."""
    align_corners = bool(align_corners)
    size = list(size)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3) or theta.shape[0] != size[0]:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {list(theta.shape)}.")
        n, _, h, w = size
        xs, ys = _base_coords(w, align_corners, theta), _base_coords(h, align_corners, theta)
        gy, gx = flow.meshgrid(ys, xs, indexing="ij")
        base = flow.stack([gx, gy, flow.ones_like(gx)], -1).reshape(1, h * w, 3)
        return flow.matmul(base, theta.transpose(1, 2)).reshape(n, h, w, 2)
    if len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (3, 4) or theta.shape[0] != size[0]:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {list(theta.shape)}.")
        n, _, d, h, w = size
        xs, ys, zs = (_base_coords(s, align_corners, theta) for s in (w, h, d))
        gz, gy, gx = flow.meshgrid(zs, ys, xs, indexing="ij")
        base = flow.stack([gx, gy, gz, flow.ones_like(gx)], -1).reshape(1, d * h * w, 4)
        return flow.matmul(base, theta.transpose(1, 2)).reshape(n, d, h, w, 3)
    raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                              f"respectively. Got size {size}.")


def _unnormalize(coord, size, align_corners):
    return (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return flow.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (coord - low).abs()
    extra = flow.fmod(c, span)
    flips = flow.floor(c / span)
    even = flow.fmod(flips, 2) == 0
    return flow.where(even, extra + low, span - extra + low)


def _clip(coord, size):
    """coord clamped to [0, size - 1], its gradient 1 strictly inside and 0 on or past the
    bounds (PyTorch's clip_coordinates_set_grad; clamp's would pass it on the bounds)."""
    inside = (coord > 0) & (coord < size - 1)
    return flow.where(inside, coord, coord.clamp(0, size - 1).detach())


def _apply_padding(coord, size, padding_mode, align_corners):
    """Source coordinates after border clipping or reflection (zeros: unchanged)."""
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        c = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        return _clip(c, size)
    return coord


def _gather_taps(flat, taps, sizes):
    """Values of the input (N, C, prod(sizes)) at integer tap coordinates (each (N, P), ordered
    like sizes: depth, height, width), 0 outside the input: (N, C, P)."""
    valid = None
    index = None
    for c, s in zip(taps, sizes):
        ok = (c >= 0) & (c <= s - 1)
        valid = ok if valid is None else valid & ok
        cc = c.clamp(0, s - 1).long()
        index = cc if index is None else index * s + cc
    n, ch = flat.shape[0], flat.shape[1]
    vals = flat.gather(2, index.unsqueeze(1).expand(n, ch, index.shape[1]))
    return vals * valid.unsqueeze(1).to(flat.dtype)


def _cubic_coefficients(t):
    a = -0.75

    def conv1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def conv2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [conv2(t + 1), conv1(t), conv1(1 - t), conv2(2 - t)]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples input (N, C, H, W) (or (N, C, D, H, W)) at the normalised grid points
    (N, Ho, Wo, 2) (or (N, Do, Ho, Wo, 3), last dim (x, y[, z]))."""
    check_tensor(input, "grid_sampler", "input", 1)
    check_tensor(grid, "grid_sampler", "grid", 2)
    align_corners = bool(align_corners)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    k = input.dim() - 2
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        # Note [Upstream's words] (src/autograd/meta.cpp): upstream's text in brackets.
        words = "MUST be 4D or 5D input" if input.dim() not in (4, 5) else "Grid and input MUST have same dimention"
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)} "
                           f"[OneFlow: {words}]")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != k:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {k} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)} [OneFlow: Grid shape MUST (N, H_out, W_out, {k})]")
    if mode == "bicubic" and k != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have the same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    n, ch = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])  # (D,) H, W
    out_sp = list(grid.shape[1:-1])
    g = grid.reshape(n, -1, k)
    # grid's last dim is (x, y[, z]): reversed, the coordinates follow sizes' order
    coords = [_unnormalize(g[..., k - 1 - j], sizes[j], align_corners) for j in range(k)]
    flat = input.reshape(n, ch, -1)
    if mode == "bicubic":
        iy, ix = coords
        y0, x0 = iy.floor(), ix.floor()
        cy, cx = _cubic_coefficients(iy - y0), _cubic_coefficients(ix - x0)
        out = 0
        for a in range(4):
            row = 0
            yy = _apply_padding(y0 + (a - 1), sizes[0], padding_mode, align_corners)
            for b in range(4):
                xx = _apply_padding(x0 + (b - 1), sizes[1], padding_mode, align_corners)
                row = row + _gather_taps(flat, [yy, xx], sizes) * cx[b].unsqueeze(1)
            out = out + row * cy[a].unsqueeze(1)
    else:
        coords = [_apply_padding(c, s, padding_mode, align_corners) for c, s in zip(coords, sizes)]
        if mode == "nearest":
            out = _gather_taps(flat, [c.round() for c in coords], sizes)
        else:
            lows = [c.floor() for c in coords]
            fracs = [c - lo for c, lo in zip(coords, lows)]
            out = 0
            for corner in itertools.product((0, 1), repeat=k):
                taps = [lo + s for lo, s in zip(lows, corner)]
                w = None
                for f, s in zip(fracs, corner):
                    wf = f if s else 1 - f
                    w = wf if w is None else w * wf
                out = out + _gather_taps(flat, taps, sizes) * w.unsqueeze(1)
    return out.reshape([n, ch] + out_sp)


__all__ = ["affine_grid", "grid_sample"]
