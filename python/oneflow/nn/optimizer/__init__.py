"""oneflow.nn.optimizer: where upstream OneFlow keeps its optimizers and lr schedulers
(`oneflow.nn.optimizer.lr_scheduler`, `.swa_utils`, ...); code written for it imports them from
here. The same classes as oneflow.optim's, which defines them; each scheduler also has
upstream's module of its own (`oneflow.nn.optimizer.step_lr.StepLR`, ...), imported by path."""
from ...optim import (  # noqa: F401
    ASGD, LAMB, LBFGS, SGD, Adadelta, Adafactor, Adagrad, Adam, Adamax, AdamW, Muon, NAdam, Optimizer,
    RAdam, RMSprop, Rprop)
from . import lr_scheduler, optimizer, swa_utils  # noqa: F401
