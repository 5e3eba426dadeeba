"""oneflow.utils.global_view: converting whole nests of tensors (state dicts) between local and
global, and the global_mode scope (upstream's module; LiBai imports global_mode from here)."""
from .global_mode import current_global_mode, global_mode
from .to_global import to_global
from .to_local import to_local

__all__ = ["to_global", "to_local", "global_mode", "current_global_mode"]
