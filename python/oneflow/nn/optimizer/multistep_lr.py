"""Upstream OneFlow's `oneflow.nn.optimizer.multistep_lr` path: oneflow.optim.lr_scheduler.MultiStepLR."""
from ...optim.lr_scheduler import MultiStepLR  # noqa: F401
