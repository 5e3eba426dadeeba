"""PyTorch's ATen-signature top-level forms and the other names PyTorch has at the top level
(python/oneflow/_nn_ops.py, _creation.py, _indexing.py, _control_flow.py, linalg/_solve.py,
linalg/_lowrank.py) against PyTorch: batch_norm / instance_norm / constant_pad_nd / native_* (forward, statistics,
running-stat updates, backward), dropout_ forms, range, triangular_solve, svd_lowrank /
pca_lowrank, nonzero_static, as_strided_scatter, frombuffer / from_file, Tensor.narrow_copy."""

import warnings

import numpy as np
import pytest
import torch

import oneflow as flow


def _pair(a):
    a = np.ascontiguousarray(a)
    return flow.tensor(a), torch.tensor(a)


def _close(got, want, tol=1e-6):
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)


RNG = np.random.default_rng(0)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_aten_order(training):
    x = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    w, b = RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    fx, tx = _pair(x)
    fx.requires_grad_(), tx.requires_grad_()
    (fw, tw), (fb, tb) = _pair(w), _pair(b)
    frm, trm = _pair(np.zeros(3, np.float32))
    frv, trv = _pair(np.ones(3, np.float32))
    y = flow.batch_norm(fx, fw, fb, frm, frv, training, 0.1, 1e-5, True)
    ty = torch.batch_norm(tx, tw, tb, trm, trv, training, 0.1, 1e-5, True)
    _close(y, ty, 1e-5)
    _close(frm, trm, 1e-6)
    _close(frv, trv, 1e-6)
    y.pow(2).sum().backward()
    ty.pow(2).sum().backward()
    _close(fx.grad, tx.grad, 1e-4)


def test_instance_norm_and_constant_pad_nd():
    x = RNG.standard_normal((2, 3, 6)).astype(np.float32)
    fx, tx = _pair(x)
    _close(flow.instance_norm(fx, None, None, None, None, True, 0.1, 1e-5, True),
           torch.instance_norm(tx, None, None, None, None, True, 0.1, 1e-5, True), 1e-5)
    _close(flow.constant_pad_nd(fx, [1, 2, 0, 1], 3.5), torch.constant_pad_nd(tx, [1, 2, 0, 1], 3.5))


def test_native_layer_norm():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    w, b = RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal((3, 4)).astype(np.float32)
    (fx, tx), (fw, tw), (fb, tb) = _pair(x), _pair(w), _pair(b)
    for g, t in zip(flow.native_layer_norm(fx, [3, 4], fw, fb, 1e-5), torch.native_layer_norm(tx, [3, 4], tw, tb, 1e-5)):
        _close(g, t, 1e-5)


@pytest.mark.parametrize("training", [True, False])
def test_native_batch_norm(training):
    x = RNG.standard_normal((4, 3, 2, 2)).astype(np.float32)
    fx, tx = _pair(x)
    frm, trm = _pair(np.zeros(3, np.float32))
    frv, trv = _pair(np.ones(3, np.float32))
    got = flow.native_batch_norm(fx, None, None, frm, frv, training, 0.1, 1e-5)
    want = torch.native_batch_norm(tx, None, None, trm, trv, training, 0.1, 1e-5)
    for g, t in zip(got, want):
        _close(g, t, 1e-5)
    _close(frv, trv, 1e-6)


def test_native_group_norm():
    x = RNG.standard_normal((2, 6, 5)).astype(np.float32)
    fx, tx = _pair(x)
    for g, t in zip(flow.native_group_norm(fx, None, None, 2, 6, 5, 3, 1e-5),
                    torch.native_group_norm(tx, None, None, 2, 6, 5, 3, 1e-5)):
        _close(g, t, 1e-5)


def test_native_dropout():
    fx, tx = _pair(RNG.standard_normal((50, 40)).astype(np.float32))
    out, mask = flow.native_dropout(fx, 0.3, True)
    assert mask.dtype == flow.bool
    keep = mask.numpy()
    assert 0.6 < keep.mean() < 0.8
    np.testing.assert_allclose(out.numpy(), np.where(keep, fx.numpy() / 0.7, 0), rtol=1e-6)
    out, mask = flow.native_dropout(fx, 0.3, False)
    tout, tmask = torch.native_dropout(tx, 0.3, False)
    _close(out, tout)
    assert mask.numpy().all() and tmask.numpy().all()


def test_inplace_dropout_forms():
    fx = flow.ones(20, 30)
    r = flow.dropout_(fx, 0.5, True)
    assert r is fx
    vals = set(np.unique(fx.numpy()))
    assert vals <= {0.0, 2.0} and len(vals) == 2
    y = flow.ones(5)
    flow.dropout_(y, 0.5, False)
    assert (y.numpy() == 1).all()
    for shape in ((4, 3, 8, 8), (4, 3, 8)):  # (N, C, *): whole channels of each sample
        z = flow.ones(*shape)
        flow.feature_dropout_(z, 0.5, True)
        per_channel = z.numpy().reshape(12, -1)
        assert all(len(set(row)) == 1 for row in per_channel)
        assert set(np.unique(per_channel)) <= {0.0, 2.0}
        out = flow.feature_dropout(flow.ones(*shape), 0.5, True).numpy().reshape(12, -1)
        assert all(len(set(row)) == 1 for row in out)
    with pytest.raises(RuntimeError):
        flow.feature_dropout(flow.ones(3), 0.5, True)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        flow.dropout_(flow.ones(3), 1.5, True)


@pytest.mark.parametrize("args", [(1, 4), (0, 1, 0.25), (-1, 2, 0.5), (0, 0.3, 0.1), (3, 0, -0.5)])
def test_range_deprecated(args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.range(*args)
    with pytest.warns(UserWarning, match="deprecated"):
        got = flow.range(*args)
    _close(got, want)
    assert got.dtype == flow.float32


@pytest.mark.parametrize("upper,transpose,unit", [(True, False, False), (False, True, False), (True, True, True)])
def test_triangular_solve(upper, transpose, unit):
    a = np.triu(RNG.standard_normal((3, 3))) + 3 * np.eye(3)
    a = a if upper else a.T
    b = RNG.standard_normal((3, 2))
    (fa, ta), (fb, tb) = _pair(a), _pair(b)
    got = flow.triangular_solve(fb, fa, upper, transpose, unit)
    want = torch.triangular_solve(tb, ta, upper, transpose, unit)
    _close(got.solution, want.solution, 1e-10)
    _close(got.cloned_coefficient, want.cloned_coefficient)
    _close(fb.triangular_solve(fa, upper, transpose, unit)[0], want[0], 1e-10)


def test_svd_and_pca_lowrank():
    a = RNG.standard_normal((20, 8)) @ np.diag([10, 8, 6, 4, 2, 1, 0.5, 0.1]) @ np.linalg.qr(
        RNG.standard_normal((8, 8)))[0]
    fa, ta = _pair(a)
    U, S, V = flow.svd_lowrank(fa, q=3)
    assert tuple(U.shape) == (20, 3) and tuple(S.shape) == (3,) and tuple(V.shape) == (8, 3)
    _close(S, torch.linalg.svdvals(ta)[:3], 1e-10)
    np.testing.assert_allclose(np.abs((U.numpy().T @ a @ V.numpy())), np.diag(S.numpy()), atol=1e-9)
    U, S, V = flow.pca_lowrank(fa)
    tU, tS, tV = torch.pca_lowrank(ta, niter=10)
    _close(S, tS, 1e-6)
    np.testing.assert_allclose(np.abs(V.numpy()), np.abs(tV.numpy()), atol=1e-5)
    with pytest.raises(ValueError):
        flow.pca_lowrank(fa, q=9)


def test_nonzero_static_and_scatter():
    fx, tx = _pair(np.array([[0, 1, 0], [2, 0, 3]]))
    for size in (0, 2, 3, 5):
        _close(flow.nonzero_static(fx, size=size), torch.nonzero_static(tx, size=size))
        _close(fx.nonzero_static(size=size, fill_value=7), tx.nonzero_static(size=size, fill_value=7))
    (fa, ta), (fs, ts) = _pair(np.zeros((3, 4))), _pair(np.ones((2, 2)))
    _close(flow.as_strided_scatter(fa, fs, (2, 2), (4, 1), 1), torch.as_strided_scatter(ta, ts, (2, 2), (4, 1), 1))
    _close(fa.as_strided_scatter(fs, (2, 2), (1, 4)), ta.as_strided_scatter(ts, (2, 2), (1, 4)))
    assert (fa.numpy() == 0).all()
    with pytest.raises(RuntimeError, match="as_strided_scatter"):
        flow.as_strided_scatter(fa, fs, (3, 2), (4, 1))


def test_frombuffer_and_from_file(tmp_path):
    buf = bytearray(np.arange(6, dtype=np.float32).tobytes())
    t = flow.frombuffer(buf, dtype=flow.float32, count=4, offset=4)
    _close(t, torch.frombuffer(buf, dtype=torch.float32, count=4, offset=4))
    t[0] = 10.0  # shares the buffer
    assert np.frombuffer(buf, np.float32)[1] == 10.0
    p = tmp_path / "x.bin"
    np.arange(5, dtype=np.float64).tofile(p)
    _close(flow.from_file(str(p), size=5, dtype=flow.float64), torch.from_file(str(p), size=5, dtype=torch.float64))
    shared = flow.from_file(str(p), shared=True, size=5, dtype=flow.float64)
    shared[2] = -1.0
    del shared
    assert np.fromfile(p, np.float64)[2] == -1.0
    with pytest.raises(RuntimeError, match="from_file"):
        flow.from_file(str(p), size=9, dtype=flow.float64)


def test_small_tensor_names():
    fx, tx = _pair(np.arange(12.0).reshape(3, 4))
    c = fx.narrow_copy(1, 1, 2)
    _close(c, tx.narrow_copy(1, 1, 2))
    c[0, 0] = 100.0
    assert fx.numpy()[0, 1] == 1.0
    (fs, ts), (fi, ti) = _pair(np.array([9.0, 8.0])), _pair(np.array([0, 5]))
    _close(flow.put(fx, fi, fs), torch.put(tx, ti, ts))
    assert flow.get_device(fx) == torch.get_device(tx) == -1
    y = flow.zeros(3)
    assert flow.fill_(y, 2.0) is y and (y.numpy() == 2).all()


def test_cond_and_while_loop():
    # (PyTorch's cond / while_loop are not called here: they import torch._dynamo, which turns
    # off torch.distributions' argument validation for the rest of the process. Their results
    # on these calls: tensor([2., 2.]) / tensor([0., 0.]), and (tensor(3), tensor([8., 8.])).)
    for p in (True, False):
        r = flow.cond(flow.tensor(p), lambda x: x + 1, lambda x: x - 1, (flow.ones(2),))
        assert r.tolist() == ([2.0, 2.0] if p else [0.0, 0.0])
    assert flow.cond(False, lambda: 1, lambda: 2) == 2
    i, x = flow.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (flow.tensor(0), flow.ones(2)))
    assert int(i) == 3 and x.tolist() == [8.0, 8.0]
    with pytest.raises(RuntimeError, match="single-element"):
        flow.cond(flow.tensor([True, False]), lambda x: x, lambda x: x, (flow.ones(2),))
    with pytest.raises(RuntimeError):
        flow.while_loop(lambda i: i < 3, lambda i: (i + 1, i), (flow.tensor(0),))


def _inference_trace(lib):
    seen = [lib.is_inference_mode_enabled()]
    with lib.inference_mode():
        seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
        with lib.inference_mode(False):
            seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
        seen.append(lib.is_inference_mode_enabled())

    @lib.inference_mode()
    def f():
        return lib.is_inference_mode_enabled(), lib.is_grad_enabled()

    def g():
        yield lib.is_inference_mode_enabled()

    seen += [*f(), list(lib.inference_mode()(g)())[0], lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
    return seen


def test_inference_mode_flag_matches_torch():
    assert _inference_trace(flow) == _inference_trace(torch)
    assert flow.ones(2).is_inference() is False and torch.ones(2).is_inference() is False
