"""oneflow.utils: dlpack exchange (and data loading, with its own issue)."""

from . import dlpack  # noqa: F401
