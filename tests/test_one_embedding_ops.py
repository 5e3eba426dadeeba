"""Upstream OneFlow's functional one_embedding ops (flow._C.one_embedding_*; src/ops/table/
one_embedding.yaml): a training step composed of them as upstream's one_embedding code composes
it (id shuffle, lookup of the unique rows, embedding shuffle, gradient shuffle, row update)
against a plain torch nn.Embedding and torch's optimizers."""
import numpy as np
import pytest
import torch

import oneflow as flow

C = flow._C
V, D = 40, 6


def _ids(rng, shape=(16, 3)):
    # every row of the vocabulary at least once (dense torch optimizers then touch the same rows
    # as the sparse update), the rest duplicates in random order
    n = int(np.prod(shape))
    ids = np.concatenate([np.arange(V), rng.integers(0, V, n - V)])
    return rng.permutation(ids).reshape(shape)


def _step(rows, ids, weights):
    """Upstream's step on a table held as numpy rows (V x line): returns (embeddings, unique ids,
    num_unique, gradient of the unique rows) for the loss sum(embeddings * weights)."""
    num_matrix, inv_part, num_unique, uids, _, cur_inv = C.one_embedding_id_shuffle(flow.tensor(ids))
    u = int(num_unique.item())
    uid = uids.numpy()[:u]
    line = np.zeros((ids.size, rows.shape[1]), np.float32)  # (upstream's lookup: rows of the unique ids)
    line[:u] = rows[uid]
    cur = flow.tensor(line[:, :D], requires_grad=True)
    emb = C.one_embedding_embedding_shuffle(cur, num_matrix, cur_inv, inv_part)
    (emb * flow.tensor(weights)).sum().backward()
    grad = C.one_embedding_embedding_gradient_shuffle(flow.tensor(np.broadcast_to(weights, emb.shape).copy()),
                                                      num_matrix, cur_inv, inv_part)
    np.testing.assert_allclose(cur.grad.numpy(), grad.numpy(), rtol=1e-6)  # (its backward)
    return emb.numpy(), uid, num_unique, line, grad


def test_unique_key_value_pair_and_id_shuffle():
    rng = np.random.default_rng(0)
    keys = rng.integers(100, 130, (20, 2))
    tables = rng.integers(0, 2, (20, 2)).astype(np.int32)
    num, uk, uv, inv = C.one_embedding_unique_key_value_pair(flow.tensor(keys), flow.tensor(tables), 2)
    order = list(dict.fromkeys(keys.ravel().tolist()))  # first appearances
    u = int(num.item())
    assert u == len(order) and uk.numpy()[:u].tolist() == order and (uk.numpy()[u:] == 0).all()
    assert inv.shape == keys.shape and inv.dtype == flow.int32 and uv.dtype == flow.int32
    np.testing.assert_array_equal(uk.numpy()[inv.numpy()], keys)
    first = {k: t for k, t in zip(keys.ravel()[::-1], tables.ravel()[::-1])}
    assert uv.numpy()[:u].tolist() == [first[k] for k in order]
    # without values: a key's table is its column
    _, uk, uv, _ = C.one_embedding_unique_key_value_pair(flow.tensor(keys), num_tables=2)
    col = {}
    for i, k in enumerate(keys.ravel()):
        col.setdefault(k, i % 2)
    assert uv.dtype == flow.uint8 and uv.numpy()[:u].tolist() == [col[k] for k in order]
    # one rank's shuffle: the same unique ids, received ids mapped to themselves
    mat, inv_p, cnum, cids, ctables, cinv = C.one_embedding_id_shuffle(flow.tensor(keys), flow.tensor(tables), 2)
    assert mat.tolist() == [u] and int(cnum.item()) == u
    assert cids.numpy()[:u].tolist() == order and cinv.numpy()[:u].tolist() == list(range(u))
    np.testing.assert_array_equal(cids.numpy()[cinv.numpy()[inv_p.numpy()]], keys)
    assert ctables.numpy()[:u].tolist() == [first[k] for k in order]


def _torch_table(seed):
    torch.manual_seed(seed)
    return torch.nn.Embedding(V, D)


@pytest.mark.parametrize("momentum,weight_decay", [(0.0, 0.0), (0.0, 0.1), (0.9, 0.0)])
def test_sgd_step_matches_torch_embedding(momentum, weight_decay):
    rng = np.random.default_rng(1)
    ref = _torch_table(1)
    opt = torch.optim.SGD(ref.parameters(), lr=0.3, momentum=momentum, weight_decay=weight_decay)
    line = 2 if momentum else 1
    rows = np.zeros((V, line * D), np.float32)
    rows[:, :D] = ref.weight.detach().numpy()
    for _ in range(3):
        ids = _ids(rng)
        weights = rng.standard_normal((16, 3, D)).astype(np.float32)
        out = ref(torch.tensor(ids))
        emb, uid, num, line_rows, grad = _step(rows, ids, weights)
        np.testing.assert_allclose(emb, out.detach().numpy(), rtol=1e-5, atol=1e-6)
        (out * torch.tensor(weights)).sum().backward()
        np.testing.assert_allclose(grad.numpy()[:len(uid)], ref.weight.grad.numpy()[uid], rtol=1e-5, atol=1e-6)
        opt.step()
        opt.zero_grad()
        new = C.one_embedding_sgd_update(num, flow.tensor(line_rows), grad, learning_rate_val=0.3, scale=1.0,
                                         weight_decay=weight_decay, momentum=momentum, line_size=line * D,
                                         embedding_size=D, embedding_name="t")
        rows[uid] = new.numpy()[:len(uid)]
        np.testing.assert_array_equal(new.numpy()[len(uid):], line_rows[len(uid):])  # (beyond num_unique)
    np.testing.assert_allclose(rows[:, :D], ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_adam_step_matches_torch_adamw():
    # upstream's Adam kernel decays the weight outside the moments: AdamW's update
    rng = np.random.default_rng(2)
    ref = _torch_table(2)
    opt = torch.optim.AdamW(ref.parameters(), lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)
    rows = np.zeros((V, 3 * D), np.float32)
    rows[:, :D] = ref.weight.detach().numpy()
    for t in range(1, 4):
        ids = _ids(rng)
        weights = rng.standard_normal((16, 3, D)).astype(np.float32)
        out = ref(torch.tensor(ids))
        _, uid, num, line_rows, grad = _step(rows, ids, weights)
        (out * torch.tensor(weights)).sum().backward()
        opt.step()
        opt.zero_grad()
        bc = [flow.tensor([1 - 0.8 ** t]), flow.tensor([1 - 0.9 ** t])] if t % 2 else [None, None]
        new = C.one_embedding_adam_update(num, flow.tensor(line_rows), grad, None, None, None, bc[0], bc[1],
                                          learning_rate_val=0.05, scale=1.0, weight_decay=0.1, beta1=0.8,
                                          beta2=0.9, bias_correction1_val=1 - 0.8 ** t,
                                          bias_correction2_val=1 - 0.9 ** t, epsilon=1e-6,
                                          do_bias_correction=True, line_size=3 * D, embedding_size=D,
                                          embedding_name="t")
        rows[uid] = new.numpy()[:len(uid)]
    np.testing.assert_allclose(rows[:, :D], ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    st = opt.state[ref.weight]
    np.testing.assert_allclose(rows[:, D:2 * D], st["exp_avg"].numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(rows[:, 2 * D:], st["exp_avg_sq"].numpy(), rtol=1e-5, atol=1e-7)


def test_adagrad_step_matches_torch():
    rng = np.random.default_rng(3)
    ref = _torch_table(3)
    opt = torch.optim.Adagrad(ref.parameters(), lr=0.2, lr_decay=0.1, eps=1e-8)
    rows = np.zeros((V, 2 * D), np.float32)
    rows[:, :D] = ref.weight.detach().numpy()
    for t in range(1, 4):
        ids = _ids(rng)
        weights = rng.standard_normal((16, 3, D)).astype(np.float32)
        out = ref(torch.tensor(ids))
        _, uid, num, line_rows, grad = _step(rows, ids, weights)
        (out * torch.tensor(weights)).sum().backward()
        opt.step()
        opt.zero_grad()
        step = dict(train_step=flow.tensor([t - 1]), learning_rate=flow.tensor([0.2]),
                    down_scale_by_tensor=flow.tensor([1.0]), skip_if=flow.tensor([0])) if t == 2 else {}
        new = C.one_embedding_adagrad_update(num, flow.tensor(line_rows), grad, train_step_val=t,
                                             learning_rate_val=0.2, scale=1.0, weight_decay=0.0, lr_decay=0.1,
                                             epsilon=1e-8, line_size=2 * D, embedding_size=D,
                                             embedding_name="t", **step)
        rows[uid] = new.numpy()[:len(uid)]
    np.testing.assert_allclose(rows[:, :D], ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rows[:, D:], opt.state[ref.weight]["sum"].numpy(), rtol=1e-5)


def test_ftrl_update_and_the_optional_tensors():
    rng = np.random.default_rng(4)
    n = 5
    w = rng.standard_normal((n, D)).astype(np.float32)
    acc = rng.uniform(0.1, 1.0, (n, D)).astype(np.float32)
    z = rng.standard_normal((n, D)).astype(np.float32)
    g = rng.standard_normal((n, D)).astype(np.float32)
    line = np.concatenate([w, acc, z], 1)
    lr, lr_power, l1, l2, beta, wd, scale = 0.1, -0.5, 0.3, 0.05, 0.2, 0.01, 0.5
    new = C.one_embedding_ftrl_update(flow.tensor([4]), flow.tensor(line), flow.tensor(g),
                                      learning_rate=flow.tensor([lr]), down_scale_by_tensor=flow.tensor([2.0]),
                                      skip_if=flow.tensor([0]), learning_rate_val=99.0, scale=2 * scale,
                                      weight_decay=wd, lr_power=lr_power, lambda1=l1, lambda2=l2, beta=beta,
                                      line_size=3 * D, embedding_size=D, embedding_name="t").numpy()
    gs = g.astype(np.float64) * scale  # scale / down_scale_by
    a1 = acc + gs * gs
    p0, p1 = acc.astype(np.float64) ** lr_power, a1 ** lr_power
    z1 = z + gs - (p1 - p0) / lr * w
    w1 = np.where(np.abs(z1) >= l1, (np.sign(z1) * l1 - z1) / ((beta + p1) / lr + l2) - lr * wd * w, 0)
    np.testing.assert_allclose(new[:4, :D], w1[:4], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(new[:4, D:2 * D], a1[:4], rtol=1e-6)
    np.testing.assert_allclose(new[:4, 2 * D:], z1[:4], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(new[4], line[4])  # beyond num_unique_ids: unchanged
    skipped = C.one_embedding_ftrl_update(flow.tensor([4]), flow.tensor(line), flow.tensor(g),
                                          learning_rate=flow.tensor([lr]), down_scale_by_tensor=flow.tensor([1.0]),
                                          skip_if=flow.tensor([1]), learning_rate_val=lr, scale=1.0,
                                          weight_decay=0.0, lr_power=lr_power, lambda1=l1, lambda2=l2, beta=beta,
                                          line_size=3 * D, embedding_size=D, embedding_name="t")
    np.testing.assert_array_equal(skipped.numpy(), line)  # skip_if: every row as it was


def test_errors_are_typed_and_found_first():
    rows, g, num = flow.zeros(4, D), flow.zeros(4, D), flow.tensor([4])
    with pytest.raises(ValueError, match="line_size 6 is too small"):
        C.one_embedding_adam_update(num, rows, g, learning_rate_val=0.1, line_size=D, embedding_size=D)
    with pytest.raises(ValueError, match="num_unique_ids is 5"):
        C.one_embedding_sgd_update(flow.tensor([5]), rows, g, learning_rate_val=0.1)
    with pytest.raises(TypeError, match="must be an integer tensor"):
        C.one_embedding_id_shuffle(flow.zeros(3))
    with pytest.raises(ValueError, match=r"must be \(batch, num_tables\)"):
        C.one_embedding_unique_key_value_pair(flow.tensor([1, 2, 3]), num_tables=2)
    with pytest.raises(RuntimeError, match="multi-process shuffles are not implemented"):
        C.one_embedding_embedding_shuffle(rows, flow.tensor([2, 2, 2, 2]), flow.tensor([0, 1]), flow.tensor([0, 1]))
    with pytest.raises(IndexError, match="out of range"):
        C.one_embedding_embedding_shuffle(rows, flow.tensor([2]), flow.tensor([0, 9]), flow.tensor([0, 1]))


def _table(tmp_path, name, size_factor):
    store = flow.one_embedding.make_device_mem_store_options(persistent_path=str(tmp_path), capacity=V,
                                                             size_factor=size_factor)
    tables = [flow.one_embedding.make_table_options(flow.one_embedding.make_normal_initializer(0.0, 1.0))]
    return flow.one_embedding.MultiTableEmbedding(name, D, flow.float, flow.int64, tables, store)


def test_lookup_and_put_train_a_named_table_as_torch(tmp_path):
    # upstream's eager Adam step on a one_embedding table (python/oneflow/one_embedding.py's
    # shuffle_and_lookup + adam_update): ids deduplicated, rows looked up by the table's name,
    # rows shuffled back, gradient shuffled, rows updated and put back -- against torch AdamW on
    # an nn.Embedding holding the table's initial rows
    emb = _table(tmp_path, "oe_ops_adam", 3)
    ref = torch.nn.Embedding(V, D)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(emb(flow.arange(V)).detach().numpy()))
    opt = torch.optim.AdamW(ref.parameters(), lr=0.05, weight_decay=0.0)
    zeros = '[{"type": "constant", "value": 0.0}, {"type": "constant", "value": 0.0}]'
    rng = np.random.default_rng(5)
    for t in range(1, 4):
        ids = _ids(rng)
        weights = rng.standard_normal((16, 3, D)).astype(np.float32)
        mat, inv_p, num, uids, utables, cinv = C.one_embedding_id_shuffle(flow.tensor(ids))
        rows = C.one_embedding_lookup(num, uids, utables, flow.float, flow.float, 3 * D, D, "oe_ops_adam",
                                      "", zeros, seed=0)
        assert rows.shape == (ids.size, 3 * D)
        cur = rows[:, :D].detach().clone().requires_grad_(True)
        out = C.one_embedding_embedding_shuffle(cur, mat, cinv, inv_p, "oe_ops_adam")
        (out * flow.tensor(weights)).sum().backward()
        tout = ref(torch.tensor(ids))
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
        (tout * torch.tensor(weights)).sum().backward()
        opt.step()
        opt.zero_grad()
        new = C.one_embedding_adam_update(num, rows, cur.grad, learning_rate_val=0.05, scale=1.0,
                                          weight_decay=0.0, beta1=0.9, beta2=0.999,
                                          bias_correction1_val=1 - 0.9 ** t, bias_correction2_val=1 - 0.999 ** t,
                                          epsilon=1e-8, do_bias_correction=True, line_size=3 * D,
                                          embedding_size=D, embedding_name="oe_ops_adam")
        C.one_embedding_embedding_put(num, uids, new, "oe_ops_adam", 3 * D)
    got = emb.read_rows(flow.arange(V))[0].numpy()
    np.testing.assert_allclose(got[:, :D], ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[:, D:2 * D], opt.state[ref.weight]["exp_avg"].numpy(), rtol=1e-5, atol=1e-7)


def test_lookup_creates_rows_with_the_state_initializer(tmp_path):
    emb = _table(tmp_path, "oe_ops_new", 2)
    acc = '[{"type": "constant", "value": 0.25}]'
    rows = C.one_embedding_lookup(flow.tensor([2]), flow.tensor([7, 9, 0]), flow.tensor([0, 0, 0]), flow.float,
                                  flow.float, 2 * D, D, "oe_ops_new", "", acc).numpy()
    assert emb.num_rows() == 2  # (created as a forward would, with the table's initializer)
    np.testing.assert_array_equal(rows[:2, :D], emb(flow.tensor([7, 9])).detach().numpy())
    assert (rows[:2, D:] == 0.25).all() and (rows[2] == 0).all()
    with pytest.raises(ValueError, match="no one_embedding table is named 'nope'"):
        C.one_embedding_lookup(flow.tensor([1]), flow.tensor([1]), flow.tensor([0]), flow.float, flow.float,
                               2 * D, D, "nope")
    with pytest.raises(ValueError, match="line_size 6 and embedding_size 6 differ"):
        C.one_embedding_lookup(flow.tensor([1]), flow.tensor([1]), flow.tensor([0]), flow.float, flow.float,
                               D, D, "oe_ops_new")
    with pytest.raises(ValueError, match="only constant initializers"):
        C.one_embedding_lookup(flow.tensor([1]), flow.tensor([1]), flow.tensor([0]), flow.float, flow.float,
                               2 * D, D, "oe_ops_new", "", '[{"type": "normal", "mean": 0}]')
