"""pytest configuration shared by the suite.

``OF_TEST_SHIM=torch`` runs the flow tests against a torch stand-in (see
harness.py); tests marked ``oneflow_only`` check OneFlow-specific behaviour
that the stand-in cannot have, so they are skipped in that mode only.
"""

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "oneflow_only: checks behaviour where OneFlow differs from PyTorch"
    )
    config.addinivalue_line(
        "markers", "cuda: needs a CUDA device; skipped (with the reason) where flow.cuda.is_available() is False"
    )


def pytest_collection_modifyitems(config, items):
    _skip_cuda_without_device(items)
    if not os.environ.get("OF_TEST_SHIM"):
        return
    skip = pytest.mark.skip(reason="OneFlow-specific behaviour; not testable with the torch shim")
    for item in items:
        if item.get_closest_marker("oneflow_only"):
            item.add_marker(skip)


def _skip_cuda_without_device(items):
    marked = [item for item in items if item.get_closest_marker("cuda")]
    if not marked:
        return
    import oneflow as flow

    if flow.cuda.is_available():
        return
    built = hasattr(flow._C, "_cuda_set_device")
    why = ("no CUDA device on this machine" if built else
           "this build has no CUDA backend (ONEFLOW_CUDA found no nvcc + cuBLAS)")
    skip = pytest.mark.skip(reason=f"needs a CUDA device: {why}")
    for item in marked:
        item.add_marker(skip)


@pytest.fixture()
def cuda_kernels_only(monkeypatch):
    """Turns the host fallback off (Note [Host fallback]): an op without a CUDA kernel raises
    instead of running on host copies, so a test of device kernels fails when one is missing."""
    monkeypatch.setenv("ONEFLOW_CUDA_HOST_FALLBACK", "0")
