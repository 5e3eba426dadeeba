"""Upstream OneFlow's `oneflow.nn.optimizer.linear_lr` path: oneflow.optim.lr_scheduler.LinearLR."""
from ...optim.lr_scheduler import LinearLR  # noqa: F401
