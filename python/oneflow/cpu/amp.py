"""oneflow.cpu.amp: the CPU forms of oneflow.amp."""

from .. import amp as _amp
from .. import _oneflow_internal as _C


class autocast(_amp.autocast):  # noqa: N801
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        super().__init__(
            "cpu",
            dtype=_C.bfloat16 if dtype is None else dtype,
            enabled=enabled,
            cache_enabled=cache_enabled,
        )


GradScaler = _amp.GradScaler
