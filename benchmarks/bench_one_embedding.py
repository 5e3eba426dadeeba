"""flow.one_embedding's training step (lookup, backward, fused sparse update) against PyTorch's
nn.EmbeddingBag and nn.Embedding with sparse gradients and SGD / SparseAdam, in one process, on
Criteo-like batches (the SGD case also with the SSD store's rows on disk): 26 sparse fields of `--batch` samples, ids drawn (Zipf-like) from a
vocabulary of `--vocab` rows of `--dim` floats.

    .venv/bin/python benchmarks/bench_one_embedding.py [--vocab N] [--dim D] [--batch B] [--threads N]

Reported: ids looked up and updated per second (median of timed loops after a warm-up), and the
ratio one_embedding / torch (above 1: one_embedding is faster). The one_embedding table is filled
with every row before timing, as torch's tables are (a row's creation is a lookup's first touch).
"""
import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np
import torch

import oneflow as flow

FIELDS = 26


def rate(step, batches, n_ids, repeats=5, min_time=0.3):
    step(batches[0])
    out = []
    for r in range(repeats):
        k, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < min_time:
            step(batches[(r + k) % len(batches)])
            k += 1
        out.append(k * n_ids / (time.perf_counter() - t0))
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
        flow.set_num_threads(a.threads)
    rng = np.random.default_rng(0)
    batches = [np.minimum(rng.zipf(1.2, (a.batch, FIELDS)) - 1, a.vocab - 1).astype(np.int64) for _ in range(8)]
    n_ids = a.batch * FIELDS
    rows = (rng.standard_normal((a.vocab, a.dim)) * 0.01).astype(np.float32)
    grad_np = rng.standard_normal((a.batch, FIELDS, a.dim)).astype(np.float32)
    results = []

    for opt_name, kind in (("sgd", "mem"), ("sgd", "ssd"), ("adam", "mem")):
        size_factor = 3 if opt_name == "adam" else 1
        with tempfile.TemporaryDirectory() as d:
            if kind == "ssd":  # rows and key index in memory-mapped files (Note [Tables on disk])
                store = flow.one_embedding.make_cached_ssd_store_options(64, d, a.vocab, size_factor=size_factor)
            else:
                store = flow.one_embedding.make_device_mem_store_options(d, a.vocab, size_factor=size_factor)
            emb = flow.one_embedding.MultiTableEmbedding("bench", a.dim, flow.float, flow.int64, None, store)
            emb.write_rows(flow.arange(a.vocab), flow.tensor(rows))
            opt = (flow.optim.SGD(emb.parameters(), lr=0.01) if opt_name == "sgd"
                   else flow.optim.Adam(emb.parameters(), lr=0.01))
            fb = [flow.tensor(b) for b in batches]
            g = flow.tensor(grad_np)

            def ours(ids):
                (emb(ids) * g).sum().backward()
                opt.step()
                opt.zero_grad()

            r_ours = rate(ours, fb, n_ids)
        tw = torch.from_numpy(rows.copy())
        tb = [torch.from_numpy(b) for b in batches]
        tg = torch.from_numpy(grad_np)
        bag = torch.nn.EmbeddingBag(a.vocab, a.dim, mode="sum", sparse=True, _weight=tw.clone())
        tab = torch.nn.Embedding(a.vocab, a.dim, sparse=True, _weight=tw.clone())
        mk = (lambda p: torch.optim.SGD(p, lr=0.01)) if opt_name == "sgd" else (lambda p: torch.optim.SparseAdam(p, lr=0.01))
        bag_opt, tab_opt = mk(bag.parameters()), mk(tab.parameters())
        bag_g = tg.sum(1)  # one bag per sample: the 26 fields summed

        def torch_bag(ids):
            (bag(ids) * bag_g).sum().backward()
            bag_opt.step()
            bag_opt.zero_grad()

        def torch_tab(ids):
            (tab(ids) * tg).sum().backward()
            tab_opt.step()
            tab_opt.zero_grad()

        r_bag, r_tab = rate(torch_bag, tb, n_ids), rate(torch_tab, tb, n_ids)
        results.append((opt_name, kind, r_ours, r_bag, r_tab))

    print(f"vocab {a.vocab}, dim {a.dim}, batch {a.batch} x {FIELDS} fields, threads "
          f"{torch.get_num_threads()}; ids / s (lookup + backward + update)")
    print(f"{'optimizer (store)':<28}{'one_embedding':>15}{'EmbeddingBag':>15}{'Embedding':>15}{'vs bag':>9}{'vs emb':>9}")
    for name, kind, o, b, t in results:
        label = f"{name} ({kind})" if name == "sgd" else f"adam ({kind}; torch: SparseAdam)"
        print(f"{label:<28}{o / 1e6:>13.2f}M{b / 1e6:>13.2f}M{t / 1e6:>13.2f}M{o / b:>9.2f}{o / t:>9.2f}")


if __name__ == "__main__":
    main()
