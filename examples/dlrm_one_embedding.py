"""DLRM on synthetic Criteo-shaped data with flow.one_embedding (docs/one_embedding.md).

Each sample has 13 dense features and 26 categorical ones, as Criteo's; categorical field t draws
ids (Zipf-like, as click logs are) from a vocabulary of `--rows / 26` ids offset by t so that the
26 tables' keys differ, as OneFlow's DLRM preprocessing makes them. The label is a fixed random
function of the features, so the loss can fall. The embedding's rows are created by the lookups
that first meet them and live in the store chosen by `--store` (`ssd`: a memory-mapped row file
under `--persistent-path`, the page cache in front of it).

    [.venv/bin/python -m oneflow.distributed.launch --nproc_per_node N] \
    .venv/bin/python examples/dlrm_one_embedding.py [--rows N] [--store ssd|host|device]
        [--steps N] [--batch-size B] [--graph] [--persistent-path DIR] [--snapshot NAME]
        [--prefill N]

Launched on several processes, the table is sharded over them (docs/one_embedding.md: each holds
the keys that hash to it, the lookups shuffle ids and rows), the dense layers are global tensors
broadcast and every batch a global tensor split over the processes (each draws the same logical
batch and keeps its slice): one logical model trained as on one process.

`--prefill N` first creates N rows (the keys 0 .. N-1, each in its table, by lookups of 10^6 ids
without training), as a table that has seen a large vocabulary: it reports the rows per second,
the process's private memory (the key index: Note [Tables on disk]), the mapped file pages and
the bytes written to storage. `--prefill 100000000 --rows 100000000 --cache-budget-mb 256` is
the 10^8-row table on disk (10.6 GiB of files at --dim 16 in 0.2 GiB of private memory; about 25
minutes on the shared 2-core machine: docs/one_embedding.md "10^8 rows on disk").
"""
import argparse
import os
import tempfile
import time

import numpy as np

import oneflow as flow

DENSE, SPARSE = 13, 26


class DLRM(flow.nn.Module):
    def __init__(self, embedding, dim):
        super().__init__()
        self.embedding = embedding
        self.bottom = flow.nn.Sequential(flow.nn.Linear(DENSE, 64), flow.nn.ReLU(), flow.nn.Linear(64, dim), flow.nn.ReLU())
        n = SPARSE + 1
        li, lj = np.tril_indices(n, -1)
        self.register_buffer("li", flow.tensor(li), persistent=False)
        self.register_buffer("lj", flow.tensor(lj), persistent=False)
        self.top = flow.nn.Sequential(flow.nn.Linear(dim + len(li), 128), flow.nn.ReLU(), flow.nn.Linear(128, 1))

    def forward(self, dense, sparse):
        x = self.bottom(flow.log(dense + 1.0))
        feats = flow.cat([x.unsqueeze(1), self.embedding(sparse)], 1)  # (batch, 27, dim)
        inter = flow.bmm(feats, feats.transpose(1, 2))[:, self.li, self.lj]  # pairwise dot products
        return self.top(flow.cat([x, inter], 1))


def make_store(kind, path, rows, size_factor, budget_mb):
    if kind == "ssd":  # (the table's memory: its key index and its pages, Note [Row cache])
        return flow.one_embedding.make_cached_ssd_store_options(budget_mb, path, rows, size_factor=size_factor)
    if kind == "host":
        return flow.one_embedding.make_cached_host_mem_store_options(budget_mb, path, rows, size_factor=size_factor)
    return flow.one_embedding.make_device_mem_store_options(path, rows, size_factor=size_factor)


def synthetic_batches(rng, rows, batch, n):
    per_table = max(1, rows // SPARSE)
    w_dense = rng.standard_normal(DENSE)
    for _ in range(n):
        dense = rng.exponential(3.0, (batch, DENSE)).astype(np.float32)
        local = np.minimum(rng.zipf(1.3, (batch, SPARSE)) - 1, per_table - 1)
        sparse = (local + np.arange(SPARSE) * per_table).astype(np.int64)
        score = np.log1p(dense) @ w_dense / 4 + ((local % 7) == 0).sum(1) / 3 - 1.0
        label = (score + rng.standard_normal(batch) * 0.3 > 0).astype(np.float32).reshape(-1, 1)
        yield dense, sparse, label


def _proc(path, keys):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in keys:
                out[k] = int(v.split()[0])
    return out


def prefill(embedding, n, per_table, chunk=1_000_000):
    """Creates the rows of keys 0 .. n-1 (key k in table k // per_table, as the batches' ids)."""
    start_io = _proc("/proc/self/io", ("write_bytes",)).get("write_bytes", 0)
    t0 = time.time()
    rank, world = flow.env.get_rank(), flow.env.get_world_size()
    with flow.no_grad():
        for b in range(0, n, chunk):
            # (on several processes each looks up its share of the chunk: the owners create the rows)
            ids = flow.arange(b + rank, min(b + chunk, n), world, dtype=flow.int64)
            embedding(ids, table_ids=flow.clamp(ids // per_table, max=SPARSE - 1).to(flow.int32))
            done = min(b + chunk, n)
            if rank == 0 and ((b // chunk) % 10 == 9 or done == n):
                mem = _proc("/proc/self/status", ("RssAnon", "RssFile"))
                wrote = _proc("/proc/self/io", ("write_bytes",)).get("write_bytes", 0) - start_io
                print(f"prefill {done:,} rows  {done / (time.time() - t0):,.0f} rows/s  "
                      f"private {mem.get('RssAnon', 0) / 2**20:.2f} GiB  file pages {mem.get('RssFile', 0) / 2**20:.2f} GiB  "
                      f"written {wrote / 2**30:.2f} GiB", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="total vocabulary over the 26 tables")
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--store", choices=["ssd", "host", "device"], default="ssd")
    ap.add_argument("--cache-budget-mb", type=int, default=8192,
                    help="cache_budget_mb: the SSD table's memory (half its index, half its pages)")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--graph", action="store_true", help="train through nn.Graph")
    ap.add_argument("--persistent-path", default=None, help="default: a temporary directory")
    ap.add_argument("--snapshot", default=None, help="save the table as this snapshot at the end")
    ap.add_argument("--prefill", type=int, default=0, help="first create this many rows (see above)")
    a = ap.parse_args()
    if not 0 <= a.prefill <= a.rows:
        ap.error(f"--prefill must be between 0 and --rows ({a.rows}), got {a.prefill}")

    flow.manual_seed(0)  # (the dense layers' initial values: the same run on one or several processes)
    path = a.persistent_path or tempfile.mkdtemp(prefix="dlrm_one_embedding_")
    tables = [flow.one_embedding.make_table_options(
        flow.one_embedding.make_uniform_initializer(-(a.rows / SPARSE) ** -0.5, (a.rows / SPARSE) ** -0.5))
        for _ in range(SPARSE)]
    embedding = flow.one_embedding.MultiTableEmbedding(
        "sparse_embedding", a.dim, flow.float, flow.int64, tables,
        make_store(a.store, path, a.rows, size_factor=1, budget_mb=a.cache_budget_mb))
    if a.prefill:
        prefill(embedding, a.prefill, max(1, a.rows // SPARSE))
    model = DLRM(embedding, a.dim)
    placement = None
    if flow.env.get_world_size() > 1:
        # launched on several processes: the table is sharded over them (docs/one_embedding.md,
        # Note [Sharded tables]); the dense layers are global tensors broadcast, the batch split
        placement = flow.placement("cpu", list(range(flow.env.get_world_size())))
        model.bottom.to_global(placement, flow.sbp.broadcast)
        model.top.to_global(placement, flow.sbp.broadcast)
        model.li, model.lj = (t.to_global(placement, flow.sbp.broadcast) for t in (model.li, model.lj))
    opt = flow.optim.SGD(model.parameters(), lr=a.lr)
    loss_fn = flow.nn.BCEWithLogitsLoss()

    class TrainGraph(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(opt)

        def build(self, dense, sparse, label):
            loss = loss_fn(self.model(dense, sparse), label)
            loss.backward()
            return loss

    graph = TrainGraph() if a.graph else None
    rng = np.random.default_rng(0)
    losses, t0 = [], time.time()
    for step, (dense, sparse, label) in enumerate(synthetic_batches(rng, a.rows, a.batch_size, a.steps), 1):
        if placement is None:
            dense, sparse, label = flow.tensor(dense), flow.tensor(sparse), flow.tensor(label)
        else:  # (every process draws the same logical batch and holds its slice)
            dense, sparse, label = (flow.tensor(v, placement=placement, sbp=flow.sbp.split(0))
                                    for v in (dense, sparse, label))
        if graph is not None:
            loss = graph(dense, sparse, label)
        else:
            loss = loss_fn(model(dense, sparse), label)
            loss.backward()
            opt.step()
            opt.zero_grad()
        losses.append(float(loss.numpy()))
        if step % 50 == 0 or step == a.steps:
            rows = embedding.num_rows()  # (collective on a sharded table: every process asks)
        if (step % 50 == 0 or step == a.steps) and flow.env.get_rank() == 0:
            rate = step * a.batch_size / (time.time() - t0)
            print(f"step {step:5d}  loss {np.mean(losses[-50:]):.6f}  {rate:,.0f} samples/s  "
                  f"table rows {rows:,}")
    if a.snapshot:
        embedding.save_snapshot(a.snapshot)
        print(f"rank {flow.env.get_rank()}: snapshot {a.snapshot!r} saved under {os.path.join(embedding.persistent_path, 'snapshots')}")


if __name__ == "__main__":
    main()
