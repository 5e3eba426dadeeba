"""flow.one_embedding's snapshots (round trip, state_dict, a kill in the middle of a save, the
persistent table reader / writer) and training through nn.Graph and a DLRM-style model against a
torch twin with dense nn.Embedding tables (docs/one_embedding.md)."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import torch

import oneflow as flow

OE = flow.one_embedding


def _embedding(path, dim=4, num_tables=1, size_factor=1, name="emb"):
    tables = [OE.make_table_options(OE.make_uniform_initializer(-0.1, 0.1)) for _ in range(num_tables)]
    store = OE.make_cached_ssd_store_options(cache_budget_mb=16, persistent_path=str(path),
                                             capacity=1000, size_factor=size_factor)
    return OE.MultiTableEmbedding(name, dim, flow.float, flow.int64, tables, store)


def _all_rows(emb, n):
    return emb.read_rows(flow.arange(n))[0].numpy()


def _adam_steps(emb, opt, rng, steps, vocab=50):
    for _ in range(steps):
        out = emb(flow.tensor(rng.integers(0, vocab, (8, 2))))
        (out * out).sum().backward()
        opt.step()
        opt.zero_grad()


def test_snapshot_round_trip_keeps_rows_and_optimizer_state(tmp_path):
    rng = np.random.default_rng(0)
    emb = _embedding(tmp_path, size_factor=3)
    opt = flow.optim.Adam(emb.parameters(), lr=0.05)
    _adam_steps(emb, opt, rng, 3)
    saved, n = _all_rows(emb, 50), emb.num_rows()
    emb.save_snapshot("step3")
    assert os.path.exists(os.path.join(str(tmp_path), "0-1", "snapshots", "step3"))
    _adam_steps(emb, opt, rng, 2)
    emb(flow.tensor([900, 901]))
    assert not np.array_equal(_all_rows(emb, 50), saved)
    emb.load_snapshot("step3")
    assert emb.num_rows() == n
    np.testing.assert_array_equal(_all_rows(emb, 50), saved)  # the rows and Adam's m, v
    # a new embedding on the same path continues from the snapshot the same way
    other = _embedding(tmp_path, size_factor=3)
    other.load_snapshot("step3")
    o_opt = flow.optim.Adam(other.parameters(), lr=0.05)
    o_opt.load_state_dict(opt.state_dict())
    r1, r2 = np.random.default_rng(9), np.random.default_rng(9)
    _adam_steps(emb, opt, r1, 2)
    _adam_steps(other, o_opt, r2, 2)
    np.testing.assert_array_equal(_all_rows(other, 50), _all_rows(emb, 50))
    with pytest.raises(FileNotFoundError, match="load_snapshot: no snapshot named 'nope'"):
        emb.load_snapshot("nope")
    with pytest.raises(ValueError, match="save_snapshot: snapshot_name"):
        emb.save_snapshot("../x")


def test_damaged_snapshot_is_refused(tmp_path):
    emb = _embedding(tmp_path)
    emb(flow.arange(20))
    emb.save_snapshot("s")
    path = os.path.join(str(tmp_path), "0-1", "snapshots", "s")
    data = bytearray(open(path, "rb").read())
    data[100] ^= 0xFF
    open(path, "wb").write(bytes(data))
    emb(flow.arange(20, 30))
    before = _all_rows(emb, 30)
    with pytest.raises(RuntimeError, match="damaged"):
        emb.load_snapshot("s")
    open(path, "wb").write(bytes(data[:60]))
    with pytest.raises(RuntimeError, match="truncated"):
        emb.load_snapshot("s")
    # (the file is checked whole before it replaces the table: a refused load changes nothing)
    assert emb.num_rows() == 30
    np.testing.assert_array_equal(_all_rows(emb, 30), before)


_STORES = {"memory": ("make_device_mem_store_options", {"capacity": 10}),
           "ssd": ("make_cached_ssd_store_options", {"capacity": 10, "cache_budget_mb": 1})}


@pytest.mark.parametrize("kind", ["memory", "ssd"])
def test_a_kill_during_save_leaves_a_whole_snapshot(tmp_path, kind):
    # a child saves snapshots of a large table in a loop, each round with every row set to the
    # round's number; killed at an arbitrary moment, the snapshot on disk is one whole round
    # (the SSD store: the same, and a load into it streams the file: Note [Tables on disk])
    script = textwrap.dedent(f"""
        import oneflow as flow, sys
        OE = flow.one_embedding
        store = OE.{_STORES[kind][0]}(persistent_path={str(tmp_path)!r}, **{_STORES[kind][1]!r})
        emb = OE.MultiTableEmbedding("k", 64, flow.float, flow.int64, None, store)
        ids = flow.arange(200000)
        for r in range(1000000):
            emb.write_rows(ids, flow.full((200000, 64), float(r)))
            emb.save_snapshot("s")
            if r == 0:
                print("saved", flush=True)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert child.stdout.readline().strip() == b"saved"
    time.sleep(0.7)
    child.send_signal(signal.SIGKILL)
    child.wait()
    table_dir = os.path.join(str(tmp_path), "0-1")
    left = [f for f in os.listdir(table_dir) if f.startswith("rows-")]
    # the killed child's rows, keys, flags and its key index's runs (Note [Index on disk])
    assert len([f for f in left if ".index.run" not in f]) == (3 if kind == "ssd" else 0), left
    assert all(f.split(".bin")[0] == left[0].split(".bin")[0] for f in left), left
    store = getattr(OE, _STORES[kind][0])(persistent_path=str(tmp_path), **_STORES[kind][1])
    emb = OE.MultiTableEmbedding("k", 64, flow.float, flow.int64, None, store)
    # a new SSD table removes the files of dead processes (python/oneflow/one_embedding/_workfiles.py)
    assert not set(left) & set(os.listdir(table_dir))
    emb.load_snapshot("s")
    rows = emb.read_rows(flow.arange(200000))[0].numpy()
    assert emb.num_rows() == 200000
    assert (rows == rows[0, 0]).all()


def test_state_dict_names_a_snapshot(tmp_path):
    emb = _embedding(tmp_path)
    before = emb(flow.arange(10)).numpy()
    sd = emb.state_dict()
    assert "OneEmbeddingSnapshot" in sd and "shadow" in sd
    emb.write_rows(flow.arange(10), flow.zeros(10, 4))
    missing = emb.load_state_dict(sd)
    assert not missing.missing_keys and not missing.unexpected_keys
    np.testing.assert_array_equal(emb(flow.arange(10)).numpy(), before)


def test_persistent_table_writer_and_reader(tmp_path):
    rng = np.random.default_rng(1)
    keys = rng.permutation(1000)[:300].astype(np.int64)
    values = rng.standard_normal((300, 4)).astype(np.float32)
    table_dir = os.path.join(str(tmp_path), "0-1")
    with OE.make_persistent_table_writer([table_dir], "seed", flow.int64, flow.float, 4) as w:
        w.write(keys[:100], values[:100])
        w.write(keys[100:], values[100:])
    emb = _embedding(tmp_path)
    emb.load_snapshot("seed")
    np.testing.assert_array_equal(emb(flow.tensor(keys)).numpy(), values)
    emb.save_snapshot("back")
    got_k, got_v = [], []
    for k, v in OE.make_persistent_table_reader([table_dir], "back", flow.int64, flow.float, 4):
        got_k.append(k)
        got_v.append(v)
    k, v = np.concatenate(got_k), np.concatenate(got_v)
    order = np.argsort(k)
    np.testing.assert_array_equal(k[order], np.sort(keys))
    np.testing.assert_array_equal(v[order], values[np.argsort(keys)])
    with pytest.raises(TypeError, match="make_persistent_table_reader: key_type"):
        OE.make_persistent_table_reader([table_dir], "back", flow.float, flow.float, 4)
    # a snapshot of more keys than a chunk is read a chunk at a time (65536 keys), every key once
    many = rng.permutation(200000)[:70000].astype(np.int64)
    with OE.make_persistent_table_writer([table_dir], "many", flow.int64, flow.float, 1) as w:
        w.write(many, many.astype(np.float32))
    chunks = list(OE.make_persistent_table_reader([table_dir], "many", flow.int32, flow.float, 1))
    assert [len(c[0]) for c in chunks] == [65536, 70000 - 65536] and chunks[0][0].dtype == np.int32
    np.testing.assert_array_equal(np.concatenate([c[0] for c in chunks]), many)
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks])[:, 0], many)
    # a damaged file is refused before its first chunk
    path = os.path.join(table_dir, "snapshots", "many")
    data = bytearray(open(path, "rb").read())
    data[-20] ^= 0xFF
    open(path, "wb").write(bytes(data))
    with pytest.raises(RuntimeError, match="damaged"):
        next(iter(OE.make_persistent_table_reader([table_dir], "many", flow.int64, flow.float, 1)))


# ---- training: nn.Graph and a DLRM-style model against torch twins -------------------------

NUM_TABLES, VOCAB, DIM, DENSE = 4, 30, 8, 5


class _Model(flow.nn.Module):
    """DLRM in small: a bottom MLP over dense features, one embedding per sparse field, pairwise
    dot-product interaction, a top MLP to a logit."""

    def __init__(self, emb):
        super().__init__()
        self.emb = emb
        self.bottom = flow.nn.Sequential(flow.nn.Linear(DENSE, 16), flow.nn.ReLU(), flow.nn.Linear(16, DIM))
        n = NUM_TABLES + 1
        self.top = flow.nn.Sequential(flow.nn.Linear(DIM + n * (n - 1) // 2, 16), flow.nn.ReLU(), flow.nn.Linear(16, 1))

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        feats = flow.cat([x.unsqueeze(1), self.emb(sparse)], 1)  # (B, n, DIM)
        inter = flow.bmm(feats, feats.transpose(1, 2))
        li, lj = np.tril_indices(NUM_TABLES + 1, -1)
        pairs = inter[:, flow.tensor(li), flow.tensor(lj)]
        return self.top(flow.cat([x, pairs], 1))


class _Twin(torch.nn.Module):
    def __init__(self, model, rows):
        super().__init__()
        self.tables = torch.nn.ModuleList()
        for t in range(NUM_TABLES):
            e = torch.nn.Embedding(VOCAB, DIM)
            with torch.no_grad():
                e.weight.copy_(torch.from_numpy(rows[t * VOCAB:(t + 1) * VOCAB]))
            self.tables.append(e)
        self.bottom = torch.nn.Sequential(torch.nn.Linear(DENSE, 16), torch.nn.ReLU(), torch.nn.Linear(16, DIM))
        n = NUM_TABLES + 1
        self.top = torch.nn.Sequential(torch.nn.Linear(DIM + n * (n - 1) // 2, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
        with torch.no_grad():
            for mine, theirs in ((self.bottom, model.bottom), (self.top, model.top)):
                for p, q in zip(mine.parameters(), theirs.parameters()):
                    p.copy_(torch.from_numpy(q.detach().numpy()))

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        embs = [self.tables[t](sparse[:, t] - t * VOCAB) for t in range(NUM_TABLES)]
        feats = torch.stack([x] + embs, 1)
        inter = torch.bmm(feats, feats.transpose(1, 2))
        li, lj = np.tril_indices(NUM_TABLES + 1, -1)
        return self.top(torch.cat([x, inter[:, torch.tensor(li), torch.tensor(lj)]], 1))


def _data(rng, steps, batch=16):
    out = []
    for _ in range(steps):
        dense = rng.random((batch, DENSE)).astype(np.float32)
        # field t's ids are offset by t * VOCAB (keys unique across tables, as the scripts do)
        sparse = rng.integers(0, VOCAB, (batch, NUM_TABLES)) + np.arange(NUM_TABLES) * VOCAB
        label = (dense.sum(1, keepdims=True) + (sparse % 3 == 0).sum(1, keepdims=True) > 3).astype(np.float32)
        out.append((dense, sparse.astype(np.int64), label))
    return out


def _models(tmp_path, rng):
    flow.manual_seed(0)
    emb = _embedding(tmp_path, dim=DIM, num_tables=NUM_TABLES, name="dlrm")
    rows = (rng.standard_normal((NUM_TABLES * VOCAB, DIM)) * 0.3).astype(np.float32)
    emb.write_rows(flow.arange(NUM_TABLES * VOCAB), flow.tensor(rows))
    model = _Model(emb)
    return model, _Twin(model, rows)


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
def test_dlrm_style_model_trains_like_its_torch_twin(tmp_path, graph):
    rng = np.random.default_rng(2)
    model, twin = _models(tmp_path, rng)
    opt = flow.optim.SGD(model.parameters(), lr=0.2)
    topt = torch.optim.SGD(twin.parameters(), lr=0.2)
    loss_fn, tloss_fn = flow.nn.BCEWithLogitsLoss(), torch.nn.BCEWithLogitsLoss()

    class Train(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(opt)

        def build(self, dense, sparse, label):
            loss = loss_fn(self.model(dense, sparse), label)
            loss.backward()
            return loss

    train = Train()
    data = _data(rng, 40)
    losses, tlosses = [], []
    for dense, sparse, label in data:
        if graph:
            loss = train(flow.tensor(dense), flow.tensor(sparse), flow.tensor(label))
        else:
            loss = loss_fn(model(flow.tensor(dense), flow.tensor(sparse)), flow.tensor(label))
            loss.backward()
            opt.step()
            opt.zero_grad()
        tl = tloss_fn(twin(torch.from_numpy(dense), torch.from_numpy(sparse)), torch.from_numpy(label))
        tl.backward()
        topt.step()
        topt.zero_grad()
        losses.append(float(loss.numpy()))
        tlosses.append(tl.item())
    np.testing.assert_allclose(losses, tlosses, rtol=1e-4, atol=1e-5)
    assert np.mean(losses[-10:]) < np.mean(losses[:10]) - 0.05
    rows = _all_rows(model.emb, NUM_TABLES * VOCAB)
    ref = np.concatenate([t.weight.detach().numpy() for t in twin.tables])
    np.testing.assert_allclose(rows, ref, rtol=1e-4, atol=1e-5)


def test_ssd_store_keeps_rows_in_a_file_and_trains_as_the_memory_store(tmp_path):
    def make(kind, path):
        tables = [OE.make_table_options(OE.make_normal_initializer(0.0, 0.1))]
        if kind == "ssd":
            store = OE.make_cached_ssd_store_options(cache_budget_mb=1, persistent_path=str(path),
                                                     capacity=10, size_factor=3)
        else:
            store = OE.make_cached_host_mem_store_options(cache_budget_mb=1, persistent_path=str(path),
                                                          capacity=10, size_factor=3)
        return OE.MultiTableEmbedding("a/b", 16, flow.float, flow.int64, tables, store, seed=3)

    disk, mem = make("ssd", tmp_path / "d"), make("mem", tmp_path / "m")
    assert disk._store.rows_on_disk and not mem._store.rows_on_disk
    table_dir = os.path.join(str(tmp_path / "d"), "0-1")
    files = [f for f in os.listdir(table_dir) if f.startswith("rows-a_b-") and f.endswith(".bin")]
    assert len(files) == 1
    index = [files[0] + ".keys", files[0] + ".state"]  # (Note [Tables on disk])
    rng = np.random.default_rng(4)
    for emb in (disk, mem):
        opt = flow.optim.Adam(emb.parameters(), lr=0.01)
        r = np.random.default_rng(4)
        for _ in range(4):  # (the file grows past its first 4 MiB mapping: 100k rows of 48 floats)
            out = emb(flow.tensor(r.integers(0, 100000, 25000)))
            (out * out).sum().backward()
            opt.step()
            opt.zero_grad()
    assert disk.num_rows() == mem.num_rows() > 50000
    assert os.path.getsize(os.path.join(table_dir, files[0])) >= disk.num_rows() * 48 * 4
    # the keys and state flags are in files too, and the key index: runs of sorted (key, row)
    # written sequentially, within the store's 1 MiB cache budget (Note [Index on disk])
    assert os.path.getsize(os.path.join(table_dir, index[0])) >= disk.num_rows() * 8
    assert os.path.getsize(os.path.join(table_dir, index[1])) >= disk.num_rows()
    runs = sorted(set(os.listdir(table_dir)) - {files[0], *index})
    assert runs and all(f.startswith(files[0] + ".index.run") for f in runs), runs
    # (the keys since the last flush are in the buffer)
    assert 0 < sum(os.path.getsize(os.path.join(table_dir, f)) for f in runs) <= disk.num_rows() * 16
    assert disk._store.index_on_disk and not mem._store.index_on_disk
    assert disk._store.index_peak_bytes <= 1 << 20
    ids = flow.tensor(rng.integers(0, 100000, 1000))
    np.testing.assert_array_equal(disk.read_rows(ids)[0].numpy(), mem.read_rows(ids)[0].numpy())
    disk.save_snapshot("s")
    disk.load_snapshot("s")
    np.testing.assert_array_equal(disk.read_rows(ids)[0].numpy(), mem.read_rows(ids)[0].numpy())
    del disk
    import gc
    gc.collect()
    assert os.listdir(table_dir) == ["snapshots"]  # working storage, not a snapshot


def _private_mib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssAnon")) / 1024


@pytest.mark.parametrize("kind", ["ssd", "memory"])
def test_ssd_store_keeps_its_rows_out_of_private_memory(tmp_path, kind):
    # 9 * 10^5 new keys: the memory store's index and rows grow the process's private memory by
    # ~100 MiB (2^21 slots of 16 bytes: 32 MiB, keys, flags, rows of 16 floats: 62 MiB); the SSD
    # store's keys, flags and rows live in mapped files (Note [Tables on disk]), page cache the
    # kernel may evict, and its key index in files within its 1 MiB budget (Note [Index on
    # disk]): its private memory grows by at most that
    store = getattr(OE, _STORES[kind][0])(persistent_path=str(tmp_path), **_STORES[kind][1])
    emb = OE.MultiTableEmbedding("rss", 16, flow.float, flow.int64, None, store)
    with flow.no_grad():
        emb(flow.arange(100000))  # (the batch's working arrays allocated once)
        before = _private_mib()
        for b in range(100000, 1000000, 100000):
            emb(flow.arange(b, b + 100000))
    grown = _private_mib() - before
    assert emb.num_rows() == 1000000
    assert (grown < 4) if kind == "ssd" else (grown > 85), grown
    if kind == "ssd":
        assert emb._store.index_peak_bytes <= 1 << 20


def test_dlrm_example_prefills_and_trains(tmp_path):
    # examples/dlrm_one_embedding.py --prefill: the rows of every key created first (in their
    # tables), then training finds them all (no new rows)
    import subprocess
    import sys
    root = os.path.join(os.path.dirname(__file__), "..")
    r = subprocess.run([sys.executable, os.path.join(root, "examples", "dlrm_one_embedding.py"), "--rows", "26000",
                        "--prefill", "26000", "--steps", "4", "--batch-size", "64", "--persistent-path", str(tmp_path)],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "prefill 26,000 rows" in r.stdout and "written" in r.stdout, r.stdout
    assert "table rows 26,000" in r.stdout, r.stdout
