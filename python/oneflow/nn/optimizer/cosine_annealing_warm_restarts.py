"""Upstream OneFlow's `oneflow.nn.optimizer.cosine_annealing_warm_restarts` path: oneflow.optim.lr_scheduler.CosineAnnealingWarmRestarts."""
from ...optim.lr_scheduler import CosineAnnealingWarmRestarts  # noqa: F401
