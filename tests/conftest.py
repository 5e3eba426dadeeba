"""pytest configuration shared by the suite.

``OF_TEST_SHIM=torch`` runs the flow tests against a torch stand-in (see
harness.py); tests marked ``oneflow_only`` check OneFlow-specific behaviour
that the stand-in cannot have, so they are skipped in that mode only.
"""

import hashlib
import os
import subprocess

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
        "markers", "slow(seconds=30): a long case; every run takes a sample of them within a time budget "
        "(Note [Sampled slow tests]); all of them with -m slow or ONEFLOW_SLOW_TESTS=1"
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


# Note [Sampled slow tests]: the whole suite runs in CI within a time budget, so cases that take
# long (multi-process jobs, 20-step training loops, every dtype of a generic test) are marked
# `slow(seconds=...)` with their measured cost. A run that does not ask for them (-m slow or
# ONEFLOW_SLOW_TESTS=1) still takes a sample: the slow cases ordered by a hash of their id and a
# seed, kept greedily while their costs fit ONEFLOW_SLOW_BUDGET seconds (default 90). The seed is
# the checkout's commit (ONEFLOW_SLOW_SEED overrides it), so every commit runs another sample, the
# same one on each xdist worker and on a re-run of that commit. A case that costs more than the
# whole budget (the whole fuzz catalogue) runs only when asked for; its cheap sample is a test
# of its own.
_SLOW_DEFAULT_SECONDS = 30.0


def _slow_seed(config):
    seed = os.environ.get("ONEFLOW_SLOW_SEED")
    if seed:
        return seed
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=str(config.rootpath), capture_output=True,
                             text=True, timeout=10)
        return out.stdout.strip() or "0"
    except (OSError, subprocess.SubprocessError):
        return "0"


def _slow_cost(item):
    marker = item.get_closest_marker("slow")
    return float(marker.kwargs.get("seconds", _SLOW_DEFAULT_SECONDS))


def _deselect_slow(config, items):
    """Tests marked `slow` run when asked for (-m naming slow, or ONEFLOW_SLOW_TESTS=1); otherwise a
    sample of them within a time budget (Note [Sampled slow tests])."""
    if "slow" in (config.getoption("-m") or "") or os.environ.get("ONEFLOW_SLOW_TESTS") == "1":
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if not slow:
        return
    seed = _slow_seed(config)
    left = float(os.environ.get("ONEFLOW_SLOW_BUDGET", "90"))
    keep = set()
    for item in sorted(slow, key=lambda it: hashlib.sha1(f"{seed}:{it.nodeid}".encode()).hexdigest()):
        cost = _slow_cost(item)
        if cost <= left:
            keep.add(item.nodeid)
            left -= cost
    dropped = [item for item in slow if item.nodeid not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not item.get_closest_marker("slow") or item.nodeid in keep]
    config._slow_sample = (len(keep), len(slow), seed[:12])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    sample = getattr(config, "_slow_sample", None)  # (set where collection ran: not in xdist's controller)
    if sample is not None:
        kept, total, seed = sample
        terminalreporter.write_line(f"slow tests: a sample of {kept} of {total} selected (seed {seed}; "
                                    "ONEFLOW_SLOW_TESTS=1 runs all: Note [Sampled slow tests], tests/conftest.py)")


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
