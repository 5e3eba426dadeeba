"""FunctionConfig properties that act (docs/job_functions.md's table): default_placement_scope
enters its placement around the job's Python; the cuDNN properties set flow.backends.cudnn's
switches while the job runs (compiled and eager); default_data_type / AMP, with results checked
against PyTorch on the same values."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp


@pytest.fixture(autouse=True)
def _fresh_session():
    flow.clear_default_session()
    flow.enable_eager_execution(False)
    yield
    flow.clear_default_session()
    flow.enable_eager_execution(False)


def test_default_placement_scope_is_entered():
    cfg = flow.function_config()
    cfg.default_placement_scope(flow.scope.placement("cpu", "0:0"))
    seen = []

    @flow.global_function(function_config=cfg)
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        seen.append(flow.current_scope().device)
        return x * 2

    np.testing.assert_array_equal(job(np.ones(2, np.float32)), [2.0, 2.0])
    np.testing.assert_array_equal(job(np.ones(2, np.float32)), [2.0, 2.0])  # (the compiled run)
    assert seen == [flow.device("cpu")]
    assert flow.current_scope().device == flow.device("cpu")

    # a placement over several devices is a global placement: the job raises that at its call
    cfg2 = flow.function_config()
    cfg2.default_placement_scope(flow.scope.placement("cpu", "0:0-1"))

    @flow.global_function(function_config=cfg2)
    def wide(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x

    with pytest.raises(NotImplementedError, match="global"):
        wide(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="default_placement_scope"):
        cfg2.default_placement_scope("cpu:0")


def test_a_placement_scope_can_be_entered_again():
    p = flow.scope.placement("cpu", "0:0")
    for _ in range(2):
        with p:
            assert flow.current_scope().device == flow.device("cpu")


@pytest.mark.parametrize("eager", [False, True])
def test_cudnn_properties_set_the_backend_switches_while_the_job_runs(eager):
    flow.enable_eager_execution(eager)
    cudnn = flow.backends.cudnn
    before = (cudnn.deterministic, cudnn.benchmark)
    cfg = flow.function_config()
    cfg.cudnn_conv_use_deterministic_algo_only(True)
    cfg.cudnn_conv_heuristic_search_algo(False)  # OneFlow then timed the algorithms: cudnn.benchmark
    seen = []

    def handler(y: tp.Numpy):
        seen.append((cudnn.deterministic, cudnn.benchmark))

    @flow.global_function(function_config=cfg)
    def conv(x: tp.Numpy.Placeholder((1, 2, 5, 5)), w: tp.Numpy.Placeholder((3, 2, 3, 3))) -> tp.Numpy:
        y = flow.nn.conv2d(x, w, strides=1, padding="SAME")
        flow.watch(y, handler)
        return y

    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    for _ in range(2):
        out = conv(x, w)
        want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1).numpy()
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert seen == [(True, True), (True, True)]
    assert (cudnn.deterministic, cudnn.benchmark) == before  # restored after each call
    with pytest.raises(TypeError, match="bool"):
        cfg.cudnn_conv_use_deterministic_algo_only("yes")
