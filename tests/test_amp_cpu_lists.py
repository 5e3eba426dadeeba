"""CPU autocast against PyTorch's own CPU op lists (issue 39): under autocast("cpu", bfloat16) the
ops of the lower-precision list compute in bfloat16 from float32 inputs, and the ops of the float32
list compute in float32 from bfloat16 inputs. One table: each row is an op of those lists, named as
in PyTorch's list, with a call written once for both libraries; the expected dtype is torch's."""
import pytest
import torch

import oneflow as flow


def _t(lib, *shape, dt, pos=False, grad=False):
    g = torch.Generator().manual_seed(sum(shape) + len(shape))
    v = torch.rand(*shape, generator=g) + (0.5 if pos else -0.5)
    t = lib.tensor(v.numpy()).to(getattr(lib, dt))
    return t


def _spd(lib, dt):
    a = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    return lib.tensor(a.numpy()).to(getattr(lib, dt))


F = lambda lib: lib.nn.functional  # noqa: E731

# PyTorch's CPU lower-precision list: float32 in, bfloat16 out.
LOWER = {
    "conv1d": lambda lib, d: F(lib).conv1d(_t(lib, 1, 2, 5, dt=d), _t(lib, 3, 2, 2, dt=d)),
    "conv2d": lambda lib, d: F(lib).conv2d(_t(lib, 1, 2, 4, 4, dt=d), _t(lib, 3, 2, 2, 2, dt=d)),
    "conv3d": lambda lib, d: F(lib).conv3d(_t(lib, 1, 2, 3, 3, 3, dt=d), _t(lib, 3, 2, 2, 2, 2, dt=d)),
    "conv_transpose1d": lambda lib, d: F(lib).conv_transpose1d(_t(lib, 1, 2, 5, dt=d), _t(lib, 2, 3, 2, dt=d)),
    "conv_transpose2d": lambda lib, d: F(lib).conv_transpose2d(_t(lib, 1, 2, 4, 4, dt=d), _t(lib, 2, 3, 2, 2, dt=d)),
    "conv_transpose3d": lambda lib, d: F(lib).conv_transpose3d(_t(lib, 1, 2, 3, 3, 3, dt=d),
                                                               _t(lib, 2, 3, 2, 2, 2, dt=d)),
    "bmm": lambda lib, d: lib.bmm(_t(lib, 2, 3, 4, dt=d), _t(lib, 2, 4, 5, dt=d)),
    "mm": lambda lib, d: lib.mm(_t(lib, 3, 4, dt=d), _t(lib, 4, 5, dt=d)),
    "baddbmm": lambda lib, d: lib.baddbmm(_t(lib, 2, 3, 5, dt=d), _t(lib, 2, 3, 4, dt=d), _t(lib, 2, 4, 5, dt=d)),
    "addmm": lambda lib, d: lib.addmm(_t(lib, 3, 5, dt=d), _t(lib, 3, 4, dt=d), _t(lib, 4, 5, dt=d)),
    "addbmm": lambda lib, d: lib.addbmm(_t(lib, 3, 5, dt=d), _t(lib, 2, 3, 4, dt=d), _t(lib, 2, 4, 5, dt=d)),
    "linear": lambda lib, d: F(lib).linear(_t(lib, 2, 4, dt=d), _t(lib, 3, 4, dt=d), _t(lib, 3, dt=d)),
    "linear (no bias)": lambda lib, d: F(lib).linear(_t(lib, 2, 4, dt=d), _t(lib, 3, 4, dt=d)),
    "nn.Linear": lambda lib, d: _linear_module(lib)(_t(lib, 2, 4, dt=d)),
    "matmul": lambda lib, d: lib.matmul(_t(lib, 2, 3, 4, dt=d), _t(lib, 4, 5, dt=d)),
    "prelu": lambda lib, d: F(lib).prelu(_t(lib, 2, 3, dt=d), _t(lib, 1, dt=d)),
    "scaled_dot_product_attention": lambda lib, d: F(lib).scaled_dot_product_attention(
        _t(lib, 1, 2, 3, 4, dt=d), _t(lib, 1, 2, 3, 4, dt=d), _t(lib, 1, 2, 3, 4, dt=d)),
}

# PyTorch's CPU float32 list: bfloat16 in, float32 out (the ops of the list this API has).
FP32 = {
    "mse_loss": lambda lib, d: F(lib).mse_loss(_t(lib, 2, 3, dt=d), _t(lib, 2, 3, dt=d)),
    "l1_loss": lambda lib, d: F(lib).l1_loss(_t(lib, 2, 3, dt=d), _t(lib, 2, 3, dt=d)),
    "smooth_l1_loss": lambda lib, d: F(lib).smooth_l1_loss(_t(lib, 2, 3, dt=d), _t(lib, 2, 3, dt=d)),
    "huber_loss": lambda lib, d: F(lib).huber_loss(_t(lib, 2, 3, dt=d), _t(lib, 2, 3, dt=d)),
    "soft_margin_loss": lambda lib, d: F(lib).soft_margin_loss(_t(lib, 2, 3, dt=d), _t(lib, 2, 3, dt=d)),
    "kl_div": lambda lib, d: F(lib).kl_div(_t(lib, 2, 3, dt=d), _t(lib, 2, 3, dt=d, pos=True), reduction="sum"),
    "binary_cross_entropy_with_logits": lambda lib, d: F(lib).binary_cross_entropy_with_logits(
        _t(lib, 2, 3, dt=d), _t(lib, 2, 3, dt=d, pos=True) / 2),
    "binary_cross_entropy": lambda lib, d: F(lib).binary_cross_entropy(
        _t(lib, 2, 3, dt=d, pos=True) / 2, _t(lib, 2, 3, dt=d, pos=True) / 2),
    "nll_loss": lambda lib, d: F(lib).nll_loss(_t(lib, 2, 3, dt=d), lib.tensor([0, 2])),
    "cross_entropy_loss": lambda lib, d: F(lib).cross_entropy(_t(lib, 2, 3, dt=d), lib.tensor([0, 2])),
    "poisson_nll_loss": lambda lib, d: F(lib).poisson_nll_loss(_t(lib, 2, 3, dt=d), _t(lib, 2, 3, dt=d, pos=True)),
    "margin_ranking_loss": lambda lib, d: F(lib).margin_ranking_loss(_t(lib, 3, dt=d), _t(lib, 3, dt=d),
                                                                     lib.tensor([1.0, -1.0, 1.0])),
    "cosine_embedding_loss": lambda lib, d: F(lib).cosine_embedding_loss(_t(lib, 2, 3, dt=d), _t(lib, 2, 3, dt=d),
                                                                         lib.tensor([1.0, -1.0])),
    "multi_margin_loss": lambda lib, d: F(lib).multi_margin_loss(_t(lib, 2, 3, dt=d), lib.tensor([0, 2])),
    "multilabel_margin_loss": lambda lib, d: F(lib).multilabel_margin_loss(_t(lib, 2, 3, dt=d),
                                                                           lib.tensor([[0, -1, 1], [2, -1, 0]])),
    "prod": lambda lib, d: lib.prod(_t(lib, 2, 3, dt=d)),
    "trace": lambda lib, d: lib.trace(_t(lib, 3, 3, dt=d)),
    "cdist": lambda lib, d: lib.cdist(_t(lib, 2, 3, dt=d), _t(lib, 4, 3, dt=d)),
    "inverse": lambda lib, d: lib.inverse(_spd(lib, d)),
    "cholesky": lambda lib, d: lib.linalg.cholesky(_spd(lib, d)),
    "linalg_inv": lambda lib, d: lib.linalg.inv(_spd(lib, d)),
    "linalg_solve": lambda lib, d: lib.linalg.solve(_spd(lib, d), _t(lib, 3, 2, dt=d)),
    "qr": lambda lib, d: lib.linalg.qr(_spd(lib, d))[0],
    "adaptive_avg_pool3d": lambda lib, d: F(lib).adaptive_avg_pool3d(_t(lib, 1, 2, 4, 4, 4, dt=d), 2),
    "avg_pool3d": lambda lib, d: F(lib).avg_pool3d(_t(lib, 1, 2, 4, 4, 4, dt=d), 2),
    "max_pool3d": lambda lib, d: F(lib).max_pool3d(_t(lib, 1, 2, 4, 4, 4, dt=d), 2),
    # one `pad` op for every mode here: the listed kernels are its reflect (1-2 dims) and
    # replicate modes (NOT_LISTED below: the other modes keep the input's dtype)
    "reflection_pad1d": lambda lib, d: F(lib).pad(_t(lib, 1, 2, 5, dt=d), [1, 2], mode="reflect"),
    "reflection_pad2d": lambda lib, d: F(lib).pad(_t(lib, 1, 2, 4, 4, dt=d), [1, 2, 2, 1], mode="reflect"),
    "replication_pad1d": lambda lib, d: F(lib).pad(_t(lib, 1, 2, 5, dt=d), [1, 2], mode="replicate"),
    "replication_pad2d": lambda lib, d: F(lib).pad(_t(lib, 1, 2, 4, 4, dt=d), [1, 2, 2, 1], mode="replicate"),
    "replication_pad3d": lambda lib, d: F(lib).pad(_t(lib, 1, 2, 3, 3, 3, dt=d), [1, 2, 2, 1, 0, 1],
                                                   mode="replicate"),
    "linalg_eigvalsh": lambda lib, d: lib.linalg.eigvalsh(_spd(lib, d)),
    "linalg_svdvals": lambda lib, d: lib.linalg.svdvals(_t(lib, 3, 4, dt=d)),
    "pinverse": lambda lib, d: lib.pinverse(_t(lib, 3, 4, dt=d)),
    "hinge_embedding_loss": lambda lib, d: F(lib).hinge_embedding_loss(_t(lib, 2, 3, dt=d),
                                                                       lib.tensor([[1.0, -1.0, 1.0]]).to(_dt(lib, d))),
    "triplet_margin_loss": lambda lib, d: F(lib).triplet_margin_loss(_t(lib, 2, 3, dt=d), _t(lib, 2, 4, dt=d)[:, :3],
                                                                     _t(lib, 3, 3, dt=d)[:2]),
}
# the fft_* of the list: each transform of a real 4x4 bfloat16 input (torch.fft's hfft2 / hfftn /
# ihfft2 / ihfftn are not on it: NOT_LISTED)
for _name in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
              "hfft", "ihfft"):
    FP32[f"fft_{_name}"] = lambda lib, d, n=_name: getattr(lib.fft, n)(_t(lib, 4, 4, dt=d))

# Calls of the same ops that are not on the lists: they keep the bfloat16 of their inputs (torch's
# dtype is asserted too, so a change of its lists shows here).
NOT_LISTED = {
    "constant pad": lambda lib, d: F(lib).pad(_t(lib, 1, 2, 5, dt=d), [1, 2]),
    "circular pad": lambda lib, d: F(lib).pad(_t(lib, 1, 2, 4, 4, dt=d), [1, 1, 1, 1], mode="circular"),
    "reflect pad over 3 dims": lambda lib, d: F(lib).pad(_t(lib, 1, 2, 3, 3, 3, dt=d), [1, 1, 1, 1, 1, 1],
                                                         mode="reflect"),
    "abs": lambda lib, d: lib.abs(_t(lib, 2, 3, dt=d)),
}


def _dt(lib, d):
    return getattr(lib, d)


def _linear_module(lib):
    lib.manual_seed(0)
    return lib.nn.Linear(4, 3)


def _dtype_under_autocast(lib, fn, d):
    with lib.autocast("cpu", dtype=lib.bfloat16):
        out = fn(lib, d)
    return str(out.dtype).split(".")[-1]


@pytest.mark.parametrize("name", sorted(LOWER))
def test_lower_precision_list(name):
    want = _dtype_under_autocast(torch, LOWER[name], "float32")
    assert want == "bfloat16", f"torch's list changed: {name}"
    assert _dtype_under_autocast(flow, LOWER[name], "float32") == want


@pytest.mark.parametrize("name", sorted(FP32))
def test_float32_list(name):
    want = _dtype_under_autocast(torch, FP32[name], "bfloat16")
    got = _dtype_under_autocast(flow, FP32[name], "bfloat16")
    assert got == want, f"{name}: oneflow {got}, torch {want}"


@pytest.mark.parametrize("name", sorted(NOT_LISTED))
def test_not_listed_keep_their_dtype(name):
    want = _dtype_under_autocast(torch, NOT_LISTED[name], "bfloat16")
    assert want == "bfloat16", f"torch's list changed: {name}"
    assert _dtype_under_autocast(flow, NOT_LISTED[name], "bfloat16") == want


# Gradients through the float32 list: (shapes of the bfloat16 leaves, the call).
BACKWARD = {
    "reflection_pad2d": ([(1, 2, 4, 4)], lambda lib, x: F(lib).pad(x, [1, 2, 2, 1], mode="reflect")),
    "replication_pad3d": ([(1, 2, 3, 3, 3)], lambda lib, x: F(lib).pad(x, [1, 2, 2, 1, 0, 1], mode="replicate")),
    "linalg_svdvals": ([(3, 4)], lambda lib, x: lib.linalg.svdvals(x)),
    "pinverse": ([(3, 4)], lambda lib, x: lib.pinverse(x)),
    "hinge_embedding_loss": ([(2, 3)], lambda lib, x: F(lib).hinge_embedding_loss(
        x, lib.tensor([[1.0, -1.0, 1.0]]).to(lib.bfloat16), reduction="sum")),
    "triplet_margin_loss": ([(2, 3), (2, 3), (2, 3)], lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n)),
    "fft_rfft": ([(4, 4)], lambda lib, x: lib.fft.rfft(x).abs()),
    "fft_irfft": ([(4, 4)], lambda lib, x: lib.fft.irfft(x)),
}


@pytest.mark.parametrize("name", sorted(BACKWARD))
def test_float32_list_backward(name):
    # the casts are differentiable: the gradient reaches the bfloat16 leaves in bfloat16, with
    # torch's values (the float32 computation rounded once)
    shapes, fn = BACKWARD[name]
    grads = []
    for lib in (torch, flow):
        leaves = [_t(lib, *s, dt="bfloat16").requires_grad_(True) for s in shapes]
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = fn(lib, *leaves)
        assert str(out.dtype).split(".")[-1] == "float32"
        (out * lib.linspace(0.5, 1.5, out.numel()).reshape(out.shape)).sum().backward()
        grads.append([x.grad for x in leaves])
    for g_t, g_f in zip(*grads):
        assert str(g_f.dtype) == "oneflow.bfloat16" and g_t.dtype == torch.bfloat16
        assert g_f.float().numpy() == pytest.approx(g_t.float().numpy(), rel=2e-2, abs=2e-2)
