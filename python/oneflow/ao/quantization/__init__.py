"""oneflow.ao.quantization: PyTorch's eager-mode quantization-aware training on oneflow
(QuantStub / DeQuantStub, QConfig and get_default_qat_qconfig, prepare_qat, convert, observers and
fake-quantize modules with PyTorch's formulas). OneFlow's own QAT modules (its formulas) are
oneflow.nn.qat and oneflow.nn.FakeQuantization / MinMaxObserver / MovingAverageMinMaxObserver."""
from .fake_quantize import *  # noqa: F401,F403
from .fuse_modules import *  # noqa: F401,F403
from .observer import *  # noqa: F401,F403
from .qconfig import *  # noqa: F401,F403
from .quantize import *  # noqa: F401,F403
from .stubs import *  # noqa: F401,F403
