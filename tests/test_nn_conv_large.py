"""Inputs large enough for the threaded and library paths of the conv / pool / norm kernels
(the OpInfo samples are tiny), against torch; every convolution implementation
(ONEFLOW_CONV_IMPL, docs/env.md) on the same cases, in subprocesses; the boxed form of the ops
whose nn.functional is Python glue (tests/test_ops_boxed.py only reaches flow.X / flow._C.X)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from harness import SHIM, flow

HERE = os.path.dirname(os.path.abspath(__file__))
F, TF = flow.nn.functional, torch.nn.functional


def _pair(shape, seed, dtype=np.float32, scale=1.0):
    x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)
    return flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


def _check(f_out, t_out, f_in, t_in, tol, seed=99):
    np.testing.assert_allclose(f_out.detach().numpy(), t_out.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(seed).standard_normal(tuple(t_out.shape)).astype(t_out.detach().numpy().dtype)
    f_out.backward(flow.tensor(g))
    t_out.backward(torch.tensor(g))
    for k, (a, b) in enumerate(zip(f_in, t_in)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol * 10, err_msg=f"grad {k}")


CONV_CASES = [
    # (x shape, w shape, kwargs)
    ((4, 16, 28, 28), (32, 16, 3, 3), dict(padding=1)),
    ((4, 16, 28, 28), (64, 16, 1, 1), {}),
    ((4, 32, 28, 28), (32, 1, 3, 3), dict(padding=1, groups=32)),
    ((2, 8, 30, 30), (12, 4, 5, 3), dict(stride=(2, 1), padding=(2, 1), dilation=(1, 2), groups=2)),
    ((2, 8, 12, 12, 12), (8, 8, 3, 3, 3), dict(padding=1)),
    ((4, 16, 200), (16, 16, 5), dict(padding=2, stride=3)),
]


@pytest.mark.parametrize("xs,ws,kw", CONV_CASES, ids=[str(c[0]) for c in CONV_CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_conv(xs, ws, kw, dtype):
    k = len(xs) - 2
    fx, tx = _pair(xs, 1, dtype)
    fw, tw = _pair(ws, 2, dtype, 0.1)
    fb, tb = _pair((ws[0],), 3, dtype)
    name = f"conv{k}d"
    tol = 2e-4 if dtype == np.float32 else 1e-10
    _check(getattr(F, name)(fx, fw, fb, **kw), getattr(TF, name)(tx, tw, tb, **kw), [fx, fw, fb], [tx, tw, tb], tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_conv_transpose(dtype):
    fx, tx = _pair((4, 16, 20, 20), 4, dtype)
    fw, tw = _pair((16, 8, 4, 4), 5, dtype, 0.1)
    kw = dict(stride=2, padding=1, output_padding=1)
    tol = 2e-4 if dtype == np.float32 else 1e-10
    _check(F.conv_transpose2d(fx, fw, **kw), TF.conv_transpose2d(tx, tw, **kw), [fx, fw], [tx, tw], tol)


@pytest.mark.parametrize("case", ["max2d", "max3d", "avg2d", "adaptive_avg", "adaptive_max"])
def test_large_pools(case):
    shape = (8, 32, 12, 20, 20) if case == "max3d" else (8, 64, 56, 56)
    fx, tx = _pair(shape, 6)
    f, t = {
        "max2d": (lambda x: F.max_pool2d(x, 3, 2, 1), lambda x: TF.max_pool2d(x, 3, 2, 1)),
        "max3d": (lambda x: F.max_pool3d(x, 2), lambda x: TF.max_pool3d(x, 2)),
        "avg2d": (lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
                  lambda x: TF.avg_pool2d(x, 3, 2, 1, count_include_pad=False)),
        "adaptive_avg": (lambda x: F.adaptive_avg_pool2d(x, 7), lambda x: TF.adaptive_avg_pool2d(x, 7)),
        "adaptive_max": (lambda x: F.adaptive_max_pool2d(x, 5), lambda x: TF.adaptive_max_pool2d(x, 5)),
    }[case]
    _check(f(fx), t(tx), [fx], [tx], 1e-5)


@pytest.mark.parametrize("case", ["batch_norm", "layer_norm", "group_norm"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_norms(case, dtype):
    shape = (64, 512, 96) if case == "layer_norm" else (16, 64, 28, 28)
    fx, tx = _pair(shape, 7, dtype, 3.0)
    c = shape[-1] if case == "layer_norm" else shape[1]
    fw, tw = _pair((c,), 8, dtype)
    fb, tb = _pair((c,), 9, dtype)
    tol = 5e-4 if dtype == np.float32 else 1e-9
    if case == "batch_norm":
        frm, trm = flow.zeros(c, dtype=fx.dtype), torch.zeros(c, dtype=tx.dtype)
        frv, trv = flow.ones(c, dtype=fx.dtype), torch.ones(c, dtype=tx.dtype)
        fo = F.batch_norm(fx, frm, frv, fw, fb, True)
        to = TF.batch_norm(tx, trm, trv, tw, tb, True)
        np.testing.assert_allclose(frv.numpy(), trv.numpy(), rtol=tol, atol=tol)
    elif case == "layer_norm":
        fo, to = F.layer_norm(fx, (c,), fw, fb), TF.layer_norm(tx, (c,), tw, tb)
    else:
        fo, to = F.group_norm(fx, 8, fw, fb), TF.group_norm(tx, 8, tw, tb)
    _check(fo, to, [fx, fw, fb], [tx, tw, tb], tol)


_IMPL_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {here!r})
    import numpy as np, torch
    from harness import flow
    F, TF = flow.nn.functional, torch.nn.functional
    rng = np.random.default_rng(0)
    cases = [((2, 8, 17, 15), (12, 4, 3, 3), dict(stride=2, padding=1, groups=2)),
             ((2, 16, 14, 14), (16, 1, 3, 3), dict(padding=2, dilation=2, groups=16)),
             ((2, 8, 14, 14), (24, 8, 1, 1), dict()),
             ((1, 4, 9, 9, 9), (6, 4, 3, 2, 3), dict(stride=(1, 2, 1), padding=1))]
    for xs, ws, kw in cases:
        x = rng.standard_normal(xs).astype(np.float32)
        w = (rng.standard_normal(ws) * 0.1).astype(np.float32)
        conv = "conv%dd" % (len(xs) - 2)
        fx, fw = flow.tensor(x, requires_grad=True), flow.tensor(w, requires_grad=True)
        tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
        fy, ty = getattr(F, conv)(fx, fw, **kw), getattr(TF, conv)(tx, tw, **kw)
        np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
        fy.sum().backward(); ty.sum().backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(fw.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-3)
    # transposed, output_padding below the dilation: the windows miss the last output row (a
    # negative right padding, which oneDNN cannot express: im2col + gemm runs it)
    for kw in (dict(stride=1, dilation=2, output_padding=1), dict(stride=2, padding=1, output_padding=1, groups=2)):
        x = rng.standard_normal((2, 4, 7, 7)).astype(np.float32)
        w = (rng.standard_normal((4, 3, 3, 3)) * 0.1).astype(np.float32)
        fx, fw = flow.tensor(x, requires_grad=True), flow.tensor(w, requires_grad=True)
        tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
        fy, ty = F.conv_transpose2d(fx, fw, **kw), TF.conv_transpose2d(tx, tw, **kw)
        np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
        fy.sum().backward(); ty.sum().backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(fw.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-3)
    print("ok")
""")


@pytest.mark.skipif(bool(SHIM), reason="oneflow's implementation switch")
@pytest.mark.parametrize("impl", ["dnnl", "dnnl_plain", "gemm"])
def test_every_conv_implementation(impl):
    env = dict(os.environ, ONEFLOW_CONV_IMPL=impl)
    proc = subprocess.run([sys.executable, "-c", _IMPL_SCRIPT.format(here=HERE)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


@pytest.mark.skipif(bool(SHIM), reason="oneflow's boxed form")
def test_boxed_forms_of_the_glued_ops():
    from oneflow import _boxed

    x = flow.randn(2, 3, 8, 8)
    w = flow.randn(4, 3, 3, 3)
    (y,) = _boxed.call("conv2d", x, w, None, [1], [1])
    np.testing.assert_allclose(y.numpy(), F.conv2d(x, w, padding=1).numpy(), rtol=1e-6, atol=1e-6)
    out, idx = _boxed.call("max_pool2d", x, [2])
    np.testing.assert_array_equal(out.numpy(), F.max_pool2d(x, 2).numpy())
    meta = _boxed.infer("max_pool2d", x, [3], [2], [1])
    assert [tuple(m.shape) for m in meta] == [(2, 3, 4, 4), (2, 3, 4, 4)]
    rm, rv = flow.zeros(3), flow.ones(3)
    res = _boxed.call("batch_norm", x, rm, rv, None, None, True)
    assert len(res) == 3 and tuple(res[1].shape) == (3,)
    assert not np.all(rm.numpy() == 0)  # training updated the running mean
    res = _boxed.infer("layer_norm", x, [8, 8])
    assert [tuple(m.shape) for m in res] == [(2, 3, 8, 8), (2, 3, 1, 1), (2, 3, 1, 1)]
    (g,) = _boxed.call("conv_weight_grad", x, flow.randn(2, 4, 6, 6), [4, 3, 3, 3])
    assert tuple(g.shape) == (4, 3, 3, 3)
