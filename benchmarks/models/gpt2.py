"""GPT-2 small (HuggingFace GPT2LMHeadModel's layout: 12 pre-norm blocks of 12 heads, causal
attention, tanh-GELU MLP, final norm, LM head tied to the token embedding), 124,439,808 parameters.
Benchmark: batch 4, sequence 256, next-token cross entropy over the 50,257-token vocabulary."""
from ._attention import make_self_attention

SIZES = {"full": dict(batch=4, seq=256, vocab=50257, dim=768, depth=12, heads=12, positions=1024),
         "tiny": dict(batch=2, seq=16, vocab=100, dim=32, depth=2, heads=4, positions=32)}
UNIT = "tokens"
REFERENCE_PARAMS = 124_439_808  # transformers.GPT2LMHeadModel(gpt2), tied head counted once


def items(cfg):
    return cfg["batch"] * cfg["seq"]


def build(lib, cfg):
    nn = lib.nn
    Attention = make_self_attention(lib, fused_qkv=True)
    dim = cfg["dim"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(dim)
            self.attn = Attention(dim, cfg["heads"], causal=True)
            self.ln_2 = nn.LayerNorm(dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(cfg["vocab"], dim)
            self.wpe = nn.Embedding(cfg["positions"], dim)
            self.h = nn.Sequential(*[Block() for _ in range(cfg["depth"])])
            self.ln_f = nn.LayerNorm(dim)
            self.lm_head = nn.Linear(dim, cfg["vocab"], bias=False)
            self.lm_head.weight = self.wte.weight  # tied embeddings

        def forward(self, ids):
            positions = lib.arange(ids.shape[1]).unsqueeze(0)
            return self.lm_head(self.ln_f(self.h(self.wte(ids) + self.wpe(positions))))

    return GPT2()


def batch(lib, cfg, rng):
    ids = rng.integers(0, cfg["vocab"], (cfg["batch"], cfg["seq"] + 1))
    return (lib.tensor(ids[:, :-1]),), lib.tensor(ids[:, 1:])


def loss(lib, out, target):
    return lib.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))
