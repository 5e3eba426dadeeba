"""``flow.scope``: name scopes (variables.namespace), placement scopes and logical views of the
job-function API, and ``flow.current_scope()``.

``with flow.scope.placement("cpu", "0:0"):`` runs the ops of its block on one device of this
machine ("gpu" means CUDA, decision 2 of shared/spec/README.md). Inside a job function whose
inputs are on another device, the job starts over with its inputs on that device (OneFlow
places the whole job there too). Several devices or machines ("0:0-3", "1:0") describe a
global (consistent) placement: job functions do not run on global tensors yet, so they raise
NotImplementedError naming the global-tensor API that does (docs/global_tensors.md).
"""
import contextlib
import re
import threading


class _PlacementMove(Exception):
    """Raised inside a job to restart it with its inputs on `device`."""

    def __init__(self, device):
        super().__init__(str(device))
        self.device = device


def _parse(device_tag, machine_device_ids):
    from .. import device as make_device
    tag = {"gpu": "cuda", "cuda": "cuda", "cpu": "cpu"}.get(device_tag)
    if tag is None:
        raise ValueError(f"scope.placement: device_tag must be 'cpu' or 'gpu', got {device_tag!r}")
    ids = machine_device_ids if isinstance(machine_device_ids, (list, tuple)) else [machine_device_ids]
    devices = []
    for s in ids:
        m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)(?:\s*-\s*(\d+))?\s*", str(s))
        if not m:
            raise ValueError(f"scope.placement: machine_device_ids entries look like '0:0' or '0:0-3', got {s!r}")
        machine, first, last = int(m.group(1)), int(m.group(2)), int(m.group(3) or m.group(2))
        if last < first:
            raise ValueError(f"scope.placement: empty device range {s!r}")
        devices += [(machine, d) for d in range(first, last + 1)]
    if len(devices) != 1 or devices[0][0] != 0:
        raise NotImplementedError(
            f"scope.placement({device_tag!r}, {machine_device_ids!r}): a placement over several devices or machines "
            "is a global (consistent) placement, which job functions do not run yet (a job runs on one device); "
            "use global tensors (flow.placement(type, ranks) with tensor.to_global(placement, sbp)) in eager code "
            "or an nn.Graph, launched with python -m oneflow.distributed.launch (docs/global_tensors.md)")
    return make_device(tag if tag == "cpu" else f"cuda:{devices[0][1]}")


class _Scopes(threading.local):
    """The placement scopes entered on this thread (a queued job traces on the job queue's
    worker, pending.py, while the caller goes on)."""

    def __init__(self):
        self.placements = []


_placed = _Scopes()


class placement:  # noqa: N801 - OneFlow's name (a context manager, as its scope objects)
    """``with flow.scope.placement(tag, ids):`` runs the block's ops (and creates its variables) on
    one device of this machine. The object can be entered again (FunctionConfig's
    ``default_placement_scope`` enters it around each run of the job's Python)."""

    def __init__(self, device_tag, machine_device_ids, hierarchy=None):
        self.device_tag, self.machine_device_ids, self.hierarchy = device_tag, machine_device_ids, hierarchy
        self._exits = []

    def __repr__(self):
        return f"flow.scope.placement({self.device_tag!r}, {self.machine_device_ids!r})"

    def __enter__(self):
        cm = _enter_placement(self.device_tag, self.machine_device_ids)
        cm.__enter__()
        self._exits.append(cm)
        return self

    def __exit__(self, *exc):
        return self._exits.pop().__exit__(*exc)


@contextlib.contextmanager
def _enter_placement(device_tag, machine_device_ids):
    from .. import device as make_device
    from ._job_state import current_job
    dev = _parse(device_tag, machine_device_ids)
    job = current_job()
    if job is not None and job.device is not None and make_device(job.device) != dev:
        raise _PlacementMove(dev)
    _placed.placements.append(dev)
    try:
        with dev:
            yield
    finally:
        _placed.placements.pop()


class _View:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"flow.scope.{self.name}()"


def mirrored_view():
    """Each device works on its own part of the data (data parallelism); one device here."""
    return _View("mirrored_view")


def consistent_view():
    """One logical tensor over the devices (the compiler picks the parallelism); one device here."""
    return _View("consistent_view")


class Scope:
    """What ``flow.current_scope()`` returns: the name scopes, the placement and the job."""

    def __init__(self):
        from ._job_state import current_job
        from .variables import _scopes
        from .. import device as make_device
        job = current_job()
        self.name_scopes = list(_scopes)
        self.device = _placed.placements[-1] if _placed.placements else make_device("cpu")
        self.job_name = job.fn.name if job is not None else None

    def __repr__(self):
        return f"Scope(job={self.job_name!r}, name_scopes={self.name_scopes}, device={self.device})"


def current_scope():
    return Scope()
