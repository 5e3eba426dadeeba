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
