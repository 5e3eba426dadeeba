"""flow._C with upstream OneFlow's signatures (Note [OneFlow's signatures], src/api/arg_fits.h;
docs/functional_api.md): each function that upstream's functional API names differently or with
other arguments, called as upstream documents it (positionally and by keyword) and, where the
name is ours too, as ours; compared with PyTorch forward and backward."""

import numpy as np
import pytest
import torch

import oneflow as flow

C = flow._C


def pair(shape, dtype=np.float64, seed=0, lo=-2.0, hi=2.0):
    """The same values as a flow and a torch leaf tensor requiring grad."""
    a = np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)
    return flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def ints(shape, hi, seed=1):
    a = np.random.default_rng(seed).integers(0, hi, shape).astype(np.int64)
    return flow.tensor(a), torch.tensor(a)


def check(f_out, t_out, f_inputs, t_inputs, atol=1e-10):
    """Forward values, then the gradients of a random weighting of the output."""
    np.testing.assert_allclose(f_out.numpy(), t_out.detach().numpy(), rtol=1e-7, atol=atol)
    w = np.random.default_rng(7).uniform(-1, 1, t_out.shape)
    (f_out * flow.tensor(w)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for f, t in zip(f_inputs, t_inputs):
        if t.grad is None:  # an input the output does not depend on
            assert f.grad is None
            continue
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=atol)


# ---- upstream's forms of our names ----------------------------------------------------------------


def tf_gather(t, idx, axis):
    return torch.index_select(t, axis, idx.reshape(-1)).reshape(t.shape[:axis] + idx.shape + t.shape[axis + 1:])


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("call", ["positional", "keyword"])
def test_gather_upstream_form(axis, call):
    fx, tx = pair((4, 5, 3))
    fi, ti = ints((2, 3), 3 if axis == -1 else (4 if axis == 0 else 5))
    out = C.gather(fx, fi, axis) if call == "positional" else C.gather(fx, indices=fi, axis=axis)
    check(out, tf_gather(tx, ti, axis % 3), [fx], [tx])
    assert tuple(out.shape) == tuple(tx.shape[: axis % 3]) + (2, 3) + tuple(tx.shape[axis % 3 + 1:])


def test_gather_upstream_form_keyword_x_and_0d_indices():
    fx, tx = pair((4, 5))
    out = C.gather(x=fx, indices=flow.tensor(2), axis=1)
    check(out, tx[:, 2], [fx], [tx])


def test_gather_ours_still_torch_gather():
    fx, tx = pair((4, 5))
    fi, ti = ints((4, 2), 5)
    check(C.gather(fx, 1, fi), torch.gather(tx, 1, ti), [fx], [tx])
    fx, tx = pair((4, 5))
    check(C.gather(fx, dim=1, index=fi), torch.gather(tx, 1, ti), [fx], [tx])


def test_gather_neither_form_is_a_type_error():
    x = flow.randn(3, 4)
    with pytest.raises(TypeError, match="gather"):
        C.gather(x, 1.5, 2.5)
    with pytest.raises((IndexError, RuntimeError), match="gather.*out of bounds"):
        C.gather(x, flow.tensor([7]), 0)


@pytest.mark.parametrize("ta,tb,alpha", [(False, False, 1.0), (True, False, 2.0), (False, True, 0.5), (True, True, -1.5)])
@pytest.mark.parametrize("fn", ["_C", "flow"])
def test_matmul_upstream_form(ta, tb, alpha, fn):
    mm = C.matmul if fn == "_C" else flow.matmul
    fa, tA = pair((2, 4, 3) if ta else (2, 3, 4), seed=1)
    fb, tB = pair((5, 4) if tb else (4, 5), seed=2)
    ref = alpha * torch.matmul(tA.transpose(-2, -1) if ta else tA, tB.transpose(-2, -1) if tb else tB)
    check(mm(fa, fb, transpose_a=ta, transpose_b=tb, alpha=alpha), ref, [fa, fb], [tA, tB])
    fa, tA = pair(tuple(fa.shape), seed=1)
    fb, tB = pair(tuple(fb.shape), seed=2)
    ref = alpha * torch.matmul(tA.transpose(-2, -1) if ta else tA, tB.transpose(-2, -1) if tb else tB)
    check(mm(fa, fb, ta, tb, alpha), ref, [fa, fb], [tA, tB])


def test_matmul_ours_and_errors():
    fa, tA = pair((3, 4), seed=1)
    fb, tB = pair((4, 2), seed=2)
    check(C.matmul(fa, fb), torch.matmul(tA, tB), [fa, fb], [tA, tB])
    with pytest.raises(ValueError, match="matmul.*transpose_a"):
        C.matmul(flow.randn(3), flow.randn(3), transpose_a=True)


@pytest.mark.parametrize("perm", [[1, 0, 2], (2, 0, 1)])
def test_transpose_perm(perm):
    fx, tx = pair((2, 3, 4))
    check(C.transpose(fx, perm=perm), tx.permute(*perm), [fx], [tx])
    fx, tx = pair((2, 3, 4))
    check(C.transpose(fx, perm), tx.permute(*perm), [fx], [tx])
    fx, tx = pair((2, 3, 4))
    check(C.transpose(fx, 0, 2), tx.transpose(0, 2), [fx], [tx])


def test_cast_upstream_form():
    x = flow.tensor([1.5, -2.25])
    for out in (C.cast(x, flow.int32), C.cast(x, dtype=flow.int32, pin_memory=False), C.cast(x=x, dtype=flow.int32)):
        assert out.dtype == flow.int32 and out.tolist() == [1, -2]


@pytest.mark.parametrize("bn,bp", [(1, 1), (2, 2), (-1, -1), (1, 2)])
def test_layer_norm_affine(bn, bp):
    shape = (2, 3, 4)
    fx, tx = pair(shape)
    pshape = shape[bp % 3:]
    fg, tg = pair(pshape, seed=3)
    fb, tb = pair(pshape, seed=4)
    ref = torch.nn.functional.layer_norm(tx, shape[bn % 3:], eps=1e-5)
    ref = ref * tg + tb
    check(C.layer_norm_affine(fx, fg, fb, bn, bp, 1e-5), ref, [fx, fg, fb], [tx, tg, tb], atol=1e-9)
    for f in (fx, fg, fb):
        f.grad = None
    for t in (tx, tg, tb):
        t.grad = None
    out = C.layer_norm_affine(fx, fg, fb, begin_norm_axis=bn, begin_params_axis=bp, epsilon=1e-5)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-9)


def test_layer_norm_both_forms():
    fx, tx = pair((2, 3, 4))
    out = C.layer_norm(fx, 1, 1, 1e-5)  # upstream's: one tensor
    check(out, torch.nn.functional.layer_norm(tx, (3, 4), eps=1e-5), [fx], [tx], atol=1e-9)
    out = C.layer_norm(fx, begin_norm_axis=2, begin_params_axis=2, epsilon=1e-3)
    ref = torch.nn.functional.layer_norm(tx, (4,), eps=1e-3)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-9)
    ours = C.layer_norm(fx, [4])  # ours: (output, mean, rstd)
    np.testing.assert_allclose(ours[0].detach().numpy(), torch.nn.functional.layer_norm(tx, (4,)).detach().numpy(),
                               atol=1e-9)
    with pytest.raises(ValueError, match="layer_norm.*gamma"):
        C.layer_norm_affine(fx, flow.ones(3), flow.zeros(3), 1, 1, 1e-5)


def torch_rms(t, k, eps, w=None):
    y = t * torch.rsqrt(t.pow(2).mean(dim=tuple(range(-k, 0)), keepdim=True) + eps)
    return y * w if w is not None else y


@pytest.mark.parametrize("with_weight", [True, False])
def test_rms_norm(with_weight):
    fx, tx = pair((2, 3, 4))
    fw, tw = pair((3, 4), seed=5) if with_weight else (None, None)
    out = C.rms_norm(fx, fw, [3, 4], 1e-6)  # upstream's order: x, weight, normalized_shape, epsilon
    check(out, torch_rms(tx, 2, 1e-6, tw), [fx] + ([fw] if with_weight else []), [tx] + ([tw] if with_weight else []))
    fx, tx = pair((2, 3, 4))
    fw, tw = pair((4,), seed=5) if with_weight else (None, None)
    if with_weight:
        out = C.rms_norm(fx, weight=fw, normalized_shape=(4,), epsilon=1e-3)
    else:  # weight=None is upstream's default
        out = C.rms_norm(fx, normalized_shape=(4,), epsilon=1e-3)
    ref = torch.nn.functional.rms_norm(tx, (4,), weight=tw, eps=1e-3)
    check(out, ref, [fx] + ([fw] if with_weight else []), [tx] + ([tw] if with_weight else []))
    with pytest.raises(RuntimeError, match="rms_norm.*normalized_shape"):  # as torch's F.rms_norm
        C.rms_norm(fx, None, [5], 1e-6)


def test_rms_layer_norm():
    fx, tx = pair((2, 3, 8))
    fw, tw = pair((8,), seed=5)
    check(C.rms_layer_norm(fx, fw, 1e-6), tw * torch_rms(tx, 1, 1e-6), [fx, fw], [tx, tw])
    x16 = flow.randn(2, 8).to(flow.float16)
    w16 = flow.ones(8, dtype=flow.float16)
    out = C.rms_layer_norm(hidden_states=x16, weight=w16, variance_epsilon=1e-6)
    ref = torch_rms(torch.tensor(x16.float().numpy()), 1, 1e-6)
    assert out.dtype == flow.float16
    np.testing.assert_allclose(out.float().numpy(), ref.numpy(), atol=2e-3, rtol=2e-3)


def test_quick_gelu():
    fx, tx = pair((3, 4), lo=-5, hi=5)
    check(C.quick_gelu(fx), tx * torch.sigmoid(1.702 * tx), [fx], [tx])
    fx, tx = pair((3, 4), lo=-5, hi=5)
    check(flow.nn.functional.quick_gelu(x=fx), tx * torch.sigmoid(1.702 * tx), [fx], [tx])
    assert flow.quick_gelu is C.quick_gelu


@pytest.mark.parametrize("name", ["identity", "amp_white_identity", "amp_black_identity"])
def test_identities(name):
    fx, tx = pair((3, 4))
    out = getattr(C, name)(fx)
    assert out is not fx
    check(out, tx * 1, [fx], [tx])


def test_softmax_cross_entropy():
    fx, tx = pair((4, 5))
    p = np.random.default_rng(3).dirichlet(np.ones(5), 4)
    ref = torch.nn.functional.cross_entropy(tx, torch.tensor(p), reduction="none")
    check(C.softmax_cross_entropy(fx, flow.tensor(p)), ref, [fx], [tx])
    fx, tx = pair((2, 3, 5))
    p = np.random.default_rng(3).dirichlet(np.ones(5), (2, 3))
    ref = -(torch.tensor(p) * torch.log_softmax(tx, -1)).sum(-1)
    check(C.softmax_cross_entropy(logits=fx, label=flow.tensor(p)), ref, [fx], [tx])


def test_sparse_softmax_cross_entropy():
    fx, tx = pair((6, 5))
    fl, tl = ints((6,), 5)
    check(C.sparse_softmax_cross_entropy(fx, fl), torch.nn.functional.cross_entropy(tx, tl, reduction="none"), [fx], [tx])
    fx, tx = pair((2, 3, 5))
    fl, tl = ints((2, 3), 5)
    ref = torch.nn.functional.cross_entropy(tx.reshape(6, 5), tl.reshape(6), reduction="none").reshape(2, 3)
    check(C.sparse_softmax_cross_entropy(logits=fx, label=fl.to(flow.int32)), ref, [fx], [tx])
    with pytest.raises(RuntimeError, match="sparse_softmax_cross_entropy"):
        C.sparse_softmax_cross_entropy(fx, flow.zeros(2, 5, dtype=flow.int64))


@pytest.mark.parametrize("name,torch_fn", [
    ("binary_cross_entropy_with_logits_loss", torch.nn.functional.binary_cross_entropy_with_logits),
    ("binary_cross_entropy_loss", torch.nn.functional.binary_cross_entropy)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_loss_names(name, torch_fn, reduction):
    logits = name.endswith("logits_loss")
    fx, tx = pair((3, 4), lo=-3 if logits else 0.05, hi=3 if logits else 0.95)
    y = np.random.default_rng(2).uniform(0, 1, (3, 4))
    w = np.random.default_rng(6).uniform(0.5, 1.5, (4,))
    fw, tw = flow.tensor(w), torch.tensor(w)
    out = getattr(C, name)(fx, flow.tensor(y), fw, reduction=reduction) if not logits else \
        getattr(C, name)(fx, flow.tensor(y), weight=fw, pos_weight=None, reduction=reduction)
    check(out, torch_fn(tx, torch.tensor(y), weight=tw, reduction=reduction), [fx], [tx])


def test_bce_with_logits_loss_pos_weight_positional():
    fx, tx = pair((3, 4))
    y = np.random.default_rng(2).uniform(0, 1, (3, 4))
    pw = np.array([0.5, 1.0, 2.0, 3.0])
    out = C.binary_cross_entropy_with_logits_loss(fx, flow.tensor(y), None, flow.tensor(pw), "sum")
    ref = torch.nn.functional.binary_cross_entropy_with_logits(tx, torch.tensor(y), pos_weight=torch.tensor(pw),
                                                               reduction="sum")
    check(out, ref, [fx], [tx])


@pytest.mark.parametrize("ishape,ishape_idx", [((2, 3), (2,)), ((2, 4, 3), (2, 2)), ((3, 4, 2, 2), (3, 5))])
def test_batch_gather(ishape, ishape_idx):
    fx, tx = pair(ishape)
    axis = len(ishape_idx) - 1
    fi, ti = ints(ishape_idx, ishape[axis])
    idx = ti.reshape(ti.shape + (1,) * (len(ishape) - ti.dim())).expand(ti.shape + ishape[axis + 1:])
    ref = torch.gather(tx, axis, idx)
    check(flow.batch_gather(fx, fi), ref, [fx], [tx])
    fx, tx = pair(ishape)
    check(C.batch_gather(fx, indices=fi), torch.gather(tx, axis, idx), [fx], [tx])


def test_batch_gather_docstring_example():
    x = flow.tensor([[1.0, 2, 3], [4, 5, 6]])
    assert flow.batch_gather(x, flow.tensor([1, 0])).tolist() == [[4, 5, 6], [1, 2, 3]]
    with pytest.raises(RuntimeError, match="batch_gather"):
        flow.batch_gather(flow.randn(2, 3), flow.zeros(3, 1, dtype=flow.int64))


def test_split_like():
    fx, tx = pair((3, 7, 2))
    like = [flow.zeros(3, 2, 2), flow.zeros(3, 5, 2)]
    outs = C.split_like(fx, like, 1)
    assert isinstance(outs, (list, tuple)) and len(outs) == 2
    refs = torch.split(tx, [2, 5], 1)
    w = [np.random.default_rng(i).uniform(-1, 1, r.shape) for i, r in enumerate(refs)]
    for o, r in zip(outs, refs):
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy())
    sum((o * flow.tensor(wi)).sum() for o, wi in zip(outs, w)).backward()
    sum((r * torch.tensor(wi)).sum() for r, wi in zip(refs, w)).backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy())
    outs = C.split_like(x=fx, like=like, axis=-2)
    assert [tuple(o.shape) for o in outs] == [(3, 2, 2), (3, 5, 2)]
    with pytest.raises(RuntimeError, match="split_like"):
        C.split_like(fx, [flow.zeros(3, 2, 2)], 1)


def test_depend():
    fx, tx = pair((3,))
    d = flow.ones(2)
    assert C.depend(fx, d) is fx
    assert C.depend(fx, [d, d]) is fx
    assert flow.nn.functional.depend(input=fx, depend=d) is fx
    (C.depend(fx, d) * 2).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), [2, 2, 2])


def test_global_arange_local_forms_match_arange():
    assert C.global_arange(5).tolist() == list(range(5))
    assert C.global_arange(1, 7, 2, dtype=flow.float64).tolist() == [1.0, 3.0, 5.0]
    assert C.global_arange(1, 7, 2, dtype=flow.float64).dtype == flow.float64


def test_global_arange_makes_a_global_tensor():
    p = flow.placement("cpu", [0])
    t = C.global_arange(0, 6, placement=p, sbp=flow.sbp.broadcast)
    assert t.is_global and t.placement == p
    assert t.to_local().tolist() == list(range(6))


# ---- upstream's `inplace=` switch -----------------------------------------------------------------

TF = torch.nn.functional
INPLACE_CASES = [
    ("relu", lambda x: (), {}, lambda t: TF.relu(t)),
    ("celu", lambda x: (), {"alpha": 0.7}, lambda t: TF.celu(t, 0.7)),
    ("hardsigmoid", lambda x: (), {}, lambda t: TF.hardsigmoid(t)),
    ("hardshrink", lambda x: (), {"lambd": 0.3}, lambda t: TF.hardshrink(t, 0.3)),
    ("leaky_relu", lambda x: (0.2,), {}, lambda t: TF.leaky_relu(t, 0.2)),
    ("softshrink", lambda x: (), {"alpha": 0.4}, lambda t: TF.softshrink(t, 0.4)),
    ("add", lambda x: (x[1],), {"alpha": 2}, lambda t: t[0] + 2 * t[1]),
    ("sub", lambda x: (1.5,), {"alpha": 2}, lambda t: t[0] - 3.0),
    ("mul", lambda x: (x[1],), {}, lambda t: t[0] * t[1]),
    ("pow", lambda x: (2.0,), {}, lambda t: t[0] ** 2),
    ("fmod", lambda x: (0.7,), {}, lambda t: torch.fmod(t[0], 0.7)),
    ("floor_divide", lambda x: (0.7,), {}, lambda t: torch.floor_divide(t[0], 0.7)),
]


@pytest.mark.parametrize("name,args,kwargs,ref", INPLACE_CASES, ids=[c[0] for c in INPLACE_CASES])
def test_inplace_switch(name, args, kwargs, ref):
    a = np.random.default_rng(0).uniform(-2, 2, (2, 3, 4))
    b = np.random.default_rng(1).uniform(0.5, 2, (3, 4))
    binary = name in ("add", "sub", "mul", "pow", "fmod", "floor_divide")
    t = (torch.tensor(a), torch.tensor(b)) if binary else torch.tensor(a)
    want = ref(t).numpy()
    fx = (flow.tensor(a), flow.tensor(b)) if binary else (flow.tensor(a),)
    fn = getattr(C, name)
    # out of place: x unchanged, by keyword and by position
    out = fn(fx[0], *args(fx), inplace=False, **kwargs)
    assert out is not fx[0]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(fx[0].numpy(), a)
    # in place: x itself changed and returned
    x = flow.tensor(a)
    out = fn(x, *args(fx), inplace=True, **kwargs)
    assert out is x
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-12)


def test_inplace_switch_positional_and_autograd():
    a = np.random.default_rng(0).uniform(-2, 2, (3, 4))
    x = flow.tensor(a, requires_grad=True)
    y = x * 1
    out = C.relu(y, True)  # upstream's relu(x, inplace) positionally
    assert out is y
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (a > 0).astype(float))
    x = flow.tensor(a)
    out = C.leaky_relu(x, 0.1, True)
    assert out is x
    np.testing.assert_allclose(x.numpy(), TF.leaky_relu(torch.tensor(a), 0.1).numpy())
    x = flow.tensor(a)
    idx = flow.tensor([[0, 1, 2, 0]])
    src = flow.ones(1, 4, dtype=flow.float64)
    out = C.scatter_add(x, 0, idx, src, inplace=True)
    assert out is x
    ref = torch.tensor(a).scatter_add(0, torch.tensor([[0, 1, 2, 0]]), torch.ones(1, 4, dtype=torch.float64))
    np.testing.assert_allclose(x.numpy(), ref.numpy())
    with pytest.raises(RuntimeError, match="leaf|requires grad|in-place"):
        C.relu(flow.tensor(a, requires_grad=True), inplace=True)


def test_ours_still_reject_unknown_keywords():
    with pytest.raises(TypeError, match="relu"):
        C.relu(flow.randn(3), inplace=True, bogus=1)
    with pytest.raises(TypeError, match="add"):
        C.add(flow.randn(3), flow.randn(3), beta=2)


# ---- the generated comparison ---------------------------------------------------------------------


def test_functional_api_doc_is_current():
    """docs/functional_api.md is what tools/upstream_functional.py makes of the checked-in snapshot
    and this build (regenerate with `python tools/upstream_functional.py doc`)."""
    import os
    import sys
    tools = os.path.join(os.path.dirname(__file__), "..", "tools")
    sys.path.insert(0, tools)
    try:
        import upstream_functional as uf
    finally:
        sys.path.remove(tools)
    rows = uf.classify()
    assert open(uf.DOC).read() == uf.render(rows)
    states = {(r[0], uf.format_sig(r[0], r[1], r[2])): r[3] for r in rows}
    # The functions this file tests with upstream's signatures are rows the doc calls accepted.
    for sig in ["gather(Tensor x, Tensor indices, Int64 axis) -> Tensor",
                "matmul(Tensor input, Tensor other, Bool transpose_a=False, Bool transpose_b=False, Double alpha=1.0) -> Tensor",
                "relu(Tensor x, Bool inplace=False) -> Tensor",
                "quick_gelu(Tensor x) -> Tensor",
                "batch_gather(Tensor in, Tensor indices) -> Tensor"]:
        name = sig.split("(")[0]
        assert states.get((name, sig)) in ("same", "adapted"), (sig, states.get((name, sig)))


# ---- upstream's other names for our ops -----------------------------------------------------------

_A = np.random.default_rng(11).uniform(-2, 2, (3, 4))
_B = np.random.default_rng(12).uniform(-2, 2, (3, 4))
_SQ = np.random.default_rng(13).uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
ALIAS_CASES = [
    # (name, flow call, torch reference, differentiable)
    ("greater", lambda f, a, b: C.greater(a, b), lambda t, a, b: t.gt(a, b), False),
    ("greater_equal", lambda f, a, b: C.greater_equal(a, 0.5), lambda t, a, b: t.ge(a, 0.5), False),
    ("less", lambda f, a, b: C.less(input=a, other=b), lambda t, a, b: t.lt(a, b), False),
    ("less_equal", lambda f, a, b: C.less_equal(a, b), lambda t, a, b: t.le(a, b), False),
    ("not_equal", lambda f, a, b: C.not_equal(a, a), lambda t, a, b: t.ne(a, a), False),
    ("negative", lambda f, a, b: C.negative(a), lambda t, a, b: -a, True),
    ("concat", lambda f, a, b: C.concat([a, b], 1), lambda t, a, b: t.cat([a, b], 1), True),
    ("concat_kw", lambda f, a, b: C.concat(inputs=[a, b], dim=0), lambda t, a, b: t.cat([a, b], 0), True),
    ("expand_dims", lambda f, a, b: C.expand_dims(a, 1), lambda t, a, b: a.unsqueeze(1), True),
    ("reduce_sum", lambda f, a, b: C.reduce_sum(a, [1], True), lambda t, a, b: a.sum(1, keepdim=True), True),
    ("reduce_sum_all", lambda f, a, b: C.reduce_sum(a), lambda t, a, b: a.sum(), True),
    ("reduce_sum_kw", lambda f, a, b: C.reduce_sum(x=a, dim=[0, 1], keepdim=False), lambda t, a, b: a.sum((0, 1)), True),
    ("reduce_mean", lambda f, a, b: C.reduce_mean(a, [0]), lambda t, a, b: a.mean(0), True),
    ("reduce_mean_all", lambda f, a, b: C.reduce_mean(a), lambda t, a, b: a.mean(), True),
    ("reduce_max", lambda f, a, b: C.reduce_max(a, axis=[1], keepdim=True), lambda t, a, b: a.amax(1, keepdim=True), True),
    ("reduce_min", lambda f, a, b: C.reduce_min(a, [0]), lambda t, a, b: a.amin(0), True),
    ("reduce_all", lambda f, a, b: C.reduce_all(C.greater(a, -1.5), [1]), lambda t, a, b: (a > -1.5).all(1), False),
    ("reduce_any", lambda f, a, b: C.reduce_any(C.greater(a, 1.5)), lambda t, a, b: (a > 1.5).any(), False),
    ("reduce_nansum", lambda f, a, b: C.reduce_nansum(a, [1]), lambda t, a, b: a.nansum(1), True),
    ("swapaxes", lambda f, a, b: C.swapaxes(a, 0, 1), lambda t, a, b: a.swapaxes(0, 1), True),
    ("swapdims", lambda f, a, b: C.swapdims(a, dim0=1, dim1=0), lambda t, a, b: a.swapdims(1, 0), True),
    ("clip", lambda f, a, b: C.clip(a, -0.5, 0.5), lambda t, a, b: a.clip(-0.5, 0.5), True),
    ("clip_kw", lambda f, a, b: C.clip(a, max=0.3), lambda t, a, b: a.clip(max=0.3), True),
    ("rint", lambda f, a, b: C.rint(a * 3), lambda t, a, b: torch.round(a * 3), False),
    ("gelu_with_approximate", lambda f, a, b: C.gelu_with_approximate(a, "tanh"),
     lambda t, a, b: TF.gelu(a, approximate="tanh"), True),
    ("kl_div_loss", lambda f, a, b: C.kl_div_loss(a, b.exp(), False, "sum"),
     lambda t, a, b: TF.kl_div(a, b.exp(), reduction="sum"), True),
    ("kl_div_loss_log", lambda f, a, b: C.kl_div_loss(a, b, log_target=True),
     lambda t, a, b: TF.kl_div(a, b, reduction="sum", log_target=True) / a.numel(), True),  # 'mean'

    ("trunc_divide", lambda f, a, b: C.trunc_divide(a, b), lambda t, a, b: torch.div(a, b, rounding_mode="trunc"), False),
    ("dim_gather", lambda f, a, b: C.dim_gather(a, 1, f.tensor([[0, 2], [1, 1], [3, 0]])),
     lambda t, a, b: t.gather(a, 1, t.tensor([[0, 2], [1, 1], [3, 0]])), True),
    ("batch_matmul", lambda f, a, b: C.batch_matmul(a.reshape(1, 3, 4), b.reshape(1, 3, 4), transpose_b=True, alpha=0.5),
     lambda t, a, b: 0.5 * t.bmm(a.reshape(1, 3, 4), b.reshape(1, 3, 4).transpose(1, 2)), True),
]


@pytest.mark.parametrize("name,fcall,tcall,diff", ALIAS_CASES, ids=[c[0] for c in ALIAS_CASES])
def test_upstream_names(name, fcall, tcall, diff):
    fa, ta = flow.tensor(_A, requires_grad=diff), torch.tensor(_A, requires_grad=diff)
    fb, tb = flow.tensor(_B, requires_grad=diff), torch.tensor(_B, requires_grad=diff)
    out, ref = fcall(flow, fa, fb), tcall(torch, ta, tb)
    if diff:
        check(out, ref, [fa, fb], [ta, tb])
    else:
        assert out.dtype == {torch.bool: flow.bool, torch.float64: flow.float64}[ref.dtype]
        np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_inv():
    fx, tx = flow.tensor(_SQ, requires_grad=True), torch.tensor(_SQ, requires_grad=True)
    check(C.inv(fx), torch.linalg.inv(tx), [fx], [tx], atol=1e-9)


def test_forms_inside_nn_graph():
    """A form runs one table op, so nn.Graph records it (Note [Lazy interception])."""

    class G(flow.nn.Graph):
        def build(self, x, i):
            y = x * 1
            C.relu(y, inplace=True)
            return C.gather(x, i, 1), C.matmul(x, x, transpose_b=True, alpha=2.0), y, C.reduce_sum(x, [0])

    a = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    x, i = flow.tensor(a), flow.tensor([2, 0])
    g = G()
    for _ in range(2):  # the traced program, run again
        gat, mm, r, s = g(x, i)
        np.testing.assert_allclose(gat.numpy(), a[:, [2, 0]])
        np.testing.assert_allclose(mm.numpy(), 2 * a @ a.T, rtol=1e-12)
        np.testing.assert_allclose(r.numpy(), np.maximum(a, 0))
        np.testing.assert_allclose(s.numpy(), a.sum(0), rtol=1e-12)
    assert len(g._compiled) == 1
    text = g._programs()[0]
    for op in ("relu_", "gather_axis", "matmul_transposed", "sum"):
        assert op in text, text


def test_positional_forms_of_keyword_arguments():
    seq = flow.tensor([[1.0, 3, 5, 7], [2, 4, 6, 8]])
    vals = flow.tensor([[3.0, 6], [1, 8]])
    tseq, tvals = torch.tensor(seq.numpy()), torch.tensor(vals.numpy())
    for out_int32, right in [(False, False), (True, True)]:
        out = C.searchsorted(seq, vals, out_int32, right)
        ref = torch.searchsorted(tseq, tvals, out_int32=out_int32, right=right)
        assert out.dtype == (flow.int32 if out_int32 else flow.int64)
        np.testing.assert_array_equal(out.numpy(), ref.numpy())
    # index_add's alpha by position
    fx, tx = pair((4, 3))
    fs, ts = pair((2, 3), seed=3)
    idx = [3, 0]
    out = C.index_add(fx, 0, flow.tensor(idx), fs, 2.5)
    check(out, tx.index_add(0, torch.tensor(idx), ts, alpha=2.5), [fx, fs], [tx, ts])
    # smooth_l1_loss(logits, label, beta, reduction): upstream's order
    fx, tx = pair((3, 4))
    y = np.random.default_rng(5).uniform(-2, 2, (3, 4))
    out = C.smooth_l1_loss(fx, flow.tensor(y), 0.5, "sum")
    check(out, TF.smooth_l1_loss(tx, torch.tensor(y), beta=0.5, reduction="sum"), [fx], [tx])
    fx, tx = pair((3, 4))
    out = C.smooth_l1_loss(logits=fx, label=flow.tensor(y), beta=2.0, reduction="none")
    check(out, TF.smooth_l1_loss(tx, torch.tensor(y), beta=2.0, reduction="none"), [fx], [tx])
    fx, tx = pair((3, 4))
    check(C.smooth_l1_loss(fx, flow.tensor(y), "mean", 0.3), TF.smooth_l1_loss(tx, torch.tensor(y), beta=0.3),
          [fx], [tx])  # ours: (input, target, reduction, beta)
    # multinomial's generator by position: the same generator state gives the same draw
    p = flow.tensor([[0.1, 0.2, 0.3, 0.4]])
    g = flow.Generator()
    g.manual_seed(3)
    a = C.multinomial(p, 5, True, g)
    g.manual_seed(3)
    b = C.multinomial(p, 5, True, generator=g)
    assert a.tolist() == b.tolist() and a.shape == (1, 5)


def test_trunc_divide_and_scatter_inplace():
    a = np.array([[5.5, -5.5, 7.0]])
    x = flow.tensor(a)
    out = C.trunc_divide(x, 2.0, inplace=True)
    assert out is x
    np.testing.assert_array_equal(x.numpy(), [[2.0, -2.0, 3.0]])
    base = np.zeros((2, 3))
    idx = [[1, 0, 1]]
    src = np.array([[1.0, 2.0, 3.0]])
    ref = torch.tensor(base).scatter(0, torch.tensor(idx), torch.tensor(src))
    x = flow.tensor(base)
    out = C.scatter(x, 0, flow.tensor(idx), flow.tensor(src), inplace=True)
    assert out is x
    np.testing.assert_array_equal(x.numpy(), ref.numpy())
    out = C.scatter(flow.tensor(base), 0, flow.tensor(idx), 4.0, reduce="add", inplace=False)
    np.testing.assert_array_equal(out.numpy(), torch.tensor(base).scatter(0, torch.tensor(idx), 4.0, reduce="add").numpy())
    x = flow.tensor(base)
    assert C.scatter(x, 0, flow.tensor(idx), 4.0, inplace=True) is x
    np.testing.assert_array_equal(x.numpy(), torch.tensor(base).scatter(0, torch.tensor(idx), 4.0).numpy())


def test_argument_kinds_numpy_scalars_and_one_element_tensors():
    """The kind tests pick a form without refusing what the conversions accept (arg_fits.h)."""
    a = np.random.default_rng(0).uniform(-2, 2, (3, 4))
    x, t = flow.tensor(a), torch.tensor(a)
    np.testing.assert_allclose(C.leaky_relu(x, np.float32(0.25)).numpy(), TF.leaky_relu(t, 0.25).numpy(), rtol=1e-6)
    np.testing.assert_allclose(C.transpose(x, np.int64(0), flow.tensor(1)).numpy(), a.T)
    assert C.relu(flow.tensor(a), np.bool_(True)).tolist() == np.maximum(a, 0).tolist()
    out = C.matmul(x, x, np.bool_(False), True, flow.tensor(2.0))
    np.testing.assert_allclose(out.numpy(), 2 * a @ a.T, rtol=1e-12)
    # a one-element index tensor as ours' dim, then the form's indices
    idx = flow.tensor([[0], [2], [1]])
    np.testing.assert_allclose(C.gather(x, flow.tensor(1), idx).numpy(), np.take_along_axis(a, idx.numpy(), 1))
    np.testing.assert_allclose(C.gather(x, flow.tensor([1]), 1).numpy(), a[:, [1]])


# ---- further upstream functions composed of table ops ---------------------------------------------


@pytest.mark.parametrize("axis", [1, -1, 0])
def test_bias_add(axis):
    fx, tx = pair((2, 3, 4))
    n = (2, 3, 4)[axis]
    fb, tb = pair((n,), seed=4)
    shape = [1, 1, 1]
    shape[axis] = n
    check(C.bias_add(fx, fb, axis=axis), tx + tb.reshape(shape), [fx, fb], [tx, tb])
    if axis == 1:
        fx, tx = pair((2, 3, 4))
        fb, tb = pair((3,), seed=4)
        check(C.bias_add(fx, fb), tx + tb.reshape(1, 3, 1), [fx, fb], [tx, tb])  # axis=1 by default
    with pytest.raises(RuntimeError, match="bias_add"):
        C.bias_add(fx, flow.ones(5), axis)


def test_reduce_sum_like_reshape_like_square_relu():
    fx, tx = pair((2, 3, 4))
    like = flow.zeros(1, 3, 1, dtype=flow.float64)  # of x's dtype (upstream's TypeError otherwise)
    check(C.reduce_sum_like(fx, like, [0, 2]), tx.sum((0, 2), keepdim=True), [fx], [tx])
    fx, tx = pair((2, 3, 4))
    check(C.reshape_like(fx, flow.zeros(4, 6)), tx.reshape(4, 6), [fx], [tx])
    fx, tx = pair((2, 3, 4))
    check(C.square_relu(fx), torch.relu(tx) ** 2, [fx], [tx])
    with pytest.raises(RuntimeError, match="reduce_sum_like"):
        C.reduce_sum_like(fx, flow.zeros(5, dtype=fx.dtype), [0])


def test_arg_sort():
    a = np.random.default_rng(0).permutation(20).reshape(4, 5).astype(np.float32)
    up = C.arg_sort(flow.tensor(a), "ASCENDING")
    down = C.arg_sort(flow.tensor(a), direction="DESCENDING")
    assert up.dtype == flow.int32
    np.testing.assert_array_equal(up.numpy(), torch.argsort(torch.tensor(a), -1).numpy())
    np.testing.assert_array_equal(down.numpy(), torch.argsort(torch.tensor(a), -1, descending=True).numpy())
    with pytest.raises(RuntimeError, match="arg_sort.*direction"):
        C.arg_sort(flow.tensor(a), "up")


def test_sparse_cross_entropy():
    p = np.random.default_rng(0).dirichlet(np.ones(5), 6)
    fp, tp = flow.tensor(p, requires_grad=True), torch.tensor(p, requires_grad=True)
    fl, tl = ints((6,), 5)
    ref = torch.nn.functional.nll_loss(torch.log(tp), tl, reduction="none")
    check(C.sparse_cross_entropy(fp, fl, 5), ref, [fp], [tp])
    with pytest.raises(RuntimeError, match="sparse_cross_entropy"):
        C.sparse_cross_entropy(fp, fl, 4)


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, -1), (3.0, 0)])
def test_normalize(p, dim):
    fx, tx = pair((3, 4, 2))
    check(C.normalize(fx, p, dim, 1e-12, True), TF.normalize(tx, p, dim), [fx], [tx])
    fx, tx = pair((3, 4, 2))
    check(C.normalize(input=fx, p=p, dim=dim), TF.normalize(tx, p, dim), [fx], [tx])
    z = C.normalize(flow.zeros(2, 3), eps=1e-6)
    assert z.tolist() == [[0.0] * 3] * 2


def test_constant_and_vector_norm():
    c = C.constant([2, 3], 1.5, dtype=flow.float64)
    assert c.dtype == flow.float64 and c.tolist() == [[1.5] * 3] * 2
    c = C.constant((2,), 7, dtype=flow.int32, device="cpu")
    assert c.dtype == flow.int32 and c.tolist() == [7, 7]
    p = flow.placement("cpu", [0])
    g = C.global_constant([2, 2], 3.0, dtype=flow.float32, placement=p, sbp=flow.sbp.broadcast)
    assert g.is_global and g.to_local().tolist() == [[3.0, 3.0]] * 2
    fx, tx = pair((3, 4))
    check(C.vector_norm(fx, 3, [1], True), torch.linalg.vector_norm(tx, 3, (1,), True), [fx], [tx])
    fx, tx = pair((3, 4))
    check(C.vector_norm(fx), torch.linalg.vector_norm(tx), [fx], [tx])


# ---- randint(high, size): upstream's second form ---------------------------------------------------


def test_randint_high_size_form():
    # upstream: randint(Int64 high, Shape size, *, dtype, device, generator, requires_grad), low 0
    g1, g2 = flow.Generator().manual_seed(5), flow.Generator().manual_seed(5)
    a = C.randint(7, (3, 40), generator=g1)
    b = C.randint(0, 7, (3, 40), generator=g2)
    t = torch.randint(7, (3, 40))
    assert a.dtype == flow.int64 and t.dtype == torch.int64 and tuple(a.shape) == tuple(t.shape)
    assert a.tolist() == b.tolist() and 0 <= int(a.min()) and int(a.max()) < 7
    c = C.randint(5, [6], dtype=flow.int32, device=flow.device("cpu"))
    assert c.dtype == flow.int32 and c.device.type == "cpu" and tuple(c.shape) == (6,)
    assert 0 <= int(c.min()) and int(c.max()) < 5
    assert int(C.randint(3, 4, (50,)).min()) == 3  # ours (low, high, size) unchanged
    with pytest.raises(TypeError):
        C.randint(7)
