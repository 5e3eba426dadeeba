"""flow.optimizer in train jobs (_legacy/optimizer.py): `variables=` limits what an optimizer
updates (names or a callable giving them), compiled and eager. Checked against PyTorch."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp


pytestmark = pytest.mark.usefixtures("fresh_job_session")


@pytest.mark.parametrize("eager", [False, True])
def test_optimizer_variables_subset(eager):
    """variables= (names, or a callable giving them) limits what minimize() updates; the other
    variables keep their values and their gradients do not pile up."""
    flow.enable_eager_execution(eager)
    try:
        for variables in (["a"], lambda: ["a"]):
            flow.clear_default_session()

            @flow.global_function(type="train")
            def train(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
                a = flow.get_variable("a", shape=(4,), initializer=flow.constant_initializer(1.0))
                b = flow.get_variable("b", shape=(4,), initializer=flow.constant_initializer(2.0))
                loss = (x * a * b).sum()
                flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0,
                                   variables=variables).minimize(loss)
                return loss

            x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
            for _ in range(2):
                train(x)
            got = flow.get_all_variables()
            np.testing.assert_allclose(got["a"].numpy(), 1.0 - 2 * 0.1 * x * 2.0, rtol=1e-6)  # d/da = x * b
            np.testing.assert_array_equal(got["b"].numpy(), np.full(4, 2.0, np.float32))
            assert got["b"].grad is None
    finally:
        flow.enable_eager_execution(False)
    flow.clear_default_session()

    @flow.global_function(type="train")
    def wrong(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        a = flow.get_variable("a", shape=(4,), initializer=flow.constant_initializer(1.0))
        loss = (x * a).sum()
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), variables=["nope"]).minimize(loss)
        return loss

    with pytest.raises(ValueError, match="nope"):
        wrong(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="variable names"):
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), variables=[1])
