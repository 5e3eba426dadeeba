"""A one_embedding table of many keys in the SSD store (rows and key index in memory-mapped
files, Note [Tables on disk] in src/embedding/mapped.h) against the memory store: the process's
memory while the keys arrive, then lookup + SGD steps per second.

    .venv/bin/python benchmarks/bench_one_embedding_disk.py --keys 20000000 --store ssd [--snapshot]

Memory is read from /proc/self/status: RssAnon is the process's private memory (what the store
keeps in RAM whatever the kernel does), RssFile the pages of the mapped files resident right now
(page cache: the kernel writes them back and evicts them under memory pressure, so it is bounded
by free memory, not by the table). The table's files live in a temporary folder under --dir and
are removed at the end (the disk is shared: a 2*10^7-key run needs about 1.5 GB while it runs).
"""
import argparse
import os
import shutil
import tempfile
import threading
import time

import numpy as np

import oneflow as flow

OE = flow.one_embedding


def memory():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[k] = int(v.split()[0]) / 1024  # MiB
    return out


def written():
    """Bytes this process caused to be written to storage so far (/proc/self/io write_bytes: a
    page of a shared file mapping counts each time it turns dirty, so random 16-byte writes into
    a mapped index count 4 KiB each -- the write amplification the disk then sees)."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("write_bytes:"):
                return int(line.split()[1])
    return 0


def flush(root):
    """Writes the dirty pages of every file under `root` back (fsync), leaving them clean: the next
    write to such a page dirties it again (and counts in written())."""
    for d, _, fs in os.walk(root):
        for f in fs:
            fd = os.open(os.path.join(d, f), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=20_000_000)
    ap.add_argument("--dim", type=int, default=4)
    ap.add_argument("--store", choices=["ssd", "memory"], default="ssd")
    ap.add_argument("--chunk", type=int, default=1_000_000, help="ids per inserting lookup")
    ap.add_argument("--steps", type=int, default=20, help="training steps after the inserts")
    ap.add_argument("--batch", type=int, default=4096 * 26)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--budget-mb", type=int, default=1024,
                    help="the SSD store's cache_budget_mb: its key index's memory (Note [Index on disk])")
    ap.add_argument("--snapshot", action="store_true", help="then save and load a snapshot")
    ap.add_argument("--writeback", action="store_true",
                    help="fsync the table's files after each inserting lookup: the kernel's writeback past its "
                         "dirty limit (a table larger than memory), made to happen on a machine with memory to spare")
    args = ap.parse_args()
    flow.set_num_threads(args.threads)
    root = tempfile.mkdtemp(prefix="oe-disk-", dir=args.dir)
    try:
        if args.store == "ssd":
            store = OE.make_cached_ssd_store_options(cache_budget_mb=args.budget_mb, persistent_path=root,
                                                     capacity=args.keys)
        else:
            store = OE.make_device_mem_store_options(persistent_path=root, capacity=args.keys)
        tables = [OE.make_table_options(OE.make_constant_initializer(0.5))]
        emb = OE.MultiTableEmbedding("big", args.dim, flow.float, flow.int64, tables, store)
        opt = flow.optim.SGD(emb.parameters(), lr=0.1)
        print(f"{args.store} store, {args.keys:,} keys x {args.dim} floats, start: {memory()}")
        rng = np.random.default_rng(0)
        w0 = written()
        t0 = time.perf_counter()
        anon_peak = 0.0
        with flow.no_grad():
            for b in range(0, args.keys, args.chunk):
                ids = flow.arange(b, min(b + args.chunk, args.keys), dtype=flow.int64)
                emb(ids)
                if args.writeback:
                    flush(root)
                m = memory()
                anon_peak = max(anon_peak, m["RssAnon"])
                if (b // args.chunk) % 5 == 4 or b + args.chunk >= args.keys:
                    print(f"  {emb.num_rows():>11,} keys, {time.perf_counter() - t0:6.1f} s: "
                          f"RssAnon {m['RssAnon']:7.1f} MiB, RssFile {m['RssFile']:7.1f} MiB")
        insert_s = time.perf_counter() - t0
        files = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)
        print(f"inserted {args.keys:,} keys in {insert_s:.1f} s ({args.keys / insert_s / 1e6:.2f} M keys/s), "
              f"files {files / 2**30:.2f} GiB, num_slots {emb._store.num_slots:,}, "
              f"index memory peak {emb._store.index_peak_bytes / 2**20:.1f} MiB, "
              f"peak RssAnon {anon_peak:.1f} MiB, written {(written() - w0) / 2**30:.2f} GiB")
        w0 = written()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            ids = flow.tensor(rng.integers(0, args.keys, args.batch))
            out = emb(ids)
            out.sum().backward()
            opt.step()
            opt.zero_grad()
        step_s = time.perf_counter() - t0
        m = memory()
        print(f"{args.steps} SGD steps of {args.batch} uniform ids: "
              f"{args.steps * args.batch / step_s / 1e6:.2f} M ids/s, written {(written() - w0) / 2**30:.2f} GiB; {m}")
        if args.snapshot:
            # save and load with the process's private memory sampled meanwhile (the store's
            # save and load release the GIL): a load streams the file (Note [Embedding snapshots])
            for what in ("save", "load"):
                peak = [0.0]
                done = threading.Event()

                def sample():
                    while not done.is_set():
                        peak[0] = max(peak[0], memory()["RssAnon"])
                        time.sleep(0.05)

                th = threading.Thread(target=sample)
                th.start()
                t0 = time.perf_counter()
                (emb.save_snapshot if what == "save" else emb.load_snapshot)("s")
                took = time.perf_counter() - t0
                done.set()
                th.join()
                print(f"{what}_snapshot: {took:.1f} s, peak RssAnon {peak[0]:.1f} MiB"
                      + (f", file {os.path.getsize(os.path.join(emb.persistent_path, 'snapshots', 's')) / 2**30:.2f} GiB"
                         if what == "save" else f", {emb.num_rows():,} keys"))
        del emb, opt
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
