"""0.x job functions over several processes (issue 42): ``flow.scope.placement`` naming two ranks
runs a job on global tensors -- the consistent and mirrored views, variables split by
``distribute`` / ``model_distribute``, ``default_placement_scope``, a placement of one rank, tensor lists --
checked against PyTorch on the whole batch by tests/legacy_global_worker.py in a world of 2."""
import pytest

import oneflow.distributed as dist
from test_global_boxing import launch


def _run(*cases, nproc=2):
    r = launch(nproc, "legacy_global_worker.py", *cases)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    for rank in range(nproc):
        assert f"rank {rank}: all ok" in r.stdout, r.stdout[-4000:] + r.stderr[-4000:]


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_jobs_over_two_ranks_sampled():
    # (the default run's sample: both views; every case in the slow test below)
    _run("consistent", "mirrored", "tensor_list", "errors")


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_jobs_over_two_ranks():
    _run("all")


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_job_on_a_2x2_mesh():
    # flow.scope.placement's hierarchy and hierarchical_parallel_cast's 2-d distributions (a world of 4)
    _run("mesh", nproc=4)
