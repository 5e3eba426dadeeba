"""oneflow.optim: optimizers (each update is one fused C++ op per param group, see
src/ops/table/optim.yaml; Rprop, ASGD, Adafactor and Muon compose table ops per parameter) and
learning-rate schedulers."""
from . import lr_scheduler  # noqa: F401
from .adam import Adam, Adamax, AdamW, NAdam, RAdam  # noqa: F401
from .adaptive import Adadelta, Adagrad, RMSprop  # noqa: F401
from .classic import ASGD, Rprop  # noqa: F401
from .lamb import LAMB  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .matrix import Adafactor, Muon  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from . import swa_utils  # noqa: F401,E402  (AveragedModel, SWALR, update_bn)
