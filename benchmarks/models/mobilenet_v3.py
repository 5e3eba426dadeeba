"""MobileNetV3-Large (torchvision's layout: inverted residuals with squeeze-excitation and
hardswish, BatchNorm eps 1e-3), 5,483,032 parameters at 1000 classes. Benchmark: batch 8, 224x224."""
from ._common import classification_batch, cross_entropy

# kernel, expanded channels, out channels, squeeze-excite, activation (RE / HS), stride
LARGE = [(3, 16, 16, False, "RE", 1), (3, 64, 24, False, "RE", 2), (3, 72, 24, False, "RE", 1),
         (5, 72, 40, True, "RE", 2), (5, 120, 40, True, "RE", 1), (5, 120, 40, True, "RE", 1),
         (3, 240, 80, False, "HS", 2), (3, 200, 80, False, "HS", 1), (3, 184, 80, False, "HS", 1),
         (3, 184, 80, False, "HS", 1), (3, 480, 112, True, "HS", 1), (3, 672, 112, True, "HS", 1),
         (5, 672, 160, True, "HS", 2), (5, 960, 160, True, "HS", 1), (5, 960, 160, True, "HS", 1)]
SIZES = {"full": dict(batch=8, hw=224, classes=1000, blocks=LARGE, last=1280),
         "tiny": dict(batch=2, hw=32, classes=10, blocks=LARGE[:5], last=64)}
UNIT = "images"
REFERENCE_PARAMS = 5_483_032  # torchvision.models.mobilenet_v3_large()


def items(cfg):
    return cfg["batch"]


def _divisible(v, d=8):
    new = max(d, int(v + d / 2) // d * d)
    return new + d if new < 0.9 * v else new


def build(lib, cfg):
    nn = lib.nn

    def conv_bn(cin, cout, k, stride=1, groups=1, act=None):
        layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(cout, eps=0.001, momentum=0.01)]
        if act is not None:
            layers.append(nn.Hardswish() if act == "HS" else nn.ReLU(inplace=True))
        return nn.Sequential(*layers)

    class SqueezeExcite(nn.Module):
        def __init__(self, c):
            super().__init__()
            squeeze = _divisible(c // 4)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(c, squeeze, 1)
            self.relu = nn.ReLU()
            self.fc2 = nn.Conv2d(squeeze, c, 1)
            self.scale = nn.Hardsigmoid()

        def forward(self, x):
            return x * self.scale(self.fc2(self.relu(self.fc1(self.avgpool(x)))))

    class InvertedResidual(nn.Module):
        def __init__(self, cin, k, exp, cout, se, act, stride):
            super().__init__()
            self.residual = stride == 1 and cin == cout
            layers = [] if exp == cin else [conv_bn(cin, exp, 1, act=act)]
            layers.append(conv_bn(exp, exp, k, stride, groups=exp, act=act))
            if se:
                layers.append(SqueezeExcite(exp))
            layers.append(conv_bn(exp, cout, 1))
            self.block = nn.Sequential(*layers)

        def forward(self, x):
            y = self.block(x)
            return x + y if self.residual else y

    class MobileNetV3(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [conv_bn(3, 16, 3, 2, act="HS")]
            cin = 16
            for k, exp, cout, se, act, stride in cfg["blocks"]:
                layers.append(InvertedResidual(cin, k, exp, cout, se, act, stride))
                cin = cout
            layers.append(conv_bn(cin, 6 * cin, 1, act="HS"))
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Sequential(nn.Linear(6 * cin, cfg["last"]), nn.Hardswish(),
                                            nn.Dropout(0.2), nn.Linear(cfg["last"], cfg["classes"]))

        def forward(self, x):
            return self.classifier(lib.flatten(self.avgpool(self.features(x)), 1))

    return MobileNetV3()


def batch(lib, cfg, rng):
    return classification_batch(lib, rng, cfg["batch"], 3, cfg["hw"], cfg["classes"])


loss = cross_entropy
