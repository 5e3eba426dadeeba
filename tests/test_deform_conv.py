"""flow.deform_conv2d / flow._C.deform_conv2d (upstream's signature, src/ops/table/vision.yaml)
against torchvision's documented deformable convolution written out in torch (torchvision's own
extension cannot load here): forward, and the gradients of input, offset, mask, weight and bias
through torch autograd."""
import numpy as np
import pytest
import torch

import oneflow as flow


def ref_bilinear(img, h, w):
    """torchvision's deformable bilinear sampling of img (C, H, W) at points h, w (P,): zero beyond
    a pixel outside the plane, corners outside the plane read as zero. -> (C, P)"""
    C, H, W = img.shape
    valid = (h > -1) & (h < H) & (w > -1) & (w < W)
    hl, wl = torch.floor(h).detach(), torch.floor(w).detach()
    lh, lw = h - hl, w - wl
    hh, hw = 1 - lh, 1 - lw

    def tap(hi, wi):
        ok = (hi >= 0) & (hi <= H - 1) & (wi >= 0) & (wi <= W - 1)
        v = img[:, hi.clamp(0, H - 1).long(), wi.clamp(0, W - 1).long()]
        return v * ok

    val = hh * hw * tap(hl, wl) + hh * lw * tap(hl, wl + 1) + lh * hw * tap(hl + 1, wl) + lh * lw * tap(hl + 1, wl + 1)
    return val * valid


def ref_deform_conv2d(x, weight, offset, mask, bias, stride, pad, dil, groups, og, use_mask):
    N, C, H, W = x.shape
    Cout, _, kh, kw = weight.shape
    Ho, Wo = offset.shape[2:]
    ys = torch.arange(Ho, dtype=x.dtype)[:, None].expand(Ho, Wo).reshape(-1)
    xs = torch.arange(Wo, dtype=x.dtype)[None, :].expand(Ho, Wo).reshape(-1)
    cpg = C // og
    outs = []
    for n in range(N):
        cols = []
        for c in range(C):
            g = c // cpg
            for i in range(kh):
                for j in range(kw):
                    t = i * kw + j
                    dy = offset[n, g * 2 * kh * kw + 2 * t].reshape(-1)
                    dx = offset[n, g * 2 * kh * kw + 2 * t + 1].reshape(-1)
                    h = ys * stride[0] - pad[0] + i * dil[0] + dy
                    w = xs * stride[1] - pad[1] + j * dil[1] + dx
                    v = ref_bilinear(x[n, c:c + 1], h, w)[0]
                    if use_mask:
                        v = v * mask[n, g * kh * kw + t].reshape(-1)
                    cols.append(v)
        cols = torch.stack(cols).reshape(groups, C // groups * kh * kw, Ho * Wo)
        out = weight.reshape(groups, Cout // groups, -1) @ cols
        outs.append(out.reshape(Cout, Ho, Wo))
    out = torch.stack(outs)
    return out if bias is None else out + bias[None, :, None, None]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("use_mask", [True, False])
@pytest.mark.parametrize("cfg", [
    dict(stride=(1, 1), pad=(1, 1), dil=(1, 1), groups=1, og=1, bias=True),
    dict(stride=(2, 1), pad=(0, 2), dil=(1, 2), groups=2, og=2, bias=False),
], ids=["plain", "strided-grouped"])
def test_deform_conv2d(dtype, use_mask, cfg):
    rng = np.random.default_rng(11 + use_mask)
    N, C, H, W, Cout, kh, kw = 2, 4, 6, 7, 4, 3, 2
    s, p, d, groups, og = cfg["stride"], cfg["pad"], cfg["dil"], cfg["groups"], cfg["og"]
    Ho = (H + 2 * p[0] - (d[0] * (kh - 1) + 1)) // s[0] + 1
    Wo = (W + 2 * p[1] - (d[1] * (kw - 1) + 1)) // s[1] + 1
    arrays = dict(
        x=rng.standard_normal((N, C, H, W)),
        weight=rng.standard_normal((Cout, C // groups, kh, kw)),
        offset=rng.uniform(-2.5, 2.5, (N, 2 * og * kh * kw, Ho, Wo)),  # samples fall off the plane too
        mask=rng.uniform(0, 1, (N, og * kh * kw, Ho, Wo)),
        bias=rng.standard_normal(Cout),
    )
    arrays = {k: v.astype(dtype) for k, v in arrays.items()}
    names = ["x", "weight", "offset", "mask"] + (["bias"] if cfg["bias"] else [])
    tt = {k: torch.tensor(v, requires_grad=k in names) for k, v in arrays.items()}
    ft = {k: flow.tensor(v, requires_grad=k in names) for k, v in arrays.items()}
    expected = ref_deform_conv2d(tt["x"], tt["weight"], tt["offset"], tt["mask"], tt["bias"] if cfg["bias"] else None,
                                 s, p, d, groups, og, use_mask)
    got = flow._C.deform_conv2d(ft["x"], ft["weight"], ft["offset"], ft["mask"], ft["bias"] if cfg["bias"] else None,
                                s[0], s[1], p[0], p[1], d[0], d[1], groups, og, use_mask)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), **tol)

    g = rng.standard_normal(tuple(expected.shape)).astype(dtype)
    expected.backward(torch.tensor(g))
    got.backward(flow.tensor(g))
    for k in names:
        want = tt[k].grad.numpy() if not (k == "mask" and not use_mask) else np.zeros_like(arrays[k])
        np.testing.assert_allclose(ft[k].grad.numpy(), want, err_msg=k, **tol)


def test_deform_conv2d_top_level_and_errors():
    x, w = flow.randn(1, 2, 5, 5), flow.randn(3, 2, 3, 3)
    off, m = flow.zeros(1, 18, 3, 3), flow.ones(1, 9, 3, 3)
    # zero offsets and a unit mask: an ordinary convolution
    got = flow.deform_conv2d(x, w, off, m, None, 1, 1, 0, 0, 1, 1, 1, 1, True)
    want = torch.nn.functional.conv2d(torch.tensor(x.numpy()), torch.tensor(w.numpy()))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="deform_conv2d.*offset of shape"):
        flow.deform_conv2d(x, w, flow.zeros(1, 17, 3, 3), m, None, 1, 1, 0, 0, 1, 1, 1, 1, True)
    with pytest.raises(RuntimeError, match="deform_conv2d.*mask of shape"):
        flow.deform_conv2d(x, w, off, flow.ones(1, 8, 3, 3), None, 1, 1, 0, 0, 1, 1, 1, 1, True)
    with pytest.raises(RuntimeError, match="deform_conv2d.*groups"):
        flow.deform_conv2d(x, w, off, m, None, 1, 1, 0, 0, 1, 1, 3, 1, True)
    with pytest.raises(RuntimeError, match="deform_conv2d.*float32 or float64"):
        flow.deform_conv2d(x.long(), w.long(), off.long(), m.long(), None, 1, 1, 0, 0, 1, 1, 1, 1, True)
    with pytest.raises(RuntimeError, match="deform_conv2d.*stride"):
        flow.deform_conv2d(x, w, off, m, None, 0, 1, 0, 0, 1, 1, 1, 1, True)


@pytest.mark.parametrize("with_mask", [True, False])
def test_functional_deform_conv2d_torchvision_signature(with_mask):
    # F.deform_conv2d(input, offset, weight, bias, stride, padding, dilation, mask): torchvision's
    # (and upstream's) form; groups and offset groups come from the shapes.
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((1, 4, 5, 6)), rng.standard_normal((2, 2, 3, 3))  # groups 2
    off = rng.uniform(-1.5, 1.5, (1, 2 * 2 * 9, 5, 3))  # offset groups 2, stride (1, 2), padding 1
    m, b = rng.uniform(0, 1, (1, 2 * 9, 5, 3)), rng.standard_normal(2)
    tt = [torch.tensor(a, requires_grad=True) for a in (x, w, off, m, b)]
    ft = [flow.tensor(a, requires_grad=True) for a in (x, w, off, m, b)]
    expected = ref_deform_conv2d(tt[0], tt[1], tt[2], tt[3], tt[4], (1, 2), (1, 1), (1, 1), 2, 2, with_mask)
    got = flow.nn.functional.deform_conv2d(ft[0], ft[2], ft[1], ft[4], stride=(1, 2), padding=1,
                                           mask=ft[3] if with_mask else None)
    np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-10)
    expected.sum().backward()
    got.sum().backward()
    for i, name in enumerate(["input", "weight", "offset", "mask", "bias"]):
        if name == "mask" and not with_mask:
            assert ft[i].grad is None
            continue
        np.testing.assert_allclose(ft[i].grad.numpy(), tt[i].grad.numpy(), rtol=1e-10, atol=1e-10, err_msg=name)
    with pytest.raises(RuntimeError, match="deform_conv2d.*offset.size"):
        flow.nn.functional.deform_conv2d(ft[0], ft[2][:, :5], ft[1])
    with pytest.raises(RuntimeError, match="deform_conv2d.*4-D"):
        flow.nn.functional.deform_conv2d(ft[0][0], ft[2], ft[1])
    with pytest.raises(TypeError, match="deform_conv2d.*'offset' \\(position 2\\) must be Tensor"):
        flow.nn.functional.deform_conv2d(ft[0], "offsets", ft[1])
