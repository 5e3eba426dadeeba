"""The fused attention kernel (src/kernels/attention.cpp, the fused_attention ops) against torch:
sizes that span several query blocks (64) and key blocks (256), so that the online softmax
rescales and causal attention skips blocks; masks of every kind and broadcast, fully masked
rows (also where only a later key block is attended), GQA, E = 1, zero sizes, float64, head
views with strides (as multi-head attention passes them), the logsumexp output, gradients of
query, key, value and float masks from the fused backward kernel and from the composition that
create_graph uses (plus second derivatives), and the errors raised before any kernel runs.
tests/test_nn_attention.py covers the public functions' semantics on small sizes."""
import numpy as np
import pytest
import torch

from harness import flow

F32 = dict(rtol=2e-5, atol=2e-5)
F64 = dict(rtol=1e-10, atol=1e-10)


def _rng(seed):
    return np.random.default_rng(seed)


def _arr(rng, *shape, dtype=np.float32):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


def _bool_mask(rng, *shape, p=0.3):
    m = rng.uniform(size=shape) > p
    m[..., 0] = True
    return m


def _close(a, b, tol):
    a = a.detach().numpy() if hasattr(a, "detach") else a
    b = b.detach().numpy() if hasattr(b, "detach") else b
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), **tol)


def _sdpa_both(q, k, v, mask=None, tol=F32, mask_grad=False, **kw):
    """SDPA forward and the gradients of q, k, v (and a float mask) in both libraries."""
    res = {}
    g = _arr(_rng(99), *q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for lib in (flow, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        m = None
        if mask is not None:
            m = lib.tensor(mask, requires_grad=mask_grad and mask.dtype != np.bool_)
        call_m, call_kw = m, kw
        if lib is torch and m is not None and kw.get("is_causal"):
            # torch refuses a mask with is_causal (flow adds both): the causal cut-off in the mask
            L, S = q.shape[-2], k.shape[-2]
            keep = torch.ones(L, S, dtype=torch.bool).tril()
            call_m = m & keep if m.dtype == torch.bool else m.masked_fill(~keep, -np.inf)
            call_kw = {a: b for a, b in kw.items() if a != "is_causal"}
        out = lib.nn.functional.scaled_dot_product_attention(*ts, attn_mask=call_m, **call_kw)
        leaves = ts + ([m] if m is not None and m.requires_grad else [])
        grads = lib.autograd.grad(out, leaves, lib.tensor(g))
        res[lib] = (out, grads)
    _close(res[flow][0], res[torch][0], tol)
    for a, b in zip(res[flow][1], res[torch][1]):
        _close(a, b, tol)
    return res[flow][0]


# (L, S): one block each; several query blocks; several key blocks (online rescaling); odd both
SIZES = [(5, 7), (130, 40), (33, 600), (200, 517)]


@pytest.mark.parametrize("L,S", SIZES)
@pytest.mark.parametrize("mask", ["none", "bool", "float", "float_keys"])
def test_fused_sizes_and_masks(L, S, mask):
    r = _rng(L * 1000 + S)
    N, H, E = 2, 2, 16
    m = {"none": None, "bool": _bool_mask(r, N, H, L, S), "float": _arr(r, L, S) * 3,
         "float_keys": _arr(r, N, 1, 1, S)}[mask]
    _sdpa_both(_arr(r, N, H, L, E), _arr(r, N, H, S, E), _arr(r, N, H, S, 8), m,
               mask_grad=mask.startswith("float"))


@pytest.mark.parametrize("L,S", [(130, 130), (70, 300), (300, 70), (1, 600)])
@pytest.mark.parametrize("mask", [None, "bool", "float"])
def test_fused_causal(L, S, mask):
    r = _rng(L + S)
    m = None if mask is None else (_bool_mask(r, L, S) if mask == "bool" else _arr(r, 1, L, S))
    _sdpa_both(_arr(r, 2, L, 8), _arr(r, 2, S, 8), _arr(r, 2, S, 5), m, is_causal=True,
               mask_grad=mask == "float")


def test_fused_fully_masked_rows():
    """Rows masked everywhere give 0 and zero gradients; rows masked in the first key block
    only (S > 256) start their online softmax in a later block."""
    r = _rng(5)
    L, S = 70, 600
    m = _bool_mask(r, 2, L, S)
    m[0, 3] = False
    m[1, 60:] = False
    m[0, 10, :300] = False
    m[0, 11, :] = False
    m[0, 11, 599] = True
    out = _sdpa_both(_arr(r, 2, L, 8), _arr(r, 2, S, 8), _arr(r, 2, S, 8), m)
    assert np.all(out.detach().numpy()[0, 3] == 0) and np.all(out.detach().numpy()[1, 60:] == 0)
    fm = _arr(r, L, S)
    fm[5] = -np.inf
    fm[6, :400] = -np.inf
    _sdpa_both(_arr(r, 2, L, 8), _arr(r, 2, S, 8), _arr(r, 2, S, 8), fm, mask_grad=True)


def test_fused_gqa_and_e1():
    r = _rng(6)
    _sdpa_both(_arr(r, 2, 4, 70, 8), _arr(r, 2, 2, 300, 8), _arr(r, 2, 2, 300, 8), enable_gqa=True)
    _sdpa_both(_arr(r, 3, 65, 1), _arr(r, 3, 257, 1), _arr(r, 3, 257, 1))
    _sdpa_both(_arr(r, 3, 65, 1), _arr(r, 3, 257, 1), _arr(r, 3, 257, 1), is_causal=True)


def test_fused_float64():
    r = _rng(7)
    f = lambda *s: _arr(r, *s, dtype=np.float64)  # noqa: E731
    _sdpa_both(f(2, 3, 70, 8), f(2, 3, 300, 8), f(2, 3, 300, 4), f(70, 300), tol=F64, mask_grad=True)
    _sdpa_both(f(2, 70, 8), f(2, 300, 8), f(2, 300, 4), _bool_mask(r, 70, 300), tol=F64, is_causal=True)


def test_fused_zero_sizes():
    F = flow.nn.functional
    for qs, ks in [((0, 2, 70, 8), (0, 2, 300, 8)), ((2, 2, 0, 8), (2, 2, 300, 8))]:
        q = flow.tensor(np.ones(qs, np.float32), requires_grad=True)
        k = flow.tensor(np.ones(ks, np.float32), requires_grad=True)
        out = F.scaled_dot_product_attention(q, k, k)
        assert tuple(out.shape) == qs
        out.sum().backward()
        assert tuple(q.grad.shape) == qs and tuple(k.grad.shape) == ks
    q = flow.tensor(np.ones((2, 5, 8), np.float32), requires_grad=True)
    out = F.scaled_dot_product_attention(q, flow.zeros(2, 0, 8), flow.zeros(2, 0, 3))
    assert tuple(out.shape) == (2, 5, 3) and np.all(out.detach().numpy() == 0)
    out.sum().backward()
    assert np.all(q.grad.numpy() == 0)


def test_fused_op_logsumexp_and_strided_heads():
    """The op itself on head views (batch stride hd, row stride N*H*hd: multi-head attention's
    layout, used without a copy): output and logsumexp against torch."""
    r = _rng(8)
    n, N, H, hd, S = 90, 2, 3, 8, 280
    qa, ka = _arr(r, n, N * H, hd), _arr(r, S, N * H, hd)
    q, k = flow.tensor(qa).transpose(0, 1), flow.tensor(ka).transpose(0, 1)
    assert q.stride()[1] == N * H * hd
    mask = _arr(r, N * H, 1, S)
    out, lse = flow._C.fused_attention(q, k, k, flow.tensor(mask), 0.3, False)
    qt, kt = torch.tensor(qa).transpose(0, 1), torch.tensor(ka).transpose(0, 1)
    s = qt @ kt.transpose(1, 2) * 0.3 + torch.tensor(mask)
    _close(lse, torch.logsumexp(s, -1), F32)
    _close(out, torch.softmax(s, -1) @ kt, F32)
    m = np.ones((1, n, S), bool)
    m[0, 4] = False
    _, lse = flow._C.fused_attention(q, k, k, flow.tensor(m), 1.0, True)
    assert np.isneginf(lse.numpy()[:, 4]).all() and np.isfinite(np.delete(lse.numpy(), 4, 1)).all()


@pytest.mark.parametrize("causal", [False, True])
def test_fused_create_graph_second_order(causal):
    """create_graph runs the composition: first derivatives equal the fused kernel's, second
    derivatives equal torch's (a float mask, or the causal cut-off: torch refuses both)."""
    r = _rng(9)
    arrays = [_arr(r, 2, 6, 4, dtype=np.float64), _arr(r, 2, 9, 4, dtype=np.float64),
              _arr(r, 2, 9, 3, dtype=np.float64)] + ([] if causal else [_arr(r, 6, 9, dtype=np.float64)])
    g = _arr(r, 2, 6, 3, dtype=np.float64)

    def run(lib, ts):
        mask = None if causal else ts[3]
        return lib.nn.functional.scaled_dot_product_attention(*ts[:3], attn_mask=mask, is_causal=causal)

    res = {}
    for lib in (flow, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        first = lib.autograd.grad(run(lib, ts), ts, lib.tensor(g), create_graph=True)
        second = lib.autograd.grad(sum((f * f).sum() for f in first), ts)
        res[lib] = first, second
    for a, b in zip(res[flow][0] + res[flow][1], res[torch][0] + res[torch][1]):
        _close(a, b, F64)
    ts = [flow.tensor(a, requires_grad=True) for a in arrays]
    plain = flow.autograd.grad(run(flow, ts), ts, flow.tensor(g))
    for a, b in zip(plain, res[flow][0]):
        _close(a, b, F64)


def test_fused_mha_no_weights_matches_torch():
    """need_weights=False takes the fused kernel on the head views; key padding and causal."""
    r = _rng(10)
    E, H, L, N = 16, 4, 70, 3
    fm, tm = flow.nn.MultiheadAttention(E, H), torch.nn.MultiheadAttention(E, H)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in fm.state_dict().items()})
    x = _arr(r, L, N, E)
    kpm = np.zeros((N, L), bool)
    kpm[1, 50:] = True
    causal = np.triu(np.full((L, L), -np.inf, np.float32), 1)
    for kw in ({}, {"key_padding_mask": kpm}, {"attn_mask": causal, "is_causal": True}):
        outs = []
        for lib, m in ((flow, fm), (torch, tm)):
            xt = lib.tensor(x, requires_grad=True)
            args = {k: lib.tensor(v) for k, v in kw.items() if k != "is_causal"}
            out = m(xt, xt, xt, need_weights=False, is_causal=kw.get("is_causal", False), **args)[0]
            (gx,) = lib.autograd.grad(out.sum(), [xt])
            outs.append((out, gx))
        _close(outs[0][0], outs[1][0], F32)
        _close(outs[0][1], outs[1][1], F32)


def test_autocast_keeps_the_composition():
    """Under CPU autocast the products run in bfloat16 (torch's dtype), not in the fused float32
    kernel."""
    r = _rng(11)
    arrays = [_arr(r, 2, 3, 9, 8) for _ in range(3)]
    outs = []
    for lib in (flow, torch):
        with lib.autocast("cpu"):
            outs.append(lib.nn.functional.scaled_dot_product_attention(*(lib.tensor(a) for a in arrays)))
    assert str(outs[0].dtype).split(".")[-1] == str(outs[1].dtype).split(".")[-1]
    _close(outs[0].float(), outs[1].float(), dict(rtol=3e-2, atol=3e-2))


@pytest.mark.parametrize("case", ["dims", "dtype", "half", "batch", "features", "rows", "mask_dtype",
                                  "mask_shape", "mask_dims"])
def test_fused_op_errors(case):
    q, k, v = flow.zeros(2, 5, 4), flow.zeros(2, 7, 4), flow.zeros(2, 7, 3)
    mask = None
    if case == "dims":
        q = flow.zeros(5, 4)
    elif case == "dtype":
        k = k.double()
    elif case == "half":
        q, k, v = q.half(), k.half(), v.half()
    elif case == "batch":
        k, v = flow.zeros(3, 7, 4), flow.zeros(3, 7, 3)
    elif case == "features":
        k = flow.zeros(2, 7, 5)
    elif case == "rows":
        v = flow.zeros(2, 6, 3)
    elif case == "mask_dtype":
        mask = flow.zeros(5, 7, dtype=flow.int64)
    elif case == "mask_shape":
        mask = flow.zeros(2, 3, 7)
    elif case == "mask_dims":
        mask = flow.zeros(1, 2, 5, 7)
    with pytest.raises(RuntimeError, match="fused_attention"):
        flow._C.fused_attention(q, k, v, mask, 1.0, False)
