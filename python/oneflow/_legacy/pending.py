"""Asynchronous job calls of OneFlow 0.x (docs/job_functions.md, "Asynchronous calls").

In 0.x a job whose results come back through a callback (``-> tp.Callback[...]``) or a future (a
job without annotations: ``job(x).get()`` / ``.async_get(cb)``) returns at once: the runtime
runs the jobs in the order they were launched and calls the callbacks after each. Here one
worker thread plays the runtime: ``submit`` queues a job run, the worker runs the runs one after
another and, after each, the callbacks registered on its ``Future``. Synchronous calls
(``-> tp.Numpy`` ...), ``flow.sync_default_session()``, the session's end and model I/O wait
for everything queued (``sync``). An error of a queued run or callback is kept and raised by the
next ``sync`` (or by ``Future.get()`` of that run), so it is never lost; one left at the
process's exit is printed.
"""
import atexit
import queue
import sys
import threading
import traceback

_lock = threading.Lock()
_queue = queue.Queue()
_worker = [None]
_errors = []  # (exception) of runs / callbacks no one has seen yet, oldest first


class Future:
    """The result of a queued job run: ``get()`` waits for it, ``add_callback(cb)`` hands it to
    `cb` on the worker once it is there (at once, in order, if it already is)."""

    def __init__(self, what):
        self.what = what
        self._done = threading.Event()
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self):
        return self._done.is_set()

    def get(self):
        if not on_worker():
            self._done.wait()
        elif not self._done.is_set():  # a callback waiting for a later run would wait forever
            raise RuntimeError(f"{self.what}: a job callback cannot wait for a job launched after its own")
        if self._error is not None:
            _seen(self._error)
            raise self._error
        return self._value

    def add_callback(self, callback):
        with _lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        # already done: the callback still runs on the worker, after what is queued now
        _put(lambda: self._call(callback))

    def _finish(self, value, error):
        with _lock:
            self._value, self._error = value, error
            callbacks, self._callbacks = self._callbacks, []
            self._done.set()
        for cb in callbacks:
            self._call(cb)

    def _call(self, callback):
        if self._error is not None:
            return  # the run failed: its error waits for the next sync, the callback never runs
        try:
            callback(self._value)
        except BaseException as e:  # noqa: BLE001 - kept for the next sync
            _keep(e)


def on_worker():
    return threading.current_thread() is _worker[0]


def submit(what, run):
    """Queues `run()` (a job's execution); returns its Future."""
    fut = Future(what)

    def item():
        try:
            value = run()
        except BaseException as e:  # noqa: BLE001 - kept for Future.get() / the next sync
            _keep(e)
            fut._finish(None, e)
            return
        fut._finish(value, None)
    _put(item)
    return fut


def sync():
    """Waits until every queued run and callback has finished, then raises the first error among
    them that no one has seen (the others are chained to it as its context)."""
    if on_worker():
        return  # a callback syncing: everything before it ran already
    if _worker[0] is not None:
        _queue.join()
    with _lock:
        errors, _errors[:] = list(_errors), []
    if errors:
        first = errors[0]
        if len(errors) > 1:
            first.add_note(f"({len(errors) - 1} more error(s) of queued job runs / callbacks after this one)")
        raise first


def _put(item):
    with _lock:
        if _worker[0] is None:
            t = threading.Thread(target=_loop, name="oneflow-job-runner", daemon=True)
            _worker[0] = t
            t.start()
    _queue.put(item)


def _loop():
    while True:
        item = _queue.get()
        try:
            item()
        finally:
            item = None  # (its tensors are not kept alive by the idle worker until the exit)
            _queue.task_done()


def _keep(e):
    with _lock:
        _errors.append(e)


def _seen(e):
    with _lock:
        if e in _errors:
            _errors.remove(e)


@atexit.register
def _drain_at_exit():
    """The session's end at exit: pending runs finish; errors no sync reported are printed."""
    if _worker[0] is None:
        return
    _queue.join()
    with _lock:
        errors, _errors[:] = list(_errors), []
    for e in errors:
        print("oneflow: error of an asynchronous job run never synchronized:", file=sys.stderr)
        traceback.print_exception(e, file=sys.stderr)
