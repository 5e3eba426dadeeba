"""The examples of spec 002 (oneflow.nn) for activations, losses, dropout, embedding, padding and
resampling, run as written there (int32 class targets, 0-d reduced losses), against the values
the spec prints (4 decimals, as printed)."""

import numpy as np
import pytest

from harness import flow, oneflow_only

pytestmark = oneflow_only  # the spec's calls (flow.Tensor(ndarray), PixelShufflev2, ...) are OneFlow's


def close(t, want, atol=1e-4):
    got = t.numpy()
    np.testing.assert_allclose(got, np.asarray(want, dtype=np.float64), atol=atol, rtol=0)


def test_activations():
    x = flow.tensor([-0.5, 0, 0.5], dtype=flow.float32)
    close(flow.nn.CELU(alpha=0.5)(x), [-0.3161, 0.0000, 0.5000])
    close(flow.nn.ELU()(x), [-0.3935, 0.0000, 0.5000])
    close(flow.nn.GELU()(x), [-0.1543, 0.0000, 0.3457])
    close(flow.nn.Hardsigmoid()(x), [0.4167, 0.5000, 0.5833])
    close(flow.nn.Hardswish()(x), [-0.2083, 0.0000, 0.2917])
    close(flow.nn.LogSigmoid()(flow.Tensor(np.array([-0.5, 0, 0.5]).astype(np.float32))),
          [-0.9741, -0.6931, -0.4741])
    close(flow.nn.ReLU6()(flow.Tensor(np.array([-0.5, 0, 0.5]).astype(np.float32))), [0.0, 0.0, 0.5])
    close(flow.nn.Softplus()(flow.Tensor(np.array([-0.5, 0, 0.5]).astype(np.float32))), [0.4741, 0.6931, 0.9741])
    one23 = flow.Tensor(np.array([1, 2, 3]).astype(np.float32))
    close(flow.nn.Mish()(one23), [0.8651, 1.9440, 2.9865])
    close(flow.nn.SELU()(one23), [1.0507, 2.1014, 3.1521])
    close(flow.nn.SiLU()(one23), [0.7311, 1.7616, 2.8577])
    close(flow.nn.Softsign()(one23), [0.5000, 0.6667, 0.7500])
    close(flow.nn.Hardshrink(lambd=0.5)(flow.Tensor(np.array([-1.1, 0, 0.2, 0.5]).astype(np.float32))),
          [-1.1, 0.0, 0.0, 0.0])
    close(flow.nn.Softshrink(lambd=0.5)(flow.Tensor(np.array([-1, 0, 0.2, 0.5]).astype(np.float32))),
          [-0.5, 0.0, 0.0, 0.0])
    close(flow.nn.Hardtanh()(flow.tensor([0.2, 0.3, 3.0, 4.0], dtype=flow.float32)), [0.2, 0.3, 1.0, 1.0])
    close(flow.nn.LeakyReLU(0.1)(flow.Tensor(np.array([0.2, 0.3, 3.0, 4.0]))), [0.2, 0.3, 3.0, 4.0])
    close(flow.nn.Threshold(threshold=0.5, value=0.2)(flow.Tensor(np.array([-1, 0, 0.5, 1]).astype(np.float32))),
          [0.2, 0.2, 0.2, 1.0])
    glu = flow.nn.GLU()(flow.tensor([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=flow.float32))
    close(glu, [[0.9526, 1.9640], [4.9954, 5.9980]])
    prelu = flow.nn.PReLU()(flow.tensor(np.asarray([[[[1, -2], [3, 4]]]]), dtype=flow.float32))
    np.testing.assert_allclose(prelu.detach().numpy(), [[[[1.0, -0.5], [3.0, 4.0]]]])
    relu = flow.nn.ReLU()(flow.tensor([1, -2, 3], dtype=flow.float32))
    assert repr(relu) == "tensor([1., 0., 3.], dtype=oneflow.float32)"


def test_gelu_repr_and_dtypes():
    out = flow.nn.GELU()(flow.tensor([-0.5, 0, 0.5], dtype=flow.float32))
    assert repr(out) == "tensor([-0.1543,  0.0000,  0.3457], dtype=oneflow.float32)"


def test_bce_loss():
    inp = flow.tensor([[1.2, 0.2, -0.3], [0.7, 0.6, -2]], dtype=flow.float32)
    target = flow.tensor([[0, 1, 0], [1, 0, 1]], dtype=flow.float32)
    weight = flow.tensor([[2, 2, 2], [2, 2, 2]], dtype=flow.float32)
    s = flow.nn.Sigmoid()(inp)
    close(flow.nn.BCELoss(weight, reduction="none")(s, target), [[2.9266, 1.1963, 1.1087], [0.8064, 2.0750, 4.2539]])
    out = flow.nn.BCELoss(weight, reduction="sum")(s, target)
    assert repr(out) == "tensor(12.3668, dtype=oneflow.float32)"
    close(flow.nn.BCELoss(weight, reduction="mean")(s, target), 2.0611)
    close(flow.nn.BCELoss()(s, target), 1.0306)


def test_bce_with_logits_loss():
    inp = flow.tensor([[1.2, 0.2, -0.3], [0.7, 0.6, -2], [0.7, 0.6, -2]], dtype=flow.float32)
    target = flow.tensor([[0, 1, 0], [1, 0, 1], [1, 0, 1]], dtype=flow.float32)
    weight = flow.tensor([[2, 2, 2], [2, 2, 2], [2, 2, 2]], dtype=flow.float32)
    pos_weight = flow.tensor([1.2, 1.3, 1.4], dtype=flow.float32)
    m = flow.nn.BCEWithLogitsLoss(weight=weight, pos_weight=pos_weight, reduction="none")
    close(m(inp, target), [[2.9266, 1.5552, 1.1087], [0.9676, 2.0750, 5.9554], [0.9676, 2.0750, 5.9554]])
    close(flow.nn.BCEWithLogitsLoss(weight=weight, pos_weight=pos_weight, reduction="mean")(inp, target), 2.6207)
    close(flow.nn.BCEWithLogitsLoss(weight=weight, pos_weight=pos_weight, reduction="sum")(inp, target), 23.5865)


def test_ctc_loss():
    log_probs = flow.tensor(
        [
            [[-1.1031, -0.7998, -1.5200], [-0.9808, -1.1363, -1.1908]],
            [[-1.2258, -1.0665, -1.0153], [-1.1135, -1.2331, -0.9671]],
            [[-1.3348, -0.6611, -1.5118], [-0.9823, -1.2355, -1.0941]],
            [[-1.3850, -1.3273, -0.7247], [-0.8235, -1.4783, -1.0994]],
            [[-0.9049, -0.8867, -1.6962], [-1.4938, -1.3630, -0.6547]],
        ], dtype=flow.float32)
    targets = flow.tensor([[1, 2, 2], [1, 2, 2]], dtype=flow.int32)
    input_lengths = flow.tensor([5, 5], dtype=flow.int32)
    target_lengths = flow.tensor([3, 3], dtype=flow.int32)
    out = flow.nn.CTCLoss()(log_probs, targets, input_lengths, target_lengths)
    assert repr(out) == "tensor(1.1376, dtype=oneflow.float32)"
    close(flow.nn.CTCLoss(blank=0, reduction="sum")(log_probs, targets, input_lengths, target_lengths), 6.8257)


def test_combined_margin_loss():
    x = flow.tensor([[-0.7027179, 0.0230609], [-0.02721931, -0.16056311], [-0.4565852, -0.64471215]],
                    dtype=flow.float32)
    label = flow.tensor([0, 1, 1], dtype=flow.int32)
    out = flow.nn.CombinedMarginLoss(0.3, 0.5, 0.4)(x, label)
    close(out, [[-0.0423, 0.0231], [-0.0272, 0.1237], [-0.4566, -0.0204]])


def test_cross_entropy_and_nll():
    inp = flow.tensor([[-0.1664078, -1.7256707, -0.14690138], [-0.21474946, 0.53737473, 0.99684894],
                       [-1.135804, -0.50371903, 0.7645404]], dtype=flow.float32)
    target = flow.tensor([0, 1, 2], dtype=flow.int32)
    close(flow.nn.CrossEntropyLoss(reduction="none")(inp, target), [0.8020, 1.1167, 0.3583])
    assert repr(flow.nn.CrossEntropyLoss(reduction="sum")(inp, target)) == "tensor(2.2769, dtype=oneflow.float32)"
    close(flow.nn.CrossEntropyLoss(reduction="mean")(inp, target), 0.7590)
    target = flow.tensor(np.array([0, 1, 2]), dtype=flow.int32)
    close(flow.nn.NLLLoss(reduction="none")(inp, target), [0.1664, -0.5374, -0.7645])
    close(flow.nn.NLLLoss(reduction="sum")(inp, target), -1.1355)
    close(flow.nn.NLLLoss(reduction="mean")(inp, target), -0.3785)


def test_kl_div_loss():
    inp = flow.tensor([-0.9021705, 0.08798598, 1.04686249], dtype=flow.float32)
    target = flow.tensor([1.22386942, -0.89729659, 0.01615712], dtype=flow.float32)
    close(flow.nn.KLDivLoss(reduction="none", log_target=False)(inp, target), [1.3514, 0.0000, -0.0836])
    close(flow.nn.KLDivLoss(reduction="mean", log_target=False)(inp, target), 0.4226)
    close(flow.nn.KLDivLoss(reduction="sum", log_target=True)(inp, target), 5.7801)


def test_l1_mse_smooth_l1_margin_triplet():
    inp = flow.tensor([[1, 1, 1], [2, 2, 2], [7, 7, 7]], dtype=flow.float32)
    target = flow.tensor([[4, 4, 4], [4, 4, 4], [4, 4, 4]], dtype=flow.float32)
    close(flow.nn.L1Loss(reduction="none")(inp, target), [[3, 3, 3], [2, 2, 2], [3, 3, 3]])
    close(flow.nn.L1Loss(reduction="mean")(inp, target), 2.6667)
    assert repr(flow.nn.L1Loss(reduction="sum")(inp, target)) == "tensor(24., dtype=oneflow.float32)"
    inp = flow.tensor([[-0.02557137, 0.03101675, 1.37493674], [0.25599439, -1.08372561, -0.21006816]],
                      dtype=flow.float32)
    target = flow.tensor([[-1.53105064, -0.68137555, 0.5931354], [-0.49158347, 0.93673637, 0.1324141]],
                         dtype=flow.float32)
    close(flow.nn.MSELoss(reduction="none")(inp, target), [[2.2665, 0.5075, 0.6112], [0.5589, 4.0823, 0.1173]])
    close(flow.nn.MSELoss(reduction="mean")(inp, target), 1.3573)
    close(flow.nn.MSELoss(reduction="sum")(inp, target), 8.1436)
    x = flow.tensor(np.array([0.1, 0.4, 0.3, 0.5, 0.9]).astype(np.float32), dtype=flow.float32)
    y = flow.tensor(np.array([0.3, 0.9, 2.5, 0.4, 0.3]).astype(np.float32), dtype=flow.float32)
    close(flow.nn.SmoothL1Loss(reduction="none")(x, y), [0.0200, 0.1250, 1.7000, 0.0050, 0.1800])
    close(flow.nn.SmoothL1Loss(reduction="mean")(x, y), 0.4060)
    close(flow.nn.SmoothL1Loss(reduction="sum")(x, y), 2.0300)
    x1 = flow.tensor(np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]), dtype=flow.float32)
    x2 = flow.tensor(np.array([[2, 2, 2], [2, 2, 2], [2, 2, 2]]), dtype=flow.float32)
    t = flow.tensor(np.array([[1, -1, 1], [-1, 1, -1], [1, 1, 1]]), dtype=flow.float32)
    close(flow.nn.MarginRankingLoss(margin=1.0, reduction="none")(x1, x2, t), [[2, 1, 0], [3, 0, 5], [0, 0, 0]])
    close(flow.nn.MarginRankingLoss(margin=0.3, reduction="sum")(x1, x2, t), 8.2)
    close(flow.nn.MarginRankingLoss(margin=10, reduction="mean")(x1, x2, t), 8.3333)
    triplet = flow.nn.TripletMarginLoss(margin=1.0, p=2)
    anchor = np.array([[1, -1, 1], [-1, 1, -1], [1, 1, 1]])
    positive = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    negative = np.array([[2, 2, 2], [2, 2, 2], [2, 2, 2]])
    out = triplet(flow.Tensor(anchor), flow.Tensor(positive), flow.Tensor(negative))
    assert repr(out) == "tensor(6.2971, dtype=oneflow.float32)"


def test_softmax_logsoftmax_modules():
    m = flow.nn.Softmax(dim=2)
    x = flow.tensor([[[-0.46716809, 0.40112534, 0.61984003], [-1.31244969, -0.42528763, 1.47953856]]],
                    dtype=flow.float32)
    close(m(x), [[[0.1575, 0.3754, 0.4671], [0.0507, 0.1230, 0.8263]]])
    m = flow.nn.LogSoftmax(dim=1)
    x = flow.Tensor(np.array([[0.4296, -1.1957, 2.5463], [1.2552, -1.5747, 0.6923]]))
    close(m(x), [[-2.2513, -3.8766, -0.1346], [-0.4877, -3.3176, -1.0506]])


def test_dropout_p0_embedding():
    m = flow.nn.Dropout(p=0)
    x = flow.tensor([[-0.7797, 0.2264, 0.2458, 0.4163], [0.4299, 0.3626, -0.4892, 0.4141],
                     [-1.4115, 1.2183, -0.5503, 0.6520]], dtype=flow.float32)
    close(m(x), x.numpy())
    assert m.p == 0 and m.inplace is False
    indices = flow.tensor([[1, 2, 4, 5], [4, 3, 2, 9]], dtype=flow.int)
    y = flow.nn.Embedding(10, 3)(indices)
    assert y.shape == flow.Size([2, 4, 3])


def test_padding():
    inp = flow.arange(8, dtype=flow.float32).reshape(2, 2, 2)
    out = flow.nn.ConstantPad1d(padding=[1, 2], value=9.9999)(inp)
    close(out, [[[9.9999, 0, 1, 9.9999, 9.9999], [9.9999, 2, 3, 9.9999, 9.9999]],
                [[9.9999, 4, 5, 9.9999, 9.9999], [9.9999, 6, 7, 9.9999, 9.9999]]])
    inp = flow.arange(18, dtype=flow.float32).reshape((1, 2, 3, 3))
    out = flow.nn.ZeroPad2d(2)(inp)
    assert out.shape == flow.Size([1, 2, 7, 7])
    np.testing.assert_array_equal(out.numpy()[0, 0, 2:5, 2:5], np.arange(9).reshape(3, 3))
    out = flow.nn.ZeroPad2d((1, 2, 2, 0))(inp)
    assert out.shape == flow.Size([1, 2, 5, 6])
    np.testing.assert_array_equal(out.numpy()[0, 1, 2:, 1:4], np.arange(9, 18).reshape(3, 3))
    inp = flow.arange(8, dtype=flow.int32).reshape(1, 1, 2, 2, 2)
    out = flow.nn.ConstantPad3d(padding=1, value=9)(inp)
    assert out.dtype == flow.int32 and out.shape == flow.Size([1, 1, 4, 4, 4])
    assert out.numpy()[0, 0, 1].tolist() == [[9, 9, 9, 9], [9, 0, 1, 9], [9, 2, 3, 9], [9, 9, 9, 9]]
    inp = flow.tensor(np.arange(18).reshape((1, 2, 3, 3)).astype(np.float32))
    out = flow.nn.ReflectionPad2d((2, 2, 1, 1))(inp)
    assert out.numpy()[0, 0].tolist() == [[5, 4, 3, 4, 5, 4, 3], [2, 1, 0, 1, 2, 1, 0], [5, 4, 3, 4, 5, 4, 3],
                                          [8, 7, 6, 7, 8, 7, 6], [5, 4, 3, 4, 5, 4, 3]]
    out = flow.nn.ReplicationPad2d((2, 2, 1, 1))(inp)
    assert out.shape == flow.Size([1, 2, 5, 7])
    assert out.numpy()[0, 1].tolist() == [[9, 9, 9, 10, 11, 11, 11], [9, 9, 9, 10, 11, 11, 11],
                                          [12, 12, 12, 13, 14, 14, 14], [15, 15, 15, 16, 17, 17, 17],
                                          [15, 15, 15, 16, 17, 17, 17]]


def test_pixel_shuffle_and_upsampling():
    m = flow.nn.PixelShuffle(upscale_factor=2)
    assert m(flow.Tensor(np.random.randn(3, 4, 5, 5))).shape == flow.Size([3, 1, 10, 10])
    m = flow.nn.PixelShuffle(h_upscale_factor=3, w_upscale_factor=4)
    assert m(flow.Tensor(np.random.randn(1, 24, 2, 2))).shape == flow.Size([1, 2, 6, 8])
    # The spec moves these inputs to "cuda" and prints device='cuda:0'; a build or machine without
    # CUDA runs them on the CPU (no device in the repr).
    dev = "cuda" if flow.cuda.is_available() else "cpu"
    tail = ", device='cuda:0'" if dev == "cuda" else ""
    inp = flow.tensor(np.arange(1, 5).reshape((1, 1, 2, 2)), dtype=flow.float32).to(dev)

    def printed(t, first, last):  # the spec's output, its "..." standing for the rows between
        # (line breaks as spaces: the dtype may move to a line of its own past 80 columns, the
        # layout rule of PyTorch's printer that OneFlow's follows)
        text = " ".join(line.strip() for line in repr(t).splitlines())
        assert text.startswith(first) and text.endswith(last + tail + ", dtype=oneflow.float32)"), repr(t)

    out = flow.nn.Upsample(scale_factor=2.0, mode="nearest")(inp)
    assert out.cpu().numpy()[0, 0].tolist() == [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]
    printed(out, "tensor([[[[1., 1., 2., 2.],", "[3., 3., 4., 4.]]]]")
    out = flow.nn.UpsamplingNearest2d(scale_factor=2.0)(inp)
    assert out.cpu().numpy()[0, 0, 0].tolist() == [1, 1, 2, 2]
    printed(out, "tensor([[[[1., 1., 2., 2.],", "[3., 3., 4., 4.]]]]")
    out = flow.nn.UpsamplingBilinear2d(scale_factor=2.0)(inp)
    close(out[0, 0, 0].cpu(), [1.0000, 1.3333, 1.6667, 2.0000])
    close(out[0, 0, 3].cpu(), [3.0000, 3.3333, 3.6667, 4.0000])
    printed(out, "tensor([[[[1.0000, 1.3333, 1.6667, 2.0000],", "[3.0000, 3.3333, 3.6667, 4.0000]]]]")


@pytest.mark.parametrize("name", ["mish", "softplus", "gelu", "selu", "silu", "softsign"])
def test_top_level_and_methods(name):
    x = flow.tensor([-0.5, 0.0, 0.5, 2.0])
    want = getattr(flow.nn.functional, name)(x).numpy()
    np.testing.assert_allclose(getattr(flow, name)(x).numpy(), want)
    np.testing.assert_allclose(getattr(x, name)().numpy(), want)
