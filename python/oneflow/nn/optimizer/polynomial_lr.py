"""Upstream OneFlow's `oneflow.nn.optimizer.polynomial_lr` path: oneflow.optim.lr_scheduler.PolynomialLR."""
from ...optim.lr_scheduler import PolynomialLR  # noqa: F401
