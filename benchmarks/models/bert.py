"""A BERT-base encoder (HuggingFace BertModel's layout: word / position / token-type embeddings,
12 post-norm layers of 12 heads, FFN 3072, pooler), 109,482,240 parameters, with a 2-class head on
the pooled output for the training loss. Benchmark: batch 8, sequence 128, a padding mask."""
import numpy as np

from ._attention import make_self_attention

SIZES = {"full": dict(batch=8, seq=128, vocab=30522, dim=768, depth=12, heads=12, ffn=3072, positions=512),
         "tiny": dict(batch=2, seq=16, vocab=100, dim=32, depth=2, heads=4, ffn=64, positions=32)}
UNIT = "tokens"
REFERENCE_PARAMS = 109_482_240 + 768 * 2 + 2  # transformers.BertModel(bert-base-uncased) + the head


def items(cfg):
    return cfg["batch"] * cfg["seq"]


def build(lib, cfg):
    nn = lib.nn
    Attention = make_self_attention(lib, fused_qkv=False)
    dim = cfg["dim"]

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = Attention(dim, cfg["heads"])
            self.attention_norm = nn.LayerNorm(dim, eps=1e-12)
            self.ffn = nn.Sequential(nn.Linear(dim, cfg["ffn"]), nn.GELU(), nn.Linear(cfg["ffn"], dim))
            self.ffn_norm = nn.LayerNorm(dim, eps=1e-12)
            self.dropout = nn.Dropout(0.1)

        def forward(self, x, mask):
            x = self.attention_norm(x + self.dropout(self.attention(x, mask)))
            return self.ffn_norm(x + self.dropout(self.ffn(x)))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.word_embeddings = nn.Embedding(cfg["vocab"], dim)
            self.position_embeddings = nn.Embedding(cfg["positions"], dim)
            self.token_type_embeddings = nn.Embedding(2, dim)
            self.embeddings_norm = nn.LayerNorm(dim, eps=1e-12)
            self.layers = nn.ModuleList([Layer() for _ in range(cfg["depth"])])
            self.pooler = nn.Linear(dim, dim)
            self.classifier = nn.Linear(dim, 2)

        def forward(self, ids, token_types, keep):
            positions = lib.arange(ids.shape[1]).unsqueeze(0)
            x = self.word_embeddings(ids) + self.position_embeddings(positions) + self.token_type_embeddings(token_types)
            x = self.embeddings_norm(x)
            # additive mask over keys: 0 where kept, a large negative where padded
            mask = ((1.0 - keep.float()) * -10000.0)[:, None, None, :]
            for layer in self.layers:
                x = layer(x, mask)
            return self.classifier(lib.tanh(self.pooler(x[:, 0])))

    return Bert()


def batch(lib, cfg, rng):
    n, t = cfg["batch"], cfg["seq"]
    ids = rng.integers(0, cfg["vocab"], (n, t))
    types = (rng.random((n, t)) < 0.5).astype("int64")
    lengths = rng.integers(t // 2, t + 1, n)
    keep = (np.arange(t)[None, :] < lengths[:, None]).astype("int64")
    labels = rng.integers(0, 2, n)
    return (lib.tensor(ids), lib.tensor(types), lib.tensor(keep)), lib.tensor(labels)


def loss(lib, out, target):
    return lib.nn.functional.cross_entropy(out, target)
