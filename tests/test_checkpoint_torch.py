"""flow.load of files written by the real torch.save (zip and legacy formats), through the
restricted unpickler: values, dtypes, views sharing storage, requires_grad, Parameters, state
dicts, nested containers; a pickle that would run code is refused in both formats."""
import io
import os
import pickle
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import oneflow as flow

ZIP = [True, False]  # torch.save's _use_new_zipfile_serialization


def _roundtrip(obj, zip_format, tmp_path, **load_kw):
    path = str(tmp_path / "t.pt")
    torch.save(obj, path, _use_new_zipfile_serialization=zip_format)
    return flow.load(path, **load_kw)


def _np(t):
    return (t.cast(flow.float32) if t.dtype == flow.bfloat16 else t).detach().numpy()


def _tnp(t):
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().numpy()


@pytest.mark.parametrize("zip_format", ZIP)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32",
                                   "int8", "uint8", "bool", "complex64"])
def test_every_dtype(dtype, zip_format, tmp_path):
    t = (torch.randn(3, 5) * 10).to(getattr(torch, dtype))
    got = _roundtrip({"t": t}, zip_format, tmp_path)["t"]
    assert got.dtype == getattr(flow, dtype)
    assert tuple(got.shape) == (3, 5)
    np.testing.assert_array_equal(_np(got), _tnp(t))


@pytest.mark.parametrize("zip_format", ZIP)
def test_views_share_storage_and_keep_strides(zip_format, tmp_path):
    base = torch.arange(24.0).reshape(4, 6)
    obj = {"base": base, "t": base.t(), "slice": base[1:, 2:5], "row": base[2], "scalar": base[3, 4]}
    got = _roundtrip(obj, zip_format, tmp_path)
    for k, v in obj.items():
        np.testing.assert_array_equal(_np(got[k]), v.numpy())
        assert tuple(got[k].shape) == tuple(v.shape)
    assert got["t"].stride() == (1, 6)
    assert got["slice"].stride() == (6, 1)
    got["base"][2, 3] = -1.0  # one storage again: the views see the write
    assert got["t"][3, 2].item() == -1.0 and got["slice"][1, 1].item() == -1.0
    assert got["row"][3].item() == -1.0


@pytest.mark.parametrize("zip_format", ZIP)
def test_parameters_requires_grad_and_containers(zip_format, tmp_path):
    p = torch.nn.Parameter(torch.randn(2, 3))
    frozen = torch.nn.Parameter(torch.randn(2), requires_grad=False)
    g = torch.randn(4, requires_grad=True)
    obj = {"p": p, "frozen": frozen, "g": g, "plain": torch.ones(1),
           "nested": [1, 2.5, "s", None, (True, b"raw", {3: torch.zeros(0)})],
           "set": {1, 2}, "dtype": torch.float16, "device": torch.device("cpu"),
           "size": torch.Size([2, 3]), "odict": OrderedDict(a=1, b=torch.tensor(7))}
    got = _roundtrip(obj, zip_format, tmp_path)
    assert isinstance(got["p"], flow.nn.Parameter) and got["p"].requires_grad
    assert isinstance(got["frozen"], flow.nn.Parameter) and not got["frozen"].requires_grad
    assert not isinstance(got["g"], flow.nn.Parameter) and got["g"].requires_grad
    assert not got["plain"].requires_grad
    np.testing.assert_array_equal(_np(got["p"]), p.detach().numpy())
    np.testing.assert_array_equal(_np(got["frozen"]), frozen.detach().numpy())
    n = got["nested"]
    assert n[:4] == [1, 2.5, "s", None] and n[4][:2] == (True, b"raw")
    assert tuple(n[4][2][3].shape) == (0,)
    assert got["set"] == {1, 2} and got["dtype"] == flow.float16
    assert got["device"] == flow.device("cpu") and got["size"] == (2, 3)
    assert isinstance(got["odict"], OrderedDict) and list(got["odict"]) == ["a", "b"]
    assert got["odict"]["b"].item() == 7


@pytest.mark.parametrize("zip_format", ZIP)
def test_same_tensor_twice_is_one_tensor(zip_format, tmp_path):
    t = torch.randn(3)
    got = _roundtrip([t, t], zip_format, tmp_path)
    assert got[0] is got[1]


@pytest.mark.parametrize("zip_format", ZIP)
def test_numpy_values_inside(zip_format, tmp_path):
    obj = {"arr": np.arange(6, dtype=np.int32).reshape(2, 3), "best": np.float64(0.75)}
    got = _roundtrip(obj, zip_format, tmp_path)
    np.testing.assert_array_equal(got["arr"], obj["arr"])
    assert got["arr"].dtype == np.int32 and got["best"] == 0.75


def _block(nn, cin, cout, stride):
    class BasicBlock(nn.Module):  # torchvision's resnet BasicBlock, parameter names included
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.downsample is None else self.downsample(x)
            return self.relu(self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x))))) + idt)
    return BasicBlock()


def _resnet(nn):
    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            self.layer1 = nn.Sequential(_block(nn, 8, 8, 1), _block(nn, 8, 8, 1))
            self.layer2 = nn.Sequential(_block(nn, 8, 16, 2), _block(nn, 16, 16, 1))
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.avgpool(self.layer2(self.layer1(x)))
            return self.fc(x.flatten(1))
    return ResNet()


@pytest.mark.parametrize("zip_format", ZIP)
def test_resnet_state_dict_into_our_model(zip_format, tmp_path):
    torch.manual_seed(0)
    tm = _resnet(torch.nn)
    tm.train()
    tm(torch.randn(4, 3, 32, 32))  # running statistics that differ from the initial ones
    tm.eval()
    sd = _roundtrip(tm.state_dict(), zip_format, tmp_path)
    assert list(sd) == list(tm.state_dict())
    assert sd["bn1.num_batches_tracked"].dtype == flow.int64
    fm = _resnet(flow.nn)
    fm.load_state_dict(sd)  # strict
    fm.eval()
    x = np.random.RandomState(1).randn(2, 3, 32, 32).astype(np.float32)
    want = tm(torch.from_numpy(x)).detach().numpy()
    got = fm(flow.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_map_location(tmp_path):
    got = _roundtrip({"a": torch.ones(2)}, True, tmp_path, map_location="cpu")
    assert got["a"].device == flow.device("cpu")
    seen = []
    got = _roundtrip({"a": torch.ones(2)}, False, tmp_path,
                     map_location=lambda t, loc: seen.append(loc))
    assert seen == ["cpu"] and got["a"].sum().item() == 2


def test_stream_and_non_seekable_stream():
    buf = io.BytesIO()
    torch.save({"w": torch.arange(3)}, buf)

    class Pipe(io.RawIOBase):  # readable, not seekable
        def __init__(self, data):
            self.data = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self.data.readinto(b)

    assert flow.load(io.BytesIO(buf.getvalue()))["w"].tolist() == [0, 1, 2]
    assert flow.load(Pipe(buf.getvalue()))["w"].tolist() == [0, 1, 2]


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _evil_zip(path, marker):
    torch.save({"a": torch.ones(1)}, path)
    with zipfile.ZipFile(path) as z:
        entries = {n: z.read(n) for n in z.namelist()}
    pkl = next(n for n in entries if n.endswith("data.pkl"))
    entries[pkl] = pickle.dumps({"a": _Evil(marker)}, protocol=2)
    with zipfile.ZipFile(path, "w") as z:
        for n, data in entries.items():
            z.writestr(n, data)


def _evil_legacy(path, marker):
    with open(path, "wb") as f:
        for part in (0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001,
                                                    "little_endian": True}):
            pickle.dump(part, f, protocol=2)
        pickle.dump({"a": _Evil(marker)}, f, protocol=2)
        pickle.dump([], f, protocol=2)


@pytest.mark.parametrize("make", [_evil_zip, _evil_legacy])
def test_code_running_pickle_is_refused(make, tmp_path):
    marker = tmp_path / "pwned"
    path = str(tmp_path / "evil.pt")
    make(path, marker)
    with pytest.raises(pickle.UnpicklingError, match=r"global '(posix|os)\.system'.*not allowed"):
        flow.load(path)
    assert not marker.exists()


@pytest.mark.parametrize("zip_format", ZIP)
def test_whole_module_pickle_is_refused(zip_format, tmp_path):
    path = str(tmp_path / "m.pt")
    torch.save(torch.nn.Linear(2, 2), path, _use_new_zipfile_serialization=zip_format)
    with pytest.raises(pickle.UnpicklingError, match=r"torch\.nn\.modules.*state_dict"):
        flow.load(path)


def test_loader_never_imports_torch(tmp_path):
    import subprocess
    path = str(tmp_path / "t.pt")
    torch.save({"a": torch.arange(4.0)}, path, _use_new_zipfile_serialization=False)
    torch.save({"a": torch.arange(4.0)}, path + "z")
    code = ("import sys, oneflow as flow\n"
            f"assert flow.load({path!r})['a'].tolist() == [0, 1, 2, 3]\n"
            f"assert flow.load({path + 'z'!r})['a'].tolist() == [0, 1, 2, 3]\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_legacy_storage_larger_than_file_is_refused_before_allocation(tmp_path):
    # A crafted legacy file declaring a 2**40-element storage: refused by the size check, not by
    # an attempt to allocate 4 TiB.
    path = str(tmp_path / "big.pt")
    torch.save({"a": torch.ones(3)}, path, _use_new_zipfile_serialization=False)
    raw = open(path, "rb").read()
    assert raw.count(b"K\x03N") == 1  # the storage reference (..., "cpu", 3, None)
    raw = raw.replace(b"K\x03N", b"\x8a\x06\x00\x00\x00\x00\x00\x01N")  # numel 3 -> 2**40
    open(path, "wb").write(raw)
    with pytest.raises(RuntimeError, match="larger than the file"):
        flow.load(path)


@pytest.mark.parametrize("zip_format", ZIP)
def test_truncated_file(zip_format, tmp_path):
    path = str(tmp_path / "t.pt")
    torch.save({"a": torch.randn(100)}, path, _use_new_zipfile_serialization=zip_format)
    raw = open(path, "rb").read()
    open(path, "wb").write(raw[:len(raw) // 2])
    with pytest.raises(RuntimeError, match="damaged|truncated|larger than the file|has no data"):
        flow.load(path)


class _StorageRef:
    pass


class _CraftedTensor:
    """Pickles as torch's _rebuild_tensor_v2 of a 4-element storage followed by a BUILD that
    would move the checked view's offset far past its storage."""

    def __init__(self, state):
        self.state = state

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2,
                (_StorageRef(), 0, (4,), (1,), False, OrderedDict()), self.state)


class _PidPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", torch.FloatStorage, "0", "cpu", 4)
        return None


@pytest.mark.parametrize("state", [(None, {"offset": 1 << 40}), {"offset": 1 << 40}])
def test_build_on_a_checked_tensor_is_refused(state, tmp_path):
    buf = io.BytesIO()
    _PidPickler(buf, protocol=2).dump({"t": _CraftedTensor(state)})
    path = str(tmp_path / "crafted.pt")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        z.writestr("archive/data/0", np.arange(4, dtype=np.float32).tobytes())
        z.writestr("archive/byteorder", "little")
    with pytest.raises(pickle.UnpicklingError, match="sets the state of a Tensor"):
        flow.load(path)
    # the same file without the BUILD loads
    buf = io.BytesIO()
    _PidPickler(buf, protocol=2).dump({"t": _CraftedTensor(None)})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        z.writestr("archive/data/0", np.arange(4, dtype=np.float32).tobytes())
    assert flow.load(path)["t"].tolist() == [0.0, 1.0, 2.0, 3.0]


class _OversizedTensor:
    def __reduce__(self):  # a view of 8 elements over a 4-element storage
        return (torch._utils._rebuild_tensor_v2,
                (_StorageRef(), 1, (2, 4), (4, 1), False, OrderedDict()))


def test_view_past_its_storage_is_refused(tmp_path):
    buf = io.BytesIO()
    _PidPickler(buf, protocol=2).dump({"t": _OversizedTensor()})
    path = str(tmp_path / "crafted.pt")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        z.writestr("archive/data/0", np.arange(4, dtype=np.float32).tobytes())
    with pytest.raises(pickle.UnpicklingError, match=r"crafted\.pt: a tensor of size \(2, 4\) "
                                                     r"reaches past the end of its storage"):
        flow.load(path)


@pytest.mark.parametrize("zip_format", ZIP)
def test_int16_loads(zip_format, tmp_path):
    t = torch.tensor([1, -2], dtype=torch.int16)
    got = _roundtrip({"a": t}, zip_format, tmp_path)["a"]
    assert got.dtype == flow.int16 and got.tolist() == [1, -2]


@pytest.mark.parametrize("protocol", [2, 4, 5])
@pytest.mark.parametrize("zip_format", ZIP)
def test_pickle_protocols(protocol, zip_format, tmp_path):
    from collections import Counter
    path = str(tmp_path / "p.pt")
    obj = {"a": torch.arange(3.0), "n": np.arange(3), "bytes": b"ab", "set": {1}, "c": Counter("aab")}
    torch.save(obj, path, pickle_protocol=protocol, _use_new_zipfile_serialization=zip_format)
    got = flow.load(path)
    assert got["a"].tolist() == [0.0, 1.0, 2.0] and got["n"].tolist() == [0, 1, 2]
    assert got["bytes"] == b"ab" and got["set"] == {1} and got["c"] == Counter("aab")


@pytest.mark.parametrize("zip_format", ZIP)
def test_support_pytorch_format_false_refuses_torch_files(zip_format, tmp_path):
    # upstream OneFlow's flag and error: ValueError "Cannot load file" (ours is also a RuntimeError)
    path = str(tmp_path / "t.pt")
    torch.save({"a": torch.ones(1)}, path, _use_new_zipfile_serialization=zip_format)
    with pytest.raises(ValueError, match="Cannot load file"):
        flow.load(path, support_pytorch_format=False)
    with pytest.raises(RuntimeError, match="Cannot load file"):
        flow.load(path, support_pytorch_format=False)
    assert flow.load(path)["a"].tolist() == [1.0]
    # our own and upstream OneFlow's files still load with the flag
    flow.save({"a": flow.ones(1)}, str(tmp_path / "o.of"), format="oneflow")
    assert flow.load(str(tmp_path / "o.of"), support_pytorch_format=False)["a"].tolist() == [1.0]


def test_invalid_file_is_a_value_error_as_upstream(tmp_path):
    path = tmp_path / "junk"
    path.write_bytes(b"invalid file")
    with pytest.raises(ValueError, match="Cannot load file"):
        flow.load(str(path))
