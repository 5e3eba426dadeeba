"""nn names outside OneFlow's spec against torch: rms_norm / RMSNorm, grid_sample /
affine_grid, fractional max pooling, LPPool3d, TripletMarginWithDistanceLoss, gumbel_softmax /
channel_shuffle / pdist, batch-norm fusion, functional_call, amp.custom_fwd / custom_bwd,
StackDataset, DataParallel."""

import numpy as np
import pytest
import torch

from harness import SHIM, flow
from names_util import close as _close
from nn_util import as_installed_torch_repr

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow's own names")
RNG = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape,norm", [((3, 4, 5), (4, 5)), ((6, 8), (8,)), ((2, 0, 3), (3,)), ((5,), 5)])
@pytest.mark.parametrize("weighted,eps", [(True, None), (False, None), (True, 1e-3)])
def test_rms_norm(dtype, shape, norm, weighted, eps):
    nshape = (norm,) if isinstance(norm, int) else norm
    a = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal(nshape).astype(np.float32)
    t = torch.tensor(a).to(getattr(torch, dtype)).requires_grad_()
    f = flow.tensor(a).to(getattr(flow, dtype)).requires_grad_()
    tw = torch.tensor(w).to(getattr(torch, dtype)).requires_grad_() if weighted else None
    fw = flow.tensor(w).to(getattr(flow, dtype)).requires_grad_() if weighted else None
    yt = torch.nn.functional.rms_norm(t, nshape, tw, eps)  # torch takes no bare int here
    yf = flow.nn.functional.rms_norm(f, norm, fw, eps)
    assert str(yf.dtype).split(".")[-1] == str(yt.dtype).split(".")[-1]
    tol = {"float16": 2e-3, "bfloat16": 1.6e-2}.get(dtype, 1e-5)
    np.testing.assert_allclose(yf.float().detach().numpy(), yt.float().detach().numpy(), rtol=tol, atol=tol)
    g = RNG.standard_normal(shape).astype(np.float32)
    yt.backward(torch.tensor(g).to(yt.dtype)), yf.backward(flow.tensor(g).to(yf.dtype))
    gtol = 10 * tol
    np.testing.assert_allclose(f.grad.float().numpy(), t.grad.float().numpy(), rtol=gtol, atol=gtol)
    if weighted:
        np.testing.assert_allclose(fw.grad.float().numpy(), tw.grad.float().numpy(), rtol=gtol, atol=gtol)


def test_rms_norm_module_and_errors():
    m, tm = flow.nn.RMSNorm([4, 5], eps=1e-6), torch.nn.RMSNorm([4, 5], eps=1e-6)
    assert repr(m) == repr(tm)
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.ones((4, 5), np.float32))
    assert flow.nn.RMSNorm(5, elementwise_affine=False).weight is None
    a = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(m(flow.tensor(a)).detach().numpy(), tm(torch.tensor(a)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(RuntimeError, match="rms_norm"):
        flow.nn.functional.rms_norm(flow.ones(2, 3), (4,))
    with pytest.raises(RuntimeError, match="rms_norm"):
        flow.nn.functional.rms_norm(flow.ones(2, 3), (3,), flow.ones(2))
    with pytest.raises(RuntimeError, match="rms_norm"):
        flow.nn.functional.rms_norm(flow.ones(2, 3, dtype=flow.int64), (3,))


def test_functional_extras():
    F = flow.nn.functional
    x = RNG.standard_normal((2, 6, 3, 3)).astype(np.float32)
    _close(F.channel_shuffle(flow.tensor(x), 3), torch.nn.functional.channel_shuffle(torch.tensor(x), 3))
    _close(flow.nn.ChannelShuffle(2)(flow.tensor(x)), torch.nn.ChannelShuffle(2)(torch.tensor(x)))
    with pytest.raises(RuntimeError):
        F.channel_shuffle(flow.tensor(x), 4)
    r = RNG.standard_normal((5, 3)).astype(np.float32)
    for p in (2, 1, 0.5, float("inf")):
        _close(F.pdist(flow.tensor(r), p), torch.nn.functional.pdist(torch.tensor(r), p), rtol=1e-5)
    got = F.max_pool2d_with_indices(flow.tensor(x), 2)
    want = torch.nn.functional.max_pool2d_with_indices(torch.tensor(x), 2)
    _close(got, want)
    flow.manual_seed(0)
    logits = flow.tensor(RNG.standard_normal((4, 5)).astype(np.float32), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(4), rtol=1e-5)
    hard = F.gumbel_softmax(logits, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(-1) == 1).all()
    hard.sum().backward()  # straight-through: the soft sample's gradient reaches the logits
    assert logits.grad is not None and logits.grad.shape == logits.shape


_GRID_CASES = [(k, mode, pad, align) for k in (2, 3) for mode in ("bilinear", "nearest", "bicubic")
               for pad in ("zeros", "border", "reflection") for align in (False, True)
               if not (mode == "bicubic" and k == 3)]


@pytest.mark.parametrize("k,mode,pad,align", _GRID_CASES)
def test_grid_sample_against_torch(k, mode, pad, align):
    shape = (2, 3, 5, 6) if k == 2 else (2, 2, 4, 5, 3)
    gshape = (2, 4, 7, 2) if k == 2 else (2, 3, 4, 2, 3)
    a = RNG.standard_normal(shape).astype(np.float32)
    g = RNG.uniform(-1.3, 1.3, gshape).astype(np.float32)  # points outside too
    g.reshape(-1)[:4] = [1.0, -1.0, 0.0, 1.0]  # exactly on the edges
    ti, tg = torch.tensor(a, requires_grad=True), torch.tensor(g, requires_grad=True)
    fi, fg = flow.tensor(a, requires_grad=True), flow.tensor(g, requires_grad=True)
    to = torch.nn.functional.grid_sample(ti, tg, mode, pad, align)
    fo = flow.nn.functional.grid_sample(fi, fg, mode, pad, align)
    _close(fo, to, rtol=1e-5, atol=1e-5)
    w = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    (to * torch.tensor(w)).sum().backward()
    (fo * flow.tensor(w)).sum().backward()
    _close(fi.grad, ti.grad, rtol=1e-5, atol=1e-5)
    if mode != "nearest":  # nearest has no grid gradient (PyTorch: zeros)
        _close(fg.grad, tg.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_against_torch(align):
    th = RNG.standard_normal((2, 2, 3)).astype(np.float32)
    for size in ((2, 1, 4, 5), (2, 3, 1, 3), (2, 1, 6, 1)):
        t = torch.tensor(th, requires_grad=True)
        f = flow.tensor(th, requires_grad=True)
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            want = torch.nn.functional.affine_grid(t, size, align)
        got = flow.nn.functional.affine_grid(f, size, align)
        _close(got, want)
        want.sum().backward(), got.sum().backward()
        _close(f.grad, t.grad)
    th3 = RNG.standard_normal((2, 3, 4)).astype(np.float64)
    _close(flow.nn.functional.affine_grid(flow.tensor(th3), (2, 1, 3, 4, 5), align),
           torch.nn.functional.affine_grid(torch.tensor(th3), (2, 1, 3, 4, 5), align))


def test_grid_errors():
    F = flow.nn.functional
    x, g = flow.ones(1, 1, 3, 3), flow.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError):
        F.grid_sample(x, g, mode="area")
    with pytest.raises(ValueError):
        F.grid_sample(x, g, padding_mode="circular")
    with pytest.raises(RuntimeError, match="grid_sampler"):
        F.grid_sample(x, flow.zeros(1, 2, 2, 3))
    with pytest.raises(RuntimeError, match="grid_sampler"):
        F.grid_sample(x, flow.zeros(2, 2, 2, 2))
    with pytest.raises(RuntimeError, match="bicubic"):
        F.grid_sample(flow.ones(1, 1, 2, 2, 2), flow.zeros(1, 1, 1, 1, 3), mode="bicubic")
    with pytest.raises(ValueError, match="affine"):
        F.affine_grid(flow.zeros(1, 3, 3), (1, 1, 2, 2))
    with pytest.raises(ValueError, match="floating"):
        F.affine_grid(flow.zeros(1, 2, 3, dtype=flow.int64), (1, 1, 2, 2))


def test_lp_pool3d_and_triplet_with_distance():
    x = RNG.uniform(0.1, 2.0, (2, 3, 4, 5, 6)).astype(np.float32)
    for p, k, s, ceil in ((2, 2, None, False), (1.5, (2, 3, 2), (1, 2, 2), True), (3, 3, 2, False)):
        t, f = torch.tensor(x, requires_grad=True), flow.tensor(x, requires_grad=True)
        want = torch.nn.LPPool3d(p, k, s, ceil)(t)
        got = flow.nn.LPPool3d(p, k, s, ceil)(f)
        _close(got, want, rtol=1e-5)
        want.sum().backward(), got.sum().backward()
        _close(f.grad, t.grad, rtol=1e-4, atol=1e-5)
    _close(flow.nn.functional.lp_pool3d(flow.tensor(x), 2, 2), torch.nn.functional.lp_pool3d(torch.tensor(x), 2, 2))
    a, p_, n = (RNG.standard_normal((6, 4)).astype(np.float32) for _ in range(3))
    cos = (lambda L: lambda u, v: 1 - L.nn.functional.cosine_similarity(u, v))
    for kw in ({}, {"margin": 0.3, "swap": True}, {"reduction": "none"}, {"reduction": "sum", "distance": True}):
        kw = dict(kw)
        use_cos = kw.pop("distance", False)
        ta, tp, tn = (torch.tensor(v, requires_grad=True) for v in (a, p_, n))
        fa, fp, fn = (flow.tensor(v, requires_grad=True) for v in (a, p_, n))
        want = torch.nn.TripletMarginWithDistanceLoss(distance_function=cos(torch) if use_cos else None, **kw)(ta, tp, tn)
        got = flow.nn.TripletMarginWithDistanceLoss(distance_function=cos(flow) if use_cos else None, **kw)(fa, fp, fn)
        _close(got, want)
        want.sum().backward(), got.sum().backward()
        for g, w in ((fa, ta), (fp, tp), (fn, tn)):
            _close(g.grad, w.grad, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError):
        flow.nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(RuntimeError):
        flow.nn.functional.triplet_margin_with_distance_loss(flow.ones(2, 3), flow.ones(2, 3), flow.ones(3))


def test_conv_and_linear_bn_fusion():
    from oneflow.nn.utils import fuse_conv_bn_eval, fuse_linear_bn_eval
    flow.manual_seed(0)
    for conv, bn, x in ((flow.nn.Conv2d(3, 4, 3, bias=True), flow.nn.BatchNorm2d(4), flow.randn(2, 3, 6, 6)),
                        (flow.nn.Conv2d(3, 4, 3, bias=False), flow.nn.BatchNorm2d(4), flow.randn(2, 3, 6, 6)),
                        (flow.nn.ConvTranspose2d(3, 4, 3), flow.nn.BatchNorm2d(4), flow.randn(2, 3, 5, 5))):
        bn.running_mean.copy_(flow.randn(4)), bn.running_var.copy_(flow.rand(4) + 0.5)
        bn.weight.data.copy_(flow.randn(4)), bn.bias.data.copy_(flow.randn(4))
        conv.eval(), bn.eval()
        fused = fuse_conv_bn_eval(conv, bn, transpose=isinstance(conv, flow.nn.ConvTranspose2d))
        np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    lin, bn1 = flow.nn.Linear(5, 3), flow.nn.BatchNorm1d(3)
    bn1.running_mean.copy_(flow.randn(3)), bn1.running_var.copy_(flow.rand(3) + 0.5)
    lin.eval(), bn1.eval()
    x = flow.randn(4, 5)
    np.testing.assert_allclose(fuse_linear_bn_eval(lin, bn1)(x).detach().numpy(), bn1(lin(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError):
        fuse_linear_bn_eval(flow.nn.Linear(5, 3), bn1)  # training mode


def test_functional_call_and_skip_init():
    flow.manual_seed(0)
    m = flow.nn.Sequential(flow.nn.Linear(3, 4), flow.nn.BatchNorm1d(4))
    x = flow.randn(5, 3)
    w = flow.randn(4, 3, requires_grad=True)
    out = flow.func.functional_call(m, {"0.weight": w}, (x,))
    want = m[1](flow.nn.functional.linear(x, w, m[0].bias))
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert m[0].weight is not w and tuple(m[0].weight.shape) == (4, 3)  # restored
    out.sum().backward()
    assert w.grad is not None and m[0].bias.grad is not None
    m.eval()
    rm = flow.full((4,), 2.0)
    a = flow.nn.utils.stateless.functional_call(m, ({"1.running_mean": rm}, {}), x)
    b = (m[0](x) - 2.0) / flow.sqrt(m[1].running_var + m[1].eps) * m[1].weight + m[1].bias
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="missing"):
        flow.func.functional_call(m, {"0.weight": w}, (x,), strict=True)
    with pytest.raises(AttributeError):
        flow.func.functional_call(m, {"0.nothing": w}, (x,))
    assert float(m[0].weight.sum()) == float(m[0].weight.sum())  # unchanged after the error
    lin = flow.nn.utils.skip_init(flow.nn.Linear, 6, 2)
    assert tuple(lin.weight.shape) == (2, 6)


@pytest.mark.parametrize("kw", [dict(kernel_size=3, output_size=(5, 4)), dict(kernel_size=(2, 3), output_ratio=(0.5, 0.5)),
                                dict(kernel_size=2, output_size=1), dict(kernel_size=3, output_size=(9, 7))])
def test_fractional_max_pool2d(kw):
    x = RNG.standard_normal((2, 3, 11, 9)).astype(np.float32)
    x[0, 0, 3, 3] = np.nan  # NaN wins its windows, as in PyTorch
    u = RNG.uniform(0, 1, (2, 3, 2)).astype(np.float32)
    tf, ff = torch.tensor(x, requires_grad=True), flow.tensor(x, requires_grad=True)
    to, ti = torch.nn.functional.fractional_max_pool2d(tf, return_indices=True, _random_samples=torch.tensor(u), **kw)
    fo, fi = flow.nn.functional.fractional_max_pool2d(ff, return_indices=True, _random_samples=flow.tensor(u), **kw)
    np.testing.assert_array_equal(fo.detach().numpy(), to.detach().numpy())
    np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    g = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    (to * torch.tensor(g)).sum().backward(), (fo * flow.tensor(g)).sum().backward()
    np.testing.assert_allclose(ff.grad.numpy(), tf.grad.numpy(), rtol=1e-6)
    m = flow.nn.FractionalMaxPool2d(return_indices=True, _random_samples=flow.tensor(u), **kw)
    mo, mi = m(flow.tensor(x[0]).unsqueeze(0).expand(2, 3, 11, 9))
    assert tuple(mo.shape) == tuple(to.shape)


def test_fractional_max_pool3d_and_errors():
    x = RNG.standard_normal((1, 2, 7, 8, 9)).astype(np.float32)
    u = RNG.uniform(0, 1, (1, 2, 3)).astype(np.float32)
    to, ti = torch.nn.functional.fractional_max_pool3d(torch.tensor(x), 2, output_size=(3, 4, 5), return_indices=True,
                                                       _random_samples=torch.tensor(u))
    fo, fi = flow.nn.functional.fractional_max_pool3d(flow.tensor(x), 2, output_size=(3, 4, 5), return_indices=True,
                                                      _random_samples=flow.tensor(u))
    np.testing.assert_array_equal(fo.numpy(), to.numpy())
    np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    flow.manual_seed(0)
    out = flow.nn.FractionalMaxPool3d(2, output_ratio=0.5)(flow.tensor(x[0]))  # unbatched, random samples
    assert tuple(out.shape) == (2, 3, 4, 4)
    with pytest.raises(ValueError):
        flow.nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError):
        flow.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError):
        flow.nn.functional.fractional_max_pool2d(flow.ones(1, 1, 4, 4), 3, output_size=3)


def test_amp_custom_fwd_bwd_stack_dataset_data_parallel():
    seen = {}

    class Scaled(flow.autograd.Function):
        @staticmethod
        @flow.amp.custom_fwd(device_type="cpu", cast_inputs=flow.float32)
        def forward(ctx, x):
            seen["fwd"] = (x.dtype, flow.is_autocast_enabled("cpu"))
            return x * 2

        @staticmethod
        @flow.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = flow.is_autocast_enabled("cpu")
            return g * 2

    x = flow.ones(3, dtype=flow.bfloat16, requires_grad=True)
    with flow.autocast("cpu", dtype=flow.bfloat16):
        y = Scaled.apply(x)
    assert seen["fwd"] == (flow.float32, False) and y.dtype == flow.float32
    y.sum().backward()
    assert seen["bwd"] is False and x.grad is not None  # the forward ran with autocast off

    class Plain(flow.autograd.Function):
        @staticmethod
        @flow.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            return x * 1

        @staticmethod
        @flow.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd2"] = flow.is_autocast_enabled("cpu")
            return g

    x2 = flow.ones(3, requires_grad=True)
    with flow.autocast("cpu", dtype=flow.bfloat16):
        out = Plain.apply(x2)
    out.sum().backward()
    assert seen["bwd2"] is True  # backward under the forward's autocast state
    assert callable(flow.cuda.amp.custom_fwd) and callable(flow.cuda.amp.custom_bwd)

    ds = flow.utils.data.StackDataset(flow.arange(4), [10, 11, 12, 13])
    assert len(ds) == 4 and ds[2][1] == 12 and int(ds[2][0]) == 2
    dd = flow.utils.data.StackDataset(a=[1, 2], b=["x", "y"])
    assert dd[1] == {"a": 2, "b": "y"}
    with pytest.raises(ValueError):
        flow.utils.data.StackDataset([1], [1, 2])
    m = flow.nn.Linear(3, 2)
    dp = flow.nn.DataParallel(m)
    assert dp.module is m and list(dp.state_dict()) == ["module.weight", "module.bias"]
    _close(dp(flow.ones(4, 3)), m(flow.ones(4, 3)))
    with pytest.raises(NotImplementedError):
        flow.nn.DataParallel(m, device_ids=[0, 1])
    assert isinstance(flow.nn.NLLLoss2d(), flow.nn.NLLLoss)


# ---------------------------------------------------------------------------------------------
# SyncBatchNorm (one process: BatchNorm's statistics, as PyTorch without a process group)


def _bn_net(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Conv2d(3, 4, 3), L.nn.BatchNorm2d(4), L.nn.ReLU(),
                           L.nn.Sequential(L.nn.Flatten(), L.nn.Linear(36, 5), L.nn.BatchNorm1d(5, momentum=None)))


def test_sync_batchnorm_convert_and_train_like_batchnorm():
    x = np.random.default_rng(0).standard_normal((6, 3, 5, 5)).astype(np.float32)
    f, t = _bn_net(flow), _bn_net(torch)
    f.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    bn_weight = f[1].weight
    fs = flow.nn.SyncBatchNorm.convert_sync_batchnorm(f)
    ts = torch.nn.SyncBatchNorm.convert_sync_batchnorm(t)
    assert as_installed_torch_repr(repr(fs)) == repr(ts)
    assert type(fs[1]) is flow.nn.SyncBatchNorm and fs[1].weight is bn_weight  # the same parameters
    assert list(fs.state_dict()) == list(ts.state_dict())
    for _ in range(2):
        yf, yt = fs(flow.tensor(x)), ts(torch.tensor(x))
        np.testing.assert_allclose(yf.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
        yf.pow(2).sum().backward()
        yt.pow(2).sum().backward()
    np.testing.assert_allclose(fs[1].weight.grad.numpy(), ts[1].weight.grad.numpy(), rtol=1e-4, atol=1e-4)
    for k, v in ts.state_dict().items():
        np.testing.assert_allclose(fs.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6)
    fs.eval(), ts.eval()
    np.testing.assert_allclose(fs(flow.tensor(x)).detach().numpy(), ts(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_sync_batchnorm_module_and_errors():
    m, tm = flow.nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    assert as_installed_torch_repr(repr(m)) == repr(tm)
    x = np.random.default_rng(1).standard_normal((4, 3, 2, 2, 2)).astype(np.float32)  # any (N, C, *)
    np.testing.assert_allclose(m(flow.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="at least 2D"):
        m(flow.ones(3))
    with pytest.raises(ValueError, match="non-zero"):
        flow.nn.SyncBatchNorm(0)(flow.ones(2, 0, 3))
