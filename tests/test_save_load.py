"""flow.save / flow.load: round trips (every dtype, views, nested containers; directory, file
and stream forms), atomic replacement, map_location, and a clear error for every kind of bad
checkpoint (docs/checkpoint_format.md)."""
import io
import json
import math
import os
import struct
import zlib
from collections import Counter, OrderedDict

import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow.framework.serialization import _save

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def _values(t):
    return (t.cast(flow.float32) if t.dtype == flow.bfloat16 else t).numpy()


def _sample(dtype):
    x = flow.randn(3, 4) * 10
    return x.cast(getattr(flow, dtype))


def _save_load(obj, tmp_path, form):
    if form == "stream":
        buf = io.BytesIO()
        flow.save(obj, buf)
        buf.seek(0)
        return flow.load(buf)
    path = str(tmp_path / ("ckpt" if form == "dir" else "ckpt.of"))
    flow.save(obj, path)
    assert os.path.isdir(path) == (form == "dir")
    return flow.load(path)


FORMS = ["dir", "file", "stream"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips(dtype, form, tmp_path):
    t = _sample(dtype)
    src_all = {"t": t, "scalar": t[1, 2], "empty": t[:0], "transposed": t.t()[::2]}
    out = _save_load(src_all, tmp_path, form)
    for key, src in src_all.items():
        assert out[key].dtype == src.dtype and tuple(out[key].shape) == tuple(src.shape)
        np.testing.assert_array_equal(_values(out[key]), _values(src))


@pytest.mark.parametrize("form", FORMS)
def test_nested_containers_and_plain_values(form, tmp_path):
    a = flow.arange(6).reshape(2, 3).cast(flow.float32)
    obj = OrderedDict(
        model=OrderedDict([("w", a), ("b", flow.zeros(3))]),
        nested=[1, 2.5, "x", None, True, (a, [a * 2, {"k": -3}]), {4: "int key", (1, 2): "tuple"}],
        special=[math.inf, -math.inf, float("nan")], raw=b"\x00\x01bytes", dtype=flow.float16,
        counter=Counter({3: 2, 5: 1}), empty=[], flag=False, big=2 ** 62, s={1, 2}, fs=frozenset(),
        arr=np.arange(5, dtype=np.int32))
    out = _save_load(obj, tmp_path, form)
    assert isinstance(out, OrderedDict) and list(out) == list(obj)
    assert isinstance(out["model"], OrderedDict) and list(out["model"]) == ["w", "b"]
    np.testing.assert_array_equal(out["model"]["w"].numpy(), a.numpy())
    n = out["nested"]
    assert n[:5] == [1, 2.5, "x", None, True] and isinstance(n[5], tuple)
    np.testing.assert_array_equal(n[5][1][0].numpy(), (a * 2).numpy())
    assert n[5][1][1] == {"k": -3} and n[6] == {4: "int key", (1, 2): "tuple"}
    assert out["special"][:2] == [math.inf, -math.inf] and math.isnan(out["special"][2])
    assert out["raw"] == b"\x00\x01bytes" and out["dtype"] == flow.float16
    assert isinstance(out["counter"], Counter) and out["counter"][3] == 2 and out["counter"][9] == 0
    assert out["empty"] == [] and out["flag"] is False and out["big"] == 2 ** 62
    assert out["s"] == {1, 2} and out["fs"] == frozenset()
    assert out["arr"].dtype == np.int32 and out["arr"].tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("form", FORMS)
def test_views_share_storage_again(form, tmp_path):
    base = flow.arange(24).cast(flow.float32).reshape(4, 6)
    row, col, tr = base[1], base[:, 2], base.t()
    out = _save_load({"base": base, "row": row, "col": col, "t": tr}, tmp_path, form)
    for k, src in (("base", base), ("row", row), ("col", col), ("t", tr)):
        np.testing.assert_array_equal(out[k].numpy(), src.numpy())
        assert tuple(out[k].stride()) == tuple(src.stride()), k
    assert not out["t"].is_contiguous()
    # One storage: writing through one view shows in the others.
    out["base"][1, 2] = 100.0
    assert float(out["row"][2]) == 100.0 and float(out["col"][1]) == 100.0
    assert float(out["t"][2, 1]) == 100.0


def test_only_the_viewed_region_is_saved(tmp_path):
    big = flow.zeros(1000, 1000)
    path = str(tmp_path / "part")
    flow.save({"slice": big[10:12]}, path)
    sizes = [os.path.getsize(os.path.join(path, f)) for f in os.listdir(path) if f.endswith(".bin")]
    assert sizes == [2 * 1000 * 4]
    assert tuple(flow.load(path)["slice"].shape) == (2, 1000)


def test_same_object_twice_is_one_object(tmp_path):
    a = flow.ones(3)
    out = _save_load([a, {"again": a}], tmp_path, "file")
    assert out[0] is out[1]["again"]


def test_requires_grad_and_parameters(tmp_path):
    a = flow.ones(2, requires_grad=True)
    b = flow.ones(2)
    out = _save_load({"a": a, "b": b}, tmp_path, "dir")
    assert out["a"].requires_grad and not out["b"].requires_grad and out["a"].is_leaf
    if hasattr(flow.nn, "Parameter"):
        p = flow.nn.Parameter(flow.randn(3, 2))
        q = flow.nn.Parameter(flow.randn(2), requires_grad=False)
        out = _save_load({"p": p, "q": q}, tmp_path, "file")
        assert isinstance(out["p"], flow.nn.Parameter) and out["p"].requires_grad
        assert isinstance(out["q"], flow.nn.Parameter) and not out["q"].requires_grad
        np.testing.assert_array_equal(out["p"].detach().numpy(), p.detach().numpy())


def test_save_replaces_atomically(tmp_path, monkeypatch):
    path = str(tmp_path / "ckpt")
    flow.save({"v": flow.ones(3)}, path)
    flow.save({"v": flow.full((3,), 2.0)}, path)  # an existing directory is replaced
    assert float(flow.load(path)["v"].sum()) == 6.0

    def broken(tmp, enc, tree, storages):
        with open(os.path.join(tmp, "0.bin"), "wb") as f:
            f.write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(_save, "_write_dir", broken)
    with pytest.raises(OSError, match="disk full"):
        flow.save({"v": flow.zeros(3)}, path)
    assert float(flow.load(path)["v"].sum()) == 6.0
    assert sorted(os.listdir(tmp_path)) == ["ckpt"]  # no temporary left behind

    fpath = str(tmp_path / "one.of")
    flow.save({"v": flow.ones(2)}, fpath)

    def broken_file(f, enc, tree, storages):
        f.write(b"OFCKPT")
        raise OSError("killed")

    monkeypatch.setattr(_save, "_write_file", broken_file)
    with pytest.raises(OSError, match="killed"):
        flow.save({"v": flow.zeros(2)}, fpath)
    assert float(flow.load(fpath)["v"].sum()) == 2.0
    assert sorted(os.listdir(tmp_path)) == ["ckpt", "one.of"]


def test_map_location(tmp_path):
    path = str(tmp_path / "m.of")
    flow.save({"a": flow.ones(2), "b": [flow.zeros(1)]}, path)
    for loc in ("cpu", flow.device("cpu"), {"cpu": "cpu"}, None):
        out = flow.load(path, map_location=loc)
        assert out["a"].device == flow.device("cpu")
    seen = []

    def relocate(t, location):
        seen.append(location)
        return t * 2

    out = flow.load(path, map_location=relocate)
    assert seen == ["cpu", "cpu"] and float(out["a"].sum()) == 4.0
    if not flow.cuda.is_available():
        with pytest.raises(Exception, match="(?i)cuda"):
            flow.load(path, map_location="cuda")


def test_oneflow_positional_global_src_rank(tmp_path):
    path = str(tmp_path / "r")
    flow.save([flow.ones(1)], path)
    assert float(flow.load(path, 0)[0]) == 1.0


# ---------------------------------------------------------------------------------------------
# Bad checkpoints


def test_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        flow.load(str(tmp_path / "nope"))


def test_directory_without_index(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(RuntimeError, match=r"'.*d' is not a valid oneflow checkpoint.*index"):
        flow.load(str(tmp_path / "d"))


def _dir_ckpt(tmp_path):
    path = str(tmp_path / "c")
    flow.save({"w": flow.randn(10, 10), "b": flow.randn(10)}, path)
    return path


def test_truncated_data_file(tmp_path):
    path = _dir_ckpt(tmp_path)
    fn = os.path.join(path, "0.bin")
    with open(fn, "r+b") as f:
        f.truncate(100)
    with pytest.raises(RuntimeError, match="0.bin.*truncated"):
        flow.load(path)


def test_missing_tensor_file(tmp_path):
    path = _dir_ckpt(tmp_path)
    os.remove(os.path.join(path, "1.bin"))
    with pytest.raises(RuntimeError, match="'1.bin' is missing"):
        flow.load(path)


def test_corrupted_data_bytes(tmp_path):
    path = _dir_ckpt(tmp_path)
    fn = os.path.join(path, "0.bin")
    raw = bytearray(open(fn, "rb").read())
    raw[17] ^= 0xFF
    open(fn, "wb").write(bytes(raw))
    with pytest.raises(RuntimeError, match="corrupted"):
        flow.load(path)


@pytest.mark.parametrize("where", [10, 40, -5])
def test_flipped_bytes_in_index(tmp_path, where):
    path = _dir_ckpt(tmp_path)
    fn = os.path.join(path, "index.json")
    raw = bytearray(open(fn, "rb").read())
    raw[where] ^= 0x5A
    open(fn, "wb").write(bytes(raw))
    with pytest.raises(RuntimeError, match="not a valid oneflow checkpoint"):
        flow.load(path)


def _file_ckpt(tmp_path):
    path = str(tmp_path / "c.of")
    flow.save({"w": flow.randn(10, 10)}, path)
    return path


@pytest.mark.parametrize("where", [30, 60, 100])
def test_flipped_bytes_in_file_header(tmp_path, where):
    path = _file_ckpt(tmp_path)
    raw = bytearray(open(path, "rb").read())
    raw[where] ^= 0x01
    open(path, "wb").write(bytes(raw))
    with pytest.raises(RuntimeError, match="header is corrupted|not valid JSON"):
        flow.load(path)


def test_wrong_magic(tmp_path):
    path = str(tmp_path / "x.of")
    open(path, "wb").write(b"NOTACKPT" + b"\0" * 100)
    with pytest.raises(RuntimeError, match="bad magic"):
        flow.load(path)
    empty = str(tmp_path / "empty.of")
    open(empty, "wb").close()
    with pytest.raises(RuntimeError, match="bad magic"):
        flow.load(empty)


@pytest.mark.parametrize("cut", [5, 20, 200, -7])
def test_truncated_single_file(tmp_path, cut):
    path = _file_ckpt(tmp_path)
    raw = open(path, "rb").read()
    open(path, "wb").write(raw[:cut])
    with pytest.raises(RuntimeError, match="truncated|bad magic"):
        flow.load(path)


def _rewrite_header(path, edit):
    """A header edited by `edit` with a valid checksum (a crafted, not a damaged, file)."""
    raw = open(path, "rb").read()
    n, _ = struct.unpack("<QI", raw[8:20])
    header = json.loads(raw[20:20 + n])
    edit(header)
    new = json.dumps(header).encode()
    open(path, "wb").write(raw[:8] + struct.pack("<QI", len(new), zlib.crc32(new)) + new
                           + raw[20 + n:])


@pytest.mark.parametrize("edit,msg", [
    (lambda h: h["tensors"][0].update(offset=10 ** 6), "past the end"),
    (lambda h: h["tensors"][0].update(storage=5), "missing blob"),
    (lambda h: h["tensors"][0].update(shape=[-1, 2]), "malformed shape"),
    (lambda h: h["storages"][0].update(dtype="complex128"), "malformed description"),
    (lambda h: h.update(object={"__pickle__": "os.system"}), "unknown entry"),
    (lambda h: h.update(object={"__tensor__": 99}), "malformed __tensor__"),
    (lambda h: h.update(version=99), "unsupported format version"),
])
def test_crafted_headers_are_rejected(tmp_path, edit, msg):
    path = _file_ckpt(tmp_path)
    _rewrite_header(path, edit)
    with pytest.raises(RuntimeError, match=msg):
        flow.load(path)


def test_unsupported_objects_are_refused_on_save(tmp_path):
    class Thing:
        pass

    with pytest.raises(TypeError, match="Thing"):
        flow.save({"x": Thing()}, str(tmp_path / "bad"))
    assert os.listdir(tmp_path) == []
    with pytest.raises(RuntimeError, match="meta"):
        flow.save(flow.empty(2, device="meta"), str(tmp_path / "meta"))


def test_file_layout(tmp_path):
    path = _file_ckpt(tmp_path)
    raw = open(path, "rb").read()
    assert raw[:8] == _save.FILE_MAGIC
    d = _dir_ckpt(tmp_path)
    index = json.load(open(os.path.join(d, "index.json")))
    assert index["magic"] == "oneflow-checkpoint" and index["version"] == 1
    assert sorted(os.listdir(d)) == ["0.bin", "1.bin", "index.json"]


@pytest.mark.parametrize("form", ["dir", "file"])
def test_module_and_optimizer_state_dicts(form, tmp_path):
    nn = flow.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = flow.optim.Adam(model.parameters(), lr=0.01)
    model(flow.randn(5, 3)).sum().backward()
    opt.step()
    ck = _save_load({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3},
                    tmp_path, form)
    assert ck["model"]._metadata == model.state_dict()._metadata
    model2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model2.load_state_dict(ck["model"])
    opt2 = flow.optim.Adam(model2.parameters(), lr=0.01)
    opt2.load_state_dict(ck["optimizer"])
    x = flow.randn(2, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), model2(x).detach().numpy())
    assert float(opt2.state[next(iter(model2.parameters()))]["step"]) == 1.0 and ck["epoch"] == 3
