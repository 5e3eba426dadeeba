"""oneflow.asyncs and upstream's `_oneflow_internal.eager` synchronisation: the controls upstream
OneFlow has over its asynchronous runtime (a virtual machine that queues every op on worker
threads), with the meaning they keep here.

Ops here run on the calling thread (CPU) or are queued on the device's CUDA stream
(docs/architecture.md), so:
- `eager.Sync()` ("wait until every op this process issued has finished") waits for the CUDA
  devices' streams; CPU work is already done when an op returns.
- `eager.ClusterSync()` is that plus a barrier of the launched job's processes.
- `asyncs.thread(asyncs.Thread())` picks the worker thread ops of its block launch on; there is
  no worker thread to pick, so the block's ops run as they would outside it, in the same order
  and with the same results (upstream's contract: the thread changes where, not what).
"""
import functools
import threading

from . import cuda as _cuda
from ._export import export_value


def sync():
    """Every op this process issued has finished (upstream's `_oneflow_internal.eager.Sync`,
    exported with `ClusterSync` by oneflow/comm.py)."""
    if _cuda.is_available():
        for i in range(_cuda.device_count()):
            _cuda.synchronize(i)


_ids = iter(range(1, 1 << 62))
_ids_lock = threading.Lock()


class Thread:
    """A worker thread ops can be launched on (upstream's AsyncThread). Each has its own id; the
    default thread is 0."""

    def __init__(self):
        with _ids_lock:
            self.thread_global_id = next(_ids)

    def __repr__(self):
        return f"oneflow.asyncs.Thread(thread_global_id={self.thread_global_id})"


export_value(Thread, "flow._oneflow_internal.AsyncThread")


class thread:
    """Context manager (and, instantiated, a decorator): the ops of its block launch on
    `worker_thread`. Ops here run where they are called (module docstring): the block's ops run
    as outside it."""

    def __init__(self, worker_thread):
        if not isinstance(worker_thread, Thread):
            raise TypeError(f"asyncs.thread: expected an oneflow.asyncs.Thread, got {type(worker_thread).__name__}")
        self.worker_thread_ = worker_thread

    def __enter__(self):
        return self

    def __exit__(self, type, value, traceback):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return run
