"""Upstream OneFlow's `oneflow.nn.optimizer.warmup_lr` path: oneflow.optim.lr_scheduler.WarmupLR."""
from ...optim.lr_scheduler import WarmupLR  # noqa: F401
