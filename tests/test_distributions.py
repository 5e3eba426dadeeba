"""flow.distributions against torch.distributions: log_prob / entropy / cdf / moments on the
same parameters, shapes, argument and sample validation, gradients through rsample and
log_prob, and sample statistics."""

import numpy as np
import pytest
import torch

from harness import SHIM, flow, to_numpy

pytestmark = pytest.mark.skipif(bool(SHIM), reason="compares oneflow with torch")

RTOL = 1e-5


def both(v, dtype="float32", requires_grad=False):
    return (
        flow.tensor(v, dtype=getattr(flow, dtype), requires_grad=requires_grad),
        torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=requires_grad),
    )


def close(f, t, rtol=RTOL, atol=1e-6):
    np.testing.assert_allclose(to_numpy(f.detach()), t.detach().numpy(), rtol=rtol, atol=atol)


def make(lib, name, *args, **kwargs):
    return getattr(lib.distributions, name)(*args, **kwargs)


CASES = {
    "Normal": (
        lambda v: (v["loc"], v["scale"]),
        {"loc": [[0.0, 1.5], [-2.0, 0.3]], "scale": [[1.0, 0.5], [2.0, 3.0]]},
        [[0.1, 2.0], [-1.0, 4.0]],
    ),
    "Uniform": (
        lambda v: (v["low"], v["high"]),
        {"low": [0.0, -1.0, 2.0], "high": [1.0, 3.0, 2.5]},
        [0.5, 2.9, 2.0],
    ),
    "Bernoulli": (lambda v: (), {"probs": [0.1, 0.5, 0.9, 0.999]}, [1.0, 0.0, 1.0, 0.0]),
    "BernoulliLogits": (lambda v: (), {"logits": [-3.0, 0.0, 2.0, 30.0]}, [1.0, 0.0, 0.0, 1.0]),
    "Categorical": (lambda v: (), {"probs": [[0.1, 0.2, 0.7], [1.0, 1.0, 2.0]]}, [2.0, 0.0]),
    "CategoricalLogits": (
        lambda v: (),
        {"logits": [[0.0, 1.0, -1.0], [5.0, 5.0, 5.0]]},
        [1.0, 2.0],
    ),
}


def _build(case, lib, dtype="float32"):
    posf, params, _ = CASES[case]
    name = case.replace("Logits", "")
    t = {k: lib.tensor(v, dtype=getattr(lib, dtype)) for k, v in params.items()}
    pos = posf(t)
    kw = {} if pos else t
    return make(lib, name, *pos, **kw)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_match_torch(case, dtype):
    fd, td = _build(case, flow, dtype), _build(case, torch, dtype)
    value = CASES[case][2]
    vdtype = "int64" if case.startswith("Categorical") else dtype
    fv = flow.tensor(value, dtype=getattr(flow, vdtype))
    tv = torch.tensor(value, dtype=getattr(torch, vdtype))
    assert tuple(fd.batch_shape) == tuple(td.batch_shape)
    assert tuple(fd.event_shape) == tuple(td.event_shape)
    close(fd.log_prob(fv), td.log_prob(tv))
    close(fd.entropy(), td.entropy())
    close(fd.perplexity(), td.perplexity(), rtol=1e-4)
    for attr in ("mean", "variance", "stddev", "mode"):
        f, t = getattr(fd, attr), getattr(td, attr)
        np.testing.assert_allclose(
            to_numpy(f).astype(np.float64),
            t.double().numpy(),
            rtol=RTOL,
            equal_nan=True,
            err_msg=attr,
        )
    if case in ("Normal", "Uniform"):
        close(fd.cdf(fv), td.cdf(tv))
    if case.startswith(("Bernoulli", "Categorical")):
        close(fd.probs, td.probs)
        close(fd.logits, td.logits, atol=1e-5)
        np.testing.assert_array_equal(
            to_numpy(fd.enumerate_support()), td.enumerate_support().numpy()
        )
        assert tuple(fd.enumerate_support(expand=False).shape) == tuple(
            td.enumerate_support(expand=False).shape
        )


@pytest.mark.parametrize("case", list(CASES))
def test_sample_shapes(case):
    fd, td = _build(case, flow), _build(case, torch)
    for shape in [(), (5,), (2, 3)]:
        fs, ts = fd.sample(shape), td.sample(shape)
        assert tuple(fs.shape) == tuple(ts.shape)
        assert fs.dtype == getattr(flow, str(ts.dtype).split(".")[1])
        assert not fs.requires_grad
    assert fd.has_rsample == td.has_rsample
    assert fd.has_enumerate_support == td.has_enumerate_support


def test_sample_statistics():
    flow.manual_seed(0)
    n = 200_000
    s = to_numpy(
        flow.distributions.Normal(flow.tensor([1.0, -2.0]), flow.tensor([0.5, 3.0])).sample((n,))
    )
    np.testing.assert_allclose(s.mean(0), [1.0, -2.0], atol=0.03)
    np.testing.assert_allclose(s.std(0), [0.5, 3.0], rtol=0.01)
    u = to_numpy(flow.distributions.Uniform(2.0, 5.0).sample((n,)))
    assert u.min() >= 2.0 and u.max() < 5.0 and abs(u.mean() - 3.5) < 0.02
    b = to_numpy(flow.distributions.Bernoulli(probs=flow.tensor([0.2, 0.7])).sample((n,)))
    np.testing.assert_allclose(b.mean(0), [0.2, 0.7], atol=0.005)
    c = to_numpy(flow.distributions.Categorical(probs=flow.tensor([0.1, 0.2, 0.7])).sample((n,)))
    np.testing.assert_allclose(np.bincount(c, minlength=3) / n, [0.1, 0.2, 0.7], atol=0.005)
    c2 = flow.distributions.Categorical(logits=flow.zeros(4, 3)).sample((7,))
    assert tuple(c2.shape) == (7, 4) and c2.dtype == flow.int64


def test_rsample_and_log_prob_gradients_match_torch():
    fl, tl = both([0.5, -1.0], requires_grad=True)
    fs, ts = both([1.0, 2.0], requires_grad=True)
    fv, tv = both([0.0, 0.5])
    flow.distributions.Normal(fl, fs).log_prob(fv).sum().backward()
    torch.distributions.Normal(tl, ts).log_prob(tv).sum().backward()
    close(fl.grad, tl.grad)
    close(fs.grad, ts.grad)
    # rsample = loc + eps * scale: d/dloc = 1, d/dscale = eps
    fl.grad = None
    fs.grad = None
    d = flow.distributions.Normal(fl, fs)
    x = d.rsample((1000,))
    x.sum().backward()
    assert to_numpy(fl.grad).tolist() == [1000.0, 1000.0]
    eps = (x.detach() - fl.detach()) / fs.detach()
    close(fs.grad, torch.tensor(to_numpy(eps.sum(0))), rtol=1e-4, atol=1e-3)
    fa, ta = both([0.0], requires_grad=True)
    fb, tb = both([2.0], requires_grad=True)
    flow.distributions.Uniform(fa, fb).entropy().sum().backward()
    torch.distributions.Uniform(ta, tb).entropy().sum().backward()
    close(fa.grad, ta.grad)
    close(fb.grad, tb.grad)
    fp, tp = both([0.3, 0.6], requires_grad=True)
    flow.distributions.Bernoulli(probs=fp).entropy().sum().backward()
    torch.distributions.Bernoulli(probs=tp).entropy().sum().backward()
    close(fp.grad, tp.grad, rtol=1e-4)


def test_argument_validation_like_torch():
    bad = [
        ("Normal", (0.0, -1.0), {}),
        ("Normal", (float("nan"), 1.0), {}),
        ("Bernoulli", (), {"probs": 1.5}),
        ("Bernoulli", (), {"probs": 0.5, "logits": 0.0}),
        ("Bernoulli", (), {}),
        ("Categorical", (), {"probs": [[0.5, -0.1]]}),
        ("Categorical", (), {}),
        ("Uniform", (1.0, 0.0), {}),
    ]
    for name, args, kwargs in bad:
        for lib in (flow, torch):
            kw = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
            with pytest.raises(ValueError):
                make(lib, name, *args, **kw)
    # validation off: no error
    flow.distributions.Normal(0.0, -1.0, validate_args=False)
    for lib in (flow, torch):
        d = make(lib, "Normal", lib.zeros(2), lib.ones(2))
        with pytest.raises(ValueError, match="broadcastable"):
            d.log_prob(lib.zeros(3))
        with pytest.raises(ValueError, match="Tensor"):
            d.log_prob([0.0, 0.0])
        with pytest.raises(ValueError, match="support"):
            make(lib, "Bernoulli", probs=lib.tensor([0.5])).log_prob(lib.tensor([0.5]))


def test_expand_and_repr():
    for lib in (flow, torch):
        d = make(lib, "Normal", lib.tensor(0.0), lib.tensor(1.0)).expand((3, 2))
        assert tuple(d.batch_shape) == (3, 2) and tuple(d.sample().shape) == (3, 2)
        c = make(lib, "Categorical", logits=lib.zeros(4)).expand((2,))
        assert tuple(c.sample().shape) == (2,)
    assert repr(flow.distributions.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert (
        repr(flow.distributions.Uniform(flow.zeros(2), flow.ones(2)))
        == "Uniform(low: oneflow.Size([2]), high: oneflow.Size([2]))"
    )
    assert repr(flow.distributions.constraints.positive) == repr(
        torch.distributions.constraints.positive
    )
    assert repr(flow.distributions.constraints.unit_interval) == repr(
        torch.distributions.constraints.unit_interval
    )
