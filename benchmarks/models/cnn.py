"""The example's CNN (examples/train_fashion_mnist.py: two conv-BN-ReLU-pool stages and an MLP
head on 28x28 grey images). Benchmark: batch 64."""
from ._common import classification_batch, cross_entropy

SIZES = {"full": dict(batch=64, hw=28, c1=32, c2=64, hidden=128),
         "tiny": dict(batch=4, hw=28, c1=4, c2=8, hidden=16)}
UNIT = "images"
REFERENCE_PARAMS = None  # no outside reference: the example defines it


def items(cfg):
    return cfg["batch"]


def build(lib, cfg):
    nn = lib.nn
    c1, c2 = cfg["c1"], cfg["c2"]
    return nn.Sequential(
        nn.Conv2d(1, c1, 3, padding=1), nn.BatchNorm2d(c1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, 3, padding=1), nn.BatchNorm2d(c2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(c2 * (cfg["hw"] // 4) ** 2, cfg["hidden"]), nn.ReLU(), nn.Dropout(0.3),
        nn.Linear(cfg["hidden"], 10))


def batch(lib, cfg, rng):
    return classification_batch(lib, rng, cfg["batch"], 1, cfg["hw"], 10)


loss = cross_entropy
