"""The fused ops of src/ops/table/fused.yaml against their unfused compositions: with our own ops
(same generator state, so the dropout masks must be identical) and with torch's (the
deterministic parts; tests/opinfo/fused.py covers every float dtype, non-contiguous inputs and
the meta device). Gradients in float64 by finite differences, and the errors each op raises."""

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.nn.functional as F

RNG = np.random.default_rng(0)


def t(a, dtype=flow.float64, grad=False):
    return flow.tensor(np.asarray(a), dtype=dtype, requires_grad=grad)


def masked(x, mask, fill, scale):
    return flow.where(mask, x * scale, flow.tensor(fill, dtype=x.dtype))


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64])
@pytest.mark.parametrize("mask_shape", [(2, 3, 4, 9), (2, 1, 4, 9), (1, 1, 1, 9), (4, 9)])
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_scale_mask_softmax_dropout_matches_composition(dtype, mask_shape, p):
    x = RNG.standard_normal((2, 3, 4, 9))
    m = flow.tensor(RNG.random(mask_shape) > 0.3)
    g = t(RNG.standard_normal(x.shape), dtype)
    xf, xc = t(x, dtype, True), t(x, dtype, True)
    flow.manual_seed(7)
    y, s = flow._C.fused_scale_mask_softmax_dropout(xf, m, fill_value=-10000.0, scale=0.7, p=p)
    flow.manual_seed(7)
    sc = flow.softmax(masked(xc, m, -10000.0, 0.7), dim=-1)
    yc = F.dropout(sc, p=p)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == flow.float32 else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(s.numpy(), sc.detach().numpy(), **tol)
    np.testing.assert_allclose(y.numpy(), yc.detach().numpy(), **tol)
    # both outputs carry gradients (LiBai uses [0]; softmax_y is differentiable too)
    (gx,) = flow.autograd.grad((y * g).sum() + (s * s).sum(), xf)
    (gc,) = flow.autograd.grad((yc * g).sum() + (sc * sc).sum(), xc)
    np.testing.assert_allclose(gx.numpy(), gc.numpy(), **tol)
    # and the torch composition of the softmax part
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    ts = torch.softmax(torch.where(torch.tensor(m.numpy()), tx * 0.7, torch.tensor(-10000.0, dtype=torch.float64)), -1)
    np.testing.assert_allclose(s.numpy(), ts.detach().numpy(), rtol=1e-5 if dtype == flow.float32 else 1e-12,
                               atol=1e-6 if dtype == flow.float32 else 1e-13)


def test_scale_mask_softmax_dropout_reproducible_and_p():
    x = t(RNG.standard_normal((64, 128)), flow.float32)
    m = flow.ones(64, 128, dtype=flow.bool)
    flow.manual_seed(3)
    a = flow._C.fused_scale_mask_softmax_dropout(x, m, p=0.25)[0]
    flow.manual_seed(3)
    b = flow._C.fused_scale_mask_softmax_dropout(x, m, p=0.25)[0]
    c = flow._C.fused_scale_mask_softmax_dropout(x, m, p=0.25)[0]
    assert np.array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    assert abs((a.numpy() == 0).mean() - 0.25) < 0.02
    g = flow.Generator()
    g.manual_seed(5)
    d = flow._C.fused_scale_mask_softmax_dropout(x, m, p=0.25, generator=g)[0]
    g.manual_seed(5)
    e = flow._C.fused_scale_mask_softmax_dropout(x, m, p=0.25, generator=g)[0]
    assert np.array_equal(d.numpy(), e.numpy())


@pytest.mark.parametrize("diagonal", [0, 1, -1])
@pytest.mark.parametrize("p", [0.0, 0.4])
def test_scale_tril_softmax_mask_scale_matches_composition(diagonal, p):
    x = RNG.standard_normal((2, 3, 6, 8))
    xf, xc = t(x, grad=True), t(x, grad=True)
    flow.manual_seed(11)
    y, s = flow._C.fused_scale_tril_softmax_mask_scale(xf, p=p, diagonal=diagonal, tril_scale_value=2.5,
                                                        tril_fill_value=-10000.0)
    flow.manual_seed(11)
    keep = flow.ones(6, 8, dtype=flow.bool).tril(diagonal)
    sc = flow.softmax(masked(xc, keep, -10000.0, 2.5), dim=-1)
    yc = F.dropout(sc, p=p)
    np.testing.assert_allclose(y.numpy(), yc.detach().numpy(), rtol=1e-12, atol=1e-13)
    g = t(RNG.standard_normal(x.shape))
    np.testing.assert_allclose(flow.autograd.grad(y, xf, g)[0].numpy(), flow.autograd.grad(yc, xc, g)[0].numpy(),
                               rtol=1e-12, atol=1e-13)
    # upstream's own test composition: tril(x) * scale with the default fill 0
    z = flow._C.fused_scale_tril_softmax_mask_scale(xf, p=0.0, diagonal=diagonal, tril_scale_value=2.5)[0]
    tz = torch.softmax(torch.tril(torch.tensor(x), diagonal) * 2.5, -1)
    np.testing.assert_allclose(z.detach().numpy(), tz.numpy(), rtol=1e-12, atol=1e-13)


def test_non_contiguous_inputs():
    x = RNG.standard_normal((3, 9, 4))
    m = RNG.random((9, 3)) > 0.3
    xf = t(x, grad=True)
    xt = xf.transpose(1, 2)  # (3, 4, 9), non-contiguous
    mt = flow.tensor(m).t()  # (3, 9) -> non-contiguous (3, 9)^T = (9, 3)^T
    mt = mt.expand(4, 3, 9).transpose(0, 1)  # (3, 4, 9) with zero strides
    y = flow._C.fused_scale_mask_softmax(xt, mt, fill_value=-3.0, scale=1.2)
    ref = torch.softmax(torch.where(torch.tensor(mt.numpy()), torch.tensor(x).transpose(1, 2) * 1.2,
                                    torch.tensor(-3.0, dtype=torch.float64)), -1)
    np.testing.assert_allclose(y.detach().numpy(), ref.numpy(), rtol=1e-12, atol=1e-13)
    a = t(RNG.standard_normal((5, 6)), grad=True)
    b = t(RNG.standard_normal(5), grad=True)
    o = flow._C.fused_bias_add_gelu(a.t(), b, axis=1)
    ta, tb = torch.tensor(a.numpy()).t(), torch.tensor(b.numpy())
    np.testing.assert_allclose(o.detach().numpy(), torch.nn.functional.gelu(ta + tb).numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64])
@pytest.mark.parametrize("shape,axis", [((4, 6), 1), ((2, 5, 3), 1), ((2, 5, 3), -1), ((6,), 0)])
def test_bias_add_gelu_and_dropout_match_composition(dtype, shape, axis):
    a = RNG.standard_normal(shape)
    b = RNG.standard_normal(shape[axis])
    bshape = [1] * len(shape)
    bshape[axis] = shape[axis]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == flow.float32 else dict(rtol=1e-12, atol=1e-13)
    g = t(RNG.standard_normal(shape), dtype)
    af, bf, ac, bc = t(a, dtype, True), t(b, dtype, True), t(a, dtype, True), t(b, dtype, True)
    o = flow._C.fused_bias_add_gelu(af, bf, axis=axis)
    oc = F.gelu(ac + bc.reshape(bshape))
    np.testing.assert_allclose(o.numpy(), oc.detach().numpy(), **tol)
    for u, v in zip(flow.autograd.grad(o, [af, bf], g), flow.autograd.grad(oc, [ac, bc], g)):
        np.testing.assert_allclose(u.numpy(), v.numpy(), **tol)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    to = torch.nn.functional.gelu(ta + tb.reshape(bshape))
    to.backward(torch.tensor(g.numpy(), dtype=torch.float64))
    fa, fb = flow.autograd.grad(flow._C.fused_bias_add_gelu(af, bf, axis=axis), [af, bf], g)
    np.testing.assert_allclose(fa.numpy(), ta.grad.numpy(), **tol)
    np.testing.assert_allclose(fb.numpy(), tb.grad.numpy(), **tol)
    for p in (0.0, 0.35, 1.0):
        flow.manual_seed(5)
        o = flow._C.fused_bias_add_dropout(af, bf, p=p, axis=axis)
        flow.manual_seed(5)
        oc = F.dropout(ac + bc.reshape(bshape), p=p)
        np.testing.assert_allclose(o.numpy(), oc.detach().numpy(), **tol)
        for u, v in zip(flow.autograd.grad(o, [af, bf], g), flow.autograd.grad(oc, [ac, bc], g)):
            np.testing.assert_allclose(u.numpy(), v.numpy(), **tol)


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64])
@pytest.mark.parametrize("shape,axis", [((300, 700), 1), ((3, 40, 37), 1), ((0, 5), 1), ((2, 0, 3), 0)])
def test_bias_add_gelu_backward_one_pass(dtype, shape, axis):
    # shapes past one block of rows (the row path's partial sums) and past the run path's lanes,
    # and empty ones (db is the sum over no elements: 0)
    a, b, g = RNG.standard_normal(shape), RNG.standard_normal(shape[axis]), RNG.standard_normal(shape)
    bshape = [1] * len(shape)
    bshape[axis] = shape[axis]
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    torch.nn.functional.gelu(ta + tb.reshape(bshape)).backward(torch.tensor(g))
    da, db = flow._C.native_fused_bias_add_gelu_backward(t(a, dtype), t(b, dtype), t(g, dtype), axis, True)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == flow.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(da.numpy(), ta.grad.numpy(), **tol)
    np.testing.assert_allclose(db.numpy(), tb.grad.numpy(), **tol)
    da2, db2 = flow._C.native_fused_bias_add_gelu_backward(t(a, dtype), t(b, dtype), t(g, dtype), axis, False)
    np.testing.assert_array_equal(da2.numpy(), da.numpy())
    assert tuple(db2.shape) == (0,)


def test_gradcheck_float64():
    x = t(RNG.standard_normal((2, 3, 5)), grad=True)
    m = flow.tensor(RNG.random((1, 3, 5)) > 0.3)
    assert flow.autograd.gradcheck(lambda x: flow._C.fused_scale_mask_softmax(x, m, fill_value=-2.0, scale=1.3), (x,))
    assert flow.autograd.gradcheck(
        lambda x: flow._C.fused_scale_tril_softmax_mask_scale(x, p=0.0, diagonal=0, tril_scale_value=0.8)[0], (x,))
    assert flow.autograd.gradcheck(
        lambda x: flow._C.fused_scale_mask_softmax_dropout(x, m, p=0.0, scale=2.0)[1], (x,))
    a, b = t(RNG.standard_normal((3, 4)), grad=True), t(RNG.standard_normal(4), grad=True)
    assert flow.autograd.gradcheck(lambda a, b: flow._C.fused_bias_add_gelu(a, b, axis=1), (a, b))
    assert flow.autograd.gradcheck(lambda a, b: flow._C.fused_bias_add_dropout(a, b, p=0.0, axis=1), (a, b))


def test_zero_size():
    x = t(np.zeros((0, 4, 5)), grad=True)
    y, s = flow._C.fused_scale_mask_softmax_dropout(x, flow.ones(4, 5, dtype=flow.bool), p=0.5)
    assert y.shape == (0, 4, 5) and s.shape == (0, 4, 5)
    y.sum().backward()
    assert x.grad.shape == (0, 4, 5)
    o = flow._C.fused_bias_add_dropout(t(np.zeros((0, 3))), t(np.zeros(3)), p=0.5, axis=1)
    assert o.shape == (0, 3)


@pytest.mark.parametrize("call,op,words", [
    (lambda: flow._C.fused_scale_mask_softmax(flow.randn(2, 4), flow.ones(2, 3, dtype=flow.bool)),
     "fused_scale_mask_softmax", "last dim"),
    (lambda: flow._C.fused_scale_mask_softmax(flow.randn(2, 4), flow.ones(2, 4)),
     "fused_scale_mask_softmax", "bool or integer mask"),
    (lambda: flow._C.fused_scale_mask_softmax(flow.randn(2, 4), flow.ones(3, 2, 4, dtype=flow.bool)),
     "fused_scale_mask_softmax", "broadcast"),
    (lambda: flow._C.fused_scale_mask_softmax(flow.randn(3, 4), flow.ones(2, 4, dtype=flow.bool)),
     "fused_scale_mask_softmax", "broadcast"),
    (lambda: flow._C.fused_scale_mask_softmax_dropout(flow.randn(2, 4), flow.ones(2, 4, dtype=flow.bool), p=1.5),
     "fused_scale_mask_softmax_dropout", "probability"),
    (lambda: flow._C.fused_scale_mask_softmax_dropout(flow.randn(2, 4), flow.ones(2, 5, dtype=flow.bool)),
     "fused_scale_mask_softmax_dropout", "last dim"),
    (lambda: flow._C.fused_scale_tril_softmax_mask_scale(flow.randn(4), diagonal=0, tril_scale_value=1.0),
     "fused_scale_tril_softmax_mask_scale", "2 dimensions"),
    (lambda: flow._C.fused_bias_add_gelu(flow.randn(2, 4), flow.randn(3), axis=1), "fused_bias_add_gelu", "bias"),
    (lambda: flow._C.fused_bias_add_gelu(flow.randn(2, 4), flow.randn(4, 1), axis=1), "fused_bias_add_gelu", "1-D"),
    (lambda: flow._C.fused_bias_add_gelu(flow.randn(2, 4), flow.randn(4, dtype=flow.float64), axis=1),
     "fused_bias_add_gelu", "dtype"),
    (lambda: flow._C.fused_bias_add_dropout(flow.randn(2, 4), flow.randn(2), p=0.1, axis=1),
     "fused_bias_add_dropout", "bias"),
    (lambda: flow._C.fused_bias_add_dropout(flow.randn(2, 4), flow.randn(4), p=-0.1, axis=1),
     "fused_bias_add_dropout", "probability"),
    (lambda: flow._C.fused_matmul_bias(flow.randn(3, 5), flow.randn(4, 6), flow.randn(4)), "fused_matmul_bias",
     "weight's second dim"),
    (lambda: flow._C.fused_matmul_bias(flow.randn(3, 5), flow.randn(4, 5), flow.randn(3)), "fused_matmul_bias",
     "bias's size"),
    (lambda: flow._C.fused_matmul_bias(flow.randn(3, 5), flow.randn(4, 5), flow.randn(4), flow.randn(3, 5)),
     "fused_matmul_bias", "_add_to_output"),
    (lambda: flow._C.rms_norm(flow.randn(2, 5), flow.randn(4), [4], 1e-6), "rms_norm", "normalized_shape"),
    (lambda: flow._C.rms_norm(flow.randn(2, 5), flow.randn(4), [5], 1e-6), "rms_norm", "weight"),
    (lambda: flow._C.skip_rms_norm(flow.randn(5), weight=flow.randn(5)), "skip_rms_norm", "2 dimensions"),
    (lambda: flow._C.skip_rms_norm(flow.randn(2, 5), skip=flow.randn(2, 4)), "skip_rms_norm", "skip"),
    (lambda: flow._C.fused_glu(flow.randn(3, 5), flow.randn(5, 5)), "fused_glu", "even"),
    (lambda: flow._C.fused_glu(flow.randn(3, 5), flow.randn(4, 5), v=flow.randn(3, 5)), "fused_glu", "v's shape"),
    (lambda: flow._C.fused_glu(flow.randn(3, 5), flow.randn(4, 5), flow.randn(4), v=flow.randn(4, 5)),
     "fused_glu", "both biases"),
    (lambda: flow._C.fused_multi_head_attention_inference(flow.randn(2, 3, 8), flow.randn(2, 4, 8),
                                                          flow.randn(2, 5, 8), 2), "fused_multi_head_attention_inference",
     "sequence length"),
    (lambda: flow._C.fused_multi_head_attention_inference(flow.randn(2, 3, 8), flow.randn(2, 4, 8),
                                                          flow.randn(2, 4, 8), 2, query_hidden_slice_end=4),
     "fused_multi_head_attention_inference", "deprecated"),
])
def test_errors_name_the_op(call, op, words):
    with pytest.raises(RuntimeError) as e:
        call()
    assert op in str(e.value) and words in str(e.value), str(e.value)


def test_bad_axis_is_index_error():
    with pytest.raises(IndexError, match="fused_bias_add_gelu"):
        flow._C.fused_bias_add_gelu(flow.randn(2, 4), flow.randn(4), axis=2)


def test_fused_glu_bad_activation_is_value_error():
    with pytest.raises(ValueError, match="fused_glu.*tanh"):
        flow._C.fused_glu(flow.randn(3, 5), flow.randn(4, 5), activation="tanh")


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64])
def test_matmul_bias_glu_rms_match_our_composition(dtype):
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == flow.float32 else dict(rtol=1e-11, atol=1e-12)
    x, w, b = (t(RNG.standard_normal(s), dtype, True) for s in ((2, 3, 6), (8, 6), (8,)))
    y = flow._C.fused_matmul_bias(x, w, b)
    yc = flow.matmul(x, w.t()) + b
    np.testing.assert_allclose(y.detach().numpy(), yc.detach().numpy(), **tol)
    g = t(RNG.standard_normal(y.shape), dtype)
    for u, v in zip(flow.autograd.grad(y, [x, w, b], g), flow.autograd.grad(yc, [x, w, b], g)):
        np.testing.assert_allclose(u.numpy(), v.numpy(), **tol)
    y = flow._C.fused_glu(x, w, b, activation="gelu")
    hid, gate = (flow.matmul(x, w.t()) + b).chunk(2, dim=-1)
    yc = hid * F.gelu(gate)
    np.testing.assert_allclose(y.detach().numpy(), yc.detach().numpy(), **tol)
    g = t(RNG.standard_normal(y.shape), dtype)
    for u, v in zip(flow.autograd.grad(y, [x, w, b], g), flow.autograd.grad(yc, [x, w, b], g)):
        np.testing.assert_allclose(u.numpy(), v.numpy(), **tol)
    wt = t(RNG.standard_normal(6), dtype, True)
    y = flow._C.rms_norm(x, wt, [6], 1e-6)
    yc = x * flow.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * wt
    np.testing.assert_allclose(y.detach().numpy(), yc.detach().numpy(), **tol)
    g = t(RNG.standard_normal(y.shape), dtype)
    for u, v in zip(flow.autograd.grad(y, [x, wt], g), flow.autograd.grad(yc, [x, wt], g)):
        np.testing.assert_allclose(u.numpy(), v.numpy(), **tol)


def test_gradcheck_float64_matmul_glu_rms():
    x, w, b = (t(RNG.standard_normal(s), grad=True) for s in ((2, 3), (4, 3), (4,)))
    v, c = t(RNG.standard_normal((4, 3)), grad=True), t(RNG.standard_normal(4), grad=True)
    assert flow.autograd.gradcheck(lambda x, w, b: flow._C.fused_matmul_bias(x, w, b, alpha=0.5), (x, w, b))
    assert flow.autograd.gradcheck(
        lambda x, w, b, v, c: flow._C.fused_glu(x, w, b, v, c, activation="silu"), (x, w, b, v, c))
    wt, s = t(RNG.standard_normal(3), grad=True), t(RNG.standard_normal((2, 3)), grad=True)
    assert flow.autograd.gradcheck(lambda x, wt: flow._C.rms_norm(x, wt, [3], 1e-5), (x, wt))
    assert flow.autograd.gradcheck(
        lambda x, wt, s: flow._C.skip_rms_norm(x, weight=wt, skip=s, alpha=0.7), (x, wt, s))


def test_integer_masks_as_libai_passes_them():
    """LiBai's GPT causal mask is int8 (1 = attend), its BERT mask a product of integer masks."""
    x = t(RNG.standard_normal((2, 3, 5, 5)), flow.float32)
    causal = flow.ones(5, 5, dtype=flow.int8).tril().unsqueeze(0).unsqueeze(1).expand(2, 1, 5, 5)
    pad = flow.tensor(RNG.integers(0, 2, (2, 1, 1, 5)), dtype=flow.int64)
    for m in (causal, pad, causal * pad.to(flow.int8)):
        y = flow._C.fused_scale_mask_softmax_dropout(x, m, fill_value=-10000.0, scale=0.5, p=0.0)[0]
        ref = flow._C.fused_scale_mask_softmax(x, m != 0, fill_value=-10000.0, scale=0.5)
        np.testing.assert_array_equal(y.numpy(), ref.numpy())
