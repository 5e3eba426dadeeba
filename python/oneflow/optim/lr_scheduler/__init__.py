"""oneflow.optim.lr_scheduler: PyTorch's schedulers plus OneFlow's CosineDecayLR, WarmupLR and
PolynomialLR(decay_batch, end_learning_rate, power, cycle) form."""
from ._base import (  # noqa: F401
    ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CosineDecayLR, ExponentialLR,
    LambdaLR, LinearLR, LRScheduler, MultiplicativeLR, MultiStepLR, PolynomialLR, StepLR,
    _LRScheduler,
)
from ._composite import (  # noqa: F401
    ChainedScheduler, CyclicLR, OneCycleLR, ReduceLROnPlateau, SequentialLR, WarmupLR, WarmUpLR,
)

LrScheduler = LRScheduler  # OneFlow's older spelling
