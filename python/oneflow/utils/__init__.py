"""oneflow.utils: data loading (utils.data), vision datasets/transforms (utils.vision), dlpack
exchange (utils.dlpack), activation checkpointing (utils.checkpoint), tensors shared with PyTorch
(utils.tensor), pretrained weights (utils.model_zoo)."""

from . import checkpoint, data, dlpack, model_zoo, tensor, vision  # noqa: F401
