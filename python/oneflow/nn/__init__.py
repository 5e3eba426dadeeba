"""oneflow.nn (modules arrive with their own issue); functional ops come from the op table."""
from . import functional  # noqa: F401
