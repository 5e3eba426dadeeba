"""oneflow.nn.attention: torch.nn.attention's backend selection for scaled_dot_product_attention.
oneflow has one attention implementation per device (the fused kernel where it applies, else the
composition: nn/_functional_attention.py), so `sdpa_kernel` checks its arguments and leaves the
choice as it is; the results are those of every PyTorch backend up to rounding."""
import contextlib
import enum


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    items = backends if isinstance(backends, (list, tuple, set)) else [backends]
    for b in items:
        if not isinstance(b, SDPBackend):
            raise TypeError(f"sdpa_kernel(): expected SDPBackend values, got {b!r}")
    yield
