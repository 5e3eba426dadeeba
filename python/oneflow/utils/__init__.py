"""oneflow.utils: data loading (utils.data) and vision datasets/transforms (utils.vision)."""
from . import data, vision  # noqa: F401
