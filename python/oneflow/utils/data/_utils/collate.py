"""Upstream's `oneflow.utils.data._utils.collate`: the DataLoader's collate functions (defined in
`utils/data/_collate.py`)."""
from .._collate import default_collate, default_convert  # noqa: F401
