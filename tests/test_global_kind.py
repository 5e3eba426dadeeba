"""Note [Global kind] / Note [Global fast path] (src/api/global.h): the bindings' test of the
global kind and the C++ path of elementwise ops on global inputs of one layout
(tests/global_kind_worker.py, in worlds of 1 and 2 processes, checks against PyTorch)."""
import os
import subprocess
import sys

import pytest

import oneflow as flow
import oneflow.distributed as dist
from test_distributed import free_port

HERE = os.path.dirname(__file__)


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
@pytest.mark.parametrize("nproc", [1, 2])
def test_fast_path_against_torch(nproc):
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", str(nproc),
           "--master_port", str(free_port()), os.path.join(HERE, "global_kind_worker.py")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(nproc):
        assert f"rank {rank}: all ok" in r.stdout, r.stdout + r.stderr


def test_local_tensors_and_values_are_not_global():
    assert not flow._C._is_global(flow.ones(2))
    assert not flow._C._is_global(flow.nn.Parameter(flow.ones(2)))
    assert not flow._C._is_global(3) and not flow._C._is_global("x")
