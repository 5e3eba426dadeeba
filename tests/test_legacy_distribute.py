"""The job-function API's distribution casts (python/oneflow/_legacy/distribute.py, INVENTORY F):
identities on one device, argument checks, partial FC sampling; their global-tensor forms are
checked in tests/global_worker.py."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp


def test_casts_are_identities_on_one_device_and_check_their_arguments():
    x = flow.randn(3, 4)
    assert flow.parallel_cast(x, distribute=flow.distribute.split(0), gradient_distribute=flow.distribute.broadcast()) is x
    assert flow.hierarchical_parallel_cast(x, ["S(0)"], grad_mode="manual", grad_parallel_distribution=["B"]) is x
    assert flow.hierarchical_parallel_cast(x, "P") is x and flow.cast_to_current_logical_view(x) is x
    # (one device is a hierarchy of one: an n-d distribution is the whole blob too, Note [Casts on a mesh])
    assert flow.hierarchical_parallel_cast(x, ["S(0)", flow.distribute.broadcast()]) is x
    np.testing.assert_array_equal(flow.eager_nccl_all_reduce(x, "0:0").numpy(), x.numpy())
    assert repr(flow.distribute.split(1)) == "flow.distribute.split(1)" and repr(flow.distribute.auto()) == "flow.distribute.auto()"
    for bad, exc in [(lambda: flow.parallel_cast(x, distribute="S(0)"), TypeError),
                     (lambda: flow.hierarchical_parallel_cast(x, ["S(x)"]), ValueError),
                     (lambda: flow.hierarchical_parallel_cast(x, ["B"], grad_mode="sometimes"), ValueError),
                     (lambda: flow.hierarchical_parallel_cast(x, []), ValueError),
                     (lambda: flow.hierarchical_parallel_cast(x, [flow.distribute.auto()]), ValueError),
                     (lambda: flow.distribute.split(-1), ValueError),
                     (lambda: flow.eager_nccl_all_reduce(x, 0), TypeError)]:
        with pytest.raises(exc):
            bad()


def test_casts_inside_a_job():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        y = flow.hierarchical_parallel_cast(x, parallel_distribution=["B"])
        return flow.parallel_cast(y * 2, distribute=flow.distribute.broadcast())

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(job(a), a * 2)


def test_partial_fc_sample():
    flow.manual_seed(0)
    w, lab = flow.randn(12, 5), flow.tensor([[3, 9], [3, 0]])
    mapped, sampled, sw = flow.distributed_partial_fc_sample(w, lab, 7)
    s = sampled.numpy()
    assert s.shape == (7,) and len(set(s.tolist())) == 7 and set(s[:3].tolist()) == {3, 9, 0}
    assert mapped.shape == lab.shape and mapped.dtype == lab.dtype
    np.testing.assert_array_equal(s[mapped.numpy()], lab.numpy())  # each label maps to its sampled class
    np.testing.assert_array_equal(sw.numpy(), w.numpy()[s])
    with pytest.raises(ValueError, match="num_sample"):
        flow.distributed_partial_fc_sample(w, lab, 13)
    with pytest.raises(ValueError, match="distinct labels"):
        flow.distributed_partial_fc_sample(w, lab, 2)
    with pytest.raises(IndexError, match="labels must be in"):
        flow.distributed_partial_fc_sample(w, flow.tensor([12]), 3)
