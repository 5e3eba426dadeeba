"""One process of a global-tensor test of the matrix and shape rules (python/oneflow/_global/
rules_matrix.py; tests/test_global_tensor.py starts it through the launcher in worlds of 1, 2 and
3): `global_matrix_worker.py CASE`. Each checks the global results -- value, SBP and this rank's
component (global_worker.check) -- and gradients against PyTorch on the whole tensors."""

import numpy as np
import torch

import oneflow as flow
import global_worker as W
from global_worker import B, PS, S, S0, S1, X, check, g_of

CASES = ["batched_matrix", "matmul_family", "shape_moves", "more_ops", "index_aligned", "table_rules", "partial_extreme"]


def spd(n, batch, seed):
    """A batch of symmetric positive definite matrices (well conditioned)."""
    a = X((batch, n, n), seed)
    return (a @ a.transpose(0, 2, 1) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


def case_batched_matrix():
    a = spd(3, 5, 0)
    ta = torch.tensor(a)
    g = g_of(a, S0)
    check(flow.inverse(g), torch.inverse(ta).numpy(), S0, "inverse: batch split kept", atol=1e-4)
    check(flow.det(g), torch.det(ta).numpy(), S0, "det: batch split kept", rtol=1e-4)
    check(flow.linalg.cholesky(g), torch.linalg.cholesky(ta).numpy(), S0, "cholesky", atol=1e-4)
    check(flow.matrix_power(g, 3), torch.matrix_power(ta, 3).numpy(), S0, "matrix_power", rtol=1e-4, atol=1e-3)
    check(flow.linalg.svdvals(g), torch.linalg.svdvals(ta).numpy(), S0, "svdvals", atol=1e-4)
    check(flow.tril(g), torch.tril(ta).numpy(), S0, "tril")
    sign, logabs = flow.slogdet(g)
    check(logabs, torch.slogdet(ta)[1].numpy(), S0, "slogdet: both outputs split", atol=1e-4)
    check(sign, torch.slogdet(ta)[0].numpy(), S0, "slogdet sign")
    w, v = flow.linalg.eigh(g)
    check(w, torch.linalg.eigvalsh(ta).numpy(), S0, "eigh values", atol=1e-4)
    # solve: both sides split on the batch (the right side boxed to it)
    rhs = X((5, 3, 2), 4)
    check(flow.linalg.solve(g, g_of(rhs, B)), torch.linalg.solve(ta, torch.tensor(rhs)).numpy(), S0,
          "solve: the right side sliced", atol=1e-4)
    check(flow.pinverse(g), torch.pinverse(ta).numpy(), S0, "pinverse", atol=1e-4)
    check(flow.linalg.matrix_rank(g), torch.linalg.matrix_rank(ta).numpy(), S0, "matrix_rank")
    check(flow.linalg.eigvalsh(g), torch.linalg.eigvalsh(ta).numpy(), S0, "eigvalsh", atol=1e-4)
    q, r = flow.qr(g)
    check(flow.bmm(q, r), a, S0, "qr: Q R rebuilds the batch", atol=1e-4)
    u, sv, vh = flow.linalg.svd(g)
    check(sv, torch.linalg.svd(ta)[1].numpy(), S0, "svd values", atol=1e-4)
    check(flow.linalg.matrix_norm(g, "fro", dim=(1, 2)), torch.linalg.matrix_norm(ta, "fro").numpy(), S0,
          "matrix_norm over the matrix dims", atol=1e-4)
    inv, info = flow.linalg.inv_ex(g)
    check(inv, torch.linalg.inv(ta).numpy(), S0, "inv_ex", atol=1e-4)
    check(info, torch.linalg.inv_ex(ta)[1].numpy(), S0, "inv_ex info")
    check(flow.linalg.cholesky_ex(g)[0], torch.linalg.cholesky(ta).numpy(), S0, "cholesky_ex", atol=1e-4)
    lu, piv = flow.linalg.lu_factor(g)
    tlu, tpiv = torch.linalg.lu_factor(ta)
    check(lu, tlu.numpy(), S0, "lu_factor", atol=1e-4)
    check(piv, tpiv.numpy(), S0, "lu_factor pivots")
    qa, tau = flow.geqrf(g)
    want = torch.linalg.householder_product(*torch.geqrf(ta)).abs().numpy()
    check(flow.linalg.householder_product(qa, tau).abs(), want, S0, "geqrf, householder_product", atol=1e-4)
    check(flow.linalg.solve_ex(g, g_of(X((5, 3), 9), S0))[0],
          torch.linalg.solve(ta, torch.tensor(X((5, 3), 9))).numpy(), S0, "solve_ex of vectors", atol=1e-4)
    # a split on the matrix dims: the op runs whole (its declared broadcast signature)
    check(flow.inverse(g_of(a, S(2))), torch.inverse(ta).numpy(), B, "inverse of a split matrix: whole", atol=1e-4)
    check(flow.det(g_of(a, PS)), torch.det(ta).numpy(), B, "det of a partial sum: reduced first", rtol=1e-4)
    # 4-d: a split on the second batch dim kept
    a4 = spd(2, 6, 1).reshape(2, 3, 2, 2)
    check(flow.inverse(g_of(a4, S1)), torch.inverse(torch.tensor(a4)).numpy(), S1, "inverse S1 of 4-d", atol=1e-4)
    # gradients through the batch-split ops
    gr = g_of(a, S0, requires_grad=True)
    tr = torch.tensor(a, requires_grad=True)
    (flow.inverse(gr).sum() + flow.det(gr).sum()).backward()
    (torch.inverse(tr).sum() + torch.det(tr).sum()).backward()
    check(gr.grad, tr.grad.numpy(), S0, "inverse + det gradient", rtol=1e-3, atol=1e-3)


def case_matmul_family():
    inp, m1, m2 = X((5, 4), 0), X((5, 3), 1), X((3, 4), 2)
    ti, t1, t2 = torch.tensor(inp), torch.tensor(m1), torch.tensor(m2)
    want = torch.addmm(ti, t1, t2, beta=0.5, alpha=2.0).numpy()
    for (s0, s1, s2), out in [((B, S0, B), S0), ((S0, S0, B), S0), ((B, B, S1), S1), ((B, S1, S0), PS),
                              ((S1, S0, S1), S0)]:
        got = flow.addmm(g_of(inp, s0), g_of(m1, s1), g_of(m2, s2), beta=0.5, alpha=2.0)
        check(got, want, out, f"addmm {s0}, {s1}, {s2}", atol=1e-4)
    row = X((4,), 3)
    check(flow.addmm(g_of(row, B), g_of(m1, S0), g_of(m2, B)), torch.addmm(torch.tensor(row), t1, t2).numpy(), S0,
          "addmm: a broadcast row added to split rows", atol=1e-4)
    # gradients: the inner dim split (a partial sum, the input on the first rank)
    gi, g1, g2 = (g_of(x, s, True) for x, s in ((inp, B), (m1, S1), (m2, S0)))
    ri, r1, r2 = (torch.tensor(x, requires_grad=True) for x in (inp, m1, m2))
    (flow.addmm(gi, g1, g2, beta=0.5) ** 2).sum().backward()
    (torch.addmm(ri, r1, r2, beta=0.5) ** 2).sum().backward()
    for g, r, s, what in ((gi, ri, B, "input"), (g1, r1, S1, "mat1"), (g2, r2, S0, "mat2")):
        check(g.grad, r.grad.numpy(), s, f"addmm partial: {what} grad", atol=1e-4)
    # batched: baddbmm keeps a batch split, addbmm sums it into a partial sum
    bi, b1, b2 = X((4, 5, 6), 4), X((4, 5, 3), 5), X((4, 3, 6), 6)
    tbi, tb1, tb2 = torch.tensor(bi), torch.tensor(b1), torch.tensor(b2)
    want = torch.baddbmm(tbi, tb1, tb2, alpha=0.5).numpy()
    check(flow.baddbmm(g_of(bi, B), g_of(b1, S0), g_of(b2, B), alpha=0.5), want, S0, "baddbmm batch", atol=1e-4)
    check(flow.baddbmm(g_of(bi, B), g_of(b1, S1), g_of(b2, B), alpha=0.5), want, S1, "baddbmm rows", atol=1e-4)
    check(flow.baddbmm(g_of(bi, B), g_of(b1, S(2)), g_of(b2, S1), alpha=0.5), want, PS, "baddbmm inner",
          atol=1e-4)
    ai = X((5, 6), 7)
    want = torch.addbmm(torch.tensor(ai), tb1, tb2).numpy()
    check(flow.addbmm(g_of(ai, B), g_of(b1, S0), g_of(b2, S0)), want, PS, "addbmm batch: partial", atol=1e-4)
    check(flow.addbmm(g_of(ai, B), g_of(b1, B), g_of(b2, S(2))), want, S1, "addbmm columns", atol=1e-4)
    # vectors: addmv, mv, dot, outer
    v, mv_in = X((3,), 8), X((5,), 9)
    want = torch.addmv(torch.tensor(mv_in), t1, torch.tensor(v)).numpy()
    check(flow.addmv(g_of(mv_in, B), g_of(m1, S0), g_of(v, B)), want, S0, "addmv rows", atol=1e-4)
    check(flow.addmv(g_of(mv_in, B), g_of(m1, S1), g_of(v, S0)), want, PS, "addmv inner", atol=1e-4)
    check(flow.mv(g_of(m1, S0), g_of(v, S0)), (t1 @ torch.tensor(v)).numpy(), S0, "mv rows", atol=1e-4)
    check(flow.mv(g_of(m1, S1), g_of(v, S0)), (t1 @ torch.tensor(v)).numpy(), PS, "mv inner", atol=1e-4)
    u = X((5,), 10)
    check(flow.dot(g_of(u, S0), g_of(mv_in, B)), torch.dot(torch.tensor(u), torch.tensor(mv_in)).numpy(), PS,
          "dot: partial", atol=1e-4)
    check(flow.vdot(g_of(u, B), g_of(mv_in, S0)), torch.vdot(torch.tensor(u), torch.tensor(mv_in)).numpy(), PS,
          "vdot: partial", atol=1e-4)
    check(flow.inner(g_of(u, S0), g_of(mv_in, S0)), torch.inner(torch.tensor(u), torch.tensor(mv_in)).numpy(), PS,
          "inner of vectors: partial", atol=1e-4)
    check(flow.inner(g_of(m1, S0), g_of(m1, B)), torch.inner(t1, t1).numpy(), B, "inner of matrices: whole",
          atol=1e-4)
    pw = X((5,), 11)
    img = X((4, 5, 3, 3), 12)
    check(flow.nn.functional.prelu(g_of(img, S0), g_of(pw, B)),
          torch.nn.functional.prelu(torch.tensor(img), torch.tensor(pw)).numpy(), S0, "prelu: batch split")
    check(flow.outer(g_of(u, S0), g_of(v, B)), torch.outer(torch.tensor(u), torch.tensor(v)).numpy(), S0,
          "outer rows")
    check(flow.outer(g_of(u, B), g_of(v, S0)), torch.outer(torch.tensor(u), torch.tensor(v)).numpy(), S1,
          "outer columns")


def case_shape_moves():
    x = X((5, 4, 3), 0)
    tx = torch.tensor(x)
    g0, g1, g2 = g_of(x, S0), g_of(x, S1), g_of(x, S(2))
    check(g0.select(1, 2), tx.select(1, 2).numpy(), S0, "select another dim")
    check(g2.select(0, 1), tx.select(0, 1).numpy(), S1, "select: the split moves down")
    check(g0.select(0, 1), tx.select(0, 1).numpy(), B, "select the split dim: whole")
    check(flow.diagonal(g0, 0, 1, 2), torch.diagonal(tx, 0, 1, 2).numpy(), S0, "diagonal of other dims")
    check(flow.diagonal(g2, 1, 0, 1), torch.diagonal(tx, 1, 0, 1).numpy(), S0, "diagonal: the split moves down")
    check(flow.movedim(g0, 0, 2), torch.movedim(tx, 0, 2).numpy(), S(2), "movedim moves the split")
    check(flow.movedim(g1, [0, 2], [1, 0]), torch.movedim(tx, [0, 2], [1, 0]).numpy(), S(2), "movedim lists")
    check(g2.unflatten(1, (2, 2)), tx.unflatten(1, (2, 2)).numpy(), S(3), "unflatten before the split")
    check(g1.unflatten(1, (2, 2)), tx.unflatten(1, (2, 2)).numpy(), B, "unflatten the split dim: whole")
    c = X((5, 1, 3), 1)
    tc = torch.tensor(c)
    check(g_of(c, S0).expand(2, 5, 4, 3), tc.expand(2, 5, 4, 3).numpy(), S1, "expand: new leading dim")
    check(flow.broadcast_to(g_of(c, S(2)), (5, 6, 3)), torch.broadcast_to(tc, (5, 6, 3)).numpy(), S(2),
          "broadcast_to")
    check(g0.repeat(1, 2, 1), tx.repeat(1, 2, 1).numpy(), S0, "repeat other dims")
    check(g0.repeat(2, 1, 1, 1), tx.repeat(2, 1, 1, 1).numpy(), S1, "repeat: a new leading dim")
    check(g0.repeat(2, 1, 1), tx.repeat(2, 1, 1).numpy(), B, "repeat the split dim: whole")
    check(flow.tile(g0, (2, 1)), torch.tile(tx, (2, 1)).numpy(), S0, "tile: fewer repeats count from the last")
    check(flow.rot90(g2, 1, [0, 1]), torch.rot90(tx, 1, [0, 1]).numpy(), S(2), "rot90 of other dims")
    check(flow.linalg.vector_norm(g0, dim=2), torch.linalg.vector_norm(tx, dim=2).numpy(), S0, "vector_norm",
          atol=1e-5)
    # fft along dims that are not split
    check(flow.fft.rfft(g0, dim=2).abs(), torch.fft.rfft(tx, dim=2).abs().numpy(), S0, "rfft another dim",
          atol=1e-4)
    check(flow.fft.fft(g2, dim=0).abs(), torch.fft.fft(tx, dim=0).abs().numpy(), S(2), "fft another dim",
          atol=1e-4)
    check(flow.fft.irfft(g0, dim=2), torch.fft.irfft(tx, dim=2).numpy(), S0, "irfft another dim", atol=1e-4)
    check(flow.fft.fft(g0, dim=0).abs(), torch.fft.fft(tx, dim=0).abs().numpy(), B, "fft along the split dim",
          atol=1e-4)
    # gradients through the moved splits
    gr = g_of(x, S0, requires_grad=True)
    tr = torch.tensor(x, requires_grad=True)
    w = X((2, 5, 3, 4), 2)
    ((gr.movedim(1, 2).repeat(2, 1, 1, 1) * g_of(w, B)).sum() + gr.select(2, 0).sum()).backward()
    ((tr.movedim(1, 2).repeat(2, 1, 1, 1) * torch.tensor(w)).sum() + tr.select(2, 0).sum()).backward()
    check(gr.grad, tr.grad.numpy(), S0, "gradients through movedim, repeat, select", atol=1e-4)


def case_more_ops():
    """Elementwise ops of `custom` kind declared pointwise, ops along a dim, cdist."""
    x, y = X((5, 4), 0), X((5, 4), 1)
    tx, ty = torch.tensor(x), torch.tensor(y)
    gx, gy = g_of(x, S0), g_of(y, S1)
    check(flow.nextafter(gx, gy), torch.nextafter(tx, ty).numpy(), S0, "nextafter (the other boxed)")
    check(flow.float_power(g_of(np.abs(x), S1), 2), torch.float_power(tx.abs(), 2).numpy(), S1, "float_power",
          atol=1e-5)
    z = flow.complex(gx, g_of(y, B))
    check(flow.imag(flow.conj(z)), (-ty).numpy(), S0,
          "complex (a broadcast side sliced), conj")
    check(flow.real(flow.polar(g_of(np.abs(x), S1), gy)), torch.polar(tx.abs(), ty).real.numpy(), S1, "polar",
          atol=1e-5)
    check(flow.real(flow.conj_physical(z)), x, S0, "conj_physical keeps the split")
    check(flow.nn.functional.glu(gx, dim=1), torch.nn.functional.glu(tx, 1).numpy(), S0, "glu along another dim")
    check(flow.nn.functional.glu(g_of(y, S0), dim=1), torch.nn.functional.glu(ty, 1).numpy(), S0, "glu S0")
    check(flow.nn.functional.glu(gy, dim=1), torch.nn.functional.glu(ty, 1).numpy(), B, "glu along the split dim")
    check(flow._C.quick_gelu(gx), (tx * torch.sigmoid(1.702 * tx)).numpy(), S0, "quick_gelu", atol=1e-6)
    check(flow._C.square_relu(gy), (torch.relu(ty) ** 2).numpy(), S1, "square_relu")
    check(flow.view_as_real(z), torch.view_as_real(torch.complex(tx, ty)).numpy(), S0, "view_as_real")
    check(flow.view_as_complex(flow.view_as_real(z)).imag, y, S0, "view_as_complex")
    check(flow.view_as_real(flow.complex(gy, gy)), torch.view_as_real(torch.complex(ty, ty)).numpy(), B,
          "view_as_real of a split last dim: whole")
    labels = np.array([[0, 2], [1, 1], [3, 0], [2, 2], [1, 0]])
    check(flow.nn.functional.one_hot(g_of(labels, S0), 4),
          torch.nn.functional.one_hot(torch.tensor(labels), 4).numpy(), S0, "one_hot")
    check(flow.fliplr(gx), torch.fliplr(tx).numpy(), S0, "fliplr keeps a row split")
    check(flow.flipud(gy), torch.flipud(ty).numpy(), S1, "flipud keeps a column split")
    check(flow.msort(gy), torch.msort(ty).numpy(), S1, "msort keeps a column split")
    check(flow.msort(gx), torch.msort(tx).numpy(), B, "msort of split rows: whole")
    parts, tparts = flow.tensor_split(gx, 3, dim=1), torch.tensor_split(tx, 3, dim=1)
    for k, (p, t) in enumerate(zip(parts, tparts)):
        check(p, t.numpy(), S0, f"tensor_split along another dim [{k}]")
    a, b = X((6, 3), 2), X((4, 3), 3)
    want = torch.cdist(torch.tensor(a), torch.tensor(b)).numpy()
    check(flow.cdist(g_of(a, S0), g_of(b, B)), want, S0, "cdist x1 rows", atol=1e-4)
    check(flow.cdist(g_of(a, B), g_of(b, S0)), want, S1, "cdist x2 rows", atol=1e-4)
    check(flow.cdist(g_of(a, S1), g_of(b, B)), want, B, "cdist of split features: whole", atol=1e-4)


def case_index_aligned():
    """gather / take_along_dim / scatter family with the index split as the input (off the op's
    dim), cosine_similarity and normalize off their dim; gradients as PyTorch's."""
    x = X((5, 4), 0)
    tx = torch.tensor(x)
    idx = np.random.default_rng(3).integers(0, 4, (5, 3))
    ti = torch.tensor(idx)
    check(flow.gather(g_of(x, S0), 1, g_of(idx, S0)), torch.gather(tx, 1, ti).numpy(), S0, "gather S0")
    check(flow.gather(g_of(x, S0), 1, g_of(idx, B)), torch.gather(tx, 1, ti).numpy(), S0, "gather: index sliced")
    check(flow.gather(g_of(x, S1), 1, g_of(idx, B)), torch.gather(tx, 1, ti).numpy(), B, "gather along the split")
    check(flow.take_along_dim(g_of(x, S0), g_of(idx, S0), dim=1), torch.take_along_dim(tx, ti, 1).numpy(), S0,
          "take_along_dim")
    check(flow.take_along_dim(g_of(x, S0), g_of(idx, S0)), torch.take_along_dim(tx, ti).numpy(), B,
          "take_along_dim flattened: whole")
    src = X((5, 3), 1)
    want = torch.scatter_add(tx, 1, ti, torch.tensor(src)).numpy()
    check(flow.scatter_add(g_of(x, S0), 1, g_of(idx, S0), g_of(src, B)), want, S0, "scatter_add", atol=1e-5)
    col = np.random.default_rng(4).integers(0, 5, (2, 4))
    want = torch.scatter(tx, 0, torch.tensor(col), torch.tensor(src[:2, :1].repeat(4, 1))).numpy()
    check(flow.scatter(g_of(x, S1), 0, g_of(col, S1), g_of(src[:2, :1].repeat(4, 1), B)), want, S1, "scatter S1")
    want = torch.scatter_reduce(tx, 1, ti, torch.tensor(src), "amax").numpy()
    check(flow.scatter_reduce(g_of(x, S0), 1, g_of(idx, S0), g_of(src, S0), "amax"), want, S0, "scatter_reduce")
    sel = np.array([3, 0, 2])
    want = torch.index_copy(tx, 1, torch.tensor(sel), torch.tensor(src)).numpy()
    check(flow.index_copy(g_of(x, S0), 1, g_of(sel, B), g_of(src, B)), want, S0, "index_copy")
    want = torch.index_add(tx, 1, torch.tensor(sel), torch.tensor(src), alpha=2.0).numpy()
    check(flow.index_add(g_of(x, S0), 1, g_of(sel, B), g_of(src, S0), alpha=2.0), want, S0, "index_add",
          atol=1e-5)
    check(flow.index_fill(g_of(x, S0), 1, g_of(sel, B), -1.0), torch.index_fill(tx, 1, torch.tensor(sel), -1.0).numpy(),
          S0, "index_fill")
    check(flow.diff(g_of(x, S0), dim=1, prepend=g_of(src, B)), torch.diff(tx, dim=1, prepend=torch.tensor(src)).numpy(),
          S0, "diff with prepend", atol=1e-6)
    check(flow.diff(g_of(x, S0), dim=0), torch.diff(tx, dim=0).numpy(), B, "diff along the split dim: whole",
          atol=1e-6)
    c3, d3 = X((5, 3), 7), X((5, 3), 8)
    check(flow.cross(g_of(c3, S0), g_of(d3, B), dim=1),
          torch.cross(torch.tensor(c3), torch.tensor(d3), dim=1).numpy(), S0, "cross", atol=1e-5)
    check(flow.repeat_interleave(g_of(x, S0), 2, dim=1), torch.repeat_interleave(tx, 2, dim=1).numpy(), S0,
          "repeat_interleave along another dim")
    y = X((5, 4), 2)
    ty = torch.tensor(y)
    check(flow.nn.functional.cosine_similarity(g_of(x, S0), g_of(y, B), dim=1),
          torch.nn.functional.cosine_similarity(tx, ty, dim=1).numpy(), S0, "cosine_similarity", atol=1e-5)
    check(flow.nn.functional.cosine_similarity(g_of(x, S1), g_of(y, S1), dim=0),
          torch.nn.functional.cosine_similarity(tx, ty, dim=0).numpy(), S0, "cosine_similarity: the split moves",
          atol=1e-5)
    check(flow.nn.functional.normalize(g_of(x, S0), dim=1), torch.nn.functional.normalize(tx, dim=1).numpy(), S0,
          "normalize", atol=1e-5)
    check(flow._C.normalize(g_of(x, S0), dim=1), torch.nn.functional.normalize(tx, dim=1).numpy(), S0,
          "the normalize kernel", atol=1e-5)
    row = X((1, 4), 6)
    check(g_of(row, B).expand_as(g_of(x, S0)), torch.tensor(row).expand_as(tx).numpy(), S0, "expand_as a split")
    check(g_of(x[:, :1], S0).expand_as(g_of(x, B)), tx[:, :1].expand_as(tx).numpy(), S0, "expand_as of a split")
    gr = g_of(x, S0, requires_grad=True)
    tr = torch.tensor(x, requires_grad=True)
    w = X((5, 3), 5)
    (flow.gather(gr, 1, g_of(idx, S0)) * g_of(w, S0)).sum().backward()
    (torch.gather(tr, 1, ti) * torch.tensor(w)).sum().backward()
    check(gr.grad, tr.grad.numpy(), S0, "gather gradient")


def case_table_rules():
    """The signatures every table op got (issue 41): einsum on a free or a summed label,
    tensordot, kron, reshapes that keep or move a split, the stacks, meshgrid, lookups, row losses
    -- the layout each keeps, and the values and gradients against PyTorch."""
    a, b = X((4, 3, 5), 0), X((4, 5, 2), 1)
    ta, tb = torch.tensor(a), torch.tensor(b)
    want = torch.einsum("bij,bjk->bik", ta, tb).numpy()
    check(flow.einsum("bij,bjk->bik", g_of(a, S0), g_of(b, B)), want, S0, "einsum: a batch label", atol=1e-4)
    check(flow.einsum("bij,bjk->bik", g_of(a, S1), g_of(b, B)), want, S1, "einsum: a free label", atol=1e-4)
    check(flow.einsum("bij,bjk->bik", g_of(a, S(2)), g_of(b, S1)), want, PS, "einsum: a summed label",
          atol=1e-4)
    check(flow.einsum("bij,bjk->bki", g_of(a, S1), g_of(b, B)), torch.einsum("bij,bjk->bki", ta, tb).numpy(),
          S(2), "einsum: the split moves", atol=1e-4)
    check(flow.einsum("ii->i", g_of(a[0, :3, :3], S0)), torch.einsum("ii->i", ta[0, :3, :3]).numpy(), B,
          "einsum: a diagonal label: whole", atol=1e-5)
    gr = g_of(a, S1, requires_grad=True)
    tr = torch.tensor(a, requires_grad=True)
    (flow.einsum("bij,bjk->bik", gr, g_of(b, B)) ** 2).sum().backward()
    (torch.einsum("bij,bjk->bik", tr, tb) ** 2).sum().backward()
    check(gr.grad, tr.grad.numpy(), S1, "einsum gradient", atol=1e-3)
    check(flow.tensordot(g_of(a, S0), g_of(b, B), dims=([2], [1])),
          torch.tensordot(ta, tb, dims=([2], [1])).numpy(), S0, "tensordot: a free dim of a", atol=1e-4)
    check(flow.tensordot(g_of(a, B), g_of(b, S(2)), dims=([2], [1])),
          torch.tensordot(ta, tb, dims=([2], [1])).numpy(), S(3), "tensordot: a free dim of b", atol=1e-4)
    check(flow.tensordot(g_of(a, S(2)), g_of(b, B), dims=([2], [1])),
          torch.tensordot(ta, tb, dims=([2], [1])).numpy(), PS, "tensordot: a contracted pair", atol=1e-4)
    k1, k2 = X((4, 2), 2), X((2, 3), 3)
    check(flow.kron(g_of(k1, S0), g_of(k2, B)), torch.kron(torch.tensor(k1), torch.tensor(k2)).numpy(),
          S0 if 4 % W.WORLD == 0 else B, "kron: rows of a (whole when uneven)", atol=1e-5)
    x = X((6, 4, 2), 4)
    tx = torch.tensor(x)
    check(g_of(x, S1).reshape(6, 4, 2, 1), x.reshape(6, 4, 2, 1), S1, "reshape keeping a split")
    check(g_of(x, S1).reshape(3, 2, 4, 2), x.reshape(3, 2, 4, 2), S(2), "reshape moving a split")
    check(g_of(x, S(2)).view(24, 2), x.reshape(24, 2), S1, "view: the split past a merge")
    check(g_of(x, S0).reshape(6, 8), x.reshape(6, 8), S0, "reshape of the rows")
    check(g_of(x, S1).reshape(6, 8), x.reshape(6, 8), S1 if 4 % W.WORLD == 0 else B,
          "reshape merging the split dim with the next (even: split; uneven: whole)")
    check(flow.ravel(g_of(x, S0)), x.reshape(-1), S0 if 6 % W.WORLD == 0 else B, "ravel of split rows")
    check(flow.atleast_2d(g_of(x[:, 0, 0], S0)), x[None, :, 0, 0], S1, "atleast_2d: a new leading dim")
    check(flow.hstack([g_of(x, S0), g_of(x, B)]), np.hstack([x, x]), S0, "hstack of split rows")
    check(flow.vstack([g_of(x, S1), g_of(x, S1)]), np.vstack([x, x]), S1, "vstack of split columns")
    u, v = X((5,), 5), X((3,), 6)
    gx, gy = flow.meshgrid(g_of(u, S0), g_of(v, B), indexing="ij")
    tx_, ty_ = torch.meshgrid(torch.tensor(u), torch.tensor(v), indexing="ij")
    check(gx, tx_.numpy(), S0, "meshgrid ij")
    check(gy, ty_.numpy(), S0, "meshgrid ij (second)")
    idx = np.array([[0, 5], [7, 3], [11, 2]])
    check(flow.take(g_of(x, B), g_of(idx, S0)), torch.take(tx, torch.tensor(idx)).numpy(), S0, "take: the index's split")
    seq = np.sort(X((7,), 7))
    check(flow.searchsorted(g_of(seq, B), g_of(x, S1)), torch.searchsorted(torch.tensor(seq), tx).numpy(), S1,
          "searchsorted: a 1-d sequence")
    check(flow.bucketize(g_of(x, S0), g_of(seq, B)), torch.bucketize(tx, torch.tensor(seq)).numpy(), S0,
          "bucketize")
    lp, tg = X((6, 4), 8), np.abs(X((6, 4), 9))
    tlp, ttg = torch.tensor(lp), torch.tensor(tg)
    for red in ("sum", "mean", "batchmean", "none"):
        check(flow.nn.functional.kl_div(g_of(lp, S0), g_of(tg, S0), reduction=red),
              torch.nn.functional.kl_div(tlp, ttg, reduction=red).numpy(), S0 if red == "none" else PS,
              f"kl_div {red}", atol=1e-5)
    an, po, ne = X((6, 4), 10), X((6, 4), 11), X((6, 4), 12)
    gan = g_of(an, S0, requires_grad=True)
    tan = torch.tensor(an, requires_grad=True)
    loss = flow.nn.functional.triplet_margin_loss(gan, g_of(po, B), g_of(ne, S0))
    tloss = torch.nn.functional.triplet_margin_loss(tan, torch.tensor(po), torch.tensor(ne))
    check(loss, tloss.detach().numpy(), PS, "triplet_margin_loss mean", atol=1e-5)
    loss.backward()
    tloss.backward()
    check(gan.grad, tan.grad.numpy(), S0, "triplet_margin_loss gradient", atol=1e-5)
    check(flow.nn.functional.pairwise_distance(g_of(an, S0), g_of(po, B)),
          torch.nn.functional.pairwise_distance(tan.detach(), torch.tensor(po)).numpy(), S0, "pairwise_distance",
          atol=1e-5)
    check(g_of(x, S1)[:, :, 1:], x[:, :, 1:], B, "indexing stays whole (its declared broadcast)")


def case_partial_extreme():
    """amax / amin / any / all over the split dim: each rank's partial max / min, all-reduced (no
    input gathered: boxing moves nothing); ties across ranks share the gradient as PyTorch's; a
    rank holding none of the dim (an uneven split) gives the reduction's identity."""
    x = np.round(X((5, 4), 0) * 2) / 2  # (halves: ties within and across the ranks' rows)
    x[4, 1] = x[0, 1] = x[:, 1].max()
    tx = torch.tensor(x, requires_grad=True)
    flow.boxing.reset_bytes_moved()
    gx = g_of(x, S0, requires_grad=True)
    moved = flow.boxing.bytes_moved()
    got = flow.amax(gx, dim=0)
    assert flow.boxing.bytes_moved() == moved, "amax over the split dim gathered its input"
    want = torch.amax(tx, dim=0)
    check(got, want.detach().numpy(), B, "amax over the split dim")
    w = X((4,), 1)
    (got * g_of(w, B)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    check(gx.grad, tx.grad.numpy(), S0, "amax gradient: ties shared over the ranks", atol=1e-6)
    check(flow.amin(g_of(x, S1), dim=(0, 1), keepdim=True), torch.amin(tx.detach(), dim=(0, 1), keepdim=True).numpy(),
          B, "amin over every dim, keepdim")
    check(g_of(x, S1).amax(1), x.max(1), B, "the method form")
    check(flow.amax(g_of(x, S1), dim=0), x.max(0), S0, "amax off the split dim keeps it")
    b = x > 0
    check(flow.any(g_of(b, S0), dim=0), b.any(0), B, "any over the split dim")
    check(flow.all(g_of(b, S0)), np.array(b.all()), B, "all of every element")
    small = X((2, 3), 2)  # (3 ranks: the third holds no row)
    check(flow.amax(g_of(small, S0), dim=0), small.max(0), B, "amax of an uneven split")
    check(flow.amin(g_of(small.astype(np.int64), S0), dim=0), small.astype(np.int64).min(0), B, "amin of integers")


if __name__ == "__main__":
    W.run_worker(globals(), CASES)
