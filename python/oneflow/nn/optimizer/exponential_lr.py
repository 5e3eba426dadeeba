"""Upstream OneFlow's `oneflow.nn.optimizer.exponential_lr` path: oneflow.optim.lr_scheduler.ExponentialLR."""
from ...optim.lr_scheduler import ExponentialLR  # noqa: F401
