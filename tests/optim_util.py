"""Helpers of the optimizer tests: the same parameters and gradients in oneflow and torch,
stepped side by side, and the relative difference the tests bound."""
import numpy as np
import torch

import oneflow as flow

SHAPES = [(3, 4), (5,), (2, 3, 2), ()]


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def rel_diff(a, b):
    """max |a - b| / max |b| (0 when both are zero)."""
    a, b = _np(a), _np(b)
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
        d = rel_diff_all(fp, tp)
        assert d <= tol, f"{what}: step {k}: relative difference {d:.3g}"
    return rng


def rel_diff_all(fp, tp):
    """The relative difference of the parameters as one vector (a parameter passing near zero
    does not inflate it)."""
    f = np.concatenate([np.ravel(_np(x)) for x in fp])
    t = np.concatenate([np.ravel(_np(x)) for x in tp])
    return rel_diff(f, t)
