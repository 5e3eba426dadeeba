"""flow.utils.data against torch.utils.data: batching, collation, drop_last, samplers, dataset
combinators; worker processes (order, sharding, persistent workers, worker errors, killed
workers, timeouts). Orders under a seed are ours; everything else must match torch."""
import collections
import os
import signal
import time

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import oneflow as flow
import oneflow.utils.data as fud


def _np(x):
    """A torch/flow batch as nested plain Python/numpy (for comparisons)."""
    if isinstance(x, (flow.Tensor, torch.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], x.numpy().tolist())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, [_np(v) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_np(v) for v in x])
    if isinstance(x, dict):
        return ("dict", {k: _np(v) for k, v in x.items()})
    return x


class Squares(fud.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return {"x": np.full((2,), i, dtype=np.float32), "y": i * i, "name": f"s{i}"}


class TSquares(tud.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.full((2,), i, dtype=np.float32), "y": i * i, "name": f"s{i}"}


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (10, False),
                                                  (4, True), (13, False)])
def test_batching_matches_torch(batch_size, drop_last):
    f = fud.DataLoader(Squares(10), batch_size=batch_size, drop_last=drop_last)
    t = tud.DataLoader(TSquares(10), batch_size=batch_size, drop_last=drop_last)
    assert len(f) == len(t)
    assert [_np(b) for b in f] == [_np(b) for b in t]


def test_tensor_dataset_batches_match_torch():
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    y = np.arange(10)
    f = fud.DataLoader(fud.TensorDataset(flow.tensor(x), flow.tensor(y)), batch_size=4)
    t = tud.DataLoader(tud.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=4)
    assert [_np(b) for b in f] == [_np(b) for b in t]
    sub = fud.Subset(fud.TensorDataset(flow.tensor(x)), [9, 1, 5, 3])
    tsub = tud.Subset(tud.TensorDataset(torch.tensor(x)), [9, 1, 5, 3])
    assert [_np(b) for b in fud.DataLoader(sub, batch_size=3)] == \
        [_np(b) for b in tud.DataLoader(tsub, batch_size=3)]
    with pytest.raises(ValueError, match="Size mismatch"):
        fud.TensorDataset(flow.zeros(3), flow.zeros(4))


Point = collections.namedtuple("Point", "a b")


@pytest.mark.parametrize("make", [
    lambda lib: [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
    lambda lib: [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
    lambda lib: [np.float64(1.5), np.float64(2.5)],
    lambda lib: [1, 2, 3],
    lambda lib: [0.5, 1.5],
    lambda lib: [True, False],
    lambda lib: ["a", "b"],
    lambda lib: [{"a": 1, "b": [2.0, np.zeros(2)]}, {"a": 3, "b": [4.0, np.ones(2)]}],
    lambda lib: [(1, "x", lib.zeros(2)), (2, "y", lib.ones(2))],
    lambda lib: [[1, 2], [3, 4]],
    lambda lib: [Point(1, 2.0), Point(3, 4.0)],
    lambda lib: [collections.OrderedDict(z=1, a=2), collections.OrderedDict(z=3, a=4)],
])
def test_default_collate_matches_torch(make):
    assert _np(fud.default_collate(make(flow))) == _np(tud.default_collate(make(torch)))


def test_default_collate_errors_match_torch():
    for bad in ([object(), object()], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises(TypeError, match="default_collate: batch must contain"):
            fud.default_collate(bad)
        with pytest.raises(TypeError):
            tud.default_collate(bad)
    with pytest.raises(RuntimeError, match="equal size"):
        fud.default_collate([[1, 2], [3]])


def test_no_auto_batching_converts():
    f = list(fud.DataLoader(Squares(3), batch_size=None))
    t = list(tud.DataLoader(TSquares(3), batch_size=None))
    assert [_np(b) for b in f] == [_np(b) for b in t]


def test_custom_collate_and_batch_sampler():
    bs = [[0, 5], [3], [9, 8, 7]]
    f = list(fud.DataLoader(Squares(10), batch_sampler=bs, collate_fn=lambda b: [s["y"] for s in b]))
    assert f == [[0, 25], [9], [81, 64, 49]]
    assert list(fud.BatchSampler(range(10), 4, False)) == list(tud.BatchSampler(range(10), 4, False))
    assert list(fud.BatchSampler(range(10), 4, True)) == list(tud.BatchSampler(range(10), 4, True))
    assert len(fud.BatchSampler(range(10), 4, True)) == 2


def test_shuffle_is_a_permutation_and_seeded():
    loader = fud.DataLoader(fud.TensorDataset(flow.arange(50)), batch_size=7, shuffle=True)
    flow.manual_seed(123)
    e1 = [v for (b,) in loader for v in b.tolist()]
    e2 = [v for (b,) in loader for v in b.tolist()]
    assert sorted(e1) == list(range(50)) and sorted(e2) == list(range(50)) and e1 != e2
    flow.manual_seed(123)
    assert [v for (b,) in loader for v in b.tolist()] == e1


def test_samplers():
    ds = list(range(20))
    assert list(fud.SequentialSampler(ds)) == list(tud.SequentialSampler(ds))
    r = list(fud.RandomSampler(ds))
    assert sorted(r) == ds
    r = list(fud.RandomSampler(ds, num_samples=45))
    assert len(r) == 45 and sorted(r[:20]) == ds and sorted(r[20:40]) == ds
    r = list(fud.RandomSampler(ds, replacement=True, num_samples=100))
    assert len(r) == 100 and set(r) <= set(ds)
    sub = [3, 7, 11]
    assert sorted(fud.SubsetRandomSampler(sub)) == sub
    w = [0.0, 1.0, 0.0, 5.0, 2.0]
    r = list(fud.WeightedRandomSampler(w, 200))
    assert len(r) == 200 and set(r) <= {1, 3, 4} and r.count(3) > r.count(1)
    r = list(fud.WeightedRandomSampler(w, 3, replacement=False))
    assert sorted(r) == [1, 3, 4]
    with pytest.raises(RuntimeError, match="without replacement"):
        fud.WeightedRandomSampler(w, 4, replacement=False)
    for f_kw in (dict(num_samples=0), dict(num_samples=-1)):
        with pytest.raises(ValueError, match="num_samples should be a positive integer"):
            fud.RandomSampler(ds, **f_kw)
        with pytest.raises(ValueError, match="num_samples should be a positive integer"):
            tud.RandomSampler(ds, **f_kw)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        fud.RandomSampler(ds, replacement=1)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        fud.BatchSampler(ds, 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        fud.BatchSampler(ds, 2, 1)


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False),
                                                   (2, 4, False), (11, 4, True)])
def test_distributed_sampler(n, replicas, drop_last):
    ds = list(range(n))
    for rank in range(replicas):
        f = fud.DistributedSampler(ds, replicas, rank, shuffle=False, drop_last=drop_last)
        t = tud.DistributedSampler(ds, replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(f) == list(t) and len(f) == len(t)
    shards = [list(fud.DistributedSampler(ds, replicas, r, seed=5, drop_last=drop_last))
              for r in range(replicas)]
    flat = [i for s in shards for i in s]
    if drop_last:
        assert len(set(flat)) == len(flat)
    else:
        assert set(flat) == set(ds)
    again = [list(fud.DistributedSampler(ds, replicas, r, seed=5, drop_last=drop_last))
             for r in range(replicas)]
    assert again == shards
    s = fud.DistributedSampler(list(range(100)), 2, 0, seed=5)
    e0 = list(s)
    s.set_epoch(1)
    assert list(s) != e0
    with pytest.raises(ValueError, match="Invalid rank"):
        fud.DistributedSampler(ds, 2, 2)


def test_random_split():
    ds = list(range(11))
    parts = fud.random_split(ds, [3, 8])
    assert [len(p) for p in parts] == [3, 8]
    assert sorted(i for p in parts for i in p) == ds
    fr = fud.random_split(ds, [0.3, 0.3, 0.4])
    tr = tud.random_split(ds, [0.3, 0.3, 0.4])
    assert [len(p) for p in fr] == [len(p) for p in tr]
    flow.manual_seed(7)
    a = [list(p) for p in fud.random_split(ds, [5, 6])]
    flow.manual_seed(7)
    assert [list(p) for p in fud.random_split(ds, [5, 6])] == a
    with pytest.raises(ValueError, match="Sum of input lengths"):
        fud.random_split(ds, [3, 3])
    if hasattr(flow, "Generator"):
        g1, g2 = flow.Generator().manual_seed(3), flow.Generator().manual_seed(3)
        assert [list(p) for p in fud.random_split(ds, [4, 7], generator=g1)] == \
            [list(p) for p in fud.random_split(ds, [4, 7], generator=g2)]


class Count(fud.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = fud.get_worker_info()
        lo, hi = self.start, self.end
        if info is not None:  # each worker its own contiguous shard
            per = -(-(hi - lo) // info.num_workers)
            lo = lo + info.id * per
            hi = min(hi, lo + per)
        return iter(range(lo, hi))

    def __len__(self):
        return self.end - self.start


def test_dataset_combinators():
    c = fud.ConcatDataset([Squares(3), Squares(4)])
    assert len(c) == 7 and c[3]["y"] == 0 and c[-1]["y"] == 9
    with pytest.raises(ValueError, match="absolute value of index"):
        c[-8]
    assert len(Squares(2) + Squares(5)) == 7
    ch = fud.ChainDataset([Count(0, 3), Count(10, 12)])
    assert list(ch) == [0, 1, 2, 10, 11] and len(ch) == 5
    assert list(Count(0, 2) + Count(5, 6)) == [0, 1, 5]
    s = fud.Subset(Squares(10), [4, 2])
    assert len(s) == 2 and s[1]["y"] == 4
    with pytest.raises(TypeError, match="IterableDataset"):
        fud.ConcatDataset([Count(0, 1)])


@pytest.mark.parametrize("batch_size,drop_last", [(4, False), (4, True), (None, False)])
def test_iterable_dataset_matches_torch(batch_size, drop_last):
    class TCount(tud.IterableDataset):
        def __iter__(self):
            return iter(range(10))

    f = fud.DataLoader(Count(0, 10), batch_size=batch_size, drop_last=drop_last)
    t = tud.DataLoader(TCount(), batch_size=batch_size, drop_last=drop_last)
    assert [_np(b) for b in f] == [_np(b) for b in t]


@pytest.mark.parametrize("kw", [
    dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
    dict(persistent_workers=True), dict(shuffle=True, sampler=[0, 1]),
    dict(batch_sampler=[[0]], batch_size=2), dict(batch_sampler=[[0]], drop_last=True),
    dict(batch_size=None, drop_last=True), dict(num_workers=1, prefetch_factor=-1),
])
def test_argument_errors_match_torch(kw):
    with pytest.raises(ValueError) as fe:
        fud.DataLoader(Squares(4), **kw)
    with pytest.raises(ValueError) as te:
        tud.DataLoader(TSquares(4), **kw)
    assert str(fe.value) == str(te.value)


def test_iterable_argument_errors_match_torch():
    class TCount(tud.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    for kw in (dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])):
        with pytest.raises(ValueError) as fe:
            fud.DataLoader(Count(0, 3), **kw)
        with pytest.raises(ValueError) as te:
            tud.DataLoader(TCount(), **kw)
        assert str(fe.value).split(", but got")[0] == str(te.value).split(", but got")[0]


def test_attributes_frozen_after_init():
    loader = fud.DataLoader(Squares(4))
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 3


# ---------------------------------------------------------------------------------------------
# Worker processes


class WhoAmI(fud.Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        info = fud.get_worker_info()
        return {"i": i, "worker": -1 if info is None else info.id,
                "seed": 0 if info is None else info.seed % 1000,
                "r": float(flow.rand(1).item())}


@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_workers_keep_order(num_workers):
    x = flow.arange(30).cast(flow.float32).reshape(15, 2)
    ds = fud.TensorDataset(x, flow.arange(15))
    want = [_np(b) for b in fud.DataLoader(ds, batch_size=4)]
    got = [_np(b) for b in fud.DataLoader(ds, batch_size=4, num_workers=num_workers,
                                          prefetch_factor=3)]
    assert got == want
    sq = [_np(b) for b in fud.DataLoader(Squares(9), batch_size=2, num_workers=num_workers)]
    assert sq == [_np(b) for b in fud.DataLoader(Squares(9), batch_size=2)]


def test_worker_info_init_fn_and_seeds():
    assert fud.get_worker_info() is None
    seen = []

    def init(wid):
        info = fud.get_worker_info()
        assert info.id == wid and info.num_workers == 2
        with pytest.raises(RuntimeError, match="Cannot assign"):
            info.id = 5
        seen.append(wid)  # runs in the worker: not visible here

    batches = list(fud.DataLoader(WhoAmI(), batch_size=3, num_workers=2, worker_init_fn=init))
    workers = [w for b in batches for w in b["worker"].tolist()]
    assert set(workers) == {0, 1} and seen == []
    assert [i for b in batches for i in b["i"].tolist()] == list(range(12))
    flow.manual_seed(5)
    r1 = [b["r"].tolist() for b in fud.DataLoader(WhoAmI(), batch_size=3, num_workers=2)]
    flow.manual_seed(5)
    r2 = [b["r"].tolist() for b in fud.DataLoader(WhoAmI(), batch_size=3, num_workers=2)]
    assert r1 == r2


def test_iterable_dataset_with_workers_shards():
    got = [v for b in fud.DataLoader(Count(0, 23), batch_size=4, num_workers=3)
           for v in b.tolist()]
    assert sorted(got) == list(range(23))
    got = list(fud.DataLoader(Count(0, 10), batch_size=None, num_workers=2))
    assert sorted(got) == list(range(10))


def test_persistent_workers_over_epochs():
    loader = fud.DataLoader(Squares(7), batch_size=2, num_workers=2, persistent_workers=True)
    e1 = [_np(b) for b in loader]
    it = loader._iterator
    e2 = [_np(b) for b in loader]
    assert e1 == e2 and loader._iterator is it
    pids = [w.pid for w in it._workers]
    # Leaving an epoch early: the next epoch starts clean on the same workers.
    for k, _ in enumerate(loader):
        if k == 1:
            break
    assert [_np(b) for b in loader] == e1 and [w.pid for w in it._workers] == pids
    itl = fud.DataLoader(Count(0, 9), batch_size=2, num_workers=2, persistent_workers=True)
    a = sorted(v for b in itl for v in b.tolist())
    b = sorted(v for b in itl for v in b.tolist())
    assert a == b == list(range(9))
    it._shutdown_workers()
    itl._iterator._shutdown_workers()


class Failing(fud.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        return i


def test_worker_exception_is_reraised_with_traceback():
    loader = fud.DataLoader(Failing(), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as e:
        list(loader)
    msg = str(e.value)
    assert "Caught ValueError in DataLoader worker process" in msg
    assert "bad sample 5" in msg and "Traceback" in msg and "__getitem__" in msg


class NeedsArgs(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


class FailingOddly(fud.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        raise NeedsArgs(1, 2)


def test_worker_exception_with_unusual_constructor():
    with pytest.raises(RuntimeError, match="Caught NeedsArgs"):
        list(fud.DataLoader(FailingOddly(), num_workers=1))


class Suicide(fud.Dataset):
    def __len__(self):
        return 20

    def __getitem__(self, i):
        if i == 6:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


def test_killed_worker_raises_not_hangs():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pids? [\d, ]+\) exited "
                                           r"unexpectedly \(pid \d+ killed by signal SIGKILL"):
        list(fud.DataLoader(Suicide(), batch_size=2, num_workers=2))
    assert time.monotonic() - start < 30


class Slow(fud.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(3 if i == 2 else 0)
        return i


def test_timeout():
    with pytest.raises(RuntimeError, match="timed out after 0.5 seconds"):
        list(fud.DataLoader(Slow(), num_workers=1, timeout=0.5))


class Unpicklable(fud.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return lambda: i


def test_unpicklable_batch_is_an_error():
    with pytest.raises(Exception, match="(?i)pickle"):
        list(fud.DataLoader(Unpicklable(), batch_size=None, num_workers=1, timeout=20))


def test_pin_memory_and_context_accepted():
    loader = fud.DataLoader(Squares(4), batch_size=2, pin_memory=True, num_workers=1,
                            multiprocessing_context="fork")
    assert [_np(b) for b in loader] == [_np(b) for b in fud.DataLoader(Squares(4), batch_size=2)]


def test_bfloat16_and_grad_tensors_through_workers():
    x = flow.randn(6, 3).cast(flow.bfloat16)
    got = list(fud.DataLoader(fud.TensorDataset(x), batch_size=6, num_workers=1))
    assert got[0][0].dtype == flow.bfloat16
    np.testing.assert_array_equal(got[0][0].cast(flow.float32).numpy(),
                                  x.cast(flow.float32).numpy())


def test_spawned_workers():
    loader = fud.DataLoader(Squares(6), batch_size=4, num_workers=2,
                            multiprocessing_context="spawn", timeout=120)
    assert [_np(b) for b in loader] == [_np(b) for b in fud.DataLoader(Squares(6), batch_size=4)]
