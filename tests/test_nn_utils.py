"""nn.utils against torch.nn.utils: clip_grad_norm_ (every norm type, non-finite handling),
clip_grad_value_, parameters_to_vector / vector_to_parameters."""
import math
import warnings

import numpy as np
import pytest
import torch

from harness import flow
from nn_util import arr, close, make_mlp, twins


def grads_pair(shapes, scale=1.0, dtype=np.float32):
    """Parameters with gradients, the same in flow and torch."""
    fs, ts = [], []
    for shape in shapes:
        a, g = arr(*shape, dtype=dtype), arr(*shape, dtype=dtype) * scale
        f, t = flow.nn.Parameter(flow.tensor(a)), torch.nn.Parameter(torch.tensor(a))
        f.grad, t.grad = flow.tensor(g), torch.tensor(g)
        fs.append(f)
        ts.append(t)
    return fs, ts


SHAPES = [(3, 4), (5,), (2, 2, 2)]


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, 0.5, math.inf, -math.inf, 0, "inf"])
@pytest.mark.parametrize("max_norm", [0.1, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    fs, ts = grads_pair(SHAPES)
    nf = flow.nn.utils.clip_grad_norm_(fs, max_norm, norm_type)
    nt = torch.nn.utils.clip_grad_norm_(ts, max_norm, norm_type)
    assert tuple(nf.shape) == () and nf.dtype == flow.float32
    close(nf, nt, rtol=1e-5)
    for f, t in zip(fs, ts):
        close(f.grad, t.grad, rtol=1e-5)


def test_clip_grad_norm_float64_and_generator_input():
    fs, ts = grads_pair(SHAPES, scale=10.0, dtype=np.float64)
    nf = flow.nn.utils.clip_grad_norm_((p for p in fs), 1.0)
    nt = torch.nn.utils.clip_grad_norm_((p for p in ts), 1.0)
    assert nf.dtype == flow.float64
    close(nf, nt, rtol=1e-12)
    for f, t in zip(fs, ts):
        close(f.grad, t.grad, rtol=1e-12)


def test_clip_grad_norm_single_tensor_and_spec_example():
    # The example of the OneFlow documentation.
    x1 = flow.tensor([[2, 3, 4], [1.5, 2.6, 3.7]], dtype=flow.float32, requires_grad=True)
    flow.nn.ReLU()(x1).sum().backward()
    norm1 = flow.nn.utils.clip_grad_norm_(x1, 0.6, 1.0)
    assert abs(norm1.item() - 6.0) < 1e-6
    close(x1.grad, np.full((2, 3), 0.1))
    x2 = flow.tensor([[-2, -3, -4], [2.5, 0, 3.2]], dtype=flow.float32, requires_grad=True)
    flow.atan(x2).sum().backward()
    norm2 = flow.nn.utils.clip_grad_norm_(x2, 0.5)
    assert abs(norm2.item() - 1.0394) < 1e-4
    close(x2.grad, [[0.0962, 0.0481, 0.0283], [0.0663, 0.4810, 0.0428]], atol=1e-4)


def test_clip_grad_norm_skips_parameters_without_grad():
    fs, ts = grads_pair(SHAPES)
    fs[1].grad, ts[1].grad = None, None
    close(flow.nn.utils.clip_grad_norm_(fs, 0.5), torch.nn.utils.clip_grad_norm_(ts, 0.5))
    assert fs[1].grad is None
    for f, t in zip(fs, ts):
        if t.grad is not None:
            close(f.grad, t.grad)


def test_clip_grad_norm_of_nothing():
    p = flow.nn.Parameter(flow.ones(2))
    n = flow.nn.utils.clip_grad_norm_([p], 1.0)
    assert n.item() == 0.0 and tuple(n.shape) == ()
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        flow.nn.utils.clip_grad_norm_((q for q in []), 1.0)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_clip_grad_norm_non_finite(bad):
    def make(lib):
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.tensor([1.0, bad, 2.0])
        return p

    with pytest.raises(RuntimeError) as te:
        torch.nn.utils.clip_grad_norm_(make(torch), 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as fe:
        flow.nn.utils.clip_grad_norm_(make(flow), 1.0, error_if_nonfinite=True)
    assert str(fe.value) == str(te.value)
    pf, pt = make(flow), make(torch)
    nf = flow.nn.utils.clip_grad_norm_(pf, 1.0)
    nt = torch.nn.utils.clip_grad_norm_(pt, 1.0)
    assert (math.isnan(nf.item()) and math.isnan(nt.item())) or nf.item() == nt.item()
    np.testing.assert_array_equal(pf.grad.numpy(), pt.grad.numpy())


@pytest.mark.parametrize("foreach", [True, False])
def test_clip_grad_norm_foreach_flag_gives_the_same_values(foreach):
    fs, ts = grads_pair(SHAPES)
    close(flow.nn.utils.clip_grad_norm_(fs, 1.0, foreach=foreach),
          torch.nn.utils.clip_grad_norm_(ts, 1.0, foreach=foreach))
    flow.nn.utils.clip_grad_value_(fs, 0.05, foreach=foreach)
    torch.nn.utils.clip_grad_value_(ts, 0.05, foreach=foreach)
    for f, t in zip(fs, ts):
        close(f.grad, t.grad)


def test_clip_grad_norm_on_a_trained_model():
    fm, tm = twins(make_mlp)
    x = arr(8, 4)
    (fm(flow.tensor(x)) ** 2).sum().backward()
    (tm(torch.tensor(x)) ** 2).sum().backward()
    close(flow.nn.utils.clip_grad_norm_(fm.parameters(), 0.3),
          torch.nn.utils.clip_grad_norm_(tm.parameters(), 0.3))
    for (n, f), t in zip(fm.named_parameters(), tm.parameters()):
        close(f.grad, t.grad)
    assert not any(p.grad.requires_grad for p in fm.parameters())


def test_get_total_norm_and_clip_grads_with_norm():
    fs, ts = grads_pair(SHAPES)
    total_f = flow.nn.utils.get_total_norm([p.grad for p in fs], 3.0)
    total_t = torch.nn.utils.get_total_norm([p.grad for p in ts], 3.0)
    close(total_f, total_t)
    flow.nn.utils.clip_grads_with_norm_(fs, 0.2, total_f)
    torch.nn.utils.clip_grads_with_norm_(ts, 0.2, total_t)
    for f, t in zip(fs, ts):
        close(f.grad, t.grad)


def test_clip_grad_norm_deprecated_alias_warns():
    fs, _ = grads_pair(SHAPES)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        flow.nn.utils.clip_grad_norm(fs, 1.0)


@pytest.mark.parametrize("clip_value", [0.1, 0.5, 2])
def test_clip_grad_value_matches_torch(clip_value):
    fs, ts = grads_pair(SHAPES)
    assert flow.nn.utils.clip_grad_value_(fs, clip_value) is None
    torch.nn.utils.clip_grad_value_(ts, clip_value)
    for f, t in zip(fs, ts):
        close(f.grad, t.grad)
    single = flow.nn.Parameter(flow.ones(2))
    single.grad = flow.tensor([-3.0, 0.05])
    flow.nn.utils.clip_grad_value_(single, 0.1)
    close(single.grad, [-0.1, 0.05])


def test_parameters_to_vector_and_back():
    fm, tm = twins(make_mlp)
    vf = flow.nn.utils.parameters_to_vector(fm.parameters())
    vt = torch.nn.utils.parameters_to_vector(tm.parameters())
    close(vf, vt)
    assert vf.requires_grad  # a differentiable function of the parameters, as in torch
    new = arr(*vt.shape)
    weight = fm[0].weight
    flow.nn.utils.vector_to_parameters(flow.tensor(new), fm.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tm.parameters())
    assert fm[0].weight is weight and type(weight) is flow.nn.Parameter
    for f, t in zip(fm.parameters(), tm.parameters()):
        close(f, t)
    x = arr(3, 4)
    close(fm(flow.tensor(x)), tm(torch.tensor(x)))


def test_vector_to_parameters_shares_the_vector_memory():
    p = flow.nn.Parameter(flow.zeros(2, 2))
    vec = flow.arange(4.0)
    flow.nn.utils.vector_to_parameters(vec, [p])
    assert p._shares_storage(vec) and p.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_vector_to_parameters_needs_a_tensor():
    with pytest.raises(TypeError) as te:
        torch.nn.utils.vector_to_parameters([1.0], [torch.nn.Parameter(torch.ones(1))])
    with pytest.raises(TypeError) as fe:
        flow.nn.utils.vector_to_parameters([1.0], [flow.nn.Parameter(flow.ones(1))])
    assert str(fe.value) == str(te.value).replace("torch.", "oneflow.")


def test_utils_warn_nothing_in_the_normal_case():
    fs, _ = grads_pair(SHAPES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flow.nn.utils.clip_grad_norm_(fs, 1.0)
        flow.nn.utils.clip_grad_value_(fs, 1.0)
