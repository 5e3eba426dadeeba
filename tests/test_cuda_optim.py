"""The fused optimizer updates on the device (src/cuda/optim.cu: the CPU loop's step functors,
Note [CUDA optimizer updates]; LAMB's trust ratio and last pass as device ops): every optimizer
and every option bit of its step functor, in four dtypes, stepped on the GPU and on the CPU with
the same gradients; parameters and state agree (the device contracts a*b+c into fma: a few ulps
per step). Marker ``cuda``."""
import numpy as np
import pytest

import oneflow as flow

cuda = pytest.mark.cuda
DEV = "cuda"
TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-3, "bfloat16": 2e-2}
SHAPES = [(33, 65), (7,), (), (300, 41)]

CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.05, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95))),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.95), amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01, amsgrad=True)),
    ("Adamax", dict(lr=0.02, betas=(0.85, 0.99))),
    ("Adamax", dict(lr=0.02, betas=(0.3, 0.99), weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.9)),
    ("RMSprop", dict(lr=0.01, alpha=0.3, centered=True, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.3)),
    ("Adadelta", dict(lr=1.0)),
    ("Adadelta", dict(lr=1.0, rho=0.5, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, betas=(0.3, 0.99), weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),  # rectified from step 6 on: both step functors
    ("RAdam", dict(lr=0.01, betas=(0.3, 0.999), weight_decay=0.1)),
    ("LAMB", dict(lr=0.01)),  # the direction kernel, then norms and the update as device ops
    ("LAMB", dict(lr=0.01, weight_decay=0.1, adam_w_mode=False, do_bias_correction=False)),
    ("LAMB", dict(lr=0.01, weight_decay=0.1)),
]


def _params(dtype, device, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    out = []
    for s in SHAPES:
        t = flow.tensor(rng.standard_normal(s).astype("float32")).to(getattr(flow, dtype)).to(device)
        out.append(t.requires_grad_())
    # A parameter that is not contiguous: updated in a contiguous copy, copied back.
    w = flow.tensor(rng.standard_normal((9, 13)).astype("float32")).to(getattr(flow, dtype)).to(device)
    out.append(w.t().detach().requires_grad_())
    assert not out[-1].is_contiguous()
    return out


def _close(got, want, dtype):
    assert got.device.type == DEV and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.detach().cpu().float().numpy(), want.detach().float().numpy(),
                               rtol=TOL[dtype], atol=TOL[dtype])


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_update_on_the_gpu_matches_the_cpu(name, kw, dtype):
    host, dev = _params(dtype, "cpu"), _params(dtype, DEV)
    oh, od = getattr(flow.optim, name)(host, **kw), getattr(flow.optim, name)(dev, **kw)
    rng = np.random.default_rng(1)
    for step in range(8 if name != "RAdam" else 8 + 6):
        for h, d in zip(host, dev):
            g = flow.tensor(rng.standard_normal(tuple(h.shape)).astype("float32")).to(h.dtype)
            h.grad, d.grad = g, g.to(DEV)
        oh.step()
        od.step()
    for h, d in zip(host, dev):
        _close(d, h, dtype)
        sh, sd = oh.state[h], od.state[d]
        assert sorted(sh) == sorted(sd)
        for k in sh:
            if isinstance(sh[k], flow.Tensor) and sh[k].numel() > 1:
                _close(sd[k], sh[k], dtype)


@cuda
def test_update_keeps_parameters_on_the_device_and_bumps_versions():
    p = flow.randn(1000, device=DEV).requires_grad_()
    p.grad = flow.ones(1000, device=DEV)
    opt = flow.optim.Adam([p], lr=0.1)
    ptr = p.data_ptr()
    opt.step()
    assert p.device.type == DEV and p.data_ptr() == ptr
    assert opt.state[p]["exp_avg"].device.type == DEV
    np.testing.assert_allclose(opt.state[p]["exp_avg"].cpu().numpy(), np.full(1000, 0.1), rtol=1e-6)


@cuda
@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.05, momentum=0.9)), ("Adam", dict(lr=0.01))])
def test_batched_update_of_many_parameters(name, kw):
    """Parameters of one functor share launches of up to 32 (Note [CUDA optimizer updates]): more
    than a batch holds, sizes around the 4096-element block, an empty one, dtypes alternating
    (a new batch at each switch), a non-contiguous one and, for Adam, one parameter a step ahead
    (other constants: a batch of its own); every one matches the CPU's update."""
    sizes = [4096, 4097, 1, 0, 12289, 4095, 700, 3] * 9
    rng = np.random.default_rng(2)

    def make(device):
        ps = []
        for k, n in enumerate(sizes):
            dt = flow.float16 if k % 11 == 5 else flow.float32
            ps.append(flow.tensor(rng.standard_normal(n).astype("float32")).to(dt).to(device).requires_grad_())
        w = flow.tensor(rng.standard_normal((64, 65)).astype("float32")).to(device)
        ps.insert(40, w.t().detach().requires_grad_())
        return ps

    host, dev = make("cpu"), make(DEV)
    for h, d in zip(host, dev):  # the same starting values on both devices
        d.data.copy_(h.data.to(DEV))
    oh, od = getattr(flow.optim, name)(host, **kw), getattr(flow.optim, name)(dev, **kw)
    for step in range(3):
        for k, (h, d) in enumerate(zip(host, dev)):
            g = flow.tensor(rng.standard_normal(tuple(h.shape)).astype("float32")).to(h.dtype)
            h.grad, d.grad = g, g.to(DEV)
        if step == 1 and name == "Adam":  # parameter 7 a step ahead from here on
            oh.state[host[7]]["step"] += 1
            od.state[dev[7]]["step"] += 1
        oh.step()
        od.step()
    for h, d in zip(host, dev):
        _close(d, h, "float16" if h.dtype == flow.float16 else "float32")
