"""Note [SBP rules in C++] and Note [Partial elementwise] (src/api/global_rules.h) on Note [Global
fast path]: matmul / bmm (batched forms), linear, mean, softmax and the partial sums of elementwise
ops run in C++ with the dispatcher's own signature; the concatenations' rule; the kind test of the
hand-written max / min / split (tests/global_rules_worker.py, against PyTorch)."""
import os
import subprocess
import sys

import pytest

import oneflow.distributed as dist
from test_distributed import free_port

HERE = os.path.dirname(__file__)


def _launch(nproc, mode):
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", str(nproc),
           "--master_port", str(free_port()), os.path.join(HERE, "global_rules_worker.py"), mode]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=400, cwd=HERE,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(nproc):
        assert f"rank {rank}: {mode} ok" in r.stdout, r.stdout + r.stderr


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_rules_on_two_processes():
    _launch(2, "two")


@pytest.mark.slow(seconds=30)  # (four processes on this 2-core machine)
@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_rules_per_mesh_axis():
    _launch(4, "mesh")
