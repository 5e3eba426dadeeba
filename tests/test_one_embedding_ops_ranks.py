"""Upstream's flow._C.one_embedding_* ops over the ranks of a job (issue 42; Note [Shuffle ops over
ranks]): tests/one_embedding_ops_ranks_worker.py in a world of 2 shuffles global ids split over the
ranks to their owners and rows back -- the one-process ops' numbers on the whole batch and torch's
nn.Embedding -- and trains a table sharded over the ranks with upstream's step (lookup, Adam
update, put) as torch's AdamW trains one nn.Embedding."""
import pytest

import oneflow.distributed as dist
from test_global_boxing import launch


@pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")
def test_ops_over_two_ranks(tmp_path, monkeypatch):
    monkeypatch.setenv("EMB_TEST_DIR", str(tmp_path))
    r = launch(2, "one_embedding_ops_ranks_worker.py", "all")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    for rank in range(2):
        assert f"rank {rank}: all ok" in r.stdout, r.stdout[-4000:] + r.stderr[-4000:]
