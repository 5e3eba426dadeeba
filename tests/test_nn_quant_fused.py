"""nn quantization (INVENTORY D.8) and fused modules (D.7): against PyTorch where it has the same
operation (fake_quantize_per_tensor_affine / per_channel, BatchNorm + ReLU, Linear stacks) and
against numpy renderings of OneFlow's formulas elsewhere."""
import numpy as np
import pytest
import torch

import oneflow as flow


def _x(shape=(4, 3, 5), seed=0):
    return np.random.RandomState(seed).uniform(-1.3, 0.7, shape).astype(np.float32)


@pytest.mark.parametrize("bit", [8, 4])
@pytest.mark.parametrize("scheme", ["symmetric", "affine"])
@pytest.mark.parametrize("per_layer", [True, False])
def test_observer_and_fake_quantization_match_torch(bit, scheme, per_layer):
    x = _x()
    obs = flow.nn.MinMaxObserver("google", bit, scheme, per_layer)
    scale, zp = obs(flow.tensor(x))
    flat = x.reshape(x.shape[0], -1)
    mx, mn = (x.max(), x.min()) if per_layer else (flat.max(1), flat.min(1))
    if scheme == "symmetric":
        want_s, want_z = np.maximum(np.abs(mx), np.abs(mn)) / (2 ** (bit - 1) - 1), np.zeros_like(mx)
        qmin, qmax = -(2 ** (bit - 1)), 2 ** (bit - 1) - 1
    else:
        want_s = (mx - mn) / (2 ** bit - 1)
        want_z = -np.round(mn / want_s)
        qmin, qmax = 0, 2 ** bit - 1
    np.testing.assert_allclose(scale.numpy(), np.reshape(want_s, -1), rtol=1e-6)
    np.testing.assert_array_equal(zp.numpy(), np.reshape(want_z, -1))
    t = flow.tensor(x, requires_grad=True)
    out = flow.nn.FakeQuantization("google", bit, scheme)(t, scale, zp)
    tx = torch.from_numpy(x)
    if per_layer:
        ref = torch.fake_quantize_per_tensor_affine(tx, float(scale.numpy()[0]), int(zp.numpy()[0]), qmin, qmax)
    else:
        ref = torch.fake_quantize_per_channel_affine(tx, torch.from_numpy(scale.numpy()),
                                                     torch.from_numpy(zp.numpy()).int(), 0, qmin, qmax)
    np.testing.assert_allclose(out.detach().numpy(), ref.numpy(), rtol=1e-6, atol=1e-7)
    out.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.ones_like(x))  # straight through
    q = flow.nn.Quantization("google", bit, scheme)(flow.tensor(x), scale, zp).numpy()
    s = np.reshape(scale.numpy(), (-1, 1, 1)) if not per_layer else scale.numpy()
    z = np.reshape(zp.numpy(), (-1, 1, 1)) if not per_layer else zp.numpy()
    want_q = np.clip(np.round(x / s + (z if scheme == "affine" else 0)), qmin, qmax)
    np.testing.assert_array_equal(q, want_q)


def test_cambricon_formula():
    x = _x(seed=1)
    shift, zp = flow.nn.MinMaxObserver("cambricon", 8, "symmetric")(flow.tensor(x))
    want_shift = np.floor(np.log2(max(abs(x.max()), abs(x.min())))) - 6
    assert shift.numpy()[0] == want_shift and zp.numpy()[0] == 0
    out = flow.nn.FakeQuantization("cambricon", 8, "symmetric")(flow.tensor(x), shift, zp).numpy()
    scale = 2.0 ** want_shift
    np.testing.assert_allclose(out, np.clip(np.round(x / scale), -128, 127) * scale, rtol=1e-6)


def test_moving_average_observer():
    obs = flow.nn.MovingAverageMinMaxObserver(training=True, stop_update_after_iters=2, momentum=0.9,
                                              quantization_scheme="affine")
    a, b, c = _x(seed=2), _x(seed=3), _x(seed=4)
    s0, _ = obs(flow.tensor(a), flow.tensor([0]))
    np.testing.assert_allclose(s0.numpy(), [(a.max() - a.min()) / 255], rtol=1e-6)  # first: the batch's
    s1, z1 = obs(flow.tensor(b), flow.tensor([1]))
    mx = a.max() * 0.9 + b.max() * 0.1
    mn = a.min() * 0.9 + b.min() * 0.1
    np.testing.assert_allclose(s1.numpy(), [(mx - mn) / 255], rtol=1e-5)
    np.testing.assert_allclose(z1.numpy(), [-np.round(mn / ((mx - mn) / 255))])
    s2, _ = obs(flow.tensor(c), flow.tensor([2]))  # past stop_update_after_iters: frozen
    np.testing.assert_array_equal(s2.numpy(), s1.numpy())
    obs.reset_running_stats()
    with pytest.raises(RuntimeError, match="no statistics"):
        obs.eval()
        obs(flow.tensor(c), flow.tensor([0]))


def test_quantization_argument_errors():
    with pytest.raises(ValueError, match="quantization_formula"):
        flow.nn.MinMaxObserver("tflite")
    with pytest.raises(ValueError, match="quantization_bit"):
        flow.nn.FakeQuantization(quantization_bit=33)  # up to 32 as OneFlow's kernels
    with pytest.raises(ValueError, match="quantization_scheme"):
        flow.nn.Quantization(quantization_scheme="asym")
    with pytest.raises(ValueError, match="cambricon"):
        flow.nn.MinMaxObserver("cambricon", 8, "affine")


@pytest.mark.parametrize("cls,tcls,shape", [
    ("FusedBatchNorm1d", "BatchNorm1d", (6, 4)), ("FusedBatchNorm2d", "BatchNorm2d", (2, 4, 3, 3)),
    ("FusedBatchNorm3d", "BatchNorm3d", (2, 4, 2, 3, 2))])
def test_fused_batch_norm_matches_torch(cls, tcls, shape):
    m = getattr(flow.nn, cls)(4)
    tm = getattr(torch.nn, tcls)(4)
    x = _x(shape, seed=5)
    add = _x(shape, seed=6)
    fx, fa = flow.tensor(x, requires_grad=True), flow.tensor(add, requires_grad=True)
    tx, ta = torch.tensor(x, requires_grad=True), torch.tensor(add, requires_grad=True)
    out, tout = m(fx, fa), torch.relu(tm(tx) + ta)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = _x(shape, seed=7)
    out.backward(flow.tensor(g))
    tout.backward(torch.from_numpy(g))
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(m.running_mean.numpy(), tm.running_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(m(flow.tensor(x)).detach().numpy(), torch.relu(tm(tx)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)  # no addend
    with pytest.raises(RuntimeError, match="addend"):
        m(flow.tensor(x), flow.ones(1))


@pytest.mark.parametrize("skip", [False, True])
def test_fused_mlp_matches_torch(skip):
    m = flow.nn.FusedMLP(6, [8, 5], 3, skip_final_activation=skip)
    assert len(m.weights()) == 3 and tuple(m.weight(1).shape) == (5, 8) and tuple(m.bias(2).shape) == (3,)
    layers = []
    for i, (w, b) in enumerate(zip(m.weights(), m.biases())):
        lin = torch.nn.Linear(w.shape[1], w.shape[0])
        lin.load_state_dict({"weight": torch.from_numpy(w.detach().numpy().copy()),
                             "bias": torch.from_numpy(b.detach().numpy().copy())})
        layers.append(lin)
        if i < 2 or not skip:
            layers.append(torch.nn.ReLU())
    tm = torch.nn.Sequential(*layers)
    x = _x((4, 6), seed=8)
    out = m(flow.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), tm(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    tm(torch.from_numpy(x)).sum().backward()
    np.testing.assert_allclose(m.weight(0).grad.numpy(), tm[0].weight.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert "hidden_features=[8, 5]" in repr(m)
    bound = 1 / np.sqrt(6)
    assert np.abs(m.weight(0).detach().numpy()).max() <= bound + 1e-6  # nn.Linear's initialization
