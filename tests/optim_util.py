"""Helpers of the optimizer tests: the same parameters and gradients in oneflow and torch,
stepped side by side, and the relative difference the tests bound."""
import numpy as np
import torch

import oneflow as flow

SHAPES = [(3, 4), (5,), (2, 3, 2), ()]


def rel_diff(a, b):
    """max |a - b| / max |b| (0 when both are zero)."""
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    scale = max(np.abs(b).max(initial=0.0), 1e-30)
    return float(np.abs(a - b).max(initial=0.0) / scale)


def make_params(seed=0, shapes=SHAPES, dtype=np.float32):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    fp = [flow.tensor(a, requires_grad=True) for a in init]
    tp = [torch.tensor(a, requires_grad=True) for a in init]
    return fp, tp


def set_grads(fp, tp, rng, scale=1.0):
    for f, t in zip(fp, tp):
        g = (rng.standard_normal(tuple(t.shape)) * scale).astype(t.detach().numpy().dtype)
        f.grad = flow.tensor(g)
        t.grad = torch.tensor(g)


def step_both(fo, to, fp, tp, steps, seed=1, tol=1e-5, what="", grad_scale=1.0):
    rng = np.random.default_rng(seed)
    for k in range(steps):
        set_grads(fp, tp, rng, grad_scale)
        fo.step()
        to.step()
        for i, (f, t) in enumerate(zip(fp, tp)):
            d = rel_diff(f, t)
            assert d <= tol, f"{what}: step {k}, param {i}: relative difference {d:.3g}"
    return rng
