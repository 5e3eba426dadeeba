"""ResNet-50 (torchvision's layout: bottleneck blocks [3, 4, 6, 3], stride on the 3x3 conv),
25,557,032 parameters at 1000 classes. Benchmark: batch 8 at 224x224."""
from ._common import classification_batch, cross_entropy

SIZES = {"full": dict(batch=8, hw=224, classes=1000, width=64, blocks=(3, 4, 6, 3)),
         "tiny": dict(batch=2, hw=32, classes=10, width=8, blocks=(1, 1, 1, 1))}
UNIT = "images"
REFERENCE_PARAMS = 25_557_032  # torchvision.models.resnet50()


def items(cfg):
    return cfg["batch"]


def build(lib, cfg):
    nn = lib.nn

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * self.expansion
            self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            return self.relu(out + identity)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            w = cfg["width"]
            self.conv1 = nn.Conv2d(3, w, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(w)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
            cin = w
            for i, n in enumerate(cfg["blocks"]):
                width = w * 2 ** i
                blocks = []
                for j in range(n):
                    blocks.append(Bottleneck(cin, width, 2 if (j == 0 and i > 0) else 1))
                    cin = width * Bottleneck.expansion
                setattr(self, f"layer{i + 1}", nn.Sequential(*blocks))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(cin, cfg["classes"])

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(lib.flatten(self.avgpool(x), 1))

    return ResNet()


def batch(lib, cfg, rng):
    return classification_batch(lib, rng, cfg["batch"], 3, cfg["hw"], cfg["classes"])


loss = cross_entropy
