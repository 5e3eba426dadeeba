"""OneFlow's model zoo (flowvision 0.2.2, installed by scripts/setup.sh) imported and trained
unchanged on this framework: a broad sample of its models run forward, backward and SGD steps;
two are compared number for number with PyTorch re-implementations that load the same weights
(torchvision cannot be the reference: its only 2.13 wheel links CUDA torch's libraries)."""
import numpy as np
import pytest
import torch
import torch.nn as tnn

import oneflow as flow

flowvision = pytest.importorskip("flowvision")  # scripts/setup.sh installs it; absent = setup not run
import flowvision.models as fvm  # noqa: E402


def test_import_paths_that_flowvision_uses():
    # The upstream module paths flowvision imports by name (each once blocked `import flowvision`).
    from oneflow.framework.tensor import Tensor
    from oneflow.nn.modules.utils import _pair

    assert Tensor is flow.Tensor
    assert _pair(3) == (3, 3)
    assert flow.framework.dtype.convert_oneflow_dtype_to_numpy_dtype(flow.float32) is np.float32
    assert callable(flow.jit._script_if_tracing(len))
    # The zoo's registry filled at import: every model module was imported without error.
    assert len(fvm.ModelCreator._model_list) > 250
    assert {"resnet18", "vit_tiny_patch16_224", "swin_tiny_patch4_window7_224"} <= set(fvm.ModelCreator._model_list)


def _zoo(name):
    return lambda: getattr(fvm, name)(num_classes=10)


def _vit():
    from flowvision.models.vision_transformer import VisionTransformer

    return VisionTransformer(img_size=64, patch_size=16, num_classes=10, embed_dim=96, depth=2, num_heads=3)


def _swin():
    from flowvision.models.swin_transformer import SwinTransformer

    return SwinTransformer(img_size=56, patch_size=4, num_classes=10, embed_dim=48, depths=(2, 2),
                           num_heads=(3, 6), window_size=7)


def _pvt():
    from flowvision.models.pvt import PyramidVisionTransformer

    return PyramidVisionTransformer(img_size=64, patch_size=4, num_classes=10, embed_dims=[32, 64, 128, 256],
                                    num_heads=[1, 2, 4, 8], depths=[1, 1, 1, 1], sr_ratios=[8, 4, 2, 1])


# (id, constructor, input side): the zoo's families. CNNs as registered; transformers through their
# classes with small configs (documented constructor arguments) so a step stays under a second.
_SAMPLE = [(n, _zoo(n), 64) for n in (
    "resnet18", "mobilenet_v2", "mobilenet_v3_small", "densenet121", "efficientnet_b0", "convnext_tiny_224",
    "shufflenet_v2_x0_5", "squeezenet1_1", "ghostnet", "regnet_y_400mf", "poolformer_s12", "mobilevit_xx_small")]
_SAMPLE += [
    ("vit", _vit, 64), ("swin", _swin, 56), ("pvt", _pvt, 64),
    ("mlp_mixer_s32", lambda: fvm.mlp_mixer_s32_224(num_classes=10, img_size=64), 64),
    ("resmlp_12", lambda: fvm.resmlp_12_224(num_classes=10, img_size=64), 64),
    ("gmlp_ti16", lambda: fvm.gmlp_ti16_224(num_classes=10, img_size=64), 64),
    ("uniformer_small", lambda: fvm.uniformer_small(num_classes=10, img_size=64), 64),
]


@pytest.mark.parametrize("make,side", [s[1:] for s in _SAMPLE], ids=[s[0] for s in _SAMPLE])
def test_model_trains(make, side):
    flow.manual_seed(0)
    model = make()
    model.train()
    params = list(model.parameters())
    opt = flow.optim.SGD(params, lr=1e-3)
    g = np.random.RandomState(0)
    x = flow.tensor(g.randn(2, 3, side, side).astype(np.float32))
    y = flow.tensor([1, 7])
    losses, stem_grads = [], []
    for _ in range(3):
        flow.manual_seed(1)  # the same dropout / drop-path masks each step: the loss is one function
        out = model(x)
        out = out[0] if isinstance(out, (tuple, list)) else out
        assert tuple(out.shape) == (2, 10)
        loss = flow.nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        grads = [p.grad for p in params if p.grad is not None]
        assert len(grads) >= 0.9 * len(params)  # nearly every parameter is on the loss's path
        assert all(bool(flow.isfinite(gr).all()) for gr in grads)
        # The first parameter is the stem's: a nonzero gradient there went through the whole net
        # (zero at the first step where the head starts at zero, as in the Mixer family's init).
        stem_grads.append(float(params[0].grad.abs().sum()))
        opt.step()
        losses.append(float(loss))
    assert max(stem_grads) > 0
    assert np.isfinite(losses).all()
    assert losses[-1] < losses[0], losses  # the same batch: SGD lowers its loss


# --- PyTorch re-implementations with the zoo's parameter names (state dicts load one-to-one) ---

class _TBasicBlock(tnn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = tnn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(cout)
        self.relu = tnn.ReLU(inplace=True)
        self.conv2 = tnn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = tnn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = tnn.Sequential(tnn.Conv2d(cin, cout, 1, stride, bias=False), tnn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + idt)


class _TResNet18(tnn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = tnn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = tnn.BatchNorm2d(64)
        self.relu = tnn.ReLU(inplace=True)
        self.maxpool = tnn.MaxPool2d(3, 2, 1)
        chans = [64, 128, 256, 512]
        cin = 64
        for i, c in enumerate(chans):
            s = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", tnn.Sequential(_TBasicBlock(cin, c, s), _TBasicBlock(c, c, 1)))
            cin = c
        self.avgpool = tnn.AdaptiveAvgPool2d(1)
        self.fc = tnn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def _t_conv_bn(cin, cout, k, s, groups=1, act=True):
    layers = [tnn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=False), tnn.BatchNorm2d(cout)]
    if act:
        layers.append(tnn.ReLU6(inplace=True))
    return tnn.Sequential(*layers)


class _TInvertedResidual(tnn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = [] if expand == 1 else [_t_conv_bn(cin, hidden, 1, 1)]
        layers += [_t_conv_bn(hidden, hidden, 3, stride, groups=hidden),
                   tnn.Conv2d(hidden, cout, 1, 1, 0, bias=False), tnn.BatchNorm2d(cout)]
        self.conv = tnn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class _TMobileNetV2(tnn.Module):
    def __init__(self, num_classes):
        super().__init__()
        feats = [_t_conv_bn(3, 32, 3, 2)]
        cin = 32
        for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                           (6, 160, 3, 2), (6, 320, 1, 1)]:
            for i in range(n):
                feats.append(_TInvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        feats.append(_t_conv_bn(cin, 1280, 1, 1))
        self.features = tnn.Sequential(*feats)
        self.classifier = tnn.Sequential(tnn.Dropout(0.2), tnn.Linear(1280, num_classes))

    def forward(self, x):
        x = tnn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


def _to_torch(t):
    return torch.from_numpy(t.detach().numpy().copy())


@pytest.mark.parametrize("name,ref", [("resnet18", _TResNet18), ("mobilenet_v2", _TMobileNetV2)])
def test_model_matches_pytorch(name, ref):
    flow.manual_seed(0)
    fm = getattr(fvm, name)(num_classes=10)
    tm = ref(10)
    fsd = fm.state_dict()
    assert set(fsd) == set(tm.state_dict())
    tm.load_state_dict({k: _to_torch(v) for k, v in fsd.items()})
    # float64 on both sides: BatchNorm makes some gradients sums that cancel to ~0 (a BN bias
    # followed by conv + BN has a zero gradient in exact arithmetic), which float32 leaves as noise.
    fm = fm.double()
    tm = tm.double()
    # Train mode without dropout's randomness: mobilenet's classifier dropout as identity on both.
    fm.train()
    tm.train()
    for mod in list(fm.modules()):
        if isinstance(mod, flow.nn.Dropout):
            mod.p = 0.0
    for mod in tm.modules():
        if isinstance(mod, tnn.Dropout):
            mod.p = 0.0
    fopt = flow.optim.SGD(fm.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    topt = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    x = np.random.RandomState(1).randn(4, 3, 64, 64)
    y = np.array([0, 3, 5, 9])
    fo = fm(flow.tensor(x))
    to = tm(torch.tensor(x))
    np.testing.assert_allclose(fo.numpy(), to.detach().numpy(), rtol=1e-9, atol=1e-12)
    fl = flow.nn.functional.cross_entropy(fo, flow.tensor(y))
    tl = tnn.functional.cross_entropy(to, torch.tensor(y))
    np.testing.assert_allclose(float(fl), float(tl.detach()), rtol=1e-12)
    fl.backward()
    tl.backward()
    tparams = dict(tm.named_parameters())
    for k, p in fm.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[k].grad.numpy(), rtol=1e-7, atol=1e-12, err_msg=k)
    fopt.step()
    topt.step()
    for k, p in fm.named_parameters():
        np.testing.assert_allclose(p.numpy(), tparams[k].detach().numpy(), rtol=1e-9, atol=1e-12, err_msg=k)
    np.testing.assert_allclose(fm(flow.tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-9, atol=1e-12)
    # Running statistics updated alike: eval-mode outputs after the steps agree.
    fm.eval()
    tm.eval()
    np.testing.assert_allclose(fm(flow.tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-9, atol=1e-12)


def test_segmentation_model_trains():
    # A dense-prediction model of the zoo (dict output, upsampled logits), per-pixel cross entropy.
    from flowvision.models.segmentation import lraspp_mobilenet_v3_large_coco

    flow.manual_seed(0)
    model = lraspp_mobilenet_v3_large_coco(pretrained_backbone=False, num_classes=3)
    model.train()
    opt = flow.optim.SGD(model.parameters(), lr=1e-3)
    x = flow.tensor(np.random.RandomState(0).randn(2, 3, 64, 64).astype(np.float32))
    target = flow.tensor(np.random.RandomState(1).randint(0, 3, (2, 64, 64)))
    losses = []
    for _ in range(3):
        out = model(x)["out"]
        assert tuple(out.shape) == (2, 3, 64, 64)
        loss = flow.nn.functional.cross_entropy(out, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < losses[0], losses
