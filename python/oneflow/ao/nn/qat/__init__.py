"""PyTorch-style QAT modules (torch.ao.nn.qat): float modules whose weight passes through
`weight_fake_quant` (made from the module's qconfig) at every forward."""
from .modules import Conv1d, Conv2d, Conv3d, Linear  # noqa: F401

__all__ = ["Conv1d", "Conv2d", "Conv3d", "Linear"]
