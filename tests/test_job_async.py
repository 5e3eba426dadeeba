"""Asynchronous job calls of OneFlow 0.x (docs/job_functions.md "Asynchronous calls";
python/oneflow/_legacy/pending.py): a ``-> tp.Callback[...]`` job and a job without annotations
(futures: ``.get()`` / ``.async_get(cb)``) return at once and run in call order on the job queue;
synchronous jobs, ``flow.sync_default_session()``, the session's end and model I/O wait for the
queued runs; errors of queued runs and callbacks raise at the next sync. The training values are
checked against PyTorch's SGD on the same data."""
import threading

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp


@pytest.fixture(autouse=True)
def _fresh_session():
    flow.clear_default_session()
    flow.enable_eager_execution(False)
    yield
    try:
        flow.sync_default_session()
    finally:
        flow.clear_default_session()


def _blocker():
    """A Callback job whose callback holds the queue until `release` is set: what is called
    after it can only have returned at once if calls do not wait for the queue."""
    release = threading.Event()
    waited = []

    @flow.global_function()
    def hold(x: tp.Numpy.Placeholder((1,))) -> tp.Callback[tp.Numpy]:
        return x

    hold(np.zeros(1, np.float32))(lambda _: waited.append(release.wait(60)))
    return release, waited


@pytest.mark.parametrize("eager", [False, True])
def test_callback_jobs_return_at_once_and_run_in_order(eager):
    flow.enable_eager_execution(eager)
    release, waited = _blocker()

    @flow.global_function()
    def scale(x: tp.Numpy.Placeholder((2, 3))) -> tp.Callback[tp.Numpy]:
        return x * 2 + 1

    got = []
    xs = [np.full((2, 3), i, np.float32) for i in range(5)]
    for i, x in enumerate(xs):
        scale(x)(lambda y, i=i: got.append((i, y)))
    assert got == []  # all five are queued behind the held callback
    release.set()
    flow.sync_default_session()
    assert waited == [True]
    assert [i for i, _ in got] == list(range(5))
    for (_, y), x in zip(got, xs):
        np.testing.assert_array_equal(y, x * 2 + 1)


def test_arguments_are_copied_at_the_call():
    release, _ = _blocker()

    @flow.global_function()
    def ident(x: tp.Numpy.Placeholder((3,))) -> tp.Callback[tp.Numpy]:
        return x + 0

    got = []
    buf = np.array([1, 2, 3], np.float32)
    ident(buf)(got.append)
    buf[:] = 7  # a data loader refilling its buffer for the next batch
    release.set()
    flow.sync_default_session()
    np.testing.assert_array_equal(got[0], [1, 2, 3])


def test_wrong_arguments_raise_at_the_call():
    @flow.global_function()
    def ident(x: tp.Numpy.Placeholder((3,))) -> tp.Callback[tp.Numpy]:
        return x

    with pytest.raises(ValueError, match="shape"):
        ident(np.zeros(4, np.float32))


def _train_jobs(lr):
    @flow.global_function(type="train")
    def step(x: tp.Numpy.Placeholder((4, 3))) -> tp.Callback[tp.Numpy]:
        w = flow.get_variable("w", shape=(3, 2), initializer=flow.constant_initializer(0.5))
        loss = flow.math.reduce_mean(flow.math.square(flow.matmul(x, w)))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [lr]), momentum=0).minimize(loss)
        return loss

    @flow.global_function()
    def weight() -> tp.Numpy:
        return flow.get_variable("w", shape=(3, 2), initializer=flow.constant_initializer(0.5)) + 0

    return step, weight


def _torch_sgd(xs, lr):
    w = torch.full((3, 2), 0.5, requires_grad=True)
    opt = torch.optim.SGD([w], lr=lr)
    losses = []
    for x in xs:
        loss = (torch.from_numpy(x) @ w).square().mean()
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return losses, w.detach().numpy()


def test_synchronous_calls_and_checkpoints_wait_for_queued_training(tmp_path):
    step, weight = _train_jobs(0.1)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(4)]
    release, _ = _blocker()
    losses = []
    for x in xs:
        step(x)(losses.append)
    release.set()
    w = weight()  # a tp.Numpy job: runs after the four queued steps
    want_losses, want_w = _torch_sgd(xs, 0.1)
    np.testing.assert_allclose([float(v) for v in losses], want_losses, rtol=1e-5)
    np.testing.assert_allclose(w, want_w, rtol=1e-5)

    # model I/O waits too: the snapshot holds the values after the queued steps
    release, _ = _blocker()
    step(xs[0])(lambda _: None)
    release.set()
    flow.train.CheckPoint().save(str(tmp_path / "snap"))
    _, want_w = _torch_sgd(xs + xs[:1], 0.1)
    np.testing.assert_allclose(flow.checkpoint.get(str(tmp_path / "snap"))["w"].numpy(), want_w, rtol=1e-5)


def test_old_style_futures_are_queued():
    release, _ = _blocker()

    @flow.global_function()
    def job(x=flow.FixedTensorDef((2,))):
        return x * 3

    fut = job(np.ones(2, np.float32))  # returns while the queue is held
    got = []
    fut.async_get(lambda blob: got.append(blob.numpy()))
    assert got == []
    release.set()
    np.testing.assert_array_equal(fut.get().numpy(), [3.0, 3.0])
    flow.sync_default_session()
    np.testing.assert_array_equal(got[0], [3.0, 3.0])
    late = []
    fut.async_get(lambda blob: late.append(blob.numpy()))  # registered after the run: still called
    flow.sync_default_session()
    np.testing.assert_array_equal(late[0], [3.0, 3.0])
    with pytest.raises(TypeError, match="callable"):
        fut.async_get(None)


def test_errors_surface_at_the_next_sync_once():
    @flow.global_function()
    def ident(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
        return x

    def bad_callback(_):
        raise ValueError("callback failed")

    ident(np.ones(2, np.float32))(bad_callback)
    with pytest.raises(ValueError, match="callback failed"):
        flow.sync_default_session()
    flow.sync_default_session()  # reported once

    @flow.global_function()
    def broken(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
        raise IndexError("job body failed")

    called = []
    broken(np.ones(2, np.float32))(called.append)
    # the next synchronous job is a sync point: the queued error raises there
    @flow.global_function()
    def sync_job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x + 1

    with pytest.raises(IndexError, match="job body failed"):
        sync_job(np.ones(2, np.float32))
    assert called == []  # a failed run's callback never runs
    np.testing.assert_array_equal(sync_job(np.ones(2, np.float32)), [2.0, 2.0])

    # a future's get() reports its own run's error (and the sync after it does not again)
    @flow.global_function()
    def old_broken(x=flow.FixedTensorDef((2,))):
        raise IndexError("old-style job failed")

    fut = old_broken(np.ones(2, np.float32))
    with pytest.raises(IndexError, match="old-style job failed"):
        fut.get()
    flow.sync_default_session()


def test_callbacks_may_call_jobs():
    @flow.global_function()
    def double(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        return x * 2

    @flow.global_function()
    def plus(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
        return x + 1

    got = []
    plus(np.ones(2, np.float32))(lambda y: got.append(double(y)))  # a synchronous job inside a callback
    flow.sync_default_session()
    np.testing.assert_array_equal(got[0], [4.0, 4.0])


def test_clear_default_session_waits_for_queued_runs():
    release, _ = _blocker()

    @flow.global_function()
    def ident(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
        return x + 1

    got = []
    ident(np.ones(2, np.float32))(got.append)
    threading.Timer(0.2, release.set).start()
    flow.clear_default_session()
    np.testing.assert_array_equal(got[0], [2.0, 2.0])


def test_session_pull_of_a_queued_job():
    """Session.AsyncPull's callback gets a queued job's result after its run."""
    from oneflow._legacy.session import default_session
    release, _ = _blocker()

    @flow.global_function()
    def triple(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
        return x * 3

    s = default_session()
    got = []
    s.AsyncPull("triple.return", got.append)
    s.LazyRun(triple, np.ones(2, np.float32))
    assert got == []
    release.set()
    flow.sync_default_session()
    np.testing.assert_array_equal(got[0], [3.0, 3.0])


def test_the_process_exit_drains_the_queue(tmp_path):
    """At the exit the queued runs finish (their callbacks run) and an error no sync reported is
    printed, as 0.x's session end waited for its jobs."""
    import subprocess
    import sys
    out = tmp_path / "cb.txt"
    script = f"""
import numpy as np
import oneflow as flow
import oneflow.typing as tp

@flow.global_function()
def job(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
    return x + 1

def bad(_):
    raise ValueError("late callback error")

job(np.ones(2, np.float32))(bad)
for _ in range(3):
    job(np.ones(2, np.float32))(lambda y: open({str(out)!r}, "a").write(str(y.tolist()) + "\\n"))
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    assert out.read_text().splitlines() == ["[2.0, 2.0]"] * 3
    assert "never synchronized" in r.stderr and "late callback error" in r.stderr
