"""The conv / pool / norm modules against torch's: forward and backward with copied parameters
(the inputs' and every parameter's gradient), PyTorch's default initialisation (distribution and
bounds), reprs, state_dict round trips, BatchNorm's train/eval behaviour and running statistics
over several steps (momentum, momentum=None, track_running_stats=False, affine=False)."""

import math

import re

import numpy as np
import pytest
import torch

from harness import assert_same_repr, flow

nn, tnn = flow.nn, torch.nn


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.numpy()


def _copy_params(fm, tm):
    """torch module's parameters and buffers into the flow module (same names)."""
    tstate = tm.state_dict()
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tstate.items()})


def _close(a, b, tol=1e-5, what=""):
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol, err_msg=what)


def _run_both(fm, tm, shape, seed=0, tol=1e-5, extra=None):
    """Forward + backward of the same data through both; compares outputs and all gradients."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fy, ty = fm(fx, *(extra or ())), tm(tx, *(extra or ()))
    _close(fy, ty, tol, "output")
    g = np.random.default_rng(seed + 1).standard_normal(tuple(ty.shape)).astype(np.float32)
    fy.backward(flow.tensor(g))
    ty.backward(torch.tensor(g))
    _close(fx.grad, tx.grad, tol, "input grad")
    for (name, fp), (_, tp) in zip(fm.named_parameters(), tm.named_parameters()):
        _close(fp.grad, tp.grad, tol, f"grad of {name}")
    return fy, ty


CONV_CASES = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1), (2, 4, 9)),
    ("Conv2d", (3, 8, (3, 5)), dict(stride=(2, 1), padding=(4, 2), dilation=(3, 1)), (2, 3, 12, 10)),
    ("Conv2d", (4, 8, 3), dict(groups=4, bias=False), (1, 4, 7, 7)),
    ("Conv2d", (4, 4, 3), dict(groups=4, padding="same"), (2, 4, 6, 6)),
    ("Conv2d", (3, 5, 4), dict(padding="same", dilation=2), (1, 3, 9, 9)),
    ("Conv2d", (3, 5, 3), dict(padding=2, padding_mode="reflect"), (1, 3, 7, 6)),
    ("Conv2d", (3, 5, 3), dict(padding=(1, 2), padding_mode="replicate"), (1, 3, 5, 6)),
    ("Conv2d", (3, 5, 3), dict(padding=1, padding_mode="circular"), (2, 3, 5, 5)),
    ("Conv1d", (2, 3, 3), dict(padding="same", padding_mode="reflect"), (2, 5)),
    ("Conv3d", (2, 4, 3), dict(stride=1, padding=1), (1, 2, 5, 5, 5)),
    ("Conv3d", (2, 4, (2, 3, 1)), dict(padding=1, padding_mode="circular"), (1, 2, 4, 4, 4)),
    ("ConvTranspose1d", (4, 3, 3), dict(stride=2, output_padding=1), (2, 4, 5)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, padding=1, groups=2), (1, 4, 5, 5)),
    ("ConvTranspose3d", (2, 3, (3, 5, 2)), dict(stride=(2, 1, 1), padding=(0, 4, 2)), (1, 2, 3, 7, 6)),
]


@pytest.mark.parametrize("cls,args,kwargs,shape", CONV_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONV_CASES)])
def test_conv_modules_match_torch(cls, args, kwargs, shape):
    torch.manual_seed(0)
    tm = getattr(tnn, cls)(*args, **kwargs)
    fm = getattr(nn, cls)(*args, **kwargs)
    assert_same_repr(fm, tm)
    _copy_params(fm, tm)
    _run_both(fm, tm, shape)


def test_conv_transpose_output_size():
    torch.manual_seed(0)
    tm, fm = tnn.ConvTranspose2d(3, 2, 3, stride=2), nn.ConvTranspose2d(3, 2, 3, stride=2)
    _copy_params(fm, tm)
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    for size in ([9, 9], [10, 10], (1, 2, 10, 9)):
        _close(fm(flow.tensor(x), output_size=size), tm(torch.tensor(x), output_size=size))
    with pytest.raises(ValueError, match="output size"):
        fm(flow.tensor(x), output_size=[12, 12])


@pytest.mark.parametrize("cls,args", [("Conv2d", (6, 12, 5)), ("Conv1d", (4, 8, 3)), ("ConvTranspose2d", (6, 4, 3)),
                                      ("Conv3d", (2, 4, 3))])
def test_conv_default_init(cls, args):
    """PyTorch's kaiming_uniform(a=sqrt(5)): weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    m = getattr(nn, cls)(*args)
    w = m.weight.numpy()
    receptive = int(np.prod(w.shape[2:]))
    fan_in = w.shape[1] * receptive
    bound = 1 / math.sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.25 * bound / math.sqrt(3)
    b = m.bias.numpy()
    assert np.abs(b).max() <= bound
    assert m.weight.requires_grad and m.bias.requires_grad


def _set_sorted(msg):
    """The message with each printed set's elements sorted: a set's printed order depends on the
    process's string hashing (and torch's set comes from a .pyc built in another process)."""
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", msg)


def test_conv_constructor_errors_match_torch():
    for kwargs in [dict(groups=0), dict(groups=4), dict(padding="foo"), dict(padding="same", stride=2),
                   dict(padding_mode="mirror")]:
        with pytest.raises(ValueError) as t_err:
            tnn.Conv2d(6, 9, 3, **kwargs)
        with pytest.raises(ValueError) as f_err:
            nn.Conv2d(6, 9, 3, **kwargs)
        assert _set_sorted(str(f_err.value)) == _set_sorted(str(t_err.value)), kwargs
    with pytest.raises(ValueError, match="zeros"):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")


POOL_CASES = [
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 9)),
    ("MaxPool2d", (3,), dict(stride=2, padding=1, dilation=1, ceil_mode=True), (2, 3, 8, 9)),
    ("MaxPool3d", ((2, 3, 2),), dict(stride=1), (1, 2, 4, 5, 4)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1, count_include_pad=False), (2, 3, 9)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True, divisor_override=4), (2, 3, 8, 9)),
    ("AvgPool3d", (2,), dict(stride=1, padding=1), (1, 2, 4, 5, 4)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 8, 9)),
    ("AdaptiveAvgPool3d", (2,), {}, (1, 2, 4, 5, 4)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveMaxPool2d", ((3, 4),), {}, (2, 3, 8, 9)),
    ("AdaptiveMaxPool3d", ((2, 3, 2),), {}, (1, 2, 4, 5, 4)),
    ("LPPool1d", (2, 3), dict(stride=2), (2, 3, 9)),
    ("LPPool2d", (3.0, 2), dict(ceil_mode=True), (2, 3, 7, 9)),
]


@pytest.mark.parametrize("cls,args,kwargs,shape", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_pool_modules_match_torch(cls, args, kwargs, shape):
    tm = getattr(tnn, cls)(*args, **kwargs)
    fm = getattr(nn, cls)(*args, **kwargs)
    assert_same_repr(fm, tm)
    _run_both(fm, tm, shape)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_max_pool_return_indices_and_unpool(k):
    shape = (2, 3) + (6,) * k
    tp = getattr(tnn, f"MaxPool{k}d")(2, return_indices=True)
    fp = getattr(nn, f"MaxPool{k}d")(2, return_indices=True)
    tu, fu = getattr(tnn, f"MaxUnpool{k}d")(2), getattr(nn, f"MaxUnpool{k}d")(2)
    assert_same_repr(fu, tu)
    x = np.random.default_rng(k).standard_normal(shape).astype(np.float32)
    fx, tx = flow.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (fo, fi), (to, ti) = fp(fx), tp(tx)
    np.testing.assert_array_equal(fi.numpy(), ti.numpy())
    fr, tr = fu(fo, fi), tu(to, ti)
    _close(fr, tr)
    fr.sum().backward()
    tr.sum().backward()
    _close(fx.grad, tx.grad)
    fr2 = fu(fo, fi, output_size=list(shape[2:]))
    assert tuple(fr2.shape) == shape


NORM_CASES = [
    ("GroupNorm", (2, 6), {}, (3, 6, 4, 5)),
    ("GroupNorm", (3, 6), dict(affine=False, eps=1e-3), (2, 6, 7)),
    ("LayerNorm", ((4, 5),), {}, (3, 6, 4, 5)),
    ("LayerNorm", (5,), dict(elementwise_affine=False), (3, 5)),
    ("LayerNorm", (5,), dict(bias=False), (2, 3, 5)),
    ("LocalResponseNorm", (3,), dict(alpha=1e-2, beta=0.5, k=2.0), (2, 6, 4, 5)),
    ("InstanceNorm1d", (3,), dict(affine=True), (2, 3, 7)),
    ("InstanceNorm2d", (3,), {}, (2, 3, 4, 5)),
    ("InstanceNorm2d", (3,), dict(affine=True), (3, 4, 5)),
    ("InstanceNorm3d", (2,), dict(affine=True), (2, 2, 3, 4, 3)),
]


@pytest.mark.parametrize("cls,args,kwargs,shape", NORM_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(NORM_CASES)])
def test_norm_modules_match_torch(cls, args, kwargs, shape):
    torch.manual_seed(1)
    tm = getattr(tnn, cls)(*args, **kwargs)
    fm = getattr(nn, cls)(*args, **kwargs)
    assert_same_repr(fm, tm)
    for p in tm.parameters():  # non-trivial affine parameters
        with torch.no_grad():
            p.copy_(torch.randn_like(p))
    _copy_params(fm, tm)
    _run_both(fm, tm, shape, tol=2e-5)


def _bn_pair(cls, *args, **kwargs):
    tm, fm = getattr(tnn, cls)(*args, **kwargs), getattr(nn, cls)(*args, **kwargs)
    assert_same_repr(fm, tm)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.randn_like(p))
    _copy_params(fm, tm)
    return fm, tm


def _compare_state(fm, tm, tol=1e-5):
    fs, ts = fm.state_dict(), tm.state_dict()
    assert list(fs.keys()) == list(ts.keys())
    for k in ts:
        np.testing.assert_allclose(_np(fs[k]).astype(np.float64), _np(ts[k]).astype(np.float64), rtol=tol,
                                   atol=tol, err_msg=k)


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (8, 3)), ("BatchNorm1d", (4, 3, 5)),
                                       ("BatchNorm2d", (4, 3, 5, 6)), ("BatchNorm3d", (2, 3, 3, 4, 2))])
@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
def test_batch_norm_train_eval_steps(cls, shape, momentum):
    fm, tm = _bn_pair(cls, 3, momentum=momentum)
    for step in range(4):  # several training steps: the running statistics evolve identically
        _run_both(fm, tm, shape, seed=step, tol=2e-5)
        _compare_state(fm, tm)
    assert int(fm.num_batches_tracked.item()) == 4
    fm.eval()
    tm.eval()
    _run_both(fm, tm, shape, seed=10, tol=2e-5)  # eval: running statistics, no update
    _compare_state(fm, tm)


@pytest.mark.parametrize("kwargs", [dict(track_running_stats=False), dict(affine=False),
                                    dict(affine=False, track_running_stats=False)])
def test_batch_norm_options(kwargs):
    fm, tm = _bn_pair("BatchNorm2d", 3, **kwargs)
    for step in range(2):
        _run_both(fm, tm, (4, 3, 4, 4), seed=step, tol=2e-5)
    fm.eval()
    tm.eval()
    _run_both(fm, tm, (4, 3, 4, 4), seed=5, tol=2e-5)
    _compare_state(fm, tm)


def test_batch_norm_reset_and_defaults():
    m = nn.BatchNorm2d(4)
    assert np.all(m.weight.numpy() == 1) and np.all(m.bias.numpy() == 0)
    assert np.all(m.running_mean.numpy() == 0) and np.all(m.running_var.numpy() == 1)
    assert m.num_batches_tracked.dtype == flow.int64
    m(flow.randn(3, 4, 2, 2) * 3 + 1)
    assert not np.all(m.running_mean.numpy() == 0)
    m.reset_running_stats()
    assert np.all(m.running_mean.numpy() == 0) and int(m.num_batches_tracked.item()) == 0
    with flow.no_grad():
        m.weight.fill_(2.0)
    m.reset_parameters()
    assert np.all(m.weight.numpy() == 1)
    # an old checkpoint (no num_batches_tracked) loads; the counter starts at 0
    sd = {k: v for k, v in nn.BatchNorm2d(4).state_dict().items() if k != "num_batches_tracked"}
    m2 = nn.BatchNorm2d(4)
    m2.load_state_dict(sd, strict=False)


def test_batch_norm_wrong_rank_and_size():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(flow.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(flow.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(flow.randn(1, 3))
    with pytest.raises(RuntimeError, match="running_mean should contain 4 elements not 3"):
        nn.BatchNorm2d(3)(flow.randn(2, 4, 3, 3))


@pytest.mark.parametrize("cls,args,shape", [
    ("Conv2d", (3, 4, 3), (2, 3, 6, 6)), ("ConvTranspose2d", (3, 4, 3), (2, 3, 5, 5)),
    ("BatchNorm2d", (3,), (2, 3, 4, 4)), ("LayerNorm", ((4, 4),), (2, 3, 4, 4)), ("GroupNorm", (1, 3), (2, 3, 4, 4)),
    ("InstanceNorm2d", (3,), (2, 3, 4, 4)),
])
def test_state_dict_round_trip(cls, args, shape):
    a = getattr(nn, cls)(*args)
    b = getattr(nn, cls)(*args)
    if cls == "BatchNorm2d":
        a(flow.randn(*shape))  # non-trivial running statistics
    b.load_state_dict(a.state_dict())
    for k, v in a.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), b.state_dict()[k].numpy(), err_msg=k)
    a.eval()
    b.eval()
    x = flow.randn(*shape)
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())
    # torch loads ours (same keys and shapes)
    t = getattr(tnn, cls)(*args)
    t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in a.state_dict().items()})


def test_instance_norm_running_stats():
    tm = tnn.InstanceNorm2d(3, affine=True, track_running_stats=True, momentum=0.3)
    fm = nn.InstanceNorm2d(3, affine=True, track_running_stats=True, momentum=0.3)
    _copy_params(fm, tm)
    for step in range(3):
        _run_both(fm, tm, (2, 3, 4, 5), seed=step, tol=2e-5)
        _compare_state(fm, tm)
    fm.eval()
    tm.eval()
    _run_both(fm, tm, (2, 3, 4, 5), seed=9, tol=2e-5)
    with pytest.raises(ValueError, match="num_features"):
        nn.InstanceNorm2d(4, affine=True)(flow.randn(2, 3, 4, 4))


def test_layer_norm_and_group_norm_errors():
    with pytest.raises(RuntimeError, match=r"normalized_shape=\[4\], expected input with shape \[\*, 4\]"):
        nn.LayerNorm(4)(flow.randn(2, 5))
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(4, 6)
