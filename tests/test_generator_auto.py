"""Upstream OneFlow's generator surface (issue 37): `flow.Generator(device="auto")` (Note [Auto
generator], src/core/generator.h) and `generator=` of the dropouts (`F.dropout`, `nn.Dropout`,
upstream's `flow._C.dropout` form), with upstream's `addend` of dropout."""
import copy
import pickle

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.nn.functional as F


def test_auto_generator_seeds_like_a_cpu_generator():
    auto, cpu = flow.Generator(device="auto"), flow.Generator(device="cpu")
    assert auto.initial_seed() == cpu.initial_seed()
    assert auto.device == "auto"
    assert auto.manual_seed(3) is auto and auto.initial_seed() == 3
    s = auto.seed()
    assert s == auto.initial_seed()
    # one Philox state: the same draws as a CPU generator of the same seed and offset
    auto.manual_seed(11)
    cpu.manual_seed(11)
    a = flow.randn(4, 5, generator=auto)
    b = flow.randn(4, 5, generator=cpu)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert auto.get_offset() == cpu.get_offset() > 0
    np.testing.assert_array_equal(auto.get_state().numpy(), cpu.get_state().numpy())


def test_auto_generator_state_round_trips_and_copies_stay_auto():
    g = flow.Generator(device="auto").manual_seed(5)
    state = g.get_state()
    first = flow.rand(6, generator=g)
    g.set_state(state)
    np.testing.assert_array_equal(flow.rand(6, generator=g).numpy(), first.numpy())
    for c in (copy.deepcopy(g), pickle.loads(pickle.dumps(g)), g.clone_state()):
        assert c.device == "auto" and c is not g
        np.testing.assert_array_equal(c.get_state().numpy(), g.get_state().numpy())
        np.testing.assert_array_equal(flow.rand(3, generator=c).numpy(), flow.rand(3, generator=copy.deepcopy(g)).numpy())


def test_generator_device_errors():
    with pytest.raises(RuntimeError):
        flow.Generator(device="invalid")
    flow.Generator(device="cpu:1000")  # a CPU index is not checked (as upstream)
    with pytest.raises(TypeError, match="generator="):
        F.dropout(flow.ones(3), 0.5, generator=3)


def _mask(out):
    return (out.numpy() != 0)


def test_dropout_generator_draws_reproducibly():
    x = flow.ones(64, 33)
    outs = []
    for _ in range(2):
        g = flow.Generator().manual_seed(7)
        outs.append(F.dropout(x, 0.4, generator=g))
    np.testing.assert_array_equal(outs[0].numpy(), outs[1].numpy())
    # the generator's stream, not the default one: reseeding the default changes nothing
    flow.manual_seed(0)
    a = F.dropout(x, 0.4, generator=flow.Generator().manual_seed(7))
    flow.manual_seed(1)
    np.testing.assert_array_equal(a.numpy(), outs[0].numpy())
    other = F.dropout(x, 0.4, generator=flow.Generator().manual_seed(8))
    assert (_mask(other) != _mask(a)).any()
    # the kept values are scaled by 1 / (1 - p), as PyTorch's
    kept = a.numpy()[_mask(a)]
    np.testing.assert_allclose(kept, np.full_like(kept, 1 / 0.6), rtol=1e-6)
    # an auto generator draws the same mask as a CPU one of the same seed
    b = F.dropout(x, 0.4, generator=flow.Generator(device="auto").manual_seed(7))
    np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_alpha_dropout", "feature_dropout"])
def test_every_dropout_op_takes_a_generator(name):
    fn = getattr(flow._C, name)
    x = flow.randn(4, 6, 5)
    a = fn(x, 0.5, True, generator=flow.Generator().manual_seed(2))
    b = fn(x, 0.5, True, generator=flow.Generator().manual_seed(2))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    y = x.clone()
    getattr(flow._C, name + "_")(y, 0.5, True, generator=flow.Generator().manual_seed(2))
    np.testing.assert_array_equal(y.numpy(), a.numpy())


def test_nn_dropout_generator_and_upstream_c_form():
    x = flow.ones(10, 10)
    m = flow.nn.Dropout(p=0.3, generator=flow.Generator().manual_seed(4))
    got = m(x)
    want = flow._C.dropout(x, p=0.3, training=True, generator=flow.Generator().manual_seed(4))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # upstream's form: (input, p, training, inplace, generator)
    y = x.clone()
    flow._C.dropout(y, 0.3, True, True, flow.Generator().manual_seed(4))
    np.testing.assert_array_equal(y.numpy(), want.numpy())
    m.eval()
    np.testing.assert_array_equal(m(x).numpy(), x.numpy())


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_dropout_addend_against_torch(p):
    rng = np.random.default_rng(0)
    xn, an = rng.standard_normal((4, 7)), rng.standard_normal((4, 7))
    x, a = flow.tensor(xn, requires_grad=True), flow.tensor(an, requires_grad=True)
    tx, ta = torch.tensor(xn, requires_grad=True), torch.tensor(an, requires_grad=True)
    out = flow.nn.Dropout(p=p)(x, a)
    tout = torch.nn.functional.dropout(tx, p) + ta
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy())
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
