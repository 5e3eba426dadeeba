"""A job over two "machines" on loopback: two launchers (`--nnodes 2 --node_rank 0 / 1`, two
processes each) running tests/global_nodes_worker.py: placements over both machines, boxing and
training across them (a regression, the example's CNN: the losses of one process), clear errors
when processes disagree, and a failing process stopping the job within seconds."""
import os
import subprocess
import sys
import time

import pytest

import oneflow.distributed as dist
from test_distributed import free_port

HERE = os.path.dirname(__file__)


def two_machines(*cases, timeout=240):
    """(the two launchers' return codes, their outputs, seconds taken)."""
    port = free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-m", "oneflow.distributed.launch", "--nnodes", "2", "--node_rank",
                               str(node), "--nproc_per_node", "2", "--master_addr", "127.0.0.1", "--master_port",
                               str(port), os.path.join(HERE, "global_nodes_worker.py"), *cases],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for node in (0, 1)]
    start = time.monotonic()
    outs = [p.communicate(timeout=timeout)[0] for p in procs]
    return [p.returncode for p in procs], outs, time.monotonic() - start


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_two_machines():
    codes, outs, _ = two_machines("machines", "boxing", "train", "cnn_small", "mismatch")
    text = "\n".join(outs)
    assert codes == [0, 0], text
    for rank in range(4):
        assert f"rank {rank}: ok" in text, text


@pytest.mark.slow(seconds=60)  # (four processes training the example's 28 x 28 CNN on two cores)
@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_two_machines_train_the_example_cnn():
    """The example's CNN (examples/global_fashion_mnist.py's step, eagerly and as its nn.Graph) on
    the 4 processes of both machines: the losses of one process (the cheaper variant is
    test_two_machines's `cnn_small`)."""
    codes, outs, _ = two_machines("cnn", "cnn_graph", timeout=600)
    text = "\n".join(outs)
    assert codes == [0, 0], text
    for rank in range(4):
        assert f"rank {rank}: ok" in text, text


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_a_failing_process_stops_both_machines():
    codes, outs, _ = two_machines("die", timeout=120)
    end = time.time()
    text = "\n".join(outs)
    assert codes[0] != 0 and codes[1] != 0, text
    assert "rank 3 fails on purpose" in outs[1], text
    # the processes of the other machine name the failure (Note [Failed processes])
    assert "rank 3 failed with RuntimeError: rank 3 fails on purpose" in outs[0], text
    failed_at = float(text.split("failing at ")[1].split()[0])
    assert end - failed_at < 20, f"the job ended {end - failed_at:.0f} s after the failure"
