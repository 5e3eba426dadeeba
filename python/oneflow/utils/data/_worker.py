"""The DataLoader's worker processes: the loop each worker runs, what travels between the
processes, and get_worker_info().

A worker reads tasks from its own index queue, runs the fetcher (dataset + collate_fn) and sends
the pickled result through its own pipe, written by a sender thread so that the worker can start
the next task while the main process is busy. Tensors travel as numpy arrays (pickle protocol 5)
and become tensors again in the main process without another copy. A worker's exception travels
as its type and formatted traceback and is re-raised in the main process.
"""
import os
import pickle
import queue
import random
import sys
import threading
import traceback
from collections import deque

import numpy as np

from ... import _oneflow_internal as _C

# How often (seconds) an idle worker checks that the main process is still alive.
STATUS_CHECK_INTERVAL = 1.0

_worker_info = None


class WorkerInfo:
    """What a worker knows about itself: id, num_workers, seed, dataset (its own copy)."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """In a DataLoader worker process: its WorkerInfo; in the main process: None."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process and re-raised there with
    the worker's traceback in its message."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        try:
            pickle.dumps(self.exc_type)
        except Exception:  # noqa: BLE001 - a type defined where the main process can't find it
            self.exc_type = RuntimeError

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            raise KeyError(msg)  # noqa: B904
        try:
            exc = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - the type needs other constructor arguments
            raise RuntimeError(msg) from None
        raise exc


class IterableStop:
    """A worker's iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class Resume:
    """Persistent workers: restart the iterable dataset for a new epoch."""


class _Packed:
    """A tensor on its way between processes: its values as a numpy array."""

    __slots__ = ("array", "dtype", "requires_grad")

    def __init__(self, t):
        # bfloat16 has no numpy type: its values travel (exactly) as float32.
        src = t.detach() if t.dtype != _C.bfloat16 else t.detach().cast(_C.float32)
        self.array = np.ascontiguousarray(src.numpy())
        self.dtype = t.dtype.name
        self.requires_grad = t.requires_grad

    def unpack(self):
        t = _C.from_numpy(self.array)
        want = getattr(_C, self.dtype)
        if t.dtype != want:
            t = t.cast(want)
        if self.requires_grad:
            t.requires_grad_(True)
        return t


def pack(obj):
    """Replaces the tensors inside lists/tuples/dicts by picklable _Packed records."""
    if isinstance(obj, _C.Tensor):
        return _Packed(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(pack(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(pack(v) for v in obj)
    if isinstance(obj, dict):
        try:
            return type(obj)((k, pack(v)) for k, v in obj.items())
        except TypeError:
            return {k: pack(v) for k, v in obj.items()}
    return obj


def unpack(obj):
    if isinstance(obj, _Packed):
        return obj.unpack()
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(unpack(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(unpack(v) for v in obj)
    if isinstance(obj, dict):
        try:
            return type(obj)((k, unpack(v)) for k, v in obj.items())
        except TypeError:
            return {k: unpack(v) for k, v in obj.items()}
    return obj


class _Sender:
    """Writes results to the pipe from a thread, so the worker loop never waits for the main
    process to read (the pipe holds only a few KB)."""

    def __init__(self, conn):
        self.conn = conn
        self.items = deque()
        self.cv = threading.Condition()
        self.closed = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def send(self, payload):
        with self.cv:
            self.items.append(payload)
            self.cv.notify()

    def _run(self):
        while True:
            with self.cv:
                while not self.items and not self.closed:
                    self.cv.wait()
                if not self.items:
                    return
                payload = self.items.popleft()
            try:
                self.conn.send_bytes(payload)
            except (OSError, EOFError):
                return  # the main process is gone

    def close(self):
        with self.cv:
            self.closed = True
            self.cv.notify()
        self.thread.join()


def _seed_worker(seed, worker_id):
    random.seed(seed)
    _C.manual_seed(seed)
    np.random.seed((seed + worker_id * 0x9E3779B9) % (1 << 32))


def worker_loop(make_fetcher, dataset, index_queue, conn, worker_id, num_workers, base_seed,
                worker_init_fn, parent_pid):
    """Runs in the worker process until it receives None (or the main process dies)."""
    global _worker_info
    sender = None
    try:
        # One intra-op thread per worker: the workers are the parallelism (and OpenMP's pool
        # does not survive fork).
        _C.set_num_threads(1)
        seed = base_seed + worker_id
        _seed_worker(seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        sender = _Sender(conn)
        init_error = None
        try:
            if worker_init_fn is not None:
                worker_init_fn(worker_id)
            fetcher = make_fetcher(dataset)
        except Exception:  # noqa: BLE001 - reported with the first task
            init_error = ExceptionWrapper(sys.exc_info(),
                                          f"in DataLoader worker process {worker_id}")
            fetcher = None
        iterable_done = False
        while True:
            try:
                task = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    return  # orphaned: the main process died
                continue
            if task is None:
                return
            if isinstance(task, Resume):
                if init_error is None:
                    fetcher = make_fetcher(dataset)
                iterable_done = False
                continue
            epoch, send_idx, indices = task
            if init_error is not None:
                data = init_error
            elif iterable_done:
                data = IterableStop(worker_id)
            else:
                try:
                    data = pack(fetcher.fetch(indices))
                except StopIteration:
                    iterable_done = True
                    data = IterableStop(worker_id)
                except Exception:  # noqa: BLE001 - re-raised in the main process
                    data = ExceptionWrapper(sys.exc_info(),
                                            f"in DataLoader worker process {worker_id}")
            try:
                payload = pickle.dumps((epoch, send_idx, data), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - an unpicklable batch
                payload = pickle.dumps((epoch, send_idx, ExceptionWrapper(
                    sys.exc_info(), f"in DataLoader worker process {worker_id} (sending the "
                                    "batch back)")))
            sender.send(payload)
    except KeyboardInterrupt:
        pass
    finally:
        if sender is not None:
            sender.close()
        conn.close()
