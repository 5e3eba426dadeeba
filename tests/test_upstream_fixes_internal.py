"""Upstream OneFlow's Python-visible helpers that code outside the framework calls on
`oneflow._oneflow_internal` or `oneflow.support` (its test utilities, checkpoint and global_view
code). Several processes: tests/dist_worker.py case_objects (cpu_broadcast from rank 1)."""
import pickle

import pytest

import oneflow as flow
from oneflow.support import env_var_util


def test_cpu_broadcast_alone_returns_the_bytes():
    obj = {"w": [1.5, 2.5], "name": "x"}
    got = flow._oneflow_internal.cpu_broadcast(pickle.dumps(obj), 0)
    assert isinstance(got, bytes) and pickle.loads(got) == obj


def test_cpu_broadcast_errors():
    with pytest.raises(ValueError, match="cpu_broadcast: src 1"):
        flow._oneflow_internal.cpu_broadcast(b"x", 1)
    with pytest.raises(TypeError, match="cpu_broadcast: the source process passes bytes"):
        flow._oneflow_internal.cpu_broadcast(None, 0)


@pytest.mark.parametrize("value,expected", [("1", True), ("TRUE", True), ("yes", True), ("On", True),
                                            ("y", True), ("0", False), ("no", False), ("", False)])
def test_parse_boolean_from_env(monkeypatch, value, expected):
    monkeypatch.setenv("UPS_TEST_FLAG", value)
    assert env_var_util.parse_boolean_from_env("UPS_TEST_FLAG", not expected) is expected


def test_parse_boolean_from_env_default_and_errors(monkeypatch):
    monkeypatch.delenv("UPS_TEST_FLAG", raising=False)
    assert env_var_util.parse_boolean_from_env("UPS_TEST_FLAG", True) is True
    assert env_var_util.parse_boolean_from_env("UPS_TEST_FLAG", defalut_value=False) is False
    with pytest.raises(TypeError, match="parse_boolean_from_env"):
        env_var_util.parse_boolean_from_env(3, True)
    with pytest.raises(TypeError, match="parse_boolean_from_env"):
        env_var_util.parse_boolean_from_env("UPS_TEST_FLAG", "yes")


def test_unittest_dataset_dir(monkeypatch):
    monkeypatch.delenv("ONEFLOW_TEST_DATASET_DIR", raising=False)
    assert flow.unittest.dataset_dir() == "/dataset"
    assert flow.unittest.dataset_dir("imagenet_227/train/32") == "/dataset/imagenet_227/train/32"
    monkeypatch.setenv("ONEFLOW_TEST_DATASET_DIR", "/data/of")
    assert flow.unittest.dataset_dir("mnist") == "/data/of/mnist"


def test_min_max_observer_module_path():
    from oneflow.nn.modules import min_max_observer

    assert min_max_observer.MinMaxObserver is flow.nn.MinMaxObserver


def test_sysconfig_and_internal_flags(monkeypatch):
    flags = flow._oneflow_internal.flags
    built_with_cuda = flow.version.cuda is not None
    assert flow.sysconfig.with_cuda() is built_with_cuda and flags.with_cuda() is built_with_cuda
    assert (flags.cuda_version() == 0) is (not built_with_cuda)
    monkeypatch.setattr(flow.version, "cuda", "12.4")
    assert flow.sysconfig.with_cuda() and flow.sysconfig.get_cuda_version() == 12040
    assert flags.cuda_version() == 12040 and flags.cuda_version() >= 11000
    monkeypatch.setattr(flow.version, "cuda", None)
    assert not flags.with_cuda() and flags.cuda_version() == 0
    assert flags.has_rpc_backend_local() and not flags.has_rpc_backend_grpc()
    assert not flags.with_rdma() and not flags.with_mlir() and not flags.with_mlir_cuda_codegen()
    from oneflow import sysconfig

    assert sysconfig is flow.sysconfig
