"""Upstream OneFlow's `oneflow.nn.optimizer.constant_lr` path: oneflow.optim.lr_scheduler.ConstantLR."""
from ...optim.lr_scheduler import ConstantLR  # noqa: F401
