"""The 0.x runtime around job functions (INVENTORY C.3, C.10; _legacy/runtime.py): old-style input
definitions (FixedTensorDef / MirroredTensorDef) whose jobs return futures, the module registry
and the resource queries."""
import numpy as np
import pytest

import oneflow as flow


pytestmark = pytest.mark.usefixtures("fresh_job_session")


def test_old_style_inputs_and_futures():
    @flow.global_function()
    def job(x=flow.FixedTensorDef((2, 3)), y=flow.MirroredTensorDef((4, 3))):
        return x + 1, y.sum(dim=0)

    a, b = job(np.zeros((2, 3), np.float32), [np.ones((3, 3), np.float32)]).get()
    np.testing.assert_array_equal(a.numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(b.ndarray(), [3.0, 3.0, 3.0])
    got = []
    job(np.zeros((2, 3), np.float32), [np.ones((1, 3), np.float32)]).async_get(got.append)
    flow.sync_default_session()
    np.testing.assert_array_equal(got[0][1].numpy(), [1.0, 1.0, 1.0])


def test_runtime_queries_and_registry():
    made = []
    first = flow.find_or_create_module("enc", lambda: made.append(1) or "module", reuse=True)
    again = flow.find_or_create_module("enc", lambda: made.append(1) or "other", reuse=True)
    assert first == again == "module" and len(made) == 1
    assert flow.find_or_create_module("enc", lambda: "fresh") == "fresh"
    assert flow.current_machine_id() == 0
    r = flow.current_resource()
    assert r.machine_num == 1 and r.gpu_device_num == (flow.cuda.device_count() if flow.cuda.is_available() else 0)
    flow.inter_job_reuse_mem_strategy("reuse_mem_priority")
    with pytest.raises(ValueError, match="strategy must be one of"):
        flow.inter_job_reuse_mem_strategy("fastest")
    with pytest.raises(ValueError, match="job_name_groups"):
        flow.inter_job_reuse_mem_strategy("custom_parallelism")
