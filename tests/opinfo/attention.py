"""OpInfo of the fused attention op (src/ops/table/attention.yaml), against torch's
scaled_dot_product_attention on the same 3-D operands. The op's output is compared (and
differentiated); its second output, the rows' logsumexp, is checked in
tests/test_nn_attention_fused.py."""

from .core import *  # noqa: F401,F403

_D = Domain(-1.0, 1.0, -2, 2)
_TOL = {"float32": (2e-5, 2e-5)}


def _attention_samples(dtype, rng):
    def a(*shape):
        return arr(rng, shape, dtype, _D)

    def keep_first(*shape):  # a bool mask (True = attend) where every row keeps key 0
        m = rng.uniform(size=shape) > 0.4
        m[..., 0] = True
        return Arr(m, "bool")

    B, L, S, E, Ev = 2, 5, 7, 4, 3
    qkv = lambda L=L, S=S, E=E, Ev=Ev, B=B: [a(B, L, E), a(B, S, E), a(B, S, Ev)]  # noqa: E731
    return [
        Sample(tuple(qkv()), desc="plain"),
        Sample(tuple(qkv()), {"scale": 0.7}, desc="scale"),
        Sample(tuple(qkv()), {"attn_mask": a(B, L, S)}, desc="float mask"),
        Sample(tuple(qkv()), {"attn_mask": a(L, S)}, desc="float mask broadcast over batch"),
        Sample(tuple(qkv()), {"attn_mask": a(1, 1, S)}, desc="float key mask"),
        Sample(tuple(qkv()), {"attn_mask": keep_first(L, S)}, desc="bool mask"),
        Sample(tuple(qkv()), {"is_causal": True}, desc="causal"),
        Sample(tuple(qkv(L=7, S=4)), {"is_causal": True}, desc="causal, more queries than keys"),
        Sample(tuple(qkv(L=3, S=6)), {"is_causal": True, "attn_mask": a(3, 6)}, desc="causal and mask"),
        Sample(tuple(qkv(E=1, Ev=1)), desc="E = 1"),
        Sample(tuple(qkv(B=0)), desc="zero batch"),
        Sample(tuple(qkv(L=0)), desc="no queries"),
        Sample(tuple([a(B, L, E), a(B, 5, E + 1), a(B, 5, Ev)]), desc="key features differ (error)"),
        Sample(tuple(qkv()), {"attn_mask": a(B, 3, S)}, desc="mask not broadcastable (error)"),
    ]


def _torch_attention(torch):
    def ref(query, key, value, attn_mask=None, scale=1.0, is_causal=False):
        if attn_mask is not None and is_causal:  # torch refuses both; the op adds them
            keep = torch.ones(query.shape[-2], key.shape[-2], dtype=torch.bool).tril()
            attn_mask = (attn_mask & keep if attn_mask.dtype == torch.bool
                         else attn_mask.masked_fill(~keep, float("-inf")))
            is_causal = False
        return torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask,
                                                                scale=scale, is_causal=is_causal)

    return ref


def _flow_attention(flow):
    def fn(query, key, value, attn_mask=None, scale=1.0, is_causal=False):
        return flow._C.fused_attention(query, key, value, attn_mask, scale, is_causal)[0]

    return fn


add(OpInfo("fused_attention", "attention", MATMUL_DTYPES, _attention_samples, fn=_flow_attention,
           ref=_torch_attention, method="", tol=_TOL))
