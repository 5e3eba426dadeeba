"""The rest of the job-function API (INVENTORY C.2-C.4, C.8, C.10): BuiltinOp / user_op_builder
over the boxed form, old-style input definitions and futures, the Blob ops without an eager twin,
module registry and runtime queries. Checked against numpy / PyTorch."""
import os

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp


@pytest.fixture(autouse=True)
def _fresh_session():
    flow.clear_default_session()
    yield
    flow.clear_default_session()


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


class _Classifier(flow.Model):
    def __init__(self, n_opts=1):
        super().__init__()
        self.lin = flow.nn.Linear(4, 3)
        self.n_opts = n_opts

    def forward(self, x):
        return self.lin(x)

    def training_step(self, batch, optimizer_idx=0):
        x, y = batch
        return flow.nn.functional.cross_entropy(self(x), y)

    def validation_step(self, batch):
        x, y = batch
        return (self(x).argmax(1) == y).float().mean()

    def configure_optimizers(self):
        opt = flow.optim.SGD(self.parameters(), lr=0.5)
        return ([opt], [flow.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)])


def _batches():
    rs = np.random.RandomState(0)
    out = []
    for _ in range(4):
        x = rs.randn(8, 4).astype(np.float32)
        out.append((flow.tensor(x), flow.tensor(x[:, :3].argmax(1))))
    return out


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_model_fit_matches_a_torch_loop(mode, tmp_path):
    flow.manual_seed(3)
    m = _Classifier()
    tlin = torch.nn.Linear(4, 3)
    tlin.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in m.lin.state_dict().items()})
    data = _batches()
    train = flow.model.TrainingConfig().config_data(data).config_execution_mode(mode)
    val = flow.model.ValidationConfig().config_data(data).config_step_interval(2)
    ckpt = flow.model.CheckpointConfig().config_save(str(tmp_path), step_interval=5)
    seen = {"train": [], "val": []}

    class Record(flow.model.Callback):
        def on_training_step_end(self, outputs, step_idx, optimizer_idx):
            seen["train"].append((step_idx, float(outputs)))

        def on_validation_step_end(self, outputs, step_idx):
            seen["val"].append(step_idx)

    m.fit(training_config=train, validation_config=val, checkpoint_config=ckpt, callbacks=Record(), max_steps=10)
    topt = torch.optim.SGD(tlin.parameters(), lr=0.5)
    tsch = torch.optim.lr_scheduler.StepLR(topt, step_size=3, gamma=0.5)
    for step in range(10):
        x, y = data[step % 4]
        loss = torch.nn.functional.cross_entropy(tlin(torch.from_numpy(x.numpy())), torch.from_numpy(y.numpy()))
        assert seen["train"][step][1] == pytest.approx(loss.item(), rel=1e-5)
        topt.zero_grad()
        loss.backward()
        topt.step()
        tsch.step()
    np.testing.assert_allclose(m.lin.weight.numpy(), tlin.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert seen["val"] == [1, 3, 5, 7, 9]
    assert sorted(os.listdir(tmp_path)) == ["step_10", "step_5"]
    again = _Classifier()
    again.fit(training_config=flow.model.TrainingConfig().config_data(data),
              checkpoint_config=flow.model.CheckpointConfig().config_load(str(tmp_path / "step_10")), max_steps=0)
    np.testing.assert_array_equal(again.lin.weight.numpy(), m.lin.weight.numpy())
    assert m.method_overrided("validation_step") and not flow.Model.method_overrided(m, "nope")


def test_model_fit_errors():
    with pytest.raises(ValueError, match="config_data"):
        _Classifier().fit(max_steps=1)
    with pytest.raises(ValueError, match="mode must be"):
        flow.model.TrainingConfig().config_execution_mode("fast")

    class NoSteps(flow.Model):
        pass

    with pytest.raises(NotImplementedError, match="training_step"):
        NoSteps().fit(training_config=flow.model.TrainingConfig().config_data([1]), max_steps=1)


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


def test_data_dependent_jobs_run_eagerly_with_the_spec_where_examples():
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

    (idx,) = argwhere_job(condition)  # a shape that depends on the values: the job runs its Python
    np.testing.assert_array_equal(idx, [[0], [2], [4]])
    assert argwhere_job._dynamic and not where_job._dynamic
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
