"""Multi-head self-attention shared by the transformer models: a fused (ViT, GPT-2) or split
(BERT) q/k/v projection, then scaled_dot_product_attention, as both libraries' users write it."""


def heads_split(x, heads):
    n, t, d = x.shape
    return x.reshape(n, t, heads, d // heads).transpose(1, 2)


def heads_merge(x):
    n, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(n, t, h * dh)


def make_self_attention(lib, fused_qkv):
    nn = lib.nn
    F = nn.functional

    class SelfAttention(nn.Module):
        def __init__(self, dim, heads, causal=False):
            super().__init__()
            self.heads, self.causal = heads, causal
            if fused_qkv:
                self.qkv = nn.Linear(dim, 3 * dim)
            else:
                self.query, self.key, self.value = (nn.Linear(dim, dim) for _ in range(3))
            self.proj = nn.Linear(dim, dim)

        def forward(self, x, mask=None):
            if fused_qkv:
                q, k, v = self.qkv(x).chunk(3, dim=-1)
            else:
                q, k, v = self.query(x), self.key(x), self.value(x)
            q, k, v = (heads_split(t, self.heads) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=self.causal)
            return self.proj(heads_merge(y))

    return SelfAttention
