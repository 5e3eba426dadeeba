"""Detection ops (src/ops/table/vision.yaml) on Mask R-CNN-like sizes, forward and
forward+backward: flow.roi_align (box head: 512 RoIs over a 256-channel 50 x 68 FPN level,
7 x 7 bins, sampling ratio 2), flow.nms (2000 proposals), flow.deform_conv2d (64 -> 64 channels,
3 x 3, 56 x 56) next to torch's conv2d of the same shape (deformable sampling costs over a plain
convolution; torchvision's own kernels cannot load in this CPU-only environment).

    .venv/bin/python benchmarks/bench_vision.py

Times are medians of timed loops after a warm-up.
"""
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np
import torch

import oneflow as flow

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_fused import timeit  # noqa: E402  (one timed-loop helper for both scripts)


def main():
    rng = np.random.default_rng(0)
    rows = []

    x = flow.tensor(rng.standard_normal((2, 256, 50, 68)).astype(np.float32), requires_grad=True)
    xy = rng.uniform(0, 400, (512, 2))
    wh = rng.uniform(16, 200, (512, 2))
    rois = flow.tensor(np.concatenate([rng.integers(0, 2, (512, 1)), xy, xy + wh], 1).astype(np.float32))

    def roi_fwd():
        with flow.no_grad():
            flow.roi_align(x, rois, 0.125, 7, 7, 2, True)

    def roi_bwd():
        y = flow.roi_align(x, rois, 0.125, 7, 7, 2, True)
        flow.autograd.grad(y, [x], flow.ones_like(y))

    rows += [("roi_align 512 RoIs, 256 x 50 x 68, 7 x 7, ratio 2", "forward", timeit(roi_fwd)),
             ("", "fwd+bwd", timeit(roi_bwd))]

    c = rng.uniform(0, 800, (2000, 2))
    s = rng.uniform(10, 120, (2000, 2))
    boxes = flow.tensor(np.concatenate([c, c + s], 1).astype(np.float32))
    scores = flow.tensor(rng.uniform(0, 1, 2000).astype(np.float32))
    rows.append(("nms 2000 boxes, IoU 0.7", "forward", timeit(lambda: flow.nms(boxes, scores, 0.7))))

    xi = rng.standard_normal((2, 64, 56, 56)).astype(np.float32)
    wi = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    fx, fw = flow.tensor(xi, requires_grad=True), flow.tensor(wi, requires_grad=True)
    off = flow.tensor(rng.uniform(-1, 1, (2, 18, 56, 56)).astype(np.float32), requires_grad=True)
    mask = flow.tensor(rng.uniform(0, 1, (2, 9, 56, 56)).astype(np.float32), requires_grad=True)
    tx, tw = torch.tensor(xi, requires_grad=True), torch.tensor(wi, requires_grad=True)

    def dcn(backward):
        def run():
            y = flow.deform_conv2d(fx, fw, off, mask, None, 1, 1, 1, 1, 1, 1, 1, 1, True)
            if backward:
                flow.autograd.grad(y, [fx, fw, off, mask], flow.ones_like(y))
        return run

    def conv(backward):
        def run():
            y = torch.nn.functional.conv2d(tx, tw, padding=1)
            if backward:
                torch.autograd.grad(y, [tx, tw], torch.ones_like(y))
        return run

    for label, bw in (("forward", False), ("fwd+bwd", True)):
        rows.append(("deform_conv2d 2 x 64 x 56 x 56, 3 x 3 (with mask)" if not bw else "", label, timeit(dcn(bw))))
        rows.append(("  torch conv2d, same shape", label, timeit(conv(bw))))

    print(f"threads: oneflow {flow.get_num_threads()}, torch {torch.get_num_threads()}")
    print("| case | pass | ms |\n|---|---|---|")
    for name, p, t in rows:
        print(f"| {name} | {p} | {t * 1e3:.2f} |")


if __name__ == "__main__":
    main()
