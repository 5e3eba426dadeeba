"""The Blob ops of the job-function API without an eager twin (INVENTORY C.4; _legacy/ops.py,
builtin.py): assign, the stateful categorical_ordinal_encode, the data-dependent ops that make a
job run eagerly, and the spec's examples of Blob ops. Checked against numpy / PyTorch."""
import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp


pytestmark = pytest.mark.usefixtures("fresh_job_session")


def test_assign_updates_a_variable_on_every_call():
    @flow.global_function()
    def count() -> tp.Numpy:
        v = flow.get_variable("counter", shape=(1,), initializer=flow.zeros_initializer(), trainable=False)
        flow.assign(v, v + 1)
        return v + 0

    assert [float(count()[0]) for _ in range(3)] == [1.0, 2.0, 3.0]


def test_blob_ops_without_eager_twins():
    x = np.array([[1.0, np.nan, 3.0], [np.inf, 5.0, -np.inf]], np.float32)
    assert int(flow.count_not_finite(flow.tensor(x))) == 3
    assert int(flow.multi_count_not_finite([flow.tensor(x), flow.ones(2)])) == 3
    t = flow.arange(24.0).reshape(2, 3, 4)
    padded_t = flow.nn.functional.pad(t, (1, 2, 0, 1))
    np.testing.assert_array_equal(flow.pad_grad(padded_t, [(0, 0), (0, 1), (1, 2)]).numpy(), t.numpy())
    np.testing.assert_array_equal(flow.dynamic_reshape(t, [4, -1]).numpy(), t.numpy().reshape(4, -1))
    np.testing.assert_array_equal(flow.sync_dynamic_resize(t, flow.tensor([1])).numpy(), t.numpy()[:1])
    # same_padding then a VALID convolution = a SAME convolution
    img = np.random.RandomState(0).randn(1, 2, 7, 7).astype(np.float32)
    w = np.random.RandomState(1).randn(3, 2, 3, 3).astype(np.float32)
    padded = flow.same_padding(flow.tensor(img), "SAME_UPPER", "NCHW", [3, 3], [2, 2], [1, 1])
    assert tuple(padded.shape) == (1, 2, 9, 9)
    got = flow.nn.functional.conv2d(padded, flow.tensor(w), stride=2).numpy()
    want = torch.nn.functional.conv2d(torch.from_numpy(img), torch.from_numpy(w), stride=2, padding=1).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # combined margin: cos(m1 * theta + m2) - m3 at each row's label
    cosines = np.array([[0.5, 0.2], [0.1, 0.9]], np.float32)
    out = flow.combined_margin_loss(flow.tensor(cosines), flow.tensor([0, 1]), m1=1.0, m2=0.5, m3=0.1).numpy()
    want = cosines.copy()
    want[0, 0] = np.cos(np.arccos(0.5) + 0.5) - 0.1
    want[1, 1] = np.cos(np.arccos(0.9) + 0.5) - 0.1
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert flow.amp_white_identity(t) is t and flow.cast_to_static_shape(t) is t
    # the spec's example (002, CombinedMarginLoss) through the legacy name
    x = flow.tensor([[-0.7027179, 0.0230609], [-0.02721931, -0.16056311], [-0.4565852, -0.64471215]])
    np.testing.assert_allclose(flow.combined_margin_loss(x, flow.tensor([0, 1, 1]), 0.3, 0.5, 0.4).numpy(),
                               [[-0.0423, 0.0231], [-0.0272, 0.1237], [-0.4566, -0.0204]], atol=5e-5)


def test_categorical_ordinal_encode_spec_example():
    """The spec's example: ids in order of appearance, 0 -> 0, the table kept across calls."""
    @flow.global_function()
    def encode_job(x: tp.Numpy.Placeholder((3, 3), dtype=flow.int32)) -> tp.Numpy:
        dtype = x.dtype
        with flow.scope.namespace("categorical_ordinal_encode"):
            table = flow.get_variable(name="Table", shape=(16,), dtype=dtype,
                                      initializer=flow.constant_initializer(0, dtype=dtype), trainable=False)
            size = flow.get_variable(name="Size", shape=(1,), dtype=dtype,
                                     initializer=flow.constant_initializer(0, dtype=dtype), trainable=False)
            return flow.categorical_ordinal_encode(table=table, size=size, input_tensor=x, name="Encode")

    x = np.array([[7, 0, 2], [1, 7, 2], [0, 1, 7]]).astype(np.int32)
    np.testing.assert_array_equal(encode_job(x), [[1, 0, 2], [3, 1, 2], [0, 3, 1]])
    # the same program again: known values keep their ids, a new one gets the next
    np.testing.assert_array_equal(encode_job(np.array([[9, 7, 0]] * 3, np.int32)), [[4, 1, 0]] * 3)
    assert int(flow.get_all_variables()["categorical_ordinal_encode-Size"][0]) == 4
    small = flow.zeros(2, dtype=flow.int32)
    with pytest.raises(RuntimeError, match="holds 1 values"):
        flow.categorical_ordinal_encode(small, flow.zeros(1, dtype=flow.int32), flow.tensor([3, 4], dtype=flow.int32))


def test_data_dependent_jobs_compile_with_the_spec_where_examples():
    @flow.global_function()
    def where_job(condition: tp.Numpy.Placeholder(shape=(5,), dtype=flow.int32),
                  x: tp.Numpy.Placeholder(shape=(5,), dtype=flow.float32),
                  y: tp.Numpy.Placeholder(shape=(5,), dtype=flow.float32)) -> tp.ListNumpy:
        return flow.where(condition=condition, x=x, y=y)

    condition = np.array([3, 0, 1, 0, 1]).astype(np.int32)
    x = np.array([10, 20, 30, 40, 50]).astype(np.float32)
    y = np.array([100, 200, 300, 400, 500]).astype(np.float32)
    (out,) = where_job(condition, x, y)
    np.testing.assert_array_equal(out, [10.0, 200.0, 30.0, 400.0, 50.0])

    @flow.global_function()
    def argwhere_job(condition: tp.Numpy.Placeholder(shape=(5,), dtype=flow.int32)) -> tp.ListNumpy:
        return flow.where(condition=condition)

    (idx,) = argwhere_job(condition)  # a shape that depends on the values: a dynamic-shape node
    np.testing.assert_array_equal(idx, [[0], [2], [4]])  # (Note [Dynamic shapes]): still compiled
    assert not argwhere_job._dynamic and not where_job._dynamic
    (idx,) = argwhere_job(np.array([0, 0, 0, 0, 7], np.int32))
    np.testing.assert_array_equal(idx, [[4]])


def test_more_spec_examples_of_blob_ops():
    """Spec 000's examples (their documented outputs), in one compiled job."""
    from typing import Dict

    @flow.global_function()
    def job(x5: tp.Numpy.Placeholder((5,)), pred: tp.Numpy.Placeholder((5,)), label: tp.Numpy.Placeholder((5,)),
            targets: tp.Numpy.Placeholder((2,), dtype=flow.int32), predictions: tp.Numpy.Placeholder((2, 4)),
            ones33: tp.Numpy.Placeholder((3, 3)), img: tp.Numpy.Placeholder((1, 2, 3, 3)),
            seg_data: tp.Numpy.Placeholder((3, 4)), seg_ids: tp.Numpy.Placeholder((4,), dtype=flow.int32),
            col: tp.Numpy.Placeholder((3, 1))) -> Dict[str, tp.Numpy]:
        like = flow.constant(value=1.0, shape=(3, 3))
        return {
            "argsort": flow.argsort(input=x5),
            "in_top_k": flow.math.in_top_k(targets, predictions, 1),
            "same_padding": flow.same_padding(img[:, :1], kernel_size=(3, 3), strides=(1, 1), dilation_rate=(1, 1)),
            "smooth_l1": flow.smooth_l1_loss(prediction=pred, label=label),
            "pad": flow.pad(ones33, paddings=((2, 2), (1, 1)), constant_value=5),
            "reverse": flow.reverse(ones33 * flow.reshape(flow.range(1, 4, dtype=flow.float32), [3, 1]), axis=0),
            "constant_pad2d": flow.constant_pad2d(img, padding=[2, 2, 1, 1], constant_value=1.5),
            "reflection_pad2d": flow.reflection_pad2d(img, padding=[2, 2, 1, 1]),
            "unsorted_segment_sum": flow.math.unsorted_segment_sum(seg_data, seg_ids, num_segments=2, axis=1),
            "broadcast_like": flow.broadcast_like(x=col, like=like, broadcast_axes=(1,)),
        }

    img = np.arange(18).reshape((1, 2, 3, 3)).astype(np.float32)
    r = job(np.array([10, 2, 9, 3, 7], np.float32), np.array([0.1, 0.4, 0.3, 0.5, 0.9], np.float32),
            np.array([0.3, 0.9, 2.5, 0.4, 0.3], np.float32), np.array([3, 1], np.int32),
            np.array([[0.0, 1.0, 2.0, 3.0], [3.0, 2.0, 1.0, 0.0]], np.float32), np.ones((3, 3), np.float32), img,
            np.arange(1, 13, dtype=np.float32).reshape(3, 4), np.array([0, 1, 0, 1], np.int32),
            np.ones((3, 1), np.float32))
    np.testing.assert_array_equal(r["argsort"], [1, 3, 4, 2, 0])
    np.testing.assert_array_equal(r["in_top_k"], [1, 0])
    np.testing.assert_array_equal(r["same_padding"][0, 0], np.pad(img[0, 0], 1))
    np.testing.assert_allclose(r["smooth_l1"], [0.02, 0.125, 1.7, 0.005, 0.18], rtol=1e-5)
    np.testing.assert_array_equal(r["pad"], np.pad(np.ones((3, 3)), ((2, 2), (1, 1)), constant_values=5))
    np.testing.assert_array_equal(r["reverse"][:, 0], [3.0, 2.0, 1.0])
    assert r["constant_pad2d"].shape == (1, 2, 5, 7) and r["constant_pad2d"][0, 0, 1].tolist() == [1.5, 1.5, 0, 1, 2, 1.5, 1.5]
    np.testing.assert_array_equal(r["reflection_pad2d"][0, 0, 1], [2.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0])
    np.testing.assert_array_equal(r["unsorted_segment_sum"], [[4.0, 6.0], [12.0, 14.0], [20.0, 22.0]])
    np.testing.assert_array_equal(r["broadcast_like"], np.ones((3, 3)))


@pytest.mark.parametrize("eager", [False, True])
def test_blob_logical_names(eager):
    """0.x's blob names (blob_names.py): a variable is "<name>/out" inside and outside jobs;
    another blob is named "<job>-blob_<k>/out" by the order its names are first read in the call
    (the same in every call and in the compiled and eager forms); unique_name adds a global
    blob's distribution; a tensor outside jobs has no op."""
    flow.enable_eager_execution(eager)
    seen = []
    try:
        @flow.global_function("predict")
        def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
            w = flow.get_variable("scope_w", shape=(3,), initializer=flow.constant_initializer(1.0))
            h = x * w
            y = h + 1
            seen.append((w.logical_blob_name, w.op_name, w.blob_name, y.logical_blob_name, h.op_name,
                         y.logical_blob_name, y.unique_name, y.job_name))
            return y

        job(np.ones((2, 3), np.float32))
        job(np.ones((2, 3), np.float32))
    finally:
        flow.enable_eager_execution(False)
    want = ("scope_w/out", "scope_w", "out", "job-blob_0/out", "job-blob_1", "job-blob_0/out", "job-blob_0/out",
            "job")
    assert seen[0] == want and seen[-1] == want
    assert flow.get_all_variables()["scope_w"].logical_blob_name == "scope_w/out"
    with pytest.raises(RuntimeError, match="outside job functions has no op"):
        flow.ones(2).logical_blob_name
    with pytest.raises(RuntimeError, match="belongs to no job"):
        flow.ones(2).job_name
