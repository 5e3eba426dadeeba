"""ZeRO in nn.Graph (``config.enable_zero``, python/oneflow/nn/graph/zero.py): the data-parallel
training graph of tests/global_zero_worker.py in worlds of 2 and 3 processes (3: uneven splits),
each stage against the unsharded graph and PyTorch, and what each rank holds."""
import os
import subprocess
import sys

import pytest

import oneflow.distributed as dist
from test_distributed import free_port

HERE = os.path.dirname(__file__)


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
@pytest.mark.parametrize("nproc", [2, 3])
def test_zero_stages(nproc):
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", str(nproc),
           "--master_port", str(free_port()), os.path.join(HERE, "global_zero_worker.py"), "all"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(nproc):
        assert f"rank {rank}: all ok" in r.stdout, r.stdout + r.stderr
        for stage in (1, 2, 3):
            assert f"rank {rank}: world {nproc} ZeRO stage {stage}" in r.stdout
