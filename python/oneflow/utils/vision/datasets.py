"""MNIST-format datasets (the IDX files of MNIST and Fashion-MNIST), as OneFlow 0.7's
oneflow.utils.vision.datasets / torchvision.datasets give them.

Images are returned as H x W uint8 numpy arrays (no PIL dependency; transforms.ToTensor turns
them into 1 x H x W float tensors in [0, 1]); targets as Python ints.
"""
import gzip
import os
import struct

import numpy as np

from ... import _oneflow_internal as _C
from ..data.dataset import Dataset

# IDX element type codes -> numpy dtype (big-endian on disk).
_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path):
    """Reads an IDX file (gzipped or not) into a numpy array, checking its header."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            raw = f.read()
    except (OSError, EOFError) as e:
        raise RuntimeError(f"could not read IDX file '{path}': {e}") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise RuntimeError(f"'{path}' is not an IDX file (bad magic number)")
    ndim = raw[3]
    head = 4 + 4 * ndim
    if len(raw) < head:
        raise RuntimeError(f"IDX file '{path}' is truncated in its header")
    shape = struct.unpack(">" + "I" * ndim, raw[4:head])
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    count = int(np.prod(shape)) if shape else 1
    if len(raw) - head != count * dtype.itemsize:
        raise RuntimeError(f"IDX file '{path}' has {len(raw) - head} data bytes, expected "
                           f"{count * dtype.itemsize} for shape {tuple(shape)}")
    return np.frombuffer(raw, dtype=dtype, offset=head).reshape(shape).astype(
        dtype.newbyteorder("="), copy=True)


class MNIST(Dataset):
    """MNIST digits (`root` holds the four IDX files, plain or .gz, directly or under
    `<root>/<ClassName>/raw/` / `<root>/raw/`, as torchvision lays them out).

    Args:
        root (str): data directory.
        train (bool): the training split (60000 images) or the test split (10000).
        transform (callable): applied to each image (an H x W uint8 array).
        target_transform (callable): applied to each target (an int).
        download (bool): there is no network here: True raises with where to put the files.
    """

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]
    files = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
             False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False,
                 source_url=None):
        self.root = os.fspath(root)
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        if download:
            raise RuntimeError(
                f"{type(self).__name__}: download=True needs the network, which is not "
                f"available here. Put the IDX files {', '.join(self._all_files())} (optionally "
                f".gz) into '{self.root}' (or '{self._raw_folder()}') and use download=False."
                + (" Debian's package dataset-fashion-mnist installs Fashion-MNIST into "
                   "/usr/share/datasets/fashion-mnist." if type(self) is FashionMNIST else ""))
        images, labels = (self._find(n) for n in self.files[train])
        self.data = read_idx(images)
        self.targets_np = read_idx(labels).astype(np.int64)
        if self.data.ndim != 3 or self.targets_np.ndim != 1 \
                or len(self.data) != len(self.targets_np):
            raise RuntimeError(f"{type(self).__name__}: images {self.data.shape} and labels "
                               f"{self.targets_np.shape} in '{self.root}' do not match")
        self.targets = _C.from_numpy(self.targets_np)

    def _all_files(self):
        return [f for pair in self.files.values() for f in pair]

    def _raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    def _find(self, name):
        for folder in (self.root, self._raw_folder(), os.path.join(self.root, "raw")):
            for candidate in (name, name + ".gz"):
                p = os.path.join(folder, candidate)
                if os.path.isfile(p):
                    return p
        raise RuntimeError(f"{type(self).__name__}: dataset not found: no '{name}' (or .gz) in "
                           f"'{self.root}' or '{self._raw_folder()}'. You can use download=True "
                           "to download it (needs the network).")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets_np[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        split = "Train" if self.train else "Test"
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n"
                f"    Root location: {self.root}\n    Split: {split}")


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: 28x28 grey images of 10 kinds of clothing, MNIST's format."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]
