"""Mixed precision: autocast regions (state API, the op policies of the op table, gradients
through the casts, a training loop against torch's CPU autocast) and GradScaler against
torch.amp.GradScaler (scaling, unscaling, skipped steps on overflow, scale growth/backoff,
state_dict)."""

import warnings

import numpy as np
import pytest
import torch

from harness import SHIM, flow, to_numpy

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow's autocast")


def _both(np_value, requires_grad=False, dtype="float32"):
    f = flow.tensor(np_value, dtype=getattr(flow, dtype), requires_grad=requires_grad)
    t = torch.tensor(np_value, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    return f, t


# ---------------------------------------------------------------------------
# state


def test_state_api_like_torch():
    for lib in (flow, torch):
        assert not lib.is_autocast_enabled("cpu")
        assert lib.get_autocast_dtype("cpu") == lib.bfloat16
        with lib.autocast("cpu"):
            assert lib.is_autocast_enabled("cpu")
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
            assert lib.is_autocast_enabled("cpu")
            with lib.autocast("cpu", dtype=lib.float16):
                assert lib.get_autocast_dtype("cpu") == lib.float16
            assert lib.get_autocast_dtype("cpu") == lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")
        with lib.amp.autocast("cpu"):
            assert lib.is_autocast_enabled("cpu")
        with lib.cpu.amp.autocast():
            assert lib.is_autocast_enabled("cpu")


def test_decorator_and_exception_restore():
    @flow.autocast("cpu")
    def f(a, b):
        return flow.matmul(a, b)

    assert f(flow.ones(2, 2), flow.ones(2, 2)).dtype == flow.bfloat16
    with pytest.raises(ZeroDivisionError):
        with flow.autocast("cpu"):
            1 / 0
    assert not flow.is_autocast_enabled("cpu")


@pytest.mark.no_cuda
def test_cuda_autocast_without_a_device_warns():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        with flow.autocast("cuda"):
            assert not flow.is_autocast_enabled("cuda")


def test_unavailable_or_bad_arguments():
    with pytest.warns(UserWarning, match="not supported"):
        with flow.autocast("cpu", dtype=flow.float32):
            assert not flow.is_autocast_enabled("cpu")
    with pytest.raises(ValueError, match="device_type"):
        flow.autocast(flow.device("cpu"))
    with pytest.raises(RuntimeError, match="unsupported"):
        flow.autocast("tpu")


# ---------------------------------------------------------------------------
# policies (src/ops/table: `autocast:`)


def test_lower_precision_ops():
    a, b = flow.ones(2, 3), flow.ones(3, 4)
    with flow.autocast("cpu"):
        assert flow.matmul(a, b).dtype == flow.bfloat16
        assert flow.mm(a, b).dtype == flow.bfloat16
        assert flow.bmm(a[None], b[None]).dtype == flow.bfloat16
        assert (a @ b).dtype == flow.bfloat16
        # float64 is never cast, integers are not floating
        assert flow.matmul(a.double(), b.double()).dtype == flow.float64
        assert flow.add(a, 1).dtype == flow.float32  # unlisted ops keep their dtype
    with flow.autocast("cpu", dtype=flow.float16):
        assert flow.matmul(a, b).dtype == flow.float16
    assert flow.matmul(a, b).dtype == flow.float32


def test_fp32_and_promote_ops():
    h = flow.ones(2, 3, dtype=flow.bfloat16)
    f = flow.ones(2, 3)
    with flow.autocast("cpu"):
        assert flow.sum(h).dtype == flow.float32
        assert flow.exp(h).dtype == flow.float32
        assert flow.log(h).dtype == flow.float32
        assert flow.pow(h, 2).dtype == flow.float32
        assert flow.cat([h, f]).dtype == flow.float32
        assert flow.stack([h, h]).dtype == flow.bfloat16
        assert flow.where(f > 0, h, f).dtype == flow.float32
        assert flow.sum(flow.ones(3, dtype=flow.int64)).dtype == flow.int64


def test_matches_torch_lower_precision_values():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((8, 16)), rng.standard_normal((16, 4))
    fx, tx = _both(x)
    fw, tw = _both(w)
    with flow.autocast("cpu"), torch.autocast("cpu"):
        fy, ty = flow.matmul(fx, fw), torch.matmul(tx, tw)
    assert fy.dtype == flow.bfloat16 and ty.dtype == torch.bfloat16
    np.testing.assert_allclose(to_numpy(fy), ty.float().numpy(), rtol=2e-2, atol=2e-2)


def test_gradients_flow_through_casts():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((4, 5)), rng.standard_normal((5, 3))
    fx, tx = _both(x, True)
    fw, tw = _both(w, True)
    with flow.autocast("cpu"):
        fy = flow.matmul(fx, fw)
        fz = flow.matmul(fx, fw)  # second use of the same weight: the cached cast
    with torch.autocast("cpu"):
        ty = torch.matmul(tx, tw)
        tz = torch.matmul(tx, tw)
    (fy.float().sum() + fz.float().sum()).backward()
    (ty.float().sum() + tz.float().sum()).backward()
    assert fx.grad.dtype == flow.float32 and fw.grad.dtype == flow.float32
    np.testing.assert_allclose(to_numpy(fw.grad), tw.grad.numpy(), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(to_numpy(fx.grad), tx.grad.numpy(), rtol=2e-2, atol=2e-2)


def test_training_loop_matches_torch_autocast():
    """An MLP trained 8 SGD steps under CPU autocast (bfloat16): the same losses as torch
    within bfloat16 tolerance."""
    rng = np.random.default_rng(2)
    data, target = rng.standard_normal((32, 10)), rng.standard_normal((32, 1))
    w1, b1 = rng.standard_normal((10, 16)) * 0.3, np.zeros(16)
    w2, b2 = rng.standard_normal((16, 1)) * 0.3, np.zeros(1)
    losses = {}
    for lib in (flow, torch):
        ps = [lib.tensor(v, dtype=lib.float32, requires_grad=True) for v in (w1, b1, w2, b2)]
        x, y = lib.tensor(data, dtype=lib.float32), lib.tensor(target, dtype=lib.float32)
        out = []
        for _ in range(8):
            with lib.autocast("cpu"):
                h = lib.relu(lib.matmul(x, ps[0]) + ps[1])
                pred = lib.matmul(h, ps[2]) + ps[3]
                loss = ((pred.float() - y) ** 2).mean()
            loss.backward()
            with lib.no_grad():
                for p in ps:
                    p -= 0.05 * p.grad
                    p.grad = None
            out.append(float(loss.item()))
        losses[lib.__name__] = out
    np.testing.assert_allclose(losses["oneflow"], losses["torch"], rtol=3e-2)
    assert losses["oneflow"][-1] < losses["oneflow"][0]


# ---------------------------------------------------------------------------
# GradScaler


class _SGD:
    """The minimum GradScaler needs of an optimizer (flow.optim arrives separately)."""

    def __init__(self, params, lr):
        self.param_groups = [{"params": list(params), "lr": lr}]

    def step(self):
        with flow.no_grad():
            for p in self.param_groups[0]["params"]:
                if p.grad is not None:
                    p -= self.param_groups[0]["lr"] * p.grad

    def zero_grad(self):
        for p in self.param_groups[0]["params"]:
            p.grad = None


def _scaler_run(lib, scales_of_loss, init_scale=2.0**16, growth_interval=3, autocast=False):
    """Regression (float32 parameters; the forward under CPU autocast when asked);
    scales_of_loss[i] multiplies step i's loss (inf forces an overflow)."""
    import contextlib

    rng = np.random.default_rng(3)
    x, y, w = (
        rng.standard_normal((16, 4)),
        rng.standard_normal((16, 1)),
        rng.standard_normal((4, 1)),
    )
    p = lib.tensor(w, dtype=lib.float32, requires_grad=True)
    X, Y = lib.tensor(x, dtype=lib.float32), lib.tensor(y, dtype=lib.float32)
    opt = _SGD([p], 0.1) if lib is flow else torch.optim.SGD([p], lr=0.1)
    scaler = (
        flow.amp.GradScaler("cpu", init_scale=init_scale, growth_interval=growth_interval)
        if lib is flow
        else torch.amp.GradScaler("cpu", init_scale=init_scale, growth_interval=growth_interval)
    )
    trace = []
    for k in scales_of_loss:
        opt.zero_grad()
        with lib.autocast("cpu") if autocast else contextlib.nullcontext():
            loss = ((lib.matmul(X, p).float() - Y) ** 2).mean() * k
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        state = (scaler.get_scale(), to_numpy(p.detach()).copy(), scaler._get_growth_tracker())
        trace.append(state + (float(loss.item()),))
    return trace, scaler


def test_grad_scaler_matches_torch():
    ks = [1.0, 1.0, float("inf"), 1.0, 1.0, 1.0, 1.0, float("nan"), 1.0]
    ft, fs = _scaler_run(flow, ks)
    tt, ts = _scaler_run(torch, ks)
    for i, ((fscale, fp, fg, _), (tscale, tp, tg, _)) in enumerate(zip(ft, tt)):
        assert fscale == tscale, f"step {i}: scale {fscale} vs {tscale}"
        assert fg == tg, f"step {i}: growth tracker"
        np.testing.assert_allclose(fp, tp, rtol=1e-5, err_msg=f"step {i}")
    # the overflow steps were skipped: parameters unchanged across them
    np.testing.assert_array_equal(ft[2][1], ft[1][1])
    np.testing.assert_array_equal(ft[7][1], ft[6][1])
    assert fs.state_dict() == ts.state_dict()


def test_grad_scaler_overflowing_scale_backs_off_like_torch():
    ft, _ = _scaler_run(flow, [1.0] * 6, init_scale=3e38)
    tt, _ = _scaler_run(torch, [1.0] * 6, init_scale=3e38)
    assert [s for s, _, _, _ in ft] == [s for s, _, _, _ in tt]
    for (_, fp, _, _), (_, tp, _, _) in zip(ft, tt):
        np.testing.assert_allclose(fp, tp, rtol=1e-5)


def test_grad_scaler_state_dict_roundtrip_and_errors():
    s = flow.amp.GradScaler(
        "cpu", init_scale=8.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=10
    )
    sd = s.state_dict()
    ts = torch.amp.GradScaler(
        "cpu", init_scale=8.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=10
    )
    assert sd == ts.state_dict()
    s2 = flow.amp.GradScaler("cpu")
    s2.load_state_dict(sd)
    assert s2.get_scale() == 8.0 and s2.get_growth_factor() == 4.0
    with pytest.raises(RuntimeError, match="empty"):
        s2.load_state_dict({})
    p = flow.ones(2, requires_grad=True)
    opt = _SGD([p], 0.1)
    s2.scale(p.sum()).backward()
    s2.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        s2.unscale_(opt)
    s2.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s2.step(opt)
    with pytest.raises(AssertionError, match="growth factor"):  # PyTorch's assert
        flow.amp.GradScaler("cpu", growth_factor=0.5)
    # OneFlow's order (no device) and a disabled scaler
    assert flow.amp.GradScaler(1024.0).get_scale() == 1024.0
    off = flow.amp.GradScaler("cpu", enabled=False)
    loss = p.sum()
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert flow.amp.GradScaler("cuda").is_enabled() is flow.cuda.is_available()


def test_grad_scaler_scale_nested_outputs():
    s = flow.amp.GradScaler("cpu", init_scale=4.0)
    out = s.scale([flow.ones(2), (flow.ones(1) * 2,)])
    assert to_numpy(out[0]).tolist() == [4.0, 4.0] and to_numpy(out[1][0]).tolist() == [8.0]


def test_grad_scaler_with_autocast_training_matches_torch():
    """bfloat16 autocast forward + GradScaler: the same skipped steps and scales as torch, the
    same losses and parameters within bfloat16 tolerance."""
    ks = [1.0, 1.0, float("inf"), 1.0, 1.0, 1.0, 1.0, 1.0]
    ft, _ = _scaler_run(flow, ks, autocast=True)
    tt, _ = _scaler_run(torch, ks, autocast=True)
    assert [f[0] for f in ft] == [t[0] for t in tt]  # scale: backoff at the overflow, growth
    assert [f[2] for f in ft] == [t[2] for t in tt]
    np.testing.assert_array_equal(ft[2][1], ft[1][1])  # the overflow step was skipped
    for i, (f, t) in enumerate(zip(ft, tt)):
        np.testing.assert_allclose(f[1], t[1], rtol=3e-2, atol=3e-2, err_msg=f"step {i}")
        if np.isfinite(t[3]):
            np.testing.assert_allclose(f[3], t[3], rtol=3e-2, err_msg=f"loss {i}")


def test_backward_inside_autocast_keeps_forward_dtypes():
    """Gradients computed by a backward() called inside the region equal those of a backward
    called after it (the backward ops are not cast again)."""
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((4, 6)), rng.standard_normal((6, 3))
    grads = []
    for inside in (True, False):
        fx = flow.tensor(x, dtype=flow.float32, requires_grad=True)
        fw = flow.tensor(w, dtype=flow.float32, requires_grad=True)
        with flow.autocast("cpu"):
            y = flow.matmul(fx, fw).float().pow(2).sum()
            if inside:
                y.backward()
        if not inside:
            y.backward()
        grads.append((to_numpy(fx.grad), to_numpy(fw.grad)))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])
