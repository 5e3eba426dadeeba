"""ViT-S/16 (timm's vit_small_patch16_224: dim 384, 12 pre-norm blocks of 6 heads, MLP 1536, class
token, learned position embedding), 22,050,664 parameters. Benchmark: batch 8, 224x224."""
from ._attention import make_self_attention
from ._common import classification_batch, cross_entropy

SIZES = {"full": dict(batch=8, hw=224, patch=16, dim=384, depth=12, heads=6, mlp=1536, classes=1000),
         "tiny": dict(batch=2, hw=32, patch=8, dim=32, depth=2, heads=4, mlp=64, classes=10)}
UNIT = "images"
REFERENCE_PARAMS = 22_050_664  # timm.create_model("vit_small_patch16_224")


def items(cfg):
    return cfg["batch"]


def build(lib, cfg):
    nn = lib.nn
    Attention = make_self_attention(lib, fused_qkv=True)
    dim = cfg["dim"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim, eps=1e-6)
            self.attn = Attention(dim, cfg["heads"])
            self.norm2 = nn.LayerNorm(dim, eps=1e-6)
            self.mlp = nn.Sequential(nn.Linear(dim, cfg["mlp"]), nn.GELU(), nn.Linear(cfg["mlp"], dim))

        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            tokens = (cfg["hw"] // cfg["patch"]) ** 2 + 1
            self.patch_embed = nn.Conv2d(3, dim, cfg["patch"], stride=cfg["patch"])
            self.cls_token = nn.Parameter(lib.zeros(1, 1, dim))
            self.pos_embed = nn.Parameter(lib.randn(1, tokens, dim) * 0.02)
            self.blocks = nn.Sequential(*[Block() for _ in range(cfg["depth"])])
            self.norm = nn.LayerNorm(dim, eps=1e-6)
            self.head = nn.Linear(dim, cfg["classes"])

        def forward(self, x):
            x = self.patch_embed(x).flatten(2).transpose(1, 2)
            x = lib.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
            return self.head(self.norm(self.blocks(x))[:, 0])

    return ViT()


def batch(lib, cfg, rng):
    return classification_batch(lib, rng, cfg["batch"], 3, cfg["hw"], cfg["classes"])


loss = cross_entropy
