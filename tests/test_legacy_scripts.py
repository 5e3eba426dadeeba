"""OneFlow 0.x scripts as their users wrote them (issue 42): a ResNet-style benchmark on
`flow.data.decode_random` synthetic data, an AlexNet-style one and a ResNet-50-style
of_cnn_train_val.py loop (asynchronous: async_get metric callbacks, a tp.Callback eval job) on
OFRecords made by our own writer, both set up through `flow.config` / `flow.env`, trained a few iterations with the loss
going down, saved with `flow.checkpoint` and loaded back."""
import io
import os

import numpy as np
import pytest
from PIL import Image

import oneflow as flow
import oneflow.typing as tp
from oneflow.nn.modules.ofrecord import write_ofrecord

pytest.importorskip("google.protobuf", reason="protobuf is installed by scripts/setup.sh")


pytestmark = pytest.mark.usefixtures("fresh_job_session")


# ---- the model code of the 0.x benchmarks (model_util / resnet_model / alexnet_model style) ----

def conv2d_affine(x, name, filters, kernel, stride, act=True):
    w = flow.get_variable(name + "-weight", shape=(filters, x.shape[1], kernel, kernel),
                          initializer=flow.variance_scaling_initializer(2, "fan_in", "random_normal",
                                                                        data_format="NCHW"))
    out = flow.nn.conv2d(x, w, stride, "SAME", data_format="NCHW")
    if act:
        return flow.layers.batch_normalization_relu(out, axis=1, momentum=0.9, epsilon=1e-5, name=name + "_bn")
    return flow.layers.batch_normalization(out, axis=1, momentum=0.9, epsilon=1e-5, name=name + "_bn")


def residual_block(x, name, filters, stride):
    a = conv2d_affine(x, name + "_branch2a", filters, 3, stride)
    b = flow.nn.conv2d(a, flow.get_variable(name + "_branch2b-weight", shape=(filters, filters, 3, 3)), 1, "SAME")
    shortcut = x if stride == 1 and x.shape[1] == filters else conv2d_affine(x, name + "_branch1", filters, 1,
                                                                             stride, act=False)
    return flow.layers.batch_normalization_add_relu(b, shortcut, axis=1, momentum=0.9, epsilon=1e-5,
                                                    name=name + "_branch2b_bn")


def resnet(images):
    x = conv2d_affine(images, "conv1", 8, 3, 1)
    x = residual_block(x, "res2_0", 8, 1)
    x = residual_block(x, "res3_0", 16, 2)
    x = flow.nn.avg_pool2d(x, ksize=x.shape[2], strides=1, padding="VALID", data_format="NCHW")
    return flow.layers.dense(flow.reshape(x, (x.shape[0], -1)), 10, use_bias=True,
                             kernel_initializer=flow.random_normal_initializer(stddev=0.01), name="fc1001")


def _benchmark_config():
    flow.config.gpu_device_num(flow.cuda.device_count() if flow.cuda.is_available() else 0)
    flow.config.enable_legacy_model_io(True)
    flow.config.collective_boxing.nccl_fusion_threshold_mb(16)
    func_config = flow.FunctionConfig()
    func_config.default_distribute_strategy(flow.scope.consistent_view())
    func_config.default_data_type(flow.float)
    return func_config


def test_resnet_benchmark_on_synthetic_data(tmp_path):
    flow.env.log_dir(str(tmp_path / "log"))
    func_config = _benchmark_config()

    @flow.global_function(func_config)  # 0.x's older form: a train job because it calls minimize
    def TrainNet():
        labels = flow.data.decode_random(shape=(), dtype=flow.int32, batch_size=8,
                                         initializer=flow.zeros_initializer(flow.int32))
        images = flow.data.decode_random(shape=(3, 16, 16), dtype=flow.float, batch_size=8)
        logits = resnet(images)
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits, name="softmax_loss")
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0.9,
                           loss_scale_policy=flow.optimizer.loss_scale.dynamic_loss_scale(increment_period=2000)
                           ).minimize(loss)
        return loss

    check_point = flow.train.CheckPoint()
    check_point.init()
    losses = []
    for _ in range(6):
        TrainNet().async_get(lambda out: losses.append(float(out.numpy().mean())))
    flow.sync_default_session()  # 0.x's benchmarks end their loop waiting for the queued jobs
    assert os.path.isdir(tmp_path / "log")
    assert len(losses) == 6
    assert losses[-1] < 0.5 * losses[0], losses  # every label is 0: the net learns it
    # the synthetic images are new every call (the op draws at each call of the job)
    variables = flow.get_all_variables()
    assert "conv1_bn-moving_mean" in variables and not variables["conv1_bn-moving_mean"].requires_grad
    assert float(variables["conv1_bn-moving_variance"].sum()) != 8.0  # the moving statistics moved

    # 0.x model I/O: flow.checkpoint.save / get + flow.load_variables
    flow.checkpoint.save(str(tmp_path / "snap"))
    saved = {k: v.numpy().copy() for k, v in variables.items()}
    TrainNet().get()
    assert not np.allclose(variables["fc1001-weight"].numpy(), saved["fc1001-weight"])
    flow.load_variables(flow.checkpoint.get(str(tmp_path / "snap")))
    for k, v in flow.get_all_variables().items():
        np.testing.assert_array_equal(v.numpy(), saved[k])


def _image_records(folder, n_per_class=8, parts=2):
    """Red-ish images labelled 0, blue-ish labelled 1 (JPEG-encoded, 20x24), in `parts` files."""
    rng = np.random.default_rng(0)
    recs = []
    for i in range(2 * n_per_class):
        label = i % 2
        img = rng.integers(0, 60, size=(20, 24, 3)).astype(np.uint8)
        img[..., 0 if label == 0 else 2] += 180
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="PNG")
        recs.append({"encoded": buf.getvalue(), "class/label": np.array([label], np.int32)})
    os.makedirs(folder, exist_ok=True)
    for p in range(parts):
        write_ofrecord(os.path.join(folder, f"part-{p}"), recs[p::parts])
    return recs


def alexnet(images):
    def conv(x, name, filters, k, s):
        w = flow.get_variable(name + "-weight", shape=(filters, x.shape[1], k, k))
        b = flow.get_variable(name + "-bias", shape=(filters,), initializer=flow.constant_initializer())
        return flow.math.relu(flow.nn.bias_add(flow.nn.conv2d(x, w, s, "SAME"), b))
    x = conv(images, "conv1", 8, 3, 1)
    x = flow.nn.max_pool2d(x, 2, 2, "VALID")
    x = conv(x, "conv2", 8, 3, 1)
    x = flow.nn.max_pool2d(x, 2, 2, "VALID")
    x = flow.reshape(x, (x.shape[0], -1))
    x = flow.layers.dense(x, 16, activation=flow.math.relu, kernel_initializer=flow.glorot_uniform_initializer(),
                          name="fc1")
    x = flow.nn.dropout(x, rate=0.1)
    return flow.layers.dense(x, 2, kernel_initializer=flow.glorot_uniform_initializer(), name="fc2")


def test_alexnet_on_ofrecords(tmp_path):
    flow.manual_seed(0)  # (the initializers and dropout draw from the default generator: the order tests ran in changed the draws)
    data_dir = str(tmp_path / "train")
    _image_records(data_dir)
    func_config = _benchmark_config()
    seen_labels = []

    @flow.global_function(type="train", function_config=func_config)
    def TrainNet() -> tp.Numpy:
        ofrecord = flow.data.ofrecord_reader(data_dir, batch_size=4, data_part_num=2, part_name_suffix_length=-1,
                                             random_shuffle=False, name="decode")
        labels = flow.data.ofrecord_raw_decoder(ofrecord, "class/label", shape=(), dtype=flow.int32)
        image = flow.data.ofrecord_image_decoder(ofrecord, "encoded", color_space="RGB")
        rsz = flow.image.resize(image, resize_x=16, resize_y=16, color_space="RGB")
        mirror = flow.random.CoinFlip(batch_size=4, seed=1)
        normal = flow.image.crop_mirror_normalize(rsz, mirror_blob=mirror, color_space="RGB", output_layout="NCHW",
                                                  crop_h=16, crop_w=16, mean=[123.68, 116.78, 103.94],
                                                  std=[58.4, 57.1, 57.4], output_dtype=flow.float)
        seen_labels.append(labels.numpy().tolist())
        logits = alexnet(normal)
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits, name="softmax_loss")
        lr = flow.optimizer.PolynomialScheduler(0.05, steps=12, end_learning_rate=0.005, power=1.0)
        flow.optimizer.SGD(lr, momentum=0.9).minimize(loss)
        return loss

    flow.train.CheckPoint().init()
    losses = [float(TrainNet().mean()) for _ in range(12)]
    # the reader goes through part-0 then part-1 (8 records each: 2 batches each) and over again
    assert seen_labels[0] == [0, 0, 0, 0] and seen_labels[2] == [1, 1, 1, 1]
    assert seen_labels[4] == seen_labels[0]
    assert np.mean(losses[-4:]) < 0.5 * np.mean(losses[:4]), losses


def test_vgg_style_script_through_single_client(tmp_path):
    """`from oneflow.compatible import single_client as flow`, as the 0.x benchmarks import it: a
    VGG-style net of flow.layers.conv2d on synthetic data, a predict job sharing its variables,
    and a train.CheckPoint round trip."""
    from oneflow.compatible import single_client as sc

    sc.config.gpu_device_num(0)
    sc.config.enable_legacy_model_io(True)
    cfg = sc.FunctionConfig()
    cfg.default_data_type(sc.float)

    def vgg(images):
        x = images
        for i, filters in enumerate((4, 8)):
            x = sc.layers.conv2d(x, filters, kernel_size=3, padding="SAME", activation=sc.math.relu,
                                 kernel_initializer=sc.variance_scaling_initializer(2, "fan_in", "random_normal",
                                                                                      data_format="NCHW"),
                                 name=f"conv{i}")
            x = sc.nn.max_pool2d(x, 2, 2, "VALID")
        x = sc.reshape(x, (x.shape[0], -1))
        # vgg_model.py builds its initializers as messages
        from oneflow.core.job import initializer_conf_pb2 as initializer_conf_util
        kernel_initializer = initializer_conf_util.InitializerConf()
        kernel_initializer.truncated_normal_conf.std = 0.1
        bias_initializer = initializer_conf_util.InitializerConf()
        bias_initializer.constant_conf.value = 0.0
        return sc.layers.dense(x, 4, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                               name="fc")

    @sc.global_function(type="train", function_config=cfg)
    def train_job() -> tp.Numpy:
        labels = sc.data.decode_random(shape=(), dtype=sc.int32, batch_size=6,
                                       initializer=sc.constant_initializer(2, dtype=sc.int32))
        images = sc.data.decode_random(shape=(3, 8, 8), dtype=sc.float, batch_size=6)
        loss = sc.nn.sparse_softmax_cross_entropy_with_logits(labels, vgg(images))
        sc.optimizer.Adam(sc.optimizer.PolynomialScheduler(0.01, steps=10, end_learning_rate=0.001)).minimize(loss)
        return loss

    @sc.global_function(type="predict", function_config=cfg)
    def predict_job(images: tp.Numpy.Placeholder((2, 3, 8, 8))) -> tp.Numpy:
        return sc.math.argmax(vgg(images), axis=1)

    sc.train.CheckPoint().init()
    losses = [float(train_job().mean()) for _ in range(10)]
    assert losses[-1] < 0.5 * losses[0], losses
    probe = np.random.default_rng(0).random((2, 3, 8, 8)).astype(np.float32)
    assert predict_job(probe).tolist() == [2, 2]  # every label was 2
    sc.train.CheckPoint().save(str(tmp_path / "ck"))
    before = predict_job(probe)
    sc.train.CheckPoint().init()
    sc.train.CheckPoint().load(str(tmp_path / "ck"))
    np.testing.assert_array_equal(predict_job(probe), before)


def bottleneck_block(x, name, filters, stride):
    """resnet_model.py's ResNet-50 block: 1x1 reduce, 3x3 (strided), 1x1 expand (x4), projection
    shortcut when the shape changes, batch norm + add + relu at the end."""
    a = conv2d_affine(x, name + "_branch2a", filters, 1, 1)
    b = conv2d_affine(a, name + "_branch2b", filters, 3, stride)
    c = flow.nn.conv2d(b, flow.get_variable(name + "_branch2c-weight", shape=(4 * filters, filters, 1, 1)), 1,
                       "SAME")
    shortcut = x if stride == 1 and x.shape[1] == 4 * filters else conv2d_affine(x, name + "_branch1",
                                                                                 4 * filters, 1, stride, act=False)
    return flow.layers.batch_normalization_add_relu(c, shortcut, axis=1, momentum=0.9, epsilon=1e-5,
                                                    name=name + "_branch2c_bn")


def resnet50_style(images):
    x = conv2d_affine(images, "conv1", 8, 3, 1)
    x = flow.nn.max_pool2d(x, 2, 2, "SAME")
    x = bottleneck_block(x, "res2_0", 4, 1)
    x = bottleneck_block(x, "res3_0", 8, 2)
    x = flow.nn.avg_pool2d(x, ksize=x.shape[2], strides=1, padding="VALID", data_format="NCHW")
    return flow.layers.dense(flow.reshape(x, (x.shape[0], -1)), 2, use_bias=True,
                             kernel_initializer=flow.random_normal_initializer(stddev=0.01), name="fc1001")


def test_resnet50_train_val_script_asynchronous(tmp_path):
    """of_cnn_train_val.py's loop: `TrainNet().async_get(metric_cb)` returns at once, the metric
    callbacks run in order after each step on the job queue, the eval job's results come through
    a tp.Callback; OFRecords of our writer read with the random-crop decoder, Resize, CoinFlip
    and CropMirrorNormalize (ofrecord_util.load_imagenet_for_training); get_train_config's
    FunctionConfig (the cuDNN search switch acts, the others are recorded)."""
    from typing import Dict
    data_dir = str(tmp_path / "train")
    _image_records(data_dir, parts=1)  # both classes in every batch (batch norm sees both)
    flow.config.gpu_device_num(0)
    cfg = flow.function_config()
    cfg.default_logical_view(flow.scope.consistent_view())
    cfg.default_data_type(flow.float)
    cfg.cudnn_conv_heuristic_search_algo(False)
    cfg.prune_parallel_cast_ops(True)
    cfg.enable_inplace(True)

    def load_imagenet_for_training(batch):
        ofrecord = flow.data.ofrecord_reader(data_dir, batch_size=batch, data_part_num=1,
                                             part_name_suffix_length=-1, random_shuffle=False)
        label = flow.data.OFRecordRawDecoder(ofrecord, "class/label", shape=(), dtype=flow.int32)
        image = flow.data.OFRecordImageDecoderRandomCrop(ofrecord, "encoded", color_space="RGB", seed=3,
                                                         random_area=(0.5, 1.0))
        rsz = flow.image.Resize(image, target_size=[16, 16], channels=3)[0]
        rng = flow.random.CoinFlip(batch_size=batch, seed=5)
        normal = flow.image.CropMirrorNormalize(rsz, mirror_blob=rng, color_space="RGB", mean=[123.68, 116.78, 103.94],
                                                std=[58.4, 57.1, 57.4], output_dtype=flow.float)
        return label, normal

    @flow.global_function("train", cfg)
    def TrainNet():  # noqa: N802 - the script's name
        labels, images = load_imagenet_for_training(4)
        logits = resnet50_style(images)
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits, name="softmax_loss")
        predictions = flow.nn.softmax(logits)
        outputs = {"loss": loss, "predictions": predictions, "labels": labels}
        lr = flow.optimizer.CosineScheduler(0.02, 24, warmup=flow.optimizer.warmup.linear(2, 0.1))
        flow.optimizer.SGD(lr, momentum=0.9).minimize(loss)
        return outputs

    @flow.global_function("predict", cfg)
    def InferenceNet(images: tp.Numpy.Placeholder((4, 3, 16, 16))) -> tp.Callback[Dict[str, tp.Numpy]]:  # noqa: N802
        return {"predictions": flow.nn.softmax(resnet50_style(images))}

    flow.train.CheckPoint().init()
    metrics = []

    def metric_cb(step):
        def callback(outputs):
            metrics.append((step, float(outputs["loss"].numpy().mean()), outputs["predictions"].numpy().shape,
                            outputs["labels"].numpy().tolist()))
        return callback

    for step in range(24):
        TrainNet().async_get(metric_cb(step))
    evals = []
    mean, std = np.array([123.68, 116.78, 103.94]), np.array([58.4, 57.1, 57.4])
    red, blue = (np.array([210.0, 30, 30]) - mean) / std, (np.array([30.0, 30, 210]) - mean) / std
    probe = np.stack([np.broadcast_to(c[:, None, None], (3, 16, 16)) for c in (red, blue, blue, red)])
    probe = probe.astype(np.float32)
    InferenceNet(probe)(evals.append)
    flow.sync_default_session()
    assert [m[0] for m in metrics] == list(range(24))
    assert all(m[2] == (4, 2) for m in metrics)
    assert metrics[0][3] == [0, 1, 0, 1] and metrics[4][3] == metrics[0][3]  # the records in order, again
    losses = [m[1] for m in metrics]
    assert np.mean(losses[-4:]) < 0.5 * np.mean(losses[:4]), losses
    assert evals[0]["predictions"].shape == (4, 2)
    np.testing.assert_allclose(evals[0]["predictions"].sum(axis=1), np.ones(4), rtol=1e-5)
    assert evals[0]["predictions"].argmax(axis=1).tolist() == [0, 1, 1, 0]  # red-ish is class 0


def test_a_script_resumes_from_a_snapshot_loaded_before_its_first_call(tmp_path):
    """of_cnn_train_val.py's `--model_load_dir`: the jobs are defined, then `CheckPoint().load(dir)`
    (or `flow.load_variables(flow.checkpoint.get(dir))`), then the loop; 0.x had made the jobs'
    variables when its session started, so the first step trains from the snapshot's values
    (Note [Loaded before the first call], _legacy/variables.py)."""
    rng = np.random.default_rng(0)
    images = rng.random((4, 3, 8, 8)).astype(np.float32)
    labels = np.array([0, 1, 1, 0], np.int32)

    def define():
        @flow.global_function(type="train", function_config=_benchmark_config())
        def train(x: tp.Numpy.Placeholder((4, 3, 8, 8)), y: tp.Numpy.Placeholder((4,), dtype=flow.int32)) -> tp.Numpy:
            logits = resnet(x)  # (batch norm: its moving statistics are variables of the snapshot too)
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
            flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.05]), momentum=0).minimize(loss)
            return loss
        return train

    train = define()
    flow.train.CheckPoint().init()
    for _ in range(3):
        train(images, labels)
    flow.train.CheckPoint().save(str(tmp_path / "snap"))
    expected = [float(train(images, labels).mean()) for _ in range(2)]

    for load in (lambda: flow.train.CheckPoint().load(str(tmp_path / "snap")),
                 lambda: flow.load_variables(flow.checkpoint.get(str(tmp_path / "snap")))):
        flow.clear_default_session()
        train = define()
        load()
        assert flow.get_all_variables() == {}  # (made by the first call, from the snapshot)
        np.testing.assert_allclose([float(train(images, labels).mean()) for _ in range(2)], expected, rtol=1e-5)

    # init() after a load: the initializers again; a snapshot without a variable: load's error
    flow.clear_default_session()
    train = define()
    flow.train.CheckPoint().load(str(tmp_path / "snap"))
    flow.train.CheckPoint().init()
    assert abs(float(train(images, labels).mean()) - expected[0]) > 1e-3
    flow.clear_default_session()
    (tmp_path / "partial").mkdir()
    flow.train.CheckPoint().load(str(tmp_path / "partial"))
    train = define()
    with pytest.raises(RuntimeError, match="has no values for"):
        train(images, labels)
