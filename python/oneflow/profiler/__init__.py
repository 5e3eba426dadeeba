"""oneflow.profiler: which ops a piece of code runs and how long each takes, with
torch.profiler's interface: `profile` (a context manager, with `schedule` / `step` /
`on_trace_ready`), `record_function` ranges, `key_averages().table(...)`,
`export_chrome_trace`, `tensorboard_trace_handler`.

Every op the user calls is recorded with its host-side time (Note [Op profiler] in
src/core/profiler.cpp): the outermost op only (`linear`, not the `addmm` inside it); a backward
pass is the op `backward` holding an event per graph node it runs (`MulBackward0`, ...). CUDA ops are asynchronous: their times are those of
their launches, so synchronise (flow.cuda.synchronize()) inside the ranges that must include
the device's work. Shapes, memory, stacks and FLOPs are not recorded (the flags are accepted).
"""
import enum
import functools
import os
import socket
import time

from .. import _oneflow_internal as _C
from ._events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401

_ACTIVE = []  # the profile collecting now (one at a time, as the C++ recorder is global)


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3


def supported_activities():
    acts = {ProfilerActivity.CPU}
    import oneflow
    if oneflow.cuda.is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Step -> action: after skip_first steps, cycles of `wait` idle, `warmup` and `active`
    recorded steps (the last one saves: on_trace_ready), `repeat` times (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("schedule(): invalid profiler schedule arguments")
    cycle = wait + warmup + active

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        k = step % cycle
        if k < wait:
            return ProfilerAction.NONE
        if k < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if k < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def _collect(is_recording):
    """Turns the recorder on or off for the active profile."""
    _C._profiler_enable(is_recording)


class profile:  # noqa: N801 - torch's name
    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 use_cuda=None, custom_trace_id_callback=None):
        self.activities = set(activities) if activities is not None else supported_activities()
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self._events = EventList()
        self._recording = False
        self._running = False

    def _action(self):
        return ProfilerAction.RECORD if self.schedule is None else self.schedule(self.step_num)

    def start(self):
        if _ACTIVE and _ACTIVE[-1] is not self:
            raise RuntimeError("profiler: another profiler is already running")
        _ACTIVE[:] = [self]
        self._running = True
        self._enter(self._action())

    def _enter(self, action):
        record = action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if record and not self._recording:
            _collect(True)
            self._recording = True

    def _finish_window(self, save):
        if not self._recording:
            return
        raw = _C._profiler_take_events()
        _collect(False)
        self._recording = False
        self._events = EventList([FunctionEvent(n, s, e, t, u) for n, s, e, t, u in raw], nested=True)
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self):
        """Marks the end of a training step (for `schedule`)."""
        if not self._running:
            return
        prev = self._action()
        self.step_num += 1
        now = self._action()
        if prev == ProfilerAction.RECORD_AND_SAVE or (self._recording and now in (ProfilerAction.NONE, ProfilerAction.WARMUP)):
            self._finish_window(save=prev == ProfilerAction.RECORD_AND_SAVE)
        self._enter(now)

    def stop(self):
        if not self._running:
            return
        self._finish_window(save=True)
        self._running = False
        _ACTIVE.clear()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def events(self):
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self._events.key_averages()

    def export_chrome_trace(self, path):
        self._events.export_chrome_trace(path)


class record_function:  # noqa: N801 - torch's name
    """A named range in the profile (a context manager or a decorator): its time and the ops
    inside it, whose time counts as the range's, not as its self time."""

    def __init__(self, name, args=None):
        self.name = name
        self._start = None

    def __enter__(self):
        self._start = _C._profiler_now_ns()
        return self

    def __exit__(self, *exc):
        _C._profiler_record_range(self.name, self._start, _C._profiler_now_ns())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return wrapped


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """on_trace_ready that writes each saved window as a Chrome trace file in dir_name."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{time.time_ns() // 1_000_000}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:
            import gzip
            import shutil
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
    return handler
