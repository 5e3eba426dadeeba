"""oneflow.backends.mps: Apple's Metal backend (not part of oneflow)."""


def is_available():
    return False


def is_built():
    return False
