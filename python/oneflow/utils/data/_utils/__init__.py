"""Upstream OneFlow's `oneflow.utils.data._utils` path (torch's too), which libraries reach by
attribute: LiBai's trainer tests each batch with
`isinstance(data, flow.utils.data._utils.worker.ExceptionWrapper)`. Thin aliases of
`utils/data/_worker.py` and `_collate.py`, where the names are defined."""
from . import collate, worker  # noqa: F401
