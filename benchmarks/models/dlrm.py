"""A DLRM-style recommender (Naumov et al. 2019 layout): a bottom MLP over 13 dense features, 26
categorical features looked up in their own embedding tables, pairwise dot-product interaction,
a top MLP to one logit, binary cross entropy. Benchmark: batch 512, tables of 100,000 rows x 64."""
import numpy as np

SIZES = {"full": dict(batch=512, dense=13, tables=26, rows=100_000, dim=64, bottom=(512, 256), top=(512, 256)),
         "tiny": dict(batch=4, dense=13, tables=3, rows=20, dim=4, bottom=(8,), top=(8,))}
UNIT = "samples"
REFERENCE_PARAMS = None


def items(cfg):
    return cfg["batch"]


def _mlp(nn, sizes, last_relu):
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(a, b))
        if last_relu or i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def build(lib, cfg):
    nn = lib.nn
    dim, k = cfg["dim"], cfg["tables"] + 1
    pairs = k * (k - 1) // 2

    class DLRM(nn.Module):
        def __init__(self):
            super().__init__()
            self.bottom = _mlp(nn, (cfg["dense"],) + cfg["bottom"] + (dim,), last_relu=True)
            self.embeddings = nn.ModuleList([nn.Embedding(cfg["rows"], dim) for _ in range(cfg["tables"])])
            self.top = _mlp(nn, (dim + pairs,) + cfg["top"] + (1,), last_relu=False)
            rows, cols = np.tril_indices(k, -1)
            self.register_buffer("pair_index", lib.tensor(rows * k + cols))

        def forward(self, dense, sparse):
            d = self.bottom(dense)
            feats = lib.stack([d] + [e(sparse[:, i]) for i, e in enumerate(self.embeddings)], dim=1)
            inter = lib.bmm(feats, feats.transpose(1, 2)).flatten(1)[:, self.pair_index]
            return self.top(lib.cat([d, inter], dim=1)).squeeze(1)

    return DLRM()


def batch(lib, cfg, rng):
    n = cfg["batch"]
    dense = np.log1p(rng.exponential(3.0, (n, cfg["dense"]))).astype("float32")
    sparse = rng.integers(0, cfg["rows"], (n, cfg["tables"]))
    labels = (rng.random(n) < 0.25).astype("float32")
    return (lib.tensor(dense), lib.tensor(sparse)), lib.tensor(labels)


def loss(lib, out, target):
    return lib.nn.functional.binary_cross_entropy_with_logits(out, target)
