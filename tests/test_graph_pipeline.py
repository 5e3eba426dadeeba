"""The 1F1B pipeline schedule of nn.Graph (python/oneflow/nn/graph/pipeline.py, Note [1F1B]): the
order each stage runs its micro-batches in, and a two-stage training graph in a world of 2
processes (tests/global_pipeline_worker.py) giving the sequential run's and PyTorch's numbers."""
import os
import subprocess
import sys

import pytest

import oneflow as flow
import oneflow.distributed as dist
from oneflow.nn.graph.pipeline import schedule, stages
from test_distributed import free_port

HERE = os.path.dirname(__file__)


def _text(order):
    return " ".join(k + str(i) for k, i in order)


def test_schedule_orders():
    assert _text(schedule(4, 2, 0)) == "F0 F1 B0 F2 B1 F3 B2 B3"
    assert _text(schedule(4, 2, 1)) == "F0 B0 F1 B1 F2 B2 F3 B3"
    assert _text(schedule(4, 3, 0)) == "F0 F1 F2 B0 F3 B1 B2 B3"
    assert _text(schedule(2, 4, 0)) == "F0 F1 B0 B1"  # (fewer micro-batches than the warm-up)


@pytest.mark.parametrize("n,num_stages", [(1, 1), (3, 2), (5, 3), (8, 4), (2, 5)])
def test_schedule_invariants(n, num_stages):
    for stage in range(num_stages):
        order = schedule(n, num_stages, stage)
        assert sorted(order) == sorted([(k, i) for i in range(n) for k in "FB"])
        assert [i for k, i in order if k == "B"] == list(range(n))  # (gradients accumulate in order)
        assert all(order.index(("F", i)) < order.index(("B", i)) for i in range(n))
        # at most num_stages - stage micro-batches' activations alive at once
        alive = live = 0
        for k, _ in order:
            live += 1 if k == "F" else -1
            alive = max(alive, live)
        assert alive == min(n, num_stages - stage)


def test_stages_of_blocks():
    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.a, self.b = flow.nn.Linear(2, 2), flow.nn.Linear(2, 2)

        def build(self, x):
            return self.b(self.a(x))
    g = G()
    assert stages(g) == []
    p0, p1 = flow.placement("cpu", ranks=[0]), flow.placement("cpu", ranks=[1])
    g.b.config.set_stage(1, p1)
    g.a.config.set_stage(0, p0)
    assert stages(g) == [(0, p0), (1, p1)]
    g.b.config.set_stage(0, p1)
    with pytest.raises(ValueError, match="stage 0 is set on two placements"):
        stages(g)


def test_pipeline_schedule_switch():
    g = flow.nn.Graph()
    assert g.config.pipeline_schedule == "1f1b"
    g.config.set_pipeline_schedule("sequential")
    assert g.config.pipeline_schedule == "sequential"
    with pytest.raises(ValueError, match="set_pipeline_schedule: mode must be one of '1f1b', 'sequential', got 'gpipe'"):
        g.config.set_pipeline_schedule("gpipe")
    with pytest.raises(TypeError, match="set_pipeline_schedule: mode must be a str, got bool"):
        g.config.set_pipeline_schedule(True)
    assert g.config.pipeline_schedule == "sequential"


def test_deferred_sends_do_not_nest():
    from oneflow._global.transfer import DeferredSends
    with DeferredSends():
        with pytest.raises(RuntimeError, match="DeferredSends: already active"):
            with DeferredSends():
                pass
    with DeferredSends():  # (usable again after)
        pass


def _launch(nproc, case):
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", str(nproc),
           "--master_port", str(free_port()), os.path.join(HERE, "global_pipeline_worker.py"), case]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(nproc):
        assert f"rank {rank}: {case} ok" in r.stdout, r.stdout + r.stderr
    return r.stdout


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_one_f_one_b_world_of_two():
    """Two stages, one process each (the default run's sampled case: ~10 s of CPU)."""
    out = _launch(2, "one_f_one_b")
    assert "rank 0: one_f_one_b: stage 0 of 2 ran F0 F1 B0 F2 B1 F3 B2 B3" in out, out
    assert "rank 1: one_f_one_b: stage 1 of 2 ran F0 B0 F1 B1 F2 B2 F3 B3" in out, out


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_pipelines_world_of_three():
    """A data-parallel first stage on two processes; and three stages, warm-ups of 2, 1, 0."""
    out = _launch(3, "all")
    for rank in (0, 1):
        assert f"rank {rank}: one_f_one_b: stage 0 of 2 ran F0 F1 B0 F2 B1 F3 B2 B3" in out, out
    assert "rank 0: stage_per_rank: stage 0 of 3 ran F0 F1 F2 B0 F3 B1 B2 B3" in out, out
    assert "rank 1: stage_per_rank: stage 1 of 3 ran F0 F1 B0 F2 B1 F3 B2 B3" in out, out
    assert "rank 2: stage_per_rank: stage 2 of 3 ran F0 B0 F1 B1 F2 B2 F3 B3" in out, out
