"""flowvision's detection blocks (flowvision 0.2.2, installed by scripts/setup.sh), unchanged, over
flow.nms / flow.roi_align: their documented usage checked against the torchvision references of
tests/test_vision_ops.py."""
from collections import OrderedDict

import numpy as np
import pytest
import torch

import oneflow as flow

from test_vision_ops import make_boxes, ref_nms, ref_roi_align

pytest.importorskip("flowvision")  # scripts/setup.sh installs it; absent = setup not run
from flowvision.layers.blocks.boxes import batched_nms, nms  # noqa: E402
from flowvision.layers.blocks.poolers import MultiScaleRoIAlign  # noqa: E402
from flowvision.layers.blocks.roi_align import RoIAlign, roi_align  # noqa: E402


def test_flowvision_roi_align_box_list():
    # boxes as a per-image list (flowvision converts them to (K, 5) rois) -> roi_align
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 16, 16))
    per_image = [np.array([[1.0, 1.5, 9.0, 9.0], [2.0, 3.0, 12.5, 14.0]]), np.array([[0.0, 0.0, 15.0, 15.0]])]
    rois = np.concatenate([np.concatenate([np.full((len(b), 1), i), b], 1) for i, b in enumerate(per_image)])
    expected = ref_roi_align(torch.tensor(x), torch.tensor(rois), 0.5, 4, 4, 2, True)
    got = roi_align(flow.tensor(x), [flow.tensor(b) for b in per_image], (4, 4), 0.5, 2, True)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
    module = RoIAlign((4, 4), 0.5, 2, aligned=True)
    np.testing.assert_allclose(module(flow.tensor(x), [flow.tensor(b) for b in per_image]).numpy(),
                               expected.numpy(), rtol=1e-12, atol=1e-12)


def test_flowvision_multiscale_roi_align_one_level_per_box():
    # Boxes of two sizes land on the two feature levels (FPN's level mapping): each row equals
    # roi_align on its own level with that level's scale.
    rng = np.random.default_rng(2)
    f1, f2 = rng.standard_normal((1, 4, 32, 32)), rng.standard_normal((1, 4, 16, 16))
    boxes = np.array([[2.0, 2.0, 20.0, 22.0], [0.0, 0.0, 60.0, 62.0]])
    pooler = MultiScaleRoIAlign(["p2", "p3"], 3, 2)
    feats = OrderedDict(p2=flow.tensor(f1), p3=flow.tensor(f2))
    got = pooler(feats, [flow.tensor(boxes)], [(64, 64)]).numpy()
    rois = np.concatenate([np.zeros((2, 1)), boxes], 1)
    small = ref_roi_align(torch.tensor(f1), torch.tensor(rois[:1]), 0.5, 3, 3, 2, False).numpy()
    large = ref_roi_align(torch.tensor(f2), torch.tensor(rois[1:]), 0.25, 3, 3, 2, False).numpy()
    np.testing.assert_allclose(got, np.concatenate([small, large]), rtol=1e-12, atol=1e-12)


def test_flowvision_nms_and_batched_nms():
    rng = np.random.default_rng(3)
    boxes, scores = make_boxes(rng, 50, np.float32)
    np.testing.assert_array_equal(nms(flow.tensor(boxes), flow.tensor(scores), 0.5).numpy(),
                                  ref_nms(boxes, scores, np.float32(0.5)))
    # per-class suppression: boxes of different classes never suppress each other
    idxs = rng.integers(0, 3, 50)
    kept = []
    for c in range(3):
        sel = np.flatnonzero(idxs == c)
        kept += list(sel[ref_nms(boxes[sel], scores[sel], np.float32(0.5))])
    expected = np.array(sorted(kept, key=lambda i: -scores[i]))
    got = batched_nms(flow.tensor(boxes), flow.tensor(scores), flow.tensor(idxs), 0.5).numpy()
    np.testing.assert_array_equal(got, expected)
