"""oneflow.ao: PyTorch's architecture-optimisation namespace (quantization; nn holds the QAT and
converted modules it swaps in)."""
from . import nn, quantization  # noqa: F401
