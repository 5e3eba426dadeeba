"""The OneFlow 0.x names added for issue 42 (flow.config, flow.env, flow.data, flow.checkpoint,
layers.batch_normalization, PolynomialScheduler, loss_scale, CropMirrorNormalize, CoinFlip) and
the keyword forms of spec 003's examples, each against its documented semantics (PyTorch where
there is a computation to compare)."""
import io
import math
import os
import typing

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from oneflow.nn.modules.ofrecord import write_ofrecord


pytestmark = pytest.mark.usefixtures("fresh_job_session")


# ---- spec 003's examples ----

def test_creation_keyword_forms_in_jobs():
    @flow.global_function()
    def job() -> typing.Tuple[tp.Numpy, tp.Numpy, tp.Numpy, tp.Numpy, tp.Numpy]:
        c = flow.constant(value=1.5, shape=(1, 3, 3), dtype=flow.float)
        return (flow.ones(shape=(2, 3), dtype=flow.float32), flow.zeros(shape=(2, 3)),
                flow.ones_like(like=c, dtype=flow.int32), flow.zeros_like(like=c), flow.ones(2, 2))
    o, z, ol, zl, cur = job()
    np.testing.assert_array_equal(o, np.ones((2, 3), np.float32))
    assert z.dtype == np.float32 and not z.any() and z.shape == (2, 3)
    assert ol.dtype == np.int32 and ol.shape == (1, 3, 3) and (ol == 1).all()
    assert zl.dtype == np.float32 and zl.shape == (1, 3, 3) and not zl.any()
    np.testing.assert_array_equal(cur, np.ones((2, 2), np.float32))  # the current form still works in jobs


def test_clamp_clip_expand_dims_slice_update_in_jobs():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((5,)), u: tp.Numpy.Placeholder((3,))) -> typing.Tuple[tp.Numpy, tp.Numpy,
                                                                                      tp.Numpy, tp.Numpy]:
        return (flow.clamp(x, min_value=-1, max_value=5), flow.clip(x, max_value=0.5),
                flow.expand_dims(input=flow.reshape(x, (1, 5)), axis=-1),
                flow.slice_update(x=x, update=u, slice_tup_list=[[1, 4, 1]]) + x * 0)
    x = np.array([-3, 0, 4, 9, 1], np.float32)
    u = np.array([2, 3, 4], np.float32)
    c, c2, e, s = job(x, u)
    np.testing.assert_array_equal(c, torch.clamp(torch.tensor(x), -1, 5).numpy())
    np.testing.assert_array_equal(c2, torch.clamp(torch.tensor(x), max=0.5).numpy())
    assert e.shape == (1, 5, 1)
    np.testing.assert_array_equal(s, [-3, 2, 3, 4, 1])
    with pytest.raises(IndexError, match="expand_dims"):
        flow.global_function()(_expand_bad)(np.zeros((2,), np.float32))


def _expand_bad(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
    return flow.expand_dims(x, axis=3)


def test_argwhere_where_int32_and_list_numpy_ndarray():
    @flow.global_function()
    def arg_job(x: tp.Numpy.Placeholder(shape=(2, 3), dtype=flow.float32)) -> tp.ListNumpy:
        return flow.argwhere(x)

    @flow.global_function()
    def where_job(c: tp.Numpy.Placeholder(shape=(5,), dtype=flow.int32)) -> tp.ListNumpy:
        return flow.where(condition=c)

    @flow.global_function()
    def static_job(x: tp.ListNumpy.Placeholder(shape=(3, 3), dtype=flow.float32)) -> tp.Numpy:
        return flow.cast_to_static_shape(x)
    x = np.array([[0, 1, 0], [2, 0, 2]], np.float32)
    (idx,) = arg_job(x)
    assert idx.dtype == np.int32
    np.testing.assert_array_equal(idx, torch.argwhere(torch.tensor(x)).numpy())
    (w,) = where_job(np.array([1, 0, 1, 0, 1], np.int32))
    assert w.dtype == np.int32 and w.reshape(-1).tolist() == [0, 2, 4]
    m = np.arange(9, dtype=np.float32).reshape(3, 3)
    np.testing.assert_array_equal(static_job(m), m)  # a bare ndarray for the one device
    np.testing.assert_array_equal(static_job([m]), m)


def test_constant_pad2d_default_value():
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    np.testing.assert_array_equal(flow.nn.ConstantPad2d(1)(flow.tensor(x)).numpy(),
                                  torch.nn.ConstantPad2d(1, 0.0)(torch.tensor(x)).numpy())


def test_watch_diff_in_train_job():
    got = []

    @flow.global_function(type="train")
    def job(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3,), initializer=flow.ones_initializer())
        y = x * w
        flow.watch_diff(w, lambda d: got.append(d))
        loss = flow.math.reduce_sum(y)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]), momentum=0).minimize(loss)
        return loss
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    job(x)
    np.testing.assert_allclose(got[0], x.sum(0))


# ---- flow.config / flow.env ----

def test_config_and_env_settings(tmp_path):
    from oneflow._legacy.config import SETTINGS
    flow.config.cpu_device_num(2)
    flow.config.machine_num(1)
    flow.config.enable_legacy_model_io(False)
    assert not flow.config.legacy_model_io_enabled()
    flow.config.enable_legacy_model_io(True)
    assert flow.config.legacy_model_io_enabled()
    flow.config.collective_boxing.nccl_fusion_threshold_mb(32)
    flow.config.use_rdma(False)
    assert SETTINGS["cpu_device_num"] == 2 and SETTINGS["collective_boxing.nccl_fusion_threshold_mb"] == 32
    with pytest.raises(ValueError, match="machine_num"):
        flow.config.machine_num(2)  # one process launched
    with pytest.raises(ValueError, match="gpu_device_num"):
        flow.config.gpu_device_num(-1)
    with pytest.raises(TypeError, match="use_rdma"):
        flow.config.use_rdma("yes")
    threads = flow.get_num_threads()
    try:
        flow.config.compute_thread_pool_size(1)
        assert flow.get_num_threads() == 1
    finally:
        flow.set_num_threads(threads)
    flow.env.log_dir(str(tmp_path / "logs"))
    assert os.path.isdir(tmp_path / "logs")
    flow.env.ctrl_port(12345)
    with pytest.raises(ValueError, match="ctrl_port"):
        flow.env.ctrl_port(70000)
    flow.env.logtostderr(1)
    flow.env.grpc_use_no_signal(True)
    assert SETTINGS["logtostderr"] == 1 and SETTINGS["grpc_use_no_signal"] is True
    with pytest.raises(ValueError, match="logtostderr"):
        flow.env.logtostderr(3)
    flow.env.machine([{"addr": "127.0.0.1"}])
    with pytest.raises(ValueError, match="machine"):
        flow.env.machine(["10.0.0.1", "10.0.0.2"])
    with pytest.raises(FileNotFoundError, match="load_library"):
        flow.config.load_library(str(tmp_path / "nope.so"))


# ---- flow.data ----

def _records(folder):
    recs = [{"x": np.arange(3, dtype=np.float32) + 10 * i, "label": np.array([i], np.int32)} for i in range(6)]
    os.makedirs(folder, exist_ok=True)
    write_ofrecord(os.path.join(folder, "part-0"), recs)
    return recs


def test_data_reader_continues_across_job_calls(tmp_path):
    _records(str(tmp_path))

    @flow.global_function()
    def job() -> typing.Tuple[tp.Numpy, tp.Numpy]:
        rec = flow.data.ofrecord_reader(str(tmp_path), batch_size=4)
        return (flow.data.OFRecordRawDecoder(rec, "x", shape=(3,), dtype=flow.float),
                flow.data.ofrecord_raw_decoder(rec, "label", shape=(), dtype=flow.int32))
    labels = [job()[1].tolist() for _ in range(3)]
    assert labels == [[0, 1, 2, 3], [4, 5, 0, 1], [2, 3, 4, 5]]  # the next records at every call
    x, _ = job()
    np.testing.assert_array_equal(x, np.arange(3, dtype=np.float32) + 10 * np.arange(4)[:, None])
    # outside a job each call is a new reader: the first records
    rec = flow.data.ofrecord_reader(str(tmp_path), batch_size=2)
    assert flow.data.ofrecord_raw_decoder(rec, "label", shape=(), dtype=flow.int32).numpy().tolist() == [0, 1]


def test_decode_random_and_coin_flip():
    @flow.global_function()
    def job() -> typing.Tuple[tp.Numpy, tp.Numpy, tp.Numpy]:
        return (flow.data.decode_random(shape=(3, 4), dtype=flow.float, batch_size=5),
                flow.data.decode_random(shape=(), dtype=flow.int32, batch_size=5,
                                        initializer=flow.constant_initializer(7)),
                flow.random.CoinFlip(batch_size=1000, seed=3, probability=0.25))
    a, lab, flip = job()
    b, _, flip2 = job()
    assert a.shape == (5, 3, 4) and a.dtype == np.float32 and 0 <= a.min() and a.max() < 1
    assert not np.array_equal(a, b)  # new values at every call
    assert lab.dtype == np.int32 and (lab == 7).all()
    assert flip.dtype == np.int8 and set(np.unique(flip)) <= {0, 1} and 0.2 < flip.mean() < 0.3
    assert not np.array_equal(flip, flip2)  # the seeded generator continues across calls
    with pytest.raises(TypeError, match="decode_random"):
        flow.data.decode_random(shape=3, dtype=flow.float)


def test_image_classification_reader_and_crop_mirror_normalize(tmp_path):
    from PIL import Image
    imgs = [np.random.default_rng(i).integers(0, 255, (6 + i, 8, 3)).astype(np.uint8) for i in range(2)]
    recs = []
    for i, im in enumerate(imgs):
        buf = io.BytesIO()
        Image.fromarray(im).save(buf, format="PNG")
        recs.append({"encoded": buf.getvalue(), "class/label": np.array([i], np.int32)})
    write_ofrecord(str(tmp_path / "part-0"), recs)
    images, labels = flow.data.ofrecord_image_classification_reader(str(tmp_path), "encoded", "class/label",
                                                                     batch_size=2, color_space="RGB")
    assert labels.numpy().tolist() == [0, 1]
    np.testing.assert_array_equal(images[1].numpy(), imgs[1])
    mirror = flow.tensor([0, 1], dtype=flow.int8)
    out = flow.image.CropMirrorNormalize(images, mirror_blob=mirror, color_space="RGB", crop_h=4, crop_w=4,
                                         crop_pos_y=0.0, crop_pos_x=0.5, mean=[10.0, 20.0, 30.0],
                                         std=[2.0, 4.0, 8.0])
    t = [torch.tensor(im[:4, 2:6].astype(np.float32)) for im in imgs]
    t[1] = t[1].flip(1)
    ref = (torch.stack(t) - torch.tensor([10.0, 20.0, 30.0])) / torch.tensor([2.0, 4.0, 8.0])
    np.testing.assert_allclose(out.numpy(), ref.permute(0, 3, 1, 2).numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="crop_h and crop_w"):
        flow.image.crop_mirror_normalize(images, color_space="RGB")  # sizes differ, no crop


# ---- flow.checkpoint ----

def test_checkpoint_get_save(tmp_path):
    w = flow.get_variable("w", shape=(2, 3), initializer=flow.random_normal_initializer())
    b = flow.get_variable("b", shape=(3,), dtype=flow.int32, initializer=flow.constant_initializer(4))
    flow.checkpoint.save(str(tmp_path / "snap"))
    assert os.path.isfile(tmp_path / "snap" / "w" / "out") and os.path.isfile(tmp_path / "snap" / "snapshot_done")
    got = flow.checkpoint.get(str(tmp_path / "snap"))
    assert sorted(got) == ["b", "w"] and got["b"].dtype == flow.int32
    np.testing.assert_array_equal(got["w"].numpy(), w.numpy())
    np.testing.assert_array_equal(flow.checkpoint.get(str(tmp_path / "snap" / "b")).numpy(), b.numpy())
    flow.checkpoint.save(str(tmp_path / "only_w"), {"w": w})
    assert sorted(flow.checkpoint.get(str(tmp_path / "only_w"))) == ["w"]
    with pytest.raises(FileNotFoundError, match="checkpoint.get"):
        flow.checkpoint.get(str(tmp_path / "missing"))


# ---- layers.batch_normalization ----

@pytest.mark.parametrize("form", ["plain", "relu", "add_relu"])
def test_batch_normalization_matches_torch(form):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    add = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)

    @flow.global_function(type="train")
    def job(xb: tp.Numpy.Placeholder((4, 3, 5, 5)), ab: tp.Numpy.Placeholder((4, 3, 5, 5))) -> tp.Numpy:
        kw = dict(axis=1, momentum=0.9, epsilon=1e-3, name="bn")
        if form == "plain":
            y = flow.layers.batch_normalization(xb, **kw)
        elif form == "relu":
            y = flow.layers.batch_normalization_relu(xb, **kw)
        else:
            y = flow.layers.batch_normalization_add_relu(xb, ab, **kw)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0).minimize(
            flow.math.reduce_mean(y * y))
        return y
    out = job(x, add)
    bn = torch.nn.BatchNorm2d(3, eps=1e-3, momentum=0.1)
    ref = bn(torch.tensor(x))
    if form == "add_relu":
        ref = ref + torch.tensor(add)
    if form != "plain":
        ref = torch.relu(ref)
    np.testing.assert_allclose(out, ref.detach().numpy(), rtol=1e-4, atol=1e-5)
    v = flow.get_all_variables()
    np.testing.assert_allclose(v["bn-moving_mean"].numpy(), bn.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v["bn-moving_variance"].numpy(), bn.running_var.numpy(), rtol=1e-5)
    assert not v["bn-moving_mean"].requires_grad and v["bn-gamma"].requires_grad

    @flow.global_function()
    def predict(xb: tp.Numpy.Placeholder((4, 3, 5, 5))) -> tp.Numpy:
        return flow.layers.batch_normalization(xb, axis=1, momentum=0.9, epsilon=1e-3, name="bn")
    bn.weight.data = torch.tensor(v["bn-gamma"].numpy())
    bn.bias.data = torch.tensor(v["bn-beta"].numpy())
    np.testing.assert_allclose(predict(x), bn.eval()(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


# ---- flow.optimizer ----

def test_polynomial_scheduler():
    s = flow.optimizer.PolynomialScheduler(0.1, steps=4, end_learning_rate=0.01, power=2.0)
    for step in range(7):
        t = min(step, 4)
        assert math.isclose(s.lr(step), (0.1 - 0.01) * (1 - t / 4) ** 2 + 0.01)
    c = flow.optimizer.PolynomialScheduler(0.1, steps=4, end_learning_rate=0.0, power=1.0, cycle=True)
    # (0.x's kernel counts step 0 as step 1 when cycling: tests/test_job_lr_schedules.py)
    assert math.isclose(c.lr(0), 0.075) and math.isclose(c.lr(2), 0.05)
    assert math.isclose(c.lr(6), 0.1 * (1 - 6 / 8))  # the second cycle decays over 8 steps
    with pytest.raises(ValueError, match="PolynomialScheduler"):
        flow.optimizer.PolynomialScheduler(0.1, steps=0)


def test_loss_scale_policies():
    def train(policy, x):
        flow.clear_default_session()

        @flow.global_function(type="train")
        def job(xb: tp.Numpy.Placeholder((3,))) -> tp.Numpy:
            w = flow.get_variable("w", shape=(3,), initializer=flow.ones_initializer())
            loss = flow.math.reduce_sum(w * xb)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.5]), momentum=0,
                               loss_scale_policy=policy).minimize(loss)
            return loss
        for xi in x:
            job(xi)
        return flow.get_all_variables()["w"].numpy()
    xs = [np.array([1, 2, 3], np.float32), np.array([1, np.inf, 0], np.float32), np.array([1, 1, 1], np.float32)]
    # static: the same update as without scaling
    np.testing.assert_allclose(train(flow.optimizer.loss_scale.static_loss_scale(1024.0), xs[::2]),
                               1 - 0.5 * (xs[0] + xs[2]), rtol=1e-6)
    dyn = flow.optimizer.loss_scale.dynamic_loss_scale(initial_loss_scale=2 ** 10, increment_period=1, multiplier=2)
    w = train(dyn, xs)  # the inf step is skipped, the scale halved; finite steps double it
    np.testing.assert_allclose(w, 1 - 0.5 * (xs[0] + xs[2]), rtol=1e-6)
    assert dyn.scale == 2 ** 10 * 2 / 2 * 2
    with pytest.raises(TypeError, match="loss_scale_policy"):
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), loss_scale_policy=3)


def test_every_function_config_property_is_documented():
    """docs/job_functions.md's FunctionConfig table has one row naming each property, each with
    what it does or why it is accepted."""
    import re
    from oneflow._legacy.job import _KNOBS
    doc = open(os.path.join(os.path.dirname(__file__), "..", "docs", "job_functions.md")).read()
    table = doc[doc.index("## FunctionConfig properties"):doc.index("## OneFlow 0.x scripts")]
    named = {}
    for line in table.splitlines():
        if line.startswith("| `"):
            _, first, reason, _ = line.split("|")
            for n in re.findall(r"`(\w+)`", first):
                named[n] = reason.strip()
    assert set(named) == set(_KNOBS)
    assert all(len(r) > 20 for r in named.values())


def test_initializer_conf_messages():
    """oneflow.core.job.initializer_conf_pb2.InitializerConf as 0.x scripts fill it by hand."""
    from oneflow.core.job import initializer_conf_pb2 as ic
    from oneflow.core.operator import op_conf_pb2 as oc
    assert (oc.kNone, oc.kTanH, oc.kSigmoid, oc.kRelu) == (0, 1, 2, 3)
    c = ic.InitializerConf()
    assert c.WhichOneof("type") is None
    c.constant_conf.value = 2.5
    np.testing.assert_array_equal(flow.get_variable("c", shape=(2, 2), initializer=c).numpy(), np.full((2, 2), 2.5))
    t = ic.InitializerConf()
    t.truncated_normal_conf.mean = 1.0
    t.truncated_normal_conf.std = 0.5
    v = flow.get_variable("t", shape=(20000,), initializer=t).numpy()
    assert v.min() >= 0.0 and v.max() <= 2.0 and abs(v.mean() - 1.0) < 0.02
    assert abs(v.std() - torch.nn.init.trunc_normal_(torch.empty(200000), 1.0, 0.5, 0.0, 2.0).std().item()) < 0.01
    u = ic.InitializerConf()
    u.random_uniform_int_conf.min = 3
    u.random_uniform_int_conf.max = 6
    iv = flow.get_variable("u", shape=(1000,), dtype=flow.int32, initializer=u).numpy()
    assert set(np.unique(iv)) == {3, 4, 5}
    x = ic.InitializerConf()
    x.xavier_conf.variance_norm = ic.kAverage
    xv = flow.get_variable("x", shape=(300, 200), initializer=x).numpy()
    limit = np.sqrt(3.0 / 250)  # uniform with variance 1 / fan_avg
    assert np.abs(xv).max() <= limit and np.abs(xv).max() > 0.95 * limit
    c.random_normal_conf.std = 2.0  # a oneof: the last set sub-message decides
    assert c.WhichOneof("type") == "random_normal_conf" and c.HasField("random_normal_conf")
    with pytest.raises(AttributeError, match="no field"):
        c.constant_conf.val = 1
    with pytest.raises(ValueError, match="no initializer set"):
        flow.get_variable("e", shape=(2,), initializer=ic.InitializerConf())


def test_train_pipeline_random_crop_resize_mirror(tmp_path):
    """0.x's ImageNet training input: OFRecordImageDecoderRandomCrop -> image.Resize(target_size)
    -> CoinFlip -> CropMirrorNormalize, inside a job: new crops at every call."""
    from PIL import Image
    rng = np.random.default_rng(0)
    recs = []
    for i in range(4):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (30, 40, 3)).astype(np.uint8)).save(buf, format="PNG")
        recs.append({"encoded": buf.getvalue(), "class/label": np.array([i], np.int32)})
    write_ofrecord(str(tmp_path / "part-0"), recs)

    @flow.global_function()
    def job() -> tp.Numpy:
        ofrecord = flow.data.ofrecord_reader(str(tmp_path), batch_size=4, data_part_num=1)
        image = flow.data.OFRecordImageDecoderRandomCrop(ofrecord, "encoded", color_space="RGB", seed=5)
        rsz, scale, new_size = flow.image.Resize(image, target_size=[12, 10])
        mirror = flow.random.CoinFlip(batch_size=4, seed=2)
        return flow.image.CropMirrorNormalize(rsz, mirror_blob=mirror, color_space="RGB", output_layout="NCHW",
                                              crop_h=8, crop_w=8, mean=[127.5], std=[127.5])
    a, b = job(), job()
    assert a.shape == (4, 3, 8, 8) and a.dtype == np.float32
    assert -1.0 <= a.min() and a.max() <= 1.0
    assert not np.allclose(a, b)  # the same records (4 of 4), other crops and flips


def test_function_config_train_sub_setters_refused():
    cfg = flow.FunctionConfig()
    cfg.train(True)
    assert cfg.function_desc["train"] is True
    with pytest.raises(NotImplementedError, match="train.weight_l2.*flow.regularizers"):
        cfg.train.weight_l2(1e-4)


def test_global_function_with_config_only():
    """0.x's older global_function(func_config): a job that calls minimize trains, one that does
    not predicts (no gradients, dropout off)."""
    cfg = flow.FunctionConfig()
    cfg.default_data_type(flow.float)

    @flow.global_function(cfg)
    def predict(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        return flow.nn.dropout(x * 2, rate=0.5)

    @flow.global_function(cfg)
    def train(x: tp.Numpy.Placeholder((4,))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(4,), initializer=flow.ones_initializer())
        loss = flow.math.reduce_sum(w * x)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [1.0]), momentum=0).minimize(loss)
        return loss
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(predict(x), 2 * x)
    np.testing.assert_array_equal(predict(x), 2 * x)
    assert predict.type == "predict" and train.type == "train"
    train(x)
    np.testing.assert_allclose(flow.get_all_variables()["w"].numpy(), 1 - x)  # lr 1, gradient x: it trained
