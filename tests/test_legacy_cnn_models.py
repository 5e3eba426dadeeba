"""The other three CNNs of OneFlow 0.x's benchmark scripts (issue 42), their model code written as
those scripts write it: MobileNetV2 (mobilenet_v2_model.py: layers.conv2d with groups for the
depthwise convolutions, tuple and lower-case paddings, batch norm with its regularizers,
clip_by_value as relu6, math.add shortcuts), ResNeXt (resnext_model.py: get_variable +
nn.conv2d with groups=cardinality, variance_scaling_initializer(data_format=...)) and
Inception-v3 (inception_model.py: scope.namespace'd branches of asymmetric 1x7 / 7x1 SAME
convolutions with ActivationType switches, SAME average pooling, concat(values=, axis=1)). Each
trains a few iterations, on synthetic data (decode_random) or OFRecords of our own writer, with
the loss going down, and shares its variables with a predict job."""
import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp
from oneflow.core.operator import op_conf_pb2 as op_conf_util

from test_legacy_scripts import _image_records

pytest.importorskip("google.protobuf", reason="protobuf is installed by scripts/setup.sh")


pytestmark = pytest.mark.usefixtures("fresh_job_session")


def _config():
    flow.config.gpu_device_num(0)
    cfg = flow.FunctionConfig()
    cfg.default_data_type(flow.float)
    cfg.default_logical_view(flow.scope.consistent_view())
    return cfg


def _synthetic(batch, label):
    labels = flow.data.decode_random(shape=(), dtype=flow.int32, batch_size=batch,
                                     initializer=flow.constant_initializer(label, dtype=flow.int32))
    images = flow.data.decode_random(shape=(3, 16, 16), dtype=flow.float, batch_size=batch)
    return labels, images


# ---- mobilenet_v2_model.py ----

def _mb_initializer(kind):
    if kind == "weight":
        return flow.variance_scaling_initializer(2.0, mode="fan_out", distribution="random_normal",
                                                 data_format="NCHW")
    if kind == "dense_weight":
        return flow.random_normal_initializer(0, 0.01)
    return flow.ones_initializer() if kind == "gamma" else flow.zeros_initializer()


def _mb_regularizer():
    return flow.regularizers.l2(0.00004)


def mobilenet_unit(data, num_filter, kernel=(1, 1), stride=(1, 1), pad=(0, 0), num_group=1, if_act=True,
                   prefix=""):
    conv = flow.layers.conv2d(inputs=data, filters=num_filter, kernel_size=kernel, strides=stride, padding=pad,
                              data_format="NCHW", dilation_rate=1, groups=num_group, activation=None, use_bias=False,
                              kernel_initializer=_mb_initializer("weight"),
                              bias_initializer=_mb_initializer("bias"), kernel_regularizer=_mb_regularizer(),
                              bias_regularizer=_mb_regularizer(), name=prefix)
    bn = flow.layers.batch_normalization(inputs=conv, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                                         beta_initializer=_mb_initializer("beta"),
                                         gamma_initializer=_mb_initializer("gamma"),
                                         beta_regularizer=_mb_regularizer(), gamma_regularizer=_mb_regularizer(),
                                         trainable=True, name="%s-BatchNorm" % prefix)
    return flow.math.clip_by_value(bn, 0, 6, name="%s-relu6" % prefix) if if_act else bn


def inverted_residual_unit(data, num_in_filter, num_filter, ifshortcut, stride, kernel, pad, expansion_factor,
                           prefix):
    num_expfilter = int(round(num_in_filter * expansion_factor))
    channel_expand = mobilenet_unit(data, num_expfilter, (1, 1), (1, 1), "valid", 1, True, "%s-expand" % prefix)
    bottleneck_conv = mobilenet_unit(channel_expand, num_expfilter, kernel, stride, pad, num_expfilter, True,
                                     "%s-depthwise" % prefix)
    linear_out = mobilenet_unit(bottleneck_conv, num_filter, (1, 1), (1, 1), "valid", 1, False,
                                "%s-project" % prefix)
    return flow.math.add(data, linear_out) if ifshortcut else linear_out


def mobilenet_v2(images, num_classes):
    x = mobilenet_unit(images, 8, (3, 3), (2, 2), "same", 1, True, "conv1")
    # (t, c, n, s) of MobileNetV2's table, narrowed
    in_c = 8
    for stage, (t, c, n, s) in enumerate(((1, 8, 1, 1), (4, 12, 2, 2))):
        for i in range(n):
            x = inverted_residual_unit(x, in_c, c, i > 0 and in_c == c, (s, s) if i == 0 else (1, 1), (3, 3), (1, 1),
                                       t, "stage%d-unit%d" % (stage, i))
            in_c = c
    x = mobilenet_unit(x, 32, (1, 1), (1, 1), "valid", 1, True, "conv-last")
    pool = flow.nn.avg_pool2d(x, ksize=[x.shape[2], x.shape[3]], strides=1, padding="VALID", data_format="NCHW")
    return flow.layers.dense(flow.reshape(pool, (pool.shape[0], -1)), units=num_classes, use_bias=False,
                             kernel_initializer=_mb_initializer("dense_weight"), kernel_regularizer=_mb_regularizer(),
                             name="fc7")


def test_mobilenet_v2_on_synthetic_data():
    cfg = _config()

    @flow.global_function(type="train", function_config=cfg)
    def train_job() -> tp.Numpy:
        labels, images = _synthetic(8, 3)
        logits = mobilenet_v2(images, 5)
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits, name="softmax_loss")
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0.9).minimize(loss)
        return loss

    @flow.global_function(type="predict", function_config=cfg)
    def predict_job(images: tp.Numpy.Placeholder((2, 3, 16, 16))) -> tp.Numpy:
        return flow.math.argmax(mobilenet_v2(images, 5), axis=1)

    flow.train.CheckPoint().init()
    losses = [float(train_job().mean()) for _ in range(8)]
    assert losses[-1] < 0.5 * losses[0], losses
    # (variables are made by the job's first call) the depthwise convolutions: one input channel
    # per group
    assert tuple(flow.get_all_variables()["stage1-unit0-depthwise-weight"].shape) == (32, 1, 3, 3)
    probe = np.random.default_rng(0).random((2, 3, 16, 16)).astype(np.float32)
    assert predict_job(probe).tolist() == [3, 3]


# ---- resnext_model.py ----

def _conv2d(name, input, filters, kernel_size, strides=1, padding="SAME", groups=1,  # noqa: A002
            weight_initializer=flow.variance_scaling_initializer(data_format="NCHW")):
    weight = flow.get_variable(name + "-weight", shape=(filters, int(input.shape[1] / groups), kernel_size, kernel_size),
                               dtype=input.dtype, initializer=weight_initializer, trainable=True)
    return flow.nn.conv2d(input, weight, strides, padding, "NCHW", 1, groups=groups, name=name)


def _batch_norm(inputs, name):
    # (momentum 0.9, not the script's 0.997: the predict job reads the moving statistics, which
    # 0.997 moves by 7 % in this test's 24 steps)
    return flow.layers.batch_normalization(inputs=inputs, axis=1, momentum=0.9, epsilon=1.001e-5, center=True,
                                           scale=True, trainable=True, name=name)


def resnext_block(x, name, filters, cardinality, stride):
    a = flow.nn.relu(_batch_norm(_conv2d(name + "_conv1", x, filters, 1), name + "_bn1"))
    b = flow.nn.relu(_batch_norm(_conv2d(name + "_conv2", a, filters, 3, stride, groups=cardinality), name + "_bn2"))
    c = _batch_norm(_conv2d(name + "_conv3", b, 2 * filters, 1), name + "_bn3")
    shortcut = x
    if stride != 1 or x.shape[1] != 2 * filters:
        shortcut = _batch_norm(_conv2d(name + "_shortcut", x, 2 * filters, 1, stride), name + "_shortcut_bn")
    return flow.nn.relu(flow.math.add(c, shortcut))


def resnext(images, num_classes, cardinality=4):
    x = flow.nn.relu(_batch_norm(_conv2d("conv1", images, 8, 3), "bn1"))
    x = flow.nn.max_pool2d(x, ksize=3, strides=2, padding="SAME", data_format="NCHW")
    x = resnext_block(x, "stage1_0", 8, cardinality, 1)
    x = resnext_block(x, "stage2_0", 16, cardinality, 2)
    x = flow.nn.avg_pool2d(x, ksize=x.shape[2], strides=1, padding="VALID", data_format="NCHW")
    return flow.layers.dense(flow.reshape(x, (x.shape[0], -1)), num_classes, use_bias=True,
                             kernel_initializer=flow.random_normal_initializer(stddev=0.01), name="fc")


@pytest.mark.slow(seconds=10)  # (~9 s; MobileNetV2 above is the unmarked case of the same path)
def test_resnext_on_ofrecords(tmp_path):
    data_dir = str(tmp_path / "train")
    _image_records(data_dir, parts=1)
    cfg = _config()

    @flow.global_function(type="train", function_config=cfg)
    def train_job() -> tp.Numpy:
        ofrecord = flow.data.ofrecord_reader(data_dir, batch_size=4, data_part_num=1, part_name_suffix_length=-1,
                                             random_shuffle=False)
        labels = flow.data.OFRecordRawDecoder(ofrecord, "class/label", shape=(), dtype=flow.int32)
        image = flow.data.OFRecordImageDecoder(ofrecord, "encoded", color_space="RGB")
        rsz = flow.image.Resize(image, target_size=[16, 16], channels=3)[0]
        images = flow.image.CropMirrorNormalize(rsz, color_space="RGB", mean=[123.68, 116.78, 103.94],
                                                std=[58.4, 57.1, 57.4], output_dtype=flow.float)
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, resnext(images, 2))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.05]), momentum=0.9).minimize(loss)
        return loss

    @flow.global_function(type="predict", function_config=cfg)
    def predict_job(images: tp.Numpy.Placeholder((4, 3, 16, 16))) -> tp.Numpy:
        return flow.math.argmax(resnext(images, 2), axis=1)

    flow.train.CheckPoint().init()
    losses = [float(train_job().mean()) for _ in range(24)]
    assert np.mean(losses[-4:]) < 0.5 * np.mean(losses[:4]), losses
    # the grouped 3x3 convolutions: filters / cardinality input channels per group
    assert tuple(flow.get_all_variables()["stage2_0_conv2-weight"].shape) == (16, 4, 3, 3)
    mean, std = np.array([123.68, 116.78, 103.94]), np.array([58.4, 57.1, 57.4])
    red, blue = (np.array([210.0, 30, 30]) - mean) / std, (np.array([30.0, 30, 210]) - mean) / std
    probe = np.stack([np.broadcast_to(c[:, None, None], (3, 16, 16)) for c in (red, blue, blue, red)])
    assert predict_job(probe.astype(np.float32)).tolist() == [0, 1, 1, 0]  # red-ish is class 0


# ---- inception_model.py ----

def conv2d_layer(name, input, filters, kernel_size=3, strides=1, padding="SAME", data_format="NCHW",  # noqa: A002
                 dilation_rate=1, activation=op_conf_util.kRelu, use_bias=True,
                 weight_initializer=flow.glorot_uniform_initializer(), bias_initializer=flow.constant_initializer()):
    kernel_size = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    weight = flow.get_variable(name + "-weight", shape=(filters, input.shape[1]) + kernel_size, dtype=input.dtype,
                               initializer=weight_initializer)
    output = flow.nn.conv2d(input, weight, strides, padding, data_format, dilation_rate, name=name)
    if use_bias:
        bias = flow.get_variable(name + "-bias", shape=(filters,), dtype=input.dtype, initializer=bias_initializer)
        output = flow.nn.bias_add(output, bias, data_format)
    if activation is not None:
        if activation == op_conf_util.kRelu:
            output = flow.math.relu(output)
        elif activation == op_conf_util.kSigmoid:
            output = flow.math.sigmoid(output)
        else:
            raise NotImplementedError
    return output


def inception_a(in_blob, index):
    with flow.scope.namespace("mixed_{}".format(index)):
        with flow.scope.namespace("branch1x1"):
            branch1x1 = conv2d_layer("conv0", in_blob, filters=8, kernel_size=1)
        with flow.scope.namespace("branch7x7"):
            b = conv2d_layer("conv0", in_blob, filters=4, kernel_size=1)
            b = conv2d_layer("conv1", b, filters=4, kernel_size=[1, 7])
            branch7x7 = conv2d_layer("conv2", b, filters=8, kernel_size=[7, 1])
        with flow.scope.namespace("branch3x3dbl"):
            b = conv2d_layer("conv0", in_blob, filters=4, kernel_size=1)
            branch3x3dbl = conv2d_layer("conv1", b, filters=8, kernel_size=3)
        with flow.scope.namespace("branch_pool"):
            p = flow.nn.avg_pool2d(in_blob, ksize=3, strides=1, padding="SAME", data_format="NCHW", name="pool")
            branch_pool = conv2d_layer("conv", p, filters=4, kernel_size=[1, 1])
        return flow.concat(values=[branch1x1, branch7x7, branch3x3dbl, branch_pool], axis=1, name="concat")


def inception_v3(images, num_classes):
    with flow.scope.namespace("InceptionV3"):
        x = conv2d_layer("conv0", images, filters=8, kernel_size=3, strides=2, padding="VALID")
        x = flow.nn.max_pool2d(x, ksize=3, strides=1, padding="VALID", data_format="NCHW", name="pool0")
        x = inception_a(x, 0)
        x = inception_a(x, 1)
        x = flow.nn.avg_pool2d(x, ksize=x.shape[2], strides=1, padding="VALID", data_format="NCHW", name="pool3")
        x = flow.nn.dropout(flow.reshape(x, [x.shape[0], -1]), rate=0.1)
        return flow.layers.dense(inputs=x, units=num_classes, activation=None, use_bias=True,
                                 kernel_initializer=flow.truncated_normal(0.816496580927726),
                                 bias_initializer=flow.constant_initializer(), trainable=True, name="fc1")


@pytest.mark.slow(seconds=6)  # (~6 s; MobileNetV2 above is the unmarked case)
def test_inception_v3_on_synthetic_data():
    cfg = _config()

    @flow.global_function(type="train", function_config=cfg)
    def train_job() -> tp.Numpy:
        labels, images = _synthetic(8, 1)
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, inception_v3(images, 3))
        flow.optimizer.Adam(flow.optimizer.PiecewiseConstantScheduler([], [0.01])).minimize(loss)
        return loss

    @flow.global_function(type="predict", function_config=cfg)
    def predict_job(images: tp.Numpy.Placeholder((2, 3, 16, 16))) -> tp.Numpy:
        return flow.math.argmax(inception_v3(images, 3), axis=1)

    flow.train.CheckPoint().init()
    losses = [float(train_job().mean()) for _ in range(8)]
    assert losses[-1] < 0.5 * losses[0], losses
    variables = flow.get_all_variables()
    # names from the namespaces; the asymmetric kernels as declared
    assert tuple(variables["InceptionV3-mixed_0-branch7x7-conv1-weight"].shape) == (4, 4, 1, 7)
    assert tuple(variables["InceptionV3-mixed_1-branch1x1-conv0-weight"].shape) == (8, 28, 1, 1)  # (the concat's 28)
    probe = np.random.default_rng(0).random((2, 3, 16, 16)).astype(np.float32)
    assert predict_job(probe).tolist() == [1, 1]
