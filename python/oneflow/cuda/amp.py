"""oneflow.cuda.amp: the CUDA forms of oneflow.amp (deprecated in PyTorch, still common)."""

from .. import amp as _amp
from .. import _oneflow_internal as _C


class autocast(_amp.autocast):  # noqa: N801
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        super().__init__(
            "cuda",
            dtype=_C.float16 if dtype is None else dtype,
            enabled=enabled,
            cache_enabled=cache_enabled,
        )


class GradScaler(_amp.GradScaler):
    def __init__(
        self,
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )


def custom_fwd(fwd=None, *, cast_inputs=None):
    """torch.cuda.amp.custom_fwd: oneflow.amp.custom_fwd for device_type='cuda'."""
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """torch.cuda.amp.custom_bwd: oneflow.amp.custom_bwd for device_type='cuda'."""
    return _amp.custom_bwd(bwd, device_type="cuda")
