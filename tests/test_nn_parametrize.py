"""nn.utils.parametrize and nn.utils.parametrizations against torch: the parametrized value,
state-dict keys, gradients of the originals, right_inverse on assignment, chains, cached(),
removal (leave_parametrized both ways), and weight_norm / spectral_norm on the same state."""

import numpy as np
import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow parametrize")
RNG = np.random.default_rng(0)


def _sym(L):
    class Symmetric(L.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    return Symmetric()


def _scale(L):
    class Scale(L.nn.Module):
        def forward(self, X):
            return 2 * X

        def right_inverse(self, A):
            return A / 2

    return Scale()


def _pair(L, n_in=4, n_out=4, seed=0):
    m = L.nn.Linear(n_in, n_out)
    rng = np.random.default_rng(seed)
    with L.no_grad():
        m.weight.copy_(L.tensor(rng.standard_normal((n_out, n_in)).astype(np.float32)))
        m.bias.copy_(L.tensor(rng.standard_normal(n_out).astype(np.float32)))
    return m


def _check_same(fm, tm, x):
    assert list(fm.state_dict()) == list(tm.state_dict())
    for (k, a), (_, b) in zip(fm.state_dict().items(), tm.state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6, err_msg=k)
    fy, ty = fm(flow.tensor(x)), tm(torch.tensor(x))
    np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    fy.pow(2).sum().backward(), ty.pow(2).sum().backward()
    for (k, a), (_, b) in zip(fm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_custom_parametrizations_chain_and_assignment():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    fm, tm = _pair(flow), _pair(torch)
    for L, m in ((flow, fm), (torch, tm)):
        P = L.nn.utils.parametrize
        P.register_parametrization(m, "weight", _sym(L))
        P.register_parametrization(m, "weight", _scale(L))
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
        assert P.type_before_parametrizations(m) is L.nn.Linear
    assert type(fm).__name__ == type(tm).__name__ == "ParametrizedLinear"
    w = fm.weight
    np.testing.assert_allclose(w.detach().numpy(), w.detach().numpy().T)
    _check_same(fm, tm, x)
    new = RNG.standard_normal((4, 4)).astype(np.float32)
    new = new + new.T
    fm.weight, tm.weight = flow.tensor(new), torch.tensor(new)  # through the right inverses
    np.testing.assert_allclose(fm.weight.detach().numpy(), new, rtol=1e-6)
    np.testing.assert_allclose(fm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6)
    with flow.nn.utils.parametrize.cached():
        assert fm.weight is fm.weight
    assert fm.weight is not fm.weight


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    fm, tm = _pair(flow), _pair(torch)
    for L, m in ((flow, fm), (torch, tm)):
        L.nn.utils.parametrize.register_parametrization(m, "weight", _scale(L))
        L.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
    assert type(fm) is flow.nn.Linear and not hasattr(fm, "parametrizations")
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    np.testing.assert_allclose(fm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6)
    with pytest.raises(ValueError):
        flow.nn.utils.parametrize.remove_parametrizations(fm, "weight")


def test_registration_errors():
    P = flow.nn.utils.parametrize

    class Shrink(flow.nn.Module):
        def forward(self, X):
            return X[:2]

    with pytest.raises(ValueError, match="shape"):
        P.register_parametrization(flow.nn.Linear(3, 4), "weight", Shrink())
    P.register_parametrization(flow.nn.Linear(3, 4), "weight", Shrink(), unsafe=True)
    with pytest.raises(ValueError, match="does not have"):
        P.register_parametrization(flow.nn.Linear(3, 4), "nothing", Shrink())


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_against_torch(dim):
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    fm = flow.nn.utils.parametrizations.weight_norm(_pair(flow, 5, 4), dim=dim)
    tm = torch.nn.utils.parametrizations.weight_norm(_pair(torch, 5, 4), dim=dim)
    _check_same(fm, tm, x)


@pytest.mark.parametrize("train", [True, False])
def test_spectral_norm_against_torch(train):
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    fm = flow.nn.utils.parametrizations.spectral_norm(_pair(flow, 5, 4), n_power_iterations=2)
    tm = torch.nn.utils.parametrizations.spectral_norm(_pair(torch, 5, 4), n_power_iterations=2)
    fm.load_state_dict({k: flow.tensor(v.numpy()) for k, v in tm.state_dict().items()})  # the same u, v
    fm.train(train), tm.train(train)
    _check_same(fm, tm, x)
    sigma = np.linalg.svd(tm.parametrizations.weight.original.detach().numpy(), compute_uv=False)[0]
    if not train:  # eval: the stored u, v (15 iterations at registration) give about sigma
        np.testing.assert_allclose(fm.weight.detach().numpy() * sigma, fm.parametrizations.weight.original.detach().numpy(),
                                   rtol=5e-2, atol=1e-3)
    conv = flow.nn.utils.parametrizations.spectral_norm(flow.nn.ConvTranspose2d(3, 6, 2))
    assert conv.parametrizations.weight[0].dim == 1
