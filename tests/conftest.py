"""pytest configuration shared by the suite.

``OF_TEST_SHIM=torch`` runs the flow tests against a torch stand-in (see
harness.py); tests marked ``oneflow_only`` check OneFlow-specific behaviour
that the stand-in cannot have, so they are skipped in that mode only.
"""

import os

import pytest

# nanobind's report of objects alive at exit (src/api/module.cpp): on for the suite and the
# processes it starts, so that tests can check a script exits without one.
os.environ.setdefault("ONEFLOW_LEAK_WARNINGS", "1")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "oneflow_only: checks behaviour where OneFlow differs from PyTorch"
    )
    config.addinivalue_line(
        "markers", "cuda: needs a CUDA device; skipped (with the reason) where flow.cuda.is_available() is False"
    )
    config.addinivalue_line(
        "markers", "no_cuda: checks what happens without a CUDA device (errors, False answers); skipped where "
        "flow.cuda.is_available() is True (tests/test_cuda*.py cover the same calls with a device)"
    )
    config.addinivalue_line(
        "markers", "slow: long runs (the whole fuzz catalogue); deselected unless selected with -m slow "
        "or ONEFLOW_SLOW_TESTS=1"
    )
    if not config.pluginmanager.hasplugin("timeout"):  # pytest-timeout (scripts/gpu_check.sh) reads it
        config.addinivalue_line("markers", "timeout(seconds): a longer limit under pytest-timeout")


def pytest_collection_modifyitems(config, items):
    _deselect_slow(config, items)
    _skip_cuda_without_device(items)
    if not os.environ.get("OF_TEST_SHIM"):
        return
    skip = pytest.mark.skip(reason="OneFlow-specific behaviour; not testable with the torch shim")
    for item in items:
        if item.get_closest_marker("oneflow_only"):
            item.add_marker(skip)


def _deselect_slow(config, items):
    """Tests marked `slow` run only when asked for (-m naming slow, or ONEFLOW_SLOW_TESTS=1)."""
    if "slow" in (config.getoption("-m") or "") or os.environ.get("ONEFLOW_SLOW_TESTS") == "1":
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def _skip_cuda_without_device(items):
    marked = [item for item in items if item.get_closest_marker("cuda")]
    without = [item for item in items if item.get_closest_marker("no_cuda")]
    if not marked and not without:
        return
    import oneflow as flow

    if flow.cuda.is_available():
        skip = pytest.mark.skip(reason="checks the behaviour without a CUDA device, and this machine has one")
        for item in without:
            item.add_marker(skip)
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


def pytest_runtest_logreport(report):
    """ONEFLOW_FAILURE_LOG=<file>: each failure's traceback is appended as it happens, so a run
    stopped by a time limit (the lent GPU machine's, scripts/gpu_check.sh) still tells why each
    test failed. Written by the process that reports (xdist's controller, or the only one)."""
    path = os.environ.get("ONEFLOW_FAILURE_LOG")
    if not path or not report.failed or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    text = f"=== {report.nodeid} ({report.when})\n{report.longreprtext[-6000:]}\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    finally:
        os.close(fd)


@pytest.fixture(autouse=True)
def _no_leftover_process_group():
    """A test that makes a global tensor in this process joins a world of one (the default group);
    it must not leave that group to the tests after it on the same worker (test_distributed.py
    checks a process that never initialised one)."""
    import oneflow.distributed as dist

    was = dist.is_initialized()
    yield
    if not was and dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture
def fresh_job_session():
    """The job-function tests' default session (python/oneflow/_legacy/session.py) cleared before
    and after a test, so that its variables and jobs do not reach the next one (a test file
    takes it with `pytestmark = pytest.mark.usefixtures("fresh_job_session")`)."""
    import oneflow as flow

    flow.clear_default_session()
    yield
    flow.clear_default_session()
