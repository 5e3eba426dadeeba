"""The nn.functional-family modules (activations, losses, dropout, embeddings, padding,
resampling, distances) against torch's: forward and backward with copied parameters (inputs' and
parameters' gradients), reprs, state_dict keys and round trips, train/eval behaviour, and the
constructor checks."""

import numpy as np
import pytest
import torch

from harness import assert_same_repr, flow

nn, tnn = flow.nn, torch.nn
RNG = np.random.default_rng(0)


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.numpy()


def _close(a, b, tol=1e-5, what=""):
    assert tuple(a.shape) == tuple(b.shape), f"{what}: {tuple(a.shape)} != {tuple(b.shape)}"
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol, err_msg=what)


def _f32(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


class In:
    """One input of a case: an array (differentiable when `grad`) or a fixed value."""

    def __init__(self, a, grad=True, dtype=None):
        self.a, self.grad, self.dtype = a, grad, dtype

    def pair(self):
        if not isinstance(self.a, np.ndarray):
            return self.a, self.a
        if self.dtype == "int64":
            return flow.tensor(self.a, dtype=flow.int64), torch.tensor(self.a, dtype=torch.int64)
        g = self.grad
        return flow.tensor(self.a, requires_grad=g), torch.tensor(self.a, requires_grad=g)


def _run(cls, args, kwargs, inputs, tol=1e-5, train=True):
    torch.manual_seed(0)
    tm = getattr(tnn, cls)(*args, **kwargs)
    fm = getattr(nn, cls)(*args, **kwargs)
    assert repr(fm) == repr(tm).replace("torch.", "oneflow.")
    tstate = tm.state_dict()
    assert list(fm.state_dict().keys()) == list(tstate.keys())
    if tstate:
        fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tstate.items()})
    fm.train(train)
    tm.train(train)
    pairs = [i.pair() for i in inputs]
    fy, ty = fm(*[p[0] for p in pairs]), tm(*[p[1] for p in pairs])
    _close(fy, ty, tol, f"{cls} output")
    if not ty.requires_grad:
        return
    g = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
    fy.backward(flow.tensor(g))
    ty.backward(torch.tensor(g))
    for k, ((fx, tx), i) in enumerate(zip(pairs, inputs)):
        if isinstance(i.a, np.ndarray) and i.grad and i.dtype is None:
            _close(fx.grad, tx.grad, tol, f"{cls} grad of input {k}")
    for (name, fp), (_, tp) in zip(fm.named_parameters(), tm.named_parameters()):
        if tp.grad is not None:
            _close(fp.grad, tp.grad, tol, f"{cls} grad of {name}")


X = lambda *s: In(_f32(*s))  # noqa: E731

ACTIVATIONS = [
    ("ReLU6", (), {}), ("ReLU6", (), {"inplace": True}), ("Hardtanh", (-0.5, 1.5), {}),
    ("ELU", (), {"alpha": 0.7}), ("SELU", (), {}), ("CELU", (), {"alpha": 1.3}),
    ("Hardsigmoid", (), {}), ("Hardswish", (), {}), ("Hardshrink", (), {"lambd": 0.3}),
    ("Softshrink", (0.4,), {}), ("Tanhshrink", (), {}), ("Softsign", (), {}),
    ("Softplus", (), {"beta": 2.0, "threshold": 3.0}), ("Mish", (), {}), ("LogSigmoid", (), {}),
    ("Threshold", (0.1, 20.0), {}), ("PReLU", (), {}), ("PReLU", (3,), {"init": 0.1}),
    ("GLU", (), {}), ("GLU", (2,), {}), ("LeakyReLU", (0.2,), {}), ("Softmax", (1,), {}),
    ("LogSoftmax", (-1,), {}), ("Softmin", (0,), {}), ("Softmax2d", (), {}), ("ReLU", (), {}),
    ("GELU", (), {"approximate": "tanh"}), ("SiLU", (), {}), ("Sigmoid", (), {}), ("Tanh", (), {}),
    ("RReLU", (0.1, 0.3), {}),
]


@pytest.mark.parametrize("cls,args,kwargs", ACTIVATIONS, ids=[f"{c[0]}-{i}" for i, c in enumerate(ACTIVATIONS)])
def test_activation_modules(cls, args, kwargs):
    # inplace modules act on a non-leaf (x * 1); RReLU in eval mode is deterministic.
    if kwargs.get("inplace"):
        a = _f32(2, 3, 4, 6)
        fx, tx = flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        fm, tm = getattr(nn, cls)(*args, **kwargs), getattr(tnn, cls)(*args, **kwargs)
        assert_same_repr(fm, tm)
        fy, ty = fm(fx * 1), tm(tx * 1)
        _close(fy, ty)
        fy.sum().backward()
        ty.sum().backward()
        _close(fx.grad, tx.grad)
        return
    _run(cls, args, kwargs, [X(2, 3, 4, 6)], train=cls != "RReLU")


def _cls_target(n, c, *extra):
    return In(RNG.integers(0, c, size=(n,) + extra), dtype="int64")


def _signs(*s):
    return In(np.where(RNG.random(s) < 0.5, -1.0, 1.0).astype(np.float32), grad=False)


LOSSES = [
    ("L1Loss", (), {}, lambda: [X(3, 4), X(3, 4)]),
    ("MSELoss", (), {"reduction": "sum"}, lambda: [X(3, 4), X(3, 4)]),
    ("SmoothL1Loss", (), {"beta": 0.5}, lambda: [X(3, 4), X(3, 4)]),
    ("HuberLoss", (), {"delta": 0.7, "reduction": "none"}, lambda: [X(3, 4), X(3, 4)]),
    ("SoftMarginLoss", (), {}, lambda: [X(3, 4), _signs(3, 4)]),
    ("KLDivLoss", (), {"reduction": "batchmean", "log_target": True}, lambda: [X(3, 4), X(3, 4)]),
    ("NLLLoss", (), {"ignore_index": 1}, lambda: [X(5, 4), _cls_target(5, 4)]),
    ("NLLLoss", (), {"weight": torch.tensor([1.0, 2.0, 0.5, 1.5])}, lambda: [X(2, 4, 3), _cls_target(2, 4, 3)]),
    ("CrossEntropyLoss", (), {"label_smoothing": 0.1}, lambda: [X(5, 4), _cls_target(5, 4)]),
    ("CrossEntropyLoss", (), {"weight": torch.tensor([1.0, 2.0, 0.5, 1.5]), "ignore_index": 2},
     lambda: [X(5, 4), _cls_target(5, 4)]),
    ("CrossEntropyLoss", (), {}, lambda: [X(5, 4), In(_f32(5, 4, lo=0.0, hi=1.0))]),
    ("BCELoss", (), {}, lambda: [In(_f32(3, 4, lo=0.05, hi=0.95)), In(_f32(3, 4, lo=0.0, hi=1.0))]),
    ("BCEWithLogitsLoss", (), {"pos_weight": torch.tensor([1.0, 2.0, 3.0, 0.5])},
     lambda: [X(3, 4), In(_f32(3, 4, lo=0.0, hi=1.0))]),
    ("MultiLabelSoftMarginLoss", (), {}, lambda: [X(3, 4), In((RNG.random((3, 4)) < 0.5).astype(np.float32), grad=False)]),
    ("MultiMarginLoss", (), {"p": 2, "margin": 0.5}, lambda: [X(5, 4), _cls_target(5, 4)]),
    ("MultiLabelMarginLoss", (), {}, lambda: [X(2, 4), In(np.array([[3, 0, -1, 1], [1, 2, 3, -1]]), dtype="int64")]),
    ("MarginRankingLoss", (), {"margin": 0.2}, lambda: [X(6), X(6), _signs(6)]),
    ("HingeEmbeddingLoss", (), {"margin": 0.5}, lambda: [X(3, 4), _signs(3, 4)]),
    ("CosineEmbeddingLoss", (), {"margin": 0.1}, lambda: [X(5, 4), X(5, 4), _signs(5)]),
    ("TripletMarginLoss", (), {"margin": 0.5, "swap": True}, lambda: [X(5, 4), X(5, 4), X(5, 4)]),
    ("PoissonNLLLoss", (), {"full": True, "log_input": False},
     lambda: [In(_f32(3, 4, lo=0.1, hi=2.0)), In(_f32(3, 4, lo=0.0, hi=3.0), grad=False)]),
    ("GaussianNLLLoss", (), {}, lambda: [X(3, 4), X(3, 4), In(_f32(3, 4, lo=0.1, hi=1.0))]),
]


@pytest.mark.parametrize("cls,args,kwargs,inputs", LOSSES, ids=[f"{c[0]}-{i}" for i, c in enumerate(LOSSES)])
def test_loss_modules(cls, args, kwargs, inputs):
    kw_f = {k: flow.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    torch.manual_seed(0)
    tm, fm = getattr(tnn, cls)(*args, **kwargs), getattr(nn, cls)(*args, **kw_f)
    assert_same_repr(fm, tm)
    assert list(fm.state_dict().keys()) == list(tm.state_dict().keys())
    ins = inputs()
    pairs = [i.pair() for i in ins]
    fy, ty = fm(*[p[0] for p in pairs]), tm(*[p[1] for p in pairs])
    _close(fy, ty, 1e-5, "loss")
    g = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
    fy.backward(flow.tensor(g))
    ty.backward(torch.tensor(g))
    for (fx, tx), i in zip(pairs, ins):
        if isinstance(i.a, np.ndarray) and i.grad and i.dtype is None:
            _close(fx.grad, tx.grad, 1e-5, "grad")


def test_ctc_loss_module():
    T, N, C, S = 8, 2, 5, 3
    lp = torch.randn(T, N, C).log_softmax(2).detach().numpy()
    targets = np.array([[1, 2, 2], [3, 1, 0]])
    fm, tm = nn.CTCLoss(blank=0, zero_infinity=True), tnn.CTCLoss(blank=0, zero_infinity=True)
    assert_same_repr(fm, tm)
    fx, tx = flow.tensor(lp, requires_grad=True), torch.tensor(lp, requires_grad=True)
    fy = fm(fx, flow.tensor(targets), [8, 6], [3, 2])
    ty = tm(tx, torch.tensor(targets), [8, 6], [3, 2])
    _close(fy, ty, 1e-5)
    fy.backward()
    ty.backward()
    _close(fx.grad, tx.grad, 1e-5)


def test_loss_legacy_size_average():
    with pytest.warns(UserWarning):
        fm = nn.L1Loss(size_average=False)
    assert fm.reduction == "sum"


def test_loss_module_weight_is_buffer():
    w = flow.tensor([1.0, 2.0, 3.0])
    m = nn.CrossEntropyLoss(weight=w)
    assert list(m.state_dict()) == ["weight"]
    m2 = nn.CrossEntropyLoss(weight=flow.zeros(3))
    m2.load_state_dict(m.state_dict())
    _close(m2.weight, torch.tensor([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("cls,shape", [("Dropout", (4, 5)), ("Dropout1d", (2, 3, 4)), ("Dropout2d", (2, 3, 4, 5)),
                                       ("Dropout3d", (2, 3, 2, 2, 2)), ("AlphaDropout", (4, 5)),
                                       ("FeatureAlphaDropout", (2, 3, 4, 5))])
def test_dropout_modules(cls, shape):
    fm, tm = getattr(nn, cls)(0.3), getattr(tnn, cls)(0.3)
    assert_same_repr(fm, tm)
    assert repr(getattr(nn, cls)(p=0.2, inplace=True)) == repr(getattr(tnn, cls)(p=0.2, inplace=True))
    x = _f32(*shape)
    fm.eval()
    _close(fm(flow.tensor(x)), torch.tensor(x))  # identity in eval mode
    fm.train()
    y = fm(flow.tensor(x)).numpy()
    assert y.shape == x.shape
    p0 = getattr(nn, cls)(0.0)
    _close(p0(flow.tensor(x)), torch.tensor(x))
    with pytest.raises(ValueError, match="dropout probability"):
        getattr(nn, cls)(1.5)


def test_dropout_module_statistics_and_grad():
    flow.manual_seed(1)
    m = nn.Dropout(0.25)
    x = flow.ones(200, 500, requires_grad=True)
    y = m(x)
    kept = (y.numpy() != 0)
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.75, rtol=1e-6)
    flow.manual_seed(1)
    np.testing.assert_array_equal(m(flow.ones(200, 500)).numpy(), y.detach().numpy())


def test_dropout2d_drops_whole_channels():
    flow.manual_seed(0)
    y = nn.Dropout2d(0.5)(flow.ones(8, 16, 3, 3)).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1)).all()


EMBEDDINGS = [
    ("Embedding", (10, 3), {}), ("Embedding", (10, 3), {"padding_idx": 2}),
    ("Embedding", (10, 3), {"padding_idx": -1, "scale_grad_by_freq": True}),
    ("Embedding", (10, 3), {"max_norm": 1.0}),
]


@pytest.mark.parametrize("cls,args,kwargs", EMBEDDINGS, ids=[f"{c[0]}-{i}" for i in range(len(EMBEDDINGS)) for c in [EMBEDDINGS[i]]])
def test_embedding_modules(cls, args, kwargs):
    idx = RNG.integers(0, 10, size=(4, 5))
    idx[0, :3] = 2
    _run(cls, args, kwargs, [In(idx, dtype="int64")])


def test_embedding_padding_row_zero_and_repr():
    m = nn.Embedding(6, 4, padding_idx=1, max_norm=2.0, norm_type=1.0, sparse=True)
    t = tnn.Embedding(6, 4, padding_idx=1, max_norm=2.0, norm_type=1.0, sparse=True)
    assert_same_repr(m, t)
    assert float(m.weight[1].abs().sum().item()) == 0.0


def test_embedding_from_pretrained():
    w = _f32(5, 3)
    fm = nn.Embedding.from_pretrained(flow.tensor(w), padding_idx=0)
    tm = tnn.Embedding.from_pretrained(torch.tensor(w), padding_idx=0)
    assert_same_repr(fm, tm)
    assert not fm.weight.requires_grad
    idx = [[0, 4], [3, 3]]
    _close(fm(flow.tensor(idx)), tm(torch.tensor(idx)))
    fm2 = nn.Embedding.from_pretrained(flow.tensor(w), freeze=False)
    assert fm2.weight.requires_grad
    # PyTorch's modules check these with `assert` (AssertionError, its texts)
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(flow.tensor(_f32(5)))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=7)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_module(mode):
    torch.manual_seed(0)
    tm = tnn.EmbeddingBag(10, 3, mode=mode)
    fm = nn.EmbeddingBag(10, 3, mode=mode)
    assert_same_repr(fm, tm)
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    idx, off = [1, 2, 4, 5, 4, 3, 2, 9], [0, 3, 3, 6]
    fy = fm(flow.tensor(idx), flow.tensor(off))
    ty = tm(torch.tensor(idx), torch.tensor(off))
    _close(fy, ty)
    g = _f32(*ty.shape)
    fy.backward(flow.tensor(g))
    ty.backward(torch.tensor(g))
    _close(fm.weight.grad, tm.weight.grad)
    # 2-D input: fixed-length bags; per_sample_weights in sum mode
    idx2 = [[1, 2, 3], [4, 4, 0]]
    _close(fm(flow.tensor(idx2)), tm(torch.tensor(idx2)))
    if mode == "sum":
        w = _f32(2, 3)
        _close(fm(flow.tensor(idx2), per_sample_weights=flow.tensor(w)),
               tm(torch.tensor(idx2), per_sample_weights=torch.tensor(w)))


PADS = [
    ("ConstantPad1d", (2, 1.5), (2, 3, 4)), ("ConstantPad1d", ((1, 3), -1.0), (3, 4)),
    ("ConstantPad2d", ((1, 0, 2, 1), 0.5), (2, 3, 4, 5)), ("ConstantPad3d", (1, 2.0), (1, 2, 3, 3, 2)),
    ("ZeroPad1d", ((1, 2),), (2, 3, 4)), ("ZeroPad2d", (2,), (1, 2, 3, 4)), ("ZeroPad3d", (1,), (1, 2, 2, 2, 2)),
    ("ReflectionPad1d", (2,), (2, 3, 5)), ("ReflectionPad2d", ((1, 2, 2, 0),), (2, 3, 4, 5)),
    ("ReflectionPad3d", (1,), (1, 2, 3, 3, 3)), ("ReplicationPad1d", ((3, 1),), (2, 3, 4)),
    ("ReplicationPad2d", (2,), (3, 4, 5)), ("ReplicationPad3d", ((1, 0, 2, 1, 0, 2),), (1, 2, 3, 3, 3)),
    ("CircularPad1d", (2,), (2, 3, 4)), ("CircularPad2d", ((1, 2, 0, 3),), (1, 2, 4, 5)),
    ("CircularPad3d", (1,), (1, 2, 3, 3, 3)),
]


@pytest.mark.parametrize("cls,args,shape", PADS, ids=[f"{c[0]}-{i}" for i, c in enumerate(PADS)])
def test_padding_modules(cls, args, shape):
    _run(cls, args, {}, [X(*shape)])


def test_circular_pad_module_dims():
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        nn.CircularPad2d(1)(flow.zeros(4, 4))


RESAMPLE = [
    ("Upsample", (), {"scale_factor": 2, "mode": "nearest"}, (1, 2, 3, 4)),
    ("Upsample", (), {"size": (5, 7), "mode": "bilinear", "align_corners": False}, (2, 2, 3, 4)),
    ("Upsample", (), {"scale_factor": (1.5, 2.0), "mode": "bicubic", "align_corners": True}, (1, 2, 3, 4)),
    ("Upsample", (), {"size": 7, "mode": "linear"}, (2, 3, 4)),
    ("Upsample", (), {"scale_factor": 2, "mode": "trilinear"}, (1, 2, 2, 3, 2)),
    ("Upsample", (), {"scale_factor": 1.7, "mode": "nearest-exact", "recompute_scale_factor": True}, (1, 2, 3, 4)),
    ("UpsamplingNearest2d", (), {"scale_factor": 3}, (1, 2, 3, 2)),
    ("UpsamplingBilinear2d", (), {"size": (4, 6)}, (1, 2, 3, 2)),
    ("Fold", ((4, 5), 2), {}, (2, 12, 12)),
    ("Fold", ((5, 6), (2, 3)), {"stride": (1, 2), "padding": 1, "dilation": (2, 1)}, (1, 12, 15)),
    ("Unfold", (2,), {}, (2, 3, 4, 5)),
    ("Unfold", ((2, 3),), {"stride": 2, "padding": (1, 0), "dilation": (1, 2)}, (1, 2, 5, 7)),
    ("PixelShuffle", (2,), {}, (1, 8, 3, 2)),
    ("PixelUnshuffle", (2,), {}, (2, 3, 4, 6)),
]


@pytest.mark.parametrize("cls,args,kwargs,shape", RESAMPLE, ids=[f"{c[0]}-{i}" for i, c in enumerate(RESAMPLE)])
def test_resample_modules(cls, args, kwargs, shape):
    _run(cls, args, kwargs, [X(*shape)])


@pytest.mark.parametrize("cls,kwargs", [("CosineSimilarity", {}), ("CosineSimilarity", {"dim": 0, "eps": 1e-3}),
                                        ("PairwiseDistance", {}), ("PairwiseDistance", {"p": 1.0, "keepdim": True})])
def test_distance_modules(cls, kwargs):
    _run(cls, (), kwargs, [X(4, 5), X(4, 5)])


def test_ctc_gradient_through_log_softmax_matches_finite_differences():
    """ctc_loss's gradient (PyTorch's definition: with respect to the logits behind normalised
    log_probs) checked independently of torch: d loss(log_softmax(z)) / dz by central differences."""
    rng = np.random.default_rng(3)
    z0 = rng.standard_normal((5, 2, 4))
    targets, il, tl = flow.tensor([[1, 2], [3, 3]]), [5, 4], [2, 2]

    def loss(z):
        return nn.functional.ctc_loss(z.log_softmax(2), targets, il, tl, reduction="sum")

    z = flow.tensor(z0, requires_grad=True)
    loss(z).backward()
    num = np.zeros_like(z0)
    h = 1e-6
    for i in np.ndindex(z0.shape):
        zp, zm = z0.copy(), z0.copy()
        zp[i] += h
        zm[i] -= h
        num[i] = (loss(flow.tensor(zp)).item() - loss(flow.tensor(zm)).item()) / (2 * h)
    np.testing.assert_allclose(z.grad.numpy(), num, rtol=1e-5, atol=1e-7)
