"""oneflow.func (torch.func) against PyTorch: vmap (in_dims / out_dims structures, nesting,
randomness modes, zero-size batches, gradients through it, errors), grad / grad_and_value
(argnums, has_aux, nesting), vjp, jvp, jacrev / jacfwd, hessian, stack_module_state with
functional_call."""

import numpy as np
import pytest
import torch
import torch.func as tf

import oneflow as flow
import oneflow.func as ff

RNG = np.random.default_rng(0)


def _pair(*shape):
    a = RNG.standard_normal(shape)
    return flow.tensor(a), torch.tensor(a)


def _close(got, want, tol=1e-10):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, tol)
        return
    if isinstance(want, dict):
        assert set(got) == set(want)
        for k in want:
            _close(got[k], want[k], tol)
        return
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------------------------
# vmap


def test_vmap_basic_dims_and_structures():
    (fx, tx), (fy, ty) = _pair(4, 3), _pair(3, 4)
    f = lambda L: lambda x, y: (x * y).sum() + x.max()  # noqa: E731
    _close(ff.vmap(f(flow), in_dims=(0, 1))(fx, fy), tf.vmap(f(torch), in_dims=(0, 1))(tx, ty))
    g = lambda L: lambda x, y: L.outer(x, y)  # noqa: E731
    _close(ff.vmap(g(flow), in_dims=(0, None))(fx, fy[:, 0]), tf.vmap(g(torch), in_dims=(0, None))(tx, ty[:, 0]))
    h = lambda L: lambda d: (d["a"] * 2, {"b": d["b"].sum()})  # noqa: E731
    got = ff.vmap(h(flow), in_dims=({"a": 0, "b": 1},), out_dims=(1, 0))({"a": fx, "b": fy})
    want = tf.vmap(h(torch), in_dims=({"a": 0, "b": 1},), out_dims=(1, 0))({"a": tx, "b": ty})
    _close(got[0], want[0])
    _close(got[1]["b"], want[1]["b"])
    _close(ff.vmap(lambda x: x.t(), in_dims=-1, out_dims=-1)(fx), tf.vmap(lambda x: x.t(), in_dims=-1, out_dims=-1)(tx))
    assert flow.vmap is ff.vmap


def test_vmap_nested_and_kwargs():
    (fx, tx), (fy, ty) = _pair(2, 3, 5), _pair(5,)
    f = lambda L: lambda a, b, scale=1.0: (a * b).sum() * scale  # noqa: E731
    _close(ff.vmap(ff.vmap(f(flow), (0, None)), (0, None))(fx, fy, scale=2.0),
           tf.vmap(tf.vmap(f(torch), (0, None)), (0, None))(tx, ty, scale=2.0))


def test_vmap_zero_batch_and_unmapped_output():
    fx, tx = flow.zeros(0, 3), torch.zeros(0, 3)
    _close(ff.vmap(lambda x: x * 2)(fx), tf.vmap(lambda x: x * 2)(tx))
    got = ff.vmap(lambda x: (x.sum(), 7), out_dims=(0, None))(flow.ones(2, 3))
    assert got[1] == 7
    _close(got[0], torch.full((2,), 3.0, dtype=torch.float32))


def test_vmap_gradient_flows():
    (fx, tx), (fw, tw) = _pair(4, 3), _pair(3, 2)
    fw.requires_grad_(), tw.requires_grad_()
    ff.vmap(lambda x: (x @ fw).tanh().sum())(fx).sum().backward()
    tf.vmap(lambda x: (x @ tw).tanh().sum())(tx).sum().backward()
    _close(fw.grad, tw.grad)


def test_vmap_randomness():
    x = flow.ones(3, 4)
    with pytest.raises(RuntimeError, match="randomness"):
        ff.vmap(lambda t: t + flow.rand(4))(x)
    same = ff.vmap(lambda t: t + flow.rand(4), randomness="same")(x)
    assert np.allclose(same.numpy(), same.numpy()[0:1])
    diff = ff.vmap(lambda t: t + flow.rand(4), randomness="different")(x)
    assert not np.allclose(diff.numpy()[0], diff.numpy()[1])
    with pytest.raises(RuntimeError):
        ff.vmap(lambda t: t, randomness="sometimes")


@pytest.mark.parametrize("call", [
    lambda L, V: V(lambda x, y: x + y)(L.ones(2, 3), L.ones(3, 3)),             # sizes differ
    lambda L, V: V(lambda x: x, in_dims=None)(L.ones(2)),                       # in_dims None
    lambda L, V: V(lambda x: x, in_dims=(None,))(L.ones(2)),                    # nothing mapped
    lambda L, V: V(lambda x: 1.0)(L.ones(2, 3)),                                # non-tensor output
    lambda L, V: V(lambda x, n: x * n, in_dims=(0, 0))(L.ones(2), 3),           # mapped non-tensor
    lambda L, V: V(lambda x: x, in_dims=2)(L.ones(2, 3)),                       # dim out of range
])
def test_vmap_errors_match_torch(call):
    with pytest.raises(ValueError):
        call(torch, tf.vmap)
    with pytest.raises(ValueError):
        call(flow, ff.vmap)


# ---------------------------------------------------------------------------------------------
# grad and friends


def _f(L):
    return lambda x, y: (x.sin() * y).sum() + (x * x).sum() * y.sum()


def test_grad_argnums_and_value():
    (fx, tx), (fy, ty) = _pair(3), _pair(3)
    _close(ff.grad(_f(flow))(fx, fy), tf.grad(_f(torch))(tx, ty))
    _close(ff.grad(_f(flow), argnums=(0, 1))(fx, fy), tf.grad(_f(torch), argnums=(0, 1))(tx, ty))
    _close(ff.grad(_f(flow), argnums=-1)(fx, fy), tf.grad(_f(torch), argnums=-1)(tx, ty))
    g, v = ff.grad_and_value(_f(flow))(fx, fy)
    tg, tv = tf.grad_and_value(_f(torch))(tx, ty)
    _close(g, tg)
    _close(v, tv)
    assert not g.requires_grad and not v.requires_grad


def test_grad_has_aux_and_pytree_argument():
    fx, tx = _pair(4)
    f = lambda L: lambda p: ((p["w"] * p["b"]).sum(), p["w"].mean())  # noqa: E731
    fp, tp = {"w": fx, "b": fx * 2}, {"w": tx, "b": tx * 2}
    g, aux = ff.grad(f(flow), has_aux=True)(fp)
    tg, taux = tf.grad(f(torch), has_aux=True)(tp)
    _close(g, tg)
    _close(aux, taux)


def test_grad_nested_is_second_derivative():
    fx, tx = _pair(5)
    f = lambda x: (x ** 3).sum()  # noqa: E731
    inner = lambda L, G: lambda x: G(f)(x).sum()  # noqa: E731
    _close(ff.grad(inner(flow, ff.grad))(fx), tf.grad(inner(torch, tf.grad))(tx))


def test_grad_errors():
    with pytest.raises(RuntimeError, match="scalar"):
        ff.grad(lambda x: x * 2)(flow.ones(3))
    with pytest.raises(RuntimeError, match="argnums"):
        ff.grad(lambda x: x.sum(), argnums=3)(flow.ones(3))
    with pytest.raises(RuntimeError, match="floating point"):
        ff.grad(lambda x: x.sum())(flow.ones(3, dtype=flow.int64))


def test_vjp_and_jvp():
    (fx, tx), (fy, ty) = _pair(3), _pair(3)
    f = lambda L: lambda x, y: (x * y.exp(), x.sum() * y)  # noqa: E731
    out, fn = ff.vjp(f(flow), fx, fy)
    tout, tfn = tf.vjp(f(torch), tx, ty)
    _close(out, tout)
    (c0, tc0), (c1, tc1) = _pair(3), _pair(3)
    _close(fn((c0, c1)), tfn((tc0, tc1)))
    (u, tu), (v, tv) = _pair(3), _pair(3)
    _close(ff.jvp(f(flow), (fx, fy), (u, v)), tf.jvp(f(torch), (tx, ty), (tu, tv)))
    with pytest.raises(RuntimeError):
        ff.jvp(f(flow), (fx, fy), (u,))


def test_linearize_runs_func_once_and_matches_torch():
    (fx, tx), (fy, ty) = _pair(3), _pair(3)
    calls = []

    def f(x, y):
        calls.append(1)
        return x.sin() * y, (x * y).sum(), y * 0 + 2.0  # the last: affine, its jvp is y's tangent x 0
    out, jfn = ff.linearize(f, fx, fy)
    tout, tjfn = tf.linearize(f, tx, ty)
    calls.clear()
    _close(out, tout)
    for _ in range(2):
        (u, tu), (v, tv) = _pair(3), _pair(3)
        _close(jfn(u, v), tjfn(tu, tv))
    assert not calls  # jvp_fn reuses the graph of the one evaluation
    assert not out[0].requires_grad
    with pytest.raises(RuntimeError, match="linearize"):
        jfn(u)
    with pytest.raises(RuntimeError, match="linearize"):
        jfn(u, flow.ones(4, dtype=flow.float64))


def test_jacrev_jacfwd_hessian():
    (fx, tx), (fy, ty) = _pair(3), _pair(2)
    f = lambda L: lambda x, y: L.outer(x.sin(), y) * x.sum()  # noqa: E731
    for F_, T_ in ((ff.jacrev, tf.jacrev), (ff.jacfwd, tf.jacfwd)):
        _close(F_(f(flow))(fx, fy), T_(f(torch))(tx, ty))
        _close(F_(f(flow), argnums=(0, 1))(fx, fy), T_(f(torch), argnums=(0, 1))(tx, ty))
    s = lambda L: lambda x: (x.sin() * x.cumsum(0)).sum()  # noqa: E731
    _close(ff.hessian(s(flow))(fx), tf.hessian(s(torch))(tx))


def test_vmap_of_grad_per_sample_gradients():
    (fw, tw), (fx, tx) = _pair(3), _pair(5, 3)
    loss = lambda w, x: (w * x).sum().tanh()  # noqa: E731
    _close(ff.vmap(ff.grad(loss), in_dims=(None, 0))(fw, fx), tf.vmap(tf.grad(loss), in_dims=(None, 0))(tw, tx))


def test_stack_module_state_ensemble():
    flow.manual_seed(0)
    models = [flow.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = ff.stack_module_state(models)
    assert tuple(params["weight"].shape) == (4, 2, 3) and params["weight"].is_leaf
    x = flow.tensor(RNG.standard_normal((5, 3)))
    x = x.to(flow.float32)
    base = models[0]
    out = ff.vmap(lambda p, b: ff.functional_call(base, (p, b), (x,)))(params, buffers)
    want = flow.stack([m(x) for m in models])
    _close(out, want, 1e-6)
    with pytest.raises(RuntimeError):
        ff.stack_module_state([])
