"""one_embedding tables sharded over the processes of a job (issue 42; Note [Sharded tables]):
tests/one_embedding_sharded_worker.py in a world of 2 trains a table sharded over both ranks as
one torch nn.Embedding on the whole batch -- local ids with SGD, global ids with Adam -- and reads,
writes and snapshots it, and trains it through nn.Graph."""
import os

import pytest

import oneflow.distributed as dist
from test_global_boxing import launch


def _run(tmp_path, monkeypatch, *cases):
    monkeypatch.setenv("EMB_TEST_DIR", str(tmp_path))
    r = launch(2, "one_embedding_sharded_worker.py", *cases)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    for rank in range(2):
        assert f"rank {rank}: all ok" in r.stdout, r.stdout[-4000:] + r.stderr[-4000:]


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_sharded_table_trains_as_one_table_sampled(tmp_path, monkeypatch):
    # (the default run's sample: local ids and global ids; every case in the slow test below)
    _run(tmp_path, monkeypatch, "sgd_local_ids", "adam_global_ids")


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_sharded_table_trains_as_one_table(tmp_path, monkeypatch):
    _run(tmp_path, monkeypatch, "all")


def test_shard_of_spreads_offset_ids():
    import numpy as np
    from oneflow.one_embedding._sharded import shard_of
    keys = np.arange(0, 4000, 4, dtype=np.int64)  # (ids all multiples of the world size: key % 4 would put them on one rank)
    counts = np.bincount(shard_of(keys, 4), minlength=4)
    assert counts.min() > 200, counts
    np.testing.assert_array_equal(shard_of(keys, 4), shard_of(keys.copy(), 4))


def _example_loss(cmd):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, *cmd], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return [line.split("loss")[1].split()[0] for line in r.stdout.splitlines() if line.startswith("step")]


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
@pytest.mark.parametrize("graph", [False, True])
def test_dlrm_example_on_two_processes_trains_as_on_one(graph):
    # examples/dlrm_one_embedding.py launched on 2 processes (the table sharded, the dense layers
    # global) prints the losses of the same run on one process (two launches: ~40 s, so slow;
    # test_sharded_table_trains_as_one_table_sampled is the default run's case)
    from test_distributed import free_port
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "dlrm_one_embedding.py")
    args = [example, "--rows", "26000", "--steps", "6", "--batch-size", "64", "--store", "host"] + (["--graph"] if graph else [])
    one = _example_loss(args)
    two = _example_loss(["-m", "oneflow.distributed.launch", "--nproc_per_node", "2", "--master_port", str(free_port())] + args)
    assert one and one == two, (one, two)
