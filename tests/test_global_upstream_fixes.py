"""What upstream OneFlow's global tests (docs/upstream_suite.md, tools/upstream_suite.py) found in
the global-tensor layer: tests/global_upstream_worker.py on 2 processes, and the typed errors of a
split axis out of range here."""
import os
import subprocess
import sys

import pytest

import oneflow as flow
import oneflow.distributed as dist
from test_distributed import free_port

HERE = os.path.dirname(__file__)


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_upstream_fixes_on_two_processes():
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", "2", "--master_port",
           str(free_port()), os.path.join(HERE, "global_upstream_worker.py")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=HERE,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(2):
        assert f"rank {rank}: ok" in r.stdout, r.stdout + r.stderr


def test_split_axis_errors_are_oneflows_runtime_errors_too():
    """A split axis out of range is OneFlow's RuntimeError (upstream's text included) and stays
    the ValueError / IndexError it was."""
    for cls in (RuntimeError, ValueError):
        with pytest.raises(cls, match="Split axis must not be negative, but got -1!"):
            flow.sbp.split(-1)
    x = flow.tensor([1.0, 2.0, 3.0, 4.0])
    for cls in (RuntimeError, IndexError):
        with pytest.raises(cls, match=r"Split axis out of range \(expected to be in range of \[0, 1\), but got 1!"):
            x.to_global(placement=flow.placement.all("cpu"), sbp=flow.sbp.split(1))
        g = flow.tensor([1.0, 2.0], placement=flow.placement.all("cpu"), sbp=flow.sbp.broadcast)
        with pytest.raises(cls, match="Split axis out of range"):
            g.to_global(sbp=flow.sbp.split(1))
    with pytest.raises(RuntimeError, match="Expected global tensor for to_local but got local tensor!"):
        x.to_local()
