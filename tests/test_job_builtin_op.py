"""flow.BuiltinOp / flow.builtin_op / flow.user_op_builder (INVENTORY C.2; _legacy/builtin.py): a
call of any table op by name through the boxed form, eager and recorded inside a job, and its
typed errors. Checked against numpy."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp


pytestmark = pytest.mark.usefixtures("fresh_job_session")


def test_builtin_op_eager_and_in_a_job():
    op = flow.builtin_op("add").Input("input").Input("other").Output("out").Attr("alpha", 2.0).Build()
    a, b = flow.tensor([1.0, 2.0]), flow.tensor([10.0, 20.0])
    (y,) = op(a, b)
    np.testing.assert_array_equal(y.numpy(), [21.0, 42.0])
    b2 = flow.BuiltinOp("sum").Input("x").Output("y").Attr("dim", [1]).Attr("keepdim", True)
    b2.Build()
    (s,) = b2.op(flow.ones(2, 3))
    assert tuple(s.shape) == (2, 1)

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2, 2))) -> tp.Numpy:
        return op(x, x)[0]

    np.testing.assert_array_equal(job(np.ones((2, 2), np.float32)), np.full((2, 2), 3.0))
    assert "add" in job._compiled[next(iter(job._compiled))].program.describe()

    y = (flow.user_op_builder("my_mul").Op("mul").Input("input", [a]).Input("other", [b]).Output("out")
         .Build().InferAndTryRun().RemoteBlobList()[0])
    np.testing.assert_array_equal(y.numpy(), [10.0, 40.0])


def test_builtin_op_errors():
    with pytest.raises(ValueError, match="no op named 'nope'"):
        flow.builtin_op("nope")
    with pytest.raises(ValueError, match="no attribute 'bogus'"):
        flow.builtin_op("add").Attr("bogus", 1)
    with pytest.raises(ValueError, match="attribute 'keepdim' is bool"):
        flow.builtin_op("sum").Attr("keepdim", "yes")
    op = flow.builtin_op("neg").Input("x").Output("y").Build()
    with pytest.raises(ValueError, match="declared 1 inputs, got 2"):
        op(flow.ones(1), flow.ones(1))
    with pytest.raises(RuntimeError, match="Build"):
        flow.builtin_op("neg").op
