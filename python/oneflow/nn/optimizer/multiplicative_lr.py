"""Upstream OneFlow's `oneflow.nn.optimizer.multiplicative_lr` path: oneflow.optim.lr_scheduler.MultiplicativeLR."""
from ...optim.lr_scheduler import MultiplicativeLR  # noqa: F401
