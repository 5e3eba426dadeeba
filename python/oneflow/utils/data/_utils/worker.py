"""Upstream's `oneflow.utils.data._utils.worker`: the DataLoader worker's names (defined in
`utils/data/_worker.py`)."""
from .._worker import ExceptionWrapper, WorkerInfo, get_worker_info  # noqa: F401
