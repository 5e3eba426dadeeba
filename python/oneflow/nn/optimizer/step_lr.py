"""Upstream OneFlow's `oneflow.nn.optimizer.step_lr` path: oneflow.optim.lr_scheduler.StepLR."""
from ...optim.lr_scheduler import StepLR  # noqa: F401
