"""Behaviours that upstream OneFlow's test suite exercises (tools/upstream_suite.py,
docs/upstream_suite.md), each compared with PyTorch 2.13: the second and third rounds of fixes."""
import numpy as np
import pytest
import torch

import oneflow as flow


def _pair(shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


@pytest.mark.parametrize("dims", [([1, 2, 0], [2, 1, 0]), ([0], [0]), ([0, 3], [0, 3])])
def test_tensordot_contracts_a_size_one_dim_against_any_size(dims):
    # x's dim 0 has size 1, y's size 4: PyTorch sums y over that dim (broadcast), so does ours.
    a, ta = _pair((1, 3, 2, 5), 0)
    b, tb = _pair((4, 2, 3, 5), 1)
    z, tz = flow.tensordot(a, b, dims=dims), torch.tensordot(ta, tb, dims=dims)
    assert tuple(z.shape) == tuple(tz.shape)
    np.testing.assert_allclose(z.numpy(), tz.detach().numpy(), rtol=1e-5, atol=1e-5)
    w = np.random.default_rng(2).standard_normal(tuple(tz.shape)).astype(np.float32)
    (z * flow.tensor(w)).sum().backward()
    (tz * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_tensordot_mismatched_sizes_still_raise():
    with pytest.raises(RuntimeError, match=r"tensordot\(\): contracted dimensions need to match"):
        flow.tensordot(flow.ones(2, 3), flow.ones(3, 3), dims=([0], [0]))


@pytest.mark.parametrize("name", ["new_zeros", "new_ones"])
def test_module_level_new_zeros_ones_match_tensor_methods(name):
    x, tx = flow.ones(2, 3, dtype=flow.float64), torch.ones(2, 3, dtype=torch.float64)
    # size omitted: x's shape (OneFlow's default); given: PyTorch's Tensor.new_* result
    got, want = getattr(flow, name)(x), getattr(tx, name)(tuple(tx.shape))
    assert got.dtype == flow.float64 and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = getattr(flow, name)(x, (4,), dtype=flow.int64, requires_grad=False)
    want = getattr(tx, name)((4,), dtype=torch.int64)
    assert got.dtype == flow.int64
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_module_level_new_full_and_new_empty():
    x, tx = flow.zeros(3, dtype=flow.float32), torch.zeros(3)
    np.testing.assert_array_equal(flow.new_full(x, (2, 2), 1.5).numpy(), tx.new_full((2, 2), 1.5).numpy())
    e = flow.new_empty(x, 5)
    assert tuple(e.shape) == (5,) and e.dtype == flow.float32
    with pytest.raises(TypeError, match=r"new_zeros\(\): argument 'input'"):
        flow.new_zeros([1, 2])
    with pytest.raises(TypeError, match=r"new_full\(\): size must be"):
        flow.new_full(x, "3", 1.0)
    with pytest.raises(ValueError, match=r"new_ones\(\): give device"):
        flow.new_ones(x, device="cpu", placement=flow.placement("cpu", ranks=[0]))
    with pytest.raises(ValueError, match=r"new_zeros\(\): a local input needs both placement and sbp"):
        flow.new_zeros(x, sbp=flow.sbp.broadcast)


def test_module_level_new_functions_keep_a_global_layout():
    p = flow.placement("cpu", ranks=[0])
    g = flow.ones(4, 3, placement=p, sbp=flow.sbp.split(0))
    for y in (flow.new_zeros(g), flow.new_ones(g), flow.new_empty(g, (4, 3)), flow.new_full(g, (4, 3), 2.0)):
        assert y.is_global and y.placement == p and y.sbp == (flow.sbp.split(0),)
        assert tuple(y.shape) == (4, 3)
    np.testing.assert_array_equal(flow.new_full(g, (4, 3), 2.0).to_local().numpy(), np.full((4, 3), 2.0, np.float32))
    y = flow.new_zeros(flow.ones(2), (2,), placement=p, sbp=flow.sbp.broadcast)
    assert y.is_global and y.sbp == (flow.sbp.broadcast,)


def test_global_cpu_is_itself_on_a_cpu_placement():
    # PyTorch's .cpu() of a CPU tensor returns the tensor itself; a global tensor on a CPU
    # placement likewise (its gradient flows as through the identity).
    p = flow.placement("cpu", ranks=[0])
    g = flow.ones(4, 3, placement=p, sbp=flow.sbp.split(0), requires_grad=True)
    t = torch.ones(4, 3, requires_grad=True)
    assert g.cpu() is g and t.cpu() is t
    (g.cpu() * 3).sum().backward()
    (t.cpu() * 3).sum().backward()
    np.testing.assert_array_equal(g.grad.to_local().numpy(), t.grad.numpy())


def test_full_reads_a_global_one_element_tensor_as_its_value():
    # PyTorch's full(size, fill) takes a one-element tensor as the fill; a global one (OneFlow's
    # flow.full(shape, global_scalar, placement=, sbp=)) is read as its logical value.
    p = flow.placement("cpu", ranks=[0])
    fill = flow.tensor(1.5, placement=p, sbp=[flow.sbp.broadcast])
    want = torch.full((4, 2), torch.tensor(1.5)).numpy()
    g = flow.full((4, 2), fill, placement=p, sbp=flow.sbp.split(0))
    assert g.is_global and g.sbp == (flow.sbp.split(0),)
    np.testing.assert_array_equal(g.to_local().numpy(), want)
    np.testing.assert_array_equal(flow.full((4, 2), fill).numpy(), want)


def test_module_level_split_max_min_take_global_tensors():
    # flow.split / max / min are hand-written bindings: a global argument goes to the dispatcher
    # as in the generated ones (it raised "expected a local Tensor" before); values as PyTorch's.
    x = np.random.default_rng(3).standard_normal((8, 16, 6)).astype(np.float32)
    t = torch.tensor(x)
    p = flow.placement("cpu", ranks=[0])
    g = flow.tensor(x).to_global(placement=p, sbp=flow.sbp.split(0))
    for got, want in ((flow.split(g, [6, 3, 4, 3], dim=1), torch.split(t, [6, 3, 4, 3], dim=1)),
                      (flow.split(g, 5, 1), torch.split(t, 5, 1))):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert a.is_global
            np.testing.assert_array_equal(a.to_global(sbp=flow.sbp.broadcast).to_local().numpy(), b.numpy())
    full = lambda y: y.to_global(sbp=flow.sbp.broadcast).to_local().numpy()  # noqa: E731
    v, tv = flow.max(g, dim=2, keepdim=True), torch.max(t, dim=2, keepdim=True)
    np.testing.assert_array_equal(full(v.values), tv.values.numpy())
    np.testing.assert_array_equal(full(v.indices), tv.indices.numpy())
    np.testing.assert_array_equal(full(flow.min(g)), torch.min(t).numpy())
    np.testing.assert_array_equal(full(flow.max(g, g * 2)), torch.max(t, t * 2).numpy())


def test_tensor_new_methods_take_placement_and_sbp():
    # OneFlow's Tensor.new_full / new_zeros / ... (placement=, sbp=): a global tensor of that
    # layout; the values as PyTorch's Tensor.new_* (local).
    p = flow.placement("cpu", ranks=[0])
    x, tx = flow.ones(8, 8), torch.ones(8, 8)
    y = x.new_full((8, 8), 3, placement=p, sbp=flow.sbp.split(1))
    assert y.is_global and y.sbp == (flow.sbp.split(1),) and y.placement == p and y.dtype == flow.float32
    np.testing.assert_array_equal(y.to_local().numpy(), tx.new_full((8, 8), 3).numpy())
    z = x.new_zeros(2, 3, placement=p, sbp=flow.sbp.broadcast)
    np.testing.assert_array_equal(z.to_local().numpy(), tx.new_zeros(2, 3).numpy())
    np.testing.assert_array_equal(x.new_full((2,), 1.5).numpy(), tx.new_full((2,), 1.5).numpy())
    with pytest.raises(TypeError, match=r"ones\(\): a global tensor needs both placement and sbp"):
        x.new_ones(2, placement=p)


@pytest.mark.parametrize("shape,start,end", [((2, 3), 1, 1), ((2, 3), 0, 0), ((2, 3, 4), -1, 2), ((3,), 0, -1)])
def test_flatten_of_one_dim_is_the_input_itself(shape, start, end):
    x, tx = _pair(shape, 3)
    y, ty = flow.flatten(x, start, end), torch.flatten(tx, start, end)
    # PyTorch returns the tensor itself (a leaf stays a leaf, its .grad is filled)
    assert (y is x) == (ty is tx) and y.is_leaf == ty.is_leaf
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    z, tz = x.flatten(0, -1), tx.flatten(0, -1)
    assert tuple(z.shape) == tuple(tz.shape) and (z is x) == (tz is tx)


@pytest.mark.parametrize("name", ["dropout2d", "dropout3d"])
@pytest.mark.parametrize("p", [0.0, 1.0])
def test_feature_dropout_with_p_0_or_1_takes_any_rank(name, p):
    x, tx = _pair((4,), 4)
    with pytest.warns(UserWarning):
        y = getattr(flow.nn.functional, name)(x, p=p)
    with pytest.warns(UserWarning):
        ty = getattr(torch.nn.functional, name)(tx, p=p)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_feature_dropout_that_draws_still_needs_a_channel_dim():
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        flow._C.feature_dropout(flow.ones(4), 0.5, True)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.feature_dropout(torch.ones(4), 0.5, True)


@pytest.mark.parametrize("dtype", [flow.float32, flow.int64, flow.float64, flow.bool])
def test_bernoulli_dtype_is_the_results(dtype):
    probs = flow.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    for y in (flow.bernoulli(probs, dtype=dtype), flow.bernoulli(flow.ones(2, 3), p=0.0, dtype=dtype)):
        assert y.dtype == dtype
    np.testing.assert_array_equal(flow.bernoulli(probs, dtype=dtype).numpy(), probs.numpy().astype(bool))
    # without dtype=: the input's, as PyTorch
    assert flow.bernoulli(probs.double()).dtype == flow.float64
    assert torch.bernoulli(torch.ones(2, dtype=torch.float64)).dtype == torch.float64
    with pytest.raises(RuntimeError, match="bernoulli_: dtype=int64"):
        flow.ones(3).bernoulli_(0.5, dtype=flow.int64)


def test_contiguous_in_place_keeps_identity_values_and_gradient():
    a = np.random.default_rng(5).standard_normal((4, 5, 6)).astype(np.float32)
    base, tbase = flow.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    x, tx = base.permute(2, 0, 1), tbase.permute(2, 0, 1)
    assert not x.is_contiguous()
    y1 = x.contiguous()
    y2 = x.contiguous_()
    assert y2 is x and y1 is not x and x.is_contiguous()
    np.testing.assert_array_equal(y2.detach().numpy(), tx.contiguous().detach().numpy())
    assert x.stride() == tx.contiguous().stride()
    w = np.random.default_rng(6).standard_normal(tuple(tx.shape)).astype(np.float32)
    (x * flow.tensor(w)).sum().backward()
    (tx * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(base.grad.numpy(), tbase.grad.numpy(), rtol=1e-6)
    # its own memory now: writing it leaves the tensor it viewed alone
    with flow.no_grad():
        x.zero_()
    np.testing.assert_array_equal(base.detach().numpy(), a)
    c = flow.ones(2, 3)
    assert c.contiguous_() is c



@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rms_layer_norm_is_t5s_layer_norm(dtype):
    a = np.random.default_rng(7).standard_normal((2, 4, 3))
    with pytest.warns(UserWarning, match="deprecated"):
        m = flow.nn.RMSLayerNorm(3, eps=1e-6)
    assert m.variance_epsilon == 1e-6 and m.weight.shape == (3,)
    w = np.array([0.5, 1.5, -2.0], dtype=np.float32)
    with flow.no_grad():
        m.weight.copy_(flow.tensor(w))
    x = flow.tensor(a, dtype=flow.float64 if dtype == torch.float64 else flow.float32, requires_grad=True)
    tx = torch.tensor(a, dtype=dtype, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    # the reference upstream's test uses: HuggingFace's T5LayerNorm
    ty = tw * (tx * torch.rsqrt(tx.to(torch.float32).pow(2).mean(-1, keepdim=True) + 1e-6))
    y = m(x)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = np.random.default_rng(8).standard_normal((2, 4, 3))
    (y * flow.tensor(g, dtype=y.dtype)).sum().backward()
    (ty * torch.tensor(g, dtype=ty.dtype)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m.weight.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_sbp_values_are_callable_as_upstreams():
    assert flow.sbp.broadcast() is flow.sbp.broadcast and flow.sbp.partial_sum() is flow.sbp.partial_sum
    assert flow.sbp.split(0)() == flow.sbp.split(0) != flow.sbp.split(1)()
