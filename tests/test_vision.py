"""flow.utils.vision: the IDX reader and MNIST/FashionMNIST datasets (synthetic files and
Debian's Fashion-MNIST), and the transforms (against numpy and torch references)."""
import gzip
import os
import struct

import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow.utils.vision import datasets, transforms

FASHION = "/usr/share/datasets/fashion-mnist"


def _write_idx(path, arr, gz=False):
    code = {np.uint8: 0x08, np.int32: 0x0C}[arr.dtype.type]
    head = bytes([0, 0, code, arr.ndim]) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    data = head + arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    with (gzip.open if gz else open)(path, "wb") as f:
        f.write(data)


def _fake_mnist(root, n=7, gz=False, sub=""):
    folder = os.path.join(root, sub)
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(0)
    out = {}
    for split, prefix in ((True, "train"), (False, "t10k")):
        imgs = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, n).astype(np.uint8)
        ext = ".gz" if gz else ""
        _write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte{ext}"), imgs, gz)
        _write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte{ext}"), labels, gz)
        out[split] = (imgs, labels)
    return out


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("sub", ["", "MNIST/raw"])
def test_mnist_from_idx_files(tmp_path, gz, sub):
    data = _fake_mnist(str(tmp_path), gz=gz, sub=sub)
    for train in (True, False):
        ds = datasets.MNIST(str(tmp_path), train=train)
        imgs, labels = data[train]
        assert len(ds) == len(imgs)
        img, target = ds[3]
        assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.shape == (28, 28)
        np.testing.assert_array_equal(img, imgs[3])
        assert target == int(labels[3]) and isinstance(target, int)
        assert ds.targets.dtype == flow.int64


def test_dataset_transforms_applied(tmp_path):
    _fake_mnist(str(tmp_path))
    ds = datasets.MNIST(str(tmp_path), transform=transforms.ToTensor(),
                        target_transform=lambda y: y + 100)
    img, target = ds[0]
    assert tuple(img.shape) == (1, 28, 28) and img.dtype == flow.float32 and target >= 100


def test_dataset_errors(tmp_path):
    with pytest.raises(RuntimeError, match="network.*'" + str(tmp_path)):
        datasets.FashionMNIST(str(tmp_path), download=True)
    with pytest.raises(RuntimeError, match="dataset not found.*train-images-idx3-ubyte"):
        datasets.FashionMNIST(str(tmp_path))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "train-images-idx3-ubyte").write_bytes(b"\x12\x34\x08\x03" + b"\0" * 20)
    (bad / "train-labels-idx1-ubyte").write_bytes(b"\0\0\x08\x01" + struct.pack(">I", 2) + b"\1")
    with pytest.raises(RuntimeError, match="not an IDX file"):
        datasets.MNIST(str(bad))
    (bad / "train-images-idx3-ubyte").write_bytes(b"\0\0\x08\x03" + struct.pack(">III", 2, 2, 2))
    with pytest.raises(RuntimeError, match="data bytes"):
        datasets.MNIST(str(bad))


@pytest.mark.skipif(not os.path.isdir(FASHION), reason="Debian's dataset-fashion-mnist missing "
                    "(scripts/setup.sh installs it)")
def test_fashion_mnist_debian_files():
    train = datasets.FashionMNIST(FASHION, train=True)
    test = datasets.FashionMNIST(FASHION, train=False)
    assert len(train) == 60000 and len(test) == 10000
    img, target = test[0]
    assert img.shape == (28, 28) and 0 <= target < 10
    assert train.classes[9] == "Ankle boot"
    counts = np.bincount(test.targets_np, minlength=10)
    assert counts.tolist() == [1000] * 10


def test_to_tensor():
    rng = np.random.default_rng(0)
    hwc = rng.integers(0, 256, (5, 4, 3), dtype=np.uint8)
    t = transforms.ToTensor()(hwc)
    assert tuple(t.shape) == (3, 5, 4) and t.dtype == flow.float32
    np.testing.assert_allclose(t.numpy(), hwc.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    hw = rng.integers(0, 256, (5, 4), dtype=np.uint8)
    assert tuple(transforms.ToTensor()(hw).shape) == (1, 5, 4)
    f = rng.standard_normal((2, 2, 1)).astype(np.float32)
    np.testing.assert_array_equal(transforms.ToTensor()(f).numpy(), f.transpose(2, 0, 1))
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        transforms.ToTensor()(flow.zeros(2, 2))


def test_normalize_compose_lambda():
    x = flow.tensor(np.random.default_rng(1).random((3, 4, 4)).astype(np.float32))
    norm = transforms.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.5))
    want = (torch.tensor(x.numpy()) - torch.tensor([0.5, 0.4, 0.3]).view(3, 1, 1)) \
        / torch.tensor([0.2, 0.25, 0.5]).view(3, 1, 1)
    np.testing.assert_allclose(norm(x).numpy(), want.numpy(), rtol=1e-6)
    pipe = transforms.Compose([transforms.Lambda(lambda t: t * 2), norm])
    np.testing.assert_allclose(pipe(x).numpy(), norm(x * 2).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        transforms.Normalize([0.0], [0.0])(flow.zeros(1, 2, 2))
    with pytest.raises(TypeError, match="float tensor"):
        transforms.Normalize([0.0], [1.0])(flow.zeros(1, 2, 2, dtype=flow.int64))
    y = x.clone()
    out = transforms.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.5), inplace=True)(y)
    assert out is y
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-6)


def test_horizontal_flip():
    img = np.arange(12, dtype=np.uint8).reshape(3, 4)
    np.testing.assert_array_equal(transforms.RandomHorizontalFlip(1.0)(img), img[:, ::-1])
    np.testing.assert_array_equal(transforms.RandomHorizontalFlip(0.0)(img), img)
    t = flow.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(transforms.RandomHorizontalFlip(1.0)(t).numpy(),
                                  t.numpy()[..., ::-1])
    flips = sum(int(transforms.RandomHorizontalFlip()(img)[0, 0] == 3) for _ in range(400))
    assert 120 < flips < 280


@pytest.mark.parametrize("padding", [None, 2, (1, 3), (1, 2, 3, 4)])
def test_random_crop(padding):
    img = np.arange(36, dtype=np.uint8).reshape(6, 6)
    crop = transforms.RandomCrop(4, padding=padding)
    pad = {None: (0, 0, 0, 0), 2: (2, 2, 2, 2), (1, 3): (1, 3, 1, 3),
           (1, 2, 3, 4): (1, 2, 3, 4)}[padding]
    padded = np.pad(img, ((pad[1], pad[3]), (pad[0], pad[2])))
    flow.manual_seed(0)
    outs = [crop(img) for _ in range(30)]
    for o in outs:
        assert o.shape == (4, 4)
        found = any(np.array_equal(padded[i:i + 4, j:j + 4], o)
                    for i in range(padded.shape[0] - 3) for j in range(padded.shape[1] - 3))
        assert found
    flow.manual_seed(0)
    assert all(np.array_equal(a, crop(img)) for a in outs)
    t = flow.tensor(img).reshape(1, 6, 6)
    assert tuple(transforms.RandomCrop(3, padding=1)(t).shape) == (1, 3, 3)
    with pytest.raises(ValueError, match="larger than input image"):
        transforms.RandomCrop(8)(img)


@pytest.mark.parametrize("size", [(5, 7), (16, 12), 4, (3, 3)])
def test_resize_bilinear_matches_interpolate(size):
    x = np.random.default_rng(2).standard_normal((2, 9, 11)).astype(np.float32)
    out = transforms.Resize(size)(flow.tensor(x))
    if isinstance(size, int):
        size = (size, int(size * 11 / 9))
    want = torch.nn.functional.interpolate(torch.tensor(x)[None], size=size, mode="bilinear",
                                           align_corners=False)[0]
    assert tuple(out.shape) == tuple(want.shape)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
