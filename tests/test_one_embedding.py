"""flow.one_embedding against a dense torch nn.Embedding holding the same rows: lookups, sparse
training steps (only the touched rows change) with SGD / Adam / Adagrad / Ftrl, multi-table and
multi-column layouts, padding_idx, and the typed errors (docs/one_embedding.md)."""
import numpy as np
import pytest
import torch

import oneflow as flow

OE = flow.one_embedding


def _store(tmp_path, capacity=1000, **kw):
    return OE.make_device_mem_store_options(persistent_path=str(tmp_path), capacity=capacity, **kw)


def _embedding(tmp_path, dim=4, num_tables=1, init=None, cls=None, **kw):
    init = init or OE.make_uniform_initializer(-0.1, 0.1)
    tables = [OE.make_table_options(init) for _ in range(num_tables)]
    store_kw = {k: kw.pop(k) for k in ("size_factor", "storage_dim") if k in kw}
    return (cls or OE.MultiTableEmbedding)("emb", dim, flow.float, flow.int64, tables,
                                           _store(tmp_path, **store_kw), **kw)


def _seeded(tmp_path, vocab, dim, rng, **kw):
    """An embedding whose rows 0..vocab-1 are set, and a torch nn.Embedding with the same rows."""
    sparse = kw.pop("sparse", False)
    emb = _embedding(tmp_path, dim=dim, **kw)
    w = rng.standard_normal((vocab, dim)).astype(np.float32)
    emb.write_rows(flow.arange(vocab), flow.tensor(w))
    ref = torch.nn.Embedding(vocab, dim, sparse=sparse)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(w))
    return emb, ref


def _rows(emb, ids):
    return emb.read_rows(flow.tensor(np.asarray(ids), dtype=flow.int64))[0].numpy()[:, :emb.embedding_dim]


def test_lookup_equals_dense_embedding(tmp_path):
    rng = np.random.default_rng(0)
    emb, ref = _seeded(tmp_path, 50, 6, rng)
    ids = rng.integers(0, 50, (8, 5))
    out = emb(flow.tensor(ids))
    assert tuple(out.shape) == (8, 5, 6) and out.dtype == flow.float32
    np.testing.assert_array_equal(out.numpy(), ref(torch.from_numpy(ids)).detach().numpy())


def test_new_rows_come_from_their_tables_initializer(tmp_path):
    tables = [OE.make_table_options(OE.make_constant_initializer(1.5)),
              OE.make_table_options(OE.make_uniform_initializer(-0.02, 0.02)),
              OE.make_table_options(OE.make_normal_initializer(3.0, 0.5))]
    emb = OE.MultiTableEmbedding("t", 64, flow.float, flow.int64, tables, _store(tmp_path))
    n = 200
    ids = np.stack([np.arange(n), np.arange(n) + 1000, np.arange(n) + 2000], 1)
    out = emb(flow.tensor(ids)).numpy()
    assert emb.num_rows() == 3 * n
    np.testing.assert_array_equal(out[:, 0], np.full((n, 64), 1.5, np.float32))
    assert np.abs(out[:, 1]).max() <= 0.02 and out[:, 1].std() > 0.009
    assert abs(out[:, 2].mean() - 3.0) < 0.01 and abs(out[:, 2].std() - 0.5) < 0.01
    # looked up again: the same rows, stored as created
    np.testing.assert_array_equal(emb(flow.tensor(ids)).numpy(), out)
    np.testing.assert_array_equal(_rows(emb, ids[:, 2]), out[:, 2])


def test_initial_rows_depend_on_seed_and_key_only(tmp_path):
    a = _embedding(tmp_path / "a", seed=7)
    b = _embedding(tmp_path / "b", seed=7)
    c = _embedding(tmp_path / "c", seed=8)
    ra = a(flow.tensor([5, 9, 1])).numpy()
    rb = b(flow.tensor([1, 2, 9, 5])).numpy()  # other keys first, another order
    np.testing.assert_array_equal(ra, rb[[3, 2, 0]])
    assert not np.allclose(ra, c(flow.tensor([5, 9, 1])).numpy())


def test_trunc_normal_stays_in_bounds(tmp_path):
    emb = _embedding(tmp_path, dim=32, init=OE.make_trunc_normal_initializer(0.0, 1.0, -0.5, 0.5))
    out = emb(flow.arange(300)).numpy()
    assert out.min() >= -0.5 and out.max() <= 0.5 and out.std() > 0.2


def test_multi_column_embedding(tmp_path):
    cols = [OE.make_column_options(OE.make_constant_initializer(2.0)),
            OE.make_column_options(OE.make_constant_initializer(-1.0))]
    tables = [OE.make_table_options(cols) for _ in range(2)]
    emb = OE.MultiTableMultiColumnEmbedding("mc", [3, 1], flow.float, flow.int64, tables, _store(tmp_path))
    out = emb(flow.tensor([[1, 2], [3, 4]])).numpy()
    assert out.shape == (2, 2, 4)
    np.testing.assert_array_equal(out[..., :3], np.full((2, 2, 3), 2.0, np.float32))
    np.testing.assert_array_equal(out[..., 3], np.full((2, 2), -1.0, np.float32))


def test_table_ids_pick_the_initializer(tmp_path):
    tables = [OE.make_table_options(OE.make_constant_initializer(float(t))) for t in range(3)]
    emb = OE.MultiTableEmbedding("t", 2, flow.float, flow.int32, tables, _store(tmp_path))
    ids = flow.tensor([10, 11, 12, 13], dtype=flow.int32)
    out = emb(ids, flow.tensor([2, 0, 1, 2], dtype=flow.int32)).numpy()
    np.testing.assert_array_equal(out[:, 0], [2, 0, 1, 2])


def _train(emb, ref, flow_opt, torch_opt, batches, check_untouched=None):
    for ids in batches:
        g = np.random.default_rng(len(ids)).standard_normal((*ids.shape, emb.embedding_dim)).astype(np.float32)
        out = emb(flow.tensor(ids))
        (out * flow.tensor(g)).sum().backward()
        flow_opt.step()
        flow_opt.zero_grad()
        tout = ref(torch.from_numpy(ids))
        (tout * torch.from_numpy(g)).sum().backward()
        torch_opt.step()
        torch_opt.zero_grad()


def test_sgd_changes_only_touched_rows_and_matches_torch(tmp_path):
    rng = np.random.default_rng(1)
    emb, ref = _seeded(tmp_path, 40, 5, rng)
    before = _rows(emb, np.arange(40))
    batches = [rng.integers(0, 20, (6, 3)) for _ in range(5)]  # with duplicates; rows 20.. never
    _train(emb, ref, flow.optim.SGD(emb.parameters(), lr=0.3, weight_decay=0.01),
           torch.optim.SGD(ref.parameters(), lr=0.3), [batches[0]])
    touched = np.unique(batches[0])
    after = _rows(emb, np.arange(40))
    untouched = np.setdiff1d(np.arange(40), touched)
    np.testing.assert_array_equal(after[untouched], before[untouched])
    assert not np.allclose(after[touched], before[touched])
    # without weight decay: plain SGD's sparse and dense updates are the same
    emb2, ref2 = _seeded(tmp_path / "2", 40, 5, np.random.default_rng(1))
    _train(emb2, ref2, flow.optim.SGD(emb2.parameters(), lr=0.3),
           torch.optim.SGD(ref2.parameters(), lr=0.3), batches)
    np.testing.assert_allclose(_rows(emb2, np.arange(40)), ref2.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


def _fixed_subset_batches(rng, subset, steps):
    # every step touches every row of `subset` (and no other): torch's dense update then leaves the
    # other rows alone too (their gradients, moments and buffers stay zero), as the sparse one does
    out = []
    for _ in range(steps):
        ids = np.concatenate([subset, rng.choice(subset, 6)])
        out.append(rng.permutation(ids).reshape(3, -1))
    return out


@pytest.mark.parametrize("make", [
    lambda p: (flow.optim.Adam(p[0], lr=0.05), torch.optim.Adam(p[1], lr=0.05)),
    lambda p: (flow.optim.Adam(p[0], lr=0.02, betas=(0.8, 0.9), eps=1e-6),
               torch.optim.Adam(p[1], lr=0.02, betas=(0.8, 0.9), eps=1e-6)),
    lambda p: (flow.optim.SGD(p[0], lr=0.1, momentum=0.9), torch.optim.SGD(p[1], lr=0.1, momentum=0.9)),
    lambda p: (flow.optim.SGD(p[0], lr=0.1, momentum=0.9, nesterov=True),
               torch.optim.SGD(p[1], lr=0.1, momentum=0.9, nesterov=True)),
], ids=["adam", "adam-betas", "sgd-momentum", "sgd-nesterov"])
def test_stateful_updates_match_torch(tmp_path, make):
    rng = np.random.default_rng(2)
    emb, ref = _seeded(tmp_path, 30, 4, rng, size_factor=3)
    before = _rows(emb, np.arange(30))
    subset = np.array([1, 4, 7, 8, 20, 25])
    fo, to = make((emb.parameters(), ref.parameters()))
    _train(emb, ref, fo, to, _fixed_subset_batches(rng, subset, 6))
    after = _rows(emb, np.arange(30))
    np.testing.assert_allclose(after, ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    rest = np.setdiff1d(np.arange(30), subset)
    np.testing.assert_array_equal(after[rest], before[rest])


def test_adagrad_matches_torch_sparse_adagrad(tmp_path):
    rng = np.random.default_rng(3)
    emb, ref = _seeded(tmp_path, 30, 4, rng, size_factor=2, sparse=True)
    batches = [rng.integers(0, 30, (5, 2)) for _ in range(6)]  # different rows each step
    _train(emb, ref, flow.optim.Adagrad(emb.parameters(), lr=0.1, lr_decay=0.01, initial_accumulator_value=0.2),
           torch.optim.Adagrad(ref.parameters(), lr=0.1, lr_decay=0.01, initial_accumulator_value=0.2), batches)
    np.testing.assert_allclose(_rows(emb, np.arange(30)), ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


def _ftrl_numpy(w, grads, lr, lr_power, init_acc, l1, l2, beta):
    acc, z = np.full_like(w, init_acc), np.zeros_like(w)
    for g in grads:
        acc1 = acc + g * g
        sigma = (acc1 ** lr_power - acc ** lr_power) / lr
        z = z + g - sigma * w
        w = np.where(np.abs(z) >= l1, (np.sign(z) * l1 - z) / ((beta + acc1 ** lr_power) / lr + l2), 0.0)
        acc = acc1
    return w


def test_ftrl_sparse_and_dense_match_the_formula(tmp_path):
    rng = np.random.default_rng(4)
    vocab, dim = 12, 3
    emb, _ = _seeded(tmp_path, vocab, dim, rng, size_factor=3)
    w0 = _rows(emb, np.arange(vocab)).astype(np.float64)
    dense = flow.nn.Parameter(flow.tensor(w0.astype(np.float32)))
    kw = dict(lr=0.5, lr_power=-0.5, initial_accumulator_value=0.1, lambda1=0.01, lambda2=0.02, beta=0.1)
    fo, do = OE.Ftrl(emb.parameters(), **kw), OE.Ftrl([dense], **kw)
    grads = []
    for s in range(4):
        ids = np.arange(vocab)  # every row each step: the sparse and dense updates agree
        g = rng.standard_normal((vocab, dim)).astype(np.float32)
        (emb(flow.tensor(ids)) * flow.tensor(g)).sum().backward()
        fo.step()
        fo.zero_grad()
        (dense * flow.tensor(g)).sum().backward()
        do.step()
        do.zero_grad()
        grads.append(g.astype(np.float64))
    expect = _ftrl_numpy(w0, grads, 0.5, -0.5, 0.1, 0.01, 0.02, 0.1)
    np.testing.assert_allclose(_rows(emb, np.arange(vocab)), expect, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(dense.detach().numpy(), expect, rtol=1e-4, atol=1e-6)


def test_padding_idx_reads_zeros_and_is_not_trained(tmp_path):
    rng = np.random.default_rng(5)
    emb = _embedding(tmp_path, dim=3, padding_idx=0)
    out = emb(flow.tensor([[0, 1], [2, 0]]))
    np.testing.assert_array_equal(out.numpy()[[0, 1], [0, 1]], np.zeros((2, 3), np.float32))
    opt = flow.optim.SGD(emb.parameters(), lr=1.0)
    (out * flow.tensor(rng.standard_normal((2, 2, 3)).astype(np.float32))).sum().backward()
    opt.step()
    assert not emb.read_rows(flow.tensor([0]))[1].numpy()[0]  # never stored


def test_gradients_of_two_backwards_add_up_and_zero_grad_drops_them(tmp_path):
    rng = np.random.default_rng(6)
    emb, ref = _seeded(tmp_path, 10, 2, rng)
    opt, topt = flow.optim.SGD(emb.parameters(), lr=0.5), torch.optim.SGD(ref.parameters(), lr=0.5)
    emb(flow.tensor([1, 2])).sum().backward()
    opt.zero_grad()  # a step not taken
    for ids in ([1, 2], [2, 3]):
        emb(flow.tensor(ids)).sum().backward()
        ref(torch.tensor(ids)).sum().backward()
    opt.step()
    topt.step()
    np.testing.assert_allclose(_rows(emb, np.arange(10)), ref.weight.detach().numpy(), rtol=1e-6)


def test_one_embedding_optimizer_wrapper(tmp_path):
    rng = np.random.default_rng(7)
    emb, ref = _seeded(tmp_path, 10, 2, rng)
    opt = OE.Optimizer(flow.optim.SGD(emb.parameters(), lr=0.5), embeddings=[emb])
    emb(flow.tensor([3, 4])).sum().backward()
    opt.step()
    opt.zero_grad()
    ref(torch.tensor([3, 4])).sum().backward()
    torch.optim.SGD(ref.parameters(), lr=0.5).step()
    np.testing.assert_allclose(_rows(emb, np.arange(10)), ref.weight.detach().numpy(), rtol=1e-6)
    other = _embedding(tmp_path / "o")
    with pytest.raises(ValueError, match="not in the optimizer"):
        OE.Optimizer(flow.optim.SGD(emb.parameters(), lr=0.5), embeddings=[other])


def test_errors_are_typed_and_named(tmp_path):
    emb = _embedding(tmp_path, num_tables=2)
    with pytest.raises(TypeError, match="MultiTableEmbedding.forward: ids must have the embedding's key_type"):
        emb(flow.tensor([[1.0, 2.0]]))
    with pytest.raises(TypeError, match="MultiTableEmbedding.forward: ids must have"):
        emb(flow.tensor([[1, 2]], dtype=flow.int32))
    with pytest.raises(ValueError, match="MultiTableEmbedding.forward: table_ids must have the shape of ids"):
        emb(flow.tensor([[1, 2]]), flow.tensor([0, 1], dtype=flow.int32))
    with pytest.raises(ValueError, match=r"ids must have shape \(\.\.\., 2\)"):
        emb(flow.tensor([[1, 2, 3]]))
    with pytest.raises(IndexError, match="table id 5 is out of range for 2 tables"):
        emb(flow.tensor([1, 2]), flow.tensor([0, 5], dtype=flow.int32))
    bad = _store(tmp_path)
    bad["kv_store"]["caches"][0]["value_memory_kind"] = "tape"
    with pytest.raises(ValueError, match="MultiTableEmbedding: unknown store kind 'tape'"):
        OE.MultiTableEmbedding("x", 4, flow.float, flow.int64, None, bad)
    with pytest.raises(ValueError, match="MultiTableEmbedding: store_options must be made by"):
        OE.MultiTableEmbedding("x", 4, flow.float, flow.int64, None, {"kind": "ssd"})
    with pytest.raises(ValueError, match="unknown initializer type 'laplace'"):
        OE.MultiTableEmbedding("x", 4, flow.float, flow.int64, [{"initializer": {"type": "laplace"}}], _store(tmp_path))
    with pytest.raises(TypeError, match="key_type must be an integer dtype"):
        OE.MultiTableEmbedding("x", 4, flow.float, flow.float32, None, _store(tmp_path))
    with pytest.raises(ValueError, match="make_device_mem_store_options: capacity must be positive"):
        OE.make_device_mem_store_options("/tmp/x", 0)
    with pytest.raises(ValueError, match="make_cached_ssd_store_options: cache_budget_mb"):
        OE.make_cached_ssd_store_options(0, "/tmp/x")
    # an optimizer without a sparse form, and a row too small for the optimizer's state
    one = _embedding(tmp_path / "1")
    one(flow.tensor([1])).sum().backward()
    with pytest.raises(NotImplementedError, match="RMSprop has no sparse update"):
        flow.optim.RMSprop(one.parameters()).step()
    one(flow.tensor([1])).sum().backward()
    with pytest.raises(ValueError, match=r"the Adam update keeps 12 floats per row.*size_factor=3"):
        flow.optim.Adam(one.parameters()).step()


def _with_linear(tmp_path, rng, **kw):
    emb, ref = _seeded(tmp_path, 20, 4, rng, **kw)
    lin, tlin = flow.nn.Linear(4, 1), torch.nn.Linear(4, 1)
    with torch.no_grad():
        tlin.weight.copy_(torch.from_numpy(lin.weight.detach().numpy()))
        tlin.bias.copy_(torch.from_numpy(lin.bias.detach().numpy()))
    return emb, ref, lin, tlin


def test_clipping_counts_the_table_as_a_dense_embedding(tmp_path):
    rng = np.random.default_rng(8)
    emb, ref, lin, tlin = _with_linear(tmp_path, rng)
    params = list(emb.parameters()) + list(lin.parameters())
    tparams = list(ref.parameters()) + list(tlin.parameters())
    opt, topt = flow.optim.SGD(params, lr=0.5), torch.optim.SGD(tparams, lr=0.5)
    for _ in range(3):
        ids = rng.integers(0, 20, (6, 3))  # duplicates: the norm is that of the summed rows
        lin(emb(flow.tensor(ids))).pow(2).sum().backward()
        tlin(ref(torch.from_numpy(ids))).pow(2).sum().backward()
        total = flow.nn.utils.clip_grad_norm_(params, 0.3)
        ttotal = torch.nn.utils.clip_grad_norm_(tparams, 0.3)
        np.testing.assert_allclose(float(total), float(ttotal), rtol=1e-5)
        assert float(ttotal) > 0.3  # (the clipping did something)
        opt.step()
        opt.zero_grad()
        topt.step()
        topt.zero_grad()
    np.testing.assert_allclose(_rows(emb, np.arange(20)), ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lin.weight.detach().numpy(), tlin.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_grad_scaler_unscales_the_tables_gradient(tmp_path):
    rng = np.random.default_rng(9)
    emb, ref, lin, tlin = _with_linear(tmp_path, rng)
    opt = flow.optim.SGD(list(emb.parameters()) + list(lin.parameters()), lr=0.1)
    topt = torch.optim.SGD(list(ref.parameters()) + list(tlin.parameters()), lr=0.1)
    scaler = flow.amp.GradScaler(init_scale=2.0 ** 12)
    for _ in range(3):
        ids = rng.integers(0, 20, (6, 3))
        scaler.scale(lin(emb(flow.tensor(ids))).pow(2).sum()).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        tlin(ref(torch.from_numpy(ids))).pow(2).sum().backward()
        topt.step()
        topt.zero_grad()
    # (float32: duplicate ids' gradients are summed in another order than torch's dense sums)
    np.testing.assert_allclose(_rows(emb, np.arange(20)), ref.weight.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_deepcopy_has_its_own_rows(tmp_path):
    import copy
    rng = np.random.default_rng(10)
    emb, _ = _seeded(tmp_path, 10, 3, rng, size_factor=3)
    opt = flow.optim.Adam(emb.parameters(), lr=0.1)
    emb(flow.tensor([1, 2])).sum().backward()
    opt.step()
    twin = copy.deepcopy(emb)
    np.testing.assert_array_equal(twin.read_rows(flow.arange(10))[0].numpy(), emb.read_rows(flow.arange(10))[0].numpy())
    t_opt = flow.optim.SGD(twin.parameters(), lr=1.0)
    twin(flow.tensor([1])).sum().backward()
    t_opt.step()  # steps the copy's rows only
    assert not np.array_equal(_rows(twin, [1]), _rows(emb, [1]))
    np.testing.assert_array_equal(_rows(twin, [2]), _rows(emb, [2]))


@pytest.mark.parametrize("make", [
    lambda p: (flow.optim.Adam(p[0], lr=0.05, weight_decay=0.1), torch.optim.Adam(p[1], lr=0.05, weight_decay=0.1)),
    lambda p: (flow.optim.AdamW(p[0], lr=0.05, weight_decay=0.1), torch.optim.AdamW(p[1], lr=0.05, weight_decay=0.1)),
    lambda p: (flow.optim.SGD(p[0], lr=0.1, momentum=0.5, dampening=0.3, weight_decay=0.2),
               torch.optim.SGD(p[1], lr=0.1, momentum=0.5, dampening=0.3, weight_decay=0.2)),
], ids=["adam-l2", "adamw", "sgd-dampening-decay"])
def test_weight_decay_of_touched_rows_matches_torch(tmp_path, make):
    # torch's dense update also decays the rows no step touches; the sparse one leaves them (as
    # OneFlow's): the touched rows agree, the others keep their values
    rng = np.random.default_rng(11)
    emb, ref = _seeded(tmp_path, 30, 4, rng, size_factor=3)
    before = _rows(emb, np.arange(30))
    subset = np.array([0, 3, 9, 17, 22, 28])
    fo, to = make((emb.parameters(), ref.parameters()))
    _train(emb, ref, fo, to, _fixed_subset_batches(rng, subset, 5))
    after = _rows(emb, np.arange(30))
    np.testing.assert_allclose(after[subset], ref.weight.detach().numpy()[subset], rtol=1e-5, atol=1e-6)
    rest = np.setdiff1d(np.arange(30), subset)
    np.testing.assert_array_equal(after[rest], before[rest])


def test_smart_decay_adam_catches_up_skipped_steps(tmp_path):
    rng = np.random.default_rng(12)
    vocab, dim = 12, 3
    line = (3 * dim + 1) // 2 * 2 + 2  # upstream's row: w, m, v, then an int64 step
    emb, _ = _seeded(tmp_path, vocab, dim, rng, storage_dim=line)
    w = _rows(emb, np.arange(vocab)).astype(np.float64)
    m, v, last = np.zeros_like(w), np.zeros_like(w), np.zeros(vocab, np.int64)
    lr, b1, b2, eps, wd = 0.05, 0.8, 0.9, 1e-6, 0.01
    opt = OE.SmartDecayAdam(emb.parameters(), lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    for step in range(1, 7):
        ids = rng.choice(vocab, 4, replace=False)  # rows skip steps at random
        g = rng.standard_normal((4, dim)).astype(np.float32)
        (emb(flow.tensor(ids)) * flow.tensor(g)).sum().backward()
        opt.step()
        opt.zero_grad()
        for i, r in enumerate(ids):  # upstream's kernel, in numpy
            k = step - last[r]
            gr = g[i] + wd * w[r]
            catchup = m[r] * b1 * (1 - b1 ** (k - 1)) / (1 - b1) if k > 1 else 0.0
            m[r] = b1 ** k * m[r] + (1 - b1) * gr
            v[r] = b2 ** k * v[r] + (1 - b2) * gr * gr
            w[r] = w[r] - lr * (m[r] + catchup) / (np.sqrt(v[r]) + eps)
            last[r] = step
    np.testing.assert_allclose(_rows(emb, np.arange(vocab)), w, rtol=1e-5, atol=1e-6)
