"""oneflow.utils: data loading (utils.data), vision datasets/transforms (utils.vision), dlpack
exchange (utils.dlpack), activation checkpointing (utils.checkpoint)."""

from . import checkpoint, data, dlpack, vision  # noqa: F401
