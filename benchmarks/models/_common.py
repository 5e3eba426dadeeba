"""Pieces the image classifiers share: a random batch and the cross-entropy loss."""


def classification_batch(lib, rng, n, c, hw, classes):
    x = rng.standard_normal((n, c, hw, hw)).astype("float32")
    y = rng.integers(0, classes, n)
    return (lib.tensor(x),), lib.tensor(y)


def cross_entropy(lib, out, target):
    return lib.nn.functional.cross_entropy(out, target)
