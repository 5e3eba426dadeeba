"""oneflow.utils.global_view.global_mode / current_global_mode: a scope that names the placement
and sbp a block of code works in (LiBai's graphs open one around their build), and the query of
the innermost open scope.

Of upstream's three effects of an enabled scope, two hold here everywhere, scope or not:
`.device` of a global tensor (its local component's device) and `Tensor.to(device)` on one.
The third is not provided yet: factories (flow.randn, flow.zeros, ...) inside the scope make
local tensors as outside it, and code converts them with to_global explicitly."""
import threading

_state = threading.local()


def _stack():
    if not hasattr(_state, "stack"):
        _state.stack = []
    return _state.stack


class global_mode:
    """`with global_mode(True, placement=P, sbp=B):` / `with global_mode(False):`. Both placement
    and sbp are required when enabled (as upstream)."""

    def __init__(self, enabled, placement=None, sbp=None):
        from ..._global.placement import placement as Placement

        enabled = bool(enabled)
        if enabled:
            if placement is None or sbp is None:
                raise ValueError("global_mode: both placement and sbp are required when enabled")
            if not isinstance(placement, Placement):
                raise TypeError(f"global_mode: placement must be a oneflow.placement, got {type(placement).__name__}")
            sbp = tuple(sbp) if isinstance(sbp, (list, tuple)) else (sbp,)
        else:
            placement, sbp = None, None
        self._frame = (enabled, placement, sbp)

    def __enter__(self):
        _stack().append(self._frame)
        return self

    def __exit__(self, exc_type, exc, tb):
        _stack().pop()
        return False


class current_global_mode:
    """The innermost open global_mode scope: is_enabled, placement, sbp (a tuple)."""

    def __init__(self):
        stack = _stack()
        self._frame = stack[-1] if stack else (False, None, None)

    @property
    def is_enabled(self):
        return self._frame[0]

    @property
    def placement(self):
        return self._frame[1]

    @property
    def sbp(self):
        return self._frame[2]
