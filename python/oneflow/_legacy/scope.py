"""``flow.scope``: name scopes (variables.namespace), placement scopes and logical views of the
job-function API, and ``flow.current_scope()``.

``with flow.scope.placement("cpu", "0:0"):`` runs the ops of its block on one device of this
machine ("gpu" means CUDA, decision 2 of shared/spec/README.md). Inside a job function whose
inputs are on another device, the job starts over with its inputs on that device (OneFlow
places the whole job there too). In a job of several processes (python -m
oneflow.distributed.launch), a placement names processes: device d of machine m is the rank
m * nproc_per_node + d, and the block runs on global tensors over those ranks (Note [Jobs over
several ranks] in job.py).
"""
import contextlib
import re
import threading


class _PlacementMove(Exception):
    """Raised inside a job to restart it with its inputs on `device`."""

    def __init__(self, device):
        super().__init__(str(device))
        self.device = device


def _hierarchy(hierarchy, n, where):
    """0.x's placement hierarchy (the devices as a mesh, e.g. (2, 2) for 4): a tuple of positive
    ints whose product is the number of devices, or None."""
    if hierarchy is None:
        return None
    dims = tuple(hierarchy) if isinstance(hierarchy, (list, tuple)) else (hierarchy,)
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims):
        raise ValueError(f"{where}: hierarchy must be a tuple of positive ints, got {hierarchy!r}")
    size = 1
    for d in dims:
        size *= d
    if size != n:
        raise ValueError(f"{where}: hierarchy {dims} holds {size} devices, the placement names {n}")
    return dims


def _parse(device_tag, machine_device_ids, hierarchy=None):
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
    where = f"scope.placement({device_tag!r}, {machine_device_ids!r})"
    dims = _hierarchy(hierarchy, len(devices), where)
    from .. import env
    world = env.get_world_size()
    if world == 1:
        if len(devices) != 1 or devices[0][0] != 0:
            raise ValueError(
                f"scope.placement({device_tag!r}, {machine_device_ids!r}): a placement over several devices or "
                "machines needs a process for each (device d of machine m is rank m * nproc_per_node + d): launch "
                "the script with python -m oneflow.distributed.launch --nproc_per_node N; this process is alone")
        return make_device(tag if tag == "cpu" else f"cuda:{devices[0][1]}")
    per_node = env.get_local_size()
    ranks = []
    for machine, d in devices:
        if d >= per_node or machine * per_node + d >= world:
            raise ValueError(f"scope.placement({device_tag!r}, {machine_device_ids!r}): device {machine}:{d} is not "
                             f"a process of this job ({world} processes, {per_node} a machine)")
        ranks.append(machine * per_node + d)
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"scope.placement({device_tag!r}, {machine_device_ids!r}): a device is named twice")
    from .._global.placement import placement as _Placement
    if dims is not None and len(dims) > 1:  # a mesh: the ranks in row-major order over the hierarchy
        import numpy as np
        return _Placement(tag, np.array(ranks, np.int64).reshape(dims).tolist())
    return _Placement(tag, ranks)


def is_global(where):
    """Whether a parsed placement is global (over ranks) rather than a device of this process."""
    from .._global.placement import placement as _Placement
    return isinstance(where, _Placement)


class _Scopes(threading.local):
    """The placement scopes entered on this thread (a queued job traces on the job queue's
    worker, pending.py, while the caller goes on)."""

    def __init__(self):
        self.placements = []


_placed = _Scopes()


class placement:  # noqa: N801 - OneFlow's name (a context manager, as its scope objects)
    """``with flow.scope.placement(tag, ids):`` runs the block's ops (and creates its variables) on
    one device of this machine, or on global tensors over the ranks `ids` names; ``hierarchy``
    (0.x's, e.g. ``(2, 2)``) lays those ranks out as a mesh, row-major: a placement with a 2-d
    rank array, whose tensors take one SBP per mesh axis (``flow.hierarchical_parallel_cast``).
    The object can be entered again (FunctionConfig's ``default_placement_scope`` enters it
    around each run of the job's Python)."""

    def __init__(self, device_tag, machine_device_ids, hierarchy=None):
        self.device_tag, self.machine_device_ids, self.hierarchy = device_tag, machine_device_ids, hierarchy
        self._exits = []

    def __repr__(self):
        return f"flow.scope.placement({self.device_tag!r}, {self.machine_device_ids!r})"

    def __enter__(self):
        cm = _enter_placement(self.device_tag, self.machine_device_ids, self.hierarchy)
        cm.__enter__()
        self._exits.append(cm)
        return self

    def __exit__(self, *exc):
        return self._exits.pop().__exit__(*exc)


@contextlib.contextmanager
def _enter_placement(device_tag, machine_device_ids, hierarchy=None):
    from .. import device as make_device
    from ._job_state import current_job
    dev = _parse(device_tag, machine_device_ids, hierarchy)
    job = current_job()
    if is_global(dev):
        # a job runs on global tensors over these ranks: one not yet there starts over (job.py)
        if job is not None and job.placement != dev:
            raise _PlacementMove(dev)
        _placed.placements.append(dev)
        try:
            yield
        finally:
            _placed.placements.pop()
        return
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
    """Each device works on its own part of the data (data parallelism): in a job over several
    ranks, each process passes its own batch and gets its own part of the results."""
    return _View("mirrored_view")


def consistent_view():
    """One logical tensor over the devices: in a job over several ranks, every process passes the
    whole (logical) batch and gets whole results (OneFlow's default)."""
    return _View("consistent_view")


class Scope:
    """What ``flow.current_scope()`` returns: the name scopes, the placement (a device, or a
    flow.placement in a job over several ranks) and the job."""

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
