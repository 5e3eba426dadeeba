"""Tables sharded over the processes of a job (Note [Sharded tables]).

Note [Sharded tables]: in a job of several processes (python -m oneflow.distributed.launch), an
embedding made by every process is one table laid out over them, as upstream's: the process
`shard(key) = splitmix64(key) mod world` holds a key's row (a mixing hash, so that ids offset
per table or consecutive ids spread evenly) in its own store, saved and loaded as its own
snapshot (`<persistent_path>/<rank>-<world>`). A lookup is collective -- every process calls
the embedding together, each with its own ids (or the components of global ids split along a
dim) -- and runs upstream's id shuffle:
  1. each process makes its ids unique (the first occurrence's table id is the key's table),
     groups them by owner and exchanges the counts, then the ids and table ids (all-to-all);
  2. each owner looks up what it received in its store (creating missing rows, from their
     table's initializer: a pure function of (seed, key), so a row is the same wherever it lives);
  3. the rows travel back the same way (the embedding shuffle) and are scattered to the ids'
     order and shape.
The backward runs the gradient shuffle: each process sums its gradient per unique id, sends the
sums to the owners, which coalesce them (the same key from several processes added) and keep
them for the optimizer's step; each owner then updates its own rows, with no communication. The
shadow's gradient (Note [Embedding gradients]) is the 2-norm of the whole table's gradient: the
owners' squared norms summed over the processes, the same on all of them. With local ids the
processes' losses add up: a row's gradient is the sum over the processes of its gradients there
(the table trains as one table on the concatenated batches with the losses summed); with global
ids the output is global, so a global loss (a mean over the whole batch) scales it as usual.
"""
import numpy as np

from .. import _oneflow_internal as _C


def shard_of(keys, world):
    """The rank holding each key (int64 numpy): splitmix64's finalizer, mod the world size."""
    z = keys.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z += np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return (z % np.uint64(world)).astype(np.int64)


def _exchange(send, send_counts, recv_counts, row, group=None):
    """All-to-all of `send` (numpy, grouped by destination rank, `row` elements per item):
    send_counts[j] items to rank j, recv_counts[j] from it, over `group` (None: the world).
    Returns the received items, numpy."""
    from .._global.runtime import world
    from ..distributed._collectives import _all_to_all_v
    world()  # (joins the launcher's job if the script did not: flow.env.init)
    dtype = send.dtype
    recv = np.empty((int(sum(recv_counts)),) + send.shape[1:], dtype=dtype)
    out = _C.from_numpy(recv.reshape(-1)) if recv.size else _C.empty(0, dtype=_flow_dtype(dtype))
    inp = _C.from_numpy(np.ascontiguousarray(send).reshape(-1)) if send.size else \
        _C.empty(0, dtype=_flow_dtype(dtype))
    _all_to_all_v(out, [int(c) * row for c in recv_counts], inp, [int(c) * row for c in send_counts], group=group)
    return out.numpy().reshape(recv.shape) if recv.size else recv


def _flow_dtype(np_dtype):
    return {np.dtype(np.int64): _C.int64, np.dtype(np.int32): _C.int32, np.dtype(np.uint8): _C.uint8,
            np.dtype(np.float32): _C.float32, np.dtype(np.float64): _C.float64,
            np.dtype(np.float16): _C.float16}[np.dtype(np_dtype)]


class Route:
    """One lookup's shuffle: this process's unique ids grouped by owner, what each owner received."""

    def __init__(self, flat, tids, world):
        self.world = world
        keys = flat.numpy()
        self.n = keys.shape[0]
        uniq, first, self.inverse = np.unique(keys, return_index=True, return_inverse=True)
        self.first = first
        owner = shard_of(uniq, world)
        self.order = np.argsort(owner, kind="stable")  # unique ids grouped by owner
        self.send_counts = np.bincount(owner, minlength=world).astype(np.int64)
        self.recv_counts = _exchange(self.send_counts, np.ones(world, np.int64), np.ones(world, np.int64), 1)
        self.recv_ids = _exchange(uniq[self.order], self.send_counts, self.recv_counts, 1)
        self.recv_tids = None
        if tids is not None:
            t = tids.numpy()[first][self.order].astype(np.int32)
            self.recv_tids = _exchange(t, self.send_counts, self.recv_counts, 1)

    def owner_ids(self):
        """(ids, table ids) this process received, as tensors for its store."""
        ids = _C.from_numpy(np.ascontiguousarray(self.recv_ids))
        tids = None if self.recv_tids is None else _C.from_numpy(np.ascontiguousarray(self.recv_tids))
        return ids, tids

    def rows_back(self, rows):
        """The owner's rows (len(recv_ids), dim) sent back: this process's ids' rows, (n, dim)."""
        rows = rows.numpy() if hasattr(rows, "numpy") else rows
        dim = rows.shape[1]
        got = _exchange(np.ascontiguousarray(rows, dtype=np.float32), self.recv_counts, self.send_counts, dim)
        per_unique = np.empty_like(got)
        per_unique[self.order] = got
        return _C.from_numpy(np.ascontiguousarray(per_unique[self.inverse].reshape(self.n, dim)))

    def gradient_to_owners(self, grad):
        """This process's gradient (n, dim), summed per unique id and sent to the owners: the
        gradient rows (len(recv_ids), dim) of the ids this process owns (not yet coalesced)."""
        g = grad.numpy()
        dim = g.shape[1]
        summed = np.zeros((len(self.order), dim), np.float32)
        np.add.at(summed, self.inverse, g)
        got = _exchange(summed[self.order], self.send_counts, self.recv_counts, dim)
        return _C.from_numpy(np.ascontiguousarray(got.reshape(-1, dim)))


    def values_to_owners(self, values):
        """Rows given for this process's ids (n, k; one per unique id kept, its first), sent to
        the owners: the rows (len(recv_ids), k) of the ids this process owns."""
        v = values.numpy()
        got = _exchange(np.ascontiguousarray(v[self.first][self.order]), self.send_counts, self.recv_counts, v.shape[1])
        return _C.from_numpy(np.ascontiguousarray(got.reshape(-1, v.shape[1])))


def all_reduce_sum(value):
    """A float summed over the processes."""
    from .. import distributed as dist
    from .._global.runtime import world
    world()
    t = _C.from_numpy(np.array([float(value)], np.float64))
    dist.all_reduce(t)
    return float(t.item())
