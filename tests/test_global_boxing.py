"""Boxing of global tensors on the collective library (Note [Direct boxing] in
python/oneflow/_global/boxing.py): every SBP pair, 1-d and on a 2 x 2 mesh, and placement changes,
checked in tests/global_boxing_worker.py against the logical tensor and against the least bytes
each process must receive (oneflow.boxing.bytes_moved()); worlds of 2, 3 (uneven splits) and 4."""
import os
import subprocess
import sys

import pytest

import oneflow as flow
import oneflow.distributed as dist
from test_distributed import free_port

HERE = os.path.dirname(__file__)


def launch(nproc, worker, *cases, timeout=240):
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", str(nproc),
           "--master_port", str(free_port()), os.path.join(HERE, worker), *cases]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
@pytest.mark.parametrize("nproc", [2, 3, 4])
def test_boxing_pairs(nproc):
    r = launch(nproc, "global_boxing_worker.py", "all")
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(nproc):
        assert f"rank {rank}: all ok" in r.stdout, r.stdout + r.stderr


def test_bytes_moved_counter_is_process_local():
    flow.boxing.reset_bytes_moved()
    assert flow.boxing.bytes_moved() == 0
    x = flow.ones(4).to_global(flow.placement("cpu", [0]), flow.sbp.broadcast)  # (one process: nothing moves)
    x.to_global(sbp=flow.sbp.split(0))
    assert flow.boxing.bytes_moved() == 0


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_processes_that_disagree_get_one_error():
    """Mismatched shapes or placements across the processes: the same RuntimeError on each, and
    the job goes on (the timeout guards against a hang)."""
    r = launch(2, "global_boxing_worker.py", "mismatch", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(2):
        assert f"rank {rank}: mismatch ok" in r.stdout, r.stdout + r.stderr


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_a_process_that_raises_fails_the_other_with_its_error():
    """Two launchers of one process each (a launcher stops its own processes when one fails, so
    rank 0 must live under another to be seen failing by itself): rank 1 raises before a boxing,
    rank 0 -- waiting in that all-gather -- fails naming rank 1's error, not a timeout."""
    port = free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-m", "oneflow.distributed.launch", "--nnodes", "2", "--node_rank",
                               str(node), "--nproc_per_node", "1", "--master_addr", "127.0.0.1", "--master_port",
                               str(port), os.path.join(HERE, "global_boxing_worker.py"), "die"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for node in (0, 1)]
    outs = [p.communicate(timeout=120)[0] for p in procs]  # (a hang fails here)
    text = "\n".join(outs)
    assert procs[0].returncode != 0 and procs[1].returncode != 0, text
    assert "rank 1 fails on purpose" in outs[1], text
    assert "rank 1 failed with RuntimeError: rank 1 fails on purpose" in outs[0], text
