"""oneflow.amp: automatic mixed precision (autocast regions and gradient scaling), as torch.amp.

The casting itself happens in the op layer: each op the op table marks `autocast:` checks the
thread-local autocast state in its C++ entry (src/autograd/autocast.h); this package only turns
the state on and off.
"""

from .autocast_mode import (  # noqa: F401
    autocast,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .grad_scaler import GradScaler, OptState, StaticGradScaler  # noqa: F401
