"""Upstream OneFlow's `oneflow.nn.optimizer.lr_scheduler` path: oneflow.optim.lr_scheduler's
classes (LRScheduler, the base class, and every scheduler)."""
from ...optim.lr_scheduler import *  # noqa: F401,F403
from ...optim.lr_scheduler import LRScheduler  # noqa: F401
