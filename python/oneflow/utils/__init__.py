"""oneflow.utils: data loading (utils.data), vision datasets/transforms (utils.vision), dlpack
exchange (utils.dlpack)."""

from . import data, dlpack, vision  # noqa: F401
