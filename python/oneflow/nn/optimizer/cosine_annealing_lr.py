"""Upstream OneFlow's `oneflow.nn.optimizer.cosine_annealing_lr` path: oneflow.optim.lr_scheduler.CosineAnnealingLR."""
from ...optim.lr_scheduler import CosineAnnealingLR  # noqa: F401
