"""Attention against torch: F.scaled_dot_product_attention (masks, causal, scale, GQA, dropout,
broadcasting, empty sizes, errors), F.multi_head_attention_forward and nn.MultiheadAttention
(every option, outputs, weights, input and parameter gradients), the Transformer layers, stacks
and model (eval mode, so dropout is off), state dicts, reprs and default initialisation.

Tolerances: float32 compares at rtol 1e-5 and atol 1e-5 (the values are O(1) and every output
element is a sum of tens of products, so its absolute rounding is a few 1e-7..1e-6); whole
Transformer stacks at 1e-4 (errors accumulate through several layers and LayerNorms, which
divide by a standard deviation). float64 cases at 1e-10."""
import math
import warnings

import numpy as np
import pytest
import torch

from harness import flow
from error_cases import raises_like_torch
from nn_util import arr, as_installed_torch_repr, close, to_flow_state, torch_repr, twins

# Mixed bool/float masks are tested on purpose; their deprecation warning is checked once below.
pytestmark = [pytest.mark.filterwarnings("ignore:Support for mismatched"),
              pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")]

RTOL, ATOL = 1e-5, 1e-5
F64 = dict(rtol=1e-10, atol=1e-10)


@pytest.fixture(autouse=True)
def _no_torch_fastpath():
    """torch's eval-mode MHA/Transformer fast path is the same math in other kernels; switched
    off so that every comparison is against the documented composition."""
    old = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    yield
    torch.backends.mha.set_fastpath_enabled(old)


def pair(a, grad=True):
    return (flow.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad))


def bool_mask(*shape, p=0.3, seed=1):
    """A random bool mask (True = attend for SDPA) with every row keeping its first key."""
    m = np.random.RandomState(seed).uniform(size=shape) > p
    m[..., 0] = True
    return m


def backward_both(out_f, out_t, seed=3):
    w = np.random.RandomState(seed).uniform(-1, 1, size=tuple(out_t.shape)).astype(
        np.float64 if out_t.dtype == torch.float64 else np.float32)
    (out_f * flow.tensor(w)).sum().backward()
    (out_t * torch.tensor(w)).sum().backward()


# ---------------------------------------------------------------------------
# scaled_dot_product_attention


def sdpa_both(qa, ka, va, mask=None, rtol=RTOL, atol=ATOL, grad_mask=False, **kw):
    (qf, qt), (kf, kt), (vf, vt) = pair(qa), pair(ka), pair(va)
    mf = mt = None
    if mask is not None:
        mf, mt = pair(mask, grad_mask) if mask.dtype != np.bool_ else (flow.tensor(mask), torch.tensor(mask))
    of = flow.nn.functional.scaled_dot_product_attention(qf, kf, vf, attn_mask=mf, **kw)
    ot = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, attn_mask=mt, **kw)
    close(of, ot, rtol, atol)
    backward_both(of, ot)
    for a, b in ((qf, qt), (kf, kt), (vf, vt)) + (((mf, mt),) if grad_mask else ()):
        close(a.grad, b.grad, rtol, atol)
    return of


MASKS = {
    "none": lambda N, H, L, S: None,
    "bool_2d": lambda N, H, L, S: bool_mask(L, S),
    "float_2d": lambda N, H, L, S: arr(L, S),
    "bool_4d": lambda N, H, L, S: bool_mask(N, H, L, S),
    "float_4d": lambda N, H, L, S: arr(N, H, L, S),
    "bool_keys": lambda N, H, L, S: bool_mask(N, 1, 1, S),  # a padding mask, broadcast over heads and rows
    "float_heads": lambda N, H, L, S: arr(H, L, S),
    "float_row": lambda N, H, L, S: arr(1, S),
}


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_sdpa_masks_forward_backward(mask):
    N, H, L, S, E = 2, 3, 5, 7, 8
    sdpa_both(arr(N, H, L, E), arr(N, H, S, E), arr(N, H, S, 6), MASKS[mask](N, H, L, S))


def test_sdpa_float_mask_gradient():
    N, H, L, S, E = 2, 3, 4, 5, 8
    sdpa_both(arr(N, H, L, E), arr(N, H, S, E), arr(N, H, S, E), arr(N, H, L, S), grad_mask=True)
    sdpa_both(arr(N, H, L, E), arr(N, H, S, E), arr(N, H, S, E), arr(L, S), grad_mask=True)


@pytest.mark.parametrize("L,S", [(6, 6), (4, 7), (7, 3)])
@pytest.mark.parametrize("mask", ["none", "bool_2d", "float_4d"])
def test_sdpa_is_causal(L, S, mask):
    """Top-left aligned (query i sees keys 0..i), combined with an explicit mask as torch does."""
    N, H, E = 2, 2, 8
    sdpa_both(arr(N, H, L, E), arr(N, H, S, E), arr(N, H, S, E), MASKS[mask](N, H, L, S), is_causal=True)


@pytest.mark.parametrize("scale", [0.3, 2.0, 0.0])
def test_sdpa_scale(scale):
    sdpa_both(arr(2, 3, 4, 8), arr(2, 3, 5, 8), arr(2, 3, 5, 8), arr(4, 5), scale=scale)


@pytest.mark.parametrize("hk,hv", [(2, 2), (1, 1), (4, 2), (2, 1)])
def test_sdpa_gqa(hk, hv):
    sdpa_both(arr(2, 4, 5, 8), arr(2, hk, 6, 8), arr(2, hv, 6, 8), bool_mask(5, 6), enable_gqa=True)


@pytest.mark.parametrize("qs,ks,ms", [
    ((5, 8), (6, 8), (5, 6)),              # unbatched 2-D
    ((3, 5, 8), (3, 6, 8), None),          # 3-D
    ((1, 3, 5, 8), (2, 3, 6, 8), None),    # broadcast batch of query
    ((2, 3, 5, 8), (3, 6, 8), (2, 1, 5, 6)),  # fewer key dims, mask broadcast over heads
    ((2, 2, 3, 5, 8), (2, 2, 3, 6, 8), (3, 5, 6)),  # two batch dims
])
def test_sdpa_shapes_and_broadcasting(qs, ks, ms):
    sdpa_both(arr(*qs), arr(*ks), arr(*ks[:-1], 4), None if ms is None else arr(*ms))


def test_sdpa_fully_masked_rows_are_zero():
    """Rows whose keys are all masked give 0 in torch (its safe softmax); gradients stay finite."""
    N, H, L, S, E = 2, 2, 4, 5, 8
    m = bool_mask(N, H, L, S)
    m[0, 1, 2] = False
    m[1, :, 0] = False
    of = sdpa_both(arr(N, H, L, E), arr(N, H, S, E), arr(N, H, S, E), m)
    assert np.all(of.detach().numpy()[0, 1, 2] == 0)
    fm = arr(L, S)
    fm[3] = -np.inf
    sdpa_both(arr(N, H, L, E), arr(N, H, S, E), arr(N, H, S, E), fm)


@pytest.mark.parametrize("causal", [True, False])
def test_sdpa_masked_inside_graph(causal):
    """nn.Graph traces on meta tensors: the fully-masked-row test must not need values there,
    and the graph gives eager's numbers (fully masked rows included)."""
    N, H, L, E = 2, 2, 4, 8
    q, k, v = (flow.tensor(arr(N, H, L, E)) for _ in range(3))
    m = bool_mask(N, H, L, L)
    m[0, 1, 2] = False
    mask = None if causal else flow.tensor(m)
    F = flow.nn.functional

    class G(flow.nn.Graph):
        def build(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)

    eager = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    close(G()(q, k, v), eager.numpy(), rtol=1e-6, atol=1e-6)


def test_sdpa_float64():
    (N, H, L, S, E) = (2, 3, 5, 6, 8)
    f64 = lambda *s: arr(*s, dtype=np.float64)  # noqa: E731
    sdpa_both(f64(N, H, L, E), f64(N, H, S, E), f64(N, H, S, E), f64(L, S), **F64)
    sdpa_both(f64(N, H, L, E), f64(N, H, S, E), f64(N, H, S, E), bool_mask(L, S), is_causal=True, **F64)
    out = flow.nn.functional.scaled_dot_product_attention(*(flow.tensor(f64(2, 3, 4)) for _ in range(3)))
    assert out.dtype == flow.float64


def test_sdpa_zero_sizes():
    F = flow.nn.functional
    for qs, ks in [((0, 2, 5, 8), (0, 2, 6, 8)), ((2, 2, 0, 8), (2, 2, 6, 8))]:
        q, k = flow.tensor(arr(*qs), requires_grad=True), flow.tensor(arr(*ks), requires_grad=True)
        out = F.scaled_dot_product_attention(q, k, k)
        assert tuple(out.shape) == qs
        out.sum().backward()
        assert tuple(q.grad.shape) == qs and tuple(k.grad.shape) == ks
    # no keys: the empty sum, zeros (torch gives zeros too)
    out = F.scaled_dot_product_attention(flow.tensor(arr(2, 5, 8)), flow.zeros(2, 0, 8), flow.zeros(2, 0, 3))
    ref = torch.nn.functional.scaled_dot_product_attention(torch.tensor(arr(2, 5, 8)), torch.zeros(2, 0, 8),
                                                           torch.zeros(2, 0, 3))
    close(out, ref)


def test_sdpa_dropout_statistics():
    """With q = k = 0 every weight is 1/S; with v = I the output is the weight matrix itself, so
    each entry is 0 (dropped, probability p) or 1/(S(1-p))."""
    flow.manual_seed(0)
    N, H, L, S, p = 4, 4, 64, 64, 0.3
    q = flow.zeros(N, H, L, 8)
    v = flow.tensor(np.broadcast_to(np.eye(S, dtype=np.float32), (N, H, S, S)).copy())
    out = flow.nn.functional.scaled_dot_product_attention(q, flow.zeros(N, H, S, 8), v, dropout_p=p).numpy()
    kept = out != 0
    assert abs(1 - kept.mean() - p) < 0.02
    np.testing.assert_allclose(out[kept], 1 / (S * (1 - p)), rtol=1e-5)
    assert abs(out.sum(-1).mean() - 1.0) < 0.02  # unbiased
    out0 = flow.nn.functional.scaled_dot_product_attention(q, flow.zeros(N, H, S, 8), v, dropout_p=0.0).numpy()
    np.testing.assert_allclose(out0, 1 / S, rtol=1e-6)
    out1 = flow.nn.functional.scaled_dot_product_attention(q, flow.zeros(N, H, S, 8), v, dropout_p=1.0).numpy()
    assert np.all(out1 == 0)


@pytest.mark.parametrize("case", ["dtype", "dims", "mask_dtype_int", "mask_dtype_double", "dropout",
                                  "gqa", "heads", "mask_shape"])
def test_sdpa_errors_match_torch(case):
    def call(lib):
        F = lib.nn.functional
        q, k, v = lib.zeros(2, 4, 5, 8), lib.zeros(2, 4, 6, 8), lib.zeros(2, 4, 6, 8)
        if case == "dtype":
            return F.scaled_dot_product_attention(q, k.double(), v)
        if case == "dims":
            return F.scaled_dot_product_attention(lib.zeros(8), lib.zeros(8), lib.zeros(8))
        if case == "mask_dtype_int":
            return F.scaled_dot_product_attention(q, k, v, attn_mask=lib.zeros(5, 6, dtype=lib.int64))
        if case == "mask_dtype_double":
            return F.scaled_dot_product_attention(q, k, v, attn_mask=lib.zeros(5, 6, dtype=lib.float64))
        if case == "dropout":
            return F.scaled_dot_product_attention(q, k, v, dropout_p=1.5)
        if case == "gqa":
            return F.scaled_dot_product_attention(q, lib.zeros(2, 3, 6, 8), lib.zeros(2, 3, 6, 8), enable_gqa=True)
        if case == "heads":
            return F.scaled_dot_product_attention(q, lib.zeros(2, 2, 6, 8), lib.zeros(2, 2, 6, 8))
        return F.scaled_dot_product_attention(q, k, v, attn_mask=lib.zeros(3, 6))

    raises_like_torch(call)


# ---------------------------------------------------------------------------
# MultiheadAttention


def make_mha(E=16, H=4, **kw):
    return lambda lib: lib.nn.MultiheadAttention(E, H, **kw)


def mha_inputs(batch_first, N, L, S, E, kdim=None, vdim=None, batched=True, dtype=np.float32):
    def shape(n, d):
        if not batched:
            return (n, d)
        return (N, n, d) if batch_first else (n, N, d)
    return (arr(*shape(L, E), dtype=dtype), arr(*shape(S, kdim or E), dtype=dtype),
            arr(*shape(S, vdim or E), dtype=dtype))


def check_mha(fm, tm, arrays, same=("q", "k", "v"), rtol=RTOL, atol=ATOL, masks=None, **kw):
    """Runs both modules; compares output, weights, input gradients and parameter gradients.
    `same` says which inputs are one tensor: ('q','q','q') self-attention, ('q','k','k') k is v."""
    leaves, args_f, args_t = {}, [], []
    for name, a in zip(same, arrays):
        if name not in leaves:
            leaves[name] = pair(a)
        args_f.append(leaves[name][0])
        args_t.append(leaves[name][1])
    mf = {k: (flow.tensor(v) if v is not None else None) for k, v in (masks or {}).items()}
    mt = {k: (torch.tensor(v) if v is not None else None) for k, v in (masks or {}).items()}
    of, wf = fm(*args_f, **mf, **kw)
    ot, wt = tm(*args_t, **mt, **kw)
    close(of, ot, rtol, atol)
    if wt is None:
        assert wf is None
    else:
        close(wf, wt, rtol, atol)
    total_f, total_t = of.sum() * 0, ot.sum() * 0
    for i, (o_f, o_t) in enumerate([(of, ot)] + ([(wf, wt)] if wt is not None else [])):
        w = np.random.RandomState(i).uniform(-1, 1, size=tuple(o_t.shape)).astype(arrays[0].dtype)
        total_f = total_f + (o_f * flow.tensor(w)).sum()
        total_t = total_t + (o_t * torch.tensor(w)).sum()
    total_f.backward()
    total_t.backward()
    for name, (xf, xt) in leaves.items():
        close(xf.grad, xt.grad, rtol, atol)
    named_t = dict(tm.named_parameters())
    for name, p in fm.named_parameters():
        assert p.grad is not None, f"{name} got no grad"
        close(p.grad, named_t[name].grad, rtol, atol)
    return of, wf


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("same", [("q", "q", "q"), ("q", "k", "k"), ("q", "k", "v")])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_basic(batch_first, same, need_weights):
    fm, tm = twins(make_mha(batch_first=batch_first))
    S = 5 if same[1] == "q" else 7
    L = 5
    check_mha(fm, tm, mha_inputs(batch_first, 3, L, S if same[0] != same[1] else L, 16), same,
              need_weights=need_weights)


@pytest.mark.parametrize("opts", [
    dict(bias=False), dict(add_bias_kv=True), dict(add_zero_attn=True),
    dict(add_bias_kv=True, add_zero_attn=True), dict(kdim=6, vdim=10), dict(kdim=6, vdim=10, bias=False),
    dict(kdim=6, vdim=10, add_bias_kv=True, add_zero_attn=True, batch_first=True),
])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_options(opts, need_weights):
    fm, tm = twins(make_mha(**opts))
    bf = opts.get("batch_first", False)
    arrays = mha_inputs(bf, 2, 4, 6, 16, opts.get("kdim"), opts.get("vdim"))
    N, S = 2, 6
    masks = {"key_padding_mask": ~bool_mask(N, S, seed=5), "attn_mask": arr(4, S)}
    check_mha(fm, tm, arrays, ("q", "k", "v"), need_weights=need_weights)
    check_mha(fm, tm, arrays, ("q", "k", "v"), masks=masks, need_weights=need_weights)


MHA_MASKS = {
    "kpm_bool": lambda N, H, L, S: {"key_padding_mask": ~bool_mask(N, S, seed=7)},
    "kpm_float": lambda N, H, L, S: {"key_padding_mask": arr(N, S)},
    "attn_bool_2d": lambda N, H, L, S: {"attn_mask": ~bool_mask(L, S, seed=8)},
    "attn_float_2d": lambda N, H, L, S: {"attn_mask": arr(L, S)},
    "attn_bool_3d": lambda N, H, L, S: {"attn_mask": ~bool_mask(N * H, L, S, seed=9)},
    "attn_float_3d": lambda N, H, L, S: {"attn_mask": arr(N * H, L, S)},
    "both_bool": lambda N, H, L, S: {"attn_mask": ~bool_mask(L, S, seed=10),
                                     "key_padding_mask": ~bool_mask(N, S, seed=11)},
    "both_float": lambda N, H, L, S: {"attn_mask": arr(N * H, L, S), "key_padding_mask": arr(N, S)},
}


@pytest.mark.parametrize("mask", sorted(MHA_MASKS))
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_masks(mask, batch_first, need_weights, average):
    N, H, L, S, E = 3, 4, 5, 5, 16
    fm, tm = twins(make_mha(E, H, batch_first=batch_first))
    check_mha(fm, tm, mha_inputs(batch_first, N, L, S, E), ("q", "q", "q"), masks=MHA_MASKS[mask](N, H, L, S),
              need_weights=need_weights, average_attn_weights=average)


def test_mha_mixed_mask_types_warn_like_torch():
    N, H, L, E = 2, 4, 5, 16
    fm, tm = twins(make_mha(E, H))
    masks = {"attn_mask": arr(L, L), "key_padding_mask": ~bool_mask(N, L, seed=2)}
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        check_mha(fm, tm, mha_inputs(False, N, L, L, E), ("q", "q", "q"), masks=masks)
    msgs = [str(w.message) for w in rec if "mismatched" in str(w.message)]
    assert len(msgs) == 2 and msgs[0] == msgs[1], msgs


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_is_causal(need_weights):
    """is_causal is a hint that attn_mask is causal: torch uses the mask with need_weights and
    a built-in causal mask without."""
    N, H, L, E = 2, 4, 6, 16
    fm, tm = twins(make_mha(E, H, batch_first=True))
    causal = np.triu(np.full((L, L), -np.inf, dtype=np.float32), 1)
    check_mha(fm, tm, mha_inputs(True, N, L, L, E), ("q", "q", "q"), masks={"attn_mask": causal},
              is_causal=True, need_weights=need_weights)
    masks = {"attn_mask": causal, "key_padding_mask": ~bool_mask(N, L, seed=3)}
    check_mha(fm, tm, mha_inputs(True, N, L, L, E), ("q", "q", "q"), masks=masks, is_causal=True,
              need_weights=need_weights)


@pytest.mark.parametrize("opts", [{}, dict(kdim=6, vdim=10), dict(add_bias_kv=True, add_zero_attn=True)])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_unbatched(opts, need_weights):
    fm, tm = twins(make_mha(**opts))
    arrays = mha_inputs(False, 1, 4, 6, 16, opts.get("kdim"), opts.get("vdim"), batched=False)
    check_mha(fm, tm, arrays, ("q", "k", "v"), need_weights=need_weights,
              masks={"key_padding_mask": ~bool_mask(6, seed=4), "attn_mask": arr(4, 6)})
    check_mha(fm, tm, arrays, ("q", "k", "v"), need_weights=need_weights, average_attn_weights=False,
              masks={"attn_mask": arr(4, 4, 6)})


def test_mha_float64():
    fm, tm = twins(make_mha(16, 4, dtype=None))
    fm, tm = fm.double(), tm.double()
    arrays = mha_inputs(False, 2, 4, 5, 16, dtype=np.float64)
    check_mha(fm, tm, arrays, ("q", "k", "k"), masks={"key_padding_mask": ~bool_mask(2, 5)}, **F64)
    check_mha(fm, tm, arrays, ("q", "k", "k"), need_weights=False, **F64)


def test_mha_fully_masked_rows_like_torch():
    """A key_padding_mask masking every key of a sample: NaN weights with need_weights (torch's
    plain softmax), zeros in SDPA without."""
    N, H, L, E = 2, 4, 3, 16
    fm, tm = twins(make_mha(E, H))
    kpm = np.zeros((N, L), dtype=bool)
    kpm[1] = True
    x = arr(L, N, E)
    for need in (True, False):
        of, wf = fm(flow.tensor(x), flow.tensor(x), flow.tensor(x), key_padding_mask=flow.tensor(kpm),
                    need_weights=need)
        ot, wt = tm(torch.tensor(x), torch.tensor(x), torch.tensor(x), key_padding_mask=torch.tensor(kpm),
                    need_weights=need)
        np.testing.assert_allclose(of.detach().numpy(), ot.detach().numpy(), rtol=RTOL, atol=ATOL)
        if need:
            np.testing.assert_allclose(wf.detach().numpy(), wt.detach().numpy(), rtol=RTOL, atol=ATOL)
            assert np.isnan(wf.detach().numpy()[1]).all()


def test_mha_zero_batch():
    fm, tm = twins(make_mha())
    x = arr(5, 0, 16)
    of, wf = fm(flow.tensor(x), flow.tensor(x), flow.tensor(x))
    ot, wt = tm(torch.tensor(x), torch.tensor(x), torch.tensor(x))
    assert tuple(of.shape) == tuple(ot.shape) and tuple(wf.shape) == tuple(wt.shape)


def test_mha_dropout_train_and_eval():
    flow.manual_seed(0)
    N, H, L, E, p = 4, 4, 32, 16, 0.4
    m = flow.nn.MultiheadAttention(E, H, dropout=p)
    x = flow.tensor(arr(L, N, E))
    _, w = m(x, x, x, average_attn_weights=False)
    w = w.detach().numpy()
    assert abs((w == 0).mean() - p) < 0.03
    np.testing.assert_allclose(w.sum(-1).mean(), 1.0, atol=0.03)  # rescaled by 1/(1-p)
    m.eval()
    fm, tm = twins(lambda lib: lib.nn.MultiheadAttention(E, H, dropout=p))
    fm.eval(), tm.eval()
    check_mha(fm, tm, mha_inputs(False, N, 6, 6, E), ("q", "q", "q"))


def test_mha_functional_matches_torch():
    """F.multi_head_attention_forward directly: separate projection weights, static keys."""
    E, H, N, L, S = 16, 4, 2, 4, 5
    rng = np.random.RandomState(0)
    w = {n: rng.uniform(-0.5, 0.5, size=s).astype(np.float32) for n, s in [
        ("q", (E, E)), ("k", (E, 6)), ("v", (E, 10)), ("b", (3 * E,)), ("ow", (E, E)), ("ob", (E,))]}
    q, k, v = arr(L, N, E), arr(S, N, 6), arr(S, N, 10)
    sk, sv = arr(N * H, 3, E // H), arr(N * H, 3, E // H)

    def run(lib, static):
        t = {n: lib.tensor(a) for n, a in w.items()}
        return lib.nn.functional.multi_head_attention_forward(
            lib.tensor(q), lib.tensor(k), lib.tensor(v), E, H, None, t["b"], None, None, False, 0.0, t["ow"],
            t["ob"], training=False, use_separate_proj_weight=True, q_proj_weight=t["q"], k_proj_weight=t["k"],
            v_proj_weight=t["v"], static_k=lib.tensor(sk) if static else None,
            static_v=lib.tensor(sv) if static else None, average_attn_weights=False)

    for static in (False, True):
        (of, wf), (ot, wt) = run(flow, static), run(torch, static)
        close(of, ot, RTOL, ATOL)
        close(wf, wt, RTOL, ATOL)


def test_mha_parameters_state_dict_repr():
    for kw in [{}, dict(add_bias_kv=True), dict(kdim=6, vdim=10), dict(bias=False)]:
        fm, tm = twins(make_mha(**kw))  # strict load: same keys and shapes
        assert list(fm.state_dict()) == list(tm.state_dict())
        assert [(n, tuple(p.shape)) for n, p in fm.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in tm.named_parameters()]
        assert repr(fm) == torch_repr(tm)
    fm = flow.nn.MultiheadAttention(16, 4)
    assert repr(fm) == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=16, "
                        "out_features=16, bias=True)\n)")
    assert fm.head_dim == 4 and fm._qkv_same_embed_dim and fm.batch_first is False
    assert fm.bias_k is None and fm.q_proj_weight is None


def test_mha_state_dict_round_trip_from_torch():
    """torch's weights loaded into flow give torch's outputs."""
    tm = torch.nn.MultiheadAttention(16, 4, add_bias_kv=True, kdim=6, vdim=10)
    fm = flow.nn.MultiheadAttention(16, 4, add_bias_kv=True, kdim=6, vdim=10)
    fm.load_state_dict(to_flow_state(tm))
    check_mha(fm, tm, mha_inputs(False, 2, 4, 5, 16, 6, 10), ("q", "k", "v"))


def test_mha_default_init():
    flow.manual_seed(0)
    E = 128
    m = flow.nn.MultiheadAttention(E, 8, add_bias_kv=True)
    w = m.in_proj_weight.detach().numpy()
    bound = math.sqrt(6.0 / (E + 3 * E))  # xavier_uniform_: fan_in E, fan_out 3E
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert np.all(m.in_proj_bias.detach().numpy() == 0) and np.all(m.out_proj.bias.detach().numpy() == 0)
    ow = m.out_proj.weight.detach().numpy()  # Linear's own init: U(-1/sqrt(E), 1/sqrt(E))
    assert np.abs(ow).max() <= 1 / math.sqrt(E) and abs(ow.std() - 1 / math.sqrt(3 * E)) < 0.05 / math.sqrt(E)
    bk = np.concatenate([m.bias_k.detach().numpy().ravel(), m.bias_v.detach().numpy().ravel()])
    assert abs(bk.std() - 1 / math.sqrt(E)) < 0.25 / math.sqrt(E)  # xavier_normal_ on (1, 1, E)
    sep = flow.nn.MultiheadAttention(E, 8, kdim=32, vdim=64)
    kb = math.sqrt(6.0 / (E + 32))
    assert np.abs(sep.k_proj_weight.detach().numpy()).max() <= kb


def test_mha_errors_match_torch():
    raises_like_torch(lambda lib: lib.nn.MultiheadAttention(10, 3), AssertionError)
    raises_like_torch(lambda lib: lib.nn.MultiheadAttention(0, 3), ValueError)

    def call(case):
        def run(lib):
            m = lib.nn.MultiheadAttention(16, 4)
            x = lib.zeros(5, 2, 16)
            if case == "query_4d":
                return m(lib.zeros(1, 5, 2, 16), x, x)
            if case == "key_2d":
                return m(x, lib.zeros(5, 16), x)
            if case == "mask_2d":
                return m(x, x, x, attn_mask=lib.zeros(4, 5))
            if case == "mask_3d":
                return m(x, x, x, attn_mask=lib.zeros(2, 5, 5))
            if case == "mask_4d":
                return m(x, x, x, attn_mask=lib.zeros(1, 8, 5, 5))
            if case == "kpm_shape":
                return m(x, x, x, key_padding_mask=lib.zeros(2, 4, dtype=lib.bool))
            if case == "kpm_dtype":
                return m(x, x, x, key_padding_mask=lib.zeros(2, 5, dtype=lib.int64))
            if case == "causal_without_mask":
                return m(x, x, x, is_causal=True)
            if case == "embed_dim":
                return m(lib.zeros(5, 2, 8), lib.zeros(5, 2, 8), lib.zeros(5, 2, 8))
            if case == "kv_shape":
                return m(x, x, lib.zeros(4, 2, 16))
        return run

    for case, exc in [("query_4d", AssertionError), ("key_2d", AssertionError), ("mask_2d", RuntimeError),
                      ("mask_3d", RuntimeError), ("mask_4d", AssertionError), ("kpm_shape", AssertionError),
                      ("kpm_dtype", AssertionError), ("causal_without_mask", RuntimeError),
                      ("embed_dim", AssertionError), ("kv_shape", AssertionError)]:
        raises_like_torch(call(case), exc)


# ---------------------------------------------------------------------------
# Transformer layers


def layer_inputs(batch_first, N, L, E):
    return arr(N, L, E) if batch_first else arr(L, N, E)


def check_layer(fm, tm, args_np, kwargs=None, rtol=RTOL, atol=ATOL):
    """Eval mode (no dropout): output, input gradients and parameter gradients. numpy arrays in
    `kwargs` (masks) become tensors of each library; other values (flags) pass as they are."""
    fm.eval(), tm.eval()
    leaves = [pair(a) for a in args_np]
    kwargs = kwargs or {}
    kf = {k: flow.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    kt = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    of = fm(*[a for a, _ in leaves], **kf)
    ot = tm(*[b for _, b in leaves], **kt)
    close(of, ot, rtol, atol)
    backward_both(of, ot)
    for a, b in leaves:
        close(a.grad, b.grad, rtol, atol)
    named_t = dict(tm.named_parameters())
    for name, p in fm.named_parameters():
        assert p.grad is not None, f"{name} got no grad"
        close(p.grad, named_t[name].grad, rtol, atol)


ACTIVATIONS = {
    "relu": lambda lib: "relu",
    "gelu": lambda lib: "gelu",
    "fn_gelu": lambda lib: lib.nn.functional.gelu,
    "module_gelu": lambda lib: lib.nn.GELU(),
    "callable": lambda lib: (lambda x: lib.tanh(x) * 2),
}


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_encoder_layer(norm_first, batch_first, activation):
    E, H, N, L = 16, 4, 3, 5

    def build(lib):
        return lib.nn.TransformerEncoderLayer(E, H, dim_feedforward=24, activation=ACTIVATIONS[activation](lib),
                                              batch_first=batch_first, norm_first=norm_first)

    fm, tm = twins(build)
    check_layer(fm, tm, [layer_inputs(batch_first, N, L, E)])
    masks = {"src_mask": np.triu(np.full((L, L), -np.inf, dtype=np.float32), 1),
             "src_key_padding_mask": ~bool_mask(N, L, seed=2)}
    check_layer(fm, tm, [layer_inputs(batch_first, N, L, E)], masks)


@pytest.mark.parametrize("opts", [dict(bias=False), dict(layer_norm_eps=1e-3), dict(dim_feedforward=8)])
def test_encoder_layer_options_and_causal(opts):
    E, H, N, L = 16, 2, 2, 6
    fm, tm = twins(lambda lib: lib.nn.TransformerEncoderLayer(E, H, **opts))
    causal = np.triu(np.full((L, L), -np.inf, dtype=np.float32), 1)
    check_layer(fm, tm, [arr(L, N, E)], {"src_mask": causal, "is_causal": True})
    check_layer(fm, tm, [arr(L, E)], {"src_mask": ~bool_mask(L, L, seed=1)})  # unbatched, bool mask


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_decoder_layer(norm_first, batch_first, activation):
    E, H, N, L, S = 16, 4, 2, 5, 7

    def build(lib):
        return lib.nn.TransformerDecoderLayer(E, H, dim_feedforward=20, activation=activation,
                                              batch_first=batch_first, norm_first=norm_first)

    fm, tm = twins(build)
    tgt, mem = layer_inputs(batch_first, N, L, E), layer_inputs(batch_first, N, S, E)
    check_layer(fm, tm, [tgt, mem])
    masks = {"tgt_mask": np.triu(np.full((L, L), -np.inf, dtype=np.float32), 1),
             "memory_mask": arr(L, S), "tgt_key_padding_mask": ~bool_mask(N, L, seed=3),
             "memory_key_padding_mask": ~bool_mask(N, S, seed=4)}
    check_layer(fm, tm, [tgt, mem], masks)
    check_layer(fm, tm, [tgt, mem], {"tgt_mask": masks["tgt_mask"], "tgt_is_causal": True})


def test_encoder_decoder_stacks():
    E, H, N, L, S = 16, 4, 2, 5, 6

    def enc(lib):
        layer = lib.nn.TransformerEncoderLayer(E, H, 24, batch_first=True)
        return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(E), enable_nested_tensor=False)

    def dec(lib):
        layer = lib.nn.TransformerDecoderLayer(E, H, 24, norm_first=True)
        return lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(E))

    fm, tm = twins(enc)
    assert list(fm.state_dict()) == list(tm.state_dict())
    causal = np.triu(np.full((L, L), -np.inf, dtype=np.float32), 1)
    # stacks: 1e-4 (module docstring)
    check_layer(fm, tm, [arr(N, L, E)], {"mask": causal, "src_key_padding_mask": ~bool_mask(N, L, seed=6)},
                rtol=1e-4, atol=1e-4)
    check_layer(fm, tm, [arr(N, L, E)], {"mask": causal, "is_causal": True}, rtol=1e-4, atol=1e-4)
    fm, tm = twins(dec)
    check_layer(fm, tm, [arr(L, N, E), arr(S, N, E)], {"tgt_mask": causal, "memory_mask": arr(L, S)},
                rtol=1e-4, atol=1e-4)


def test_transformer_model_forward_and_state_dict():
    E, H, N, L, S = 16, 4, 2, 5, 6

    def build(lib, **kw):
        return lib.nn.Transformer(E, H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=24, **kw)

    for kw in [{}, dict(batch_first=True, norm_first=True, activation="gelu")]:
        fm, tm = twins(lambda lib: build(lib, **kw))
        assert list(fm.state_dict()) == list(tm.state_dict())
        bf = kw.get("batch_first", False)
        src = arr(N, S, E) if bf else arr(S, N, E)
        tgt = arr(N, L, E) if bf else arr(L, N, E)
        tgt_mask = flow.nn.Transformer.generate_square_subsequent_mask(L).numpy()
        masks = {"tgt_mask": tgt_mask, "src_key_padding_mask": ~bool_mask(N, S, seed=9),
                 "memory_key_padding_mask": ~bool_mask(N, S, seed=9)}
        check_layer(fm, tm, [src, tgt], masks, rtol=1e-4, atol=1e-4)
    # torch -> flow
    tm = build(torch)
    fm = build(flow)
    fm.load_state_dict(to_flow_state(tm))
    check_layer(fm, tm, [arr(S, N, E), arr(L, N, E)], rtol=1e-4, atol=1e-4)


def test_transformer_float64():
    E, H, N, L = 8, 2, 2, 4
    fm, tm = twins(lambda lib: lib.nn.TransformerEncoderLayer(E, H, 12, norm_first=True))
    fm, tm = fm.double(), tm.double()
    check_layer(fm, tm, [arr(L, N, E, dtype=np.float64)], {"src_key_padding_mask": ~bool_mask(N, L, seed=2)},
                **F64)


def test_generate_square_subsequent_mask():
    for sz in (1, 4):
        close(flow.nn.Transformer.generate_square_subsequent_mask(sz),
              torch.nn.Transformer.generate_square_subsequent_mask(sz), 0, 0)
    m = flow.nn.Transformer.generate_square_subsequent_mask(3, dtype=flow.float64)
    assert m.dtype == flow.float64


def test_transformer_reprs():
    def layers(lib):
        return [lib.nn.TransformerEncoderLayer(8, 2, 16), lib.nn.TransformerDecoderLayer(8, 2, 16),
                lib.nn.TransformerEncoderLayer(8, 2, 16, activation=lib.nn.GELU()),
                lib.nn.Transformer(8, 2, 1, 1, 16)]

    for f, t in zip(layers(flow), layers(torch)):
        assert as_installed_torch_repr(repr(f)) == torch_repr(t)


def test_transformer_default_init():
    flow.manual_seed(0)
    m = flow.nn.Transformer(64, 4, 1, 1, 128)
    for name, p in m.named_parameters():
        a = p.detach().numpy()
        if p.dim() > 1:
            bound = math.sqrt(6.0 / (a.shape[0] + a.shape[1]))
            assert np.abs(a).max() <= bound and np.abs(a).max() > 0.95 * bound, name
    layer = m.encoder.layers[0]
    assert np.all(layer.self_attn.in_proj_bias.detach().numpy() == 0)
    assert np.all(layer.norm1.weight.detach().numpy() == 1)


def test_encoder_layers_are_copies_and_warning():
    layer = flow.nn.TransformerEncoderLayer(8, 2, 16)
    with warnings.catch_warnings(record=True) as rf:
        warnings.simplefilter("always")
        enc = flow.nn.TransformerEncoder(layer, 3)
    with warnings.catch_warnings(record=True) as rt:
        warnings.simplefilter("always")
        torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16), 3)
    assert [str(w.message) for w in rf] == [str(w.message) for w in rt]
    assert len(enc.layers) == 3 and enc.layers[0] is not layer and enc.layers[0] is not enc.layers[1]
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    np.testing.assert_array_equal(enc.layers[1].linear1.weight.detach().numpy(),
                                  layer.linear1.weight.detach().numpy())
    assert enc.use_nested_tensor is False and enc.enable_nested_tensor is True


def test_transformer_errors_match_torch():
    raises_like_torch(lambda lib: lib.nn.TransformerEncoderLayer(8, 2, activation="tanh"))

    def batch(lib):
        return lib.nn.Transformer(8, 2, 1, 1, 16)(lib.zeros(4, 2, 8), lib.zeros(4, 3, 8))

    def features(lib):
        return lib.nn.Transformer(8, 2, 1, 1, 16)(lib.zeros(4, 2, 8), lib.zeros(4, 2, 6))

    raises_like_torch(batch)
    raises_like_torch(features)
    raises_like_torch(lambda lib: lib.nn.TransformerEncoderLayer(9, 2), AssertionError)


def test_encoder_layer_train_mode_dropout_runs():
    flow.manual_seed(1)
    m = flow.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.5)
    x = flow.tensor(arr(5, 2, 16), requires_grad=True)
    a, b = m(x), m(x)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    a.sum().backward()
    assert x.grad is not None and m.linear1.weight.grad is not None
