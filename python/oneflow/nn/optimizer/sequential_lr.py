"""Upstream OneFlow's `oneflow.nn.optimizer.sequential_lr` path: oneflow.optim.lr_scheduler.SequentialLR."""
from ...optim.lr_scheduler import SequentialLR  # noqa: F401
