"""Upstream OneFlow's `oneflow.nn.optimizer.optimizer` path: the Optimizer base class and
ParamGroup of oneflow.optim.optimizer."""
from ...optim.optimizer import Optimizer, ParamGroup  # noqa: F401
