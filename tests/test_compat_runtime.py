"""Top-level runtime names against PyTorch: constants, build flags, version / accelerator
modules, get_device_module, anomaly switches, GradScaler, convolution (ATen's entry) and the
functional RNN cells (values and gradients)."""
import math
import re

import numpy as np
import pytest
import torch

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow compat names")


def test_constants_flags_and_modules():
    assert (flow.e, flow.pi, flow.inf) == (torch.e, torch.pi, torch.inf) and math.isnan(flow.nan)
    assert flow.newaxis is torch.newaxis is None
    x = flow.arange(3)
    assert tuple(x[flow.newaxis].shape) == (1, 3)
    assert flow.has_lapack is torch.has_lapack and flow.has_spectral is torch.has_spectral
    assert isinstance(flow.has_openmp, bool) and flow.compiled_with_cxx11_abi() is True
    assert flow.version.__version__ == flow.__version__
    assert (flow.version.cuda is None) == (not hasattr(flow._C, "_cuda_version"))
    if flow.cuda.is_available():  # the toolkit the build used, as torch.version.cuda: "13.0"
        assert re.fullmatch(r"\d+\.\d+", flow.version.cuda), flow.version.cuda
    assert flow.get_device_module("cpu") is flow.cpu and flow.get_device_module(flow.device("cpu")) is flow.cpu
    assert flow.get_device_module("cuda:0") is flow.cuda and flow.get_device_module() is flow.cpu
    with pytest.raises(RuntimeError, match="does not have a corresponding module"):
        flow.get_device_module("xla")
    assert flow.GradScaler is flow.amp.GradScaler


def test_accelerator_as_torch_on_this_machine():
    acc = flow.accelerator
    assert acc.is_available() == flow.cuda.is_available()
    if not acc.is_available():
        assert acc.current_accelerator() is None and torch.accelerator.current_accelerator() is None
        assert acc.device_count() == 0
        with pytest.raises(RuntimeError, match="no accelerator"):
            acc.synchronize()
        acc.empty_cache()  # nothing to free
    else:
        assert acc.current_accelerator().type == "cuda" and acc.device_count() == flow.cuda.device_count()
        acc.synchronize()
        assert acc.current_device_index() == flow.cuda.current_device()


def test_anomaly_switches():
    assert flow.is_anomaly_enabled() is False
    flow.set_anomaly_enabled(True, check_nan=False)
    try:
        assert flow.is_anomaly_enabled() and not flow.is_anomaly_check_nan_enabled()
    finally:
        flow.set_anomaly_enabled(False)
    assert not flow.is_anomaly_enabled()


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_convolution_as_torch(n, transposed):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, 4) + (5,) * n).astype(np.float32)
    w = rng.standard_normal(((4, 3) if transposed else (6, 2)) + (3,) * n).astype(np.float32)
    b = rng.standard_normal(6 if transposed else 6).astype(np.float32)
    args = dict(stride=[2] * n, padding=[1] * n, dilation=[1] * n, transposed=transposed,
                output_padding=[1] * n if transposed else [0] * n, groups=2)
    fx, fw, fb = (flow.tensor(a, requires_grad=True) for a in (x, w, b))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    fy = flow.convolution(fx, fw, fb, **args)
    ty = torch.convolution(tx, tw, tb, **args)
    np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    fy.sum().backward()
    ty.sum().backward()
    for f, t in ((fx, tx), (fw, tw), (fb, tb)):
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError, match="convolution"):
        flow.convolution(fx, flow.zeros(2), None, [1], [0], [1], False, [0], 1)


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("name,chunks", [("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)])
def test_functional_rnn_cells_as_torch(name, chunks, batched):
    rng = np.random.default_rng(0)
    shape = (3,) if batched else ()
    arrs = [rng.standard_normal(shape + (5,)), rng.standard_normal(shape + (4,)),
            rng.standard_normal((chunks * 4, 5)), rng.standard_normal((chunks * 4, 4)),
            rng.standard_normal(chunks * 4), rng.standard_normal(chunks * 4)]
    if name == "lstm_cell":
        arrs.insert(2, rng.standard_normal(shape + (4,)))
    arrs = [a.astype(np.float32) for a in arrs]
    fs = [flow.tensor(a, requires_grad=True) for a in arrs]
    ts = [torch.tensor(a, requires_grad=True) for a in arrs]

    def call(lib, t):
        if name == "lstm_cell":
            return getattr(lib, name)(t[0], (t[1], t[2]), *t[3:])
        return getattr(lib, name)(*t)

    if not batched:  # PyTorch's functional cells take batches only
        with pytest.raises(IndexError, match="Dimension out of range"):
            call(torch, ts)
        with pytest.raises(IndexError, match="Dimension out of range"):
            call(flow, fs)
        return
    fo, to = call(flow, fs), call(torch, ts)
    fo, to = (fo if isinstance(fo, tuple) else (fo,)), (to if isinstance(to, tuple) else (to,))
    for a, b in zip(fo, to):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-5)
    sum(o.sum() for o in fo).backward()
    sum(o.sum() for o in to).backward()
    for f, t in zip(fs, ts):
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)
    if name != "lstm_cell":
        np.testing.assert_allclose(getattr(flow, name)(fs[0], fs[1], fs[2], fs[3]).detach().numpy(),
                                   getattr(torch, name)(ts[0], ts[1], ts[2], ts[3]).detach().numpy(),
                                   rtol=1e-5, atol=1e-5)  # without biases


def test_distributed_reports_the_backends_of_this_build():
    """is_gloo_available / is_nccl_available answer for their own backend (a CUDA build without
    Gloo reported Gloo and never NCCL, so its NCCL tests skipped and its Gloo tests failed)."""
    import oneflow.distributed as dist
    from oneflow import _oneflow_internal as C
    assert dist.is_gloo_available() is bool(C._gloo_available())
    # only a CUDA build binds _nccl_available (src/cuda/nccl_bind.cpp: Note [Binding registry])
    assert dist.is_nccl_available() is (hasattr(C, "_nccl_available") and bool(C._nccl_available()))
    assert dist.is_available() is (dist.is_gloo_available() or dist.is_nccl_available())
    assert not dist.is_mpi_available()
    if not flow.cuda.is_available():
        assert not dist.is_nccl_available()  # NCCL comes with the CUDA build only
