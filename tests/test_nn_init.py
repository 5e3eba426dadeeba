"""nn.init against torch.nn.init: gains and fans exactly, distributions statistically (bounds,
mean and std over large tensors; tolerances are a few standard errors), errors by type and
message, and the Tensor methods that delegate to nn.init."""
import math
import warnings

import numpy as np
import pytest
import torch

from error_cases import raises_like_torch
from harness import flow

init = flow.nn.init
N = 200_000  # samples per statistical check


def np_of(t):
    t = t.detach()
    return (t.float() if t.dtype == flow.bfloat16 else t).numpy().astype(np.float64)


def f32(x):
    """A bound as a float32 tensor holds it (the fills compute and round in float32)."""
    return float(np.float32(x))


def check_moments(values, mean, std, tol=None):
    """Sample mean and std within `tol` * std; by default 5 standard errors of the sample
    (the std error of a mean is std / sqrt(n), that of a std at most about std / sqrt(2n))."""
    if tol is None:
        tol = 5.0 / math.sqrt(values.size)
    assert abs(values.mean() - mean) < tol * std + 1e-12, (values.mean(), mean)
    assert abs(values.std() - std) < tol * std, (values.std(), std)


# ---------------------------------------------------------------------------
# calculate_gain and fans


@pytest.mark.parametrize("args", [
    ("linear",), ("conv1d",), ("conv2d",), ("conv3d",), ("conv_transpose1d",),
    ("conv_transpose2d",), ("conv_transpose3d",), ("sigmoid",), ("tanh",), ("relu",),
    ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 1), ("leaky_relu", math.sqrt(5)),
    ("selu",)])
def test_calculate_gain_matches_torch(args):
    assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


@pytest.mark.parametrize("args", [("leaky_relu", True), ("leaky_relu", "0.1"), ("softmax",)])
def test_calculate_gain_errors_match_torch(args):
    with pytest.raises(ValueError) as te:
        torch.nn.init.calculate_gain(*args)
    with pytest.raises(ValueError) as fe:
        init.calculate_gain(*args)
    assert str(fe.value) == str(te.value)


@pytest.mark.parametrize("shape", [(3, 5), (4, 3, 7), (8, 2, 3, 3), (2, 3, 1, 2, 2), (0, 4)])
def test_fan_in_and_fan_out_match_torch(shape):
    got = init._calculate_fan_in_and_fan_out(flow.empty(*shape))
    assert got == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_fans_of_channels_last_weights():
    # OneFlow's data_format="NHWC": conv weights laid out (out, kh, kw, in).
    w = flow.empty(8, 3, 5, 2)
    assert init._calculate_fan_in_and_fan_out(w, "NHWC") == (2 * 15, 8 * 15)
    assert init._calculate_fan_in_and_fan_out(flow.empty(6, 4), "NHWC") == (4, 6)
    with pytest.raises(ValueError, match="data_format"):
        init._calculate_fan_in_and_fan_out(w, "NCWH")


@pytest.mark.parametrize("fn", [
    lambda lib, t: lib.nn.init._calculate_fan_in_and_fan_out(t),
    lambda lib, t: lib.nn.init.xavier_uniform_(t),
    lambda lib, t: lib.nn.init.xavier_normal_(t),
    lambda lib, t: lib.nn.init.kaiming_uniform_(t),
    lambda lib, t: lib.nn.init.kaiming_normal_(t),
])
def test_fans_of_vectors_are_a_value_error(fn):
    with pytest.raises(ValueError) as te:
        fn(torch, torch.empty(5))
    with pytest.raises(ValueError) as fe:
        fn(flow, flow.empty(5))
    assert str(fe.value) == str(te.value)


# ---------------------------------------------------------------------------
# Distributions


def test_uniform_():
    t = flow.empty(N)
    assert init.uniform_(t, -2.0, 3.0) is t
    v = np_of(t)
    assert v.min() >= -2.0 and v.max() < 3.0
    check_moments(v, 0.5, 5 / math.sqrt(12))
    v = np_of(init.uniform_(flow.empty(N)))
    assert v.min() >= 0.0 and v.max() < 1.0


def test_normal_():
    t = flow.empty(N, dtype=flow.float64)
    assert init.normal_(t, 1.5, 0.25) is t and t.dtype == flow.float64
    check_moments(np_of(t), 1.5, 0.25)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_fills_keep_the_dtype(dtype):
    t = flow.empty(N // 4, dtype=getattr(flow, dtype))
    init.uniform_(t, -1, 1)
    assert str(t.dtype) == f"oneflow.{dtype}"
    v = np_of(t)
    assert v.min() >= -1 and v.max() <= 1
    check_moments(v, 0.0, 1 / math.sqrt(3))


@pytest.mark.parametrize("mean,std,a,b", [
    (0.0, 1.0, -2.0, 2.0),     # most of the mass inside: redraw-from-normal branch
    (0.0, 1.0, 0.5, 0.6),      # narrow window: uniform-proposal branch
    (0.3, 0.02, -1.0, 1.0),    # bounds far away: plain normal
    (0.0, 1.0, 1.0, 3.0),      # one-sided tail window
])
def test_trunc_normal_matches_the_truncated_distribution(mean, std, a, b):
    t = flow.empty(N)
    assert init.trunc_normal_(t, mean, std, a, b) is t
    v = np_of(t)
    assert v.min() >= f32(a) and v.max() <= f32(b)
    # Reference moments of the truncated normal (scipy-free): from a large torch sample.
    torch.manual_seed(0)
    ref = torch.nn.init.trunc_normal_(torch.empty(4 * N), mean, std, a, b).double().numpy()
    # 5 standard errors of the difference of two samples (N and 4N).
    check_moments(v, ref.mean(), ref.std(), tol=5.0 * math.sqrt(1 / N + 1 / (4 * N)))


def test_trunc_normal_warns_when_mean_is_far_from_the_window():
    with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\]"):
        init.trunc_normal_(flow.empty(100), mean=10.0, std=1.0, a=-1.0, b=1.0)


def test_constant_ones_zeros():
    t = flow.empty(3, 4)
    assert init.constant_(t, 2.5) is t and np.all(np_of(t) == 2.5)
    assert np.all(np_of(init.ones_(t)) == 1.0)
    assert np.all(np_of(init.zeros_(t)) == 0.0)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_eye_(shape):
    t = flow.empty(*shape)
    assert init.eye_(t) is t
    np.testing.assert_array_equal(np_of(t), torch.nn.init.eye_(torch.empty(*shape)).numpy())


@pytest.mark.parametrize("shape,groups", [
    ((4, 4, 3), 1), ((6, 3, 3, 3), 1), ((3, 6, 5, 5), 1), ((4, 2, 3, 3, 3), 2), ((6, 2, 3, 3), 3)])
def test_dirac_(shape, groups):
    t = flow.empty(*shape)
    assert init.dirac_(t, groups) is t
    np.testing.assert_array_equal(np_of(t),
                                  torch.nn.init.dirac_(torch.empty(*shape), groups).numpy())


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.init.eye_(lib.empty(2, 2, 2)),
    lambda lib: lib.nn.init.dirac_(lib.empty(2, 2)),
    lambda lib: lib.nn.init.dirac_(lib.empty(3, 2, 2), groups=2),
    lambda lib: lib.nn.init.orthogonal_(lib.empty(3)),
    lambda lib: lib.nn.init.sparse_(lib.empty(3), 0.5),
    lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(3, 3), mode="fan_avg"),
    lambda lib: lib.nn.init.kaiming_normal_(lib.empty(3, 3), nonlinearity="softmax"),
])
def test_shape_and_argument_errors_match_torch(fn):
    raises_like_torch(fn, ValueError)


@pytest.mark.parametrize("shape", [(400, 500), (64, 32, 3, 3)])
@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_xavier_uniform_and_normal(shape, gain):
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(flow.empty(*shape))
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    v = np_of(init.xavier_uniform_(flow.empty(*shape), gain=gain))
    bound = math.sqrt(3.0) * std
    assert np.abs(v).max() <= f32(bound) and np.abs(v).max() > 0.99 * bound
    check_moments(v, 0.0, std)
    check_moments(np_of(init.xavier_normal_(flow.empty(*shape), gain=gain)), 0.0, std)


@pytest.mark.parametrize("a,mode,nonlinearity", [
    (0, "fan_in", "leaky_relu"), (math.sqrt(5), "fan_in", "leaky_relu"), (0, "fan_out", "relu"),
    (0.1, "FAN_IN", "leaky_relu"), (0, "fan_in", "tanh")])
def test_kaiming_uniform_and_normal(a, mode, nonlinearity):
    shape = (500, 40, 2, 5)
    fan = 40 * 10 if mode.lower() == "fan_in" else 500 * 10
    std = torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std  # = gain * sqrt(3 / fan)
    v = np_of(init.kaiming_uniform_(flow.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity))
    assert np.abs(v).max() <= f32(bound) and np.abs(v).max() > 0.99 * bound
    check_moments(v, 0.0, std)
    v = np_of(init.kaiming_normal_(flow.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity))
    check_moments(v, 0.0, std)


def test_kaiming_on_zero_element_tensor_warns_and_returns():
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        t = flow.empty(0, 3)
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            assert fn(t) is t


@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4), (5, 2, 3)])
@pytest.mark.parametrize("gain", [1.0, 0.5])
def test_orthogonal_(shape, gain):
    t = flow.empty(*shape, dtype=flow.float64)
    assert init.orthogonal_(t, gain) is t
    q = np_of(t).reshape(shape[0], -1)
    rows, cols = q.shape
    eye = np.eye(min(rows, cols)) * gain**2
    gram = q @ q.T if rows <= cols else q.T @ q
    np.testing.assert_allclose(gram, eye, atol=1e-10)


def test_orthogonal_is_haar_distributed():
    # Q's entries have mean 0 and variance 1/n for a Haar-random n x n orthogonal matrix.
    vals = np.concatenate([np_of(init.orthogonal_(flow.empty(30, 30))).ravel() for _ in range(200)])
    check_moments(vals, 0.0, 1 / math.sqrt(30))


def test_sparse_():
    t = flow.empty(20, 7)
    assert init.sparse_(t, sparsity=0.3, std=0.5) is t
    zeros_per_column = (np_of(t) == 0).sum(axis=0)
    assert np.all(zeros_per_column >= math.ceil(0.3 * 20))


def test_init_runs_without_recording_history():
    p = flow.nn.Parameter(flow.empty(3, 4))
    for fn in (init.uniform_, init.normal_, init.trunc_normal_, init.xavier_uniform_,
               init.xavier_normal_, init.kaiming_uniform_, init.kaiming_normal_,
               init.orthogonal_, init.ones_, init.zeros_, init.eye_,
               lambda t: init.constant_(t, 3.0), lambda t: init.sparse_(t, 0.5)):
        out = fn(p)
        assert out is p and p.is_leaf and p.grad_fn is None and p.requires_grad
    w = flow.nn.Parameter(flow.empty(2, 2, 3))
    assert init.dirac_(w) is w and w.grad_fn is None


def test_seeding_makes_fills_reproducible():
    flow.manual_seed(123)
    a = np_of(init.normal_(flow.empty(10)))
    flow.manual_seed(123)
    b = np_of(init.normal_(flow.empty(10)))
    np.testing.assert_array_equal(a, b)


def test_generator_argument():
    # A seeded generator gives the same fill whatever the default generator does; anything
    # else than a Generator is a TypeError, as in torch.
    a = init.normal_(flow.empty(5), generator=flow.Generator().manual_seed(3))
    flow.manual_seed(123)
    b = init.normal_(flow.empty(5), generator=flow.Generator().manual_seed(3))
    assert a.tolist() == b.tolist()
    with pytest.raises(TypeError, match="Generator"):
        init.uniform_(flow.empty(2), generator=object())


def test_deprecated_aliases_warn():
    with pytest.warns(FutureWarning, match="`nn.init.uniform` is now deprecated in favor of "
                                          "`nn.init.uniform_`"):
        init.uniform(flow.empty(2))


# ---------------------------------------------------------------------------
# Tensor methods delegating to nn.init


def test_tensor_init_methods():
    t = flow.empty(N)
    assert t.uniform_(-1, 1) is t
    v = np_of(t)
    assert v.min() >= -1 and v.max() < 1
    check_moments(np_of(t.normal_(2.0, 3.0)), 2.0, 3.0)
    check_moments(np_of(flow.empty(N).normal_()), 0.0, 1.0)
    w = flow.empty(300, 200)
    assert w.kaiming_uniform_(a=0, mode="fan_in", nonlinearity="relu") is w
    assert np.abs(np_of(w)).max() <= f32(math.sqrt(2.0) * math.sqrt(3.0 / 200))
    check_moments(np_of(w.kaiming_normal_(mode="fan_out", nonlinearity="relu")),
                  0.0, math.sqrt(2.0 / 300))
    check_moments(np_of(w.xavier_uniform_(gain=1.0)), 0.0, math.sqrt(2.0 / 500))
    check_moments(np_of(w.xavier_normal_(gain=2.0)), 0.0, 2 * math.sqrt(2.0 / 500))
    c = flow.empty(4, 3, 2, 2)
    c.kaiming_uniform_(nonlinearity="relu", data_format="NHWC")  # fan_in = 2 * (3 * 2)
    assert np.abs(np_of(c)).max() <= f32(math.sqrt(2.0) * math.sqrt(3.0 / 12))
    assert w.fill_(2.0) is w and np.all(np_of(w) == 2.0)
    assert w.zero_() is w and w.zeros_() is w and np.all(np_of(w) == 0.0)


def test_tensor_init_methods_on_parameters_return_the_parameter():
    p = flow.nn.Parameter(flow.empty(3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert p.xavier_normal_() is p and p.kaiming_uniform_() is p
    assert type(p) is flow.nn.Parameter and p.grad_fn is None
    # uniform_/normal_ are the in-place ops themselves: on a leaf requiring grad they raise
    # outside no_grad, as in torch.
    with pytest.raises(RuntimeError, match="leaf"):
        p.uniform_()
    with flow.no_grad():
        assert p.uniform_() is p and p.normal_() is p
