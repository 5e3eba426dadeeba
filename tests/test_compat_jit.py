"""The compatibility names scripts call around their models, against PyTorch where it has a
number to compare: oneflow.jit (eager: script / trace give the same results as the function),
nn.attention.sdpa_kernel, oneflow.distributed's availability checks, typename, is_storage."""
import numpy as np
import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow compat modules")


def _scaled(x, k: int = 2):
    return x * k + 1


def test_jit_script_and_trace_keep_the_results():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ref = torch.jit.script(_scaled)(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(flow.jit.script(_scaled)(flow.tensor(x)).numpy(), ref)
    m = flow.nn.Linear(3, 2)
    assert flow.jit.script(m) is m and flow.jit.trace(m, flow.tensor(x)) is m
    assert flow.jit.trace_module(m, {"forward": flow.tensor(x)}) is m

    @flow.jit.script
    def f(t):
        return t + 1

    @flow.jit.ignore
    def g(t):
        return t - 1

    @flow.jit.ignore(drop=True)
    def h(t):
        return t * 3

    t = flow.tensor(x)
    np.testing.assert_array_equal((f(t) + g(t) + h(t)).numpy(), x + 1 + x - 1 + 3 * x)
    assert flow.jit.unused(g) is g and flow.jit.export(g) is g
    assert flow.jit.is_scripting() is torch.jit.is_scripting() is False
    assert flow.jit.is_tracing() is False
    assert flow.jit.annotate(list, [1]) == [1]
    fut = flow.jit.fork(_scaled, t, 3)
    np.testing.assert_array_equal(flow.jit.wait(fut).numpy(), x * 3 + 1)
    assert flow.jit.freeze(m) is m and flow.jit.optimize_for_inference(m) is m


def test_sdpa_kernel_accepts_backends_and_keeps_results():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)).astype(np.float32) for _ in range(3))
    F = flow.nn.functional
    base = F.scaled_dot_product_attention(flow.tensor(q), flow.tensor(k), flow.tensor(v))
    assert set(flow.nn.attention.SDPBackend.__members__) == set(torch.nn.attention.SDPBackend.__members__)
    for backends in (flow.nn.attention.SDPBackend.MATH,
                     [flow.nn.attention.SDPBackend.FLASH_ATTENTION, flow.nn.attention.SDPBackend.MATH]):
        with flow.nn.attention.sdpa_kernel(backends):
            out = F.scaled_dot_product_attention(flow.tensor(q), flow.tensor(k), flow.tensor(v))
        np.testing.assert_array_equal(out.numpy(), base.numpy())
    ref = torch.nn.functional.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v))
    np.testing.assert_allclose(base.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="SDPBackend"):
        with flow.nn.attention.sdpa_kernel("math"):
            pass


def test_distributed_checks_take_the_single_process_path():
    # available (built with Gloo), but a script that never initialised a group takes its single path
    assert flow.distributed.is_initialized() is False
    assert torch.distributed.is_initialized() is False


def test_typename_and_is_storage_as_torch():
    pairs = [(flow.zeros(1), torch.zeros(1)), (flow.zeros(1, dtype=flow.int64), torch.zeros(1, dtype=torch.int64))]
    for f, t in pairs:
        assert flow.typename(f).replace("oneflow.", "torch.") == torch.typename(t)
    for obj in (3, 2.5, "s", [1], np.zeros(2), np.float32(1), int, np.ndarray, _scaled):
        assert flow.typename(obj) == torch.typename(obj), obj
    assert flow.typename(flow.nn.Linear) == "oneflow.nn.modules.linear.Linear"
    assert flow.is_storage(flow.zeros(2).untyped_storage()) and flow.is_storage(flow.zeros(2).storage())
    assert not flow.is_storage(flow.zeros(2)) and not torch.is_storage(torch.zeros(2))
