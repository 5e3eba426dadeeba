"""One process of tests/test_one_embedding_ops_ranks.py (started through the launcher, a world of
2): upstream's flow._C.one_embedding_* ops on global ids split over the ranks (Note [Shuffle ops
over ranks], python/oneflow/one_embedding/_shuffle.py) give the one-process ops' numbers on the
whole batch and torch's, and compose upstream's training step on a table sharded over the ranks."""
import os
import tempfile

import numpy as np
import torch

import oneflow as flow
from oneflow.one_embedding._sharded import shard_of

C = flow._C
OE = flow.one_embedding
RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
V, D, T, B = 40, 4, 3, 16  # vocabulary, embedding size, tables, whole batch (B / WORLD a rank)
PL = flow.placement("cpu", list(range(WORLD)))
S0, BC = flow.sbp.split(0), flow.sbp.broadcast


def whole_ids(step):
    # (the same on every rank: the whole batch; every row of the vocabulary at least once, so a
    # dense torch optimizer touches the rows the sparse update does)
    rng = np.random.default_rng(100 + step)
    ids = np.concatenate([np.arange(V), rng.integers(0, V, B * T - V)])
    return rng.permutation(ids).reshape(B, T).astype(np.int64)


def glob(a):
    return flow.tensor(a, placement=PL, sbp=S0)


def whole(g):
    return g.to_global(sbp=BC).to_local().numpy()


def case_shuffle():
    ref = torch.nn.Embedding(V, D)
    table = ref.weight.detach().numpy()
    ids = whole_ids(0)
    tids = (ids % T).astype(np.int32)
    mat, inv_p, cnum, cids, ctids, cinv = C.one_embedding_id_shuffle(glob(ids), glob(tids), T, "t")
    assert mat.sbp == (BC,) and tuple(mat.shape) == (WORLD * WORLD,) and inv_p.sbp == (S0,)
    assert tuple(inv_p.shape) == ids.shape and tuple(cnum.shape) == (WORLD,)
    assert tuple(cids.shape) == (WORLD * ids.size,) and cids.dtype == flow.int64 and ctids.dtype == flow.int32
    # this rank received the distinct ids of the whole batch it owns, each once, with its table
    u = int(cnum.to_local().item())
    got = cids.to_local().numpy()[:u]
    owned = np.unique(ids)[shard_of(np.unique(ids), WORLD) == RANK]
    assert sorted(got.tolist()) == owned.tolist(), (got, owned)
    np.testing.assert_array_equal(ctids.to_local().numpy()[:u], got % T)
    # the matrix: what each rank sends each rank, the same on both
    m = mat.to_local().numpy().reshape(WORLD, WORLD)
    n = ids.shape[0] // WORLD
    for src in range(WORLD):
        sent = np.unique(ids[src * n:(src + 1) * n])
        assert m[src].tolist() == np.bincount(shard_of(sent, WORLD), minlength=WORLD).tolist()
    assert whole(cnum).sum() == np.unique(ids).size
    # rows of the received ids from a torch table, back to the ids' order: torch's lookup and the
    # one-process ops' on the whole batch
    rows = np.zeros((cids.to_local().shape[0], D), np.float32)  # (P * n: a rank's n ids)
    rows[:u] = table[got]
    cur = flow.tensor(rows, requires_grad=True)
    emb = C.one_embedding_embedding_shuffle(cur.to_global(PL, S0), mat, cinv, inv_p, "t")
    assert emb.sbp == (S0,) and tuple(emb.shape) == ids.shape + (D,)
    tout = ref(torch.from_numpy(ids))
    np.testing.assert_array_equal(whole(emb), tout.detach().numpy())
    m1, p1, n1, i1, _, c1 = C.one_embedding_id_shuffle(flow.tensor(ids), flow.tensor(tids), T)
    u1 = int(n1.item())
    one = np.zeros((ids.size, D), np.float32)
    one[:u1] = table[i1.numpy()[:u1]]
    np.testing.assert_array_equal(whole(emb), C.one_embedding_embedding_shuffle(flow.tensor(one), m1, c1, p1).numpy())
    # the backward is the gradient shuffle: each owned row's gradient summed over both ranks' ids
    w = np.random.default_rng(7).standard_normal(ids.shape + (D,)).astype(np.float32)
    (emb * glob(w)).sum().backward()
    (tout * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(cur.grad.numpy()[:u], ref.weight.grad.numpy()[got], rtol=1e-6, atol=1e-6)
    assert not cur.grad.numpy()[u:].any()
    grad = C.one_embedding_embedding_gradient_shuffle(glob(w), mat, cinv, inv_p, "t")
    assert grad.sbp == (S0,) and tuple(grad.shape) == (WORLD * ids.size, D)
    np.testing.assert_array_equal(grad.to_local().numpy(), cur.grad.numpy())
    g1 = C.one_embedding_embedding_gradient_shuffle(flow.tensor(w), m1, c1, p1).numpy()[:u1]
    one_of = {k: i for i, k in enumerate(i1.numpy()[:u1].tolist())}
    np.testing.assert_allclose(grad.to_local().numpy()[:u], g1[[one_of[k] for k in got.tolist()]], rtol=1e-6,
                               atol=1e-7)
    # without table ids a key's table is its column, as on one rank
    _, _, cnum2, cids2, ctids2, _ = C.one_embedding_id_shuffle(glob(ids), num_tables=T)
    u2 = int(cnum2.to_local().item())
    col = {}
    for i, k in enumerate(ids.ravel().tolist()):
        col.setdefault(k, i % T)  # (first appearance in the whole batch: rank 0's ids come first)
    assert ctids2.dtype == flow.uint8 and u2 == u
    np.testing.assert_array_equal(ctids2.to_local().numpy()[:u2], [col[k] for k in cids2.to_local().numpy()[:u2]])
    # a matrix of another world's size is refused, naming the op
    try:
        C.one_embedding_embedding_shuffle(cur.detach().to_global(PL, S0), flow.tensor([1], dtype=flow.int32,
                                          placement=PL, sbp=BC), cinv, inv_p)
    except ValueError as e:
        assert "one_embedding_embedding_shuffle" in str(e) and "num_unique_matrix" in str(e), e
    else:
        raise AssertionError("a 1-entry num_unique_matrix over 2 ranks was accepted")


def case_train():
    # upstream's eager step (python/oneflow/one_embedding.py) on a table sharded over the ranks:
    # id shuffle, lookup of the owned rows, embedding shuffle, gradient shuffle, Adam update, put
    # -- as torch's AdamW trains one nn.Embedding on the whole batch
    tables = [OE.make_table_options(OE.make_uniform_initializer(low=-0.1, high=0.1)) for _ in range(T)]
    store_dir = os.path.join(os.environ.get("EMB_TEST_DIR") or tempfile.mkdtemp(), "train")
    store = OE.make_device_mem_store_options(persistent_path=store_dir, capacity=V, size_factor=3)
    emb = OE.MultiTableEmbedding("ops_ranks", embedding_dim=D, dtype=flow.float, key_type=flow.int64,
                                 tables=tables, store_options=store)
    init = np.random.RandomState(7).randn(V, D).astype(np.float32)
    emb.write_rows(flow.tensor(np.arange(V)), flow.tensor(init))
    ref = torch.nn.Embedding(V, D)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(init))
    topt = torch.optim.AdamW(ref.parameters(), lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)
    for t in range(1, 4):
        ids = whole_ids(t)
        w = np.random.default_rng(t).standard_normal(ids.shape + (D,)).astype(np.float32)
        mat, inv_p, cnum, cids, ctids, cinv = C.one_embedding_id_shuffle(glob(ids), num_tables=T, embedding_name="ops_ranks")
        rows = C.one_embedding_lookup(cnum, cids, ctids, flow.float, flow.float, 3 * D, D, "ops_ranks")
        assert rows.sbp == (S0,) and tuple(rows.shape) == (WORLD * ids.size, 3 * D)
        cur = flow.tensor(rows.to_local().numpy()[:, :D]).to_global(PL, S0)
        out = C.one_embedding_embedding_shuffle(cur, mat, cinv, inv_p, "ops_ranks")
        tout = ref(torch.from_numpy(ids))
        np.testing.assert_allclose(whole(out), tout.detach().numpy(), rtol=1e-6, atol=1e-7)
        grad = C.one_embedding_embedding_gradient_shuffle(glob(w), mat, cinv, inv_p, "ops_ranks")
        new = C.one_embedding_adam_update(cnum, rows, grad, learning_rate_val=0.05, scale=1.0, weight_decay=0.1,
                                          beta1=0.8, beta2=0.9, bias_correction1_val=1 - 0.8 ** t,
                                          bias_correction2_val=1 - 0.9 ** t, epsilon=1e-6, do_bias_correction=True,
                                          line_size=3 * D, embedding_size=D, embedding_name="ops_ranks")
        assert new.sbp == (S0,)
        C.one_embedding_embedding_put(cnum, cids, new, "ops_ranks", 3 * D)
        (tout * torch.from_numpy(w)).sum().backward()
        topt.step()
        topt.zero_grad()
    got, found = emb.read_rows(flow.tensor(np.arange(V)))
    assert found.numpy().all()
    st = topt.state[ref.weight]
    np.testing.assert_allclose(got.numpy()[:, :D], ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.numpy()[:, D:2 * D], st["exp_avg"].numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got.numpy()[:, 2 * D:], st["exp_avg_sq"].numpy(), rtol=1e-5, atol=1e-7)
    # each rank's shard holds its own keys only
    assert len(emb._store) == int((shard_of(np.arange(V), WORLD) == RANK).sum()) < V


if __name__ == "__main__":
    import global_worker as gw
    torch.manual_seed(0)
    gw.run_worker(globals(), ["shuffle", "train"])
