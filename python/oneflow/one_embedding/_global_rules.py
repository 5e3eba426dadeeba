"""The SBP rules of upstream's one_embedding functional ops on global tensors (named in
src/ops/table/one_embedding.yaml, registered in _global/signatures.py; Note [Shuffle ops over
ranks] in _shuffle.py).

A rule returns the dispatcher's signature (targets, out, length, mean_dims, pre, post, local
function), or None: the inputs are not laid out as the op's signature needs, and the op runs whole
on every rank (its one-rank form on broadcast inputs). A multi-output op gives `out` as a list of
(sbp, logical length along the split dim) per output.
"""
import functools

from ..sbp import broadcast as B, split as S


def _split0(g):
    return g._sbp[0]._kind == "S" and g._sbp[0]._dim == 0


def _global(x):
    return hasattr(x, "_sbp")


def _get(args, kwargs, pos, name):
    from .._global.runtime import arg
    return arg(args, kwargs, pos, name)


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# (position, name) of each shuffle's inputs laid out split along dim 0 (the batch's share of a
# rank); num_unique_matrix is broadcast
_SHUFFLE_SPLIT = {
    "one_embedding_id_shuffle": ((0, "ids"), (1, "table_ids")),
    "one_embedding_embedding_shuffle": ((0, "cur_rank_embeddings"), (2, "cur_rank_inverse_indices"),
                                        (3, "inverse_unique_partition_indices")),
    "one_embedding_embedding_gradient_shuffle": ((0, "embedding_grad"), (2, "cur_rank_inverse_indices"),
                                                 (3, "inverse_unique_partition_indices")),
}


def shuffle(name, gs, args, kwargs):
    """id_shuffle / embedding_shuffle / embedding_gradient_shuffle over the ranks of a placement:
    their split inputs stay split and the collective form runs (_shuffle.py)."""
    from . import _shuffle
    pl = gs[0]._placement
    split = [_get(args, kwargs, pos, n) for pos, n in _SHUFFLE_SPLIT[name]]
    split = [t for t in split if t is not None]
    if not all(_global(t) and _split0(t) for t in split):
        return None
    if name != "one_embedding_id_shuffle":
        matrix = _get(args, kwargs, 1, "num_unique_matrix")
        if not (_global(matrix) and matrix._sbp[0]._kind == "B"):
            return None
    if len(pl._ranks) == 1:
        return {}, S(0), None, None, None, None
    ranks = _shuffle.Ranks(pl)
    p = ranks.size
    if name == "one_embedding_id_shuffle":
        ids = split[0]
        n = _numel(ids._shape)
        out = [(B, None), (S(0), ids._shape[0]), (S(0), p), (S(0), p * n), (S(0), p * n), (S(0), p * n)]
        return {}, out, None, None, None, functools.partial(_shuffle.id_shuffle, ranks)
    if name == "one_embedding_embedding_shuffle":
        part = split[2]
        return {}, S(0), part._shape[0], None, None, functools.partial(_shuffle.embedding_shuffle, ranks)
    cur = split[1]
    return {}, S(0), cur._shape[0], None, None, functools.partial(_shuffle.embedding_gradient_shuffle, ranks)


# the input whose rows the output of each row op has (its layout and logical length)
_ROWS_LIKE = {
    "one_embedding_lookup": (1, "unique_ids"),
    "one_embedding_embedding_put": (0, "num_unique_ids"),
}


def rows(name, gs, args, kwargs):
    """lookup / embedding_put / the row updates on a table sharded over the ranks: each rank's
    split components are the ids (rows) it owns after the id shuffle, so the op runs on them in its
    own process's shard (Note [Sharded tables]); broadcast inputs (a learning rate) stay whole."""
    if not all(_split0(g) or g._sbp[0]._kind == "B" for g in gs):
        return None
    pos, n = _ROWS_LIKE.get(name, (1, "unique_embeddings"))
    like = _get(args, kwargs, pos, n)
    if not (_global(like) and _split0(like)):
        return None
    return {}, S(0), like._shape[0], None, None
