"""nn.functional.linear_cross_entropy / nn.LinearCrossEntropyLoss against torch 2.13's: the
reference path and the chunked one (Note [Chunked linear cross entropy]), losses and gradients
of input, weight and bias, over reductions, chunkings, class weights, ignored rows, unbatched and
16-bit input, K-dimensional heads, probability targets, and the errors."""
import itertools
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow

RNG = np.random.default_rng(0)
N, IN, C = 37, 8, 50
X = RNG.standard_normal((N, IN)).astype(np.float32)
W = RNG.standard_normal((C, IN)).astype(np.float32)
B = RNG.standard_normal(C).astype(np.float32)
T = RNG.integers(0, C, N)
T[[3, 20]] = -100
CW = RNG.uniform(0.5, 2.0, C).astype(np.float32)
GN = RNG.standard_normal(N).astype(np.float32)
# The tests that call torch's own linear_cross_entropy need the reference release (2.13; the GPU
# machine's PyTorch 2.11 predates it); the others compare with independent computations.
needs_reference = pytest.mark.skipif(not hasattr(torch.nn, "LinearCrossEntropyLoss"),
                                     reason=f"PyTorch {torch.__version__} has no linear_cross_entropy to compare with")


def _run(lib, x, w, t, *, bias=None, weight=None, reduction="mean", options=None, grad=None, dtype=None, **kw):
    cast = (lambda a: lib.tensor(a, dtype=getattr(lib, dtype))) if dtype else lib.tensor
    xt, wt = cast(x).requires_grad_(), cast(w).requires_grad_()
    bt = None if bias is None else cast(bias).requires_grad_()
    opts = None if options is None else lib.nn.LinearCrossEntropyOptions(**options)
    loss = lib.nn.functional.linear_cross_entropy(
        xt, wt, lib.tensor(t), linear_bias=bt, weight=None if weight is None else lib.tensor(weight),
        reduction=reduction, options=opts, **kw)
    loss.backward(lib.tensor(grad) if reduction == "none" else lib.tensor(1.7, dtype=loss.dtype))
    out = [loss, xt.grad, wt.grad] + ([bt.grad] if bt is not None else [])
    return [o.detach().float().numpy() for o in out]


def _compare(got, want, tol=1e-5, what=""):
    for k, (g, w) in enumerate(zip(got, want)):
        scale = max(np.abs(w).max(initial=0.0), 1.0)
        assert np.abs(g - w).max(initial=0.0) <= tol * scale, f"{what} output {k}: {np.abs(g - w).max()}"


OPTIONS = [None, dict(batch_chunk_size=8), dict(), dict(chunking_method="aspect_ratio:4"),
           dict(chunking_method=None), dict(batch_chunk_size=1, chunking_method=None)]


@needs_reference
@pytest.mark.parametrize("reduction,options,bias,weighted", list(itertools.product(
    ["mean", "sum", "none"], OPTIONS, [True, False], [True, False])))
def test_against_torch(reduction, options, bias, weighted):
    kw = dict(bias=B if bias else None, weight=CW if weighted else None, reduction=reduction, options=options,
              grad=GN)
    _compare(_run(flow, X, W, T, **kw), _run(torch, X, W, T, **kw), what=f"{reduction} {options}")


@needs_reference
@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("options", [None, dict(batch_chunk_size=4)])
def test_unbatched_input(reduction, options):
    kw = dict(bias=B, reduction=reduction, options=options, grad=np.float32(0.6))
    _compare(_run(flow, X[0], W, T[0], **kw), _run(torch, X[0], W, T[0], **kw))


@needs_reference
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16bit_input_accumulates_in_float32(dtype):
    kw = dict(bias=B, options=dict(batch_chunk_size=16), dtype=dtype)
    got = _run(flow, X, W, T, **kw)
    want = _run(torch, X.astype(np.float64), W.astype(np.float64), T, bias=B.astype(np.float64),
                options=dict(batch_chunk_size=16))  # the exact values, from float64
    _compare(got, want, tol=2e-2, what=dtype)


@needs_reference
def test_label_smoothing_warns_and_takes_the_reference_path():
    kw = dict(bias=B, options=dict(batch_chunk_size=8), label_smoothing=0.1)
    with pytest.warns(UserWarning, match="options.*ignored"):
        got = _run(flow, X, W, T, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare(got, _run(torch, X, W, T, **kw))


@needs_reference
def test_probability_targets():
    p = RNG.dirichlet(np.ones(C), N).astype(np.float32)
    _compare(_run(flow, X, W, p, bias=B), _run(torch, X, W, p, bias=B))


@needs_reference
def test_module_k_dimensional_head():
    fm = flow.nn.LinearCrossEntropyLoss(IN, 5, out_features=(3,), bias=True, weight=flow.tensor(CW[:5]))
    tm = torch.nn.LinearCrossEntropyLoss(IN, 5, out_features=(3,), bias=True, weight=torch.tensor(CW[:5]))
    assert list(fm.state_dict()) == list(tm.state_dict()) == ["weight", "linear.weight", "linear.bias"]
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in fm.state_dict().items()})
    assert repr(fm).replace("oneflow", "torch") == repr(tm)
    t = RNG.integers(0, 5, (N, 3))
    fl, tl = fm(flow.tensor(X), flow.tensor(t)), tm(torch.tensor(X), torch.tensor(t))
    fl.backward(), tl.backward()
    _compare([fl.detach().numpy(), fm.linear.weight.grad.numpy(), fm.linear.bias.grad.numpy()],
             [tl.detach().numpy(), tm.linear.weight.grad.numpy(), tm.linear.bias.grad.numpy()])


def test_chunked_module_trains_like_reference():
    flow.manual_seed(0)
    m = flow.nn.LinearCrossEntropyLoss(IN, C, bias=True, options=flow.nn.LinearCrossEntropyOptions(batch_chunk_size=8))
    ref = flow.nn.LinearCrossEntropyLoss(IN, C, bias=True)
    ref.load_state_dict(m.state_dict())
    for mod in (m, ref):
        opt = flow.optim.SGD(mod.parameters(), lr=0.5)
        for _ in range(5):
            opt.zero_grad()
            mod(flow.tensor(X), flow.tensor(T)).backward()
            opt.step()
    assert np.allclose(m.linear.weight.detach().numpy(), ref.linear.weight.detach().numpy(), atol=1e-5)


def test_retain_graph_and_all_rows_ignored():
    x = flow.tensor(X, requires_grad=True)
    loss = flow.nn.functional.linear_cross_entropy(
        x, flow.tensor(W), flow.tensor(T), options=flow.nn.LinearCrossEntropyOptions(batch_chunk_size=8))
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    loss.backward()
    assert np.allclose(x.grad.numpy(), 2 * first.numpy())
    none = flow.full((4,), -100, dtype=flow.int64)
    for opts in (None, flow.nn.LinearCrossEntropyOptions()):
        r = flow.nn.functional.linear_cross_entropy(flow.tensor(X[:4]), flow.tensor(W), none, options=opts)
        assert np.isnan(r.item())  # 0 / 0, as torch


def test_errors():
    F = flow.nn.functional
    x, w, t = flow.tensor(X), flow.tensor(W), flow.tensor(T)
    with pytest.raises(RuntimeError, match="dimensionality 1 or 2"):
        F.linear_cross_entropy(x.reshape(1, N, IN), w, t)
    with pytest.raises(RuntimeError, match="in_features"):
        F.linear_cross_entropy(x[:, :4], w, t)
    with pytest.raises(RuntimeError, match="linear_bias shape"):
        F.linear_cross_entropy(x, w, t, linear_bias=flow.zeros(3))
    with pytest.raises(RuntimeError, match="at least 2"):
        F.linear_cross_entropy(x, w[0], t)
    p = flow.softmax(flow.randn(N, C), 1)
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified"):
        F.linear_cross_entropy(x, w, p, ignore_index=0)
    bad = flow.tensor(np.where(T < 0, 1, T) + np.eye(1, N, 5, dtype=np.int64)[0] * 100)
    for opts in (None, flow.nn.LinearCrossEntropyOptions(batch_chunk_size=8)):
        with pytest.raises(IndexError, match="out of bounds"):
            F.linear_cross_entropy(x, w, bad, options=opts)
    for kw, match in [(dict(acc_policy="fast"), "acc_policy"), (dict(chunking_method="rows"), "chunking_method"),
                      (dict(chunking_method="aspect_ratio:0"), "chunking_method"),
                      (dict(batch_chunk_size=0), "batch_chunk_size"), (dict(acc_dtype=flow.int64), "acc_dtype")]:
        with pytest.raises(ValueError, match=match):
            flow.nn.LinearCrossEntropyOptions(**kw)
    with pytest.raises(RuntimeError, match="weight shape"):
        flow.nn.LinearCrossEntropyLoss(IN, C, weight=flow.ones(3))
    with pytest.raises(RuntimeError, match="label_smoothing"):
        flow.nn.LinearCrossEntropyLoss(IN, C, label_smoothing=1.5)
