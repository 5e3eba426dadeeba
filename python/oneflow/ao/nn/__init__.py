"""oneflow.ao.nn: the module versions used by oneflow.ao.quantization's eager QAT flow
(qat: training with fake-quantized weights; quantized: what convert produces)."""
from . import intrinsic, qat, quantized  # noqa: F401
