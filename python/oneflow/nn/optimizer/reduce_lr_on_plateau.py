"""Upstream OneFlow's `oneflow.nn.optimizer.reduce_lr_on_plateau` path: oneflow.optim.lr_scheduler.ReduceLROnPlateau."""
from ...optim.lr_scheduler import ReduceLROnPlateau  # noqa: F401
