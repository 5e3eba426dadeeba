"""Upstream OneFlow's `oneflow.nn.optimizer.chained_scheduler` path: oneflow.optim.lr_scheduler.ChainedScheduler."""
from ...optim.lr_scheduler import ChainedScheduler  # noqa: F401
