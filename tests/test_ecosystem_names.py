"""Upstream OneFlow's module paths and names that ecosystem code (LiBai, OneFlow's own tests, the
official training scripts) imports, each exercised for its behaviour."""
import collections
import os
import subprocess
import sys
import unittest
import warnings

import numpy as np
import pytest
import torch

import oneflow as flow
from oneflow import nn


def test_nn_modules_utils_as_upstream():
    from oneflow.nn.modules.utils import (_check_axis, _generate_output_size, _getint, _handle_size_arg,
                                          _list_with_default, _ntuple, _pair, _quadruple, _reverse_repeat_tuple,
                                          _single, _triple)
    from torch.nn.modules.utils import _pair as tpair, _reverse_repeat_tuple as trev, _triple as ttriple

    assert _single(2) == (2,) and _pair(2) == tpair(2) == (2, 2) and _triple(1) == ttriple(1)
    assert _quadruple(0) == (0, 0, 0, 0) and _ntuple(5)(1) == (1,) * 5
    assert _pair([3, 4]) == (3, 4) and _pair((1, 2, 3)) == (1, 2, 3)  # an iterable's length is not checked
    assert _reverse_repeat_tuple((1, 2), 2) == trev((1, 2), 2) == (2, 2, 1, 1)
    assert _getint(3.0) == 3 and _getint([7, 8]) == 7
    assert _list_with_default([None, 5], [8, 9, 10]) == [9, 5] and _list_with_default(4, [1]) == 4
    with pytest.raises(ValueError):
        _list_with_default([1, 2], [3])
    assert _handle_size_arg(((2, 3),)) == (2, 3) and _handle_size_arg((2, 3)) == (2, 3)
    assert _check_axis(-1, (2, 3, 4)) == [2] and _check_axis(None, (2, 3)) == [0, 1]
    with pytest.raises(IndexError):
        _check_axis(3, (2, 3))
    assert _generate_output_size((1, 2, 5, 6), (None, 3)) == (5, 3)


def test_framework_modules():
    from oneflow.framework.args_tree import ArgsTree
    from oneflow.framework.dtype import convert_numpy_dtype_to_oneflow_dtype, convert_oneflow_dtype_to_numpy_dtype
    from oneflow.framework.tensor import Tensor

    assert Tensor is flow.Tensor and isinstance(flow.ones(1), Tensor)
    assert convert_oneflow_dtype_to_numpy_dtype(flow.int64) is np.int64
    assert convert_numpy_dtype_to_oneflow_dtype(np.float16) == flow.float16
    assert convert_numpy_dtype_to_oneflow_dtype(np.int16) == flow.int16
    assert convert_oneflow_dtype_to_numpy_dtype(flow.int16) is np.int16
    with pytest.raises(NotImplementedError):
        convert_numpy_dtype_to_oneflow_dtype(np.uint16)  # no uint16 dtype here (src/core/dtype.h)
    nest = {"a": [flow.ones(1), 3], "b": (flow.zeros(2),)}
    mapped = ArgsTree(nest).map_leaf(lambda v: v + 1 if isinstance(v, Tensor) else v)
    assert mapped["a"][1] == 3 and float(mapped["a"][0]) == 2.0 and isinstance(mapped["b"], tuple)
    nodes = list(ArgsTree(nest).iter_nodes())
    assert nodes[0] is nest and sum(isinstance(n, Tensor) for n in nodes) == 2


def test_jit_private_decorators():
    import torch.jit

    def f(x):
        return x * 2

    for deco in (flow.jit._script_if_tracing, flow.jit._overload_method, flow.jit._overload):
        assert deco(f)(3) == 6
    assert torch.jit._script_if_tracing(f)(3) == 6
    assert flow.jit.is_scripting() is False and flow.jit.is_tracing() is False


def test_common_types_complete_against_torch():
    import torch.nn.common_types as tct

    import oneflow.nn.common_types as fct

    # torch's aliases (its typing imports aside) and upstream OneFlow's, which are a subset of them
    names = [n for n in vars(tct) if n.startswith("_") and not n.startswith("__") and n not in ("_T", "_TypeAlias")]
    upstream = ["_scalar_or_tuple_any_t", "_size_any_t", "_size_6_t", "_ratio_2_t", "_ratio_3_t", "_ratio_any_t"]
    assert [n for n in names + upstream if not hasattr(fct, n)] == []
    assert fct._size_2_t == fct._scalar_or_tuple_2_t[int]


def test_unittest_decorators_and_env(monkeypatch):
    for k in ("ONEFLOW_TEST_DEVICE_NUM", "ONEFLOW_TEST_NODE_NUM", "ONEFLOW_TEST_NODE_LIST",
              "LOCAL_WORLD_SIZE", "ONEFLOW_TEST_ENABLE_EAGER"):
        monkeypatch.delenv(k, raising=False)
    assert flow.unittest.TestCase is unittest.TestCase
    assert flow.unittest.env.node_size() == 1 and flow.unittest.env.device_num() == 1
    assert flow.unittest.env.eager_execution_enabled() is False

    ran = []

    class T(flow.unittest.TestCase):
        @flow.unittest.skip_unless_1n1d()
        def test_a(self):
            ran.append("1n1d")

        @flow.unittest.skip_unless_1n2d()
        def test_b(self):
            ran.append("1n2d")

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(T)
    result = unittest.TextTestRunner(stream=open(os.devnull, "w")).run(suite)
    assert ran == ["1n1d"] and len(result.skipped) == 1 and "device_num is 2" in result.skipped[0][1]

    monkeypatch.setenv("ONEFLOW_TEST_DEVICE_NUM", "2")
    monkeypatch.setenv("ONEFLOW_TEST_ENABLE_EAGER", "1")
    assert flow.unittest.env.device_num() == 2 and flow.unittest.env.eager_execution_enabled()
    calls = []
    flow.unittest.skip_unless_1n2d()(lambda: calls.append(1))()
    assert calls == [1]
    monkeypatch.setenv("ONEFLOW_TEST_NODE_LIST", "h1,h2")
    assert flow.unittest.env.node_list() == ["h1", "h2"] and flow.unittest.env.node_size() == 2
    def needs_two():
        pass

    assert flow.unittest.num_nodes_required(2)(needs_two).__oneflow_test_case_num_nodes_required__ == 2


def test_register_test_cases(tmp_path):
    (tmp_path / "test_one.py").write_text(
        "import oneflow as flow\n"
        "def test_x(test_case):\n    test_case.assertEqual(1, 1)\n"
        "@flow.unittest.num_nodes_required(2)\n"
        "def test_two_nodes(test_case):\n    raise AssertionError\n")
    scope = {}
    flow.unittest.register_test_cases(scope, str(tmp_path), lambda n: n == 1)
    cls = scope["test_one"]
    assert hasattr(cls, "test_x") and not hasattr(cls, "test_two_nodes")
    assert unittest.TextTestRunner(stream=open(os.devnull, "w")).run(cls("test_x")).wasSuccessful()


def test_boxing_switches_recorded():
    flow.boxing.nccl.set_fusion_threshold_mbytes(32)
    flow.boxing.nccl.set_fusion_max_ops_num(48)
    flow.boxing.nccl.enable_use_compute_stream(True)
    flow.boxing.nccl.allow_fuse_all_reduce(False)
    flow.boxing.enable_fusion(True)
    cfg = flow.boxing.config()
    assert cfg["nccl_fusion_threshold_mb"] == 32 and cfg["nccl_fusion_max_ops"] == 48
    assert cfg["nccl_use_compute_stream"] is True and cfg["nccl_fusion_all_reduce"] is False
    assert cfg["enable_fusion"] is True
    with pytest.raises(TypeError):
        flow.boxing.nccl.allow_fuse_all_gather("yes")
    with pytest.raises(ValueError):
        flow.boxing.nccl.set_fusion_threshold_mbytes(-1)
    for name in ("allow_fuse_reduce_scatter", "allow_fuse_reduce", "allow_fuse_broadcast", "allow_fuse_mixed_ops",
                 "enable_use_buffer_to_fuse_all_reduce", "enable_all_to_all", "disable_group_boxing_by_dst_parallel"):
        getattr(flow.boxing.nccl, name)(True)
    flow.boxing.nccl.set_stream_num(2)
    assert flow.boxing.config()["nccl_num_streams"] == 2


def test_env_all_device_placement_and_functional_to_global():
    p = flow.env.all_device_placement("cpu")
    assert p == flow.placement.all("cpu") == flow.placement("cpu", [0])
    x = flow.tensor([1.0, 2.0], requires_grad=True)
    g = flow.to_global(x, placement=p, sbp=flow.sbp.broadcast)
    assert g.is_global and g.placement == p and g.sbp == (flow.sbp.broadcast,)
    local = flow.to_local(g)
    assert not local.is_global and local.tolist() == [1.0, 2.0]
    local.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError):
        flow.to_global([1, 2], placement=p, sbp=flow.sbp.broadcast)


def test_global_view_nests_and_mode():
    from oneflow.utils.global_view import current_global_mode, global_mode, to_global, to_local

    p = flow.placement("cpu", [0])
    model = nn.Linear(3, 2)
    sd = model.state_dict()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = to_global({"model": sd, "step": 5}, placement=p, sbp=flow.sbp.broadcast)
    assert any("Non-Tensor" in str(x.message) for x in w)
    assert g["step"] == 5 and isinstance(g["model"], collections.OrderedDict)
    assert all(v.is_global for v in g["model"].values())

    def pick(tree, t):  # a function choosing each leaf's sbp
        return flow.sbp.split(0) if t.ndim == 2 else flow.sbp.broadcast

    g2 = to_global(sd, placement=p, sbp=pick)
    assert g2["weight"].sbp == (flow.sbp.split(0),) and g2["bias"].sbp == (flow.sbp.broadcast,)
    back = to_local(g2)
    np.testing.assert_array_equal(back["weight"].numpy(), sd["weight"].numpy())
    assert not current_global_mode().is_enabled
    with global_mode(True, placement=p, sbp=flow.sbp.broadcast):
        cur = current_global_mode()
        assert cur.is_enabled and cur.placement == p and cur.sbp == (flow.sbp.broadcast,)
        with global_mode(False):
            assert not current_global_mode().is_enabled and current_global_mode().placement is None
        assert current_global_mode().is_enabled
    assert not current_global_mode().is_enabled
    with pytest.raises(ValueError):
        global_mode(True, placement=p)


def test_graph_module_proxy_api():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))

    class G(nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            for block in self.model.modules():  # LiBai's set_activation_checkpoint, new-API branch
                if isinstance(block.to(nn.Module), nn.Linear):
                    block.to(nn.graph.GraphModule).activation_checkpointing = True

        def build(self, x):
            return self.model(x)

    g = G()
    assert isinstance(g.model[0].to(nn.graph.GraphModule), nn.graph.GraphModule)
    assert g.model[0].to(nn.Module) is model[0]
    assert g.model[0].config.activation_checkpointing and not g.model[1].config.activation_checkpointing
    x = flow.randn(3, 4)
    np.testing.assert_allclose(g(x).numpy(), model(x).detach().numpy(), rtol=1e-6)


def test_lr_scheduler_base_where_torch_and_oneflow_have_it():
    # Neither torch 2.13 nor upstream OneFlow has `optim.LRScheduler` (LiBai names it only in a
    # docstring): the base class lives in optim.lr_scheduler, as in both.
    assert not hasattr(torch.optim, "LRScheduler") and not hasattr(flow.optim, "LRScheduler")
    assert issubclass(flow.optim.lr_scheduler.StepLR, flow.optim.lr_scheduler.LRScheduler)


def test_static_grad_scaler_matches_unscaled_training():
    torch.manual_seed(0)
    w0 = torch.randn(3, 1).numpy()
    x = np.random.RandomState(0).randn(5, 3).astype(np.float32)
    results = []
    for scaler in (None, flow.amp.StaticGradScaler(1024.0)):
        w = flow.nn.Parameter(flow.tensor(w0))
        opt = flow.optim.SGD([w], lr=0.1)
        for _ in range(3):
            loss = (flow.tensor(x) @ w).square().mean()
            opt.zero_grad()
            if scaler is None:
                loss.backward()
                opt.step()
            else:
                scaled = scaler.scale(loss)
                np.testing.assert_allclose(float(scaled), float(loss) * 1024.0, rtol=1e-6)
                scaled.backward()
                scaler.step(opt)
                scaler.update()
        results.append(w.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5)
    assert flow.amp.StaticGradScaler(8.0).get_scale() == 8.0
    with pytest.raises(ValueError):
        flow.amp.StaticGradScaler(0.0)


def test_static_grad_scaler_in_graph():
    lin = nn.Linear(3, 1)
    ref = nn.Linear(3, 1)
    ref.load_state_dict(lin.state_dict())
    opt = flow.optim.SGD(lin.parameters(), lr=0.1)
    ropt = flow.optim.SGD(ref.parameters(), lr=0.1)

    class G(nn.Graph):
        def __init__(self):
            super().__init__()
            self.lin = lin
            self.add_optimizer(opt)
            self.set_grad_scaler(flow.amp.StaticGradScaler(64.0))

        def build(self, x):
            loss = self.lin(x).square().mean()
            loss.backward()
            return loss

    x = flow.randn(4, 3)
    G()(x)
    ropt.zero_grad()
    ref(x).square().mean().backward()
    ropt.step()
    np.testing.assert_allclose(lin.weight.numpy(), ref.weight.numpy(), rtol=1e-5, atol=1e-7)


def test_import_in_fresh_process():
    # The paths resolve in a process that imported nothing else first (no import-order luck).
    code = ("import oneflow.nn.modules.utils, oneflow.framework.tensor, oneflow.unittest, oneflow.boxing.nccl, "
            "oneflow.utils.global_view, oneflow.nn.graph\n"
            "import oneflow as flow\n"
            "assert flow.nn.graph.GraphModule and flow.env.all_device_placement\n"
            "assert flow.amp.StaticGradScaler and flow.to_global and flow.unittest.env.eager_execution_enabled\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
