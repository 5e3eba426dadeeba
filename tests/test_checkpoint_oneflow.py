"""Upstream OneFlow's checkpoints (python/oneflow/framework/check_point_v2.py upstream): flow.load
reads its pickle single file, its `pickled_data` directory (save_as_external_data) and its older
variable-snapshot directory; flow.save(format="oneflow") writes the pickle form. Files "from
upstream" are made in a child process whose `oneflow` is a stand-in with upstream's class names and
pickling methods, so they are pickled by Python's own pickle exactly as upstream's save does."""
import io
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import oneflow as flow

# Upstream's classes as pickle sees them: oneflow.Tensor / oneflow.nn.Parameter with
# tensor_getstate / tensor_setstate, and oneflow._oneflow_internal.dtype pickled as its DataType
# number (oneflow/api/python/framework/dtype.cpp).
UPSTREAM = textwrap.dedent('''
    import sys, types, pickle, os
    from collections import OrderedDict
    import numpy as np
    of = types.ModuleType("oneflow"); internal = types.ModuleType("oneflow._oneflow_internal")
    nn = types.ModuleType("oneflow.nn")
    sys.modules.update({"oneflow": of, "oneflow._oneflow_internal": internal, "oneflow.nn": nn})
    class dtype:
        def __init__(self, num=0): self.num = num
        def __getstate__(self): return self.num
        def __setstate__(self, num): self.num = num
        def __eq__(self, o): return isinstance(o, dtype) and o.num == self.num
    dtype.__module__ = "oneflow._oneflow_internal"
    internal.dtype = dtype
    NP = {2: np.float32, 3: np.float64, 5: np.int32, 6: np.int64, 7: np.uint8, 12: np.bool_, 9: np.float16}
    EXTERNAL = [None]
    class Tensor:
        def __init__(self, data=None, num=2, device="cpu"):
            self.data, self.dtype, self.device = data, dtype(num), device
        def __getstate__(self):
            if EXTERNAL[0] is not None:  # save_as_external_data: meta / out files
                rel = "tensor_%d" % len(os.listdir(EXTERNAL[0]))
                os.makedirs(os.path.join(EXTERNAL[0], rel))
                open(os.path.join(EXTERNAL[0], rel, "out"), "wb").write(self.data.tobytes())
                names = {2: "kFloat", 3: "kDouble", 5: "kInt32", 6: "kInt64", 7: "kUInt8", 12: "kBool"}
                dims = "".join("  dim: %d\\n" % d for d in self.data.shape)
                open(os.path.join(EXTERNAL[0], rel, "meta"), "w").write(
                    "shape {\\n%s}\\ndata_type: %s\\n" % (dims, names[self.dtype.num]))
                return {"path": rel}
            return {"data": self.data, "dtype": self.dtype, "device": self.device}
        def __setstate__(self, s):
            self.data, self.dtype, self.device = s["data"], s["dtype"], s["device"]
            assert self.data.dtype == NP[self.dtype.num], (self.data.dtype, self.dtype.num)
    Tensor.__module__ = "oneflow"
    class Parameter(Tensor):
        pass
    Parameter.__module__ = "oneflow.nn"
    of.Tensor, nn.Parameter = Tensor, Parameter
    def save(obj, path):  # upstream's flow.save, single file
        with open(path, "wb") as f:
            f.write(pickle.dumps({"protocol_version": 1, "__oneflow__": None, "data": obj}))
''')


def _upstream(code, tmp_path):
    script = tmp_path / "upstream.py"
    script.write_text(UPSTREAM + textwrap.dedent(code))
    subprocess.run([sys.executable, str(script)], check=True, cwd=str(tmp_path))


def test_reads_upstream_single_file(tmp_path):
    _upstream('''
        w = np.arange(6, dtype=np.float32).reshape(2, 3)
        obj = {"model": {"fc.weight": Parameter(w), "fc.bias": Tensor(np.ones(2, np.float64), 3),
                         "steps": Tensor(np.array(7, np.int64), 6), "mask": Tensor(np.array([True, False]), 12)},
               "epoch": 3, "names": ["a", ("b", 2.5)], "scale": np.float32(0.5)}
        save(obj, "up.of")
    ''', tmp_path)
    got = flow.load(str(tmp_path / "up.of"))
    m = got["model"]
    assert isinstance(m["fc.weight"], flow.nn.Parameter) and m["fc.weight"].requires_grad
    np.testing.assert_array_equal(m["fc.weight"].numpy(), np.arange(6).reshape(2, 3))
    assert m["fc.bias"].dtype == flow.float64 and m["fc.bias"].tolist() == [1.0, 1.0]
    assert m["steps"].dtype == flow.int64 and m["steps"].item() == 7 and m["steps"].dim() == 0
    assert m["mask"].dtype == flow.bool and m["mask"].tolist() == [True, False]
    assert got["epoch"] == 3 and got["names"] == ["a", ("b", 2.5)] and got["scale"] == 0.5


def test_reads_upstream_external_data_directory(tmp_path):
    _upstream('''
        os.makedirs("ck")
        EXTERNAL[0] = "ck"
        obj = {"w": Parameter(np.arange(12, dtype=np.float32).reshape(3, 4)),
               "i": Tensor(np.array([4, 5], np.int32), 5)}
        data = pickle.dumps({"protocol_version": 1, "__oneflow__": None, "data": obj})
        open("ck/pickled_data", "wb").write(data)
    ''', tmp_path)
    assert sorted(os.listdir(tmp_path / "ck")) == ["pickled_data", "tensor_0", "tensor_1"]
    got = flow.load(str(tmp_path / "ck"))
    np.testing.assert_array_equal(got["w"].numpy(), np.arange(12).reshape(3, 4))
    assert isinstance(got["w"], flow.nn.Parameter)
    assert got["i"].dtype == flow.int32 and got["i"].tolist() == [4, 5]


def test_reads_older_pickled_data_without_magic_key(tmp_path):
    # Upstream versions before the "__oneflow__" key wrote {"protocol_version": 1, "data": ...}.
    _upstream('''
        os.makedirs("ck")
        EXTERNAL[0] = "ck"
        obj = OrderedDict(weight=Parameter(np.ones((3, 3, 3, 3), np.float32)),
                          bias=Parameter(np.arange(3, dtype=np.float32)))
        open("ck/pickled_data", "wb").write(pickle.dumps({"protocol_version": 1, "data": obj}))
    ''', tmp_path)
    got = flow.load(str(tmp_path / "ck"))
    assert list(got) == ["weight", "bias"]
    m = flow.nn.Conv2d(3, 3, 3)
    m.load_state_dict(got)
    assert m.weight.sum().item() == 81.0 and m.bias.tolist() == [0.0, 1.0, 2.0]
    bad = tmp_path / "other.pkl"
    bad.write_bytes(pickle.dumps({"protocol_version": 1, "data": 1, "extra": 2}))
    with pytest.raises(RuntimeError, match="neither a torch.save nor a OneFlow checkpoint"):
        flow.load(str(bad))


def test_reads_legacy_variable_snapshot_directory(tmp_path):
    # OneFlow < 0.6: one directory per variable with `meta` (protobuf text) and `out`.
    root = tmp_path / "snap"
    for name, arr, kind in (("conv.weight", np.arange(8, dtype=np.float32).reshape(2, 4), "kFloat"),
                            ("step", np.array([3], np.int64), "kInt64")):
        d = root / name
        d.mkdir(parents=True)
        (d / "out").write_bytes(arr.tobytes())
        dims = "".join(f"  dim: {s}\n" for s in arr.shape)
        (d / "meta").write_text(f"shape {{\n{dims}}}\ndata_type: {kind}\n")
    (root / "snapshot_done").write_text("")
    got = flow.load(str(root))
    assert sorted(got) == ["conv.weight", "step"]
    np.testing.assert_array_equal(got["conv.weight"].numpy(), np.arange(8).reshape(2, 4))
    assert got["step"].dtype == flow.int64 and got["step"].tolist() == [3]


def _sample():
    x = flow.arange(12.0).reshape(3, 4)
    return {"w": flow.nn.Parameter(x.clone()), "view": x.t(), "h": flow.ones(2, dtype=flow.bfloat16),
            "i": flow.arange(3), "b": flow.tensor([True, False]), "f16": flow.ones(2, dtype=flow.float16),
            "nested": [1, (2.5, "s"), {"k": None}], "dt": flow.float64, "scalar": flow.tensor(3.5),
            "arr": np.arange(4, dtype=np.int16)[::2], "arr0": np.array(2.0)}


def _check(got):
    assert isinstance(got["w"], flow.nn.Parameter) and got["w"].requires_grad
    np.testing.assert_array_equal(got["w"].numpy(), np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(got["view"].numpy(), np.arange(12.0).reshape(3, 4).T)
    assert got["h"].dtype == flow.bfloat16 and got["h"].cast(flow.float32).tolist() == [1.0, 1.0]
    assert got["i"].dtype == flow.int64 and got["i"].tolist() == [0, 1, 2]
    assert got["b"].dtype == flow.bool and got["f16"].dtype == flow.float16
    assert got["nested"] == [1, (2.5, "s"), {"k": None}] and got["dt"] == flow.float64
    assert got["scalar"].dim() == 0 and got["scalar"].item() == 3.5
    assert got["arr"].dtype == np.int16 and got["arr"].tolist() == [0, 2]
    assert got["arr0"].shape == () and got["arr0"] == 2.0


@pytest.mark.parametrize("form", ["file", "stream", "external"])
def test_save_oneflow_format_round_trip(form, tmp_path):
    if form == "stream":
        buf = io.BytesIO()
        flow.save(_sample(), buf, format="oneflow")
        assert buf.getvalue()[:1] == b"\x80"  # a pickle, not our format
        buf.seek(0)
        got = flow.load(buf)
    elif form == "file":
        path = str(tmp_path / "m.of")
        flow.save(_sample(), path, format="oneflow")
        got = flow.load(path)
    else:
        path = str(tmp_path / "m")
        flow.save(_sample(), path, format="oneflow", save_as_external_data=True)
        assert "pickled_data" in os.listdir(path)
        got = flow.load(path)
    _check(got)


def test_upstream_reads_what_format_oneflow_writes(tmp_path):
    obj = {"w": flow.nn.Parameter(flow.arange(6.0).reshape(2, 3)), "i": flow.tensor([1, 2], dtype=flow.int32),
           "epoch": 4, "same": None}
    obj["same"] = obj["w"]
    flow.save(obj, str(tmp_path / "ours.of"), format="oneflow")
    _upstream('''
        with open("ours.of", "rb") as f:
            content = pickle.load(f)  # upstream's own load: plain pickle with its classes
        assert content["protocol_version"] == 1 and "__oneflow__" in content
        d = content["data"]
        assert type(d["w"]) is Parameter and type(d["i"]) is Tensor and d["same"] is d["w"]
        assert d["w"].dtype == dtype(2) and d["i"].dtype == dtype(5) and d["w"].device == "cpu"
        assert d["w"].data.tolist() == [[0, 1, 2], [3, 4, 5]] and d["i"].data.tolist() == [1, 2]
        assert d["epoch"] == 4
        print("upstream-ok")
    ''', tmp_path)


def test_default_format_is_ours(tmp_path):
    path = str(tmp_path / "m.of")
    flow.save({"a": flow.ones(1)}, path)
    assert open(path, "rb").read(6) == b"OFCKPT"
    with pytest.raises(ValueError, match="unknown format"):
        flow.save({"a": flow.ones(1)}, path, format="torch")


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > pwned",))


@pytest.mark.parametrize("form", ["file", "dir"])
def test_code_running_upstream_pickle_is_refused(form, tmp_path):
    data = pickle.dumps({"protocol_version": 1, "__oneflow__": None, "data": {"w": _Evil()}})
    if form == "file":
        path = tmp_path / "evil.of"
        path.write_bytes(data)
    else:
        path = tmp_path / "evil"
        path.mkdir()
        (path / "pickled_data").write_bytes(data)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(pickle.UnpicklingError, match=r"global '(posix|os)\.system'.*not allowed"):
            flow.load(str(path))
    finally:
        os.chdir(cwd)
    assert not (tmp_path / "pwned").exists()


def test_external_path_cannot_escape_the_directory(tmp_path):
    _upstream('''
        os.makedirs("ck")
        class Escaping(Tensor):
            def __getstate__(self):
                return {"path": "../outside"}
        Escaping.__module__, Escaping.__qualname__ = "oneflow", "Tensor"
        of.Tensor = Escaping
        open("ck/pickled_data", "wb").write(pickle.dumps(
            {"protocol_version": 1, "__oneflow__": None, "data": Escaping(np.ones(1, np.float32))}))
    ''', tmp_path)
    with pytest.raises(RuntimeError, match="malformed external tensor path"):
        flow.load(str(tmp_path / "ck"))
