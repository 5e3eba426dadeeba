"""Upstream's one_embedding shuffle ops over the ranks of a placement (Note [Shuffle ops over ranks]).

Note [Shuffle ops over ranks]: `flow._C.one_embedding_id_shuffle`, `_embedding_shuffle` and
`_embedding_gradient_shuffle` on global tensors split along dim 0 over P ranks are upstream's
collective shuffles (oneflow/user/kernels/one_embedding_data_shuffle.cuh), which move ids to the
rank owning their rows and rows back. Each rank's component is its share of the batch:
  id_shuffle: the rank makes its ids unique (first appearances, as the one-rank op), puts each in
    partition j = shard_of(id, P) -- the owner of the key in a table sharded over the ranks
    (Note [Sharded tables]), so `one_embedding_lookup` on the received ids finds them in this
    process's shard -- and records for every id `j * n + its place in partition j`
    (inverse_unique_partition_indices; n: the rank's number of ids). The partitions' sizes make
    row `rank` of the P x P num_unique_matrix ([src * P + dst]: ids src sends dst), all-gathered;
    partition j travels to rank j (all-to-all). The ids a rank receives (in source-rank order)
    are made unique again: cur_rank_unique_ids (padded to P * n), with cur_rank_inverse_indices
    mapping each received id to its unique row, and cur_rank_num_unique.
  embedding_shuffle: the owner's unique rows, expanded to the received ids, travel back the way
    the ids came; each rank reads its ids' rows through inverse_unique_partition_indices.
  embedding_gradient_shuffle (the previous one's backward): each rank sums its gradient per
    (partition, unique id), sends partition j to rank j, and the owner adds what it received into
    its unique rows. The sums are float64 until the owner's total is rounded once, so a row's
    gradient is the one-process op's on the whole batch up to the order of float64 additions.
With one rank all three are the one-rank ops of src/ops/one_embedding_ops.cpp. Upstream labels
num_unique_matrix and cur_rank_num_unique broadcast; here the matrix is broadcast (every rank
holds the same P * P counts) and cur_rank_num_unique is split (logical length P, one count per
rank: what upstream's own test reads, `to_local().to_global(split(0))`). The ops run on the host:
the ids and rows move as numpy arrays through the placement's process group (Gloo on CPU).
"""
import numpy as np

from .. import _oneflow_internal as _C, autograd  # (imported when a rule first runs: after oneflow)
from ._sharded import _exchange, shard_of


class Ranks:
    """A placement's ranks as the shuffles see them: P, this process's index, the group."""

    def __init__(self, placement):
        from .._global.runtime import group, world
        ranks = sorted(placement._ranks)
        self.size = len(ranks)
        self.me = ranks.index(world()[0])
        self.group = group(ranks)

    def exchange(self, send, send_counts, recv_counts):
        """All-to-all of numpy `send` (items grouped by destination, send_counts[j] to member j);
        returns the items received (recv_counts[j] from member j, in member order)."""
        row = int(np.prod(send.shape[1:], dtype=np.int64))
        return _exchange(np.ascontiguousarray(send), send_counts, recv_counts, row, group=self.group)

    def all_gather_row(self, row):
        """Every member's int64 vector of P entries: a P x P matrix, row i from member i."""
        p = self.size
        return self.exchange(np.tile(row.astype(np.int64), p), [p] * p, [p] * p).reshape(p, p)


def _host(t):
    return t.detach().cpu().numpy()


def _out(a, dtype, device):
    return _C.from_numpy(np.ascontiguousarray(a)).to(dtype=dtype).to(device)


def _padded(a, n):
    out = np.zeros((n,), np.int64)
    out[:a.shape[0]] = a
    return out


def _unique_first(keys):
    """(distinct keys in order of first appearance, the index of each one's first appearance,
    each key's place among them)."""
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    place = np.empty_like(order)
    place[order] = np.arange(order.shape[0])
    return uniq[order], first[order], place[inverse.reshape(-1)]


def _check_ids(op, t, what):
    if t.dtype not in (_C.int64, _C.int32, _C.uint8, _C.int8, _C.int16):
        raise TypeError(f"{op}: {what} must be an integer tensor, got {t.dtype}")


def id_shuffle(ranks, ids, table_ids=None, num_tables=1, embedding_name=""):
    """The id shuffle over `ranks` (a Ranks) on this rank's ids (Note [Shuffle ops over ranks])."""
    op = "one_embedding_id_shuffle"
    _check_ids(op, ids, "ids")
    if num_tables < 1:
        raise ValueError(f"{op}: num_tables must be at least 1, got {num_tables}")
    keys = _host(ids).astype(np.int64).reshape(-1)
    n, p = keys.shape[0], ranks.size
    if table_ids is not None:
        _check_ids(op, table_ids, "table_ids")
        if tuple(table_ids.shape) != tuple(ids.shape):
            raise ValueError(f"{op}: table_ids must have the shape of the ids {tuple(ids.shape)}, got "
                             f"{tuple(table_ids.shape)}")
        tables = _host(table_ids).astype(np.int64).reshape(-1)
    else:
        if num_tables > 1 and (ids.dim() != 2 or ids.shape[1] != num_tables):
            raise ValueError(f"{op}: without table_ids, ids of {num_tables} tables must be (batch, num_tables) "
                             f"(column j in table j), got {tuple(ids.shape)}")
        tables = np.arange(n, dtype=np.int64) % num_tables
    uniq, first, place = _unique_first(keys)
    owner = shard_of(uniq, p)
    by_owner = np.argsort(owner, kind="stable")  # (each partition in first-appearance order)
    counts = np.bincount(owner, minlength=p).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pos = np.empty_like(by_owner)
    pos[by_owner] = np.arange(by_owner.shape[0]) - starts[owner[by_owner]]
    inverse_partition = owner[place] * n + pos[place]
    matrix = ranks.all_gather_row(counts)
    recv_counts = matrix[:, ranks.me]
    got_ids = ranks.exchange(uniq[by_owner], counts, recv_counts)
    got_tables = ranks.exchange(tables[first][by_owner], counts, recv_counts)
    cur_uniq, cur_first, cur_place = _unique_first(got_ids)
    dev = ids.device
    table_dtype = table_ids.dtype if table_ids is not None else _C.uint8
    return (_out(matrix.reshape(-1), _C.int32, dev),
            _out(inverse_partition.reshape(tuple(ids.shape)), _C.int32, dev),
            _out(np.array([cur_uniq.shape[0]]), _C.int32, dev),
            _out(_padded(cur_uniq, p * n), ids.dtype, dev),
            _out(_padded(got_tables[cur_first], p * n), table_dtype, dev),
            _out(_padded(cur_place, p * n), _C.int32, dev))


def _layout(op, ranks, num_unique_matrix, cur_rank_inverse_indices, inverse_unique_partition_indices):
    """(matrix P x P, received ids' unique rows, each id's place in the partitions, n)."""
    p = ranks.size
    _check_ids(op, num_unique_matrix, "num_unique_matrix")
    _check_ids(op, cur_rank_inverse_indices, "cur_rank_inverse_indices")
    _check_ids(op, inverse_unique_partition_indices, "inverse_unique_partition_indices")
    if num_unique_matrix.numel() != p * p:
        raise ValueError(f"{op}: num_unique_matrix must hold {p} x {p} counts (the ranks of the placement), got "
                         f"{num_unique_matrix.numel()}")
    matrix = _host(num_unique_matrix).astype(np.int64).reshape(p, p)
    n = inverse_unique_partition_indices.numel()
    received = int(matrix[:, ranks.me].sum())
    cur = _host(cur_rank_inverse_indices).astype(np.int64).reshape(-1)
    if received > cur.shape[0]:
        raise ValueError(f"{op}: num_unique_matrix says this rank received {received} ids, more than the "
                         f"{cur.shape[0]} cur_rank_inverse_indices")
    part = _host(inverse_unique_partition_indices).astype(np.int64).reshape(-1)
    return matrix, cur[:received], part, n


def embedding_shuffle_rows(ranks, rows, matrix, cur, part, n):
    """embedding_shuffle's data movement on numpy: the owner's unique rows (rows) to this rank's
    ids (n x d)."""
    p, me = ranks.size, ranks.me
    if cur.size and (cur.min() < 0 or cur.max() >= rows.shape[0]):
        raise IndexError(f"one_embedding_embedding_shuffle: cur_rank_inverse_indices holds {int(cur.max())}, out "
                         f"of range for {rows.shape[0]} cur_rank_embeddings")
    back = ranks.exchange(rows[cur], matrix[:, me], matrix[me, :])  # (what rank j asked for, to j)
    buf = np.zeros((p * max(n, 1),) + rows.shape[1:], rows.dtype)
    at = np.concatenate([np.arange(j * n, j * n + matrix[me, j]) for j in range(p)]).astype(np.int64)
    buf[at] = back
    if part.size and (part.min() < 0 or part.max() >= buf.shape[0]):
        raise IndexError(f"one_embedding_embedding_shuffle: inverse_unique_partition_indices holds "
                         f"{int(part.max())}, out of range for {p} partitions of {n} ids")
    return buf[part]


def gradient_shuffle_rows(ranks, grad, matrix, cur, part, n, rows):
    """embedding_gradient_shuffle's on numpy: this rank's gradient (n x d) summed per unique id
    and sent to the owners, which add what they receive into their unique rows (rows x d,
    float64)."""
    p, me = ranks.size, ranks.me
    d = grad.shape[-1]
    sums = np.zeros((p * max(n, 1), d), np.float64)
    np.add.at(sums, part, grad.reshape(n, d).astype(np.float64))
    at = np.concatenate([np.arange(j * n, j * n + matrix[me, j]) for j in range(p)]).astype(np.int64)
    got = ranks.exchange(sums[at], matrix[me, :], matrix[:, me])
    out = np.zeros((rows, d), np.float64)
    np.add.at(out, cur, got)
    return out


def embedding_shuffle(ranks, cur_rank_embeddings, num_unique_matrix, cur_rank_inverse_indices,
                      inverse_unique_partition_indices, embedding_name=""):
    """The embedding shuffle over `ranks` (differentiable: its backward is the gradient shuffle)."""
    op = "one_embedding_embedding_shuffle"
    if cur_rank_embeddings.dim() != 2:
        raise ValueError(f"{op}: cur_rank_embeddings must be (rows, embedding_size), got "
                         f"{tuple(cur_rank_embeddings.shape)}")
    layout = _layout(op, ranks, num_unique_matrix, cur_rank_inverse_indices, inverse_unique_partition_indices)
    return _EmbeddingShuffle.apply(cur_rank_embeddings, ranks, layout,
                                   tuple(inverse_unique_partition_indices.shape))


def embedding_gradient_shuffle(ranks, embedding_grad, num_unique_matrix, cur_rank_inverse_indices,
                               inverse_unique_partition_indices, embedding_name=""):
    """The gradient shuffle over `ranks`: rows (P * n, embedding_size), cur_rank_unique_ids' order."""
    op = "one_embedding_embedding_gradient_shuffle"
    if not embedding_grad.dtype.is_floating_point:
        raise TypeError(f"{op}: embedding_grad must be floating, got {embedding_grad.dtype}")
    matrix, cur, part, n = _layout(op, ranks, num_unique_matrix, cur_rank_inverse_indices,
                                   inverse_unique_partition_indices)
    if embedding_grad.dim() < 1 or embedding_grad.numel() != n * embedding_grad.shape[-1]:
        raise ValueError(f"{op}: embedding_grad must be the ids' shape + (embedding_size,), got "
                         f"{tuple(embedding_grad.shape)} for {n} ids")
    rows = cur_rank_inverse_indices.numel()
    out = gradient_shuffle_rows(ranks, _host(embedding_grad), matrix, cur, part, n, rows)
    return _out(out, embedding_grad.dtype, embedding_grad.device)


class _EmbeddingShuffle(autograd.Function):
    @staticmethod
    def forward(ctx, rows, ranks, layout, ids_shape):
        ctx.args = (ranks, layout, rows.shape[0], ids_shape)
        matrix, cur, part, n = layout
        out = embedding_shuffle_rows(ranks, _host(rows), matrix, cur, part, n)
        return _out(out.reshape(ids_shape + (rows.shape[1],)), rows.dtype, rows.device)

    @staticmethod
    def backward(ctx, grad):
        ranks, (matrix, cur, part, n), rows, _ = ctx.args
        g = gradient_shuffle_rows(ranks, _host(grad), matrix, cur, part, n, rows)
        return _out(g, grad.dtype, grad.device), None, None, None
