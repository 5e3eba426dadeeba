"""Complex dtypes (Note [Complex dtypes] in src/core/dtype.h): dtype objects and promotion,
creation from Python / numpy, numpy()/item()/printing, the views real/imag/view_as_real/
view_as_complex (shared memory), conj, autograd conventions (conjugate Wirtinger derivatives,
checked by finite differences on the real and imaginary parts), shape/index/copy ops, and the
RuntimeError of ops without a complex meaning. Per-op forward/backward against torch over the
sample table: tests/opinfo (complex.py and the COMPLEX dtypes of pointwise/reduce/matmul)."""

import re

import numpy as np
import pytest
import torch

from harness import assert_close, flow

RNG = np.random.default_rng(0)
CDTYPES = ["complex64", "complex128"]


def crand(shape, dtype="complex128"):
    v = RNG.uniform(-2, 2, shape) + 1j * RNG.uniform(-2, 2, shape)
    return v.astype(dtype)


def both(a):
    """(flow, torch) tensors with a's values."""
    return flow.tensor(a), torch.tensor(a)


# ---------------------------------------------------------------------------
# dtypes, promotion, creation


def test_dtype_objects():
    assert flow.cfloat is flow.complex64 and flow.cdouble is flow.complex128
    assert flow.complex64.is_complex and not flow.complex64.is_floating_point
    assert not flow.float32.is_complex
    assert flow.complex64.itemsize == 8 and flow.complex128.itemsize == 16
    assert repr(flow.complex128) == "oneflow.complex128"


@pytest.mark.parametrize("a,b", [("float32", "complex64"), ("float64", "complex64"),
                                 ("float16", "complex64"), ("int64", "complex128"),
                                 ("bool", "complex64"), ("complex64", "complex128")])
def test_promote_types(a, b):
    got = flow.promote_types(getattr(flow, a), getattr(flow, b))
    want = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert str(got).split(".")[1] == str(want).split(".")[1]


def test_result_type_with_python_complex():
    x = flow.ones(2, dtype=flow.float32)
    assert (x * 1j).dtype == flow.complex64
    assert (flow.ones(2, dtype=flow.float64) + 2j).dtype == flow.complex128
    assert (flow.ones(2, dtype=flow.int64) + 1j).dtype == flow.complex64
    assert (flow.ones(2, dtype=flow.complex64) + 2.5).dtype == flow.complex64
    assert (flow.ones(2, dtype=flow.complex64) + flow.ones((), dtype=flow.float64)).dtype == flow.complex64
    assert (flow.ones(2, dtype=flow.complex64) + flow.ones(2, dtype=flow.float64)).dtype == flow.complex128
    t = torch.ones(2) * (1 + 2j)
    assert_close(flow.ones(2) * (1 + 2j), t)


def test_tensor_from_python_and_numpy():
    t = flow.tensor([1 + 2j, 3 - 4j])
    assert t.dtype == flow.complex64
    assert t.is_complex() and flow.is_complex(t) and not t.is_floating_point()
    assert t.tolist() == [1 + 2j, 3 - 4j]
    a = crand((2, 3), "complex128")
    assert flow.tensor(a).dtype == flow.complex128
    assert flow.tensor(a.astype(np.complex64)).dtype == flow.complex64
    np.testing.assert_array_equal(flow.tensor(a).numpy(), a)
    assert flow.tensor([1.0, 2.0], dtype=flow.complex128).dtype == flow.complex128
    flow.set_default_dtype(flow.float64)
    try:
        assert flow.tensor([1j]).dtype == flow.complex128
    finally:
        flow.set_default_dtype(flow.float32)


def test_from_numpy_shares_memory():
    a = crand((3,), "complex64")
    t = flow.from_numpy(a)
    assert t.dtype == flow.complex64
    a[1] = 7 - 1j
    assert t[1].item() == 7 - 1j
    n = t.numpy()
    n[0] = 5j
    assert a[0] == 5j


def test_item_and_scalar_conversion():
    t = flow.tensor(2 - 3j, dtype=flow.complex128)
    assert t.item() == 2 - 3j and isinstance(t.item(), complex)
    assert complex(t) == 2 - 3j
    with pytest.raises(TypeError):
        int(flow.tensor(1 + 1j))


@pytest.mark.parametrize("vals", [[1 + 2j, 3 - 4j], [0.5 + 0j, -1.25 - 2j], [1e-5 + 1e5j, 2j],
                                  [[1 + 1j, -2j], [3 + 0j, 4.5 + 1j]], [float("nan") + 1j, float("inf") * 1j],
                                  [], 1 + 1j])
@pytest.mark.parametrize("dtype", CDTYPES)
def test_printing_like_torch(vals, dtype):
    f = flow.tensor(vals, dtype=getattr(flow, dtype))
    t = torch.tensor(vals, dtype=getattr(torch, dtype))
    # The body (numbers and layout) is torch's; the dtype suffix is always shown here and may
    # wrap onto its own line (tests/test_tensor_str.py checks the suffix layout).
    got = repr(f)
    assert f"dtype=oneflow.{dtype}" in got
    strip = lambda r: re.sub(r",\s*dtype=\w+\.\w+", "", r)  # noqa: E731
    assert strip(got) == strip(repr(t))


# ---------------------------------------------------------------------------
# views and construction


def test_real_imag_are_views():
    a = crand((2, 3), "complex64")
    x = flow.tensor(a)
    r, i = x.real, x.imag
    assert r.dtype == flow.float32 and i.dtype == flow.float32
    np.testing.assert_array_equal(r.numpy(), a.real)
    np.testing.assert_array_equal(i.numpy(), a.imag)
    r[0, 0] = 9.0
    i[1, 2] = -9.0
    assert x[0, 0].item().real == 9.0 and x[1, 2].item().imag == -9.0
    x.imag = flow.zeros(2, 3)
    assert np.all(x.numpy().imag == 0)
    # a real tensor's .real is itself (as a view); .imag raises
    y = flow.ones(3)
    assert y.real._shares_storage(y)
    with pytest.raises(RuntimeError, match="imag"):
        y.imag


def test_view_as_real_and_complex_share_memory():
    a = crand((2, 3), "complex128")
    x = flow.tensor(a)
    v = flow.view_as_real(x)
    assert tuple(v.shape) == (2, 3, 2) and v.dtype == flow.float64
    assert_close(v, torch.view_as_real(torch.tensor(a)))
    v[0, 0, 1] = 5.0
    assert x[0, 0].item().imag == 5.0
    back = flow.view_as_complex(v)
    assert back._shares_storage(x)
    assert_close(back, torch.tensor(x.numpy()))
    # non-contiguous: a column of a transposed view
    ft, tt = both(crand((3, 4)))
    assert_close(flow.view_as_real(ft.t()[1]), torch.view_as_real(tt.t()[1]))


@pytest.mark.parametrize("shape,err", [((3,), "last dimension of size 2"), ((), "one or more"),
                                       ((2, 3), "size 2")])
def test_view_as_complex_errors(shape, err):
    with pytest.raises(RuntimeError, match=err):
        flow.view_as_complex(flow.ones(shape))
    with pytest.raises(RuntimeError, match="stride"):
        flow.view_as_complex(flow.ones(2, 2).t())


def test_complex_and_polar():
    re, im = RNG.uniform(-1, 1, (3, 4)), RNG.uniform(-1, 1, (4,))
    assert_close(flow.complex(flow.tensor(re), flow.tensor(im)), torch.complex(torch.tensor(re), torch.tensor(im)))
    ab, an = RNG.uniform(0.1, 2, (5,)).astype(np.float32), RNG.uniform(-3, 3, (5,)).astype(np.float32)
    assert_close(flow.polar(flow.tensor(ab), flow.tensor(an)), torch.polar(torch.tensor(ab), torch.tensor(an)),
                 rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="complex"):
        flow.complex(flow.ones(2), flow.ones(2, dtype=flow.float64))
    with pytest.raises(RuntimeError, match="polar"):
        flow.polar(flow.ones(2, dtype=flow.int64), flow.ones(2, dtype=flow.int64))


def test_conj_is_eager():
    a = crand((4,), "complex64")
    x = flow.tensor(a)
    c = x.conj()
    assert not c.is_conj() and not flow.is_conj(c)
    assert flow.resolve_conj(c) is c
    np.testing.assert_array_equal(c.numpy(), np.conj(a))
    assert not c._shares_storage(x)  # materialised (docs/oneflow_differences.md)
    np.testing.assert_array_equal(flow.conj_physical(x).numpy(), np.conj(a))
    r = flow.ones(3)
    assert r.conj()._shares_storage(r)


def test_sgn_and_abs_angle():
    f, t = both(np.array([3 + 4j, 0j, -2j, 1 + 0j], np.complex64))
    assert_close(flow.sgn(f), torch.sgn(t))
    assert_close(flow.abs(f), torch.abs(t))
    assert_close(flow.angle(f), torch.angle(t))
    assert_close(flow.isreal(f), torch.isreal(t))


# ---------------------------------------------------------------------------
# shape / index / copy ops


@pytest.mark.parametrize("dtype", CDTYPES)
def test_shape_index_copy_ops(dtype):
    a = crand((3, 4), dtype)
    b = crand((3, 4), dtype)
    f, t = both(a)
    fb, tb = both(b)
    assert_close(flow.cat([f, fb], 1), torch.cat([t, tb], 1))
    assert_close(flow.stack([f, fb], 0), torch.stack([t, tb], 0))
    assert_close(f.reshape(2, 6), t.reshape(2, 6))
    assert_close(f.t().contiguous(), t.t().contiguous())
    assert_close(f.permute(1, 0)[1:, ::2], t.permute(1, 0)[1:, ::2])
    assert_close(f.flip(0), t.flip(0))
    assert_close(f.clone(), t.clone())
    idx = [2, 0, 0]
    assert_close(f[flow.tensor(idx)], t[torch.tensor(idx)])
    assert_close(f[f.abs() > 1.5], t[t.abs() > 1.5])
    assert_close(flow.where(f.abs() > 1, f, fb), torch.where(t.abs() > 1, t, tb))
    g, u = f.clone(), t.clone()
    g[1] = 1 + 1j
    u[1] = 1 + 1j
    g[flow.tensor([0, 2]), 1] = fb[0, :2]
    u[torch.tensor([0, 2]), 1] = tb[0, :2]
    assert_close(g, u)
    # casts both ways and between complex dtypes
    other = "complex128" if dtype == "complex64" else "complex64"
    assert_close(f.to(getattr(flow, other)), t.to(getattr(torch, other)))
    assert_close(flow.ones(2, 3).to(getattr(flow, dtype)), torch.ones(2, 3).to(getattr(torch, dtype)))
    assert_close(f.to(flow.float64), t.real.to(torch.float64))  # the real part, as torch (with a warning)
    h = flow.zeros(3, 4, dtype=getattr(flow, dtype))
    h.copy_(f)
    assert_close(h, t)
    h.copy_(flow.ones(4))
    assert_close(h, torch.ones(3, 4, dtype=getattr(torch, dtype)))


def test_inplace_arithmetic():
    a, b = crand((2, 3)), crand((3,))
    f, t = both(a)
    fb, tb = both(b)
    f.mul_(fb).add_(1j).div_(fb + 3).sub_(2)
    t.mul_(tb).add_(1j).div_(tb + 3).sub_(2)
    assert_close(f, t)
    r = flow.ones(3)
    with pytest.raises(RuntimeError, match="can't be cast"):
        r.add_(flow.tensor([1j, 2j, 3j]))


# ---------------------------------------------------------------------------
# ops without a complex meaning


@pytest.mark.parametrize("name,call", [
    ("lt", lambda x: x < x), ("gt", lambda x: flow.gt(x, 1)), ("max", lambda x: x.max()),
    ("clamp", lambda x: x.clamp(0, 1)), ("floor", lambda x: x.floor()), ("sort", lambda x: x.sort()),
    ("relu", lambda x: flow.relu(x)), ("amax", lambda x: x.amax(0)), ("minimum", lambda x: flow.minimum(x, x)),
    ("atan2", lambda x: flow.atan2(x, x)), ("erf", lambda x: x.erf()), ("cummax", lambda x: x.cummax(0)),
])
def test_ops_without_complex_meaning_raise(name, call):
    x = flow.tensor([1 + 1j, 2 - 1j])
    with pytest.raises(RuntimeError) as e:
        call(x)
    msg = str(e.value)
    assert name in msg and "Complex" in msg, msg


# ---------------------------------------------------------------------------
# autograd


def test_backward_of_complex_scalar_raises():
    x = flow.tensor([1 + 1j, 2j], requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (x * x).sum().backward()
    y = (x * x.conj()).real.sum()
    y.backward()
    assert_close(x.grad, torch.tensor([2 + 2j, 4j], dtype=torch.complex64))


def _fd_grad(loss, z, eps=1e-6):
    """dL/dx + i dL/dy by central differences (PyTorch's gradient of a real loss)."""
    g = np.zeros_like(z)
    for k in range(z.size):
        for unit in (1.0, 1j):
            p, m = z.copy(), z.copy()
            p.reshape(-1)[k] += eps * unit
            m.reshape(-1)[k] -= eps * unit
            g.reshape(-1)[k] += unit * (loss(p) - loss(m)) / (2 * eps)
    return g


FD_CASES = {
    "mul": lambda lib, z, w: z * w,
    "div": lambda lib, z, w: z / (w + 3),
    "exp": lambda lib, z, w: lib.exp(z) * w,
    "log": lambda lib, z, w: lib.log(z + 3) * w,
    "sqrt": lambda lib, z, w: lib.sqrt(z + 3) * w,
    "pow": lambda lib, z, w: (z + 3) ** (w * 0.5),
    "reciprocal": lambda lib, z, w: lib.reciprocal(z + 3),
    "sin_cos": lambda lib, z, w: lib.sin(z) * lib.cos(w * z),
    "tanh_sigmoid": lambda lib, z, w: lib.tanh(z * 0.5) + lib.sigmoid(z * w * 0.3),
    "abs_angle": lambda lib, z, w: lib.abs(z) * w + lib.angle(z),
    "conj_real_imag": lambda lib, z, w: lib.conj(z) * w + z.real * z.imag,
    "sum_mean_prod": lambda lib, z, w: (z * w).sum(0) + z.mean(1, keepdim=True) + (z * 0.5).prod(1, keepdim=True),
    "matmul": lambda lib, z, w: lib.matmul(z, w.t()),
    "view_as_real": lambda lib, z, w: lib.view_as_complex(lib.view_as_real(z) * 2.0) * w,
}


@pytest.mark.parametrize("name", sorted(FD_CASES))
def test_gradients_finite_differences_and_torch(name):
    f = FD_CASES[name]
    z0, w0 = crand((2, 3)), crand((2, 3))
    gout = crand(f(torch, torch.tensor(z0), torch.tensor(w0)).shape)

    def loss_np(z):
        out = f(flow, flow.tensor(z), flow.tensor(w0)).numpy()
        return float(np.real(np.sum(out * np.conj(gout))))

    z = flow.tensor(z0, requires_grad=True)
    w = flow.tensor(w0, requires_grad=True)
    gz, gw = flow.autograd.grad(f(flow, z, w), [z, w], flow.tensor(gout), allow_unused=True)
    np.testing.assert_allclose(gz.numpy(), _fd_grad(loss_np, z0), rtol=1e-5, atol=1e-6)
    tz = torch.tensor(z0, requires_grad=True)
    tw = torch.tensor(w0, requires_grad=True)
    rz, rw = torch.autograd.grad(f(torch, tz, tw), [tz, tw], torch.tensor(gout), allow_unused=True)
    assert_close(gz, rz, rtol=1e-9, atol=1e-10)
    if rw is not None:
        assert_close(gw, rw, rtol=1e-9, atol=1e-10)


def test_gradient_into_real_leaf():
    """A real input mixed into a complex computation gets the real part of the gradient."""
    x0 = RNG.uniform(-1, 1, (4,))
    c0 = crand((4,))
    x = flow.tensor(x0, requires_grad=True)
    (gx,) = flow.autograd.grad((x * flow.tensor(c0)).abs().sum(), [x])
    tx = torch.tensor(x0, requires_grad=True)
    (rx,) = torch.autograd.grad((tx * torch.tensor(c0)).abs().sum(), [tx])
    assert gx.dtype == flow.float64
    assert_close(gx, rx)
    re = flow.tensor(x0, requires_grad=True)
    im = flow.tensor(x0 * 2, requires_grad=True)
    g = flow.autograd.grad((flow.complex(re, im) * flow.tensor(c0)).abs().sum(), [re, im])
    tre = torch.tensor(x0, requires_grad=True)
    tim = torch.tensor(x0 * 2, requires_grad=True)
    r = torch.autograd.grad((torch.complex(tre, tim) * torch.tensor(c0)).abs().sum(), [tre, tim])
    assert_close(list(g), list(r))


# ---------------------------------------------------------------------------
# random fills, type names, ldexp


@pytest.mark.parametrize("dtype", CDTYPES)
def test_random_complex_parts(dtype):
    # independent parts: uniform each in [0, 1); normal each with variance 1/2 (E|z|^2 = 1)
    flow.manual_seed(3)
    r = flow.rand(20000, dtype=getattr(flow, dtype))
    n = flow.randn(20000, dtype=getattr(flow, dtype))
    assert r.dtype == n.dtype == getattr(flow, dtype)
    for part in (r.real, r.imag):
        assert 0 <= part.min().item() and part.max().item() < 1
        assert abs(part.mean().item() - 0.5) < 0.02
    assert abs(n.real.var().item() - 0.5) < 0.03 and abs(n.imag.var().item() - 0.5) < 0.03
    assert abs(flow.corrcoef(flow.stack([n.real, n.imag]))[0, 1].item()) < 0.05
    z = flow.empty(20000, dtype=getattr(flow, dtype)).normal_(2.0, 3.0)
    assert abs(z.real.mean().item() - 2) < 0.1 and abs(z.imag.mean().item() - 2) < 0.1
    assert abs(z.real.std().item() - 3 / 2 ** 0.5) < 0.1
    u = flow.empty(100, dtype=getattr(flow, dtype))[::2].uniform_(-1.0, 1.0)  # non-contiguous
    assert u.real.min().item() >= -1 and u.imag.max().item() < 1
    assert flow.randn_like(n).dtype == n.dtype and flow.rand_like(r).shape == r.shape
    flow.manual_seed(3)
    assert flow.equal(flow.rand(20000, dtype=getattr(flow, dtype)), r)  # seeded


def test_random_complex_refusals():
    x = flow.zeros(3, dtype=flow.complex64)
    with pytest.raises(RuntimeError, match="exponential_"):
        x.exponential_()
    with pytest.raises(RuntimeError, match="randint.*integral, floating-point and boolean"):
        flow.randint(0, 3, (2,), dtype=flow.complex64)


def test_type_names():
    assert flow.tensor([1j]).type() == "oneflow.ComplexFloatTensor" == flow.typename(flow.tensor([1j]))
    assert flow.tensor([1j], dtype=flow.complex128).type() == "oneflow.ComplexDoubleTensor"
    assert flow.ones(2).type("oneflow.ComplexFloatTensor").dtype == flow.complex64
    with pytest.raises(TypeError, match="dtype"):
        flow.ones(2).type(3)


def test_ldexp_promotes_as_torch():
    a = crand((3,), "complex64")
    for other in (np.array([1.0, 2.0, -1.0], np.float32), np.array([1.0, 2.0, 3.0]), np.array([1, 2, 3])):
        f = flow.ldexp(flow.tensor(a), flow.tensor(other))
        t = torch.ldexp(torch.tensor(a), torch.tensor(other))
        assert str(f.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        assert_close(f, t)
    h = flow.ldexp(flow.ones(2, dtype=flow.float16), flow.tensor([1.0, 2.0]))
    assert h.dtype == flow.float32  # half * float32 tensor, as torch


@pytest.mark.parametrize("start,end,steps,dtype", [
    (0, 1 + 1j, 3, None), (1j, 2, 4, None), (0, 1, 3, "complex128"), (1 + 2j, -3 - 1j, 7, "complex128"),
    (0, 1 + 1j, 1, None), (0, 1 + 1j, 0, None), (2.5, 0.5j, 6, "complex64")])
def test_linspace_and_logspace_with_complex_ends(start, end, steps, dtype):
    """Complex end points make a complex result (each part spaced linearly; logspace is base to
    those powers), the default complex dtype unless one is given, as torch."""
    for name, kw in [("linspace", {}), ("logspace", {"base": 2.0})]:
        tk = {"dtype": getattr(torch, dtype)} if dtype else {}
        fk = {"dtype": getattr(flow, dtype)} if dtype else {}
        want = getattr(torch, name)(start, end, steps, **tk, **kw)
        got = getattr(flow, name)(start, end, steps, **fk, **kw)
        assert_close(got, want)


def test_linspace_with_complex_ends_refuses_a_real_dtype():
    for name in ("linspace", "logspace"):
        with pytest.raises(RuntimeError, match=name + r"\(\): inferred dtype .* can't be safely cast to passed dtype"):
            getattr(flow, name)(0, 1 + 1j, 3, dtype=flow.float32)
