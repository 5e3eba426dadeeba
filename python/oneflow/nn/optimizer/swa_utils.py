"""Upstream OneFlow's `oneflow.nn.optimizer.swa_utils` path: oneflow.optim.swa_utils's
AveragedModel, SWALR and update_bn."""
from ...optim.swa_utils import SWALR, AveragedModel, update_bn  # noqa: F401
