"""Behaviour of the shape/matmul/linalg families that the OpInfo table cannot express: in-place
slice_update (OneFlow's semantics), memory formats, Tensor.type/to, the T/mT/H properties,
keyword spellings of both OneFlow and PyTorch, factor properties of the decompositions, the
threaded paths of the copying kernels on large inputs, and view/copy semantics."""

import numpy as np
import pytest
import torch

from harness import SHIM, flow, to_numpy

oneflow_api = pytest.mark.skipif(bool(SHIM), reason="OneFlow's own API")


# ---- slice / slice_update (OneFlow) --------------------------------------------------------


@oneflow_api
def test_slice_update_spec_example():
    input = flow.Tensor(np.array([1, 1, 1, 1, 1]).astype(np.float32))
    update = flow.Tensor(np.array([2, 3, 4]).astype(np.float32))
    y = flow.slice_update(input, update, slice_tup_list=[[1, 4, 1]])
    assert input.numpy().tolist() == [1.0, 2.0, 3.0, 4.0, 1.0]
    assert y is input


@oneflow_api
def test_slice_update_strided_and_casts():
    x = flow.zeros(4, 6)
    flow.slice_update(x, flow.ones(2, 3, dtype=flow.int64), [[0, 4, 2], [None, None, 2]])
    want = np.zeros((4, 6), np.float32)
    want[0:4:2, ::2] = 1
    np.testing.assert_array_equal(x.numpy(), want)
    with pytest.raises(ValueError):
        flow.slice_update(x, flow.ones(1), [[None, None, -1]])
    with pytest.raises(RuntimeError):
        flow.slice_update(x, flow.ones(3, 3), [[0, 2, 1]])


@oneflow_api
def test_slice_update_gradient():
    base = flow.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    upd = flow.tensor([10.0, 20.0], requires_grad=True)
    x = base * 1
    flow.slice_update(x, upd, [[None, None, None], [1, 3, 1]])
    (x * flow.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    np.testing.assert_array_equal(base.grad.numpy(), [[1.0, 0.0, 0.0], [4.0, 0.0, 0.0]])
    np.testing.assert_array_equal(upd.grad.numpy(), [2.0 + 5.0, 3.0 + 6.0])


@oneflow_api
def test_slice_is_a_view_for_positive_steps():
    x = flow.zeros(4, 4)
    y = flow.slice(x, [[1, 3, 1]])
    y.fill_(1.0)
    assert x.numpy()[1:3].sum() == 8.0
    with pytest.raises(ValueError):
        flow.slice(x, [[0, 1, 1], [0, 1, 1], [0, 1, 1]])
    with pytest.raises(ValueError):
        flow.slice(x, [[0, 1]])


# ---- memory formats, conversions, properties ----------------------------------------------


@oneflow_api
def test_memory_formats():
    x = flow.tensor(np.random.rand(2, 3, 4, 5).astype(np.float32))
    cl = x.contiguous(memory_format=flow.channels_last)
    np.testing.assert_array_equal(cl.numpy(), x.numpy())
    assert cl.stride() == (60, 1, 15, 3)  # NHWC memory, as torch's channels_last
    assert cl.contiguous(memory_format=flow.channels_last) is cl
    assert x.contiguous(memory_format=flow.contiguous_format) is x
    assert cl.contiguous().is_contiguous()
    assert x.clone(memory_format=flow.contiguous_format).is_contiguous()
    with pytest.raises(RuntimeError):
        flow.zeros(2, 3).contiguous(memory_format=flow.channels_last)
    with pytest.raises(TypeError):
        flow.zeros(2, 3).contiguous(memory_format="nhwc")


@oneflow_api
def test_type_and_to():
    x = flow.tensor([1.5, 2.5])
    assert x.type() == "oneflow.FloatTensor"
    assert x.type(flow.float64).dtype == flow.float64
    assert x.type("oneflow.LongTensor").dtype == flow.int64
    assert x.type("torch.IntTensor").dtype == flow.int32
    assert x.type(flow.float32) is x
    with pytest.raises(ValueError):
        x.type("oneflow.NoSuchTensor")
    assert flow.to(x, flow.float64).dtype == flow.float64
    assert flow.to(x, "cpu") is x
    assert flow.type_as(x, flow.tensor([1])).dtype == flow.int64


def test_matrix_properties():
    a = np.random.rand(2, 3, 4).astype(np.float32)
    x, t = flow.tensor(a), torch.tensor(a)
    np.testing.assert_array_equal(x.mT.numpy(), t.mT.numpy())
    np.testing.assert_array_equal(x.T.numpy(), np.transpose(a))
    m = flow.tensor(a[0])
    np.testing.assert_array_equal(m.H.numpy(), a[0].T)
    np.testing.assert_array_equal(m.mH.numpy(), a[0].T)
    with pytest.raises(RuntimeError):
        flow.zeros(3).mT


@oneflow_api
def test_keyword_spellings():
    x = flow.tensor([[1, 2], [3, 4]])
    np.testing.assert_array_equal(x.repeat(repeats=(1, 2)).numpy(), x.repeat(sizes=(1, 2)).numpy())
    np.testing.assert_array_equal(x.tile(dims=(2,)).numpy(), x.tile(reps=(2,)).numpy())
    np.testing.assert_array_equal(flow.expand_dims(x, 0).numpy(), x.numpy()[None])
    np.testing.assert_array_equal(flow.swapdims(x, 0, 1).numpy(), x.numpy().T)
    np.testing.assert_array_equal(flow.moveaxis(x, 0, 1).numpy(), x.numpy().T)
    np.testing.assert_array_equal(flow.ger(flow.ones(2), flow.ones(3)).numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(flow.row_stack([x, x]).numpy(), np.vstack([x.numpy()] * 2))
    assert tuple(flow.broadcast_shapes((3, 1), (1, 4))) == (3, 4)
    assert tuple(flow.broadcast_shapes((2, 1, 4), (3, 1), 4)) == (2, 3, 4)
    with pytest.raises(RuntimeError):
        flow.broadcast_shapes((3,), (4,))


# ---- copies, views and large inputs ---------------------------------------------------------


def test_copying_ops_do_not_alias():
    x = flow.ones(2, 3)
    for y in (x.repeat(1, 1), flow.tile(x, (1,)), flow.flip(x, [0]), flow.roll(x, 0), flow.tril(x, 5),
              flow.rot90(x, 4), flow.repeat_interleave(x, 1)):
        y.fill_(7.0)
        assert x.numpy().sum() == 6.0


def test_views_alias():
    x = flow.zeros(3, 4)
    x.diagonal().fill_(1.0)
    x.unfold(1, 2, 2)[0, 0].fill_(2.0)
    x.select(0, 2).fill_(3.0)
    flow.movedim(x, 0, 1)[0, 1].fill_(4.0)
    want = np.zeros((3, 4), np.float32)
    np.fill_diagonal(want, 1.0)
    want[0, 0:2] = 2.0
    want[2] = 3.0
    want[1, 0] = 4.0
    np.testing.assert_array_equal(x.numpy(), want)


_RNG = np.random.default_rng(7)
_BIG = _RNG.standard_normal((300, 700)).astype(np.float32)


@pytest.mark.parametrize("layout", ["contiguous", "noncontig"])
@pytest.mark.parametrize("name,fn", [
    ("flip", lambda lib, x: lib.flip(x, [0, 1])),
    ("flip-last", lambda lib, x: lib.flip(x, [-1])),
    ("roll", lambda lib, x: lib.roll(x, (7, -100), (0, 1))),
    ("tril", lambda lib, x: lib.tril(x, 3)),
    ("triu", lambda lib, x: lib.triu(x, -5)),
    ("repeat", lambda lib, x: x.repeat(2, 3)),
    ("repeat_interleave", lambda lib, x: lib.repeat_interleave(x, 3, dim=1)),
    ("diag_embed", lambda lib, x: lib.diag_embed(x[:20])),
    ("einsum", lambda lib, x: lib.einsum("ij,kj->ik", x, x)),
    ("addmm", lambda lib, x: lib.addmm(x[:, :300], x, x.t(), beta=0.5, alpha=2.0)),
    ("cdist", lambda lib, x: lib.cdist(x[:100], x[100:250])),
])
def test_large_inputs(name, fn, layout):
    a = _BIG if layout == "contiguous" else np.ascontiguousarray(_BIG.T).T  # column-major memory
    want = fn(torch, torch.tensor(np.ascontiguousarray(a)))
    got = fn(flow, flow.tensor(np.ascontiguousarray(a.T)).t() if layout == "noncontig" else flow.tensor(a))
    tol = 2e-4 if name in ("einsum", "addmm", "cdist") else 0
    np.testing.assert_allclose(to_numpy(got), want.numpy(), rtol=tol, atol=tol * 10)


def test_inplace_triangles_large():
    a = _BIG.copy()
    x = flow.tensor(a)
    x.triu_(2)
    np.testing.assert_array_equal(x.numpy(), np.triu(a, 2))
    y = flow.tensor(np.ascontiguousarray(a.T)).t()
    y.tril_(-1)
    np.testing.assert_array_equal(y.numpy(), np.tril(a, -1))


# ---- decompositions: properties beyond the sign-fixed comparison ----------------------------


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_svd_full_factors(shape):
    a = np.random.default_rng(1).standard_normal(shape)
    U, S, Vh = flow.linalg.svd(flow.tensor(a))
    m, n = shape[-2], shape[-1]
    eye = lambda k: np.broadcast_to(np.eye(k), shape[:-2] + (k, k))  # noqa: E731
    np.testing.assert_allclose(np.swapaxes(U.numpy(), -1, -2) @ U.numpy(), eye(m), atol=1e-12)
    np.testing.assert_allclose(Vh.numpy() @ np.swapaxes(Vh.numpy(), -1, -2), eye(n), atol=1e-12)
    k = min(m, n)
    rec = (U.numpy()[..., :k] * S.numpy()[..., None, :]) @ Vh.numpy()[..., :k, :]
    np.testing.assert_allclose(rec, a, atol=1e-12)
    U2, S2, V2 = flow.svd(flow.tensor(a))  # legacy: V, reduced
    np.testing.assert_allclose((U2.numpy() * S2.numpy()[..., None, :]) @ np.swapaxes(V2.numpy(), -1, -2), a,
                               atol=1e-12)


def test_qr_complete_and_eigh_upper():
    a = np.random.default_rng(2).standard_normal((5, 3))
    Q, R = flow.linalg.qr(flow.tensor(a), mode="complete")
    np.testing.assert_allclose(Q.numpy() @ R.numpy(), a, atol=1e-12)
    np.testing.assert_allclose(Q.numpy().T @ Q.numpy(), np.eye(5), atol=1e-12)
    s = np.random.default_rng(3).standard_normal((4, 4))
    # UPLO='U' reads the upper triangle only: same as the symmetric matrix built from it.
    full = np.triu(s) + np.triu(s, 1).T
    w, _ = flow.linalg.eigh(flow.tensor(s), UPLO="U")
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(full), atol=1e-12)
    w, _ = flow.linalg.eigh(flow.tensor(s))
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(np.tril(s) + np.tril(s, -1).T), atol=1e-12)


def test_linalg_names():
    for n in ("inv", "det", "slogdet", "solve", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "pinv",
              "matrix_rank", "matrix_power", "cross"):
        assert hasattr(flow.linalg, n), n
    for n in ("inverse", "det", "slogdet", "logdet", "cholesky", "qr", "svd", "pinverse", "matrix_power"):
        assert hasattr(flow, n), n
    assert flow.linalg.slogdet(flow.eye(2))._fields == ("sign", "logabsdet")
    assert flow.linalg.eigh(flow.eye(2))._fields == ("eigenvalues", "eigenvectors")
    assert flow.linalg.svd(flow.eye(2))._fields == ("U", "S", "Vh")
    assert flow.svd(flow.eye(2))._fields == ("U", "S", "V")


def test_einsum_bmm_plan_keeps_memory():
    """`bij,bjk->bik` on contiguous operands is one bmm on their memory: no copy of the inputs
    (checked through autograd: the gradient graph holds a BmmBackward0 fed by views)."""
    a = flow.randn(2, 3, 4, requires_grad=True)
    b = flow.randn(2, 4, 5, requires_grad=True)
    y = flow.einsum("bij,bjk->bik", a, b)
    names = []
    fn = y.grad_fn
    while fn is not None and len(names) < 10:
        names.append(fn.name())
        nxt = [f for f, _ in fn.next_functions if f is not None] if hasattr(fn, "next_functions") else []
        fn = nxt[0] if nxt else None
    assert any("Bmm" in n for n in names), names
    np.testing.assert_allclose(y.detach().numpy(), a.detach().numpy() @ b.detach().numpy(), rtol=1e-5)


def test_addbmm_broadcast_input_and_grad():
    rng = np.random.default_rng(5)
    vals = [rng.standard_normal(s) for s in ((4,), (3, 2, 5), (3, 5, 4))]
    f = [flow.tensor(v, requires_grad=True) for v in vals]
    t = [torch.tensor(v, requires_grad=True) for v in vals]
    fo = flow.addbmm(*f, beta=2.0, alpha=0.5)
    to = torch.addbmm(*t, beta=2.0, alpha=0.5)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-12)
    g = rng.standard_normal((2, 4))
    fo.backward(flow.tensor(g))
    to.backward(torch.tensor(g))
    for a, b in zip(f, t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_slogdet_logdet_at_singular_matrices():
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [0.5, 3.0]]])
    fs, fl = flow.linalg.slogdet(flow.tensor(a))
    ts, tl = torch.linalg.slogdet(torch.tensor(a))
    np.testing.assert_array_equal(np.abs(fs.numpy()), np.abs(ts.numpy()))  # sign 0 (torch may give -0.)
    np.testing.assert_allclose(fl.numpy(), tl.numpy())
    np.testing.assert_allclose(flow.logdet(flow.tensor(a)).numpy(), torch.logdet(torch.tensor(a)).numpy())
    np.testing.assert_allclose(flow.det(flow.tensor(a)).numpy(), torch.det(torch.tensor(a)).numpy(), atol=1e-12)


def test_qr_backward_undefined_cases_raise():
    for mode, shape in (("r", (3, 3)), ("complete", (4, 3))):
        a = flow.randn(*shape, requires_grad=True)
        q, r = flow.linalg.qr(a, mode=mode)
        with pytest.raises(RuntimeError) as info:
            (r.sum() + (q.sum() if q.numel() else 0)).backward()
        assert "qr" in str(info.value).lower()
    # complete mode of a wide matrix is the reduced one: differentiable
    a = flow.randn(2, 4, requires_grad=True)
    q, r = flow.linalg.qr(a, mode="complete")
    (q.sum() + r.sum()).backward()
    assert a.grad is not None


@oneflow_api
def test_boxed_forms_of_python_fronted_ops():
    """einsum, tensordot, meshgrid, broadcast_tensors and slice are Python glue over table ops with
    their own signatures; their boxed forms take the table signature."""
    from oneflow import _boxed

    a, b = flow.randn(2, 3, 4), flow.randn(2, 4, 5)
    cases = [
        ("einsum", ("bij,bjk->bik", [a, b]), {}),
        ("tensordot", (a, flow.randn(4, 3), [1, 2], [1, 0]), {}),
        ("meshgrid", ([flow.randn(3), flow.randn(2)],), {"indexing": "xy"}),
        ("broadcast_tensors", ([flow.randn(3, 1), flow.randn(4)],), {}),
        ("slice", (a, [0, 1, 0], [2, 3, 4], [1, 1, 2]), {}),
    ]
    for name, args, kwargs in cases:
        want = getattr(flow._C, name)(*args, **kwargs)
        want = list(want) if isinstance(want, (list, tuple)) else [want]
        got = _boxed.call(name, *args, **kwargs)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        meta = _boxed.infer(name, *args, **kwargs)
        meta = list(meta) if isinstance(meta, (list, tuple)) else [meta]
        for g, w, m in zip(got, want, meta):
            np.testing.assert_array_equal(g.numpy(), w.numpy(), err_msg=name)
            assert tuple(m.shape) == tuple(w.shape) and str(m.device) == "meta", name


_NEW = {
    "new_zeros": lambda t: t.new_zeros(3),
    "new_zeros-tuple": lambda t: t.new_zeros((2, 3)),
    "new_ones": lambda t: t.new_ones(2, 2),
    "new_full": lambda t: t.new_full((2,), 2.5),
    "new_tensor": lambda t: t.new_tensor([1.5, 2.0]),
    "new_empty": lambda t: t.new_empty((2,)),
    "new_zeros-dtype-None": lambda t: t.new_zeros(2, dtype=None),
}


@pytest.mark.parametrize("name", list(_NEW))
def test_new_factories_match_torch(name):
    f, t = _NEW[name](flow.ones(2, dtype=flow.int32)), _NEW[name](torch.ones(2, dtype=torch.int32))
    assert tuple(f.shape) == tuple(t.shape) and str(f.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    if name != "new_empty":  # (uninitialised values)
        np.testing.assert_array_equal(to_numpy(f), t.numpy())


@pytest.mark.parametrize("shape,perm,sizes", [
    ((2, 1, 3), (0, 2, 1), (2, 1, -1, -1, -1)), ((2, 1, 3), (0, 2, 1), (1, 2, -1, -1, 2)),
    ((2, 3, 4), (0, 2, 1), (2, 1, -1, -1, -1)), ((2, 3), (1, 0), (1, 1, 3, 2)), ((2, 3), (0, 1), (1, 4, 2, 3)),
    ((), (), (3, 1)), ((), (), (1,)),
])
def test_expand_strides_as_torch(shape, perm, sizes):
    # A new leading dim of size 1 gets the stride a contiguous layout would give it (upstream's
    # modules/test_expand_stride.py compares Tensor.stride() with PyTorch's).
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    f, t = flow.tensor(a), torch.tensor(a)
    if perm:
        f, t = f.permute(*perm), t.permute(*perm)
    f, t = f.expand(*sizes), t.expand(*sizes)
    assert f.stride() == t.stride() and tuple(f.shape) == tuple(t.shape)
    np.testing.assert_array_equal(f.numpy(), t.numpy())
