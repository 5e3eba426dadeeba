"""Upstream OneFlow's `oneflow.nn.optimizer.cosine_decay_lr` path: oneflow.optim.lr_scheduler.CosineDecayLR."""
from ...optim.lr_scheduler import CosineDecayLR  # noqa: F401
