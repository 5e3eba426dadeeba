"""one_embedding trains a table larger than its memory budget (issue 42; Note [Index on disk],
src/embedding/disk_index.h): the SSD store's key index is runs of sorted (key, row) pairs in files
with an in-memory buffer bounded by cache_budget_mb, so a table whose index alone is several times
the budget (its rows many times more) trains as torch's nn.Embedding on the rows it touches."""
import os
import time

import numpy as np
import pytest
import torch

import oneflow as flow

OE = flow.one_embedding


def _ssd(path, budget_mb, dim, size_factor=1, name="big"):
    tables = [OE.make_table_options(OE.make_uniform_initializer(low=-0.1, high=0.1))]
    store = OE.make_cached_ssd_store_options(cache_budget_mb=budget_mb, persistent_path=str(path), capacity=1000,
                                             size_factor=size_factor)
    return OE.MultiTableEmbedding(name, dim, flow.float, flow.int64, tables, store, seed=5)


def _train_as_torch(emb, ref, opt, topt, rng, n_steps, shape, V, D, compare, watch=lambda: None):
    """n_steps of random lookups + a weighted-sum loss + an optimizer step on `emb` and on the torch
    reference, the lookups compared each step; returns (the ids touched, ids per second)."""
    touched = set()
    t0, n_ids = time.perf_counter(), 0
    for _ in range(n_steps):
        ids = rng.integers(0, V, shape)
        w = rng.standard_normal(ids.shape + (D,)).astype(np.float32)
        out = emb(flow.tensor(ids))
        watch()
        tout = ref(torch.from_numpy(ids))
        compare(out.numpy(), tout.detach().numpy())
        (out * flow.tensor(w)).sum().backward()
        opt.step()
        opt.zero_grad()
        watch()
        (tout * torch.from_numpy(w)).sum().backward()
        topt.step()
        topt.zero_grad()
        touched.update(ids.ravel().tolist())
        n_ids += ids.size
    return touched, n_ids / (time.perf_counter() - t0)


def test_table_larger_than_its_budget_trains_as_torch_embedding(tmp_path):
    V, D, budget = 400_000, 8, 1  # (the index alone: 400k x 16 bytes = 6.1 MiB; the rows 12 MiB)
    emb = _ssd(tmp_path, budget, D)
    ref = torch.nn.Embedding(V, D)
    init = ref.weight.detach().numpy().copy()
    t0 = time.perf_counter()
    for b in range(0, V, 100_000):  # (written in chunks: the index flushes and merges its runs)
        emb.write_rows(flow.tensor(np.arange(b, b + 100_000)), flow.tensor(init[b:b + 100_000]))
    fill = V / (time.perf_counter() - t0)
    store = emb._store
    assert store.index_on_disk and len(store) == V
    assert store.index_peak_bytes <= budget << 20 and V * 16 > 6 * (budget << 20), store.index_peak_bytes
    opt = flow.optim.SGD(emb.parameters(), lr=0.5)
    topt = torch.optim.SGD(ref.parameters(), lr=0.5)
    rng = np.random.default_rng(0)
    touched, steps = _train_as_torch(emb, ref, opt, topt, rng, 4, (2048, 4), V, D,
                                     lambda a, b: np.testing.assert_array_equal(a, b))
    rows = np.array(sorted(touched))
    got, found = emb.read_rows(flow.tensor(rows))
    assert found.numpy().all()
    np.testing.assert_allclose(got.numpy(), ref.weight.detach().numpy()[rows], rtol=1e-6, atol=1e-7)
    untouched = np.setdiff1d(np.arange(0, V, 997), rows)
    np.testing.assert_array_equal(emb.read_rows(flow.tensor(untouched))[0].numpy(), init[untouched])
    assert store.index_peak_bytes <= budget << 20
    print(f"rows written {fill:,.0f}/s, training {steps:,.0f} ids/s, index memory peak "
          f"{store.index_peak_bytes / 2**20:.2f} MiB for {V * 16 / 2**20:.1f} MiB of index")


def _table_file_bytes(path):
    files = [os.path.join(r, f) for r, _, fs in os.walk(path) for f in fs]
    return sum(os.stat(f).st_blocks * 512 for f in files)  # (allocated: the files' holes not counted)


@pytest.mark.slow(seconds=9)  # (~8 s; the table above is the unmarked case of a table larger than its budget)
def test_table_many_times_its_cache_trains_as_torch_sparse_adagrad(tmp_path):
    # Note [Row cache] (src/embedding/store.h): 10^6 rows of 16 floats with Adagrad's state (128
    # bytes a row: 122 MiB of rows, and the keys, flags and index runs beside them) under
    # cache_budget_mb=8 -- 4 MiB for the index's memory, 4 MiB for the table's pages in the page
    # cache: after every lookup and step the table's pages in memory (mincore of its files) are
    # within that, the rest on disk, and sparse Adagrad steps over uniformly drawn ids give
    # torch's numbers (nn.Embedding(sparse=True) + torch.optim.Adagrad) on every row they touched
    V, D, budget_mb = 1_000_000, 16, 8
    emb = _ssd(tmp_path, budget_mb, D, size_factor=2)
    store = emb._store
    cap = store.row_cache_budget
    assert cap == (budget_mb << 20) // 2
    ref = torch.nn.Embedding(V, D, sparse=True)
    init = ref.weight.detach().numpy().copy()
    t0 = time.perf_counter()
    for b in range(0, V, 50_000):
        emb.write_rows(flow.tensor(np.arange(b, b + 50_000)), flow.tensor(init[b:b + 50_000]))
        assert store.cache_resident_bytes <= cap
    fill = V / (time.perf_counter() - t0)
    on_disk = _table_file_bytes(tmp_path)
    assert on_disk > 15 * (budget_mb << 20), on_disk  # the table: 15x its whole budget and more
    opt = flow.optim.Adagrad(emb.parameters(), lr=0.1, initial_accumulator_value=0.1)
    topt = torch.optim.Adagrad(ref.parameters(), lr=0.1, initial_accumulator_value=0.1)
    rng = np.random.default_rng(2)
    peaks, evictions = [0], store.cache_evictions
    touched, rate = _train_as_torch(
        emb, ref, opt, topt, rng, 24, (128, 2), V, D,
        lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7),
        watch=lambda: peaks.append(store.cache_resident_bytes))  # after each lookup and each step
    peak = max(peaks)
    assert peak <= cap, (peak, cap)
    assert store.cache_evictions > evictions  # (the steps' pages passed the budget: dropped, re-read)
    assert store.index_peak_bytes <= budget_mb << 20
    rows = np.array(sorted(touched))
    got, found = emb.read_rows(flow.tensor(rows))
    assert found.numpy().all()
    np.testing.assert_allclose(got.numpy()[:, :D], ref.weight.detach().numpy()[rows], rtol=1e-5, atol=1e-6)
    untouched = np.setdiff1d(np.arange(0, V, 991), rows)
    np.testing.assert_array_equal(emb.read_rows(flow.tensor(untouched))[0].numpy()[:, :D], init[untouched])
    assert store.cache_resident_bytes <= cap
    print(f"table files {on_disk / 2**20:.0f} MiB under a {budget_mb} MiB budget: rows written {fill:,.0f}/s, "
          f"Adagrad training {rate:,.0f} ids/s, page-cache peak {peak / 2**20:.2f} MiB, "
          f"{store.cache_evictions} evictions")


def test_new_keys_from_lookups_and_snapshots_with_the_index_on_disk(tmp_path):
    # rows created by lookups (the index's buffer flushed many times over), a snapshot saved and
    # loaded back into a fresh index, Clear through load_snapshot: the rows the memory store has
    emb = _ssd(tmp_path / "d", 1, 4, size_factor=3)
    tables = [OE.make_table_options(OE.make_uniform_initializer(low=-0.1, high=0.1))]
    mem = OE.MultiTableEmbedding("big", 4, flow.float, flow.int64, tables,
                                 OE.make_device_mem_store_options(persistent_path=str(tmp_path / "m"), capacity=10,
                                                                  size_factor=3), seed=5)
    rng = np.random.default_rng(1)
    for e in (emb, mem):
        opt = flow.optim.Adam(e.parameters(), lr=0.01)
        r = np.random.default_rng(1)
        for _ in range(3):
            out = e(flow.tensor(r.integers(-(2 ** 40), 2 ** 40, 60_000)))
            (out * out).sum().backward()
            opt.step()
            opt.zero_grad()
    assert emb._store.index_on_disk and emb.num_rows() == mem.num_rows() > 150_000
    probe = flow.tensor(np.random.default_rng(1).integers(-(2 ** 40), 2 ** 40, 60_000)[:5000])
    np.testing.assert_array_equal(emb.read_rows(probe)[0].numpy(), mem.read_rows(probe)[0].numpy())
    emb.save_snapshot("s")
    assert emb._store.cache_resident_bytes <= emb._store.row_cache_budget  # (Note [Row cache]: a save reads it all)
    emb.load_snapshot("s")
    assert emb._store.cache_resident_bytes <= emb._store.row_cache_budget
    np.testing.assert_array_equal(emb.read_rows(probe)[0].numpy(), mem.read_rows(probe)[0].numpy())
    missing = flow.tensor(rng.integers(2 ** 41, 2 ** 42, 100))
    assert not emb.read_rows(missing)[1].numpy().any()
    assert emb._store.index_peak_bytes <= 1 << 20
    table_dir = os.path.join(str(tmp_path / "d"), "0-1")
    del emb
    import gc
    gc.collect()
    assert not [f for f in os.listdir(table_dir) if ".index.run" in f]  # (working files go with the table)


def _page_cache_pages(path):
    """Which 4 KiB pages of the file at `path` are in the page cache: mincore of a fresh
    read-only mapping (mapping a file touches none of its pages)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    size = os.path.getsize(path)
    vec = ctypes.create_string_buffer((size + 4095) // 4096)
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
        assert addr not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
        assert libc.mincore(addr, size, vec) == 0, ctypes.get_errno()
        libc.munmap(addr, size)
    finally:
        os.close(fd)
    return (np.frombuffer(vec.raw, np.uint8) & 1).astype(bool)


def test_row_cache_keeps_the_hot_rows_across_evictions(tmp_path):
    # Note [Row cache]: an eviction drops the least recently used pages. Each step looks up and
    # updates 256 ids of a hot set (rows 0-2047: the first 32 pages of the rows file, 64-byte rows)
    # and 64 uniform ids of 400k rows (25 MiB), under cache_budget_mb=2 (1 MiB of pages): the
    # cold pages pass the budget every other operation, and after every lookup and step the hot
    # pages are still in the page cache (emptying the cache leaves none of them after the
    # operations that evict: half of them here), the numbers torch's
    V, D, budget_mb, hot = 400_000, 16, 2, 2048
    emb = _ssd(tmp_path, budget_mb, D)
    store = emb._store
    ref = torch.nn.Embedding(V, D, sparse=True)
    init = ref.weight.detach().numpy().copy()
    for b in range(0, V, 100_000):
        emb.write_rows(flow.tensor(np.arange(b, b + 100_000)), flow.tensor(init[b:b + 100_000]))
    rows_file = [os.path.join(r, f) for r, _, fs in os.walk(tmp_path) for f in fs if f.endswith(".bin")]
    assert len(rows_file) == 1, rows_file
    hot_pages = slice(0, hot * D * 4 // 4096)
    opt, topt = flow.optim.SGD(emb.parameters(), lr=0.5), torch.optim.SGD(ref.parameters(), lr=0.5)
    rng = np.random.default_rng(3)
    evictions, hot_kept, cold_fraction = store.cache_evictions, 0, []
    for step in range(40):
        ids = np.concatenate([rng.integers(0, hot, 256), rng.integers(hot, V, 64)])
        w = rng.standard_normal((ids.size, D)).astype(np.float32)
        out = emb(flow.tensor(ids))
        hot_kept += step >= 4 and _page_cache_pages(rows_file[0])[hot_pages].all()
        tout = ref(torch.from_numpy(ids))
        # (hot ids repeat within a step: their gradients are summed in another order than torch's)
        np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
        (out * flow.tensor(w)).sum().backward()
        opt.step()
        opt.zero_grad()
        (tout * torch.from_numpy(w)).sum().backward()
        topt.step()
        topt.zero_grad()
        assert store.cache_resident_bytes <= store.row_cache_budget
        if step >= 4:  # (the hot set touched whole by then)
            pages = _page_cache_pages(rows_file[0])
            hot_kept += pages[hot_pages].all()
            cold_fraction.append(pages[hot_pages.stop:].mean())
    assert store.cache_evictions - evictions >= 5, store.cache_evictions - evictions
    assert hot_kept == 72, hot_kept  # (after every lookup and every step)
    probe = np.arange(0, V, 397)
    np.testing.assert_allclose(emb.read_rows(flow.tensor(probe))[0].numpy(), ref.weight.detach().numpy()[probe],
                               rtol=1e-5, atol=1e-6)
    print(f"{store.cache_evictions - evictions} evictions in 40 steps; hot pages resident after all 72 measured "
          f"operations; cold pages resident {np.mean(cold_fraction):.2%} of the cold part of the file")
