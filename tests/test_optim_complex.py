"""Optimizers with complex parameters, against torch.optim: a complex parameter is updated as its
real view, two independent reals (the fused updates in src/ops/optim_util.h, Rprop / ASGD /
LBFGS in python/oneflow/optim), so second moments, averages and step sizes are per component."""
import numpy as np
import pytest
import torch

import oneflow as flow

RNG = np.random.default_rng(0)
P0 = [(RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64),
      RNG.standard_normal(5).astype(np.float32)]  # a real parameter in the same group
A = (RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))).astype(np.complex64)

CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.05, weight_decay=0.1)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, decoupled_weight_decay=True, weight_decay=0.1)),
    ("RAdam", dict(lr=0.05)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)),
    ("Adadelta", dict(lr=1.0, weight_decay=0.1)),
    ("Rprop", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, t0=2, weight_decay=0.1)),
    ("LBFGS", dict(lr=0.5, max_iter=4)),
    ("LBFGS", dict(lr=1.0, max_iter=4, line_search_fn="strong_wolfe")),
]


def _run(lib, name, kw, steps=6):
    # L-BFGS converges within the steps: float32 iterates near the optimum differ by rounding
    # (1e-4 here), so it runs in double precision (complex128), where the two agree to 1e-14.
    double = name == "LBFGS"
    params = [lib.nn.Parameter(lib.tensor(p.astype(np.complex128 if p.dtype == np.complex64 else np.float64)
                                          if double else p)) for p in P0]
    a = lib.tensor(A.astype(np.complex128) if double else A)
    opt = getattr(lib.optim, name)(params, **kw)

    def closure():
        opt.zero_grad()
        z, r = params
        y = a @ z  # a real loss of complex parameters, bounded below: |A z|^2, linear terms, a coupling
        loss = (y * y.conj()).real.sum() * 0.1 + (z.imag * 2).sum() + (r * r).sum() + (z.real.sum() - r[0]) ** 2
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    return [p.detach().numpy() for p in params], opt


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_complex_parameters_match_torch(name, kw):
    got, opt = _run(flow, name, kw)
    want, _ = _run(torch, name, kw)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5, err_msg=f"{name} {kw}")
    # the state of a complex parameter stays complex (as torch's state_dict shows it)
    st = opt.state[opt.param_groups[0]["params"][0]]
    for key, v in st.items():
        if isinstance(v, flow.Tensor) and v.shape == (3, 4):
            assert v.is_complex(), key


def test_lamb_refuses_complex_parameters():
    p = flow.nn.Parameter(flow.tensor(P0[0]))
    p.grad = flow.ones_like(p)
    with pytest.raises(TypeError, match=r"lamb_update\(\): params\[0\] must be a floating point tensor, got complex64"):
        flow.optim.LAMB([p]).step()
