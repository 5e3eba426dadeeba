"""make_persistent_table_reader / make_persistent_table_writer: a table's snapshot files read or
written without an embedding (OneFlow's tools to inspect, convert or seed tables). A snapshot is
the file `<path>/snapshots/<name>` that Embedding.save_snapshot writes (Note [Embedding
snapshots], src/embedding/store.h); `paths` are the tables' per-rank directories
(`<persistent_path>/<rank>-<world size>`, or the list given to the store options)."""
import os

import numpy as np

from .. import _oneflow_internal as _C

_CHUNK = 65536


def _check(fn, paths, snapshot_name, key_type, value_type, storage_dim):
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, (list, tuple)) or not paths or not all(isinstance(p, str) for p in paths):
        raise TypeError(f"{fn}: paths must be a list of str")
    if not isinstance(snapshot_name, str) or not snapshot_name or "/" in snapshot_name:
        raise ValueError(f"{fn}: snapshot_name must be a non-empty name, got {snapshot_name!r}")
    if key_type not in (_C.int32, _C.int64):
        raise TypeError(f"{fn}: key_type must be oneflow.int32 or oneflow.int64, got {key_type!r}")
    if value_type != _C.float32:
        raise TypeError(f"{fn}: value_type must be oneflow.float32 (the store's rows), got {value_type!r}")
    if isinstance(storage_dim, bool) or not isinstance(storage_dim, int) or storage_dim <= 0:
        raise ValueError(f"{fn}: storage_dim must be a positive int, got {storage_dim!r}")
    return [os.path.join(p, "snapshots", snapshot_name) for p in paths]


class PersistentTableReader:
    """Iterates (keys, values) numpy chunks of the snapshot of every path in turn; each file is
    checked whole (its checksum) before its first chunk, and read a chunk at a time, so that a
    table larger than memory can be read (Note [Embedding snapshots])."""

    def __init__(self, files, key_type, storage_dim):
        self._files, self._key = list(files), np.int32 if key_type == _C.int32 else np.int64
        self._dim = storage_dim
        self._file = None
        self._n = self._pos = 0
        self._closed = False

    def __iter__(self):
        return self

    def __next__(self):
        if self._closed:
            raise StopIteration
        while self._file is None or self._pos >= self._n:
            if not self._files:
                raise StopIteration
            self._file = self._files.pop(0)
            dim, self._n = _C._one_embedding_check_snapshot(self._file)
            if dim != self._dim:
                raise ValueError(f"make_persistent_table_reader: the snapshot holds rows of "
                                 f"{dim} floats, storage_dim is {self._dim}")
            self._pos = 0
        b, e = self._pos, min(self._pos + _CHUNK, self._n)
        self._pos = e
        keys, values, _ = _C._one_embedding_read_snapshot_rows(self._file, self._dim, self._n, b, e - b)
        return keys.numpy().astype(self._key), values.numpy()

    def close(self):
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class PersistentTableWriter:
    """Collects (keys, values) and writes one snapshot per path at close(); with several paths a
    key goes to path `shard_of(key, len(paths))`: the process that holds it when a job of
    len(paths) processes loads the snapshot (Note [Sharded tables], _sharded.py)."""

    def __init__(self, files, storage_dim):
        self._files, self._dim = list(files), storage_dim
        self._keys, self._values = [[] for _ in files], [[] for _ in files]
        self._closed = False

    def write(self, keys, values):
        if self._closed:
            raise RuntimeError("make_persistent_table_writer: write on a closed writer")
        keys = np.asarray(keys).reshape(-1)
        if not np.issubdtype(keys.dtype, np.integer):
            raise TypeError(f"make_persistent_table_writer: keys must be integers, got {keys.dtype}")
        values = np.asarray(values, dtype=np.float32).reshape(len(keys), -1) if len(keys) else \
            np.zeros((0, self._dim), np.float32)
        if values.shape[1] != self._dim:
            raise ValueError(f"make_persistent_table_writer: values must be (len(keys), {self._dim}), "
                             f"got {values.shape}")
        keys = keys.astype(np.int64)
        from ._sharded import shard_of
        part = shard_of(keys, len(self._files))
        for i in range(len(self._files)):
            sel = part == i
            self._keys[i].append(keys[sel])
            self._values[i].append(values[sel])

    def close(self):
        if self._closed:
            return
        self._closed = True
        for f, ks, vs in zip(self._files, self._keys, self._values):
            os.makedirs(os.path.dirname(f), exist_ok=True)
            k = np.concatenate(ks) if ks else np.zeros(0, np.int64)
            v = np.concatenate(vs) if vs else np.zeros((0, self._dim), np.float32)
            if len(np.unique(k)) != len(k):
                raise ValueError("make_persistent_table_writer: a key was written twice")
            _C._one_embedding_write_snapshot(f, _C.from_numpy(np.ascontiguousarray(k)),
                                             _C.from_numpy(np.ascontiguousarray(v)))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def make_persistent_table_reader(paths, snapshot_name, key_type, value_type, storage_dim,
                                 physical_block_size=4096):
    """A reader of the snapshot `snapshot_name` of the tables at `paths`: iterate it for
    (keys, values) numpy chunks."""
    files = _check("make_persistent_table_reader", paths, snapshot_name, key_type, value_type, storage_dim)
    return PersistentTableReader(files, key_type, storage_dim)


def make_persistent_table_writer(paths, snapshot_name, key_type, value_type, storage_dim,
                                 physical_block_size=4096):
    """A writer of the snapshot `snapshot_name` of the tables at `paths`: `write(keys, values)`
    then `close()` (or use it as a context manager); load it with Embedding.load_snapshot."""
    files = _check("make_persistent_table_writer", paths, snapshot_name, key_type, value_type, storage_dim)
    return PersistentTableWriter(files, storage_dim)
