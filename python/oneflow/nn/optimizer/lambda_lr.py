"""Upstream OneFlow's `oneflow.nn.optimizer.lambda_lr` path: oneflow.optim.lr_scheduler.LambdaLR."""
from ...optim.lr_scheduler import LambdaLR  # noqa: F401
