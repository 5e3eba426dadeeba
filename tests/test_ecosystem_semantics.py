"""Semantics OneFlow's ecosystem code and upstream's test suite rely on (issue 37): each against
PyTorch where PyTorch has the behaviour, else against OneFlow's documented one."""
import copy
import pickle

import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow import nn


def _model():
    flow.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 2))


def test_deepcopy_module_for_ema():
    m = _model()
    x = flow.randn(2, 3, 6, 6)
    m(x).sum().backward()  # parameters with gradients, running stats moved
    ema = copy.deepcopy(m)
    for (n, a), (_, b) in zip(m.state_dict().items(), ema.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)
        assert a.data_ptr() != b.data_ptr()
    # As torch's Parameter.__deepcopy__: the copy's parameters start without gradients.
    assert m[0].weight.grad is not None and ema[0].weight.grad is None
    assert ema[0].weight.requires_grad and type(ema[0].weight) is type(m[0].weight)
    # An EMA update of the copy leaves the model alone.
    with flow.no_grad():
        for pe, pm in zip(ema.parameters(), m.parameters()):
            pe.mul_(0.5).add_(pm, alpha=0.5)
            pe.add_(1.0)
    assert not np.allclose(ema[0].weight.numpy(), m[0].weight.numpy())
    ema.eval()
    m.eval()
    assert ema(x).shape == m(x).shape


def test_pickle_module_round_trip():
    m = _model()
    m2 = pickle.loads(pickle.dumps(m))
    x = flow.randn(2, 3, 6, 6)
    m.eval()
    m2.eval()
    np.testing.assert_allclose(m2(x).numpy(), m(x).numpy(), rtol=1e-6)


def test_deepcopy_non_leaf_copies_as_oneflow():
    # PyTorch refuses to deep-copy a non-leaf; upstream OneFlow copies its values, detached
    # (docs/architecture.md §1: OneFlow's behaviour where the two differ).
    fx = flow.ones(2, requires_grad=True)
    y = fx * 2
    y.tag = "kept"
    c = copy.deepcopy(y)
    assert c.is_leaf and not c.requires_grad and c.grad_fn is None and c.tolist() == [2.0, 2.0]
    assert c.tag == "kept" and not c._shares_storage(y)
    c = copy.deepcopy(fx)  # a leaf copies, keeping requires_grad
    assert c.requires_grad and c.is_leaf and c.tolist() == [1.0, 1.0]
    d = copy.deepcopy((fx * 2).detach())
    assert d.tolist() == [2.0, 2.0]
    pair = copy.deepcopy([y, y])  # one copy per tensor, through the memo
    assert pair[0] is pair[1]


def test_placement_takes_numpy_ranks():
    p = flow.placement("cpu", np.array([0]))
    assert p == flow.placement("cpu", [0]) and p.ranks.tolist() == [0]
    p2 = flow.placement("cpu", np.array([[0]]))
    assert p2.hierarchy == flow.placement("cpu", [[0]]).hierarchy and p2.ranks.tolist() == [[0]]
    p3 = flow.placement("cpu", ranks=np.arange(1))
    assert p3 == p
    assert all(type(r) is int for r in flow.placement("cpu", np.array([0]))._ranks)
    with pytest.raises(TypeError):
        flow.placement("cpu", np.array([-1]))


@pytest.mark.parametrize("opt", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "LAMB"])
def test_optimizer_over_empty_parameter_list(opt):
    with pytest.raises(ValueError, match="empty parameter list"):
        getattr(torch.optim, opt if opt != "LAMB" else "SGD")([], lr=0.1)  # PyTorch refuses (OneFlow: accepts)
    o = getattr(flow.optim, opt)([], lr=0.1)
    o.zero_grad()
    o.step()
    assert o.param_groups == [] and o.state_dict()["param_groups"] == []
    # Parameters can still join later, as in both frameworks.
    w = nn.Parameter(flow.ones(2))
    o.add_param_group({"params": [w]})
    (w * 3).sum().backward()
    o.step()
    assert w.tolist() != [1.0, 1.0]


def test_number_minus_bool_tensor_as_oneflow():
    b = flow.tensor([True, False, True])
    r = 1 - b
    assert r.dtype == flow.int64 and r.tolist() == [0, 1, 0]
    r = b - 1
    assert r.dtype == flow.int64 and r.tolist() == [0, -1, 0]
    r = 1.0 - b
    assert r.dtype == flow.float32 and r.tolist() == [0.0, 1.0, 0.0]
    # The LiBai use: an additive attention mask from a bool keep-mask.
    mask = flow.tensor([[True, False]])
    ext = (1 - mask) * -10000.0
    assert ext.dtype == flow.float32 and ext.tolist() == [[0.0, -10000.0]]
    # What PyTorch refuses and OneFlow's rule does not cover stays refused.
    with pytest.raises(RuntimeError, match="two bool tensors"):
        b - b
    with pytest.raises(RuntimeError, match="bool tensor"):
        b - flow.tensor([1, 1, 1])
    with pytest.raises(RuntimeError):
        torch.tensor([True]) - torch.tensor([1])
    with pytest.raises(RuntimeError):
        1 - torch.tensor([True])  # PyTorch refuses what OneFlow computes (docs/oneflow_differences.md)


def test_module_to_on_global_parameters():
    p = flow.placement("cpu", [0])
    m = nn.Linear(3, 2).to_global(p, flow.sbp.broadcast)
    w = m.weight
    opt = flow.optim.SGD(m.parameters(), lr=0.1)
    w0 = w.to_local().numpy().copy()
    m.to("cpu")
    m.to(flow.float64)
    assert m.weight is w and w.is_global and w.placement == p and w.dtype == flow.float64
    x = flow.ones(4, 3, dtype=flow.float64).to_global(p, flow.sbp.broadcast)
    m(x).sum().backward()
    assert w.grad.dtype == flow.float64
    opt.step()  # the optimizer holds the same parameter: the update reaches the module
    np.testing.assert_allclose(w.to_local().numpy(), w0 - 0.1 * 4.0, rtol=1e-6)
    m.double().float()
    assert m.weight is w and w.dtype == flow.float32 and w.is_global
    with pytest.raises(TypeError, match="global"):
        w.data = flow.ones(2, 3)


def _torch_quantize_ref(x, bit):
    # OneFlow's google / symmetric per-layer formula: scale = max|x| / (2^(b-1) - 1), round half even.
    scale = np.abs(x).max() / (2 ** (bit - 1) - 1)
    return np.clip(np.round(x / scale), -(2 ** (bit - 1)), 2 ** (bit - 1) - 1), scale


@pytest.mark.parametrize("bit", [8, 16, 32])
def test_quantization_bit_up_to_32(bit):
    x = np.random.RandomState(0).randn(64).astype(np.float64)
    obs = nn.MinMaxObserver(quantization_bit=bit)
    scale, zp = obs(flow.tensor(x))
    q = nn.Quantization(quantization_bit=bit)(flow.tensor(x), scale, zp)
    ref, ref_scale = _torch_quantize_ref(x, bit)
    np.testing.assert_allclose(float(scale), ref_scale, rtol=1e-12)
    np.testing.assert_array_equal(q.numpy(), ref)
    with pytest.raises(ValueError):
        nn.Quantization(quantization_bit=33)


def test_ofrecord_and_image_names():
    assert nn.OfrecordRawDecoder is nn.OFRecordRawDecoder
    from oneflow._tensor_buffer import TensorBuffer

    imgs = TensorBuffer([flow.tensor(np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)),
                         flow.tensor(np.full((2, 2, 3), 7, dtype=np.uint8))], (2,))
    out, scale, size = nn.image.Resize(target_size=(3, 2))(imgs)  # (width, height)
    assert tuple(out.shape) == (2, 2, 3, 3) and size is None
    np.testing.assert_allclose(scale.numpy(), [[0.5, 0.5], [1.5, 1.0]])
    flipped = nn.image.flip()(imgs, [1, 0])
    np.testing.assert_array_equal(flipped.elements[0].numpy(), imgs.elements[0].numpy()[:, ::-1])
    normed = nn.image.normalize(std=[2.0, 2.0, 2.0], mean=[1.0, 1.0, 1.0])(imgs)
    np.testing.assert_allclose(normed.elements[1].numpy(), np.full((2, 2, 3), 3.0))


def test_graph_add_optimizer_is_sparse_accepted():
    emb = nn.Embedding(5, 2)
    ref = nn.Embedding(5, 2)
    ref.load_state_dict(emb.state_dict())
    opt = flow.optim.SGD(emb.parameters(), lr=0.5)

    class G(nn.Graph):
        def __init__(self):
            super().__init__()
            self.emb = emb
            self.add_optimizer(opt, is_sparse=True)

        def build(self, idx):
            loss = self.emb(idx).sum()
            loss.backward()
            return loss

    idx = flow.tensor([1, 3])
    G()(idx)
    ref(idx).sum().backward()
    with flow.no_grad():
        ref.weight.sub_(0.5 * ref.weight.grad)
    # Plain SGD: the sparse update equals the dense one (untouched rows have zero gradient).
    np.testing.assert_allclose(emb.weight.numpy(), ref.weight.numpy(), rtol=1e-6)
    with pytest.raises(TypeError):
        G.add_optimizer(G.__new__(G), opt, is_sparse="yes")


_LOSS_CASES = [("BCELoss", {"weight": 3}), ("BCELoss", {}), ("NLLLoss", {"weight": 3}), ("NLLLoss", {}),
               ("CrossEntropyLoss", {"weight": 3}), ("CrossEntropyLoss", {}),
               ("BCEWithLogitsLoss", {"pos_weight": 3}), ("BCEWithLogitsLoss", {"weight": 3, "pos_weight": 3}),
               ("BCEWithLogitsLoss", {}), ("PReLU", {}), ("PReLU", {"num_parameters": 3}),
               ("Linear", {"in_features": 3, "out_features": 2}), ("Linear", {"in_features": 3, "out_features": 2,
                                                                             "bias": False})]


def _make(lib, name, kw, seed):
    g = np.random.RandomState(seed)
    args = {k: (lib.tensor(g.rand(v).astype(np.float32)) if k in ("weight", "pos_weight") else v)
            for k, v in kw.items()}
    return getattr(lib.nn, name)(**args)


@pytest.mark.parametrize("name", sorted({n for n, _ in _LOSS_CASES}))
def test_load_state_dict_from_torch_modules(name):
    kws = [kw for n, kw in _LOSS_CASES if n == name]
    for src_kw in kws:
        src = _make(torch, name, src_kw, 1).state_dict()  # a dict written by another framework
        for dst_kw in kws:
            tm = _make(torch, name, dst_kw, 2)
            fm = _make(flow, name, dst_kw, 2)
            try:
                tm.load_state_dict(src)
                torch_ok = True
            except RuntimeError:
                torch_ok = False
            converted = {k: flow.tensor(v.numpy()) for k, v in src.items()}
            if torch_ok:
                fm.load_state_dict(converted)
                got = fm.state_dict()
                assert set(got) == set(src)
                for k in src:
                    np.testing.assert_array_equal(got[k].numpy(), src[k].numpy())
            else:  # a buffer on one side only (missing / unexpected key) or another size, as torch
                with pytest.raises(RuntimeError, match=r"Error\(s\) in loading state_dict"):
                    fm.load_state_dict(converted)
                try:
                    tres = tm.load_state_dict(src, strict=False)
                except RuntimeError:  # a size mismatch fails without strict too
                    with pytest.raises(RuntimeError, match="size mismatch"):
                        fm.load_state_dict(converted, strict=False)
                    continue
                res = fm.load_state_dict(converted, strict=False)
                assert sorted(res.missing_keys) == sorted(tres.missing_keys)
                assert sorted(res.unexpected_keys) == sorted(tres.unexpected_keys)


def test_int16_is_a_dtype():
    # upstream's flow.int16 (LiBai and flowvision name it); numpy int16 data keeps its dtype.
    assert isinstance(flow.int16, flow.dtype) and flow.short is flow.int16
    assert flow.tensor(np.array([1, 2], dtype=np.int16)).dtype == flow.int16
