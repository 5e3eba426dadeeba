"""Crafted and interrupted checkpoints (issue 39): every number a header declares is checked
against the bytes the file holds before any allocation or loop it drives, and a save killed
mid-write leaves nothing that the next save does not clean up."""
import json
import os
import struct
import subprocess
import sys
import zlib

import pytest

import oneflow as flow
from oneflow.framework.serialization import _load


def _file_ckpt(tmp_path, obj=None):
    path = str(tmp_path / "c.of")
    flow.save({"a": flow.arange(4.0)} if obj is None else obj, path)
    return path


def _rewrite(path, edit, extra=b""):
    raw = open(path, "rb").read()
    n, _ = struct.unpack("<QI", raw[8:20])
    header = json.loads(raw[20:20 + n])
    edit(header)
    new = json.dumps(header, separators=(",", ":")).encode()
    open(path, "wb").write(raw[:8] + struct.pack("<QI", len(new), zlib.crc32(new)) + new
                           + raw[20 + n:] + extra)


@pytest.fixture
def no_tensor_work(monkeypatch):
    """Fails the test if loading allocates a blob or builds a tensor view."""
    def boom(*a, **k):
        raise AssertionError("a tensor was allocated or built before the header was refused")
    monkeypatch.setattr(_load, "_load_blob", boom)
    monkeypatch.setattr(_load, "_view", boom)


def test_180000_records_viewing_one_small_blob_are_refused(tmp_path, no_tensor_work):
    path = _file_ckpt(tmp_path)

    def edit(h):
        rec = h["tensors"][0]
        h["tensors"] = [dict(rec) for _ in range(180000)]
        h["object"] = [{"__tensor__": i} for i in range(180000)]
    _rewrite(path, edit)
    with pytest.raises(RuntimeError, match=r"view blob 0 \(4 elements\) more than 64 times"):
        flow.load(path)


def test_records_not_used_by_the_object_are_refused(tmp_path, no_tensor_work):
    path = _file_ckpt(tmp_path)
    _rewrite(path, lambda h: h["tensors"].append(dict(h["tensors"][0])))
    with pytest.raises(RuntimeError, match="1 tensor records are not used"):
        flow.load(path)


def test_many_legitimate_views_still_load(tmp_path):
    x = flow.arange(3000.0)
    rows = list(x.view(1000, 3).unbind(0))  # 1000 views of one storage, no overlap
    got = flow.load(_file_ckpt(tmp_path, {"rows": rows, "x": x, "t": x.view(1000, 3).t()}))
    assert len(got["rows"]) == 1000 and got["rows"][999].tolist() == [2997.0, 2998.0, 2999.0]
    got["x"][4] = -1.0
    assert got["rows"][1][1].item() == -1.0  # still views of one storage


def test_header_longer_than_the_file_is_refused_before_reading(tmp_path, monkeypatch):
    path = _file_ckpt(tmp_path)
    raw = bytearray(open(path, "rb").read())
    raw[8:16] = struct.pack("<Q", 1 << 40)  # a 1 TiB header in a small file
    open(path, "wb").write(bytes(raw))
    with pytest.raises(RuntimeError, match=r"header is truncated \(it declares 1099511627776 bytes"):
        flow.load(path)


def test_blob_beyond_the_end_of_the_file_is_refused_before_allocation(tmp_path, no_tensor_work):
    path = _file_ckpt(tmp_path)

    def edit(h):  # a blob of 2**40 bytes, its tensor viewing all of it (consistent header)
        h["storages"][0]["nbytes"] = 1 << 40
        h["tensors"][0]["shape"] = [1 << 38]
    _rewrite(path, edit)
    with pytest.raises(RuntimeError, match="blob 0 is truncated"):
        flow.load(path)


def test_directory_blob_size_checked_before_allocation(tmp_path, monkeypatch):
    path = str(tmp_path / "ck")
    flow.save({"a": flow.arange(4.0)}, path)
    index = json.load(open(os.path.join(path, "index.json")))
    index["body"]["storages"][0]["nbytes"] = 1 << 40
    index["body"]["tensors"][0]["shape"] = [1 << 38]
    index["body_crc32"] = zlib.crc32(json.dumps(index["body"], sort_keys=True,
                                                separators=(",", ":")).encode())
    json.dump(index, open(os.path.join(path, "index.json"), "w"))
    real_empty = flow._oneflow_internal.empty

    def guarded(*shape, **kw):
        n = 1
        for s in (shape[0] if isinstance(shape[0], (tuple, list)) else shape):
            n *= s
        assert n < (1 << 30), "allocated what the header declared before checking the file"
        return real_empty(*shape, **kw)
    monkeypatch.setattr(flow._oneflow_internal, "empty", guarded)
    with pytest.raises(RuntimeError, match="has 16 bytes, expected 1099511627776"):
        flow.load(path)


def _leftovers(d, name):
    return sorted(e for e in os.listdir(d) if e.startswith(f".{name}."))


@pytest.mark.parametrize("form", ["file", "dir", "oneflow"])
def test_failure_mid_write_leaves_no_temporary(form, tmp_path, monkeypatch):
    from oneflow.framework.serialization import _save, _oneflow_format
    path = str(tmp_path / ("ck.of" if form != "dir" else "ck"))
    flow.save({"a": flow.ones(2)}, path, **({"format": "oneflow"} if form == "oneflow" else {}))

    def failing(*args, **kwargs):  # the target (a stream, or the temporary directory) gets a part
        f = next(a for a in args if hasattr(a, "write") or isinstance(a, str))
        (f if hasattr(f, "write") else open(os.path.join(f, "0.bin"), "wb")).write(b"partial")
        raise OSError("disk full")
    target = {"file": (_save, "_write_file"), "dir": (_save, "_write_dir"),
              "oneflow": (_oneflow_format, "write")}[form]
    monkeypatch.setattr(*target, failing)
    with pytest.raises(OSError, match="disk full"):
        flow.save({"a": flow.zeros(3)}, path, **({"format": "oneflow"} if form == "oneflow" else {}))
    assert _leftovers(str(tmp_path), os.path.basename(path)) == []
    monkeypatch.undo()
    assert flow.load(path)["a"].tolist() == [1.0, 1.0]  # the old checkpoint is intact


@pytest.mark.parametrize("name", ["ck.of", "ck"])
def test_save_killed_mid_write_is_cleaned_by_the_next_save(name, tmp_path):
    path = str(tmp_path / name)
    code = (
        "import os, oneflow as flow\n"
        "from oneflow.framework.serialization import _save as s\n"
        "def die(f, *a, **k):\n"
        "    (f if hasattr(f, 'write') else open(os.path.join(f, '0.bin'), 'wb')).write(b'half')\n"
        "    os._exit(9)  # killed: no except / finally runs\n"
        "s._write_file = s._write_dir = die\n"
        f"flow.save({{'a': flow.ones(2)}}, {path!r})\n")
    rc = subprocess.run([sys.executable, "-c", code]).returncode
    assert rc == 9
    left = _leftovers(str(tmp_path), name)
    assert len(left) == 1 and ".tmp-" in left[0]  # what a crash leaves
    # A temporary of a save still running (this process) is not touched.
    live = os.path.join(str(tmp_path), f".{name}.tmp-{os.getpid()}-x")
    open(live, "w").close()
    flow.save({"a": flow.zeros(3)}, path)
    assert _leftovers(str(tmp_path), name) == [os.path.basename(live)]
    assert flow.load(path)["a"].tolist() == [0.0, 0.0, 0.0]
