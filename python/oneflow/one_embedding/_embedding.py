"""flow.one_embedding's tables as modules: MultiTableEmbedding / MultiTableMultiColumnEmbedding
over the C++ key -> row store (src/embedding/store.h, Note [Embedding store]).

Note [Embedding gradients]: the rows are not a tensor, so autograd cannot hold their gradient.
Each embedding owns a one-element Parameter, `shadow` (upstream's name), which every lookup takes
as an input: the lookup's output then requires grad, and an optimizer built over
`embedding.parameters()` (eagerly, or through `nn.Graph.add_optimizer`) lists the shadow. The
lookup's backward keeps (ids, gradient of the looked-up rows) on the embedding and gives the
shadow, as its gradient, the 2-norm of the rows' gradient with duplicate ids summed (the norm
the dense gradient of the table would have): gradient clipping by the 2-norm then counts the
table as a dense embedding would, and what clipping or a GradScaler's unscaling multiply the
shadow's gradient by, the step multiplies the rows' gradient by. When the optimizer steps,
Note [Sparse parameters] (python/oneflow/optim/optimizer.py) hands the shadow's group to
`_SparseRows.step`, which applies the group's optimizer (SGD, Adam / AdamW, Adagrad, Ftrl,
SmartDecayAdam) to exactly the rows those ids name, in one fused pass in the store, and clears
the shadow's gradient so that the dense update leaves it alone.
Gradients of several backward passes before a step add up (duplicate ids too, as a sparse
gradient's coalesce); `zero_grad()` before a backward drops those of a step not taken.
"""
import math
import os
import re

from .. import _oneflow_internal as _C
from ..autograd.function import Function
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ._optim import sparse_options
from ._options import check_initializer, check_store_options
from ._sharded import Route, all_reduce_sum
from ._workfiles import new_rows_file

_KEY_TYPES = ("int32", "int64")


def _dtype_name(dt):
    return str(dt).replace("oneflow.", "")


class _Lookup(Function):
    """The lookup as an autograd Function whose only differentiable input is the shadow."""

    @staticmethod
    def forward(ctx, shadow, ids, table_ids, emb):
        ctx.emb = emb
        shape = tuple(ids.shape) + (emb.embedding_dim,)
        if ids.device.type == "meta":  # nn.Graph learning the output's shape (docs/graph.md)
            return _C.empty(shape, dtype=emb.dtype, device="meta")
        flat = ids.reshape(-1).to("cpu").to(_C.int64).contiguous()
        tids = None if table_ids is None else table_ids.reshape(-1).to("cpu").to(_C.int32).contiguous()
        ctx.route = None
        if emb._world > 1:  # Note [Sharded tables] (_sharded.py): the id and embedding shuffles
            ctx.route = Route(flat, tids, emb._world)
            flat, tids = ctx.route.owner_ids()
            rows = emb._store.lookup(flat, tids, emb.padding_idx)
            out = ctx.route.rows_back(rows).reshape(shape)
        else:
            out = emb._store.lookup(flat, tids, emb.padding_idx).reshape(shape)
        ctx.flat, ctx.tids = flat, tids
        return out.to(device=shadow.device, dtype=emb.dtype)

    @staticmethod
    def backward(ctx, grad):
        emb = ctx.emb
        g = grad.reshape(-1, emb.embedding_dim).to("cpu").to(_C.float32).contiguous()
        if emb.shadow.grad is None:  # a zero_grad since the last backward: those steps are void
            emb._pending.clear()
        if ctx.route is not None:  # the gradient shuffle: this process's owned ids' gradient
            g = ctx.route.gradient_to_owners(g)
        # coalesced now (duplicates summed, padding dropped): the norm needs it, and the step
        # then updates distinct rows without coalescing again
        first, summed, norm = _C._one_embedding_coalesce(ctx.flat, g, emb.padding_idx)
        if ctx.route is not None:  # (the whole table's norm: the owners' parts summed)
            norm = math.sqrt(all_reduce_sum(norm * norm))
        norm = _C.full_like(emb.shadow, norm)
        tids = None if ctx.tids is None else ctx.tids[first]
        emb._pending.append((ctx.flat[first], tids, summed, float(norm.item())))
        return norm, None, None, None


class _SparseRows:
    """The shadow's link to its embedding (Note [Embedding gradients]); weak, so that the
    parameter does not keep the module alive, and never pickled or deep-copied with it."""

    def __init__(self, emb):
        import weakref
        self._ref = weakref.ref(emb)

    def step(self, optimizer, group):
        emb = self._ref()
        if emb is not None:
            emb._sparse_step(optimizer, group)

    def __deepcopy__(self, memo):
        return None

    def __reduce__(self):
        return (type(None), ())


class Embedding(Module):
    """The common base of MultiTableEmbedding and MultiTableMultiColumnEmbedding."""

    _fn = "one_embedding.Embedding"

    def __init__(self, name, embedding_dim, dtype, key_type, tables, store_options,
                 default_initializer=None, padding_idx=None, seed=0):
        super().__init__()
        fn = self._fn
        if not isinstance(name, str) or not name:
            raise TypeError(f"{fn}: name must be a non-empty str, got {name!r}")
        if isinstance(embedding_dim, (list, tuple)):
            column_dims = list(embedding_dim)
        else:
            column_dims = [embedding_dim]
        if not column_dims:
            raise ValueError(f"{fn}: embedding_dim is an empty list")
        for d in column_dims:
            if isinstance(d, bool) or not isinstance(d, int) or d <= 0:
                raise ValueError(f"{fn}: embedding_dim must be a positive int (or a list of them), "
                                 f"got {embedding_dim!r}")
        if not isinstance(dtype, _C.dtype) or not dtype.is_floating_point:
            raise TypeError(f"{fn}: dtype must be a floating dtype, got {dtype!r}")
        if not isinstance(key_type, _C.dtype) or _dtype_name(key_type) not in _KEY_TYPES:
            raise TypeError(f"{fn}: key_type must be an integer dtype (oneflow.int32 or "
                            f"oneflow.int64), got {key_type!r}")
        path, capacity, size_factor, storage_dim, on_disk, budget = check_store_options(fn, store_options)
        dim = sum(column_dims)
        storage_dim = storage_dim if storage_dim != -1 else size_factor * dim
        if storage_dim < dim:
            raise ValueError(f"{fn}: storage_dim ({storage_dim}) is smaller than embedding_dim ({dim})")
        inits = self._table_initializers(fn, tables, default_initializer, len(column_dims))
        if padding_idx is not None and (isinstance(padding_idx, bool) or not isinstance(padding_idx, int)):
            raise TypeError(f"{fn}: padding_idx must be an int or None, got {padding_idx!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"{fn}: seed must be an int, got {seed!r}")
        from .. import env
        rank, world = env.get_rank(), env.get_world_size()
        if isinstance(path, (list, tuple)):
            if len(path) != world:
                raise ValueError(f"{fn}: persistent_path lists {len(path)} paths for {world} ranks")
            path = path[rank]
        else:
            path = os.path.join(path, f"{rank}-{world}")  # (upstream's per-rank layout)
        self.embedding_name = name
        self.embedding_dim = dim
        self.column_dims = column_dims
        self.dtype = dtype
        self.key_type = key_type
        self.storage_dim = storage_dim
        self.num_tables = len(inits)
        self.padding_idx = padding_idx
        self.seed = seed
        self.persistent_path = path
        self._world = world  # Note [Sharded tables]: this process holds the keys shard_of gives it
        self._store_args = (column_dims, storage_dim, inits, seed & (2**64 - 1), capacity, on_disk, budget)
        self._store = self._new_store()
        self._store.set_name(name)  # (flow._C.one_embedding_lookup / embedding_put find it by name)
        self._pending = []
        self.shadow = Parameter(_C.zeros(1))
        self.shadow._sparse_rows = _SparseRows(self)

    def _new_store(self):
        column_dims, storage_dim, inits, seed, capacity, on_disk, budget = self._store_args
        rows_file = ""
        if on_disk:  # Note [Tables on disk] (src/embedding/mapped.h), Note [Index on disk]
            rows_file = new_rows_file(self.persistent_path, self.embedding_name)
        return _C._OneEmbeddingStore(column_dims, storage_dim, inits, seed, capacity, rows_file, budget)

    def __deepcopy__(self, memo):
        # a module copy with a store of its own holding the same rows (copy.deepcopy cannot copy
        # the C++ store itself); the new shadow is linked to the copy
        import copy
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            if k not in ("_store", "_pending"):
                new.__dict__[k] = copy.deepcopy(v, memo)
        new._store = new._new_store()
        new._store.copy_rows_from(self._store)
        new._pending = []
        new.shadow._sparse_rows = _SparseRows(new)
        return new

    @staticmethod
    def _table_initializers(fn, tables, default_initializer, ncols):
        if tables is None:
            init = default_initializer or {"type": "normal", "mean": 0.0, "std": 0.05}
            return [[check_initializer(fn, init)] * ncols]
        if not isinstance(tables, (list, tuple)) or not tables:
            raise TypeError(f"{fn}: tables must be a non-empty list of make_table_options(...)")
        out = []
        for t in tables:
            if not isinstance(t, dict) or ("initializer" in t) == ("columns" in t):
                raise ValueError(f"{fn}: a table must be made by make_table_options (an "
                                 f"initializer or columns), got {t!r}")
            if "initializer" in t:
                out.append([check_initializer(fn, t["initializer"])] * ncols)
                continue
            cols = t["columns"]
            if len(cols) != ncols:
                raise ValueError(f"{fn}: a table has {len(cols)} columns, the embedding_dim list {ncols}")
            out.append([check_initializer(fn, c.get("initializer") if isinstance(c, dict) else c)
                        for c in cols])
        return out

    def extra_repr(self):
        dim = self.column_dims if len(self.column_dims) > 1 else self.embedding_dim
        return (f"name={self.embedding_name!r}, embedding_dim={dim}, "
                f"num_tables={self.num_tables}, storage_dim={self.storage_dim}")

    # ---- lookup ---------------------------------------------------------------------------
    def _table_ids(self, ids, table_ids):
        fn = f"{type(self).__name__}.forward"
        if table_ids is not None:
            if not isinstance(table_ids, _C.Tensor):
                raise TypeError(f"{fn}: table_ids must be a Tensor or None, got {type(table_ids).__name__}")
            if table_ids.dtype.is_floating_point or table_ids.dtype == _C.bool:
                raise TypeError(f"{fn}: table_ids must be an integer tensor, got {table_ids.dtype}")
            if tuple(table_ids.shape) != tuple(ids.shape):
                raise ValueError(f"{fn}: table_ids must have the shape of ids {tuple(ids.shape)}, "
                                 f"got {tuple(table_ids.shape)}")
            return table_ids
        if self.num_tables == 1:
            return None
        if ids.dim() < 1 or ids.shape[-1] != self.num_tables:
            raise ValueError(f"{fn}: with {self.num_tables} tables and no table_ids, ids must have "
                             f"shape (..., {self.num_tables}) (column j looked up in table j), got "
                             f"{tuple(ids.shape)}")
        return _C.arange(self.num_tables, dtype=_C.int32, device=ids.device).expand(*ids.shape)

    def forward(self, ids, table_ids=None):
        """The embeddings of `ids` (shape ids.shape + (embedding_dim,)); `table_ids` (the shape
        of ids) names each id's table, else column j of a (batch, num_tables) ids is table j."""
        fn = f"{type(self).__name__}.forward"
        if not isinstance(ids, _C.Tensor):
            raise TypeError(f"{fn}: ids must be a Tensor, got {type(ids).__name__}")
        if ids.dtype != self.key_type:
            raise TypeError(f"{fn}: ids must have the embedding's key_type {self.key_type}, got {ids.dtype}")
        if getattr(ids, "is_global", False):
            return self._global_forward(fn, ids, table_ids)
        if getattr(table_ids, "is_global", False):
            raise TypeError(f"{fn}: table_ids is a global tensor and ids a local one")
        return _Lookup.apply(self.shadow, ids, self._table_ids(ids, table_ids), self)

    def _global_forward(self, fn, ids, table_ids):
        """Global ids split along a dim over every process (Note [Sharded tables]): each looks
        up its component; the output is global, split along the same dim."""
        from .. import env
        pl, sbp = ids.placement, ids.sbp
        everyone = sorted(int(r) for r in pl.ranks.reshape(-1)) == list(range(env.get_world_size()))
        if len(sbp) != 1 or getattr(sbp[0], "_kind", None) != "S" or not everyone or self._world == 1:
            raise ValueError(f"{fn}: global ids must be split along a dim over every process of the job, "
                             f"got sbp {sbp} on {pl}")
        if table_ids is not None:
            if not getattr(table_ids, "is_global", False) or table_ids.sbp != sbp or table_ids.placement != pl:
                raise TypeError(f"{fn}: table_ids must be laid out as the global ids ({sbp} on {pl})")
            table_ids = table_ids.to_local()
        local = ids.to_local()
        out = _Lookup.apply(self.shadow, local, self._table_ids(local, table_ids), self)
        return out.to_global(pl, sbp)

    # ---- the sparse update (Note [Embedding gradients]) ----------------------------------------
    def _sparse_step(self, optimizer, group):
        pending, self._pending = self._pending, []
        if self.shadow.grad is None or not pending:
            return
        # What loss scaling and clipping did to the shadow's gradient (the norm of the rows'
        # gradient) they do to the rows' gradient: a factor, 1 when neither ran.
        given, norm = float(self.shadow.grad.sum().item()), sum(p[3] for p in pending)
        factor = given / norm if norm != 0 else 1.0
        self.shadow.grad = None  # the dense update skips the shadow
        if not math.isfinite(factor):  # (a GradScaler skips such a step before it gets here)
            return
        opts = sparse_options(optimizer, group, self.shadow)
        unique = len(pending) == 1  # (the usual step: distinct ids already, no copy)
        if unique:
            ids, tids, grads, _ = pending[0]
        else:
            ids = _C.cat([p[0] for p in pending])
            # (lookups with and without table_ids: table 0 is what a missing table id means)
            tids = None if all(p[1] is None for p in pending) else _C.cat(
                [p[1] if p[1] is not None else _C.zeros(p[0].shape[0], dtype=_C.int32) for p in pending])
            grads = _C.cat([p[2] for p in pending])
        if factor != 1.0:
            grads = grads * factor
        self._store.update(ids, tids, grads.contiguous(), self.padding_idx, opts, unique)

    # ---- rows and snapshots -----------------------------------------------------------------
    def _snapshot_path(self, fn, snapshot_name):
        if not isinstance(snapshot_name, str) or not re.fullmatch(r"[A-Za-z0-9._-]+", snapshot_name) \
                or snapshot_name in (".", ".."):
            raise ValueError(f"{fn}: snapshot_name must be a non-empty name of letters, digits, "
                             f"'.', '_' or '-', got {snapshot_name!r}")
        return os.path.join(self.persistent_path, "snapshots", snapshot_name)

    def save_snapshot(self, snapshot_name):
        """Writes every row (and its optimizer state) to `<persistent_path>/snapshots/<name>`,
        atomically: Note [Embedding snapshots] (src/embedding/store.h)."""
        path = self._snapshot_path("save_snapshot", snapshot_name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self._store.save(path)

    def load_snapshot(self, snapshot_name):
        """Replaces the table by the snapshot `snapshot_name` saved earlier."""
        path = self._snapshot_path("load_snapshot", snapshot_name)
        if not os.path.exists(path):
            raise FileNotFoundError(f"load_snapshot: no snapshot named {snapshot_name!r} under "
                                    f"{os.path.dirname(path)}")
        self._pending.clear()
        self._store.load(path)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        # as upstream: a state_dict names a snapshot saved with it
        import datetime
        now = datetime.datetime.now().timestamp()
        if self._world > 1:  # (every process's shard under one name: the first process's time)
            from .. import env
            now = all_reduce_sum(now if env.get_rank() == 0 else 0.0)
        name = datetime.datetime.fromtimestamp(now).strftime("%Y-%m-%d-%H-%M-%S-%f")
        self.save_snapshot(name)
        destination[prefix + "OneEmbeddingSnapshot"] = name

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        name = state_dict.pop(prefix + "OneEmbeddingSnapshot", None)
        state_dict.pop(prefix + "OneEmbeddingKeyValueOptions", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
        if name is not None:
            try:
                self.load_snapshot(name)
            except (OSError, RuntimeError, ValueError) as e:
                error_msgs.append(f"loading the one_embedding snapshot {name!r} failed: {e}")

    def num_rows(self):
        """The number of keys the table holds (sharded: every process's, a collective call)."""
        if self._world > 1:
            return int(all_reduce_sum(len(self._store)))
        return len(self._store)

    @staticmethod
    def _keys(fn, ids):
        if not isinstance(ids, _C.Tensor) or ids.dtype not in (_C.int32, _C.int64):
            raise TypeError(f"{fn}: ids must be an int32 or int64 Tensor, got "
                            f"{ids.dtype if isinstance(ids, _C.Tensor) else type(ids).__name__}")
        return ids.reshape(-1).to("cpu").to(_C.int64).contiguous()

    def read_rows(self, ids):
        """(rows, found): the stored rows of `ids` (storage_dim floats: the embedding, then the
        optimizer's state; zeros where `found` is False), without creating missing keys."""
        flat = self._keys("read_rows", ids)
        if self._world > 1:  # (collective: the owners read, Note [Sharded tables])
            route = Route(flat, None, self._world)
            rows, found = self._store.read(route.owner_ids()[0])
            both = _C.cat([rows, found.to(_C.float32).reshape(-1, 1)], 1)
            back = route.rows_back(both)
            return back[:, :-1].contiguous(), back[:, -1] != 0
        return self._store.read(flat)

    def write_rows(self, ids, values):
        """Sets the rows of `ids` to `values` (len(ids) x embedding_dim or storage_dim)."""
        flat = self._keys("write_rows", ids)
        n = flat.shape[0]
        if not isinstance(values, _C.Tensor) or values.numel() not in (n * self.embedding_dim, n * self.storage_dim) \
                or values.shape[-1] not in (self.embedding_dim, self.storage_dim):
            raise ValueError(f"write_rows: values must be ({n}, {self.embedding_dim}) or ({n}, "
                             f"{self.storage_dim}), got {getattr(values, 'shape', type(values).__name__)}")
        v = values.to("cpu").to(_C.float32).reshape(n, -1)
        if v.shape[1] == self.embedding_dim and self.storage_dim != self.embedding_dim:
            v = _C.cat([v, _C.zeros(v.shape[0], self.storage_dim - self.embedding_dim)], 1)
        # whole rows carry the optimizer's state; embeddings alone leave it to the first update
        with_state = values.shape[-1] == self.storage_dim and self.storage_dim != self.embedding_dim
        if self._world > 1:  # (collective: each owner writes its keys, Note [Sharded tables])
            route = Route(flat, None, self._world)
            flat, v = route.owner_ids()[0], route.values_to_owners(v.contiguous())
        self._store.write(flat, v.contiguous(), with_state)


class MultiTableEmbedding(Embedding):
    """Several embedding tables with one embedding_dim, dtype and key_type (OneFlow's
    one_embedding): rows are created on first lookup from their table's initializer and trained
    by sparse updates (Note [Embedding gradients])."""

    _fn = "MultiTableEmbedding"


class MultiTableMultiColumnEmbedding(Embedding):
    """As MultiTableEmbedding, with rows made of columns of different sizes (embedding_dim a
    list), each column with its own initializer (make_column_options)."""

    _fn = "MultiTableMultiColumnEmbedding"
