"""Index-returning reductions over the split dim of global tensors (issue 41 point 3): max / min
with indices, argmax / argmin as partial results picked from, kthvalue / median / mode re-split
along a kept dim; tests/global_reduce_worker.py against PyTorch in worlds of 2 and 3 (uneven)."""
import pytest

import oneflow.distributed as dist
from test_global_boxing import launch


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
@pytest.mark.parametrize("nproc", [2, 3])
def test_index_reductions_over_the_split_dim(nproc):
    r = launch(nproc, "global_reduce_worker.py", "all")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    for rank in range(nproc):
        assert f"rank {rank}: ok" in r.stdout, r.stdout[-4000:] + r.stderr[-4000:]
