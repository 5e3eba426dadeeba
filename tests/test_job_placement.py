"""flow.scope.placement in job functions on one process (_legacy/scope.py; docs/job_functions.md
"Placement scopes"): the spec's examples inside a placement, the scope a job reports, the errors
of placements this process cannot run, and a GPU placement moving a train job."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp


pytestmark = pytest.mark.usefixtures("fresh_job_session")


def test_placement_scope_and_the_spec_examples():
    @flow.global_function()
    def range_job() -> tp.Numpy:
        with flow.scope.placement("cpu", "0:0"):
            out = flow.range(1, 10, 3, dtype=flow.int64)
        return out

    np.testing.assert_array_equal(range_job(), [1, 4, 7])

    @flow.global_function()
    def GenTensorBufferJob() -> tp.ListNumpy:  # noqa: N802 - the spec's name
        with flow.scope.placement("cpu", "0:0"):
            x = flow.gen_tensor_buffer([(2,)], [(2, 1), (1, 2)], [0.0, 1.0])
            y = flow.tensor_buffer_to_list_of_tensors(x, (100, 100), flow.float, True)
            return y[1]

    (y1,) = GenTensorBufferJob()
    np.testing.assert_array_equal(y1, [[1.0, 1.0]])

    seen = {}

    @flow.global_function()
    def scoped(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        with flow.scope.namespace("enc"), flow.scope.placement("cpu", "0:0"):
            seen["scope"] = flow.current_scope()
            return x + 1

    scoped(np.zeros(2, np.float32))
    assert seen["scope"].name_scopes == ["enc"] and seen["scope"].job_name == "scoped"
    assert str(seen["scope"].device) == "cpu"
    with pytest.raises(ValueError, match="a process for each"):
        with flow.scope.placement("cpu", "0:0-3"):
            pass
    with pytest.raises(ValueError, match="device_tag"):
        with flow.scope.placement("tpu", "0:0"):
            pass
    cfg = flow.function_config()
    cfg.default_logical_view(flow.scope.mirrored_view())
    assert repr(cfg.function_desc["default_logical_view"]) == "flow.scope.mirrored_view()"


@pytest.mark.cuda
def test_gpu_placement_moves_the_job():
    """The spec's `flow.scope.placement("gpu", "0:0")` inside a train job: inputs, variables and
    ops on the GPU, the same numbers as on the CPU."""
    def make(device_tag):
        @flow.global_function(type="train")
        def train(x: tp.Numpy.Placeholder((4, 3)), y: tp.Numpy.Placeholder((4,), dtype=flow.int32)) -> tp.Numpy:
            with flow.scope.placement(device_tag, "0:0"):
                logits = flow.layers.dense(x, 2, kernel_initializer=flow.constant_initializer(0.1),
                                           name=f"out_{device_tag}")
                loss = flow.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
                flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0).minimize(loss)
            return loss
        return train

    x, y = np.random.RandomState(0).randn(4, 3).astype(np.float32), np.array([0, 1, 1, 0], np.int32)
    gpu, cpu = make("gpu"), make("cpu")
    for _ in range(2):
        np.testing.assert_allclose(gpu(x, y), cpu(x, y), rtol=1e-5, atol=1e-6)
    assert flow.get_all_variables()["out_gpu-weight"].is_cuda


@pytest.mark.parametrize("eager", [False, True])
def test_global_tensors_inside_a_job(eager):
    """A job of one process may make and use global tensors (over the placement of this rank):
    traced into its program as nn.Graph traces them, or run eagerly; a train job's variable used
    through a global view trains as the local form."""
    flow.enable_eager_execution(eager)
    try:
        @flow.global_function(type="train")
        def train(x: tp.Numpy.Placeholder((4, 3))) -> tp.Numpy:
            w = flow.get_variable("w", shape=(2, 3), initializer=flow.constant_initializer(0.5))
            p = flow.placement("cpu", [0])
            gx = x.to_global(p, flow.sbp.split(0))
            gw = w.to_global(p, flow.sbp.broadcast)
            loss = flow.matmul(gx, gw, transpose_b=True).sum(1).to_local()
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0).minimize(loss)
            return loss

        x = np.arange(12, dtype=np.float32).reshape(4, 3)
        w = np.full((2, 3), 0.5)
        for _ in range(2):
            np.testing.assert_allclose(train(x), (x @ w.T).sum(1), rtol=1e-6)
            w = w - 0.1 * np.tile(x.sum(0) / 4, (2, 1))  # d/dw of the mean of the rows' sums
        np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), w, rtol=1e-6)
        assert len(train._compiled) == (0 if eager else 1)
    finally:
        flow.enable_eager_execution(False)
