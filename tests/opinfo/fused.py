"""OpInfos of the fused family (src/ops/table/fused.yaml), against their unfused compositions in
torch. The dropout ops run here on their deterministic cases (eval, p = 0, p = 1); their random
masks are checked against flow's own dropout under the same seed in tests/test_fused_ops.py."""

import numpy as np

from .core import *  # noqa: F401,F403

_D = Domain(-3.0, 3.0, -2, 2)


def _keep(rng, shape, p=0.35):
    return Arr(rng.random(shape) > p, "bool")


def _masked_softmax_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    m = lambda *s: _keep(rng, s)  # noqa: E731
    return [
        Sample((x(2, 3, 4, 6), m(2, 3, 4, 6)), {"fill_value": -10000.0, "scale": 2.0}, desc="full mask"),
        Sample((x(2, 3, 4, 6), m(2, 1, 4, 6)), {"fill_value": -5.0, "scale": 0.5}, desc="mask broadcast over heads"),
        Sample((x(2, 3, 4, 6), m(1, 1, 1, 6)), {"scale": 1.5}, desc="key mask"),
        Sample((x(3, 4, 6), m(4, 6)), {"fill_value": -1.0}, desc="mask of fewer dims"),
        Sample((x(5, 33), m(5, 33)), {"fill_value": -3.0, "scale": 0.3}, desc="long rows"),
        Sample((x(4, 5), Arr(np.zeros((4, 5), bool), "bool")), {"fill_value": 2.0}, desc="all masked"),
        Sample((x(0, 3, 5), m(1, 3, 5)), desc="empty"),
        Sample((x(2, 4, 6), m(2, 4, 5)), desc="mask's last dim differs (error)"),
    ]


def _torch_masked(torch, x, mask, fill_value, scale):
    return torch.where(mask, x * scale, torch.tensor(fill_value, dtype=x.dtype))


def _torch_scale_mask_softmax(torch):
    def ref(x, mask, fill_value=0.0, scale=1.0):
        return torch.softmax(_torch_masked(torch, x, mask, fill_value, scale), -1)

    return ref


def _dropped(torch, s, p, train):
    """dropout(s) on the deterministic cases the samples use."""
    if not train or p == 0:
        return s
    assert p == 1, "samples use p in {0, 1}"
    return s * 0


def _scale_mask_softmax_dropout_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    m = lambda *s: _keep(rng, s)  # noqa: E731
    return [
        Sample((x(2, 3, 4, 6), m(2, 1, 4, 6)), {"fill_value": -10000.0, "scale": 2.0, "p": 0.0}, desc="p=0"),
        Sample((x(2, 3, 4, 6), m(2, 3, 4, 6)), {"scale": 0.5, "p": 0.4, "training": False}, desc="eval"),
        Sample((x(3, 5), m(3, 5)), {"fill_value": -2.0, "p": 1.0}, desc="p=1"),
        Sample((x(0, 5), m(1, 5)), {"p": 0.0}, desc="empty"),
    ]


def _torch_scale_mask_softmax_dropout(torch):
    def ref(x, mask, fill_value=0.0, scale=1.0, p=0.5, training=True):
        s = torch.softmax(_torch_masked(torch, x, mask, fill_value, scale), -1)
        return _dropped(torch, s, p, training), s

    return ref


def _tril_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    return [
        Sample((x(2, 5, 7),), {"p": 0.0, "diagonal": 0, "tril_scale_value": 2.0, "tril_fill_value": -10000.0},
               desc="causal"),
        Sample((x(2, 2, 6, 4),), {"p": 0.0, "diagonal": 1, "tril_scale_value": 0.5}, desc="diagonal 1, fill 0"),
        Sample((x(3, 6),), {"p": 0.0, "diagonal": -2, "tril_scale_value": 1.0, "tril_fill_value": -3.0},
               desc="negative diagonal"),
        Sample((x(2, 4, 4),), {"p": 1.0, "diagonal": 0, "tril_scale_value": 1.0}, desc="p=1"),
        Sample((x(0, 4, 4),), {"p": 0.0, "diagonal": 0, "tril_scale_value": 1.0}, desc="empty"),
    ]


def _torch_tril(torch):
    def ref(a, p=0.5, diagonal=0, tril_scale_value=1.0, tril_fill_value=0.0):
        keep = torch.ones(a.shape[-2:], dtype=torch.bool).tril(diagonal)
        s = torch.softmax(_torch_masked(torch, a, keep, tril_fill_value, tril_scale_value), -1)
        return _dropped(torch, s, p, True), s

    return ref


def _native_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    return [
        Sample((x(2, 4, 6), _keep(rng, (2, 1, 6)), -100.0, 1.5, None, 0.0, True), desc="mask, p=0"),
        Sample((x(2, 4, 6), None, -100.0, 0.7, 1, 0.3, False), desc="triangle, eval"),
        Sample((x(3, 5), None, 0.0, 2.0, None, 1.0, True), desc="no mask, p=1"),
    ]


def _torch_native(torch):
    def ref(x, mask, fill_value, scale, diagonal, p, train):
        if diagonal is not None:
            mask = torch.ones(x.shape[-2:], dtype=torch.bool).tril(diagonal)
        z = x * scale if mask is None else _torch_masked(torch, x, mask, fill_value, scale)
        s = torch.softmax(z, -1)
        drop = train and p > 0
        keep = torch.zeros(x.shape, dtype=torch.bool) if drop else torch.zeros(0, dtype=torch.bool)
        return _dropped(torch, s, p, train), s, keep

    return ref


def _bias_samples(dtype, rng, dropout):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    extra = ({"p": 0.0},) if dropout else ({},)
    out = []
    for kw in extra:
        out += [
            Sample((x(4, 6), x(6)), dict(kw, axis=1), desc="last axis"),
            Sample((x(2, 3, 5), x(3)), dict(kw, axis=1), desc="middle axis"),
            Sample((x(2, 3, 5), x(5)), dict(kw, axis=-1), desc="negative axis"),
            Sample((x(7), x(7)), dict(kw, axis=0), desc="1-d"),
            Sample((x(0, 4), x(4)), dict(kw, axis=1), desc="empty"),
            Sample((x(4, 6), x(5)), dict(kw, axis=1), desc="bias size differs (error)"),
        ]
    if dropout:
        out.append(Sample((x(3, 4), x(4)), {"p": 1.0, "axis": 1}, desc="p=1"))
    return out


def _torch_bias(torch, a, b, axis):
    axis = axis % a.dim()
    shape = [1] * a.dim()
    shape[axis] = b.shape[0]
    return a + b.reshape(shape)


def _torch_bias_gelu(torch):
    return lambda a, b, axis: torch.nn.functional.gelu(_torch_bias(torch, a, b, axis))


def _torch_bias_dropout(torch):
    return lambda a, b, p=0.5, axis=None: _dropped(torch, _torch_bias(torch, a, b, axis), p, True)


def _native_bias_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    return [
        Sample((x(3, 4, 5), x(4), 0.0, 1), desc="p=0"),
        Sample((x(3, 4), x(4), 1.0, -1), desc="p=1"),
    ]


def _torch_native_bias(torch):
    def ref(a, b, p, axis):
        keep = torch.zeros(a.shape, dtype=torch.bool) if p > 0 else torch.zeros(0, dtype=torch.bool)
        return _dropped(torch, _torch_bias(torch, a, b, axis), p, True), keep

    return ref


def _c(name):
    return lambda lib: getattr(lib._C, name)


add(
    OpInfo("fused_scale_mask_softmax", "fused", FLOATS, _masked_softmax_samples,
           fn=_c("fused_scale_mask_softmax"), ref=_torch_scale_mask_softmax, method=""),
    OpInfo("fused_scale_mask_softmax_dropout", "fused", FLOATS, _scale_mask_softmax_dropout_samples,
           fn=_c("fused_scale_mask_softmax_dropout"), ref=_torch_scale_mask_softmax_dropout, method=""),
    OpInfo("fused_scale_tril_softmax_mask_scale", "fused", FLOATS, _tril_samples,
           fn=_c("fused_scale_tril_softmax_mask_scale"), ref=_torch_tril, method=""),
    OpInfo("native_fused_masked_softmax_dropout", "fused", FLOATS, _native_samples,
           fn=_c("native_fused_masked_softmax_dropout"), ref=_torch_native, method=""),
    OpInfo("fused_bias_add_gelu", "fused", FLOATS, lambda d, r: _bias_samples(d, r, False),
           fn=_c("fused_bias_add_gelu"), ref=_torch_bias_gelu, method=""),
    OpInfo("fused_bias_add_dropout", "fused", FLOATS, lambda d, r: _bias_samples(d, r, True),
           fn=_c("fused_bias_add_dropout"), ref=_torch_bias_dropout, method=""),
    OpInfo("native_fused_bias_add_dropout", "fused", FLOATS, _native_bias_samples,
           fn=_c("native_fused_bias_add_dropout"), ref=_torch_native_bias, method=""),
)


def _matmul_bias_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    return [
        Sample((x(2, 3, 5), x(4, 5), x(4)), desc="3-d input"),
        Sample((x(3, 5), x(4, 5), x(4), x(3, 4)), {"alpha": 0.5, "beta": 2.0}, desc="add, alpha, beta"),
        Sample((x(3, 5), x(4, 5), x(4), x(3, 4)), {"beta": 0.0}, desc="beta 0"),
        Sample((x(5), x(4, 5), x(4)), desc="1-d input"),
        Sample((x(0, 5), x(4, 5), x(4)), desc="no rows"),
        Sample((x(3, 0), x(4, 0), x(4)), desc="k = 0"),
        Sample((x(3, 5), x(4, 6), x(4)), desc="weight's k differs (error)"),
    ]


def _torch_matmul_bias(torch):
    def ref(x, weight, bias, _add_to_output=None, alpha=1.0, beta=1.0):
        y = alpha * (x @ weight.T) + bias
        return y if _add_to_output is None else y + beta * _add_to_output

    return ref


def _rms_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    return [
        Sample((x(2, 3, 6), x(6), [6], 1e-6), desc="last dim"),
        Sample((x(2, 3, 4), x(3, 4), [3, 4]), {"epsilon": 1e-3}, desc="two dims"),
        Sample((x(4, 37), None, [37], 1e-6), desc="no weight, long rows"),
        Sample((x(0, 5), x(5), [5], 1e-6), desc="empty"),
        Sample((x(2, 5), x(4), [4], 1e-6), desc="normalized_shape differs (error)"),
    ]


def _torch_rms(torch):
    return lambda x, weight, normalized_shape, epsilon=1e-6: torch.nn.functional.rms_norm(
        x, normalized_shape, weight, epsilon)


def _skip_rms_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    return [
        Sample((x(2, 3, 6),), {"weight": x(6), "bias": x(6), "skip": x(2, 3, 6), "alpha": 0.3}, desc="all terms"),
        Sample((x(4, 6),), {"weight": x(6), "epsilon": 1e-3}, desc="weight only"),
        Sample((x(4, 6),), {"skip": x(4, 6), "alpha": 2.0}, desc="skip only"),
        Sample((x(4, 6),), {"bias": x(6)}, desc="bias only"),
    ]


def _torch_skip_rms(torch):
    def ref(x, weight=None, bias=None, skip=None, epsilon=1e-5, alpha=10.0):
        h = x if bias is None else x + bias
        h = h if skip is None else h + alpha * skip
        return torch.nn.functional.rms_norm(h, [x.shape[-1]], weight, epsilon)

    return ref


add(
    OpInfo("fused_matmul_bias", "fused", MATMUL_DTYPES, _matmul_bias_samples, fn=_c("fused_matmul_bias"),
           ref=_torch_matmul_bias, method=""),
    OpInfo("rms_norm", "fused", FLOATS, _rms_samples, fn=_c("rms_norm"), ref=_torch_rms, method=""),
    OpInfo("skip_rms_norm", "fused", FLOATS, _skip_rms_samples, fn=_c("skip_rms_norm"), ref=_torch_skip_rms,
           method=""),
)


def _glu_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    out = []
    for act in ("none", "sigmoid", "relu", "gelu", "fast_gelu", "silu"):
        out += [
            Sample((x(2, 3, 5), x(8, 5), x(8)), {"activation": act}, desc=f"halves, {act}"),
            Sample((x(3, 5), x(4, 5), x(4), x(4, 5), x(4)), {"activation": act}, desc=f"w and v, {act}"),
        ]
    return out + [
        Sample((x(3, 5), x(6, 5)), desc="no bias"),
        Sample((x(3, 5), x(4, 5)), {"v": x(4, 5)}, desc="w and v, no bias"),
        Sample((x(0, 5), x(6, 5), x(6)), desc="no rows"),
        Sample((x(3, 5), x(5, 5), x(5)), desc="odd w without v (error)"),
    ]


def _torch_glu(torch):
    acts = {"none": lambda g: g, "sigmoid": torch.sigmoid, "relu": torch.relu,
            "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu,
            "fast_gelu": lambda g: torch.nn.functional.gelu(g, approximate="tanh")}

    def ref(x, w, b=None, v=None, c=None, activation="none"):
        wx = x @ w.T + (0 if b is None else b)
        if v is None:
            if w.shape[0] % 2:
                raise RuntimeError("odd w")
            hid, gate = wx.chunk(2, dim=-1)
        else:
            hid, gate = wx, x @ v.T + (0 if c is None else c)
        return hid * acts[activation](gate)

    return ref


add(OpInfo("fused_glu", "fused", MATMUL_DTYPES, _glu_samples, fn=_c("fused_glu"), ref=_torch_glu, method=""))


def _native_glu_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    return [
        Sample((x(2, 3, 5), x(8, 5), x(8), None, None, "silu"), desc="halves"),
        Sample((x(3, 5), x(4, 5), x(4), x(4, 5), x(4), "sigmoid"), desc="w and v"),
        Sample((x(3, 5), x(4, 5), None, x(4, 5), None, "none"), desc="no bias"),
    ]


def _torch_native_glu(torch):
    glu = _torch_glu(torch)

    def ref(x, w, b, v, c, activation):
        k = x.shape[-1]
        wx = x.reshape(-1, k) @ w.T + (0 if b is None else b)
        p = wx if v is None else torch.cat([wx, x.reshape(-1, k) @ v.T + (0 if c is None else c)], 1)
        return glu(x, w, b, v, c, activation), p

    return ref


add(OpInfo("native_fused_glu", "fused", MATMUL_DTYPES, _native_glu_samples, fn=_c("native_fused_glu"),
           ref=_torch_native_glu, method=""))


def _mha_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    B, M, N, H, K, Kv = 2, 5, 6, 3, 4, 2
    qkv = lambda M=M, N=N: (x(B, M, H * K), x(B, N, H * K), x(B, N, H * Kv), H)  # noqa: E731
    return [
        Sample(qkv(), desc="plain"),
        Sample(qkv(N=M), {"causal": True}, desc="causal"),
        Sample(qkv(), {"causal": True, "causal_diagonal_offset": 2}, desc="causal with offset"),
        Sample(qkv(), {"attn_bias": x(B, 1, M, N)}, desc="bias over heads"),
        Sample(qkv(), {"attn_bias": x(N), "causal": True}, desc="key bias and causal"),
        Sample((x(B, M, 7), x(B, N, 7), x(B, N, 6), H), desc="hidden not a multiple of heads (error)"),
    ]


def _torch_mha(torch):
    def ref(query, key, value, num_heads, causal=False, attn_bias=None, causal_diagonal_offset=0):
        B, M, HK = query.shape
        N, H = key.shape[1], num_heads
        if HK % H or key.shape[2] % H or value.shape[2] % H:
            raise RuntimeError("hidden size not a multiple of num_heads")
        K, Kv = HK // H, value.shape[2] // H
        q = query.reshape(B, M, H, K).transpose(1, 2)
        k = key.reshape(B, N, H, K).transpose(1, 2)
        v = value.reshape(B, N, H, Kv).transpose(1, 2)
        s = q @ k.transpose(-1, -2) / K ** 0.5
        if attn_bias is not None:
            s = s + attn_bias
        if causal:
            keep = torch.ones(M, N, dtype=torch.bool).tril(causal_diagonal_offset)
            s = s.masked_fill(~keep, float("-inf"))
        return (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, M, H * Kv)

    return ref


add(OpInfo("fused_multi_head_attention_inference", "fused", MATMUL_DTYPES, _mha_samples,
           fn=_c("fused_multi_head_attention_inference"), ref=_torch_mha, method="",
           tol={"float32": (2e-5, 2e-5)}))


def _self_attention_samples(dtype, rng):
    x = lambda *s: arr(rng, s, dtype, _D)  # noqa: E731
    return [
        Sample((x(5, 2, 2 * 3 * 4),), {"head_size": 4, "alpha": 0.5}, desc="2 heads"),
        Sample((x(3, 1, 3 * 3 * 2),), {"head_size": 2}, desc="3 heads, alpha 1"),
        Sample((x(4, 2, 10),), {"head_size": 4}, desc="hidden not a multiple of 3 * head_size (error)"),
    ]


def _torch_self_attention(torch):
    def ref(hidden_states, head_size=8, alpha=1.0):
        S, B, HD = hidden_states.shape
        if HD % (3 * head_size):
            raise RuntimeError("hidden size not a multiple of 3 * head_size")
        r = hidden_states.reshape(S, B, -1, 3 * head_size)
        q, k, v = (r[..., i * head_size:(i + 1) * head_size].permute(1, 2, 0, 3) for i in range(3))
        return alpha * (q @ k.transpose(2, 3)), v

    return ref


add(OpInfo("fused_self_attention", "fused", MATMUL_DTYPES, _self_attention_samples, fn=_c("fused_self_attention"),
           ref=_torch_self_attention, method=""))
