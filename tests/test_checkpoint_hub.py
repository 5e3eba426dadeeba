"""oneflow.hub (a local hubconf.py repository, weights by file:// URL or path, no network),
oneflow.utils.model_zoo.load_url, and oneflow.utils.tensor.from_torch / to_torch (shared memory
through DLPack)."""
import hashlib
import os
import textwrap
import zipfile

import numpy as np
import pytest
import torch

import oneflow as flow

HUBCONF = '''
    """A hub repository: two entry points and a helper module of its own."""
    dependencies = ["numpy"]
    import oneflow as flow
    from mynets import Tiny

    def tiny(width=4, pretrained=False, weights=None):
        """A tiny model: Linear(3, width)."""
        m = Tiny(width)
        if pretrained:
            m.load_state_dict(flow.hub.load_state_dict_from_url(weights, progress=False))
        return m

    def scale(x, k=2):
        """Multiplies by k."""
        return x * k

    _private = 1
'''

MYNETS = '''
    import oneflow as flow

    class Tiny(flow.nn.Module):
        def __init__(self, width):
            super().__init__()
            self.fc = flow.nn.Linear(3, width)

        def forward(self, x):
            return self.fc(x)
'''


@pytest.fixture
def repo(tmp_path, monkeypatch):
    d = tmp_path / "repo"
    d.mkdir()
    (d / "hubconf.py").write_text(textwrap.dedent(HUBCONF))
    (d / "mynets.py").write_text(textwrap.dedent(MYNETS))
    monkeypatch.setenv("ONEFLOW_HOME", str(tmp_path / "home"))
    return str(d)


def test_hub_list_help_and_load_local(repo):
    # every public callable of hubconf, imported ones included (as upstream's and torch's list)
    assert sorted(flow.hub.list(repo, source="local")) == ["Tiny", "scale", "tiny"]
    assert flow.hub.help(repo, "tiny", source="local") == "A tiny model: Linear(3, width)."
    m = flow.hub.load(repo, "tiny", 5, source="local")
    assert isinstance(m, flow.nn.Module) and tuple(m.fc.weight.shape) == (5, 3)
    assert flow.hub.load(repo, "scale", 3, k=4, source="local") == 12
    with pytest.raises(RuntimeError, match="cannot find callable nope"):
        flow.hub.load(repo, "nope", source="local")
    with pytest.raises(ValueError, match="unknown source"):
        flow.hub.load(repo, "tiny", source="ftp")


def test_hub_missing_dependency(repo):
    path = os.path.join(repo, "hubconf.py")
    open(path, "a").write('\ndependencies = ["a_module_that_does_not_exist_xyz"]\n')
    with pytest.raises(RuntimeError, match="missing dependencies.*a_module_that_does_not_exist_xyz"):
        flow.hub.load(repo, "tiny", source="local")


def test_hub_load_with_pretrained_torch_weights_by_file_url(repo, tmp_path):
    torch.manual_seed(0)
    ref = torch.nn.Linear(3, 4)
    weights = tmp_path / "tiny.pth"
    torch.save({"fc." + k: v for k, v in ref.state_dict().items()}, str(weights))
    m = flow.hub.load(repo, "tiny", source="local", pretrained=True, weights=weights.as_uri())
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    np.testing.assert_allclose(m(flow.tensor(x)).detach().numpy(),
                               ref(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    cached = os.path.join(flow.hub.get_dir(), "checkpoints", "tiny.pth")
    assert os.path.isfile(cached)  # downloaded once into the hub cache


def test_load_state_dict_from_url_hash_cache_and_legacy_zip(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEFLOW_HOME", str(tmp_path / "home"))
    src = tmp_path / "src.of"
    flow.save({"w": flow.arange(3.0)}, str(src))
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    good = tmp_path / f"w-{digest[:8]}.of"
    good.write_bytes(src.read_bytes())
    sd = flow.utils.model_zoo.load_url(good.as_uri(), check_hash=True, progress=False)
    assert sd["w"].tolist() == [0.0, 1.0, 2.0]
    bad = tmp_path / "w-deadbeef.of"
    bad.write_bytes(src.read_bytes())
    with pytest.raises(RuntimeError, match="invalid hash value"):
        flow.hub.load_state_dict_from_url(bad.as_uri(), check_hash=True, progress=False)
    assert not os.path.exists(os.path.join(flow.hub.get_dir(), "checkpoints", bad.name))
    # a plain path works too, and a zip archive holding one checkpoint is unpacked
    z = tmp_path / "packed.zip"
    with zipfile.ZipFile(str(z), "w") as zf:
        zf.write(str(src), "inner.of")
    sd = flow.hub.load_state_dict_from_url(str(z), model_dir=str(tmp_path / "md"), progress=False)
    assert sd["w"].tolist() == [0.0, 1.0, 2.0]
    assert os.path.isfile(tmp_path / "md" / "inner.of")


def test_model_zoo_zip_of_a_checkpoint_directory(tmp_path, monkeypatch):
    # OneFlow's model zoo publishes `resnet18.zip` holding a checkpoint directory (here upstream's
    # variable-snapshot layout: one meta/out directory per variable).
    monkeypatch.setenv("ONEFLOW_HOME", str(tmp_path / "home"))
    z = tmp_path / "resnet18.zip"
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    with zipfile.ZipFile(str(z), "w") as zf:
        zf.writestr("resnet18/", "")
        zf.writestr("resnet18/fc.weight/out", w.tobytes())
        zf.writestr("resnet18/fc.weight/meta", "shape {\n  dim: 2\n  dim: 3\n}\ndata_type: kFloat\n")
        zf.writestr("resnet18/snapshot_done", "")
    sd = flow.hub.load_state_dict_from_url(z.as_uri(), progress=False)
    assert list(sd) == ["fc.weight"]
    np.testing.assert_array_equal(sd["fc.weight"].numpy(), w)
    # a torch.save file is a zip too, and is read as it is (not unpacked)
    t = tmp_path / "t.pth"
    torch.save({"w": torch.ones(2)}, str(t))
    assert flow.hub.load_state_dict_from_url(str(t), progress=False)["w"].tolist() == [1.0, 1.0]
    ckpts = os.path.join(flow.hub.get_dir(), "checkpoints")
    assert sorted(os.listdir(ckpts)) == ["resnet18", "resnet18.zip", "t.pth"]  # t.pth not unpacked


def test_hub_github_without_network_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEFLOW_HOME", str(tmp_path / "home"))

    def offline(*a, **k):
        raise OSError("network is unreachable")
    monkeypatch.setattr("urllib.request.urlopen", offline)
    with pytest.raises(RuntimeError, match="cannot fetch https://github.com/owner/repo/zipball/main"):
        flow.hub.load("owner/repo", "tiny")
    with pytest.raises(ValueError, match="repo_owner/repo_name"):
        flow.hub.load("not-a-repo", "tiny")


def test_hub_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEFLOW_HOME", str(tmp_path / "h"))
    assert flow.hub.get_dir() == os.path.join(str(tmp_path / "h"), "hub")
    flow.hub.set_dir(str(tmp_path / "elsewhere"))
    try:
        assert flow.hub.get_dir() == str(tmp_path / "elsewhere")
    finally:
        flow.hub._hub_dir = None
    assert callable(flow.hub.tqdm) and flow.utils.model_zoo.tqdm is flow.hub.tqdm


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32",
                                   "uint8", "int8", "bool"])
def test_from_torch_shares_memory(dtype):
    t = (torch.arange(12) % 5).to(getattr(torch, dtype)).reshape(3, 4)
    f = flow.utils.tensor.from_torch(t)
    assert f.dtype == getattr(flow, dtype) and tuple(f.shape) == (3, 4)
    np.testing.assert_array_equal(f.cast(flow.float32).numpy() if dtype == "bfloat16" else f.numpy(),
                                  t.float().numpy() if dtype == "bfloat16" else t.numpy())
    assert f.data_ptr() == t.data_ptr()  # zero copy


def test_from_torch_view_and_grad():
    base = torch.arange(12.0).reshape(3, 4)
    f = flow.utils.tensor.from_torch(base.t())
    assert f.stride() == (1, 4)
    f[1, 2] = -5.0  # a write through ours is seen by torch
    assert base[2, 1].item() == -5.0
    g = flow.utils.tensor.from_torch(torch.ones(2, requires_grad=True))
    assert not g.requires_grad and g.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="expected a torch.Tensor"):
        flow.utils.tensor.from_torch(np.ones(2))


def test_to_torch_shares_memory():
    f = flow.arange(6.0).reshape(2, 3)
    t = flow.utils.tensor.to_torch(f)
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32 and tuple(t.shape) == (2, 3)
    t[0, 1] = 42.0
    assert f[0, 1].item() == 42.0
    assert t.data_ptr() == f.data_ptr()
    tt = flow.utils.tensor.to_torch(f.t())
    assert tt.stride() == (1, 3)
    np.testing.assert_array_equal(tt.numpy(), f.t().numpy())
    b = flow.utils.tensor.to_torch(flow.ones(2, dtype=flow.bfloat16))
    assert b.dtype == torch.bfloat16 and b.float().tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="expected a oneflow.Tensor"):
        flow.utils.tensor.to_torch(torch.ones(1))


@pytest.mark.parametrize("make", [lambda: torch.zeros(0, 3), lambda: torch.tensor(3.5),
                                  lambda: torch.zeros(2, 0, dtype=torch.int64),
                                  lambda: torch.tensor([1 + 2j, 3 - 1j]).conj()])
def test_from_torch_and_back_edge_shapes(make):
    t = make()
    f = flow.utils.tensor.from_torch(t)
    assert tuple(f.shape) == tuple(t.shape)
    np.testing.assert_array_equal(f.numpy(), t.resolve_conj().numpy())
    back = flow.utils.tensor.to_torch(f)
    assert back.shape == t.shape and back.dtype == t.dtype
    np.testing.assert_array_equal(back.numpy(), t.resolve_conj().numpy())
