"""DataLoader: batches of a dataset, in this process or in worker processes
(torch.utils.data.DataLoader's arguments and semantics)."""
import itertools
import multiprocessing as mp
import os
import pickle
import signal
import time
from multiprocessing.connection import wait

from ... import _oneflow_internal as _C
from . import _worker
from ._collate import default_collate, default_convert
from ._random import draw_seed
from .dataset import IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


class _InfiniteConstantSampler(Sampler):
    """The 'sampler' of an iterable dataset: None forever (the dataset decides)."""

    def __iter__(self):
        while True:
            yield None


def _tensor_rows(dataset):
    """(tensors, index map) when the dataset is a TensorDataset, possibly under Subsets."""
    remap = []
    while isinstance(dataset, Subset):
        remap.append(dataset.indices)
        dataset = dataset.dataset
    if not isinstance(dataset, TensorDataset):
        return None
    return dataset.tensors, remap


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        # default_collate of TensorDataset rows is one gather per tensor: skip the samples.
        self.rows = _tensor_rows(dataset) if collate_fn is default_collate else None

    def fetch(self, indices):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[indices])
        if self.rows is not None:
            tensors, remap = self.rows
            for m in remap:
                indices = [m[i] for i in indices]
            idx = _C.from_numpy(_as_index_array(indices))
            return [t[idx] for t in tensors]
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(indices) if getitems else [self.dataset[i] for i in indices]
        return self.collate_fn(data)


def _as_index_array(indices):
    import numpy as np

    return np.asarray(indices, dtype=np.int64)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.it = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, indices):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.it))
        data = []
        for _ in indices:
            try:
                data.append(next(self.it))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(indices)):
            raise StopIteration
        return self.collate_fn(data)


class _MakeFetcher:
    """Picklable factory of a process's fetcher (also sent to spawned workers)."""

    def __init__(self, iterable, auto_collation, collate_fn, drop_last):
        self.iterable = iterable
        self.args = (auto_collation, collate_fn, drop_last)

    def __call__(self, dataset):
        cls = _IterableFetcher if self.iterable else _MapFetcher
        return cls(dataset, *self.args)


class DataLoader:
    """Iterates a dataset in batches.

    Args (as torch.utils.data.DataLoader): dataset, batch_size=1, shuffle=None, sampler=None,
    batch_sampler=None, num_workers=0, collate_fn=None, pin_memory=False (batches in page-locked
    memory when a CUDA device exists), drop_last=False, timeout=0 (seconds to wait for a worker's batch),
    worker_init_fn=None, multiprocessing_context=None, generator=None, prefetch_factor=None
    (batches in flight per worker, 2 with workers), persistent_workers=False.
    """

    _frozen = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
               "persistent_workers")

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._iterator = None
        self.__initialized = True

    def __setattr__(self, name, value):
        if getattr(self, "_DataLoader__initialized", False) and name in self._frozen:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _make_fetcher(self):
        return _MakeFetcher(self._iterable, self._auto_collation, self.collate_fn,
                            self.drop_last)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _MultiProcessIter(self)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)


def _pin_batch(data):
    """Tensors of a batch (nested in lists, tuples, dicts) copied to page-locked memory, so that
    `.to("cuda", non_blocking=True)` uploads them asynchronously."""
    if isinstance(data, _C.Tensor):
        return data.pin_memory()
    if isinstance(data, dict):
        return type(data)((k, _pin_batch(v)) for k, v in data.items())
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_pin_batch(v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_pin_batch(v) for v in data)
    return data


class _BaseIter:
    def __init__(self, loader):
        # pin_memory=True pins batches when a CUDA device exists (PyTorch warns and skips otherwise).
        self._pin = bool(loader.pin_memory) and _C._cuda_available()
        self._dataset = loader.dataset
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_yielded = 0
        self._reset_sampler(loader)

    def _reset_sampler(self, loader):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _next_index(self):
        return next(self._sampler_iter)

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = loader._make_fetcher()(loader.dataset)

    def __next__(self):
        data = self._fetcher.fetch(self._next_index())
        self._num_yielded += 1
        return _pin_batch(data) if self._pin else data


class _MultiProcessIter(_BaseIter):
    """Workers with their own index queue and result pipe; results are re-ordered by task
    number. The main process waits on the pipes and on the processes' sentinels together, so a
    worker that dies is noticed at once, and `timeout` bounds each wait."""

    def __init__(self, loader):
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._iterable = loader._iterable
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = mp.get_context()
        elif isinstance(ctx, str):
            ctx = mp.get_context(ctx)
        base_seed = draw_seed(loader.generator)
        make_fetcher = loader._make_fetcher()
        self._workers, self._index_queues, self._conns = [], [], []
        self._shutdown = False
        try:
            for i in range(self._num_workers):
                q = ctx.Queue()
                reader, writer = ctx.Pipe(duplex=False)
                w = ctx.Process(target=_worker.worker_loop, daemon=True,
                                args=(make_fetcher, loader.dataset, q, writer, i,
                                      self._num_workers, base_seed, loader.worker_init_fn,
                                      os.getpid()))
                w.start()
                writer.close()
                self._workers.append(w)
                self._index_queues.append(q)
                self._conns.append(reader)
        except BaseException:
            self._shutdown_workers()
            raise
        self._epoch = 0
        self._start_epoch()

    def _start_epoch(self):
        self._send_idx = 0
        self._rcvd_idx = 0
        self._tasks = {}          # send_idx -> worker id (outstanding or buffered)
        self._buffer = {}         # send_idx -> result
        self._active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        self._sampler_done = False
        for _ in range(self._prefetch * self._num_workers):
            self._try_put_index()

    def _reset(self, loader):
        """Persistent workers: a new epoch on the same processes."""
        self._reset_sampler(loader)
        self._epoch += 1
        if self._iterable:
            for q in self._index_queues:
                q.put(_worker.Resume())
        self._start_epoch()

    def _try_put_index(self):
        if self._sampler_done or not any(self._active):
            return
        try:
            index = self._next_index()
        except StopIteration:
            self._sampler_done = True
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if self._active[wid]:
                break
        self._index_queues[wid].put((self._epoch, self._send_idx, index))
        self._tasks[self._send_idx] = wid
        self._send_idx += 1

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx and self._rcvd_idx not in self._tasks:
                self._rcvd_idx += 1  # a stop marker of an exhausted iterable worker
                self._try_put_index()
            if self._rcvd_idx >= self._send_idx:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if self._rcvd_idx in self._buffer:
                data = self._buffer.pop(self._rcvd_idx)
                del self._tasks[self._rcvd_idx]
                self._rcvd_idx += 1
                self._try_put_index()
                self._num_yielded += 1
                data = self._process(data)
                return _pin_batch(data) if self._pin else data
            self._receive()

    def _process(self, data):
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return _worker.unpack(data)

    def _receive(self):
        """Waits for a result (or a dead worker, or the timeout) and files it."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            objs = self._conns + [w.sentinel for w in self._workers]
            ready = wait(objs, timeout=remaining)
            conns = [r for r in ready if r in self._conns]
            for c in conns:
                if self._read(c):
                    return
            dead = [w for w in self._workers if not w.is_alive()]
            if dead:
                # Results it sent before dying are still worth reading first.
                for w in dead:
                    c = self._conns[self._workers.index(w)]
                    while c.poll():
                        if not self._read(c):
                            break
                if self._rcvd_idx in self._buffer:
                    return
                self._raise_dead(dead)
            if deadline is not None and time.monotonic() >= deadline and not conns:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _read(self, conn):
        """Reads one result; True when it is one this epoch waits for."""
        try:
            payload = conn.recv_bytes()
        except (EOFError, OSError):
            return False
        epoch, send_idx, data = pickle.loads(payload)
        if epoch != self._epoch:
            return False  # a stale batch of an epoch left early (persistent workers)
        if isinstance(data, _worker.IterableStop):
            self._active[data.worker_id] = False
            self._tasks.pop(send_idx, None)
            return True
        self._buffer[send_idx] = data
        return True

    def _raise_dead(self, dead):
        why = []
        for w in dead:
            code = w.exitcode
            if code is not None and code < 0:
                try:
                    why.append(f"pid {w.pid} killed by signal {signal.Signals(-code).name}")
                except ValueError:
                    why.append(f"pid {w.pid} killed by signal {-code}")
            else:
                why.append(f"pid {w.pid} exit code {code}")
        self._shutdown_workers()
        pids = ", ".join(str(w.pid) for w in dead)
        raise RuntimeError(f"DataLoader worker (pid{'s' if len(dead) > 1 else ''} {pids}) exited "
                           f"unexpectedly ({'; '.join(why)})")

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.join(timeout=2.0)
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
        for q in self._index_queues:
            q.cancel_join_thread()
            q.close()
        for c in self._conns:
            c.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
