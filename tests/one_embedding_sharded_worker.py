"""One process of tests/test_one_embedding_sharded.py (started through the launcher, a world of 2):
a one_embedding table sharded over the processes (Note [Sharded tables] in
python/oneflow/one_embedding/_sharded.py) trains as one torch nn.Embedding on the whole batch:
local ids (each rank its own batch, the losses summed) with SGD, global ids split over the
ranks with Adam, the shadow's gradient the dense gradient's norm, each rank holding only its
keys, reads / writes / snapshots of the whole table."""
import os
import sys
import tempfile

import numpy as np
import torch

import oneflow as flow
import oneflow.distributed as dist

OE = flow.one_embedding
RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
V, DIM, TABLES = 40, 4, 2


def gather_np(a):
    """Every rank's array (same shape), concatenated in rank order."""
    t = flow.tensor(np.ascontiguousarray(a))
    parts = [flow.empty_like(t) for _ in range(WORLD)]
    dist.all_gather(parts, t)
    return np.concatenate([p.numpy() for p in parts])


def make(store_dir, size_factor=1):
    tables = [OE.make_table_options(OE.make_uniform_initializer(low=-0.1, high=0.1)) for _ in range(TABLES)]
    store = OE.make_device_mem_store_options(persistent_path=store_dir, capacity=V, size_factor=size_factor)
    emb = OE.MultiTableEmbedding("sharded", embedding_dim=DIM, dtype=flow.float, key_type=flow.int64,
                                 tables=tables, store_options=store)
    init = np.random.RandomState(7).randn(V, DIM).astype(np.float32)
    emb.write_rows(flow.tensor(np.arange(V)), flow.tensor(init))  # (collective: each owner its keys)
    return emb, init


def ids_of(step, rank, batch=5):
    # (ids in [0, V): duplicates within a rank and across ranks)
    return np.random.RandomState(100 * step + rank).randint(0, V, (batch, TABLES)).astype(np.int64)


def case_sgd_local_ids(store_dir):
    emb, init = make(store_dir)
    ref = torch.nn.Embedding(V, DIM)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(init))
    opt = flow.optim.SGD(emb.parameters(), lr=0.3)
    topt = torch.optim.SGD(ref.parameters(), lr=0.3)
    for step in range(3):
        ids = ids_of(step, RANK)
        w = np.random.RandomState(step * 10 + RANK).randn(*ids.shape, DIM).astype(np.float32)
        out = emb(flow.tensor(ids))
        (out * flow.tensor(w)).sum().backward()
        all_ids = gather_np(ids)  # (the whole batch: the reference sums both ranks' losses)
        all_w = gather_np(w)
        tout = ref(torch.from_numpy(all_ids))
        np.testing.assert_allclose(out.numpy(), tout.detach().numpy()[RANK * 5:(RANK + 1) * 5], rtol=1e-6, atol=1e-7)
        topt.zero_grad()
        (tout * torch.from_numpy(all_w)).sum().backward()
        # the shadow's gradient: the norm of the whole table's gradient, on every rank
        np.testing.assert_allclose(emb.shadow.grad.numpy(), [ref.weight.grad.norm().item()], rtol=1e-5)
        opt.step()
        opt.zero_grad()
        topt.step()
    rows, found = emb.read_rows(flow.tensor(np.arange(V)))
    assert found.numpy().all()
    np.testing.assert_allclose(rows.numpy(), ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    # each rank holds its own keys only
    from oneflow.one_embedding._sharded import shard_of
    assert len(emb._store) == int((shard_of(np.arange(V), WORLD) == RANK).sum()) < V
    assert emb.num_rows() == V


def case_adam_global_ids(store_dir):
    emb, init = make(store_dir, size_factor=3)
    ref = torch.nn.Embedding(V, DIM)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(init))
    opt = flow.optim.Adam(emb.parameters(), lr=0.05)
    topt = torch.optim.Adam(ref.parameters(), lr=0.05)
    pl = flow.placement("cpu", list(range(WORLD)))
    logical = ids_of(0, 0, batch=8)  # (the same ids every step: Adam's lazy rows are then the dense ones)
    w = np.random.RandomState(3).randn(8, TABLES, DIM).astype(np.float32)
    ids = flow.tensor(logical, placement=pl, sbp=flow.sbp.split(0))
    wg = flow.tensor(w, placement=pl, sbp=flow.sbp.split(0))
    for step in range(3):
        out = emb(ids)
        assert out.is_global and out.sbp == (flow.sbp.split(0),) and tuple(out.shape) == (8, TABLES, DIM)
        loss = (out * wg).mean()
        loss.backward()
        tout = ref(torch.from_numpy(logical))
        tl = (tout * torch.from_numpy(w)).mean()
        np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(loss.numpy(), tl.item(), rtol=1e-5)
        topt.zero_grad()
        tl.backward()
        opt.step()
        opt.zero_grad()
        topt.step()
    touched = np.unique(logical)
    rows, _ = emb.read_rows(flow.tensor(touched))
    np.testing.assert_allclose(rows.numpy()[:, :DIM], ref.weight.detach().numpy()[touched], rtol=1e-5, atol=1e-6)


def case_snapshot(store_dir):
    emb, init = make(store_dir)
    emb.save_snapshot("s0")  # (each rank its shard, under <path>/<rank>-<world>)
    assert os.path.exists(os.path.join(store_dir, f"{RANK}-{WORLD}", "snapshots", "s0"))
    opt = flow.optim.SGD(emb.parameters(), lr=1.0)
    emb(flow.tensor(ids_of(9, RANK))).sum().backward()
    opt.step()
    emb.load_snapshot("s0")
    rows, found = emb.read_rows(flow.tensor(np.arange(V)))
    np.testing.assert_array_equal(rows.numpy(), init)
    assert found.numpy().all()


def case_graph(store_dir):
    """nn.Graph training steps on a sharded table (the lookup's shuffles run at each call)."""
    emb, init = make(store_dir)
    ref = torch.nn.Embedding(V, DIM)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(init))
    opt = flow.optim.SGD(emb.parameters(), lr=0.2)
    topt = torch.optim.SGD(ref.parameters(), lr=0.2)

    class Step(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.emb = emb
            self.add_optimizer(opt)

        def build(self, ids, w):
            loss = (self.emb(ids) * w).sum()
            loss.backward()
            return loss

    step_graph = Step()
    for step in range(3):
        ids = ids_of(step, RANK)
        w = np.random.RandomState(step * 10 + RANK).randn(*ids.shape, DIM).astype(np.float32)
        loss = step_graph(flow.tensor(ids), flow.tensor(w))
        tout = ref(torch.from_numpy(gather_np(ids)))
        tl = (tout * torch.from_numpy(gather_np(w))).sum()
        np.testing.assert_allclose(gather_np(loss.numpy().reshape(1)).sum(), tl.item(), rtol=1e-5)
        topt.zero_grad()
        tl.backward()
        topt.step()
    rows, _ = emb.read_rows(flow.tensor(np.arange(V)))
    np.testing.assert_allclose(rows.numpy(), ref.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


CASES = {"sgd_local_ids": case_sgd_local_ids, "adam_global_ids": case_adam_global_ids, "snapshot": case_snapshot,
         "graph": case_graph}

if __name__ == "__main__":
    names = list(CASES) if sys.argv[1:] == ["all"] else sys.argv[1:]
    base = os.environ.get("EMB_TEST_DIR") or tempfile.mkdtemp()
    for name in names:
        CASES[name](os.path.join(base, name))
        print(f"rank {RANK}: {name} ok", flush=True)
    print(f"rank {RANK}: all ok", flush=True)
