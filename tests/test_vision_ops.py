"""Detection ops (src/ops/table/vision.yaml): flow.nms and flow.roi_align against torchvision's
documented algorithms written out here in numpy / torch (torchvision's own extension cannot load
in this CPU-only environment), forward and roi_align's backward through torch autograd."""
import math

import numpy as np
import pytest
import torch

import oneflow as flow

DTYPES = [(np.float32, torch.float32, flow.float32), (np.float64, torch.float64, flow.float64)]


# ---------------------------------------------------------------- references (torchvision's algorithms)


def ref_roi_align_matrices(rois, H, W, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned, np_dtype):
    """Per RoI, the (pooled_h * pooled_w, H * W) matrix of bilinear weights / count of
    torchvision's RoIAlign: bin b of RoI k is M_k[b] @ x[batch_k].reshape(C, H * W).T. The geometry
    is computed in the op's dtype, as torchvision's kernel does."""
    T = np_dtype
    mats = []
    for roi in rois:
        offset = T(0.5) if aligned else T(0)
        scale = T(spatial_scale)
        start_w, start_h = roi[1] * scale - offset, roi[2] * scale - offset
        roi_w, roi_h = roi[3] * scale - offset - start_w, roi[4] * scale - offset - start_h
        if not aligned:
            roi_w, roi_h = max(roi_w, T(1)), max(roi_h, T(1))
        bin_h, bin_w = T(roi_h / T(pooled_h)), T(roi_w / T(pooled_w))
        gh = sampling_ratio if sampling_ratio > 0 else int(math.ceil(roi_h / T(pooled_h)))
        gw = sampling_ratio if sampling_ratio > 0 else int(math.ceil(roi_w / T(pooled_w)))
        count = max(gh * gw, 1)
        m = np.zeros((pooled_h * pooled_w, H * W), dtype=T)
        for ph in range(pooled_h):
            for pw in range(pooled_w):
                for iy in range(gh):
                    y = T(start_h + T(ph) * bin_h + (T(iy) + T(0.5)) * bin_h / T(gh))
                    for ix in range(gw):
                        x = T(start_w + T(pw) * bin_w + (T(ix) + T(0.5)) * bin_w / T(gw))
                        if y < -1 or y > H or x < -1 or x > W:
                            continue  # outside: contributes zero, still counted
                        y, x = max(y, T(0)), max(x, T(0))
                        y_low, x_low = int(y), int(x)
                        if y_low >= H - 1:
                            y_low = y_high = H - 1
                            y = T(y_low)
                        else:
                            y_high = y_low + 1
                        if x_low >= W - 1:
                            x_low = x_high = W - 1
                            x = T(x_low)
                        else:
                            x_high = x_low + 1
                        ly, lx = T(y - T(y_low)), T(x - T(x_low))
                        hy, hx = T(1) - ly, T(1) - lx
                        b = ph * pooled_w + pw
                        m[b, y_low * W + x_low] += hy * hx
                        m[b, y_low * W + x_high] += hy * lx
                        m[b, y_high * W + x_low] += ly * hx
                        m[b, y_high * W + x_high] += ly * lx
        mats.append(m / T(count))
    return mats


def ref_roi_align(x, rois, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned):
    """torch (differentiable in x) RoIAlign of x (N, C, H, W) over rois (K, 5)."""
    N, C, H, W = x.shape
    np_dtype = np.float32 if x.dtype == torch.float32 else np.float64
    rois_np = rois.numpy().astype(np_dtype)
    mats = ref_roi_align_matrices(rois_np, H, W, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned,
                                  np_dtype)
    outs = [x[int(r[0])].reshape(C, H * W) @ torch.from_numpy(m).T for r, m in zip(rois_np, mats)]
    if not outs:
        return x.new_zeros((0, C, pooled_h, pooled_w))
    return torch.stack(outs).reshape(len(outs), C, pooled_h, pooled_w)


def ref_nms(boxes, scores, iou_threshold):
    """torchvision.ops.nms: indices kept by greedy IoU suppression in decreasing score order."""
    order = np.argsort(-scores, kind="stable")
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1) * (y2 - y1)
    suppressed = np.zeros(len(boxes), dtype=bool)
    keep = []
    for a, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        for j in order[a + 1:]:
            if suppressed[j]:
                continue
            w = max(min(x2[i], x2[j]) - max(x1[i], x1[j]), 0)
            h = max(min(y2[i], y2[j]) - max(y1[i], y1[j]), 0)
            inter = w * h
            if inter / (areas[i] + areas[j] - inter) > iou_threshold:
                suppressed[j] = True
    return np.array(keep, dtype=np.int64)


# ---------------------------------------------------------------- inputs


def make_rois(rng, K, N, extent, np_dtype):
    """Boxes over an image of `extent` pixels: some larger than it, some sticking out, one tiny."""
    x1 = rng.uniform(-4, extent * 0.8, K)
    y1 = rng.uniform(-4, extent * 0.8, K)
    x2 = x1 + rng.uniform(0.3, extent * 0.7, K)
    y2 = y1 + rng.uniform(0.3, extent * 0.7, K)
    b = rng.integers(0, N, K).astype(np.float64)
    rois = np.stack([b, x1, y1, x2, y2], 1)
    if K > 1:
        rois[1, 3:] = rois[1, 1:3] + 0.2  # smaller than a pixel: max(.., 1) when not aligned
    return rois.astype(np_dtype)


def make_boxes(rng, n, np_dtype):
    """Clustered boxes so that many pairs overlap across the thresholds tested."""
    centers = rng.uniform(0, 40, (4, 2))[rng.integers(0, 4, n)] + rng.normal(0, 3, (n, 2))
    wh = rng.uniform(4, 12, (n, 2))
    d = n // 6
    centers[n - d:] = centers[:d] + rng.normal(0, 0.2, (d, 2))  # near-duplicates
    wh[n - d:] = wh[:d]
    boxes = np.concatenate([centers - wh / 2, centers + wh / 2], 1).astype(np_dtype)
    scores = rng.permutation(n).astype(np_dtype) / n  # distinct: one order
    return boxes, scores


# ---------------------------------------------------------------- roi_align


@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [0, -1, 2])
def test_roi_align_forward_backward(dtypes, aligned, sampling_ratio):
    np_dtype, t_dtype, f_dtype = dtypes
    rng = np.random.default_rng(7 + sampling_ratio + 3 * aligned)
    N, C, H, W = 2, 3, 10, 12
    spatial_scale, ph, pw = 0.5, 3, 2
    x_np = rng.standard_normal((N, C, H, W)).astype(np_dtype)
    rois_np = make_rois(rng, 6, N, 2 * max(H, W), np_dtype)

    xt = torch.tensor(x_np, requires_grad=True)
    expected = ref_roi_align(xt, torch.tensor(rois_np), spatial_scale, ph, pw, sampling_ratio, aligned)
    xf = flow.tensor(x_np, requires_grad=True)
    got = flow.roi_align(xf, flow.tensor(rois_np), spatial_scale, ph, pw, sampling_ratio, aligned)
    assert got.dtype == f_dtype and tuple(got.shape) == (6, C, ph, pw)
    tol = dict(rtol=1e-5, atol=1e-5) if np_dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), **tol)

    g = rng.standard_normal((6, C, ph, pw)).astype(np_dtype)
    expected.backward(torch.tensor(g))
    got.backward(flow.tensor(g))
    np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), **tol)


def test_roi_align_upstream_keywords_and_c():
    # flowvision calls flow.roi_align positionally; upstream's _C.roi_align names its arguments.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 6, 6))
    rois = np.array([[0, 0.5, 1.0, 4.0, 5.5]])
    expected = ref_roi_align(torch.tensor(x), torch.tensor(rois), 1.0, 2, 2, 2, True)
    got = flow._C.roi_align(x=flow.tensor(x), rois=flow.tensor(rois), spatial_scale=1.0, pooled_h=2,
                            pooled_w=2, sampling_ratio=2, aligned=True)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_roi_align_empty_rois():
    x = flow.randn(2, 3, 5, 5, requires_grad=True)
    out = flow.roi_align(x, flow.zeros(0, 5), 1.0, 2, 3, 0, False)
    assert tuple(out.shape) == (0, 3, 2, 3)
    out.sum().backward()
    assert tuple(x.grad.shape) == (2, 3, 5, 5)
    assert float(x.grad.abs().sum()) == 0.0


def test_roi_align_double_backward():
    # roi_align_grad is roi_align's adjoint: its own gradient in grad is roi_align again.
    rng = np.random.default_rng(3)
    x_np = rng.standard_normal((2, 2, 7, 8))
    rois_np = make_rois(rng, 4, 2, 8, np.float64)
    g_np = rng.standard_normal((4, 2, 2, 2))
    v_np = rng.standard_normal(x_np.shape)

    xt, gt = torch.tensor(x_np, requires_grad=True), torch.tensor(g_np, requires_grad=True)
    (dx_t,) = torch.autograd.grad(ref_roi_align(xt, torch.tensor(rois_np), 1.0, 2, 2, 0, True), xt, gt,
                                  create_graph=True)
    (dg_t,) = torch.autograd.grad((dx_t * torch.tensor(v_np)).sum(), gt)

    xf, gf = flow.tensor(x_np, requires_grad=True), flow.tensor(g_np, requires_grad=True)
    (dx_f,) = flow.autograd.grad(flow.roi_align(xf, flow.tensor(rois_np), 1.0, 2, 2, 0, True), xf, gf,
                                 create_graph=True)
    (dg_f,) = flow.autograd.grad((dx_f * flow.tensor(v_np)).sum(), gf)
    np.testing.assert_allclose(dx_f.numpy(), dx_t.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dg_f.numpy(), dg_t.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make, match", [
    (lambda: (flow.randn(3, 5, 5), flow.zeros(1, 5)), "dimension of x tensor"),
    (lambda: (flow.randn(1, 3, 5, 5), flow.zeros(1, 4)), "size of rois tensor"),
    (lambda: (flow.randn(1, 3, 5, 5), flow.zeros(1, 5, dtype=flow.float64)), "dtype"),
    (lambda: (flow.ones(1, 3, 5, 5, dtype=flow.int64), flow.zeros(1, 5, dtype=flow.int64)), "float32 or float64"),
    (lambda: (flow.randn(1, 3, 5, 5), flow.tensor([[1.0, 0, 0, 2, 2]])), "batch index"),
    (lambda: (flow.randn(1, 3, 5, 5), flow.tensor([[0.0, 0, float("nan"), 2, 2]])), "finite"),
])
def test_roi_align_errors(make, match):
    x, rois = make()
    with pytest.raises(RuntimeError, match=f"roi_align.*{match}|{match}.*roi_align"):
        flow.roi_align(x, rois, 1.0, 2, 2, 0, False)


def test_roi_align_bad_pooled_size():
    with pytest.raises(RuntimeError, match="roi_align.*positive"):
        flow.roi_align(flow.randn(1, 1, 4, 4), flow.zeros(1, 5), 1.0, 0, 2, 0, False)


def test_roi_align_inverted_aligned_roi_is_zero():
    # x2 < x1 with aligned=True: no sampling points (torchvision's empty loops), a zero output
    # whatever the size of the inversion
    x = flow.randn(1, 2, 6, 6, requires_grad=True)
    out = flow.roi_align(x, flow.tensor([[0.0, 5, 5, 1, 2], [0.0, 1e9, 1e9, 0, 0]]), 1.0, 2, 2, 0, True)
    assert float(out.abs().sum()) == 0.0
    out.sum().backward()
    assert float(x.grad.abs().sum()) == 0.0


def test_roi_align_bounded_sampling():
    # a hostile sampling ratio (or an adaptive grid over a huge RoI) is refused, not looped over
    rois = flow.tensor([[0.0, 0, 0, 2, 2]])
    with pytest.raises(RuntimeError, match="roi_align.*sampling points"):
        flow.roi_align(flow.randn(1, 1, 4, 4), rois, 1.0, 2, 2, 1 << 20, False)
    with pytest.raises(RuntimeError, match="roi_align.*sampling points"):
        flow.roi_align(flow.randn(1, 1, 4, 4), flow.tensor([[0.0, 0, 0, 1e9, 1e9]]), 1.0, 1, 1, 0, False)


# ---------------------------------------------------------------- nms


@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("iou_threshold", [0.0, 0.3, 0.5, 0.8])
def test_nms_matches_reference(dtypes, iou_threshold):
    np_dtype, _, f_dtype = dtypes
    rng = np.random.default_rng(int(iou_threshold * 10))
    boxes, scores = make_boxes(rng, 60, np_dtype)
    expected = ref_nms(boxes, scores, np_dtype(iou_threshold))
    got = flow.nms(flow.tensor(boxes), flow.tensor(scores), iou_threshold)
    assert got.dtype == flow.int64
    np.testing.assert_array_equal(got.numpy(), expected)
    assert 0 < len(expected) < 60  # the case suppresses some boxes
    # Tensor.nms (upstream's method on the boxes)
    np.testing.assert_array_equal(flow.tensor(boxes).nms(flow.tensor(scores), iou_threshold).numpy(), expected)


def test_nms_upstream_mask_form():
    # upstream's _C.nms(x, iou_threshold, keep_n): boxes pre-sorted by score -> int8 keep mask.
    rng = np.random.default_rng(5)
    boxes, scores = make_boxes(rng, 40, np.float32)
    order = np.argsort(-scores, kind="stable")
    sorted_boxes = flow.tensor(boxes[order])
    expected_idx = ref_nms(boxes, scores, np.float32(0.4))
    expected_mask = np.isin(order, expected_idx).astype(np.int8)
    mask = flow._C.nms(sorted_boxes, 0.4)
    assert mask.dtype == flow.int8
    np.testing.assert_array_equal(mask.numpy(), expected_mask)
    # keep_n caps the kept boxes at the first keep_n survivors
    capped = flow._C.nms(sorted_boxes, 0.4, keep_n=3).numpy()
    first3 = np.flatnonzero(expected_mask)[:3]
    np.testing.assert_array_equal(np.flatnonzero(capped), first3)


def test_nms_empty_and_errors():
    out = flow.nms(flow.zeros(0, 4), flow.zeros(0), 0.5)
    assert out.dtype == flow.int64 and tuple(out.shape) == (0,)
    assert tuple(flow._C.nms(flow.zeros(0, 4), 0.5).shape) == (0,)
    with pytest.raises(RuntimeError, match="nms.*shape"):
        flow.nms(flow.zeros(3, 5), flow.zeros(3), 0.5)
    with pytest.raises(RuntimeError, match="nms.*scores of shape"):
        flow.nms(flow.zeros(3, 4), flow.zeros(2), 0.5)
    with pytest.raises(RuntimeError, match="nms.*float32 or float64"):
        flow.nms(flow.zeros(3, 4, dtype=flow.int64), flow.zeros(3, dtype=flow.int64), 0.5)
    with pytest.raises(RuntimeError, match="nms.*one dtype"):
        flow.nms(flow.zeros(3, 4), flow.zeros(3, dtype=flow.float64), 0.5)
